// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/servingworker.h"

#include "http/clientlistener.h"
#include "http/httpfront.h"
#include "net/sharedport.h"
#include "observe/metrics.h"
#include "routing/routetable.h"
#include "upstream/qnam/qnamtransport.h"
#include "upstream/socket/sockettransport.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace slp {

ServingWorker::ServingWorker(int index, WorkerSettings settings,
                             std::shared_ptr<const RouteTable> table, const WorkerShared &shared)
    : m_index(index), m_settings(std::move(settings)), m_table(std::move(table)), m_shared(shared)
{}

ServingWorker::~ServingWorker()
{
    // The front (and with it every connection and exchange) goes before the transport the
    // exchanges point into.
    delete m_front;
    m_front = nullptr;
    if (m_open != 0)
        m_metrics.add(metric::clientConnections, {}, -m_open);
}

bool ServingWorker::start(const ListenAddress &address, bool sharePort, const QList<int> &sockets,
                          QString *error)
{
    if (m_settings.transport == QLatin1String("socket"))
        m_transport = std::make_unique<SocketTransport>(m_settings.maxUpstreamConnections);
    else
        m_transport = std::make_unique<QnamTransport>(m_settings.maxUpstreamConnections);
    // The one context every exchange of this worker holds (the router keeps it).
    const ExchangeContext context{*m_transport, m_metrics, &m_shared.health, &m_shared.exchanges,
                                  m_settings.options.logRequests};
    m_router = std::make_unique<RequestRouter>(m_table, context, m_settings.options);
    m_front = new HttpFront(*m_router, this);
#ifdef SLP_MEASURE_WITHOUT_QT_HOP
    m_settings.connections.handlerWithoutQt = m_router.get();
#endif
    if (sockets.isEmpty()) {
        ClientListener *listener = listenOn(address, sharePort, error);
        if (!listener)
            return false;
        attach(listener);
        return true;
    }
    for (const int socket : sockets) {
        ClientListener *listener = adopt(socket, error);
        if (!listener)
            return false;
        attach(listener);
    }
    return true;
}

ClientListener *ServingWorker::listenOn(const ListenAddress &address, bool sharePort,
                                        QString *error)
{
    auto *listener = new ClientListener(m_settings.connections, &m_shared.connections, this);
    bool listening = false;
    if (sharePort) {
        const int fd = openSharedListenSocket(address.host, address.port, kListenBacklog, error);
        listening = fd >= 0 && listener->setSocketDescriptor(fd);
        if (fd >= 0 && !listening) {
            *error = listener->errorString();
            ::close(fd);
        }
    } else {
        listener->setListenBacklogSize(kListenBacklog);
        listening = listener->listen(address.host, address.port);
        if (!listening)
            *error = listener->errorString();
    }
    if (!listening) {
        delete listener;
        return nullptr;
    }
    return listener;
}

ClientListener *ServingWorker::adopt(int socket, QString *error)
{
    // A duplicate per worker: every worker's loop polls the one kernel socket and whichever
    // accepts first takes the connection (the rest see EAGAIN, which QTcpServer ignores).
    const int fd = ::fcntl(socket, F_DUPFD_CLOEXEC, 3);
    auto *listener = new ClientListener(m_settings.connections, &m_shared.connections, this);
    if (fd < 0 || !listener->setSocketDescriptor(fd)) {
        *error = fd < 0 ? QStringLiteral("dup: %1").arg(QString::fromLocal8Bit(strerror(errno)))
                        : listener->errorString();
        if (fd >= 0)
            ::close(fd);
        delete listener;
        return nullptr;
    }
    return listener;
}

void ServingWorker::attach(ClientListener *listener)
{
    connect(listener, &ClientListener::connectionCountChanged, this,
            &ServingWorker::onConnectionCountChanged);
    // Requests refused before their body was read (413, 400, 408, ...) carry no model id.
    connect(listener, &ClientListener::requestRejected, this, [this](int status) {
        m_metrics.add(metric::requestsTotal, metric::requestLabels(metric::unknownModel, status));
    });
    m_front->bind(listener);
    m_listeners.append(listener);
}

QHostAddress ServingWorker::serverAddress() const
{
    return !m_listeners.isEmpty() && m_listeners.first() ? m_listeners.first()->serverAddress()
                                                         : QHostAddress();
}

quint16 ServingWorker::serverPort() const
{
    return !m_listeners.isEmpty() && m_listeners.first() ? m_listeners.first()->serverPort() : 0;
}

void ServingWorker::onConnectionCountChanged(int open)
{
    // The gauge is the sum over workers: each adds the change in its own count.
    m_metrics.add(metric::clientConnections, {}, open - m_open);
    m_metrics.add(metric::acceptedConnections,
                  {{QStringLiteral("worker"), QString::number(m_index)}},
                  open > m_open ? open - m_open : 0);
    m_open = open;
}

void ServingWorker::setTable(std::shared_ptr<const RouteTable> table)
{
    m_table = std::move(table);
    if (m_router)
        m_router->setTable(m_table);
}

void ServingWorker::applySettings(const WorkerSettings &settings)
{
    m_settings.connections = settings.connections;
#ifdef SLP_MEASURE_WITHOUT_QT_HOP
    m_settings.connections.handlerWithoutQt = m_router.get();
#endif
    m_settings.options = settings.options;
    if (m_router)
        m_router->setOptions(m_settings.options);
    for (const QPointer<ClientListener> &listener : std::as_const(m_listeners))
        if (listener)
            listener->setSettings(m_settings.connections);
}

void ServingWorker::stopAccepting()
{
    for (const QPointer<ClientListener> &listener : std::as_const(m_listeners))
        if (listener)
            listener->stopAccepting();
}

int ServingWorker::closeConnections()
{
    int unread = 0;
    for (const QPointer<ClientListener> &listener : std::as_const(m_listeners))
        if (listener)
            unread += listener->closeConnections();
    return unread;
}

} // namespace slp
