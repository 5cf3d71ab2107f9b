// SPDX-License-Identifier: GPL-3.0-or-later
#include "routing/routetable.h"

namespace slp {

RouteTable::RouteTable(Config config)
    : m_config(std::move(config)), m_discovery(m_config.routes.size())
{
    m_index.reserve(m_config.routes.size());
    for (qsizetype i = 0; i < m_config.routes.size(); ++i) {
        m_index.insert(m_config.routes[i].id, i);
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
    if (label == QLatin1String("pending") || label == QLatin1String("passthrough")) {
        return {};
    }
    return upstreamModel(index);
}

CatalogEntry RouteTable::catalogEntry(qsizetype index) const
{
    const Route &r = route(index);
    CatalogEntry entry;
    entry.id = r.id;
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
    for (qsizetype i = 0; i < size(); ++i) {
        catalog.entries.append(catalogEntry(i));
    }
    return catalog;
}

} // namespace slp
