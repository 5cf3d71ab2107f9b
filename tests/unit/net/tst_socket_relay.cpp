// SPDX-License-Identifier: GPL-3.0-or-later
#include "net/socketrelay.h"

#include <QSignalSpy>
#include <QTest>

#include <cerrno>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace slp;

namespace {
// A connected pair: the relay takes `inner`, the test plays the peer on `outer`.
struct Pair
{
    int outer = -1;
    int inner = -1;
    Pair()
    {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0) {
            outer = fds[0];
            inner = fds[1];
            ::fcntl(outer, F_SETFL, ::fcntl(outer, F_GETFL) | O_NONBLOCK);
        }
    }
    ~Pair()
    {
        if (outer >= 0)
            ::close(outer);
    }
};

bool sendAll(int fd, const QByteArray &bytes)
{
    return ::send(fd, bytes.constData(), size_t(bytes.size()), MSG_NOSIGNAL) == bytes.size();
}

// Everything the peer can read now; `eof` set when the relay's side ended its sending.
QByteArray readSome(int fd, bool *eof = nullptr)
{
    QByteArray out;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n > 0) {
            out.append(buffer, n);
            continue;
        }
        if (n == 0 && eof)
            *eof = true;
        return out;
    }
}

// Reads from `fd` while the event loop runs until `want` bytes came (bounded).
QByteArray readUntil(int fd, qsizetype want, bool *eof = nullptr)
{
    QByteArray got;
    QElapsedTimer clock;
    clock.start();
    while (got.size() < want && clock.elapsed() < 10000 && !(eof && *eof)) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
        got += readSome(fd, eof);
    }
    return got;
}
} // namespace

class TestSocketRelay : public QObject
{
    Q_OBJECT
private slots:
    void bytesBothWaysEarlyBytesFirst()
    {
        Pair client, upstream;
        SocketRelay relay(client.inner, upstream.inner, "early-up|", "early-down|", 1 << 20);
        QVERIFY(sendAll(client.outer, "hello upstream"));
        QVERIFY(sendAll(upstream.outer, "hello client"));
        QCOMPARE(readUntil(upstream.outer, 23), QByteArray("early-up|hello upstream"));
        QCOMPARE(readUntil(client.outer, 23), QByteArray("early-down|hello client"));
        QCOMPARE(relay.bytesToUpstream(), 23);
        QCOMPARE(relay.bytesToClient(), 23);
    }

    void halfCloseIsPassedOnAndTheOtherWayGoesOn()
    {
        Pair client, upstream;
        SocketRelay relay(client.inner, upstream.inner, {}, {}, 1 << 20);
        QSignalSpy ended(&relay, &SocketRelay::finished);
        QVERIFY(sendAll(client.outer, "last words"));
        ::shutdown(client.outer, SHUT_WR);
        bool upstreamSawEof = false;
        QCOMPARE(readUntil(upstream.outer, 1 << 20, &upstreamSawEof), QByteArray("last words"));
        QVERIFY(upstreamSawEof);
        QVERIFY(ended.isEmpty());
        // The upstream still answers after the client's half-close.
        QVERIFY(sendAll(upstream.outer, "the answer"));
        QCOMPARE(readUntil(client.outer, 10), QByteArray("the answer"));
        ::shutdown(upstream.outer, SHUT_WR);
        QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, 5000);
        QCOMPARE(ended.at(0).at(0).value<SocketRelay::End>(), SocketRelay::End::Closed);
        bool clientSawEof = false;
        readUntil(client.outer, 1, &clientSawEof);
        QVERIFY(clientSawEof);
    }

    // A client that sends while the upstream reads nothing: the relay holds at most its
    // buffer, then stops reading, and the sender is held back. Nothing is lost on the way.
    void slowReaderHoldsTheSenderBack()
    {
        Pair client, upstream;
        int small = 16 * 1024;
        for (int fd : {client.outer, upstream.outer, client.inner, upstream.inner}) {
            ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
            ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        }
        const qint64 cap = 256 * 1024;
        SocketRelay relay(client.inner, upstream.inner, {}, {}, cap);
        QByteArray sent;
        QByteArray block(4096, 'x');
        for (int round = 0; round < 4000; ++round) {
            block[0] = char(round % 251);
            const ssize_t n =
                ::send(client.outer, block.constData(), size_t(block.size()), MSG_NOSIGNAL);
            if (n > 0)
                sent.append(block.constData(), n);
            QCoreApplication::processEvents(QEventLoop::AllEvents, 1);
        }
        // 16 MB offered: the kernel's small buffers plus the relay's cap took the rest.
        QVERIFY2(sent.size() < 4 * cap, qPrintable(QString::number(sent.size())));
        QVERIFY(sent.size() >= cap);
        QCOMPARE(readUntil(upstream.outer, sent.size()), sent);
    }

    void idleTimeoutClosesBoth()
    {
        Pair client, upstream;
        SocketRelay relay(client.inner, upstream.inner, {}, {}, 1 << 20);
        QSignalSpy ended(&relay, &SocketRelay::finished);
        relay.setIdleTimeout(std::chrono::milliseconds(100));
        QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, 5000);
        QCOMPARE(ended.at(0).at(0).value<SocketRelay::End>(), SocketRelay::End::Idle);
        bool eof = false;
        readUntil(client.outer, 1, &eof);
        QVERIFY(eof);
    }

    void cutEndsAtOnce()
    {
        Pair client, upstream;
        SocketRelay relay(client.inner, upstream.inner, {}, {}, 1 << 20);
        QSignalSpy ended(&relay, &SocketRelay::finished);
        relay.cut();
        QCOMPARE(ended.size(), 1);
        QCOMPARE(ended.at(0).at(0).value<SocketRelay::End>(), SocketRelay::End::Cut);
        QVERIFY(relay.isFinished());
    }

    void peerGoneEndsTheSplice()
    {
        Pair client, upstream;
        SocketRelay relay(client.inner, upstream.inner, {}, {}, 1 << 20);
        QSignalSpy ended(&relay, &SocketRelay::finished);
        ::close(upstream.outer);
        upstream.outer = -1;
        QVERIFY(sendAll(client.outer, QByteArray(200000, 'y')));
        QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, 5000);
        QCOMPARE(ended.at(0).at(0).value<SocketRelay::End>(), SocketRelay::End::UpstreamFailed);
    }
};

QTEST_GUILESS_MAIN(TestSocketRelay)
#include "tst_socket_relay.moc"
