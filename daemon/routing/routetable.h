// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "config/config.h"
#include "debugcatalog.h"
#include "discovery/discoverystate.h"
#include "forward/forwardplan.h"

#include <QHash>
#include <QString>

#include <memory>

namespace slp {

// The compiled route table plus discovery's one field per backend route. The request path
// asks it two things: which route serves an id, and what model name to send upstream.
class RouteTable
{
public:
    explicit RouteTable(Config config);

    const Config &config() const { return m_config; }
    qsizetype size() const { return m_config.routes.size(); }
    const Route &route(qsizetype index) const { return m_config.routes.at(index); }

    // What route `index` says about forwarding, compiled once: every request shares it.
    std::shared_ptr<const RouteForwarding> forwarding(qsizetype index) const
    {
        return m_forwarding.at(index);
    }

    // Index of the route serving `id`, or -1.
    qsizetype find(const QString &id) const { return m_index.value(id, -1); }

    // The model name to put in the body for this route; empty means "forward unchanged".
    QString upstreamModel(qsizetype index) const;
    // discovered | pending | pinned | passthrough; an edition following a backend shows its
    // backend's state.
    QString discoveryLabel(qsizetype index) const;

    const DiscoveryState &discovery(qsizetype index) const { return m_discovery.at(index); }
    DiscoveryState &discovery(qsizetype index) { return m_discovery[index]; }

    // The upstream name to show (catalog, metrics): empty while pending or for passthrough,
    // where the exposed id goes upstream unchanged.
    QString knownUpstreamModel(qsizetype index) const;

    // The route's catalog entry: its id, what its backend said of the model (an edition shows
    // its backend's), its context_length, and the debug view's fields.
    CatalogEntry catalogEntry(qsizetype index) const;
    Catalog catalog(qint64 created) const;

private:
    // The route whose discovery state holds what the backend said of this route's model.
    qsizetype learnedFrom(qsizetype index) const;

    Config m_config;
    QHash<QString, qsizetype> m_index;
    QList<std::shared_ptr<const RouteForwarding>> m_forwarding; // one per route
    QList<DiscoveryState> m_discovery; // one per route; used for NameSource::Discover routes
};

} // namespace slp
