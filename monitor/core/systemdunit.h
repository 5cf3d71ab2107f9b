// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QUrl>
#include <QVariantMap>

#include <optional>

namespace slp::monitor {

// What systemd says of slp.service, for the window's header when the monitor watches an SLP
// on this machine: the Unit interface's ActiveState and SubState, the Service interface's
// StatusText (slp's STATUS= line: "serving 4 routes; 0 ambiguous; 1 failing; 0 stalled").
// The D-Bus reading is SystemdUnitReader's (app/); the words are here, pure.
struct UnitStatus
{
    QString unit;        // "slp.service"
    QString activeState; // active | reloading | inactive | failed | activating | deactivating
    QString subState;    // running, dead, ...; may be empty
    QString statusText;  // may be empty (never started, or not a Type=notify unit)

    bool operator==(const UnitStatus &other) const = default;
};

inline const QString kSlpUnit = QStringLiteral("slp.service");

// True for an SLP on this machine: 127.0.0.1 (any 127/8 address), ::1, localhost.
bool isLocalUrl(const QUrl &url);

// From the properties read (ActiveState, SubState, StatusText as strings); nullopt without a
// string ActiveState: a reply that is not a unit's says nothing.
std::optional<UnitStatus> unitStatusFrom(const QString &unit, const QVariantMap &properties);

// "slp.service: active (running) — serving 4 routes; 0 ambiguous; 1 failing; 0 stalled";
// the status text's control characters shown, not acted on.
QString unitHeaderText(const UnitStatus &status);

} // namespace slp::monitor
