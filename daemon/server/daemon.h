#pragma once

#include "config/config.h"
#include "observe/metrics.h"

#include <QList>
#include <QObject>
#include <QPointer>

#include <functional>
#include <memory>

class QNetworkAccessManager;
class QProcess;

namespace slp {

class ClientListener;
class DiscoverySupervisor;
class HttpFront;
class UpstreamTransport;
class RequestRouter;
class RouteTable;
class SignalWatcher;

// The running daemon: owns the route table, metrics, the upstream transport, the front and
// the listener, and turns signals into drain-and-exit.
class Daemon : public QObject
{
    Q_OBJECT
public:
    // `loader` reads and compiles the config file again (command-line overrides applied) for
    // SIGHUP.
    using ConfigLoader = std::function<ConfigResult()>;
    Daemon(Config config, QString configPath, ConfigLoader loader, QObject *parent = nullptr);
    ~Daemon() override;

    // Listens and logs the route dump; false with `error` set when the address is unusable.
    bool start(QString *error);
    // SIGHUP: a config that fails to compile is logged and ignored; a good one replaces the
    // table between requests (in-flight requests finish on the route they started on) and
    // discovery state survives for backends whose id, url and settings did not change.
    void reload();

private:
    void applyReload(); // compile in-process and swap, once the child check passed

Q_SIGNALS:
    void finished(int exitCode);

private:
    void beginShutdown(int signal);
    void checkDrained();
    void startDiscovery();
    void startSupervisor(qsizetype routeIndex);
    void logRouteDump(const QString &headline) const;
    void refreshModelInfo();

    Config m_config;
    QString m_configPath;
    ConfigLoader m_loader;
    QProcess *m_reloadCheck = nullptr; // Qt child while a reload is being checked
    qint64 m_startedAt = 0;
    MetricsRegistry m_metrics;
    std::unique_ptr<RouteTable> m_table;
    std::unique_ptr<UpstreamTransport> m_transport; // a QnamTransport or SocketTransport
    std::unique_ptr<RequestRouter> m_router;
    HttpFront *m_front = nullptr;                        // Qt child
    QPointer<ClientListener> m_listener;                 // owned by m_front after bind()
    SignalWatcher *m_signals = nullptr;                  // Qt child
    QNetworkAccessManager *m_discoveryNetwork = nullptr; // Qt child
    QList<DiscoverySupervisor *> m_supervisors;          // Qt children
    bool m_draining = false;
    qint64 m_drainDeadline = 0;
};

} // namespace slp
