// SPDX-License-Identifier: GPL-3.0-or-later
// Traffic from /metrics deltas between polls: requests per minute, 5xx in the interval, the
// time-to-first-byte median interpolated inside histogram buckets as Prometheus'
// histogram_quantile does, the hour of history, and SLP restarts (counters back at 0) that
// must never produce negative rates. Also the failing-backend state read from the gauge.
#include "noticepolicy.h"
#include "status.h"
#include "statusmodel.h"
#include "statustext.h"
#include "traffic.h"

#include <QtTest>

using namespace slp::monitor;

namespace {

const QByteArray kCatalog = R"({"object":"list","data":[
{"id":"a","object":"model","created":1,"owned_by":"slp","upstream_model":"A-1","discovery":"pinned","timeout":"1m0s","retry":false,"aggregate":false},
{"id":"b","object":"model","created":1,"owned_by":"slp","upstream_model":"B-1","discovery":"pinned","timeout":"1m0s","retry":false,"aggregate":false}]})";

// One route's share of /metrics.
struct Route
{
    Route(const char *routeId, int okCount = 0, int failedCount = 0, int notFoundCount = 0,
          QList<QPair<QString, int>> bucketCounts = {}, int consecutiveFailures = 0,
          int inflightNow = 0)
        : id(QString::fromLatin1(routeId)), ok(okCount), failed(failedCount),
          notFound(notFoundCount), buckets(std::move(bucketCounts)),
          consecutive(consecutiveFailures), inflight(inflightNow)
    {}
    QString id;
    int ok;                             // code 200
    int failed;                         // code 502
    int notFound;                       // code 404: answered, not failed
    QList<QPair<QString, int>> buckets; // le -> cumulative; +Inf added from the last
    int consecutive;
    int inflight;
};

QByteArray metricsText(const QList<Route> &routes)
{
    QByteArray out = "# TYPE slp_requests_total counter\n";
    for (const Route &r : routes) {
        const QByteArray id = r.id.toUtf8();
        out += "slp_requests_total{model_id=\"" + id + "\",code=\"200\"} " +
               QByteArray::number(r.ok) + "\n";
        out += "slp_requests_total{model_id=\"" + id + "\",code=\"502\"} " +
               QByteArray::number(r.failed) + "\n";
        out += "slp_requests_total{model_id=\"" + id + "\",code=\"404\"} " +
               QByteArray::number(r.notFound) + "\n";
    }
    out += "# TYPE slp_upstream_latency_seconds histogram\n";
    for (const Route &r : routes) {
        const QByteArray id = r.id.toUtf8();
        int total = 0;
        for (const auto &[le, n] : r.buckets) {
            out += "slp_upstream_latency_seconds_bucket{model_id=\"" + id + "\",le=\"" +
                   le.toUtf8() + "\"} " + QByteArray::number(n) + "\n";
            total = n;
        }
        out += "slp_upstream_latency_seconds_bucket{model_id=\"" + id + "\",le=\"+Inf\"} " +
               QByteArray::number(total) + "\n";
    }
    out += "# TYPE slp_upstream_consecutive_failures gauge\n";
    for (const Route &r : routes)
        out += "slp_upstream_consecutive_failures{model_id=\"" + r.id.toUtf8() + "\"} " +
               QByteArray::number(r.consecutive) + "\n";
    out += "# TYPE slp_route_inflight_requests gauge\n";
    for (const Route &r : routes)
        out += "slp_route_inflight_requests{model_id=\"" + r.id.toUtf8() + "\"} " +
               QByteArray::number(r.inflight) + "\n";
    return out;
}

const QDateTime kT0 = QDateTime::fromSecsSinceEpoch(1'800'000'000, Qt::UTC);

StatusSnapshot snapshotAt(qint64 seconds, const QList<Route> &routes)
{
    PollResult p;
    p.baseUrl = QUrl(QStringLiteral("http://127.0.0.1:8080"));
    p.finishedAt = kT0.addSecs(seconds);
    p.catalogBody = kCatalog;
    p.metricsBody = metricsText(routes);
    return readSnapshot(p);
}

const RouteStatus &route(const StatusSnapshot &s, const QString &id)
{
    for (const RouteStatus &r : s.routes)
        if (r.entry.id == id)
            return r;
    qFatal("no route %s", qPrintable(id));
}

bool near(double a, double b)
{
    return qAbs(a - b) < 1e-9;
}

} // namespace

