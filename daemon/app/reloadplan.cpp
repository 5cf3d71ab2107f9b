// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/reloadplan.h"

namespace slp {

namespace {
const Route *findRoute(const Config &config, const QString &id, qsizetype *index = nullptr)
{
    for (qsizetype i = 0; i < config.routes.size(); ++i) {
        if (config.routes.at(i).id == id) {
            if (index)
                *index = i;
            return &config.routes.at(i);
        }
    }
    return nullptr;
}

bool sameSchedule(const DiscoverySettings &a, const DiscoverySettings &b)
{
    return a.backoffInitial == b.backoffInitial && a.backoffMax == b.backoffMax &&
           a.recheck == b.recheck && a.probeTimeout == b.probeTimeout;
}
} // namespace

ReloadPlan planReload(const Config &running, Config next, const QStringList &supervised)
{
    ReloadPlan plan;
    if (next.listen.text != running.listen.text) {
        plan.warnings << QStringLiteral("listen changed to %1: that needs a restart; still "
                                        "listening on %2")
                             .arg(next.listen.text, running.listen.text);
    }
    next.listen = running.listen;
    if (next.listenMode != running.listenMode) {
        plan.warnings << QStringLiteral("listen_mode changes on restart only");
        next.listenMode = running.listenMode;
    }
    if (next.maxUpstreamConnections != running.maxUpstreamConnections ||
        next.upstreamTransport != running.upstreamTransport) {
        plan.warnings << QStringLiteral("upstream transport settings change on restart only");
        next.maxUpstreamConnections = running.maxUpstreamConnections;
        next.upstreamTransport = running.upstreamTransport;
    }
    if (next.workers != running.workers || next.maxConnections != running.maxConnections) {
        plan.warnings << QStringLiteral("workers and max_connections change on restart only");
        next.workers = running.workers;
        next.maxConnections = running.maxConnections;
    }

    for (const Route &old : running.routes)
        if (!findRoute(next, old.id))
            plan.goneRoutes << old.id;
    const bool schedule = sameSchedule(running.discovery, next.discovery);
    QList<bool> probed(next.routes.size(), false);
    for (const QString &id : supervised) {
        const Route *old = findRoute(running, id);
        qsizetype index = -1;
        const Route *now = findRoute(next, id, &index);
        const bool stillProbed = now && now->nameSource == NameSource::Discover;
        // A changed headers: (a new key) needs probes that send it.
        if (old && stillProbed && schedule && now->origin == old->origin &&
            now->headers == old->headers) {
            plan.keptSupervisors.insert(id, index);
            probed[index] = true;
        } else if (!stillProbed) {
            plan.unprobedRoutes << id;
        }
    }
    for (qsizetype i = 0; i < next.routes.size(); ++i)
        if (next.routes.at(i).nameSource == NameSource::Discover && !probed[i])
            plan.newSupervisors << i;
    plan.config = std::move(next);
    return plan;
}

} // namespace slp
