// SPDX-License-Identifier: GPL-3.0-or-later
#include "discovery/discoverysupervisor.h"

#include "discovery/unixprobe.h"
#include "observe/logging.h"
#include "observe/metrics.h"

#include <QDateTime>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace slp {

namespace {
constexpr qint64 kProbeReadBuffer = 64 * 1024; // what QNAM reads ahead of the probe
// A probe that read this much leaves freed memory in glibc's arenas (QNAM's thread and the
// parse thread have arenas of their own, and the heap's top rarely comes free): it goes back
// to the system once the reply and its connection are gone.
constexpr qint64 kTrimAfterBytes = 1024 * 1024;
constexpr std::chrono::milliseconds kTrimDelay{200};

void returnFreedMemory()
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

// A model id for a log line: quoted and escaped, whatever the backend put in it.
QString quotedName(const QString &name)
{
    return quoteForLog(name.toUtf8(), int(kMaxModelIdBytes));
}

// In the ambiguous list, a plain id stands bare as it always did; anything else is quoted.
QString listedName(const QString &name)
{
    for (const QChar c : name)
        if (c.unicode() <= 0x20 || c.unicode() >= 0x7f || c == QLatin1Char('"') ||
            c == QLatin1Char('\\'))
            return quotedName(name);
    return name;
}

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
    connect(&m_parser, &ModelListParser::parsed, this, &DiscoverySupervisor::onParsed);
    m_metrics.set(metric::modelAmbiguous, metric::modelLabels(m_id), 0);
    if (route.origin.startsWith(QLatin1String("unix:")))
        m_unixPath = route.origin.mid(5);
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
    if (!m_unixPath.isEmpty())
        return probeUnix();
    if (!m_network)
        return;
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
    m_overLimit = false;
    m_body.clear();
    m_reply = m_network->get(request);
    // QNAM stops reading the socket while this much is unread: what a probe holds is bounded
    // by the limit plus this, however fast the backend sends.
    m_reply->setReadBufferSize(kProbeReadBuffer);
    connect(m_reply, &QNetworkReply::metaDataChanged, this, &DiscoverySupervisor::onProbeHead);
    connect(m_reply, &QNetworkReply::readyRead, this, &DiscoverySupervisor::onProbeData);
    connect(m_reply, &QNetworkReply::finished, this, &DiscoverySupervisor::onProbeFinished);
    m_probeTimeout.start(ms(m_settings.probeTimeout));
}

void DiscoverySupervisor::onProbeHead()
{
    // A declared length past the limit is refused before its first byte is read.
    const QVariant length = m_reply->header(QNetworkRequest::ContentLengthHeader);
    if (length.isValid() && length.toLongLong() > kMaxModelListBytes && m_reply->isRunning()) {
        m_overLimit = true;
        m_reply->abort(); // emits finished() synchronously
    }
}

void DiscoverySupervisor::onProbeData()
{
    if (!m_reply)
        return;
    m_body += m_reply->read(kMaxModelListBytes + 1 - m_body.size());
    if (m_body.size() > kMaxModelListBytes && m_reply->isRunning()) {
        m_overLimit = true;
        m_reply->abort(); // emits finished() synchronously
    }
}

void DiscoverySupervisor::probeUnix()
{
    m_timedOut = false;
    m_overLimit = false;
    m_body.clear();
    m_unixProbe = new UnixProbe(this); // deleted once it finished (onUnixProbeFinished)
    connect(m_unixProbe, &UnixProbe::finished, this, &DiscoverySupervisor::onUnixProbeFinished);
    m_unixProbe->start(m_unixPath, QByteArrayLiteral("slp-discovery/" SLP_VERSION));
    m_probeTimeout.start(ms(m_settings.probeTimeout));
}

void DiscoverySupervisor::onUnixProbeFinished()
{
    m_probeTimeout.stop();
    UnixProbe *probe = m_unixProbe;
    m_unixProbe = nullptr;
    if (!probe)
        return;
    probe->deleteLater();
    QString failure = probe->failure();
    if (failure.isEmpty() && probe->status() != 200)
        failure = QStringLiteral("HTTP status %1").arg(probe->status());
    if (!failure.isEmpty())
        return settle(ProbeResult::Error, failure);
    m_body = probe->takeBody();
    m_bodyBytesRead = m_body.size();
    if (m_body.size() > kMaxModelListBytes) {
        m_body = QByteArray();
        return settle(ProbeResult::Error,
                      QStringLiteral("model list larger than %1 bytes: stopped reading")
                          .arg(kMaxModelListBytes));
    }
    m_parser.parse(std::exchange(m_body, QByteArray())); // onParsed settles the probe
}

