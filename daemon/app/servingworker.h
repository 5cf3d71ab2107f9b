// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "config/listenaddress.h"
#include "http/clientlistener.h"
#include "routing/requestrouter.h"

#include <QObject>
#include <QPointer>

#include <memory>

namespace slp {

class ConnectionBudget;
class ExchangeCounter;
class HttpFront;
class MetricsRegistry;
class RouteHealthBoard;
class RouteTable;
class UpstreamTransport;

// Qt's default backlog of 50 drops SYNs in a burst of new clients (a 1 s retry each).
inline constexpr int kListenBacklog = 4096;

// What every worker shares, owned by the daemon and outliving every worker: the parts that are
// safe to use from any thread.
struct WorkerShared
{
    MetricsRegistry &metrics;
    ConnectionBudget &connections; // max_connections, taken by every listener
    ExchangeCounter &exchanges;    // every exchange counts itself here: what a drain waits for
    RouteHealthBoard &health;      // every exchange reports its outcome here
};

// What one worker needs from the config; the daemon computes each worker's share.
struct WorkerSettings
{
    QString transport = QStringLiteral("socket"); // socket | qnam
    int maxUpstreamConnections = 1024;            // this worker's share, per origin
    ConnectionSettings connections;               // its body budget is the daemon's
    RouterOptions options;
};

// One event loop's share of the serving: a listener on the daemon's port, the QtHttpServer
// front, the request router and an upstream transport with pools of its own. The daemon runs
// one on its own thread and, with `workers: N`, N-1 more on threads of their own. Nothing in a
// worker is touched from another thread except through queued calls; what the workers share
// (WorkerShared) is thread-safe.
class ServingWorker : public QObject
{
    Q_OBJECT
public:
    ServingWorker(int index, WorkerSettings settings, std::shared_ptr<const RouteTable> table,
                  const WorkerShared &shared);
    ~ServingWorker() override;

    // Builds the transport, router and front, and listens; call on the worker's own thread.
    // With `sockets` (passed by systemd, or a Unix socket) it accepts on a duplicate of each;
    // else it binds `address`, with `sharePort` as a SO_REUSEPORT listener, so the other
    // workers can bind the same port.
    bool start(const ListenAddress &address, bool sharePort, const QList<int> &sockets,
               QString *error);
    QHostAddress serverAddress() const;
    quint16 serverPort() const;

    void setTable(std::shared_ptr<const RouteTable> table);
    // Reload: new connections get the new limits, new requests the new options.
    void applySettings(const WorkerSettings &settings);
    // A drain in two steps: stop accepting; then, once requests already sent on accepted
    // connections have been read, close each connection once it owes nothing.
    void stopAccepting();
    int closeConnections(); // connections left because they have unread bytes

private:
    void onConnectionCountChanged(int open);
    ClientListener *listenOn(const ListenAddress &address, bool sharePort, QString *error);
    ClientListener *adopt(int socket, QString *error);
    void attach(ClientListener *listener);

    int m_index;
    WorkerSettings m_settings;
    std::shared_ptr<const RouteTable> m_table;
    WorkerShared m_shared;
    MetricsRegistry &m_metrics{m_shared.metrics};
    std::unique_ptr<UpstreamTransport> m_transport; // a QnamTransport or SocketTransport
    std::unique_ptr<RequestRouter> m_router;
    HttpFront *m_front = nullptr;                // Qt child
    QList<QPointer<ClientListener>> m_listeners; // owned by m_front after bind()
    int m_open = 0;                              // this worker's share of slp_client_connections
};

} // namespace slp
