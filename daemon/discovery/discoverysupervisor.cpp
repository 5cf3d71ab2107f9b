// SPDX-License-Identifier: GPL-3.0-or-later
#include "discovery/discoverysupervisor.h"

#include "discovery/modelprobe.h"
#include "observe/logging.h"
#include "observe/metrics.h"
#include "wire/http1.h"

#include <QDateTime>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace slp {

namespace {
// A probe that read this much leaves freed memory in glibc's arenas (the parse thread has an
// arena of its own, and the heap's top rarely comes free): it goes back to the system once the
// probe and its connection are gone.
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

// In the ambiguous list a plain id stands bare, as the contract's `[a b]` shows it; anything
// that could break the line or the list (space, quote, control, non-ASCII) is quoted.
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

// GET /v1/models, as every probe of the route sends it: with the route's headers: (a key),
// which may set Accept or User-Agent too.
UpstreamRequest probeRequestFor(const Route &route)
{
    UpstreamRequest request;
    request.method = QByteArrayLiteral("GET");
    request.origin = route.origin;
    request.originUrl = route.url;
    request.target = QByteArrayLiteral("/v1/models");
    request.headers = {
        {QByteArrayLiteral("Accept"), QByteArrayLiteral("application/json")},
        {QByteArrayLiteral("User-Agent"), QByteArrayLiteral("slp-discovery/" SLP_VERSION)}};
    replaceHeaders(request.headers, route.headers);
    return request;
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
                                         UpstreamTransport &transport, MetricsRegistry &metrics,
                                         QObject *parent)
    : QObject(parent), m_index(routeIndex), m_id(route.id),
      m_url(route.origin + QStringLiteral("/v1/models")), m_settings(settings),
      m_transport(transport), m_probeRequest(probeRequestFor(route)), m_metrics(metrics),
      m_schedule(settings.backoffInitial, settings.backoffMax, settings.recheck)
{
    m_nextProbe.setSingleShot(true);
    connect(&m_nextProbe, &QTimer::timeout, this, &DiscoverySupervisor::probe);
    connect(&m_parser, &ModelListParser::parsed, this, &DiscoverySupervisor::onParsed);
    m_metrics.set(metric::modelAmbiguous, metric::modelLabels(m_id), 0);
}

DiscoverySupervisor::~DiscoverySupervisor() = default; // a running probe goes with its parent

void DiscoverySupervisor::start()
{
    m_nextProbe.start(0); // from the event loop: never ahead of the listener or a request
}

void DiscoverySupervisor::probe()
{
    m_probe = new ModelProbe(m_transport, m_probeRequest, ms(m_settings.probeTimeout),
                             this); // deleted once it finished (onProbeFinished)
    connect(m_probe, &ModelProbe::finished, this, &DiscoverySupervisor::onProbeFinished);
    m_probe->start();
}

void DiscoverySupervisor::onProbeFinished()
{
    ModelProbe *probe = m_probe;
    m_probe = nullptr;
    if (!probe)
        return;
    probe->deleteLater();
    m_bodyBytesRead = probe->bytesRead();
    if (!probe->failure().isEmpty())
        return settle(ProbeResult::Error, probe->failure());
    m_parser.parse(probe->takeBody()); // onParsed settles the probe
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
    keepFields(list);
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

void DiscoverySupervisor::keepFields(const ModelList &list)
{
    // Once per run of oversized entries: a backend that keeps sending one is said once.
    if (list.fieldsTrimmed && !std::exchange(m_trimmedSaid, true)) {
        qCWarning(lcDiscovery).noquote()
            << QStringLiteral("discovery: %1: the backend's entry for %2 is %3 bytes, over %4: "
                              "the catalog keeps only its context fields, owned_by and created")
                   .arg(m_id, quotedName(list.ids.first()))
                   .arg(list.entryBytes)
                   .arg(kMaxLearnedEntryBytes);
    }
    if (!list.fieldsTrimmed)
        m_trimmedSaid = false;
    m_state.fields = list.fields; // followed at every probe, as the name is
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
