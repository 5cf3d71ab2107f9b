// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "app/drain.h"
#include "app/reloadcheck.h"
#include "app/servicestatus.h"
#include "app/workerpool.h"
#include "config/config.h"
#include "forward/exchangecounter.h"
#include "forward/routehealth.h"
#include "http/bodybudget.h"
#include "http/connectionbudget.h"
#include "observe/metrics.h"
#include "upstream/socket/sockettransport.h"

#include <QList>
#include <QObject>

#include <functional>
#include <memory>

namespace slp {

class DiscoverySupervisor;
class RouteTable;
class SignalWatcher;

// The running daemon: owns the route table, discovery and metrics, and the parts that do its
// other jobs: the serving workers (WorkerPool), the reload's child check (ReloadCheck), the
// drain (Drain) and what systemd is told (ServiceStatus). Each signal leads to one named
// step: SIGHUP to a check and then applyReload(), which builds the new table from the old
// and keeps the old on failure; SIGTERM to the drain.
class Daemon : public QObject
{
    Q_OBJECT
public:
    // `loader` reads and compiles the config file again (command-line overrides applied) for
    // SIGHUP.
    using ConfigLoader = std::function<ConfigResult()>;
    Daemon(Config config, QString configPath, ConfigLoader loader, QObject *parent = nullptr);
    ~Daemon() override;

    // Listens and logs the route dump, then tells systemd it is ready; false with `error` set
    // when the address is unusable.
    bool start(QString *error);
    // SIGHUP: a config that fails to compile is logged and ignored; a good one replaces the
    // table between requests (in-flight requests finish on the route they started on) and
    // discovery state survives for backends whose id, url and settings did not change.
    void reload();

Q_SIGNALS:
    void finished(int exitCode);

private:
    void applyReload(); // compile in-process and swap, once the child check passed
    void reloadFailed(const QString &summary, const QStringList &details);
    void beginShutdown(int signal);
    // STATUS=: routes, ambiguous, failing and stalled ones, a failed reload.
    QString statusLine() const;
    void startDiscovery();
    void startSupervisor(qsizetype routeIndex);
    void logRouteDump(const QString &headline) const;
    void refreshModelInfo();
    // Hands every worker a copy of the table as it is now (after a reload or a probe).
    void publishTable();
    WorkerSettings workerSettings();
    // max_buffered_body_bytes (or the machine's default) on the one budget.
    void applyBodyLimit();

    Config m_config;
    ConfigLoader m_loader;
    qint64 m_startedAt = 0;
    MetricsRegistry m_metrics;
    // What the workers share (WorkerShared), each thread-safe; all outlive every worker.
    ConnectionBudget m_connections;        // max_connections
    BodyBudget m_bodies;                   // max_buffered_body_bytes
    ExchangeCounter m_exchanges;           // what a drain waits for
    RouteHealthBoard m_health{&m_metrics}; // every route's passive state
    std::unique_ptr<RouteTable> m_table;   // discovery writes here; workers get copies
    WorkerPool m_pool;                     // stopped in ~Daemon, before what it points into
    ReloadCheck m_reload;
    Drain m_drain{m_pool, m_exchanges};
    ServiceStatus m_service;
    SignalWatcher *m_signals = nullptr; // Qt child
    // Discovery's probes go out as requests do (SocketCall), on a pool of their own that the
    // workers never share: one idle connection per backend, on the main thread.
    SocketTransport m_discoveryTransport{1};
    QList<DiscoverySupervisor *> m_supervisors; // Qt children
};

} // namespace slp
