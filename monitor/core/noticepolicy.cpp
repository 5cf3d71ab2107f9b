// SPDX-License-Identifier: GPL-3.0-or-later
#include "noticepolicy.h"

#include <functional>

namespace slp::monitor {

namespace {

QString routeLine(const Transition &t)
{
    return QStringLiteral("%1 \u2192 %2")
        .arg(t.routeId, t.upstreamModel.isEmpty() ? QStringLiteral("(unknown)") : t.upstreamModel);
}

} // namespace

namespace {

// The transitions one update holds, sorted by the notice each becomes.
struct Sorted
{
    QList<const Transition *> ambiguous, recovered, failing, stalled, answering;
};

Notice reachability(const Transition &t, const StatusUpdate &update)
{
    const QString url = update.snapshot.baseUrl.toString();
    Notice n;
    if (t.kind == Transition::Kind::Unreachable) {
        n.kind = Notice::Kind::Unreachable;
        n.urgency = Notice::Urgency::Critical;
        n.title = QStringLiteral("SLP unreachable");
        n.body = QStringLiteral("%1: %2").arg(url, t.detail);
    } else {
        n.kind = Notice::Kind::Reachable;
        n.title = QStringLiteral("SLP is back");
        n.body = QStringLiteral("%1 answers again (%2 routes)")
                     .arg(url)
                     .arg(update.snapshot.routes.size());
    }
    return n;
}

// One notice for every route in `list`: `one` titles a single route, `many` several.
Notice grouped(Notice::Kind kind, const QList<const Transition *> &list, const QString &one,
               const QString &many, const QString &intro,
               const std::function<QString(const Transition &)> &line)
{
    Notice n;
    n.kind = kind;
    QStringList lines;
    for (const Transition *t : list) {
        n.routeIds << t->routeId;
        lines << line(*t);
    }
    n.title = list.size() == 1 ? one.arg(list.first()->routeId) : many.arg(list.size());
    n.body = intro + lines.join(QLatin1Char('\n'));
    return n;
}

} // namespace

namespace {

// "phi-4 → microsoft/phi-4: connection refused (request id slpq...)"; from an older SLP,
// "...: 3 attempts in a row".
QString troubleLine(const Transition &t)
{
    if (!t.conditionReported)
        return QStringLiteral("%1: %2 attempt%3 in a row")
            .arg(routeLine(t))
            .arg(t.failures)
            .arg(t.failures == 1 ? "" : "s");
    return QStringLiteral("%1: %2").arg(routeLine(t), failureText(t));
}

// The notices of a poll's route transitions, one per kind.
QList<Notice> routeNotices(const Sorted &sorted)
{
    QList<Notice> notices;
    if (!sorted.ambiguous.isEmpty()) {
        Notice n = grouped(Notice::Kind::Ambiguous, sorted.ambiguous,
                           QStringLiteral("SLP: route %1 is ambiguous"),
                           QStringLiteral("SLP: %1 routes are ambiguous"),
                           QStringLiteral("The backend serves zero or several models; SLP keeps "
                                          "the last known name, which may be stale:\n"),
                           routeLine);
        n.urgency = Notice::Urgency::Critical;
        notices << n;
    }
    if (!sorted.recovered.isEmpty())
        notices << grouped(
            Notice::Kind::Recovered, sorted.recovered, QStringLiteral("SLP: route %1 recovered"),
            QStringLiteral("SLP: %1 routes recovered"), QStringLiteral("No longer ambiguous:\n"),
            [](const Transition &t) {
                return QStringLiteral("%1 (%2)").arg(routeLine(t), routeStateName(t.to));
            });
    if (!sorted.failing.isEmpty())
        notices << grouped(Notice::Kind::Failing, sorted.failing,
                           QStringLiteral("SLP: backend of %1 failing"),
                           QStringLiteral("SLP: %1 backends failing"),
                           QStringLiteral("SLP's requests to the backend fail (refused, reset or "
                                          "timed out; clients get 502):\n"),
                           troubleLine);
    if (!sorted.stalled.isEmpty())
        notices << grouped(Notice::Kind::Stalled, sorted.stalled,
                           QStringLiteral("SLP: route %1 stalled"),
                           QStringLiteral("SLP: %1 routes stalled"),
                           QStringLiteral("Answers start, then break off mid-body (clients get "
                                          "them cut short):\n"),
                           troubleLine);
    if (!sorted.answering.isEmpty())
        notices << grouped(Notice::Kind::BackendRecovered, sorted.answering,
                           QStringLiteral("SLP: backend of %1 answers again"),
                           QStringLiteral("SLP: %1 backends answer again"),
                           QStringLiteral("Back to ok:\n"), [](const Transition &t) {
                               return QStringLiteral("%1 (was %2)")
                                   .arg(routeLine(t), routeConditionName(t.condition));
                           });
    return notices;
}

} // namespace

QList<Notice> noticesFor(const StatusUpdate &update)
{
    QList<Notice> notices;
    Sorted sorted;
    for (const Transition &t : update.transitions) {
        switch (t.kind) {
        case Transition::Kind::Unreachable:
        case Transition::Kind::Reachable:
            notices << reachability(t, update);
            break;
        case Transition::Kind::BecameAmbiguous:
            sorted.ambiguous << &t;
            break;
        case Transition::Kind::Recovered:
            sorted.recovered << &t;
            break;
        case Transition::Kind::StartedFailing:
            sorted.failing << &t;
            break;
        case Transition::Kind::StartedStalling:
            sorted.stalled << &t;
            break;
        case Transition::Kind::StoppedFailing:
            sorted.answering << &t;
            break;
        case Transition::Kind::StateChanged:
        case Transition::Kind::RouteAdded:
        case Transition::Kind::RouteRemoved:
            break;
        }
    }
    return notices << routeNotices(sorted);
}

} // namespace slp::monitor
