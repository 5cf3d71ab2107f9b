// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/daemon.h"

#include "app/reloadplan.h"
#include "app/yamldeadline.h"

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
#include <QThread>
#include <QTimer>

namespace slp {

namespace {
std::chrono::milliseconds toMs(Nanoseconds d)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

// How long a drain reads requests already sent before it closes idle connections.
constexpr std::chrono::milliseconds kDrainSettle(200);

ConnectionLimits limitsOf(const Config &config)
{
    ConnectionLimits limits;
    limits.head.maxHeaderBytes = config.maxHeaderBytes;
    limits.head.maxBodyBytes = config.maxBodyBytes;
    limits.maxBufferedBodyBytes = config.maxBufferedBodyBytes;
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
    settings.options.maxAnswerBytes = m_config.maxBodyBytes;
    settings.options.startedAt = m_startedAt;
    settings.options.exchanges = &m_exchanges;
    settings.options.health = &m_health;
    return settings;
}

void Daemon::stopWorkers()
{
    for (QThread *thread : std::as_const(m_threads))
        thread->quit(); // its worker is deleted on that thread as it finishes
    for (QThread *thread : std::exchange(m_threads, {})) {
        thread->wait();
        delete thread;
    }
    if (!m_workers.isEmpty())
        delete m_workers.first();
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
    QStringList ids;
    for (qsizetype i = 0; i < snapshot->size(); ++i)
        ids.append(snapshot->route(i).id);
    m_health.track(ids);
    onEveryWorker([&snapshot](ServingWorker *worker) { worker->setTable(snapshot); });
}

void Daemon::logRouteDump(const QString &headline) const
{
    qCInfo(lcServer).noquote() << headline;
    for (const QString &line : routeDump(m_config))
        qCInfo(lcServer).noquote() << line;
}

bool Daemon::start(QString *error)
{
    logRouteDump(QStringLiteral("slp %1: %2 routes from %3")
                     .arg(QStringLiteral(SLP_VERSION))
                     .arg(m_config.routes.size())
                     .arg(m_configPath));
    if (!m_sockets.acquire(m_config, kListenBacklog, error))
        return false;
    const QStringList given = m_sockets.addresses();
    const bool sharePort = m_config.workers > 1 && m_sockets.descriptors().isEmpty();
    QString failure;
    if (sharePort && !portIsFree(m_config.listen.host, m_config.listen.port, &failure)) {
        *error = QStringLiteral("cannot listen on %1: %2").arg(m_config.listen.text, failure);
        return false;
    }
    if (!startWorkers(sharePort, &failure)) {
        const QString where = given.isEmpty() ? m_config.listen.text : given.join(", ");
        *error = QStringLiteral("cannot listen on %1: %2").arg(where, failure);
        return false; // ~Daemon stops the workers already started
    }
    m_sockets.closeDescriptors(); // every worker holds duplicates
    logListening(sharePort, m_sockets.passedBySystemd() ? given : QStringList());
    startDiscovery();
    updateConfigWatch();
    // Config compiled, every listener accepting, each worker holding the first table.
    m_notifier.ready(statusLine());
    startWatchdog();
    if (ServiceNotifier::active()) {
        connect(&m_statusTimer, &QTimer::timeout, this, &Daemon::refreshStatus);
        m_statusTimer.start(std::chrono::seconds(5)); // failures counted on the workers
    }
    return true;
}

bool Daemon::startWorkers(bool sharePort, QString *error)
{
    ListenAddress address = m_config.listen;
    const QList<int> sockets = m_sockets.descriptors();
    const std::shared_ptr<const RouteTable> snapshot = std::make_shared<const RouteTable>(*m_table);
    for (int i = 0; i < m_config.workers; ++i) {
        auto *worker = new ServingWorker(i, workerSettings(), snapshot, m_metrics, *m_budget);
        m_workers.append(worker); // owned: deleted in stopWorkers()
        bool listening = false;
        if (i == 0) {
            listening = worker->start(address, sharePort, sockets, error);
            address.port = worker->serverPort(); // the rest join the port the OS picked
        } else {
            auto *thread = new QThread; // owned: deleted in stopWorkers()
            thread->setObjectName(QStringLiteral("slp-worker-%1").arg(i)); // the OS thread name
            if (QAbstractEventDispatcher *dispatcher = createEventDispatcher())
                thread->setEventDispatcher(dispatcher); // owned by the thread from here
            m_threads.append(thread);
            worker->moveToThread(thread);
            connect(thread, &QThread::finished, worker, &QObject::deleteLater);
            thread->start();
            QMetaObject::invokeMethod(
                worker, [&] { listening = worker->start(address, sharePort, sockets, error); },
                Qt::BlockingQueuedConnection);
        }
        if (!listening)
            return false;
    }
    return true;
}

void Daemon::logListening(bool sharePort, const QStringList &passed) const
{
    const int workers = m_config.workers;
    if (sharePort) {
        qCInfo(lcServer).noquote()
            << QStringLiteral("%1 worker threads share the port (SO_REUSEPORT)").arg(workers);
    } else if (workers > 1) {
        qCInfo(lcServer).noquote()
            << QStringLiteral("%1 worker threads accept on the same socket").arg(workers);
    }
    if (!passed.isEmpty()) {
        qCInfo(lcServer).noquote()
            << QStringLiteral("socket activation: systemd passed %1 listening socket(s); "
                              "listen: %2 is ignored")
                   .arg(passed.size())
                   .arg(m_config.listen.text);
        for (const QString &address : passed) {
            qCInfo(lcServer).noquote()
                << QStringLiteral("listening on %1 (passed by systemd)").arg(address);
        }
        return;
    }
    if (m_config.listen.isUnix()) {
        qCInfo(lcServer).noquote() << QStringLiteral("listening on %1 (mode %2)")
                                          .arg(m_config.listen.text)
                                          .arg(m_config.listenMode, 4, 8, QLatin1Char('0'));
        return;
    }
    const QHostAddress bound = m_workers.first()->serverAddress();
    QString host = bound.toString();
    if (bound.protocol() == QAbstractSocket::IPv6Protocol)
        host = QLatin1Char('[') + host + QLatin1Char(']');
    qCInfo(lcServer).noquote()
        << QStringLiteral("listening on %1:%2").arg(host).arg(m_workers.first()->serverPort());
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
    for (qsizetype i = 0; i < m_table->size(); ++i)
        if (m_table->route(i).nameSource == NameSource::Discover)
            startSupervisor(i); // pinned backends and editions are never probed
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
                if (nameChanged)
                    refreshModelInfo();
                refreshStatus();
            });
    m_supervisors.append(supervisor);
    supervisor->start();
}