void DiscoverySupervisor::onProbeTimeout()
{
    if (m_unixProbe) {
        m_unixProbe->abort(); // says nothing more: settled here
        m_unixProbe->deleteLater();
        m_unixProbe = nullptr;
        return settle(
            ProbeResult::Error,
            QStringLiteral("no answer within %1").arg(formatGoDuration(m_settings.probeTimeout)));
    }
    if (m_reply && m_reply->isRunning()) {
        m_timedOut = true;
        m_reply->abort();
    }
}

QString DiscoverySupervisor::probeFailure(QNetworkReply *reply) const
{
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (m_timedOut)
        return QStringLiteral("no answer within %1").arg(formatGoDuration(m_settings.probeTimeout));
    if (m_overLimit || m_body.size() > kMaxModelListBytes) {
        return QStringLiteral("model list larger than %1 bytes: stopped reading")
            .arg(kMaxModelListBytes);
    }
    if (reply->error() != QNetworkReply::NoError && status == 0)
        return reply->errorString();
    if (status != 200)
        return QStringLiteral("HTTP status %1").arg(status);
    return {};
}

void DiscoverySupervisor::onProbeFinished()
{
    m_probeTimeout.stop();
    QNetworkReply *reply = m_reply;
    m_reply = nullptr;
    if (!reply)
        return;
    reply->deleteLater();
    if (!m_overLimit && !m_timedOut)
        m_body += reply->read(kMaxModelListBytes + 1 - m_body.size());
    m_bodyBytesRead = m_body.size();
    const QString failure = probeFailure(reply);
    if (!failure.isEmpty()) {
        m_body = QByteArray();
        return settle(ProbeResult::Error, failure);
    }
    m_parser.parse(std::exchange(m_body, QByteArray())); // onParsed settles the probe
}

void DiscoverySupervisor::onParsed(const ModelList &list)
{
    if (!list.ok)
        return settle(ProbeResult::Error, list.error);
    if (list.count != 1) {
        reportAmbiguous(list.ids, list.count);
        return settle(ProbeResult::Ambiguous, {});
    }
    adopt(list.ids.first());
    settle(ProbeResult::Ok, {});
}

void DiscoverySupervisor::reportAmbiguous(const QStringList &ids, qsizetype count)
{
    const QString tail =
        m_state.name.isEmpty()
            ? QStringLiteral("; no known name, forwarding \"%1\" unchanged").arg(m_id)
            : QStringLiteral("; keeping last known name %1 -- requests may be routed to "
                             "a stale model")
                  .arg(quotedName(m_state.name));
    QStringList shown;
    shown.reserve(std::min<qsizetype>(ids.size(), kMaxIdsReported));
    for (qsizetype i = 0; i < ids.size() && i < kMaxIdsReported; ++i)
        shown << listedName(ids.at(i));
    if (count > shown.size())
        shown << QStringLiteral("...");
    qCWarning(lcDiscovery).noquote()
        << QStringLiteral("discovery: WARNING: %1: backend serves %2 models [%3], expected "
                          "exactly 1")
                   .arg(m_id)
                   .arg(count)
                   .arg(shown.join(QLatin1Char(' '))) +
               tail;
    m_state.ambiguous = true;
    m_metrics.set(metric::modelAmbiguous, metric::modelLabels(m_id), 1);
}

void DiscoverySupervisor::adopt(const QString &name)
{
    DiscoveryState &state = m_state;
    if (state.ambiguous) {
        qCInfo(lcDiscovery).noquote()
            << QStringLiteral("discovery: %1: backend serves exactly one model again: %2")
                   .arg(m_id, quotedName(name));
    }
    state.ambiguous = false;
    m_metrics.set(metric::modelAmbiguous, metric::modelLabels(m_id), 0);
    if (state.name == name)
        return;
    if (state.name.isEmpty()) {
        qCInfo(lcDiscovery).noquote()
            << QStringLiteral("discovery: %1: backend serves %2; requests are renamed to it")
                   .arg(m_id, quotedName(name));
    } else {
        qCWarning(lcDiscovery).noquote()
            << QStringLiteral("discovery: %1: upstream model changed from %2 to %3; "
                              "the rewrite follows")
                   .arg(m_id, quotedName(state.name), quotedName(name));
        m_metrics.add(metric::modelChanges, metric::modelLabels(m_id));
    }
    state.name = name; // workers see it in the snapshot the daemon publishes on report
    m_nameChanged = true;
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
                                    : QStringLiteral("keeping %1").arg(quotedName(state.name));
        qCWarning(lcDiscovery).noquote()
            << QStringLiteral("discovery: %1: probe GET \"%2\" failed: %3; %4; next probe in %5")
                   .arg(m_id, m_url, detail, keeping, formatGoDuration(wait));
    }
    m_nextProbe.start(ms(wait));
    if (std::exchange(m_bodyBytesRead, 0) >= kTrimAfterBytes)
        QTimer::singleShot(kTrimDelay, this, &returnFreedMemory);
    Q_EMIT reported(m_index, std::exchange(m_nameChanged, false));
}

} // namespace slp
