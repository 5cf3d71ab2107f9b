// SPDX-License-Identifier: GPL-3.0-or-later
// Notices for each route's passive state, every transition: one when a route enters failing
// or stalled (with its last failure and request id), one when it is ok again, none while a
// state holds, none for slow, none for what the first poll finds; grouped per poll.
#include "glancefixture.h"
#include "noticepolicy.h"
#include "statusmodel.h"

#include <QtTest>

using namespace slp::monitor;
using namespace slp::monitor::test;

namespace {

FakeRoute in(const char *state, const char *what = "", const char *requestId = "")
{
    FakeRoute r{"a", state};
    if (*what)
        r.failure = failureAt(0, QString::fromUtf8(what), QString::fromUtf8(requestId));
    return r;
}

// Feeds route a's states, one poll each (10 s apart), beside a route b that stays ok;
// returns every notice as "kind:title".
class Run
{
public:
    QStringList poll(const QList<FakeRoute> &routes)
    {
        QStringList out;
        const StatusUpdate u = m_model.apply(snapshotAt(m_seconds, routes));
        m_seconds += 10;
        for (const Notice &n : noticesFor(u)) {
            static const char *names[] = {"ambiguous", "recovered", "unreachable", "reachable",
                                          "failing",   "ok again",  "stalled"};
            out << QStringLiteral("%1:%2").arg(QLatin1String(names[int(n.kind)]), n.title);
            m_last = n;
        }
        return out;
    }
    QStringList states(const QList<const char *> &states)
    {
        QStringList out;
        for (const char *state : states)
            out << poll({in(state), {"b", "ok"}});
        return out;
    }
    const Notice &last() const { return m_last; }

private:
    StatusModel m_model;
    qint64 m_seconds = 0;
    Notice m_last;
};

const QString kFailing = QStringLiteral("failing:SLP: backend of a failing");
const QString kStalled = QStringLiteral("stalled:SLP: route a stalled");
const QString kOk = QStringLiteral("ok again:SLP: backend of a answers again");

} // namespace

class TestMonitorConditionNotices : public QObject
{
    Q_OBJECT

private slots:
    void transitions_data();
    void transitions();
    void failingNoticeExplains();
    void stalledNoticeExplains();
    void recoveryNamesWhatEnded();
    void heldStateWithNewFailuresIsQuiet();
    void groupedPerPoll();
    void removedWhileFailingIsForgotten();
};

void TestMonitorConditionNotices::transitions_data()
{
    QTest::addColumn<QList<const char *>>("states");
    QTest::addColumn<QStringList>("expected");
    const auto row = [](const char *name, QList<const char *> states, QStringList expected) {
        QTest::newRow(name) << states << expected;
    };
    row("ok -> failing", {"ok", "failing"}, {kFailing});
    row("failing held", {"ok", "failing", "failing", "failing"}, {kFailing});
    row("failing -> ok takes two polls", {"ok", "failing", "ok"}, {kFailing});
    row("failing -> ok", {"ok", "failing", "ok", "ok", "ok"}, {kFailing, kOk});
    row("ok -> stalled", {"ok", "stalled", "stalled"}, {kStalled});
    row("stalled -> ok", {"ok", "stalled", "ok", "ok"}, {kStalled, kOk});
    row("failing -> stalled", {"ok", "failing", "stalled"}, {kFailing, kStalled});
    row("stalled -> failing", {"ok", "stalled", "failing"}, {kStalled, kFailing});
    row("ok -> slow -> ok", {"ok", "slow", "slow", "ok", "ok"}, {});
    row("failing -> slow is not yet ok", {"ok", "failing", "slow", "slow"}, {kFailing});
    row("failing -> slow -> ok", {"ok", "failing", "slow", "ok", "ok"}, {kFailing, kOk});
    row("failing -> slow -> failing", {"ok", "failing", "slow", "failing"}, {kFailing});
    row("slow breaks the ok polls", {"ok", "failing", "ok", "slow", "ok", "ok"}, {kFailing, kOk});
    row("flapping is one episode", {"ok", "failing", "ok", "failing", "ok", "failing", "ok", "ok"},
        {kFailing, kOk});
    row("failing at start-up", {"failing", "failing"}, {});
    row("... its recovery is news", {"failing", "ok", "ok"}, {kOk});
    row("stalled at start-up", {"stalled", "ok", "ok"}, {kOk});
    row("slow at start-up", {"slow", "ok", "ok"}, {});
    row("a second episode", {"ok", "failing", "ok", "ok", "stalled", "ok", "ok"},
        {kFailing, kOk, kStalled, kOk});
}

