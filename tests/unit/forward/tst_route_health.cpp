// SPDX-License-Identifier: GPL-3.0-or-later
// A route's passive state, every transition both ways: ok -> failing after 3 attempts failed
// before a head and back on any head; ok -> stalled after 3 started responses were cut and
// back on a completed one; ok -> slow after 5 heads over half the timeout and back on a fast
// head; which state wins when several hold; what a client that leaves changes (nothing); the
// board's slp_route_state series; and what an Outcome reports.
#include "forward/outcome.h"
#include "forward/routehealth.h"
#include "observe/metrics.h"

#include <QtTest>

using namespace std::chrono_literals;
using namespace slp;

namespace {

constexpr auto kTimeout = 10s;

HealthReport failedBeforeHead(int attempts = 1)
{
    HealthReport r;
    r.failedAttempts = attempts;
    r.failure =
        RouteFailure{QDateTime::currentDateTimeUtc(), u"connection refused"_qs, u"slpq1"_qs};
    return r;
}

HealthReport response(HealthReport::Body body, std::chrono::milliseconds latency = 100ms)
{
    HealthReport r;
    r.headArrived = true;
    r.headLatency = latency;
    r.body = body;
    if (body == HealthReport::Body::Cut)
        r.failure = RouteFailure{QDateTime::currentDateTimeUtc(),
                                 u"stream idle 30s after 10 bytes"_qs, u"up-7"_qs};
    return r;
}

} // namespace

class TestRouteHealth : public QObject
{
    Q_OBJECT

private slots:
    void failingAndBack();
    void retriesCountAsAttempts();
    void stalledAndBack();
    void slowAndBack();
    void failingWinsOverStalledOverSlow();
    void clientLeavingChangesNothing();
    void boardPublishesOneStateAtATime();
    void boardTracksTheTable();
    void outcomeReports_data();
    void outcomeReports();
};

void TestRouteHealth::failingAndBack()
{
    RouteHealth h;
    h.record(failedBeforeHead(), kTimeout);
    h.record(failedBeforeHead(), kTimeout);
    QCOMPARE(h.state(), RouteState::Ok);
    h.record(failedBeforeHead(), kTimeout);
    QCOMPARE(h.state(), RouteState::Failing);
    QCOMPARE(h.lastFailure()->what, u"connection refused"_qs);
    h.record(response(HealthReport::Body::Completed), kTimeout);
    QCOMPARE(h.state(), RouteState::Ok);
    QVERIFY(h.lastFailure()); // the last failure stays shown after recovery
}

void TestRouteHealth::retriesCountAsAttempts()
{
    RouteHealth h;
    h.record(failedBeforeHead(2), kTimeout); // an exchange with retry: true, both attempts failed
    QCOMPARE(h.state(), RouteState::Ok);
    h.record(failedBeforeHead(1), kTimeout);
    QCOMPARE(h.state(), RouteState::Failing);
    // A re-dial that got a head: the failed first attempt does not keep the run going.
    HealthReport redial = response(HealthReport::Body::Completed);
    redial.failedAttempts = 1;
    h.record(redial, kTimeout);
    QCOMPARE(h.state(), RouteState::Ok);
}

void TestRouteHealth::stalledAndBack()
{
    RouteHealth h;
    for (int i = 0; i < 2; ++i)
        h.record(response(HealthReport::Body::Cut), kTimeout);
    QCOMPARE(h.state(), RouteState::Ok);
    h.record(response(HealthReport::Body::Cut), kTimeout);
    QCOMPARE(h.state(), RouteState::Stalled);
    QCOMPARE(h.lastFailure()->requestId, u"up-7"_qs);
    h.record(response(HealthReport::Body::None), kTimeout); // a head with no body: no change
    QCOMPARE(h.state(), RouteState::Stalled);
    h.record(response(HealthReport::Body::Completed), kTimeout);
    QCOMPARE(h.state(), RouteState::Ok);
}

void TestRouteHealth::slowAndBack()
{
    RouteHealth h;
    for (int i = 0; i < 4; ++i)
        h.record(response(HealthReport::Body::Completed, 6s), kTimeout);
    QCOMPARE(h.state(), RouteState::Ok);
    h.record(response(HealthReport::Body::Completed, 5s), kTimeout); // exactly half: not slow
    QCOMPARE(h.state(), RouteState::Ok);
    for (int i = 0; i < 5; ++i)
        h.record(response(HealthReport::Body::Completed, 6s), kTimeout);
    QCOMPARE(h.state(), RouteState::Slow);
    h.record(response(HealthReport::Body::Completed, 1s), kTimeout);
    QCOMPARE(h.state(), RouteState::Ok);
}