class TestMonitorTraffic : public QObject
{
    Q_OBJECT

private slots:
    void counterIncreaseSurvivesRestart();
    void quantileAsPrometheus_data();
    void quantileAsPrometheus();
    void bucketIncreaseAndRestart();
    void readsCountersAndGauges();
    void ratesBetweenPolls();
    void restartNeverNegative();
    void historyKeepsAnHour();
    void failingIsAttentionAndNamed();
    void failingTransitionsNotifyOnce();
    void onceReportShowsTotals();
};

void TestMonitorTraffic::counterIncreaseSurvivesRestart()
{
    QCOMPARE(counterIncrease(10, 15), 5.0);
    QCOMPARE(counterIncrease(10, 10), 0.0);
    QCOMPARE(counterIncrease(100, 3), 3.0); // restarted: 3 since
    QCOMPARE(counterIncrease(0, 0), 0.0);
}

void TestMonitorTraffic::quantileAsPrometheus_data()
{
    QTest::addColumn<double>("q");
    QTest::addColumn<Buckets>("buckets");
    QTest::addColumn<double>("expected"); // -1: none
    const double inf = qInf();
    // 10 observations: 4 in (0, 0.1], 4 in (0.1, 0.5], 2 in (0.5, 1].
    const Buckets b{{0.1, 4}, {0.5, 8}, {1, 10}, {inf, 10}};
    QTest::newRow("median inside 2nd") << 0.5 << b << 0.1 + 0.4 * (5.0 - 4) / 4;
    QTest::newRow("p90 inside 3rd") << 0.9 << b << 0.5 + 0.5 * (9.0 - 8) / 2;
    QTest::newRow("inside 1st from 0") << 0.2 << b << 0.1 * 2 / 4;
    QTest::newRow("q=1 top of last finite") << 1.0 << b << 1.0;
    QTest::newRow("rank in +Inf") << 0.99 << Buckets{{0.1, 1}, {inf, 10}} << 0.1;
    QTest::newRow("empty") << 0.5 << Buckets{{0.1, 0}, {inf, 0}} << -1.0;
    QTest::newRow("no +Inf") << 0.5 << Buckets{{0.1, 3}, {1, 3}} << -1.0;
    QTest::newRow("q out of range") << 1.5 << b << -1.0;
}

void TestMonitorTraffic::quantileAsPrometheus()
{
    QFETCH(double, q);
    QFETCH(Buckets, buckets);
    QFETCH(double, expected);
    const std::optional<double> got = histogramQuantile(q, buckets);
    if (expected < 0) {
        QVERIFY(!got);
        return;
    }
    QVERIFY(got);
    QVERIFY2(near(*got, expected), qPrintable(QStringLiteral("%1 != %2").arg(*got).arg(expected)));
}

void TestMonitorTraffic::bucketIncreaseAndRestart()
{
    const double inf = qInf();
    const Buckets before{{0.1, 4}, {1, 6}, {inf, 7}};
    const Buckets after{{0.1, 5}, {1, 9}, {inf, 12}};
    QCOMPARE(bucketIncrease(before, after), (Buckets{{0.1, 1}, {1, 3}, {inf, 5}}));
    const Buckets restarted{{0.1, 1}, {1, 1}, {inf, 2}};
    QCOMPARE(bucketIncrease(before, restarted), restarted);
    QCOMPARE(bucketIncrease({}, after), after);
}

void TestMonitorTraffic::readsCountersAndGauges()
{
    const StatusSnapshot s =
        snapshotAt(0, {{"a", 7, 2, 5, {{"0.1", 3}, {"1", 9}}, 0, 2}, {"b", 0, 0, 0, {}, 3, 0}});
    QVERIFY2(s.error.isEmpty(), qPrintable(s.error));
    const RouteStatus &a = route(s, "a");
    QCOMPARE(a.counters.requests, 14.0); // every code
    QCOMPARE(a.counters.failed, 2.0);    // 5xx only: a 404 is an answer
    QCOMPARE(a.counters.latency.size(), 3);
    QVERIFY(std::isinf(a.counters.latency.last().first));
    QCOMPARE(a.inflight, 2.0);
    QCOMPARE(a.consecutiveFailures, 0);
    QVERIFY(!a.traffic.measured); // one poll: nothing to compare with
    QCOMPARE(route(s, "b").consecutiveFailures, 3);
}

