#include "server/daemon.h"

#include "discovery/discoverysupervisor.h"
#include "observe/logging.h"
#include "proxy/qnamtransport.h"
#include "proxy/requestrouter.h"
#include "proxy/routetable.h"
#include "proxy/sockettransport.h"
#include "server/clientconnection.h"
#include "server/httpfront.h"
#include "server/signalwatcher.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QProcess>
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
} // namespace

Daemon::Daemon(Config config, QString configPath, ConfigLoader loader, QObject *parent)
    : QObject(parent), m_config(std::move(config)), m_configPath(std::move(configPath)),
      m_loader(std::move(loader)), m_startedAt(QDateTime::currentSecsSinceEpoch())
{
    declareSlpMetrics(m_metrics);
    m_table = std::make_unique<RouteTable>(m_config);
    if (m_config.upstreamTransport == QLatin1String("socket")) {
        m_transport = std::make_unique<SocketTransport>(m_config.maxUpstreamConnections);
    } else {
        m_transport = std::make_unique<QnamTransport>(m_config.maxUpstreamConnections);
    }
    RouterOptions options;
    options.logRequests = m_config.logRequests;
    options.maxBodyBytes = m_config.maxBodyBytes;
    options.startedAt = m_startedAt;
    m_router = std::make_unique<RequestRouter>(m_table.get(), *m_transport, m_metrics, options);
    m_front =
        new HttpFront([this](InboundRequest request,
                             ResponseSlot *slot) { m_router->handle(std::move(request), slot); },
                      this);
    m_signals = new SignalWatcher(this);
    connect(m_signals, &SignalWatcher::terminateRequested, this, &Daemon::beginShutdown);
    connect(m_signals, &SignalWatcher::reloadRequested, this, &Daemon::reload);
    refreshModelInfo();
}

Daemon::~Daemon()
{
    // The front (and with it every connection and exchange) goes before the transport the
    // exchanges point into.
    delete m_front;
    m_front = nullptr;
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
    auto *listener = new ClientListener(limitsOf(m_config), m_config.maxConnections, this);
    // Qt's default backlog of 50 drops SYNs in a burst of new clients (a 1 s retry each).
    listener->setListenBacklogSize(4096);
    if (!listener->listen(m_config.listen.host, m_config.listen.port)) {
        *error = QStringLiteral("cannot listen on %1: %2")
                     .arg(m_config.listen.text, listener->errorString());
        delete listener;
        return false;
    }
    connect(listener, &ClientListener::connectionCountChanged, this,
            [this](int open) { m_metrics.set(metric::clientConnections, {}, open); });
    // Requests refused before their body was read (413, 400, 408, ...) carry no model id.
    connect(listener, &ClientListener::requestRejected, this, [this](int status) {
        m_metrics.add(metric::requestsTotal,
                      {{QStringLiteral("model_id"), QStringLiteral("unknown")},
                       {QStringLiteral("code"), QString::number(status)}});
    });
    m_front->bind(listener);
    m_listener = listener;
    QString host = listener->serverAddress().toString();
    if (listener->serverAddress().protocol() == QAbstractSocket::IPv6Protocol) {
        host = QLatin1Char('[') + host + QLatin1Char(']');
    }
    qCInfo(lcServer).noquote()
        << QStringLiteral("listening on %1:%2").arg(host).arg(listener->serverPort());
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
    auto *supervisor = new DiscoverySupervisor(m_table.get(), routeIndex, m_config.discovery,
                                               m_discoveryNetwork, m_metrics, this);
    connect(supervisor, &DiscoverySupervisor::nameChanged, this, &Daemon::refreshModelInfo);
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

    auto table = std::make_unique<RouteTable>(next);
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
            table->discovery(index) = m_table->discovery(supervisor->routeIndex());
            supervisor->rebind(table.get(), index);
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
    m_router->setTable(m_table.get());
    RouterOptions options;
    options.logRequests = m_config.logRequests;
    options.maxBodyBytes = m_config.maxBodyBytes;
    options.startedAt = m_startedAt;
    m_router->setOptions(options);
    if (m_listener) {
        m_listener->setLimits(limitsOf(m_config)); // new connections get the new limits
    }
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
    if (m_listener) {
        // Stop accepting (the kernel refuses new connections) and close kept-alive connections
        // once they owe nothing: a proxy in front must not keep sending new requests here.
        m_listener->beginShutdown();
    }
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
