// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "statusmodel.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace slp::monitor {

// One desktop notification, before it meets D-Bus or the tray.
struct Notice
{
    enum class Kind
    {
        Ambiguous,
        Recovered,
        Unreachable,
        Reachable,
        Failing,         // backends started failing SLP's attempts
        BackendRecovered // ... and answer again
    };
    enum class Urgency
    {
        Normal,
        Critical
    };
    Kind kind = Kind::Ambiguous;
    Urgency urgency = Urgency::Normal;
    QString title;
    QString body;
    QStringList routeIds; // the routes it is about (empty for reachability)
};

// The notifier's policy (pure): which transitions are worth a desktop notification, grouped
// so one poll yields at most one notice per kind. An edition that follows an ambiguous
// backend turns ambiguous in the same poll as its backend; that is one event for the user,
// not two popups. Likewise a backend that starts failing (and one that answers again): one
// notice per poll for all such routes; one found failing at start-up is not news.
// Everything else (pending -> ok, reloads) only shows in the icon and table.
QList<Notice> noticesFor(const StatusUpdate &update);

} // namespace slp::monitor
