// SPDX-License-Identifier: GPL-3.0-or-later
#include "routing/routetable.h"

#include "observe/metrics.h"

namespace slp {

namespace {
std::shared_ptr<const RouteForwarding> compileForwarding(const Route &route)
{
    using std::chrono::milliseconds;
    auto out = std::make_shared<RouteForwarding>();
    out->modelId = route.id;
    out->labels = metric::modelLabels(route.id);
    out->origin = route.origin;
    out->originUrl = route.url;
    out->timeout = std::chrono::duration_cast<milliseconds>(route.timeout);
    out->timeoutText = route.timeoutText;
    out->maxAttempts = route.retry ? 2 : 1;
    // Rounded up: a sub-millisecond value is still on, never silently 0 (off).
    out->streamIdleTimeout = std::chrono::ceil<milliseconds>(route.streamIdleTimeout);
    if (route.streamIdleTimeout.count() > 0)
        out->streamIdleTimeoutText = formatGoDuration(route.streamIdleTimeout);
    out->sseKeepalive = std::chrono::ceil<milliseconds>(route.sseKeepalive);
    out->setHeaders = route.headers;
    return out;
}
} // namespace

RouteTable::RouteTable(Config config)
    : m_config(std::move(config)), m_discovery(m_config.routes.size())
{
    m_index.reserve(m_config.routes.size());
    m_forwarding.reserve(m_config.routes.size());
    for (qsizetype i = 0; i < m_config.routes.size(); ++i) {
        m_index.insert(m_config.routes[i].id, i);
        m_forwarding.append(compileForwarding(m_config.routes[i]));
    }
}

QString RouteTable::upstreamModel(qsizetype index) const
{
    const Route &r = route(index);
    switch (r.nameSource) {
    case NameSource::Pinned:
        return r.pinnedModel;
    case NameSource::Discover:
        return m_discovery[index].name;
    case NameSource::Passthrough:
        return {};
    case NameSource::FollowsBackend: {
        // .Model is the backend's current upstream name: discovered once known, else its id.
        const Route &backend = route(r.followsRoute);
        const QString current = m_discovery[r.followsRoute].name;
        return r.modelTemplate->render(
            {{QStringLiteral("Name"), backend.id},
             {QStringLiteral("URL"), backend.origin},
             {QStringLiteral("Model"), current.isEmpty() ? backend.id : current}});
    }
    }
    return {};
}

QString RouteTable::discoveryLabel(qsizetype index) const
{
    const Route &r = route(index);
    switch (r.nameSource) {
    case NameSource::Pinned:
        return QStringLiteral("pinned");
    case NameSource::Passthrough:
        return QStringLiteral("passthrough");
    case NameSource::Discover:
        return m_discovery[index].name.isEmpty() ? QStringLiteral("pending")
                                                 : QStringLiteral("discovered");
    case NameSource::FollowsBackend:
        return discoveryLabel(r.followsRoute);
    }
    return {};
}

QString RouteTable::knownUpstreamModel(qsizetype index) const
{
    const QString label = discoveryLabel(index);
    if (label == QLatin1String("pending") || label == QLatin1String("passthrough"))
        return {};
    return upstreamModel(index);
}

qsizetype RouteTable::learnedFrom(qsizetype index) const
{
    const Route &r = route(index);
    if (!r.isEdition)
        return index;
    // An edition wraps its backend's model: it shows what the backend said of it.
    return r.followsRoute >= 0 ? r.followsRoute : find(r.backendName);
}

CatalogEntry RouteTable::catalogEntry(qsizetype index) const
{
    const Route &r = route(index);
    CatalogEntry entry;
    entry.id = r.id;
    if (const qsizetype base = learnedFrom(index); base >= 0)
        entry.fields = m_discovery[base].fields;
    entry.contextLength = r.contextLength ? r.contextLength : contextLengthOf(entry.fields);
    entry.discovery = discoveryLabel(index);
    entry.upstreamModel = knownUpstreamModel(index);
    const qsizetype probed = r.nameSource == NameSource::FollowsBackend ? r.followsRoute : index;
    if (route(probed).nameSource == NameSource::Discover) {
        entry.lastProbe = m_discovery[probed].lastProbe;
        entry.lastProbeAt = m_discovery[probed].lastProbeAt;
    }
    entry.timeout = formatGoDuration(r.timeout);
    entry.retry = r.retry;
    entry.aggregate = r.aggregate;
    entry.streamIdleTimeout = formatGoDuration(r.streamIdleTimeout);
    entry.sseKeepalive = formatGoDuration(r.sseKeepalive);
    return entry;
}

Catalog RouteTable::catalog(qint64 created) const
{
    Catalog catalog;
    catalog.created = created;
    catalog.entries.reserve(size());
    for (qsizetype i = 0; i < size(); ++i)
        catalog.entries.append(catalogEntry(i));
    return catalog;
}

} // namespace slp
