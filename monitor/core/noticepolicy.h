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
        Failing,          // routes started failing
        BackendRecovered, // failing or stalled routes are ok again
        Stalled,          // routes' answers started breaking off mid-body
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
// not two popups. Likewise routes that start failing, routes that stall, and routes ok again
// after either: one notice per kind and poll for all such routes, with each route's last
// failure and its request id; one found failing or stalled at start-up is not news, and no
// notice repeats while the state holds (StatusModel's episodes).
// Everything else (pending -> ok, reloads) only shows in the icon and table.
QList<Notice> noticesFor(const StatusUpdate &update);

} // namespace slp::monitor
