// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "status.h"

#include <QIcon>

namespace slp::monitor {

// The three state icons, painted with QPainter from the same 64x64 geometry as
// resources/icons/slp-monitor-{ok,attention,alert}.svg. Painted rather than loaded because
// Debian's Qt 6.4 reads SVG only through the qt6-svg plugin, which a tray app should not need
// at run time; the shapes (circle + check, triangle + "!", octagon + "×") tell the states
// apart without colour.
QIcon healthIcon(Health health);
QIcon routeStateIcon(RouteState state);
// The route conditions, in the same geometry: slow a clock face, stalled a pause sign (answers
// start, then stop), failing a no-entry sign (the backend refuses or resets). Ok is the ok icon.
QIcon routeConditionIcon(RouteCondition condition);
// A route's icon: its shownCondition()'s, else its health's.
QIcon routeIcon(const RouteStatus &route);
// Before the first poll: a grey ring, so the tray never claims "ok" it has not seen.
QIcon waitingIcon();

} // namespace slp::monitor
