// SPDX-License-Identifier: GPL-3.0-or-later
// How the socket transport tells an upstream's RST from its FIN (upstream/socket/peerend.h),
// over real loopback connections: the peer resets (SO_LINGER {1,0} and close) or closes
// (shutdown), and the shadow descriptor asks TCP_INFO, also once the first descriptor is gone,
// as Qt 6.4 closes its own before it reports the "remote host closed" error.
#include "upstream/socket/peerend.h"

#include <QDir>
#include <QSignalSpy>
#include <QSslSocket>
#include <QTcpSocket>
#include <QtTest>

#include <arpa/inet.h>
#include <cerrno>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

using slp::PeerEnd;
using slp::SocketShadow;

namespace {

// A listening socket on 127.0.0.1 and the server end of one accepted connection.
struct Listener
{
    int fd = -1;
    quint16 port = 0;

    Listener()
    {
        fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof addr;
        if (::bind(fd, reinterpret_cast<sockaddr *>(&addr), size) != 0 || ::listen(fd, 4) != 0 ||
            ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &size) != 0)
            return;
        port = ntohs(addr.sin_port);
    }
    ~Listener() { ::close(fd); }

    // A blocking connect to ourselves: loopback completes it in the kernel, before accept().
    int connectClient() const
    {
        const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons(port);
        return ::connect(c, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0 ? c : -1;
    }
    int accept() const { return ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC); }
};

void resetAndClose(int fd)
{
    const linger hard{1, 0}; // close() sends an RST instead of a FIN
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    ::close(fd);
}

int openFdCount()
{
    return int(QDir(QStringLiteral("/proc/self/fd")).entryList(QDir::Files | QDir::System).size());
}

