#include "app/daemon.h"

#include "app/servingworker.h"
#include "app/signalwatcher.h"
#include "discovery/discoverysupervisor.h"
#include "http/connectionbudget.h"
#include "net/epolldispatcher.h"
#include "net/sharedport.h"
#include "observe/logging.h"
#include "routing/routetable.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QProcess>
#include <QThread>
#include <QTimer>

namespace slp {

namespace {
std::chrono::milliseconds toMs(Nanoseconds d)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

ConnectionLimits limitsOf(const Config &config)
{
    ConnectionLimits limits;
    limits.head.maxHeaderBytes = config.maxHeaderBytes;
    limits.head.maxBodyBytes = config.maxBodyBytes;
    limits.headerTimeout = toMs(config.headerTimeout);
    limits.idleTimeout = toMs(config.idleTimeout);
    return limits;
}

// One worker's share of a per-process limit, never below one.
int shareOf(int total, int workers)
{
    return std::max(1, int((qint64(total) + workers - 1) / workers));
}
} // namespace

Daemon::Daemon(Config config, QString configPath, ConfigLoader loader, QObject *parent)
    : QObject(parent), m_config(std::move(config)), m_configPath(std::move(configPath)),
      m_loader(std::move(loader)), m_startedAt(QDateTime::currentSecsSinceEpoch())
{
    declareSlpMetrics(m_metrics);
    m_table = std::make_unique<RouteTable>(m_config);
    m_budget = std::make_unique<ConnectionBudget>(m_config.maxConnections);
    m_signals = new SignalWatcher(this);
    connect(m_signals, &SignalWatcher::terminateRequested, this, &Daemon::beginShutdown);
    connect(m_signals, &SignalWatcher::reloadRequested, this, &Daemon::reload);
    refreshModelInfo();
}

Daemon::~Daemon()
{
    stopWorkers();
}

WorkerSettings Daemon::workerSettings() const
{
    WorkerSettings settings;
    const int workers = m_config.workers;
    settings.transport = m_config.upstreamTransport;
    // Each worker has pools of its own: the per-origin limit is split between them.
    settings.maxUpstreamConnections = shareOf(m_config.maxUpstreamConnections, workers);
    settings.limits = limitsOf(m_config);
    settings.options.logRequests = m_config.logRequests;
    settings.options.maxBodyBytes = m_config.maxBodyBytes;
    settings.options.startedAt = m_startedAt;
    return settings;
}

void Daemon::stopWorkers()
{
    for (QThread *thread : std::as_const(m_threads)) {
        thread->quit(); // its worker is deleted on that thread as it finishes
    }
    for (QThread *thread : std::exchange(m_threads, {})) {
        thread->wait();
        delete thread;
    }
    if (!m_workers.isEmpty()) {
        delete m_workers.first();
    }
    m_workers.clear();
}

void Daemon::onEveryWorker(const std::function<void(ServingWorker *)> &call)
{
    // Blocking: once this returns every worker has applied the call, so a log line written
    // after it ("reload: ...") is true on every thread. Workers never wait on this thread.
    for (ServingWorker *worker : std::as_const(m_workers)) {
        if (worker->thread() == thread()) {
            call(worker);
        } else {
            QMetaObject::invokeMethod(
                worker, [&call, worker] { call(worker); }, Qt::BlockingQueuedConnection);
        }
    }
}

void Daemon::publishTable()
{
    // The copy shares Qt's implicitly shared data with m_table: cheap, and safe to read on
    // other threads while discovery writes m_table (a write detaches m_table's own copy).
    const std::shared_ptr<const RouteTable> snapshot = std::make_shared<const RouteTable>(*m_table);
    onEveryWorker([&snapshot](ServingWorker *worker) { worker->setTable(snapshot); });
}

void Daemon::logRouteDump(const QString &headline) const
{
    int width = 0;
    for (const Route &r : m_config.routes) {
        width = std::max(width, int(r.id.size()));
    }
    qCInfo(lcServer).noquote() << headline;
    for (qsizetype i = 0; i < m_config.routes.size(); ++i) {
        qCInfo(lcServer).noquote() << routeDumpLine(m_config, int(i), width);
    }
}

bool Daemon::start(QString *error)
{
    logRouteDump(QStringLiteral("slp %1: %2 routes from %3")
                     .arg(QStringLiteral(SLP_VERSION))
                     .arg(m_config.routes.size())
                     .arg(m_configPath));
    const int workers = m_config.workers;
    const bool sharePort = workers > 1;
    QString failure;
    if (sharePort && !portIsFree(m_config.listen.host, m_config.listen.port, &failure)) {
        *error = QStringLiteral("cannot listen on %1: %2").arg(m_config.listen.text, failure);
        return false;
    }
    ListenAddress address = m_config.listen;
    const std::shared_ptr<const RouteTable> snapshot = std::make_shared<const RouteTable>(*m_table);
    for (int i = 0; i < workers; ++i) {
        auto *worker = new ServingWorker(i, workerSettings(), snapshot, m_metrics, *m_budget);
        m_workers.append(worker); // owned: deleted in stopWorkers()
        bool listening = false;
        if (i == 0) {
            listening = worker->start(address, sharePort, &failure);
            address.port = worker->serverPort(); // the rest join the port the OS picked
        } else {
            auto *thread = new QThread; // owned: deleted in stopWorkers()
            thread->setObjectName(QStringLiteral("slp-worker-%1").arg(i)); // the OS thread name
            if (QAbstractEventDispatcher *dispatcher = createEventDispatcher()) {
                thread->setEventDispatcher(dispatcher); // owned by the thread from here
            }
            m_threads.append(thread);
            worker->moveToThread(thread);
            connect(thread, &QThread::finished, worker, &QObject::deleteLater);
            thread->start();
            QMetaObject::invokeMethod(
                worker, [&] { listening = worker->start(address, sharePort, &failure); },
                Qt::BlockingQueuedConnection);
        }
        if (!listening) {
            *error = QStringLiteral("cannot listen on %1: %2").arg(m_config.listen.text, failure);
            return false; // ~Daemon stops the workers already started
        }
    }
    const QHostAddress bound = m_workers.first()->serverAddress();
    QString host = bound.toString();
    if (bound.protocol() == QAbstractSocket::IPv6Protocol) {
        host = QLatin1Char('[') + host + QLatin1Char(']');
    }
    if (sharePort) {
        qCInfo(lcServer).noquote()
            << QStringLiteral("%1 worker threads share the port (SO_REUSEPORT)").arg(workers);
    }
    qCInfo(lcServer).noquote() << QStringLiteral("listening on %1:%2").arg(host).arg(address.port);
    startDiscovery();
    return true;
}

void Daemon::startDiscovery()
{
    // One QNAM for every probe: probes are one request per backend at a time, far below the
    // 6-connection cap, and stay off the forwarding transport's pools.
    m_discoveryNetwork = new QNetworkAccessManager(this);
    m_discoveryNetwork->setProxy(QNetworkProxy::NoProxy);
    m_discoveryNetwork->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
    m_discoveryNetwork->setCache(nullptr);
    m_discoveryNetwork->setTransferTimeout(0);
    for (qsizetype i = 0; i < m_table->size(); ++i) {
        if (m_table->route(i).nameSource == NameSource::Discover) {
            startSupervisor(i); // pinned backends and editions are never probed
        }
    }
}

void Daemon::startSupervisor(qsizetype routeIndex)
{
    auto *supervisor =
        new DiscoverySupervisor(m_table->route(routeIndex), routeIndex, m_config.discovery,
                                m_discoveryNetwork, m_metrics, this);
    // Discovery reports; the daemon applies what it learned and publishes the new snapshot.
    connect(supervisor, &DiscoverySupervisor::reported, this,
            [this, supervisor](qsizetype index, bool nameChanged) {
                m_table->discovery(index) = supervisor->state();
                publishTable();
                if (nameChanged) {
                    refreshModelInfo();
                }
            });
    m_supervisors.append(supervisor);
    supervisor->start();
}

void Daemon::reload()
{
    // The new file is first compiled by `slp --check` in a child process with a deadline:
    // yaml-cpp 0.7 can loop forever on malformed input, and a hang must cost a killed child,
    // not the event loop that serves every request.
    if (m_reloadCheck) {
        qCInfo(lcConfig)
            << "reload: a reload is already being checked; this SIGHUP is merged into it";
        return;
    }
    m_reloadCheck = new QProcess(this);
    m_reloadCheck->setProgram(QCoreApplication::applicationFilePath());
    m_reloadCheck->setArguments(
        {QStringLiteral("--check"), QStringLiteral("--config"), m_configPath});
    m_reloadCheck->setProcessChannelMode(QProcess::SeparateChannels);
    auto *deadline = new QTimer(m_reloadCheck); // owned by the check
    deadline->setSingleShot(true);
    connect(deadline, &QTimer::timeout, m_reloadCheck, [this] {
        qCWarning(lcConfig).noquote()
            << QStringLiteral("reload: checking %1 did not finish within 10s (yaml-cpp hangs on "
                              "some malformed input); still serving the previous config")
                   .arg(m_configPath);
        m_reloadCheck->kill();
    });
    connect(m_reloadCheck, &QProcess::finished, this,
            [this](int exitCode, QProcess::ExitStatus status) {
                QProcess *check = std::exchange(m_reloadCheck, nullptr);
                check->deleteLater();
                if (status == QProcess::NormalExit && exitCode == 0) {
                    applyReload();
                    return;
                }
                if (status != QProcess::NormalExit) {
                    return; // killed at the deadline, already logged
                }
                // The check printed every error, then "slp: N config error(s); nothing was
                // started": relay the errors under one headline.
                QStringList lines = QString::fromUtf8(check->readAllStandardError())
                                        .split(QLatin1Char('\n'), Qt::SkipEmptyParts);
                lines.removeIf([](const QString &line) {
                    return line.startsWith(QLatin1String("slp: ")) &&
                           line.endsWith(QLatin1String("nothing was started"));
                });
                qCWarning(lcConfig).noquote()
                    << QStringLiteral("reload: %1 has %2 error(s); still serving the previous "
                                      "config")
                           .arg(m_configPath)
                           .arg(lines.size());
                for (const QString &line : std::as_const(lines)) {
                    qCWarning(lcConfig).noquote() << QStringLiteral("reload: ") + line;
                }
            });
    m_reloadCheck->start();
    deadline->start(10000);
}

void Daemon::applyReload()
{
    ConfigResult result = m_loader();
    if (const auto *errors = std::get_if<QList<ConfigError>>(&result)) {
        qCWarning(lcConfig).noquote()
            << QStringLiteral("reload: %1 has %2 error(s); still serving the previous config")
                   .arg(m_configPath)
                   .arg(errors->size());
        for (const ConfigError &e : *errors) {
            qCWarning(lcConfig).noquote() << QStringLiteral("reload: ") + e.toString();
        }
        return;
    }
    Config next = std::get<Config>(std::move(result));
    if (next.listen.text != m_config.listen.text) {
        qCWarning(lcConfig).noquote()
            << QStringLiteral("reload: listen changed to %1: that needs a restart; still listening "
                              "on %2")
                   .arg(next.listen.text, m_config.listen.text);
    }
    next.listen = m_config.listen;
    if (next.maxUpstreamConnections != m_config.maxUpstreamConnections ||
        next.upstreamTransport != m_config.upstreamTransport) {
        qCWarning(lcConfig) << "reload: upstream transport settings change on restart only";
        next.maxUpstreamConnections = m_config.maxUpstreamConnections;
        next.upstreamTransport = m_config.upstreamTransport;
    }
    if (next.workers != m_config.workers || next.maxConnections != m_config.maxConnections) {
        qCWarning(lcConfig) << "reload: workers and max_connections change on restart only";
        next.workers = m_config.workers;
        next.maxConnections = m_config.maxConnections;
    }

    auto table = std::make_unique<RouteTable>(next);
    for (const Route &old : m_config.routes) {
        if (table->find(old.id) < 0) { // a gone route must not keep an alert firing
            m_metrics.remove(metric::consecutiveFailures, {{QStringLiteral("model_id"), old.id}});
        }
    }
    // Backends whose id, url and discovery settings are unchanged keep their supervisor and
    // what it learned; the others start afresh.
    const bool sameSchedule = next.discovery.backoffInitial == m_config.discovery.backoffInitial &&
                              next.discovery.backoffMax == m_config.discovery.backoffMax &&
                              next.discovery.recheck == m_config.discovery.recheck &&
                              next.discovery.probeTimeout == m_config.discovery.probeTimeout;
    QList<DiscoverySupervisor *> kept;
    QList<bool> supervised(table->size(), false);
    for (DiscoverySupervisor *supervisor : std::as_const(m_supervisors)) {
        const Route &old = m_table->route(supervisor->routeIndex());
        const qsizetype index = table->find(old.id);
        if (sameSchedule && index >= 0 && table->route(index).nameSource == NameSource::Discover &&
            table->route(index).origin == old.origin) {
            table->discovery(index) = supervisor->state();
            supervisor->rebind(index);
            supervised[index] = true;
            kept.append(supervisor);
            continue;
        }
        if (index < 0 || table->route(index).nameSource != NameSource::Discover) {
            m_metrics.remove(metric::modelAmbiguous, {{QStringLiteral("model_id"), old.id}});
        }
        delete supervisor; // aborts its probe, if one is running
    }
    m_supervisors = kept;

    // Swap between requests: the event loop runs one thing at a time, and every request in
    // flight carries its own copy of what it needs from its route.
    m_config = std::move(next);
    m_table = std::move(table);
    publishTable();
    const WorkerSettings settings = workerSettings();
    onEveryWorker([&settings](ServingWorker *worker) { worker->applySettings(settings); });
    if (m_discoveryNetwork) {
        for (qsizetype i = 0; i < m_table->size(); ++i) {
            if (m_table->route(i).nameSource == NameSource::Discover && !supervised[i]) {
                startSupervisor(i);
            }
        }
    }
    refreshModelInfo();
    logRouteDump(
        QStringLiteral("reload: %1 routes from %2").arg(m_config.routes.size()).arg(m_configPath));
}

void Daemon::refreshModelInfo()
{
    // slp_upstream_model_info carries the live mapping in its labels: rebuilt whole, so a
    // renamed model never leaves its old series behind.
    m_metrics.removeMatching(metric::modelInfo, {});
    for (qsizetype i = 0; i < m_table->size(); ++i) {
        // Per-route gauges exist from start-up (adding 0 keeps a running value).
        const PromLabels route{{QStringLiteral("model_id"), m_table->route(i).id}};
        m_metrics.add(metric::consecutiveFailures, route, 0);
        m_metrics.add(metric::routeInflight, route, 0);
        // The stream counters of routes that set their key (adding 0 keeps a running value).
        if (m_table->route(i).streamIdleTimeout.count() > 0) {
            m_metrics.add(metric::streamIdleTimeouts, route, 0);
        }
        if (m_table->route(i).sseKeepalive.count() > 0) {
            m_metrics.add(metric::sseKeepalives, route, 0);
        }
        const QString upstream = m_table->knownUpstreamModel(i);
        if (!upstream.isEmpty()) {
            m_metrics.set(metric::modelInfo,
                          {{QStringLiteral("model_id"), m_table->route(i).id},
                           {QStringLiteral("upstream_model"), upstream}},
                          1);
        }
    }
}

void Daemon::beginShutdown(int signal)
{
    if (m_draining) {
        qCInfo(lcServer) << "second signal: exiting now";
        Q_EMIT finished(0);
        return;
    }
    m_draining = true;
    // Stop accepting (the kernel refuses new connections) and close kept-alive connections
    // once they owe nothing: a proxy in front must not keep sending new requests here.
    onEveryWorker([](ServingWorker *worker) { worker->beginShutdown(); });
    qCInfo(lcServer).noquote() << QStringLiteral(
                                      "signal %1: draining in-flight requests for up to %2")
                                      .arg(signal)
                                      .arg(formatGoDuration(m_config.shutdownGrace));
    m_drainDeadline = QDateTime::currentMSecsSinceEpoch() + toMs(m_config.shutdownGrace).count();
    checkDrained();
}

void Daemon::checkDrained()
{
    const double inflight = m_metrics.value(metric::inflightRequests, {});
    if (inflight <= 0) {
        qCInfo(lcServer) << "drained; exiting";
        Q_EMIT finished(0);
        return;
    }
    if (QDateTime::currentMSecsSinceEpoch() >= m_drainDeadline) {
        qCWarning(lcServer).noquote()
            << QStringLiteral("shutdown grace over: cutting %1 in-flight requests").arg(inflight);
        Q_EMIT finished(0);
        return;
    }
    QTimer::singleShot(50, this, &Daemon::checkDrained);
}

} // namespace slp
