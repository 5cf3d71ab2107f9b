// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/daemon.h"

#include "app/reloadplan.h"
#include "app/signalwatcher.h"
#include "discovery/discoverysupervisor.h"
#include "observe/logging.h"
#include "routing/requestrouter.h"
#include "routing/routetable.h"

#include <QDateTime>

namespace slp {

namespace {
std::chrono::milliseconds toMs(Nanoseconds d)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

// `bodies` is the daemon's: every worker's connections take from the one budget.
ConnectionSettings connectionSettingsOf(const Config &config, BodyBudget *bodies)
{
    ConnectionSettings settings;
    settings.head.maxHeaderBytes = config.maxHeaderBytes;
    settings.head.maxBodyBytes = config.maxBodyBytes;
    settings.headerTimeout = toMs(config.headerTimeout);
    settings.idleTimeout = toMs(config.idleTimeout);
    settings.bodies = bodies;
    settings.scanModel = &RequestRouter::scanFor; // the model scan runs as the body arrives
    return settings;
}

// One worker's share of a per-process limit, never below one.
int shareOf(int total, int workers)
{
    return std::max(1, int((qint64(total) + workers - 1) / workers));
}
} // namespace

Daemon::Daemon(Config config, QString configPath, ConfigLoader loader, QObject *parent)
    : QObject(parent), m_config(std::move(config)), m_loader(std::move(loader)),
      m_startedAt(QDateTime::currentSecsSinceEpoch()), m_connections(m_config.maxConnections),
      m_pool(WorkerShared{m_metrics, m_connections, m_exchanges, m_health}),
      m_reload(std::move(configPath)),
      m_service([this] { return statusLine(); },
                [this] { return !m_drain.isRunning() && !m_reload.isRunning(); })
{
    declareSlpMetrics(m_metrics);
    m_bodies.setMetrics(&m_metrics);
    applyBodyLimit();
    m_table = std::make_unique<RouteTable>(m_config);
    m_signals = new SignalWatcher(this);
    connect(m_signals, &SignalWatcher::terminateRequested, this, &Daemon::beginShutdown);
    connect(m_signals, &SignalWatcher::reloadRequested, this, &Daemon::reload);
    connect(&m_reload, &ReloadCheck::started, &m_service, &ServiceStatus::reloading);
    connect(&m_reload, &ReloadCheck::passed, this, &Daemon::applyReload);
    connect(&m_reload, &ReloadCheck::failed, this, &Daemon::reloadFailed);
    connect(&m_reload, &ReloadCheck::done, &m_service, &ServiceStatus::ready);
    connect(&m_drain, &Drain::finished, this, [this] { Q_EMIT finished(0); });
    refreshModelInfo();
}

Daemon::~Daemon()
{
    m_pool.stop();
    // Before the transport their probes run on (a member, gone before Qt children are).
    qDeleteAll(std::exchange(m_supervisors, {}));
}

void Daemon::applyBodyLimit()
{
    m_bodies.setLimit(m_config.maxBufferedBodyBytes > 0 ? m_config.maxBufferedBodyBytes
                                                        : BodyBudget::defaultLimit());
}

WorkerSettings Daemon::workerSettings()
{
    WorkerSettings settings;
    const int workers = m_config.workers;
    settings.transport = m_config.upstreamTransport;
    // Each worker has pools of its own: the per-origin limit is split between them.
    settings.maxUpstreamConnections = shareOf(m_config.maxUpstreamConnections, workers);
    settings.connections = connectionSettingsOf(m_config, &m_bodies);
    settings.options.logRequests = m_config.logRequests;
    settings.options.maxAnswerBytes = m_config.maxBodyBytes;
    settings.options.startedAt = m_startedAt;
    return settings;
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
    m_pool.publish(snapshot);
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
                     .arg(m_reload.configPath()));
    if (!m_pool.start(m_config, workerSettings(), std::make_shared<const RouteTable>(*m_table),
                      error))
        return false; // ~Daemon stops the workers already started
    startDiscovery();
    m_reload.watch(m_config.watchConfig);
    // Config compiled, every listener accepting, each worker holding the first table.
    m_service.ready();
    m_service.startWatching(m_pool);
    return true;
}