// Reads until the end of the stream (EOF, or ECONNRESET after an RST), as Qt does.
bool readToEnd(int fd)
{
    char c = 0;
    const ssize_t n = ::recv(fd, &c, 1, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

} // namespace

class TestPeerEnd : public QObject
{
    Q_OBJECT

private slots:
    void statesClassified();
    void noDescriptorIsUnknown();
    void resetAndFinToldApart_data();
    void resetAndFinToldApart();
    void shadowClosesItsDescriptor();
    void qtClosesItsDescriptorFirst_data();
    void qtClosesItsDescriptorFirst();
    void tlsSocketShadowedOnConnect();
};

void TestPeerEnd::statesClassified()
{
    QCOMPARE(slp::peerEndOf(TCP_ESTABLISHED), PeerEnd::Open);
    QCOMPARE(slp::peerEndOf(TCP_CLOSE_WAIT), PeerEnd::Closed);
    QCOMPARE(slp::peerEndOf(TCP_CLOSE), PeerEnd::Reset);
    QCOMPARE(slp::peerEndOf(TCP_SYN_SENT), PeerEnd::Unknown);
    QCOMPARE(slp::peerEndOf(TCP_FIN_WAIT1), PeerEnd::Unknown);
}

void TestPeerEnd::noDescriptorIsUnknown()
{
    SocketShadow shadow;
    QCOMPARE(shadow.peerEnd(), PeerEnd::Unknown);
    shadow.watch(-1);
    QVERIFY(!shadow.isOpen());
    QCOMPARE(shadow.peerEnd(), PeerEnd::Unknown);
}

void TestPeerEnd::resetAndFinToldApart_data()
{
    QTest::addColumn<bool>("reset");
    QTest::addColumn<bool>("firstClosed"); // the client's own descriptor closed first, as Qt does
    QTest::addColumn<PeerEnd>("expected");
    QTest::newRow("fin") << false << false << PeerEnd::Closed;
    QTest::newRow("rst") << true << false << PeerEnd::Reset;
    QTest::newRow("fin, first closed") << false << true << PeerEnd::Closed;
    QTest::newRow("rst, first closed") << true << true << PeerEnd::Reset;
}

void TestPeerEnd::resetAndFinToldApart()
{
    QFETCH(bool, reset);
    QFETCH(bool, firstClosed);
    QFETCH(PeerEnd, expected);
    Listener listener;
    QVERIFY(listener.port != 0);
    const int client = listener.connectClient();
    QVERIFY(client >= 0);
    const int server = listener.accept();
    QVERIFY(server >= 0);
    SocketShadow shadow;
    shadow.watch(client);
    QVERIFY(shadow.isOpen());
    QCOMPARE(shadow.peerEnd(), PeerEnd::Open);

    if (reset)
        resetAndClose(server);
    else
        ::shutdown(server, SHUT_WR);
    // What Qt does: read to the end and close its descriptor.
    QTRY_VERIFY_WITH_TIMEOUT(readToEnd(client), 5000);
    if (firstClosed)
        ::close(client);
    QCOMPARE(shadow.peerEnd(), expected);
    if (!firstClosed)
        ::close(client);
    if (!reset)
        ::close(server);
}

void TestPeerEnd::shadowClosesItsDescriptor()
{
    Listener listener;
    const int client = listener.connectClient();
    QVERIFY(client >= 0);
    const int base = openFdCount();
    {
        SocketShadow shadow;
        shadow.watch(client);
        QCOMPARE(openFdCount(), base + 1);
        shadow.watch(client); // closes the first shadow before it takes the next
        QCOMPARE(openFdCount(), base + 1);
        shadow.close();
        QVERIFY(!shadow.isOpen());
        QCOMPARE(openFdCount(), base);
        shadow.watch(client);
        QCOMPARE(openFdCount(), base + 1);
    } // the destructor closes it
    QCOMPARE(openFdCount(), base);
    ::close(client);
}

void TestPeerEnd::qtClosesItsDescriptorFirst_data()
{
    QTest::addColumn<bool>("reset");
    QTest::addColumn<PeerEnd>("expected");
    QTest::newRow("fin") << false << PeerEnd::Closed;
    QTest::newRow("rst") << true << PeerEnd::Reset;
}

// The premise: Qt reports an RST as RemoteHostClosedError with its descriptor closed already.
void TestPeerEnd::qtClosesItsDescriptorFirst()
{
    QFETCH(bool, reset);
    QFETCH(PeerEnd, expected);
    Listener listener;
    QTcpSocket socket;
    SocketShadow shadow;
    connect(&socket, &QAbstractSocket::connected, this,
            [&] { shadow.watch(socket.socketDescriptor()); });
    QSignalSpy errors(&socket, &QAbstractSocket::errorOccurred);
    socket.connectToHost(QHostAddress::LocalHost, listener.port);
    QVERIFY(socket.waitForConnected(5000));
    const int server = listener.accept();
    QVERIFY(server >= 0);
    QVERIFY(shadow.isOpen());

    const int qtFd = int(socket.socketDescriptor());
    PeerEnd seen = PeerEnd::Open;
    bool qtFdOpenAtError = true;
    connect(&socket, &QAbstractSocket::errorOccurred, this, [&] {
        seen = shadow.peerEnd();
        qtFdOpenAtError = ::fcntl(qtFd, F_GETFD) != -1;
    });
    if (reset)
        resetAndClose(server);
    else
        ::shutdown(server, SHUT_WR);
    QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 1, 5000);
    QCOMPARE(errors.first().first().value<QAbstractSocket::SocketError>(),
             QAbstractSocket::RemoteHostClosedError);
    QVERIFY(!qtFdOpenAtError); // Qt's own descriptor cannot be asked any more
    QCOMPARE(seen, expected);
    if (!reset)
        ::close(server);
}

// An https upstream is shadowed too: QSslSocket has its descriptor when it says connected.
void TestPeerEnd::tlsSocketShadowedOnConnect()
{
    if (!QSslSocket::supportsSsl())
        QSKIP("no TLS backend");
    Listener listener;
    QSslSocket socket;
    SocketShadow shadow;
    connect(&socket, &QAbstractSocket::connected, this,
            [&] { shadow.watch(socket.socketDescriptor()); });
    socket.connectToHostEncrypted(QStringLiteral("127.0.0.1"), listener.port);
    QTRY_VERIFY_WITH_TIMEOUT(shadow.isOpen(), 5000);
    const int server = listener.accept();
    QVERIFY(server >= 0);
    resetAndClose(server); // mid-handshake, but the kernel's answer is the same
    QTRY_COMPARE_WITH_TIMEOUT(shadow.peerEnd(), PeerEnd::Reset, 5000);
}

QTEST_GUILESS_MAIN(TestPeerEnd)
#include "tst_peer_end.moc"
