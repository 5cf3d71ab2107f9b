// SPDX-License-Identifier: GPL-3.0-or-later
// slp-monitor's pure state model, fed with /v1/models?debug and /metrics text recorded from
// the real daemon (tests/unit/monitor/data/README.md says how).
#include "fixture.h"
#include "status.h"
#include "statusmodel.h"

#include <QtTest>

using namespace slp::monitor;
using slp::monitor::test::fixture;

namespace {

PollResult recorded(const QString &moment)
{
    return slp::monitor::test::recordedPoll(moment);
}

PollResult refused()
{
    return slp::monitor::test::refusedPoll();
}

const RouteStatus *route(const StatusSnapshot &s, const QString &id)
{
    for (const RouteStatus &r : s.routes)
        if (r.entry.id == id)
            return &r;
    return nullptr;
}

QStringList kinds(const QList<Transition> &ts)
{
    QStringList out;
    for (const Transition &t : ts)
        out << describe(t);
    return out;
}

int countKind(const QList<Transition> &ts, Transition::Kind kind)
{
    return int(std::count_if(
        ts.cbegin(), ts.cend(), [kind](const Transition &t) { return t.kind == kind; }));
}

} // namespace

class TestMonitorState : public QObject
{
    Q_OBJECT

private slots:
    void recordedMoments_data();
    void recordedMoments();
    void routeFields();
    void editionAmbiguousWithoutGauge();
    void gaugeAloneMakesAmbiguous();
    void upstreamFromMetricsWhenCatalogOmitsIt();
    void unreachable();
    void notACatalog();
    void metricsMissing();
    void metricsMalformedKeepsEarlierSamples();
    void routeStatePriority_data();
    void routeStatePriority();

    void startupIsQuietUnlessAlert();
    void startupAmbiguous();
    void startupUnreachable();
    void recordedSequence();
    void outageKeepsRoutesAndReportsOnce();
    void recoveryAcrossOutage();
    void reloadAddsAndRemovesRoutes();
    void resetMakesNextPollAStartup();
};

void TestMonitorState::recordedMoments_data()
{
    QTest::addColumn<QString>("moment");
    QTest::addColumn<Health>("health");
    QTest::addColumn<QStringList>("states"); // in catalog order

    QTest::newRow("ok") << "ok" << Health::Ok << QStringList{"ok", "ok", "ok", "ok"};
    QTest::newRow("attention") << "attention" << Health::Attention
                               << QStringList{"ok", "ok", "probe error", "ok"};
    QTest::newRow("ambiguous") << "ambiguous" << Health::Alert
                               << QStringList{"ambiguous", "ok", "ok", "ambiguous"};
    QTest::newRow("recovered") << "recovered" << Health::Ok << QStringList{"ok", "ok", "ok", "ok"};
}

void TestMonitorState::recordedMoments()
{
    QFETCH(QString, moment);
    QFETCH(Health, health);
    QFETCH(QStringList, states);

    const StatusSnapshot s = readSnapshot(recorded(moment));
    QVERIFY(s.reachable);
    QVERIFY2(s.error.isEmpty(), qPrintable(s.error));
    QCOMPARE(s.health, health);
    QStringList got;
    QStringList ids;
    for (const RouteStatus &r : s.routes) {
        got << routeStateName(r.state);
        ids << r.entry.id;
    }
    QCOMPARE(ids, (QStringList{"qwen3-8b", "pinned-model", "down-backend", "qwen3-8b-edited"}));
    QCOMPARE(got, states);
}

void TestMonitorState::routeFields()
{
    const StatusSnapshot s = readSnapshot(recorded(QStringLiteral("attention")));
    const RouteStatus *qwen = route(s, QStringLiteral("qwen3-8b"));
    QVERIFY(qwen);
    QCOMPARE(qwen->entry.upstreamModel, QStringLiteral("Qwen/Qwen3-8B"));
    QCOMPARE(qwen->entry.discovery, QStringLiteral("discovered"));
    QCOMPARE(qwen->entry.lastProbe, QStringLiteral("ok"));
    QVERIFY(qwen->entry.lastProbeAt.isValid());
    QCOMPARE(qwen->entry.timeout, QStringLiteral("2m0s"));
    QVERIFY(qwen->entry.aggregate);
    QVERIFY(!qwen->entry.retry);

    const RouteStatus *pinned = route(s, QStringLiteral("pinned-model"));
    QVERIFY(pinned);
    QCOMPARE(pinned->entry.discovery, QStringLiteral("pinned"));
    QVERIFY(pinned->entry.lastProbe.isEmpty());
    QVERIFY(pinned->entry.retry);

    const RouteStatus *down = route(s, QStringLiteral("down-backend"));
    QVERIFY(down);
    QCOMPARE(down->entry.discovery, QStringLiteral("pending"));
    QVERIFY(down->entry.upstreamModel.isEmpty());
    QCOMPARE(down->upstreamName(), QStringLiteral("(unknown)"));
    QCOMPARE(down->state, RouteState::ProbeError);
}

