// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/clientlistener.h"

#include "http/connectionbudget.h"

#include <QTcpSocket>

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace slp {

namespace {
// A client on a Unix socket has no IP address, but Qt 6.4 reads its sockaddr_un as an IPv4
// one and reports bytes of the path as the peer. Cleared, the peer is null: X-Forwarded-For
// gets no address for it (docs/DECISIONS.md).
class UnixPeerSocket : public QTcpSocket
{
public:
    using QTcpSocket::QTcpSocket;
    void forgetAddresses()
    {
        setPeerAddress(QHostAddress());
        setPeerPort(0);
        setLocalAddress(QHostAddress());
        setLocalPort(0);
    }
};
} // namespace

ClientListener::ClientListener(const ConnectionSettings &settings, ConnectionBudget *budget,
                               QObject *parent)
    : QTcpServer(parent), m_settings(settings), m_budget(budget)
{
    // Queued: never from inside the destruction of the socket that gave its place back.
    connect(m_budget, &ConnectionBudget::released, this, &ClientListener::admitParked,
            Qt::QueuedConnection);
}

ClientListener::~ClientListener()
{
    for (const qintptr handle : std::as_const(m_parked))
        ::close(int(handle));
}

void ClientListener::incomingConnection(qintptr handle)
{
    if (!m_budget->tryAcquire()) {
        // Past the cap (a burst accepted in one go by QTcpServer's accept loop): held unread,
        // as in the kernel's accept queue. Bounded like that queue; beyond it, refused.
        if (m_parked.size() >= kMaxParked)
            ::close(int(handle));
        else
            m_parked.append(handle);
        pauseAccepting();
        return;
    }
    adopt(handle);
}

void ClientListener::adopt(qintptr handle)
{
    // Holds a place in the budget (taken by the caller) until the socket is gone.
    // QtHttpServer deletes the socket when the client leaves.
    UnixPeerSocket *unixPeer = isUnixDomain() ? new UnixPeerSocket(this) : nullptr;
    QTcpSocket *socket = unixPeer ? unixPeer : new QTcpSocket(this);
    if (!socket->setSocketDescriptor(handle)) {
        delete socket;
        m_budget->release();
        return;
    }
    if (unixPeer)
        unixPeer->forgetAddresses();
    else
        socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    auto *connection = new ClientConnection(socket, m_settings); // owned: Qt child of the socket
    connect(connection, &ClientConnection::requestRejected, this, &ClientListener::requestRejected);
    ++m_open;
    Q_EMIT connectionCountChanged(m_open);
    connect(socket, &QObject::destroyed, this, [this] {
        --m_open;
        Q_EMIT connectionCountChanged(m_open);
        m_budget->release();
        if (!isListening())
            return; // shutting down: nothing more is admitted
        // Queued: not from inside the socket's destruction.
        QMetaObject::invokeMethod(this, &ClientListener::admitParked, Qt::QueuedConnection);
    });
    if (!m_budget->hasRoom())
        pauseAccepting();         // the rest wait in the kernel's accept queue
    addPendingConnection(socket); // QtHttpServer picks it up (pendingConnectionAvailable)
}

bool ClientListener::isUnixDomain()
{
    if (!m_unixDomain) {
        sockaddr_storage address = {};
        socklen_t length = sizeof(address);
        m_unixDomain = ::getsockname(int(socketDescriptor()),
                                     reinterpret_cast<sockaddr *>(&address), &length) == 0 &&
                       address.ss_family == AF_UNIX;
    }
    return *m_unixDomain;
}

void ClientListener::stopAccepting()
{
    close();
    for (const qintptr handle : std::exchange(m_parked, {}))
        ::close(int(handle));
}

int ClientListener::closeConnections()
{
    int unread = 0;
    for (ClientConnection *connection : findChildren<ClientConnection *>()) {
        // Closing it now would answer that request with a reset: read it first.
        auto *socket = qobject_cast<QTcpSocket *>(connection->parent());
        int queued = 0;
        if (socket &&
            (socket->bytesAvailable() > 0 ||
             (::ioctl(int(socket->socketDescriptor()), FIONREAD, &queued) == 0 && queued > 0))) {
            ++unread;
            continue;
        }
        connection->beginShutdown();
    }
    return unread;
}

void ClientListener::admitParked()
{
    if (!isListening())
        return; // shut down: the parked connections are closed already
    while (!m_parked.isEmpty() && m_budget->tryAcquire())
        adopt(m_parked.takeFirst());
    if (m_parked.isEmpty() && m_budget->hasRoom())
        resumeAccepting();
}

} // namespace slp
