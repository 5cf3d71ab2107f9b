// SPDX-License-Identifier: GPL-3.0-or-later
// The hour's history as the window reads it: broken answers by reason from
// slp_responses_broken_total deltas between polls (SLP restarts never negative, an hour and
// no more), each route's TTFB median per poll for its sparkline, and the requests sparkline.
#include "glancefixture.h"
#include "history.h"
#include "statusmodel.h"

#include <QtTest>

using namespace slp::monitor;
using namespace slp::monitor::test;

namespace {

FakeRoute withBroken(const char *id, int idle, int closed, int ok = 0)
{
    FakeRoute r{id, "ok"};
    r.ok = ok;
    if (idle)
        r.broken.insert(QStringLiteral("idle_timeout"), idle);
    if (closed)
        r.broken.insert(QStringLiteral("upstream_closed"), closed);
    return r;
}

FakeRoute withLatency(const char *id, int ok, QList<QPair<QString, int>> buckets)
{
    FakeRoute r{id, "ok"};
    r.ok = ok;
    r.buckets = std::move(buckets);
    return r;
}

} // namespace

class TestMonitorHistory : public QObject
{
    Q_OBJECT

private slots:
    void readsBrokenCounters();
    void brokenDeltasByReason();
    void brokenSurvivesRestart();
    void brokenKeepsAnHour();
    void historyIsBounded();
    void brokenWords();
    void ttfbSeriesPerRoute();
    void requestSeriesAsBefore();
};

void TestMonitorHistory::readsBrokenCounters()
{
    const StatusSnapshot s = snapshotAt(0, {withBroken("a", 2, 5)});
    const QMap<QString, double> expected{{"idle_timeout", 2}, {"upstream_closed", 5}};
    QCOMPARE(s.routes.first().counters.broken, expected);
}

void TestMonitorHistory::brokenDeltasByReason()
{
    StatusModel model;
    model.apply(snapshotAt(0, {withBroken("a", 2, 5), withBroken("b", 0, 0)}));
    StatusUpdate u = model.apply(snapshotAt(10, {withBroken("a", 3, 5), withBroken("b", 0, 1)}));
    const QMap<QString, double> aDelta{{"idle_timeout", 1}};
    QCOMPARE(u.snapshot.routes.first().traffic.broken, aDelta); // unchanged reasons left out
    u = model.apply(snapshotAt(20, {withBroken("a", 3, 7), withBroken("b", 0, 1)}));
    const QMap<QString, double> all{{"idle_timeout", 1}, {"upstream_closed", 3}};
    QCOMPARE(brokenByReason(u.snapshot.history), all);
    const QMap<QString, double> b{{"upstream_closed", 1}};
    QCOMPARE(brokenByReason(u.snapshot.history, QStringLiteral("b")), b);
    QVERIFY(brokenByReason(u.snapshot.history, QStringLiteral("nobody")).isEmpty());
    // The counts since SLP started are not the hour's: the first poll only sets the base.
    QCOMPARE(brokenText(brokenByReason(u.snapshot.history)),
             QStringLiteral("3 upstream closed, 1 idle timeout"));
}

void TestMonitorHistory::brokenSurvivesRestart()
{
    StatusModel model;
    model.apply(snapshotAt(0, {withBroken("a", 4, 9, 100)}));
    // Restarted: every counter starts at 0 again; what it counts now all happened since.
    const StatusUpdate u = model.apply(snapshotAt(10, {withBroken("a", 0, 2, 3)}));
    const QMap<QString, double> expected{{"upstream_closed", 2}};
    QCOMPARE(u.snapshot.routes.first().traffic.broken, expected);
    for (const TrafficPoint &p : u.snapshot.history)
        for (const RouteTraffic &t : p.routes)
            for (const double n : t.broken)
                QVERIFY(n > 0);
}

void TestMonitorHistory::brokenKeepsAnHour()
{
    StatusModel model;
    StatusUpdate u;
    // One broken answer a minute for two hours: the window holds the last hour's 60.
    for (int minute = 0; minute <= 120; ++minute)
        u = model.apply(snapshotAt(minute * 60, {withBroken("a", minute, 0)}));
    QCOMPARE(brokenByReason(u.snapshot.history).value(QStringLiteral("idle_timeout")), 61.0);
    QCOMPARE(u.snapshot.history.first().at, kT0.addSecs(60 * 60));
}