void TestMonitorState::editionAmbiguousWithoutGauge()
{
    // The daemon exports the gauge for probed backends only; the edition that follows one is
    // ambiguous through the catalog's last_probe alone.
    const StatusSnapshot s = readSnapshot(recorded(QStringLiteral("ambiguous")));
    const RouteStatus *backend = route(s, QStringLiteral("qwen3-8b"));
    const RouteStatus *edition = route(s, QStringLiteral("qwen3-8b-edited"));
    QVERIFY(backend && edition);
    QVERIFY(backend->ambiguousMetric);
    QVERIFY(!edition->ambiguousMetric);
    QCOMPARE(edition->state, RouteState::Ambiguous);
    QCOMPARE(backend->entry.upstreamModel, QStringLiteral("Qwen/Qwen3-8B")); // last known kept
}

void TestMonitorState::gaugeAloneMakesAmbiguous()
{
    PollResult p = recorded(QStringLiteral("ambiguous"));
    p.catalogBody = fixture(QStringLiteral("catalog-ok.json")); // catalog says ok ...
    const StatusSnapshot s = readSnapshot(p);                   // ... the gauge says 1
    QCOMPARE(route(s, QStringLiteral("qwen3-8b"))->state, RouteState::Ambiguous);
    QCOMPARE(route(s, QStringLiteral("qwen3-8b-edited"))->state, RouteState::Ok);
    QCOMPARE(s.health, Health::Alert);
}

void TestMonitorState::upstreamFromMetricsWhenCatalogOmitsIt()
{
    PollResult p = recorded(QStringLiteral("ok"));
    p.catalogBody.replace(R"("upstream_model":"Some-Pinned",)", "");
    const StatusSnapshot s = readSnapshot(p);
    QCOMPARE(route(s, QStringLiteral("pinned-model"))->entry.upstreamModel,
             QStringLiteral("Some-Pinned"));
}

void TestMonitorState::unreachable()
{
    const StatusSnapshot s = readSnapshot(refused());
    QVERIFY(!s.reachable);
    QCOMPARE(s.health, Health::Alert);
    QCOMPARE(s.error, QStringLiteral("Connection refused"));
    QVERIFY(s.routes.isEmpty());
}

void TestMonitorState::notACatalog()
{
    PollResult p = recorded(QStringLiteral("ok"));
    p.catalogBody = "<html>nginx default page</html>";
    const StatusSnapshot s = readSnapshot(p);
    QVERIFY(!s.reachable);
    QCOMPARE(s.health, Health::Alert);
    QVERIFY2(s.error.contains(QLatin1String("not an SLP catalog")), qPrintable(s.error));
}

void TestMonitorState::metricsMissing()
{
    PollResult p = recorded(QStringLiteral("ok"));
    p.metricsBody.clear();
    p.metricsError = QStringLiteral("HTTP 404 from http://127.0.0.1:8080/metrics");
    const StatusSnapshot s = readSnapshot(p);
    QVERIFY(s.reachable);
    QCOMPARE(s.routes.size(), 4);
    QCOMPARE(s.health, Health::Attention);
    QVERIFY(s.error.startsWith(QLatin1String("/metrics: HTTP 404")));

    // last_probe still reveals ambiguity without the gauge.
    PollResult q = recorded(QStringLiteral("ambiguous"));
    q.metricsBody.clear();
    q.metricsError = QStringLiteral("timed out");
    QCOMPARE(readSnapshot(q).health, Health::Alert);
}

void TestMonitorState::metricsMalformedKeepsEarlierSamples()
{
    PollResult p = recorded(QStringLiteral("ambiguous"));
    p.catalogBody = fixture(QStringLiteral("catalog-ok.json"));
    p.metricsBody += "this is { not prometheus\n";
    const StatusSnapshot s = readSnapshot(p);
    QVERIFY(s.reachable);
    QVERIFY2(s.error.contains(QLatin1String("line")), qPrintable(s.error));
    QCOMPARE(route(s, QStringLiteral("qwen3-8b"))->state, RouteState::Ambiguous);
}

