#include "server/daemon.h"

#include "discovery/discoverysupervisor.h"
#include "observe/logging.h"
#include "proxy/qnamtransport.h"
#include "proxy/requestrouter.h"
#include "proxy/routetable.h"
#include "server/clientconnection.h"
#include "server/httpfront.h"
#include "server/signalwatcher.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
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

Daemon::Daemon(Config config, QString configPath, QObject *parent)
    : QObject(parent)
    , m_config(std::move(config))
    , m_configPath(std::move(configPath))
{
    declareSlpMetrics(m_metrics);
    m_table = std::make_unique<RouteTable>(m_config);
    m_transport = std::make_unique<QnamTransport>(m_config.maxUpstreamConnections);
    RouterOptions options;
    options.logRequests = m_config.logRequests;
    options.maxBodyBytes = m_config.maxBodyBytes;
    options.startedAt = QDateTime::currentSecsSinceEpoch();
    m_router = std::make_unique<RequestRouter>(m_table.get(), *m_transport, m_metrics, options);
    m_front = new HttpFront(
        [this](InboundRequest request, ResponseSlot *slot) {
            m_router->handle(std::move(request), slot);
        },
        this);
    m_signals = new SignalWatcher(this);
    connect(m_signals, &SignalWatcher::terminateRequested, this, &Daemon::beginShutdown);
    connect(m_signals, &SignalWatcher::reloadRequested, this, [] {
        qCWarning(lcServer) << "SIGHUP: config reload is not implemented yet; restart to apply";
    });
    refreshModelInfo();
}

Daemon::~Daemon()
{
    // The front (and with it every connection and exchange) goes before the transport the
    // exchanges point into.
    delete m_front;
    m_front = nullptr;
}

bool Daemon::start(QString *error)
{
    int width = 0;
    for (const Route &r : m_config.routes) {
        width = std::max(width, int(r.id.size()));
    }
    qCInfo(lcServer).noquote() << QStringLiteral("slp %1: %2 routes from %3")
                                      .arg(QStringLiteral(SLP_VERSION))
                                      .arg(m_config.routes.size())
                                      .arg(m_configPath);
    for (qsizetype i = 0; i < m_config.routes.size(); ++i) {
        qCInfo(lcServer).noquote() << routeDumpLine(m_config, int(i), width);
    }

    auto *listener = new ClientListener(limitsOf(m_config), m_config.maxConnections, this);
    if (!listener->listen(m_config.listen.host, m_config.listen.port)) {
        *error = QStringLiteral("cannot listen on %1: %2")
                     .arg(m_config.listen.text, listener->errorString());
        delete listener;
        return false;
    }
    connect(listener, &ClientListener::connectionCountChanged, this, [this](int open) {
        m_metrics.set(metric::clientConnections, {}, open);
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
        if (m_table->route(i).nameSource != NameSource::Discover) {
            continue; // pinned backends and editions are never probed
        }
        auto *supervisor = new DiscoverySupervisor(m_table.get(), i, m_config.discovery,
                                                   m_discoveryNetwork, m_metrics, this);
        connect(supervisor, &DiscoverySupervisor::nameChanged, this, &Daemon::refreshModelInfo);
        m_supervisors.append(supervisor);
        supervisor->start();
    }
}

void Daemon::refreshModelInfo()
{
    // slp_upstream_model_info carries the live mapping in its labels: rebuilt whole, so a
    // renamed model never leaves its old series behind.
    m_metrics.removeMatching(metric::modelInfo, {});
    for (qsizetype i = 0; i < m_table->size(); ++i) {
        const QString label = m_table->discoveryLabel(i);
        if (label == QLatin1String("pending") || label == QLatin1String("passthrough")) {
            continue;
        }
        m_metrics.set(metric::modelInfo,
                      {{QStringLiteral("model_id"), m_table->route(i).id},
                       {QStringLiteral("upstream_model"), m_table->upstreamModel(i)}},
                      1);
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
        m_listener->close(); // stop accepting; the kernel refuses new connections
    }
    qCInfo(lcServer).noquote() << QStringLiteral("signal %1: draining in-flight requests for up to %2")
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
