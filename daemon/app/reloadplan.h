// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "config/config.h"

#include <QHash>
#include <QList>
#include <QStringList>

namespace slp {

// What a SIGHUP does with a config that compiled: pure (old config and new in, a plan out), so
// every rule of a reload is unit-tested without a daemon.
struct ReloadPlan
{
    Config config;        // what is applied: the new file with restart-only keys kept as running
    QStringList warnings; // restart-only keys that changed, and what still holds
    // Supervisors that keep running and what they learned: old route id -> index in the new
    // routes. Every other running supervisor stops.
    QHash<QString, qsizetype> keptSupervisors;
    QList<qsizetype> newSupervisors; // new route indexes to probe afresh
    QStringList goneRoutes;          // ids no longer served: their per-route series go
    QStringList unprobedRoutes;      // ids probed before and not now (gone, pinned): ambiguity goes
};

// `supervised` are the ids of the routes whose supervisor runs now. A backend keeps its
// supervisor when its id, url and the discovery schedule are unchanged and it is still probed.
ReloadPlan planReload(const Config &running, Config next, const QStringList &supervised);

} // namespace slp