void TestMonitorState::routeStatePriority_data()
{
    QTest::addColumn<QString>("discovery");
    QTest::addColumn<QString>("lastProbe");
    QTest::addColumn<bool>("gauge");
    QTest::addColumn<RouteState>("state");
    QTest::newRow("pinned") << "pinned"
                            << "" << false << RouteState::Ok;
    QTest::newRow("passthrough") << "passthrough"
                                 << "" << false << RouteState::Ok;
    QTest::newRow("discovered ok") << "discovered"
                                   << "ok" << false << RouteState::Ok;
    QTest::newRow("pending, no probe yet") << "pending"
                                           << "" << false << RouteState::Pending;
    QTest::newRow("pending + error") << "pending"
                                     << "error" << false << RouteState::ProbeError;
    QTest::newRow("discovered + error") << "discovered"
                                        << "error" << false << RouteState::ProbeError;
    QTest::newRow("pending + ambiguous") << "pending"
                                         << "ambiguous" << false << RouteState::Ambiguous;
    QTest::newRow("error + gauge") << "discovered"
                                   << "error" << true << RouteState::Ambiguous;
}

void TestMonitorState::routeStatePriority()
{
    QFETCH(QString, discovery);
    QFETCH(QString, lastProbe);
    QFETCH(bool, gauge);
    QFETCH(RouteState, state);
    slp::CatalogEntry e;
    e.id = QStringLiteral("m");
    e.discovery = discovery;
    e.lastProbe = lastProbe;
    QCOMPARE(routeStateOf(e, gauge), state);
}

void TestMonitorState::startupIsQuietUnlessAlert()
{
    for (const char *moment : {"ok", "attention", "recovered"}) {
        StatusModel model;
        const StatusUpdate u = model.apply(readSnapshot(recorded(QString::fromLatin1(moment))));
        QVERIFY(u.first);
        QVERIFY2(u.transitions.isEmpty(), qPrintable(kinds(u.transitions).join("; ")));
    }
}

void TestMonitorState::startupAmbiguous()
{
    StatusModel model;
    const StatusUpdate u = model.apply(readSnapshot(recorded(QStringLiteral("ambiguous"))));
    QCOMPARE(u.transitions.size(), 2);
    for (const Transition &t : u.transitions) {
        QCOMPARE(t.kind, Transition::Kind::BecameAmbiguous);
        QVERIFY(t.atStartup);
        QCOMPARE(t.upstreamModel, QStringLiteral("Qwen/Qwen3-8B"));
    }
    QCOMPARE(u.transitions[0].routeId, QStringLiteral("qwen3-8b"));
    QCOMPARE(u.transitions[1].routeId, QStringLiteral("qwen3-8b-edited"));
}

void TestMonitorState::startupUnreachable()
{
    StatusModel model;
    const StatusUpdate u = model.apply(readSnapshot(refused()));
    QCOMPARE(u.transitions.size(), 1);
    QCOMPARE(u.transitions[0].kind, Transition::Kind::Unreachable);
    QVERIFY(u.transitions[0].atStartup);
    QCOMPARE(u.transitions[0].detail, QStringLiteral("Connection refused"));
    QCOMPARE(u.snapshot.health, Health::Alert);
}

void TestMonitorState::recordedSequence()
{
    // The order the fixtures were recorded in, with repeated polls in between.
    StatusModel model;
    QVERIFY(model.apply(readSnapshot(recorded("attention"))).transitions.isEmpty());
    QVERIFY(model.apply(readSnapshot(recorded("attention"))).transitions.isEmpty());

    StatusUpdate u = model.apply(readSnapshot(recorded("ok")));
    QCOMPARE(u.transitions.size(), 1);
    QCOMPARE(u.transitions[0].kind, Transition::Kind::StateChanged);
    QCOMPARE(u.transitions[0].routeId, QStringLiteral("down-backend"));
    QCOMPARE(u.transitions[0].from, RouteState::ProbeError);
    QCOMPARE(u.transitions[0].to, RouteState::Ok);
    QCOMPARE(u.transitions[0].upstreamModel, QStringLiteral("Other/Model-B"));

    u = model.apply(readSnapshot(recorded("ambiguous")));
    QCOMPARE(countKind(u.transitions, Transition::Kind::BecameAmbiguous), 2);
    QCOMPARE(u.transitions.size(), 2);
    QVERIFY(!u.transitions[0].atStartup);

    // Still ambiguous on the next polls: nothing new.
    for (int i = 0; i < 3; ++i)
        QVERIFY(model.apply(readSnapshot(recorded("ambiguous"))).transitions.isEmpty());

    u = model.apply(readSnapshot(recorded("recovered")));
    QCOMPARE(u.transitions.size(), 2);
    QCOMPARE(countKind(u.transitions, Transition::Kind::Recovered), 2);
    QCOMPARE(u.transitions[0].from, RouteState::Ambiguous);
    QCOMPARE(u.transitions[0].to, RouteState::Ok);
    QVERIFY(model.apply(readSnapshot(recorded("recovered"))).transitions.isEmpty());
    QCOMPARE(model.current().health, Health::Ok);
}

