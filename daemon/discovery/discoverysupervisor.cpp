// SPDX-License-Identifier: GPL-3.0-or-later
#include "discovery/discoverysupervisor.h"

#include "observe/logging.h"
#include "observe/metrics.h"

#include <QDateTime>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

namespace slp {

namespace {
constexpr qint64 kMaxCatalogBytes = 4 * 1024 * 1024; // a model list, not a download

std::chrono::milliseconds ms(std::chrono::nanoseconds d)
{
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(d));
}

QString resultLabel(ProbeResult result)
{
    switch (result) {
    case ProbeResult::Ok:
        return QStringLiteral("ok");
    case ProbeResult::Ambiguous:
        return QStringLiteral("ambiguous");
    case ProbeResult::Error:
        return QStringLiteral("error");
    }
    return {};
}
} // namespace

DiscoverySupervisor::DiscoverySupervisor(const Route &route, qsizetype routeIndex,
                                         const DiscoverySettings &settings,
                                         QNetworkAccessManager *network, MetricsRegistry &metrics,
                                         QObject *parent)
    : QObject(parent), m_index(routeIndex), m_id(route.id),
      m_url(route.origin + QStringLiteral("/v1/models")), m_settings(settings), m_network(network),
      m_metrics(metrics), m_schedule(settings.backoffInitial, settings.backoffMax, settings.recheck)
{
    m_nextProbe.setSingleShot(true);
    m_probeTimeout.setSingleShot(true);
    connect(&m_nextProbe, &QTimer::timeout, this, &DiscoverySupervisor::probe);
    connect(&m_probeTimeout, &QTimer::timeout, this, &DiscoverySupervisor::onProbeTimeout);
    m_metrics.set(metric::modelAmbiguous, metric::modelLabels(m_id), 0);
}

DiscoverySupervisor::~DiscoverySupervisor()
{
    if (m_reply) {
        m_reply->disconnect(this);
        m_reply->abort();
        m_reply->deleteLater();
    }
}

void DiscoverySupervisor::start()
{
    m_nextProbe.start(0); // from the event loop: never ahead of the listener or a request
}

void DiscoverySupervisor::probe()
{
    if (!m_network) {
        return;
    }
    QNetworkRequest request{QUrl(m_url)};
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    request.setAttribute(QNetworkRequest::CacheLoadControlAttribute,
                         QNetworkRequest::AlwaysNetwork);
    request.setAttribute(QNetworkRequest::CacheSaveControlAttribute, false);
    request.setAttribute(QNetworkRequest::CookieLoadControlAttribute, QNetworkRequest::Manual);
    request.setAttribute(QNetworkRequest::CookieSaveControlAttribute, QNetworkRequest::Manual);
    request.setRawHeader("Accept", "application/json");
    request.setRawHeader("User-Agent", "slp-discovery/" SLP_VERSION);
    m_timedOut = false;
    m_reply = m_network->get(request);
    connect(m_reply, &QNetworkReply::finished, this, &DiscoverySupervisor::onProbeFinished);
    connect(m_reply, &QNetworkReply::downloadProgress, this, [this](qint64 received, qint64) {
        if (received > kMaxCatalogBytes && m_reply) {
            m_reply->abort();
        }
    });
    m_probeTimeout.start(ms(m_settings.probeTimeout));
}

void DiscoverySupervisor::onProbeTimeout()
{
    if (m_reply && m_reply->isRunning()) {
        m_timedOut = true;
        m_reply->abort();
    }
}

void DiscoverySupervisor::onProbeFinished()
{
    m_probeTimeout.stop();
    QNetworkReply *reply = m_reply;
    m_reply = nullptr;
    if (!reply) {
        return;
    }
    reply->deleteLater();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (m_timedOut) {
        return settle(
            ProbeResult::Error,
            QStringLiteral("no answer within %1").arg(formatGoDuration(m_settings.probeTimeout)));
    }
    if (reply->error() != QNetworkReply::NoError && status == 0) {
        return settle(ProbeResult::Error, reply->errorString());
    }
    if (status != 200) {
        return settle(ProbeResult::Error, QStringLiteral("HTTP status %1").arg(status));
    }
    const QByteArray body = reply->readAll();
    if (body.size() > kMaxCatalogBytes) {
        return settle(ProbeResult::Error, QStringLiteral("model list larger than 4 MiB"));
    }
    const ModelList list = parseModelList(body);
    if (!list.ok) {
        return settle(ProbeResult::Error, list.error);
    }

    DiscoveryState &state = m_state;
    if (list.ids.size() != 1) {
        const QString tail =
            state.name.isEmpty()
                ? QStringLiteral("; no known name, forwarding \"%1\" unchanged").arg(m_id)
                : QStringLiteral("; keeping last known name \"%1\" -- requests may be routed to "
                                 "a stale model")
                      .arg(state.name);
        qCWarning(lcDiscovery).noquote()
            << QStringLiteral("discovery: WARNING: %1: backend serves %2 models [%3], expected "
                              "exactly 1")
                       .arg(m_id)
                       .arg(list.ids.size())
                       .arg(list.ids.join(QLatin1Char(' '))) +
                   tail;
        state.ambiguous = true;
        m_metrics.set(metric::modelAmbiguous, metric::modelLabels(m_id), 1);
        return settle(ProbeResult::Ambiguous, {});
    }

    const QString name = list.ids.first();
    if (state.ambiguous) {
        qCInfo(lcDiscovery).noquote()
            << QStringLiteral("discovery: %1: backend serves exactly one model again: \"%2\"")
                   .arg(m_id, name);
    }
    state.ambiguous = false;
    m_metrics.set(metric::modelAmbiguous, metric::modelLabels(m_id), 0);
    if (state.name != name) {
        if (state.name.isEmpty()) {
            qCInfo(lcDiscovery).noquote()
                << QStringLiteral(
                       "discovery: %1: backend serves \"%2\"; requests are renamed to it")
                       .arg(m_id, name);
        } else {
            qCWarning(lcDiscovery).noquote()
                << QStringLiteral("discovery: %1: upstream model changed from \"%2\" to \"%3\"; "
                                  "the rewrite follows")
                       .arg(m_id, state.name, name);
            m_metrics.add(metric::modelChanges, metric::modelLabels(m_id));
        }
        state.name = name; // workers see it in the snapshot the daemon publishes on report
        m_nameChanged = true;
    }
    settle(ProbeResult::Ok, {});
}

void DiscoverySupervisor::settle(ProbeResult result, const QString &detail)
{
    DiscoveryState &state = m_state;
    state.lastProbe = resultLabel(result);
    state.lastProbeAt = QDateTime::currentDateTimeUtc();
    m_metrics.add(metric::discoveryProbes, {{QStringLiteral("model_id"), m_id},
                                            {QStringLiteral("result"), state.lastProbe}});
    const std::chrono::nanoseconds wait = m_schedule.next(result);
    if (result == ProbeResult::Error) {
        const QString keeping = state.name.isEmpty()
                                    ? QStringLiteral("forwarding \"%1\" unchanged").arg(m_id)
                                    : QStringLiteral("keeping \"%1\"").arg(state.name);
        qCWarning(lcDiscovery).noquote()
            << QStringLiteral("discovery: %1: probe GET \"%2\" failed: %3; %4; next probe in %5")
                   .arg(m_id, m_url, detail, keeping, formatGoDuration(wait));
    }
    m_nextProbe.start(ms(wait));
    Q_EMIT reported(m_index, std::exchange(m_nameChanged, false));
}

} // namespace slp