void TestRouteHealth::failingWinsOverStalledOverSlow()
{
    RouteHealth h;
    for (int i = 0; i < 5; ++i)
        h.record(response(HealthReport::Body::Cut, 6s), kTimeout);
    QCOMPARE(h.state(), RouteState::Stalled); // slow too, but stalled says more
    for (int i = 0; i < 3; ++i)
        h.record(failedBeforeHead(), kTimeout);
    QCOMPARE(h.state(), RouteState::Failing);
}

void TestRouteHealth::clientLeavingChangesNothing()
{
    RouteHealth h;
    for (int i = 0; i < 3; ++i)
        h.record(response(HealthReport::Body::Cut), kTimeout);
    h.record(response(HealthReport::Body::ClientLeft), kTimeout);
    QCOMPARE(h.state(), RouteState::Stalled);
}

void TestRouteHealth::boardPublishesOneStateAtATime()
{
    MetricsRegistry metrics;
    declareSlpMetrics(metrics);
    RouteHealthBoard board(&metrics);
    board.track({u"a"_qs});
    const auto series = [&metrics](const char *state) {
        return metrics.value(metric::routeState, {{u"model_id"_qs, u"a"_qs},
                                                  {u"state"_qs, QString::fromLatin1(state)}});
    };
    QCOMPARE(series("ok"), 1.0);
    QCOMPARE(series("failing"), 0.0);
    for (int i = 0; i < 3; ++i)
        board.record(u"a"_qs, kTimeout, failedBeforeHead());
    QCOMPARE(board.state(u"a"_qs), RouteState::Failing);
    QCOMPARE(series("ok"), 0.0);
    QCOMPARE(series("failing"), 1.0);
    QCOMPARE(series("stalled") + series("slow"), 0.0);
    QCOMPARE(board.lastFailure(u"a"_qs)->what, u"connection refused"_qs);
}

void TestRouteHealth::boardTracksTheTable()
{
    MetricsRegistry metrics;
    declareSlpMetrics(metrics);
    RouteHealthBoard board(&metrics);
    board.track({u"a"_qs, u"b"_qs});
    for (int i = 0; i < 3; ++i)
        board.record(u"b"_qs, kTimeout, failedBeforeHead());
    board.track({u"a"_qs}); // b left the config on a reload
    QVERIFY(!metrics.render().contains("model_id=\"b\""));
    QCOMPARE(board.state(u"b"_qs), RouteState::Ok);
    QVERIFY(!board.lastFailure(u"b"_qs));
}

void TestRouteHealth::outcomeReports_data()
{
    QTest::addColumn<int>("ending");
    QTest::addColumn<bool>("head");
    QTest::addColumn<int>("body");
    QTest::addColumn<bool>("failure");
    using B = HealthReport::Body;
    QTest::newRow("completed") << int(Ending::Completed) << true << int(B::Completed) << false;
    QTest::newRow("refused 400") << int(Ending::Refused) << false << int(B::None) << false;
    QTest::newRow("502 before a head")
        << int(Ending::UpstreamFailed) << false << int(B::None) << true;
    QTest::newRow("closed mid-body") << int(Ending::UpstreamClosed) << true << int(B::Cut) << true;
    QTest::newRow("reset mid-body") << int(Ending::UpstreamReset) << true << int(B::Cut) << true;
    QTest::newRow("idle") << int(Ending::IdleTimeout) << true << int(B::Cut) << true;
    QTest::newRow("aggregate 502") << int(Ending::AggregateFailed) << true << int(B::Cut) << true;
    QTest::newRow("client left") << int(Ending::ClientGone) << true << int(B::ClientLeft) << false;
}

void TestRouteHealth::outcomeReports()
{
    QFETCH(int, ending);
    QFETCH(bool, head);
    QFETCH(int, body);
    QFETCH(bool, failure);
    Outcome o;
    o.ending = Ending(ending);
    o.latencyNs = head ? 2'000'000 : -1;
    o.what = u"what"_qs;
    o.clientRequestId = "slpq9";
    const HealthReport r = healthReportOf(o);
    QCOMPARE(r.headArrived, head);
    QCOMPARE(int(r.body), body);
    QCOMPARE(bool(r.failure), failure);
    if (failure)
        QCOMPARE(r.failure->requestId, u"slpq9"_qs);
}

QTEST_GUILESS_MAIN(TestRouteHealth)
#include "tst_route_health.moc"
