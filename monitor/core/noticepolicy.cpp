// SPDX-License-Identifier: GPL-3.0-or-later
#include "noticepolicy.h"

namespace slp::monitor {

namespace {

QString routeLine(const Transition &t)
{
    return QStringLiteral("%1 \u2192 %2")
        .arg(t.routeId, t.upstreamModel.isEmpty() ? QStringLiteral("(unknown)") : t.upstreamModel);
}

} // namespace

QList<Notice> noticesFor(const StatusUpdate &update)
{
    QList<Notice> notices;
    const QString url = update.snapshot.baseUrl.toString();

    QList<const Transition *> ambiguous;
    QList<const Transition *> recovered;
    QList<const Transition *> failing;
    QList<const Transition *> answering;
    for (const Transition &t : update.transitions) {
        switch (t.kind) {
        case Transition::Kind::Unreachable: {
            Notice n;
            n.kind = Notice::Kind::Unreachable;
            n.urgency = Notice::Urgency::Critical;
            n.title = QStringLiteral("SLP unreachable");
            n.body = QStringLiteral("%1: %2").arg(url, t.detail);
            notices << n;
            break;
        }
        case Transition::Kind::Reachable: {
            Notice n;
            n.kind = Notice::Kind::Reachable;
            n.title = QStringLiteral("SLP is back");
            n.body = QStringLiteral("%1 answers again (%2 routes)")
                         .arg(url)
                         .arg(update.snapshot.routes.size());
            notices << n;
            break;
        }
        case Transition::Kind::BecameAmbiguous:
            ambiguous << &t;
            break;
        case Transition::Kind::Recovered:
            recovered << &t;
            break;
        case Transition::Kind::StartedFailing:
            failing << &t;
            break;
        case Transition::Kind::StoppedFailing:
            answering << &t;
            break;
        case Transition::Kind::StateChanged:
        case Transition::Kind::RouteAdded:
        case Transition::Kind::RouteRemoved:
            break;
        }
    }

    if (!ambiguous.isEmpty()) {
        Notice n;
        n.kind = Notice::Kind::Ambiguous;
        n.urgency = Notice::Urgency::Critical;
        QStringList lines;
        for (const Transition *t : ambiguous) {
            n.routeIds << t->routeId;
            lines << routeLine(*t);
        }
        n.title = ambiguous.size() == 1
                      ? QStringLiteral("SLP: route %1 is ambiguous").arg(ambiguous.first()->routeId)
                      : QStringLiteral("SLP: %1 routes are ambiguous").arg(ambiguous.size());
        n.body = QStringLiteral("The backend serves zero or several models; SLP keeps the last "
                                "known name, which may be stale:\n%1")
                     .arg(lines.join(QLatin1Char('\n')));
        notices << n;
    }
    if (!recovered.isEmpty()) {
        Notice n;
        n.kind = Notice::Kind::Recovered;
        QStringList lines;
        for (const Transition *t : recovered) {
            n.routeIds << t->routeId;
            lines << QStringLiteral("%1 (%2)").arg(routeLine(*t), routeStateName(t->to));
        }
        n.title = recovered.size() == 1
                      ? QStringLiteral("SLP: route %1 recovered").arg(recovered.first()->routeId)
                      : QStringLiteral("SLP: %1 routes recovered").arg(recovered.size());
        n.body = QStringLiteral("No longer ambiguous:\n%1").arg(lines.join(QLatin1Char('\n')));
        notices << n;
    }
    if (!failing.isEmpty()) {
        Notice n;
        n.kind = Notice::Kind::Failing;
        QStringList lines;
        for (const Transition *t : failing) {
            n.routeIds << t->routeId;
            lines << QStringLiteral("%1: %2 attempt%3 in a row")
                         .arg(routeLine(*t))
                         .arg(t->failures)
                         .arg(t->failures == 1 ? "" : "s");
        }
        n.title = failing.size() == 1
                      ? QStringLiteral("SLP: backend of %1 failing").arg(failing.first()->routeId)
                      : QStringLiteral("SLP: %1 backends failing").arg(failing.size());
        n.body = QStringLiteral("SLP's requests to the backend fail (refused, reset or timed "
                                "out; clients get 502):\n%1")
                     .arg(lines.join(QLatin1Char('\n')));
        notices << n;
    }
    if (!answering.isEmpty()) {
        Notice n;
        n.kind = Notice::Kind::BackendRecovered;
        QStringList lines;
        for (const Transition *t : answering) {
            n.routeIds << t->routeId;
            lines << routeLine(*t);
        }
        n.title =
            answering.size() == 1
                ? QStringLiteral("SLP: backend of %1 answers again").arg(answering.first()->routeId)
                : QStringLiteral("SLP: %1 backends answer again").arg(answering.size());
        n.body = QStringLiteral("The backend answered SLP again:\n%1")
                     .arg(lines.join(QLatin1Char('\n')));
        notices << n;
    }
    return notices;
}

} // namespace slp::monitor