void TestMonitorConditionNotices::transitions()
{
    QFETCH(QList<const char *>, states);
    QFETCH(QStringList, expected);
    Run run;
    QCOMPARE(run.states(states), expected);
}

void TestMonitorConditionNotices::failingNoticeExplains()
{
    Run run;
    run.poll({in("ok"), {"b", "ok"}});
    QCOMPARE(run.poll({in("failing", "connection refused", "slpq0001"), {"b", "ok"}}),
             QStringList{kFailing});
    QCOMPARE(run.last().routeIds, QStringList{"a"});
    QCOMPARE(run.last().urgency, Notice::Urgency::Normal);
    QVERIFY2(run.last().body.endsWith(
                 QStringLiteral("a \u2192 A: connection refused (request id slpq0001)")),
             qPrintable(run.last().body));
    QVERIFY(run.last().body.startsWith(QStringLiteral("SLP's requests to the backend fail")));
}

void TestMonitorConditionNotices::stalledNoticeExplains()
{
    Run run;
    run.poll({in("ok"), {"b", "ok"}});
    run.poll({in("stalled", "upstream closed mid-body after 512 bytes", "up-9"), {"b", "ok"}});
    QCOMPARE(run.last().kind, Notice::Kind::Stalled);
    QVERIFY2(run.last().body.endsWith(QStringLiteral(
                 "a \u2192 A: upstream closed mid-body after 512 bytes (request id up-9)")),
             qPrintable(run.last().body));
    // Without a last failure (not expected from SLP, but not trusted either): said so.
    Run bare;
    bare.poll({in("ok"), {"b", "ok"}});
    bare.poll({in("stalled"), {"b", "ok"}});
    QVERIFY(bare.last().body.endsWith(QStringLiteral("a \u2192 A: no failure reported")));
}

void TestMonitorConditionNotices::recoveryNamesWhatEnded()
{
    Run run;
    run.states({"ok", "stalled", "ok", "ok"});
    QCOMPARE(run.last().kind, Notice::Kind::BackendRecovered);
    QCOMPARE(run.last().body, QStringLiteral("Back to ok:\na \u2192 A (was stalled)"));
    Run both;
    both.states({"ok", "failing", "stalled", "ok", "ok"});
    QCOMPARE(both.last().body, QStringLiteral("Back to ok:\na \u2192 A (was stalled)"));
}

void TestMonitorConditionNotices::heldStateWithNewFailuresIsQuiet()
{
    Run run;
    run.poll({in("ok"), {"b", "ok"}});
    QCOMPARE(run.poll({in("failing", "connection refused", "r1"), {"b", "ok"}}).size(), 1);
    // Each poll a newer failure: the same episode, nothing more.
    QVERIFY(run.poll({in("failing", "timed out after 60s", "r2"), {"b", "ok"}}).isEmpty());
    QVERIFY(run.poll({in("failing", "connection reset", "r3"), {"b", "ok"}}).isEmpty());
}

void TestMonitorConditionNotices::groupedPerPoll()
{
    Run run;
    run.poll({in("ok"), {"b", "ok"}, {"c", "ok"}, {"d", "ok"}});
    FakeRoute b{"b", "failing"};
    FakeRoute d{"d", "stalled"};
    const QStringList notices = run.poll({in("failing"), b, {"c", "slow"}, d});
    QCOMPARE(notices, (QStringList{QStringLiteral("failing:SLP: 2 backends failing"),
                                   QStringLiteral("stalled:SLP: route d stalled")}));
    run.poll({in("ok"), {"b", "ok"}, {"c", "ok"}, {"d", "ok"}});
    QCOMPARE(run.poll({in("ok"), {"b", "ok"}, {"c", "ok"}, {"d", "ok"}}),
             QStringList{QStringLiteral("ok again:SLP: 3 backends answer again")});
    QCOMPARE(run.last().routeIds, (QStringList{"a", "b", "d"}));
}

void TestMonitorConditionNotices::removedWhileFailingIsForgotten()
{
    Run run;
    run.poll({in("ok"), {"b", "ok"}});
    run.poll({in("failing"), {"b", "ok"}});
    QVERIFY(run.poll({{"b", "ok"}}).isEmpty()); // a reload removed it
    QVERIFY(run.poll({{"b", "ok"}}).isEmpty());
    // Back with the next reload, ok: nothing ended that was still known.
    QVERIFY(run.poll({in("ok"), {"b", "ok"}}).isEmpty());
    QVERIFY(run.poll({in("ok"), {"b", "ok"}}).isEmpty());
}

QTEST_APPLESS_MAIN(TestMonitorConditionNotices)
#include "tst_monitor_condition_notices.moc"
