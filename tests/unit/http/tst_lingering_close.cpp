// SPDX-License-Identifier: GPL-3.0-or-later
// LingeringClose on a real loopback connection whose client is a plain non-blocking socket
// (a QTcpSocket client would close its own side at the server's FIN): the answer and a FIN
// reach the client; the linger ends at the client's close, after `quiet` of silence, at
// `total`, or once `maxBytes` were dropped. Every wait is bounded.
#include "http/lingeringclose.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

using namespace std::chrono_literals;
using slp::LingeringClose;

namespace {

// One accepted connection: `server` is the socket slp would hold, `fd` the client.
struct Link
{
    QTcpServer listener;
    QPointer<QTcpSocket> server;
    int fd = -1;

    bool open()
    {
        if (!listener.listen(QHostAddress::LocalHost))
            return false;
        fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(listener.serverPort());
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr);
        if (!listener.waitForNewConnection(5000))
            return false;
        server = listener.nextPendingConnection();
        return server != nullptr;
    }
    ~Link()
    {
        if (fd >= 0)
            ::close(fd);
    }
    bool serverClosed() const
    {
        return !server || server->state() == QAbstractSocket::UnconnectedState;
    }
    // What the client can read now; sets `eof` on the server's FIN.
    QByteArray clientRead(bool *eof)
    {
        QByteArray got;
        char buf[4096];
        ssize_t n = 0;
        while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0)
            got.append(buf, n);
        if (n == 0)
            *eof = true;
        return got;
    }
    qint64 clientSend(qsizetype bytes)
    {
        const QByteArray data(bytes, 'x');
        const ssize_t n = ::send(fd, data.constData(), size_t(data.size()), MSG_NOSIGNAL);
        return n < 0 ? 0 : n;
    }
};

} // namespace

class TestLingeringClose : public QObject
{
    Q_OBJECT

private slots:
    void answerThenFinThenClientClose();
    void quietClientIsClosed();
    void tricklingClientEndsAtTotal();
    void byteBoundEndsIt();
};

void TestLingeringClose::answerThenFinThenClientClose()
{
    Link link;
    QVERIFY(link.open());
    QCOMPARE(link.clientSend(64 * 1024), qint64(64 * 1024)); // a body nobody will read
    link.server->write("HTTP/1.1 413 Content Too Large\r\nConnection: close\r\n\r\n");
    LingeringClose::start(link.server, {10s, 10s, 1024 * 1024});
    QByteArray got;
    bool eof = false;
    QTRY_VERIFY_WITH_TIMEOUT((got += link.clientRead(&eof), eof), 5000);
    QVERIFY(got.startsWith("HTTP/1.1 413 "));
    QVERIFY(!link.serverClosed()); // the client may still be sending: the read side stays
    QCOMPARE(link.clientSend(128 * 1024), qint64(128 * 1024));
    ::shutdown(link.fd, SHUT_WR);
    QTRY_VERIFY_WITH_TIMEOUT(link.serverClosed(), 5000);
}

void TestLingeringClose::quietClientIsClosed()
{
    Link link;
    QVERIFY(link.open());
    QElapsedTimer clock;
    clock.start();
    LingeringClose::start(link.server, {10s, 200ms, 1024 * 1024});
    QTRY_VERIFY_WITH_TIMEOUT(link.serverClosed(), 5000);
    QVERIFY2(clock.elapsed() >= 150, qPrintable(QString::number(clock.elapsed())));
}

void TestLingeringClose::tricklingClientEndsAtTotal()
{
    Link link;
    QVERIFY(link.open());
    QTimer trickle;
    connect(&trickle, &QTimer::timeout, this, [&link] { link.clientSend(1); });
    trickle.start(20); // well inside `quiet`: only `total` can end it
    QElapsedTimer clock;
    clock.start();
    LingeringClose::start(link.server, {400ms, 1s, 1024 * 1024});
    QTRY_VERIFY_WITH_TIMEOUT(link.serverClosed(), 5000);
    QVERIFY2(clock.elapsed() >= 350, qPrintable(QString::number(clock.elapsed())));
}

void TestLingeringClose::byteBoundEndsIt()
{
    Link link;
    QVERIFY(link.open());
    QTimer flood;
    qint64 sent = 0;
    connect(&flood, &QTimer::timeout, this, [&] { sent += link.clientSend(64 * 1024); });
    flood.start(1);
    LingeringClose::start(link.server, {10s, 10s, 256 * 1024});
    QTRY_VERIFY_WITH_TIMEOUT(link.serverClosed(), 5000);
    QVERIFY2(sent >= 256 * 1024, qPrintable(QString::number(sent)));
}

QTEST_GUILESS_MAIN(TestLingeringClose)
#include "tst_lingering_close.moc"