void TestMonitorTraffic::ratesBetweenPolls()
{
    StatusModel model;
    model.apply(snapshotAt(0, {{"a", 10, 1, 0, {{"0.1", 4}, {"1", 11}}, 0, 0}, {"b"}}));
    // 30 s later: a got 30 more answers (6 of them 502), 20 with a head in (0.1, 1].
    const StatusUpdate u = model.apply(
        snapshotAt(30, {{"a", 34, 7, 0, {{"0.1", 4}, {"1", 31}}, 0, 1}, {"b", 0, 0, 0, {}, 0, 0}}));
    const RouteStatus &a = route(u.snapshot, "a");
    QVERIFY(a.traffic.measured);
    QCOMPARE(a.traffic.requests, 30.0);
    QCOMPARE(a.traffic.failed, 6.0);
    QCOMPARE(a.traffic.requestsPerMinute, 60.0);
    QVERIFY(a.traffic.ttfbP50);
    QVERIFY2(near(*a.traffic.ttfbP50, 0.1 + 0.9 * 10.0 / 20),
             qPrintable(QString::number(*a.traffic.ttfbP50)));
    const RouteStatus &b = route(u.snapshot, "b");
    QVERIFY(b.traffic.measured);
    QCOMPARE(b.traffic.requestsPerMinute, 0.0);
    QVERIFY(!b.traffic.ttfbP50); // no request: no median
    QCOMPARE(trafficHeadline(u.snapshot),
             QStringLiteral("2 routes \u00b7 60 req/min \u00b7 6 failed"));
    QCOMPARE(u.snapshot.history.size(), 1);
    QCOMPARE(u.snapshot.history.first().requests, 30.0);
    QCOMPARE(formatPerMinute(a.traffic), QStringLiteral("60"));
    QCOMPARE(formatSeconds(0.55), QStringLiteral("550 ms"));
    QCOMPARE(formatSeconds(std::nullopt), QStringLiteral("\u2014"));
}

void TestMonitorTraffic::restartNeverNegative()
{
    StatusModel model;
    model.apply(snapshotAt(0, {{"a", 500, 20, 0, {{"0.1", 300}, {"1", 520}}, 0, 0}, {"b"}}));
    // slp restarted between the polls: 4 answers since, one 502.
    const StatusUpdate u =
        model.apply(snapshotAt(10, {{"a", 3, 1, 0, {{"0.1", 3}, {"1", 4}}, 0, 0}, {"b"}}));
    const RouteStatus &a = route(u.snapshot, "a");
    QCOMPARE(a.traffic.requests, 4.0);
    QCOMPARE(a.traffic.failed, 1.0);
    QCOMPARE(a.traffic.requestsPerMinute, 24.0);
    QVERIFY(a.traffic.ttfbP50 && *a.traffic.ttfbP50 >= 0 && *a.traffic.ttfbP50 <= 0.1);
    for (const TrafficPoint &p : u.snapshot.history)
        QVERIFY(p.requests >= 0 && p.failed >= 0);
}

void TestMonitorTraffic::historyKeepsAnHour()
{
    StatusModel model;
    StatusUpdate u;
    // A poll a minute for two hours, two requests each.
    for (int minute = 0; minute <= 120; ++minute)
        u = model.apply(snapshotAt(minute * 60, {{"a", minute * 2}, {"b"}}));
    QCOMPARE(u.snapshot.history.size(), 61); // the last hour, both ends included
    QCOMPARE(u.snapshot.history.first().at, kT0.addSecs(60 * 60));
    for (const TrafficPoint &p : u.snapshot.history)
        QCOMPARE(p.requests, 2.0);
    // An outage keeps the history; another SLP (reset) starts afresh.
    PollResult down;
    down.catalogError = QStringLiteral("Connection refused");
    down.finishedAt = kT0.addSecs(121 * 60);
    QCOMPARE(model.apply(readSnapshot(down)).snapshot.history.size(), 61);
    model.reset();
    QVERIFY(model.apply(snapshotAt(122 * 60, {{"a", 10}, {"b"}})).snapshot.history.isEmpty());
}

void TestMonitorTraffic::failingIsAttentionAndNamed()
{
    const StatusSnapshot s = snapshotAt(0, {{"a"}, {"b", 0, 3, 0, {}, 3, 0}});
    QCOMPARE(s.health, Health::Attention);
    QCOMPARE(s.failingCount(), 1);
    QCOMPARE(headline(s), QStringLiteral("attention: 1 backend failing"));
    QCOMPARE(routeLine(route(s, "b")),
             QStringLiteral("b \u2192 B-1: backend failing: 3 attempts in a row"));
    QCOMPARE(routeLine(route(s, "a")), QStringLiteral("a \u2192 A-1: ok"));
    QCOMPARE(onceExitCode(s.health), 1);
    // One failed attempt is enough.
    QCOMPARE(snapshotAt(0, {{"a", 0, 0, 0, {}, 1, 0}, {"b"}}).health, Health::Attention);
}

