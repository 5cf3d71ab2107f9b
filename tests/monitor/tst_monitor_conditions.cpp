// SPDX-License-Identifier: GPL-3.0-or-later
// Each route's passive state as SLP reports it (`state` in /v1/models?debug): read into the
// route's condition, named in the state column, the headline and the icon's health; an SLP
// too old to report it still gets "backend failing" from the failure gauge.
#include "glancefixture.h"
#include "routetablemodel.h"
#include "status.h"
#include "statustext.h"

#include <QtTest>

using namespace slp::monitor;
using namespace slp::monitor::test;

namespace {

const RouteStatus &route(const StatusSnapshot &s, const QString &id)
{
    for (const RouteStatus &r : s.routes)
        if (r.entry.id == id)
            return r;
    qFatal("no route %s", qPrintable(id));
}

} // namespace

class TestMonitorConditions : public QObject
{
    Q_OBJECT

private slots:
    void readsReportedState_data();
    void readsReportedState();
    void headlineCountsConditions();
    void ambiguousOutranksCondition();
    void olderSlpFallsBackToGauge();
    void tableShowsConditionAndIcon();
    void unknownStateIsNotReported();
};

void TestMonitorConditions::readsReportedState_data()
{
    QTest::addColumn<QString>("state");
    QTest::addColumn<int>("condition");
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("health");
    QTest::newRow("ok") << "ok" << int(RouteCondition::Ok) << "ok" << int(Health::Ok);
    QTest::newRow("slow") << "slow" << int(RouteCondition::Slow) << "slow"
                          << int(Health::Attention);
    QTest::newRow("failing") << "failing" << int(RouteCondition::Failing) << "failing"
                             << int(Health::Attention);
    QTest::newRow("stalled") << "stalled" << int(RouteCondition::Stalled) << "stalled"
                             << int(Health::Attention);
}

void TestMonitorConditions::readsReportedState()
{
    QFETCH(QString, state);
    QFETCH(int, condition);
    QFETCH(QString, text);
    QFETCH(int, health);
    // The gauge says nothing here: the reported state alone decides.
    const StatusSnapshot s = snapshotAt(0, {FakeRoute("a", qPrintable(state))});
    const RouteStatus &a = route(s, "a");
    QCOMPARE(int(a.condition), condition);
    QVERIFY(a.conditionReported);
    QCOMPARE(routeStateText(a), text);
    QCOMPARE(int(routeHealth(a)), health);
    QCOMPARE(int(s.health), health);
    QCOMPARE(a.failing(), state == QLatin1String("failing"));
    QCOMPARE(shownCondition(a).has_value(), state != QLatin1String("ok"));
}

void TestMonitorConditions::headlineCountsConditions()
{
    const StatusSnapshot s = snapshotAt(
        0, {{"a", "failing"}, {"b", "stalled"}, {"c", "slow"}, {"d", "ok"}, {"e", "failing"}});
    QCOMPARE(headline(s), QStringLiteral("attention: 2 failing, 1 stalled, 1 slow"));
    QCOMPARE(s.failingCount(), 2);
    QCOMPARE(s.count(RouteCondition::Stalled, true), 1);
    QCOMPARE(s.count(RouteCondition::Failing, false), 0);
    QCOMPARE(routeLine(route(s, "b")), QStringLiteral("b \u2192 B: stalled"));
    QCOMPARE(headline(snapshotAt(0, {{"a", "ok"}, {"b", "ok"}})), QStringLiteral("ok: 2 routes"));
}

void TestMonitorConditions::ambiguousOutranksCondition()
{
    PollResult p = pollAt(0, {{"a", "failing"}});
    p.metricsBody += "slp_upstream_model_ambiguous{model_id=\"a\"} 1\n";
    const StatusSnapshot s = readSnapshot(p);
    const RouteStatus &a = route(s, "a");
    QCOMPARE(a.state, RouteState::Ambiguous);
    QCOMPARE(routeStateText(a), QStringLiteral("ambiguous, failing"));
    QCOMPARE(routeHealth(a), Health::Alert);
    QVERIFY(!shownCondition(a)); // the alert icon says more
    QCOMPARE(headline(s), QStringLiteral("alert: 1 ambiguous, 1 failing"));
}

void TestMonitorConditions::olderSlpFallsBackToGauge()
{
    FakeRoute old{"a"};
    old.consecutive = 2;
    const StatusSnapshot s = snapshotAt(0, {old, {"b"}});
    const RouteStatus &a = route(s, "a");
    QCOMPARE(a.condition, RouteCondition::Failing);
    QVERIFY(!a.conditionReported);
    QCOMPARE(routeStateText(a), QStringLiteral("backend failing: 2 attempts in a row"));
    QCOMPARE(headline(s), QStringLiteral("attention: 1 backend failing"));
    QCOMPARE(route(s, "b").condition, RouteCondition::Ok);
    // A reporting SLP's state wins over its gauge (one refusal is not yet failing).
    FakeRoute reported{"a", "ok"};
    reported.consecutive = 1;
    QCOMPARE(route(snapshotAt(0, {reported}), "a").condition, RouteCondition::Ok);
}

void TestMonitorConditions::tableShowsConditionAndIcon()
{
    RouteTableModel model;
    FakeRoute a{"a", "stalled"};
    a.failure = failureAt(-60, QStringLiteral("upstream closed mid-body after 512 bytes"),
                          QStringLiteral("req-1"));
    model.setRoutes(snapshotAt(0, {a, {"b", "ok"}}).routes);
    const QModelIndex stalled = model.index(0, RouteTableModel::State);
    QCOMPARE(model.data(stalled).toString(), QStringLiteral("stalled"));
    QCOMPARE(model.data(stalled, RouteTableModel::ConditionRole).toInt(),
             int(RouteCondition::Stalled));
    QVERIFY(
        model.data(stalled, Qt::ToolTipRole)
            .toString()
            .contains(QStringLiteral("Last failure: upstream closed mid-body after 512 bytes")));
    const QModelIndex ok = model.index(1, RouteTableModel::State);
    QVERIFY(!model.data(ok, RouteTableModel::ConditionRole).isValid());
    QCOMPARE(model.data(ok, RouteTableModel::HealthRole).toInt(), int(Health::Ok));
    // A change of state alone is a change of the row.
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setRoutes(snapshotAt(10, {{"a", "ok"}, {"b", "ok"}}).routes);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(model.data(stalled).toString(), QStringLiteral("ok"));
}

void TestMonitorConditions::unknownStateIsNotReported()
{
    // A word a later SLP may add is not guessed at: the gauge decides, as for an older SLP.
    const RouteStatus a = route(snapshotAt(0, {{"a", "sluggish"}}), "a");
    QVERIFY(!a.conditionReported);
    QCOMPARE(a.condition, RouteCondition::Ok);
    QVERIFY(!routeConditionFrom(QString()));
    QCOMPARE(routeConditionFrom(QStringLiteral("stalled")), RouteCondition::Stalled);
}

QTEST_APPLESS_MAIN(TestMonitorConditions)
#include "tst_monitor_conditions.moc"
