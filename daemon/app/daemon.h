// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "app/listensockets.h"
#include "app/servicenotifier.h"
#include "config/config.h"
#include "forward/exchangecounter.h"
#include "forward/routehealth.h"
#include "observe/metrics.h"

#include <QList>
#include <QObject>
#include <QTimer>

#include <functional>
#include <memory>

class QNetworkAccessManager;
class QThread;

namespace slp {

class ConfigCheck;
class ConfigWatcher;
class LoopWatchdog;
class ConnectionBudget;
class DiscoverySupervisor;
class RouteTable;
class ServingWorker;
class SignalWatcher;
struct WorkerSettings;

// The running daemon: owns the route table, discovery, metrics and the serving workers (one
// on this thread, `workers: N` in all), and turns signals into reload or drain-and-exit.
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

private:
    void applyReload(); // compile in-process and swap, once the child check passed
    void reloadFailed(const QString &summary, const QStringList &details);
    void reloadDone(); // READY=1 after RELOADING=1, and a reload that waited runs now

Q_SIGNALS:
    void finished(int exitCode);

private:
    void beginShutdown(int signal);
    void checkDrained();
    void closeConnections(); // the drain's second step, repeated while requests are unread
    bool startWorkers(bool sharePort, QString *error);
    void logListening(bool sharePort, const QStringList &passed) const;
    // Systemd integration (daemonservice.cpp): STATUS=, the watchdog, the config watch.
    QString statusLine() const;
    void refreshStatus();
    void startWatchdog();
    void updateConfigWatch();
    void startDiscovery();
    void startSupervisor(qsizetype routeIndex);
    void logRouteDump(const QString &headline) const;
    void refreshModelInfo();
    // Hands every worker a copy of the table as it is now (after a reload or a probe).
    void publishTable();
    // Runs `call` on each worker's own thread, in turn, and returns once all have run it.
    void onEveryWorker(const std::function<void(ServingWorker *)> &call);
    WorkerSettings workerSettings() const;
    void stopWorkers();

    Config m_config;
    QString m_configPath;
    ConfigLoader m_loader;
    ConfigCheck *m_reloadCheck = nullptr; // Qt child while a reload is being checked
    qint64 m_startedAt = 0;
    MetricsRegistry m_metrics;
    // What a drain waits for; outlives every worker. Mutable: counting is thread-safe and is
    // not part of the state workerSettings() reads.
    mutable ExchangeCounter m_exchanges;
    // Every route's passive state, from every worker's exchanges; outlives every worker.
    mutable RouteHealthBoard m_health{&m_metrics};
    std::unique_ptr<RouteTable> m_table;        // discovery writes here; workers get copies
    std::unique_ptr<ConnectionBudget> m_budget; // max_connections, shared by every listener
    // m_workers[0] runs on this thread; m_workers[i] on m_threads[i - 1], deleted there when
    // that thread finishes. All are stopped in stopWorkers(), before m_metrics goes.
    QList<ServingWorker *> m_workers;
    QList<QThread *> m_threads;
    SignalWatcher *m_signals = nullptr;                  // Qt child
    QNetworkAccessManager *m_discoveryNetwork = nullptr; // Qt child
    QList<DiscoverySupervisor *> m_supervisors;          // Qt children
    bool m_draining = false;
    bool m_settled = false;  // the drain has read what was sent and closed idle connections
    QTimer m_drainGrace;     // shutdown_grace: what is still in flight then is cut
    ListenSockets m_sockets; // passed by systemd, or the Unix socket; outlives the workers
    ServiceNotifier m_notifier;
    LoopWatchdog *m_watchdog = nullptr;       // Qt child, with WatchdogSec=
    ConfigWatcher *m_configWatcher = nullptr; // Qt child, with watch_config
    QTimer m_statusTimer;                     // STATUS= kept current under systemd
    QString m_reloadFailure;                  // named in STATUS= until a reload succeeds
    bool m_reloadAgain = false;               // the file changed while a reload was being checked
};

} // namespace slp