void Daemon::reload()
{
    // The new file is first compiled by `slp --check` in a child process with the YAML
    // deadline: a hang must cost a killed child, not the event loop that serves every request.
    if (m_reloadCheck) {
        qCInfo(lcConfig) << "reload: a reload is already being checked; another follows it";
        m_reloadAgain = true; // the file may have changed since the child read it
        return;
    }
    m_notifier.reloading();
    m_reloadCheck = new ConfigCheck(m_configPath, this);
    connect(m_reloadCheck, &ConfigCheck::finished, this,
            [this](bool ok, const QStringList &errors, bool timedOut) {
                std::exchange(m_reloadCheck, nullptr)->deleteLater();
                if (ok)
                    applyReload();
                else if (timedOut)
                    reloadFailed(yamlDeadlineMessage(m_configPath), {});
                else
                    reloadFailed(
                        QStringLiteral("%1 has %2 error(s)").arg(m_configPath).arg(errors.size()),
                        errors);
                reloadDone();
            });
    m_reloadCheck->start();
}

void Daemon::reloadFailed(const QString &summary, const QStringList &details)
{
    qCWarning(lcConfig).noquote()
        << QStringLiteral("reload: %1; still serving the previous config").arg(summary);
    for (const QString &line : details)
        qCWarning(lcConfig).noquote() << QStringLiteral("reload: ") + line;
    m_reloadFailure = summary;
}

void Daemon::reloadDone()
{
    m_notifier.ready(statusLine());
    if (std::exchange(m_reloadAgain, false))
        reload();
}

