// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/clientlistener.h"

#include "http/connectionbudget.h"

#include <QTcpSocket>

#include <unistd.h>

namespace slp {

ClientListener::ClientListener(const ConnectionLimits &limits, ConnectionBudget *budget,
                               QObject *parent)
    : QTcpServer(parent), m_limits(limits), m_budget(budget)
{
    // Queued: never from inside the destruction of the socket that gave its place back.
    connect(m_budget, &ConnectionBudget::released, this, &ClientListener::admitParked,
            Qt::QueuedConnection);
}

ClientListener::~ClientListener()
{
    for (const qintptr handle : std::as_const(m_parked)) {
        ::close(int(handle));
    }
}

void ClientListener::incomingConnection(qintptr handle)
{
    if (!m_budget->tryAcquire()) {
        // Past the cap (a burst accepted in one go by QTcpServer's accept loop): held unread,
        // as in the kernel's accept queue. Bounded like that queue; beyond it, refused.
        if (m_parked.size() >= kMaxParked) {
            ::close(int(handle));
        } else {
            m_parked.append(handle);
        }
        pauseAccepting();
        return;
    }
    adopt(handle);
}

void ClientListener::adopt(qintptr handle)
{
    // Holds a place in the budget (taken by the caller) until the socket is gone.
    auto *socket = new QTcpSocket(this); // QtHttpServer deletes it when the client leaves
    if (!socket->setSocketDescriptor(handle)) {
        delete socket;
        m_budget->release();
        return;
    }
    socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    auto *connection = new ClientConnection(socket, m_limits); // owned: Qt child of the socket
    connect(connection, &ClientConnection::requestRejected, this, &ClientListener::requestRejected);
    ++m_open;
    Q_EMIT connectionCountChanged(m_open);
    connect(socket, &QObject::destroyed, this, [this] {
        --m_open;
        Q_EMIT connectionCountChanged(m_open);
        m_budget->release();
        if (!isListening()) {
            return; // shutting down: nothing more is admitted
        }
        // Queued: not from inside the socket's destruction.
        QMetaObject::invokeMethod(this, &ClientListener::admitParked, Qt::QueuedConnection);
    });
    if (!m_budget->hasRoom()) {
        pauseAccepting(); // the rest wait in the kernel's accept queue
    }
    addPendingConnection(socket); // QtHttpServer picks it up (pendingConnectionAvailable)
}

void ClientListener::beginShutdown()
{
    close();
    for (const qintptr handle : std::exchange(m_parked, {})) {
        ::close(int(handle));
    }
    for (ClientConnection *connection : findChildren<ClientConnection *>()) {
        connection->beginShutdown();
    }
}

void ClientListener::admitParked()
{
    if (!isListening()) {
        return; // shut down: the parked connections are closed already
    }
    while (!m_parked.isEmpty() && m_budget->tryAcquire()) {
        adopt(m_parked.takeFirst());
    }
    if (m_parked.isEmpty() && m_budget->hasRoom()) {
        resumeAccepting();
    }
}

} // namespace slp