void TestMonitorHistory::historyIsBounded()
{
    StatusModel model;
    StatusUpdate u;
    // Every 100 ms (the shortest interval) the points stop at kMaxHistoryPoints.
    for (qsizetype i = 0; i <= kMaxHistoryPoints + 10; ++i) {
        PollResult p = pollAt(0, {withBroken("a", int(i), 0)});
        p.finishedAt = kT0.addMSecs(i * 100);
        u = model.apply(readSnapshot(p));
    }
    QCOMPARE(u.snapshot.history.size(), kMaxHistoryPoints);
    QCOMPARE(brokenByReason(u.snapshot.history).value(QStringLiteral("idle_timeout")),
             double(kMaxHistoryPoints));
}

void TestMonitorHistory::brokenWords()
{
    QCOMPARE(brokenText({}), QStringLiteral("none"));
    QCOMPARE(brokenText({{"client_gone", 0}}), QStringLiteral("none"));
    QCOMPARE(brokenText({{"upstream_reset", 1}, {"client_gone", 1}, {"idle_timeout", 4}}),
             QStringLiteral("4 idle timeout, 1 client gone, 1 upstream reset"));
}

void TestMonitorHistory::ttfbSeriesPerRoute()
{
    StatusModel model;
    model.apply(snapshotAt(0, {withLatency("a", 0, {{"0.1", 0}, {"1", 0}}), {"b", "ok"}}));
    // 10 answers, all heads within 0.1 s: the median interpolates to 0.05 s.
    model.apply(snapshotAt(10, {withLatency("a", 10, {{"0.1", 10}, {"1", 10}}), {"b", "ok"}}));
    // An interval without answers is a gap, not a zero.
    model.apply(snapshotAt(20, {withLatency("a", 10, {{"0.1", 10}, {"1", 10}}), {"b", "ok"}}));
    // 10 more, all between 0.1 and 1 s: 0.55 s.
    const StatusUpdate u =
        model.apply(snapshotAt(30, {withLatency("a", 20, {{"0.1", 10}, {"1", 20}}), {"b", "ok"}}));
    const SparkSeries a = ttfbSeries(u.snapshot.history, QStringLiteral("a"));
    QCOMPARE(a.bars.size(), 3);
    QCOMPARE(a.bars[0].value, 0.05);
    QVERIFY(!a.bars[1].present);
    QVERIFY(qAbs(a.bars[2].value - 0.55) < 1e-9);
    QCOMPARE(a.label, QStringLiteral("TTFB p50 per poll, last hour (peak 550 ms)"));
    // The same median the table's TTFB column shows for the interval.
    QCOMPARE(u.snapshot.routes.first().traffic.ttfbP50, a.bars[2].value);
    const SparkSeries b = ttfbSeries(u.snapshot.history, QStringLiteral("b"));
    QCOMPARE(b.bars.size(), 3);
    QVERIFY(
        std::none_of(b.bars.cbegin(), b.bars.cend(), [](const SparkBar &x) { return x.present; }));
    QCOMPARE(b.label, QStringLiteral("TTFB p50 per poll, last hour: no answer yet"));
    // Idle routes cost the history nothing.
    QVERIFY(!u.snapshot.history.last().routes.contains(QStringLiteral("b")));
}

void TestMonitorHistory::requestSeriesAsBefore()
{
    QCOMPARE(requestSeries({}).label,
             QStringLiteral("requests per poll, last hour: waiting for two polls"));
    StatusModel model;
    model.apply(snapshotAt(0, {{"a", "ok"}}));
    FakeRoute a{"a", "ok"};
    a.ok = 10;
    a.failed = 2;
    const SparkSeries s = requestSeries(model.apply(snapshotAt(10, {a})).snapshot.history);
    QCOMPARE(s.bars, (QList<SparkBar>{{12, 2, true}}));
    QCOMPARE(s.label, QStringLiteral("requests per poll, last hour (peak 12)"));
}

QTEST_APPLESS_MAIN(TestMonitorHistory)
#include "tst_monitor_history.moc"