void Daemon::startDiscovery()
{
    for (qsizetype i = 0; i < m_table->size(); ++i)
        if (m_table->route(i).nameSource == NameSource::Discover)
            startSupervisor(i); // pinned backends and editions are never probed
}

void Daemon::startSupervisor(qsizetype routeIndex)
{
    auto *supervisor =
        new DiscoverySupervisor(m_table->route(routeIndex), routeIndex, m_config.discovery,
                                m_discoveryTransport, m_metrics, this);
    // Discovery reports; the daemon applies what it learned and publishes the new snapshot.
    connect(supervisor, &DiscoverySupervisor::reported, this,
            [this, supervisor](qsizetype index, bool nameChanged) {
                m_table->discovery(index) = supervisor->state();
                publishTable();
                if (nameChanged)
                    refreshModelInfo();
                m_service.refresh();
            });
    m_supervisors.append(supervisor);
    supervisor->start();
}

void Daemon::reload()
{
    // The new file is first compiled by `slp --check` in a child process with the YAML
    // deadline: a hang must cost a killed child, not the event loop that serves every request.
    m_reload.request();
}

void Daemon::reloadFailed(const QString &summary, const QStringList &details)
{
    qCWarning(lcConfig).noquote()
        << QStringLiteral("reload: %1; still serving the previous config").arg(summary);
    for (const QString &line : details)
        qCWarning(lcConfig).noquote() << QStringLiteral("reload: ") + line;
    m_service.setReloadFailure(summary);
}

void Daemon::applyReload()
{
    ConfigResult result = m_loader();
    if (const auto *errors = std::get_if<QList<ConfigError>>(&result)) {
        QStringList lines;
        for (const ConfigError &e : *errors)
            lines << e.toString();
        reloadFailed(
            QStringLiteral("%1 has %2 error(s)").arg(m_reload.configPath()).arg(errors->size()),
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
    applyBodyLimit();
    m_pool.applySettings(workerSettings());
    for (const qsizetype index : std::as_const(plan.newSupervisors))
        startSupervisor(index);
    refreshModelInfo();
    m_service.setReloadFailure({});
    m_reload.watch(m_config.watchConfig);
    logRouteDump(QStringLiteral("reload: %1 routes from %2")
                     .arg(m_config.routes.size())
                     .arg(m_reload.configPath()));
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
    if (m_drain.isRunning()) {
        qCInfo(lcServer) << "second signal: exiting now";
        Q_EMIT finished(0);
        return;
    }
    m_service.stopping(QStringLiteral("draining %1 in-flight requests").arg(m_exchanges.count()));
    m_drain.begin(signal, toMs(m_config.shutdownGrace), formatGoDuration(m_config.shutdownGrace));
}

QString Daemon::statusLine() const
{
    qsizetype ambiguous = 0;
    qsizetype failing = 0;
    qsizetype stalled = 0;
    for (qsizetype i = 0; i < m_table->size(); ++i) {
        const DiscoveryState &state = m_table->discovery(i);
        ambiguous += state.ambiguous ? 1 : 0;
        // Failing: its last probe failed, or its last forwarded requests did.
        const double failures =
            m_metrics.value(metric::consecutiveFailures, metric::modelLabels(m_table->route(i).id));
        failing += state.lastProbe == QLatin1String("error") || failures > 0 ? 1 : 0;
        stalled += m_health.state(m_table->route(i).id) == RouteState::Stalled ? 1 : 0;
    }
    return serviceStatusLine(m_table->size(), ambiguous, failing, stalled,
                             m_service.reloadFailure());
}

} // namespace slp