void Daemon::applyReload()
{
    ConfigResult result = m_loader();
    if (const auto *errors = std::get_if<QList<ConfigError>>(&result)) {
        QStringList lines;
        for (const ConfigError &e : *errors)
            lines << e.toString();
        reloadFailed(QStringLiteral("%1 has %2 error(s)").arg(m_configPath).arg(errors->size()),
                     lines);
        return;
    }
    QStringList supervised;
    for (const DiscoverySupervisor *supervisor : std::as_const(m_supervisors))
        supervised << m_table->route(supervisor->routeIndex()).id;
    ReloadPlan plan = planReload(m_config, std::get<Config>(std::move(result)), supervised);
    for (const QString &warning : std::as_const(plan.warnings))
        qCWarning(lcConfig).noquote() << QStringLiteral("reload: ") + warning;
    for (const QString &id : std::as_const(plan.goneRoutes)) {
        // A gone route must not keep an alert firing.
        m_metrics.remove(metric::consecutiveFailures, metric::modelLabels(id));
    }
    for (const QString &id : std::as_const(plan.unprobedRoutes))
        m_metrics.remove(metric::modelAmbiguous, metric::modelLabels(id));
    auto table = std::make_unique<RouteTable>(plan.config);
    // Kept supervisors carry what they learned into the new table; the others stop.
    QList<DiscoverySupervisor *> kept;
    for (DiscoverySupervisor *supervisor : std::as_const(m_supervisors)) {
        const QString id = m_table->route(supervisor->routeIndex()).id;
        if (const auto it = plan.keptSupervisors.constFind(id); it != plan.keptSupervisors.cend()) {
            table->discovery(*it) = supervisor->state();
            supervisor->rebind(*it);
            kept.append(supervisor);
        } else {
            delete supervisor; // aborts its probe, if one is running
        }
    }
    m_supervisors = kept;
    Config next = std::move(plan.config);

    // Swap between requests: the event loop runs one thing at a time, and every request in
    // flight carries its own copy of what it needs from its route.
    m_config = std::move(next);
    m_table = std::move(table);
    publishTable();
    const WorkerSettings settings = workerSettings();
    onEveryWorker([&settings](ServingWorker *worker) { worker->applySettings(settings); });
    if (m_discoveryNetwork)
        for (const qsizetype index : std::as_const(plan.newSupervisors))
            startSupervisor(index);
    refreshModelInfo();
    m_reloadFailure.clear();
    updateConfigWatch();
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
        const PromLabels route = metric::modelLabels(m_table->route(i).id);
        m_metrics.add(metric::consecutiveFailures, route, 0);
        m_metrics.add(metric::routeInflight, route, 0);
        // The stream counters of routes that set their key (adding 0 keeps a running value).
        if (m_table->route(i).streamIdleTimeout.count() > 0)
            m_metrics.add(metric::streamIdleTimeouts, route, 0);
        if (m_table->route(i).sseKeepalive.count() > 0)
            m_metrics.add(metric::sseKeepalives, route, 0);
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
    m_notifier.stopping(QStringLiteral("draining %1 in-flight requests").arg(m_exchanges.count()));
    // Stop accepting: with a socket from systemd new connections wait in its queue for the
    // next slp; without one the kernel refuses them.
    onEveryWorker([](ServingWorker *worker) { worker->stopAccepting(); });
    qCInfo(lcServer).noquote() << QStringLiteral(
                                      "signal %1: draining in-flight requests for up to %2")
                                      .arg(signal)
                                      .arg(formatGoDuration(m_config.shutdownGrace));
    // Exchanges count themselves on their worker threads; the last one to end says so.
    connect(&m_exchanges, &ExchangeCounter::drained, this, &Daemon::checkDrained,
            Qt::QueuedConnection);
    m_drainGrace.setSingleShot(true);
    connect(&m_drainGrace, &QTimer::timeout, this, [this] {
        qCWarning(lcServer).noquote()
            << QStringLiteral("shutdown grace over: cutting %1 in-flight requests")
                   .arg(m_exchanges.count());
        Q_EMIT finished(0);
    });
    m_drainGrace.start(toMs(m_config.shutdownGrace));
    // Then close kept-alive connections once they owe nothing (a proxy in front must not keep
    // sending new requests here), but only after a moment: a request already sent on a
    // connection accepted just before the signal is read first, so its client gets an answer
    // instead of a closed connection (a restart under a request loop lost about 1 in 400).
    QTimer::singleShot(std::min(kDrainSettle, toMs(m_config.shutdownGrace)), this,
                       &Daemon::closeConnections);
}

void Daemon::closeConnections()
{
    int unread = 0;
    onEveryWorker([&unread](ServingWorker *worker) { unread += worker->closeConnections(); });
    if (unread > 0 && m_drainGrace.isActive()) {
        // Requests that arrived but are not read yet (a loaded machine): read them first.
        QTimer::singleShot(kDrainSettle / 4, this, &Daemon::closeConnections);
        return;
    }
    m_settled = true;
    checkDrained();
}

void Daemon::checkDrained()
{
    if (!m_settled || m_exchanges.count() > 0 || !m_drainGrace.isActive())
        return; // reading what was sent, still in flight (the last one reports), or over
    m_drainGrace.stop();
    qCInfo(lcServer) << "drained; exiting";
    Q_EMIT finished(0);
}

} // namespace slp