void TestMonitorState::outageKeepsRoutesAndReportsOnce()
{
    StatusModel model;
    model.apply(readSnapshot(recorded("ok")));
    StatusUpdate u = model.apply(readSnapshot(refused()));
    QCOMPARE(u.transitions.size(), 1);
    QCOMPARE(u.transitions[0].kind, Transition::Kind::Unreachable);
    QVERIFY(!u.transitions[0].atStartup);
    QCOMPARE(u.snapshot.routes.size(), 4); // the last known routes, for the window
    QCOMPARE(u.snapshot.health, Health::Alert);

    QVERIFY(model.apply(readSnapshot(refused())).transitions.isEmpty());

    u = model.apply(readSnapshot(recorded("ok")));
    QCOMPARE(kinds(u.transitions), QStringList{QStringLiteral("SLP reachable again")});
    QCOMPARE(u.snapshot.health, Health::Ok);
}

void TestMonitorState::recoveryAcrossOutage()
{
    // Ambiguous, SLP restarts, comes back with the backend fixed: both facts are news.
    StatusModel model;
    model.apply(readSnapshot(recorded("ok")));
    model.apply(readSnapshot(recorded("ambiguous")));
    model.apply(readSnapshot(refused()));
    const StatusUpdate u = model.apply(readSnapshot(recorded("recovered")));
    QCOMPARE(countKind(u.transitions, Transition::Kind::Reachable), 1);
    QCOMPARE(countKind(u.transitions, Transition::Kind::Recovered), 2);

    // Started while SLP was down, it comes up ambiguous: reachable + ambiguous.
    StatusModel fresh;
    fresh.apply(readSnapshot(refused()));
    const StatusUpdate v = fresh.apply(readSnapshot(recorded("ambiguous")));
    QCOMPARE(countKind(v.transitions, Transition::Kind::Reachable), 1);
    QCOMPARE(countKind(v.transitions, Transition::Kind::BecameAmbiguous), 2);
}

void TestMonitorState::reloadAddsAndRemovesRoutes()
{
    StatusModel model;
    model.apply(readSnapshot(recorded("ok")));
    StatusSnapshot reloaded = readSnapshot(recorded("ok"));
    reloaded.routes.removeAt(1); // pinned-model gone
    RouteStatus added = reloaded.routes.first();
    added.entry.id = QStringLiteral("new-model");
    reloaded.routes << added;
    RouteStatus addedAmbiguous = added;
    addedAmbiguous.entry.id = QStringLiteral("new-ambiguous");
    addedAmbiguous.state = RouteState::Ambiguous;
    reloaded.routes << addedAmbiguous;

    const StatusUpdate u = model.apply(reloaded);
    QCOMPARE(kinds(u.transitions),
             (QStringList{QStringLiteral("route new-model added (ok)"),
                          QStringLiteral("route new-ambiguous became ambiguous (upstream "
                                         "Qwen/Qwen3-8B)"),
                          QStringLiteral("route pinned-model removed")}));
}

void TestMonitorState::resetMakesNextPollAStartup()
{
    StatusModel model;
    model.apply(readSnapshot(recorded("ok")));
    QVERIFY(model.hasPolled());
    model.reset();
    QVERIFY(!model.hasPolled());
    const StatusUpdate u = model.apply(readSnapshot(recorded("attention")));
    QVERIFY(u.first);
    QVERIFY(u.transitions.isEmpty());
}

QTEST_GUILESS_MAIN(TestMonitorState)
#include "tst_monitor_state.moc"