void TestMonitorTraffic::failingTransitionsNotifyOnce()
{
    StatusModel model;
    QStringList seen;
    const auto poll = [&](qint64 t, int failuresOfB) {
        const StatusUpdate u =
            model.apply(snapshotAt(t, {{"a"}, {"b", 0, 0, 0, {}, failuresOfB, 0}}));
        for (const Notice &n : noticesFor(u))
            seen << n.title;
    };
    poll(0, 0);
    poll(10, 0);
    QVERIFY(seen.isEmpty());
    poll(20, 1); // starts failing
    poll(30, 2); // still failing, more attempts: nothing new
    poll(40, 5);
    QCOMPARE(seen, QStringList{QStringLiteral("SLP: backend of b failing")});
    poll(50, 0); // answers again: one poll is not yet a recovery
    QCOMPARE(seen, QStringList{QStringLiteral("SLP: backend of b failing")});
    poll(60, 0); // the second healthy poll in a row is
    poll(70, 0);
    QCOMPARE(seen, (QStringList{QStringLiteral("SLP: backend of b failing"),
                                QStringLiteral("SLP: backend of b answers again")}));

    // Flapping, every other poll: one episode, no pair of notices per flap.
    seen.clear();
    for (int i = 0; i < 10; ++i)
        poll(80 + i * 10, i % 2 == 0 ? 1 : 0);
    QCOMPARE(seen, QStringList{QStringLiteral("SLP: backend of b failing")});
    poll(180, 0);
    poll(190, 0);
    QCOMPARE(seen, (QStringList{QStringLiteral("SLP: backend of b failing"),
                                QStringLiteral("SLP: backend of b answers again")}));

    // Found failing at start-up: attention, not news (the same rule as a pending route).
    StatusModel fresh;
    const StatusUpdate first =
        fresh.apply(snapshotAt(0, {{"a", 0, 0, 0, {}, 4, 0}, {"b", 0, 0, 0, {}, 4, 0}}));
    QVERIFY(noticesFor(first).isEmpty());
    // ... but its recovery is news (a answers for two polls; b keeps failing).
    QVERIFY(noticesFor(fresh.apply(snapshotAt(10, {{"a"}, {"b", 0, 0, 0, {}, 4, 0}}))).isEmpty());
    const QList<Notice> back =
        noticesFor(fresh.apply(snapshotAt(20, {{"a"}, {"b", 0, 0, 0, {}, 4, 0}})));
    QCOMPARE(back.size(), 1);
    QCOMPARE(back.first().title, QStringLiteral("SLP: backend of a answers again"));
    // Two routes failing in one poll share one notice.
    StatusModel both;
    both.apply(snapshotAt(0, {{"a"}, {"b"}}));
    const QList<Notice> notices = noticesFor(
        both.apply(snapshotAt(10, {{"a", 0, 0, 0, {}, 1, 0}, {"b", 0, 0, 0, {}, 2, 0}})));
    QCOMPARE(notices.size(), 1);
    QCOMPARE(notices.first().title, QStringLiteral("SLP: 2 backends failing"));
    QCOMPARE(notices.first().routeIds, (QStringList{"a", "b"}));
    QVERIFY(notices.first().body.contains(QStringLiteral("b \u2192 B-1: 2 attempts in a row")));
}

void TestMonitorTraffic::onceReportShowsTotals()
{
    const StatusSnapshot s = snapshotAt(0, {{"a", 118, 2, 0, {}, 0, 0}, {"b", 0, 3, 0, {}, 3, 0}});
    const QString report = onceReport(s);
    QVERIFY2(report.contains(QStringLiteral("120 requests, 2 failed")), qPrintable(report));
    QVERIFY2(report.contains(QStringLiteral("3 requests, 3 failed")), qPrintable(report));
    QVERIFY2(report.contains(QStringLiteral("backend failing: 3 attempts in a row")),
             qPrintable(report));
    QCOMPARE(totalsText(RouteCounters{1, 0, {}}), QStringLiteral("1 request, 0 failed"));
}

QTEST_APPLESS_MAIN(TestMonitorTraffic)
#include "tst_monitor_traffic.moc"
