// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QString>

namespace slp {

// What discovery has learned about one backend route: the only runtime state SLP has. A
// DiscoverySupervisor keeps its own and reports it; the daemon copies it into its route table.
struct DiscoveryState
{
    QString name;       // the probed name in use; empty until one is known
    QJsonObject fields; // the backend's entry for it, as the catalog shows it (learnedFields)
    QString lastProbe;  // ok | ambiguous | error; empty until the first probe
    QDateTime lastProbeAt;
    bool ambiguous = false;
};

} // namespace slp
