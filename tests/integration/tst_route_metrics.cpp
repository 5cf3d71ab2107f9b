// SPDX-License-Identifier: GPL-3.0-or-later
// The per-route gauges and the overhead histogram, read back from the real daemon's /metrics:
// slp_upstream_consecutive_failures climbs with every failed attempt (refused, reset, timed
// out) and any response head, even a 500, resets it; slp_route_inflight_requests counts a
// request while it is forwarded; slp_overhead_seconds observes once per answered request.
// Every per-route series exists at 0 from start-up, so an alert rule sees a route before
// its first request.
#include "prometheustext.h"
#include "testsupport.h"

#include <QDeadlineTimer>
#include <QtTest>

using namespace slp::test;

class TestRouteMetrics : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void seriesExistFromStartup();
    void refusedClimbsOnePerAttempt();
    void resetAndTimeoutCountAndAnyHeadResets();
    void inflightPerRoute();
    void overheadObservedPerAnsweredRequest();

private:
    // One sample of the daemon's /metrics, or -1 when absent (every value here is >= 0).
    double sample(const QString &name, const slp::PromLabels &labels = {});
    double failures(const QString &route)
    {
        return sample(QStringLiteral("slp_upstream_consecutive_failures"), {{"model_id", route}});
    }
    int post(const QString &model, const HeaderList &extra = {});

    DeadPort m_deadPort; // held for the whole suite: connections to it are refused
    MockUpstream m_mock;
    SlpDaemon m_slp;
};

void TestRouteMetrics::initTestCase()
{
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY2(!MockUpstream::binary().isEmpty(), "set SLP_MOCK_BIN");
    QVERIFY2(m_mock.start(), qPrintable(m_mock.errorString()));
    const quint16 closed = m_deadPort.port();
    QVERIFY(closed > 0);
    // Pinned models: no discovery probe adds to what the tests count.
    QVERIFY2(m_slp.start(QStringLiteral(R"(backends:
  - name: flaky
    url: %1
    model: flaky-upstream
    timeout: 500ms
  - name: refused
    url: http://127.0.0.1:%2
    model: refused-upstream
    timeout: 5s
  - name: refused-retry
    url: http://127.0.0.1:%2
    model: refused-upstream
    retry: true
  - name: slow
    url: %1
    model: slow-upstream
    timeout: 10s
)")
                             .arg(m_mock.url())
                             .arg(closed)),
             qPrintable(m_slp.errorString()));
}

void TestRouteMetrics::cleanupTestCase()
{
    m_slp.stop();
    m_mock.stop();
}

double TestRouteMetrics::sample(const QString &name, const slp::PromLabels &labels)
{
    const HttpResult r = httpRequest("GET", m_slp.url() + "/metrics");
    if (r.status != 200)
        return -2;
    const slp::PromParseResult parsed = slp::parsePromText(r.body);
    if (!parsed.error.isEmpty())
        qWarning("/metrics does not parse: %s", qPrintable(parsed.error));
    return slp::findPromSample(parsed.samples, name, labels).value_or(-1);
}

int TestRouteMetrics::post(const QString &model, const HeaderList &extra)
{
    HeaderList headers{{"Content-Type", "application/json"}};
    headers << extra;
    const HttpResult r =
        httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                    QStringLiteral(R"({"model":"%1"})").arg(model).toUtf8(), headers, 15000);
    return r.status;
}

void TestRouteMetrics::seriesExistFromStartup()
{
    for (const char *route : {"flaky", "refused", "refused-retry", "slow"}) {
        QCOMPARE(failures(QLatin1String(route)), 0.0);
        QCOMPARE(sample(QStringLiteral("slp_route_inflight_requests"), {{"model_id", route}}), 0.0);
    }
    const HttpResult r = httpRequest("GET", m_slp.url() + "/metrics");
    QVERIFY(r.body.contains("# TYPE slp_overhead_seconds histogram\n"));
    QVERIFY(r.body.contains("# TYPE slp_upstream_consecutive_failures gauge\n"));
    QVERIFY(r.body.contains("# TYPE slp_route_inflight_requests gauge\n"));
}

void TestRouteMetrics::refusedClimbsOnePerAttempt()
{
    for (int n = 1; n <= 3; ++n) {
        QCOMPARE(post(QStringLiteral("refused")), 502);
        QCOMPARE(failures(QStringLiteral("refused")), double(n));
    }
    // retry: true makes two attempts of one request, and both failed.
    QCOMPARE(post(QStringLiteral("refused-retry")), 502);
    QCOMPARE(failures(QStringLiteral("refused-retry")), 2.0);
    QCOMPARE(failures(QStringLiteral("flaky")), 0.0); // per route
}

void TestRouteMetrics::resetAndTimeoutCountAndAnyHeadResets()
{
    QCOMPARE(post(QStringLiteral("flaky"), {{"X-Mock-Reset-Before-Head", "1"}}), 502);
    QCOMPARE(failures(QStringLiteral("flaky")), 1.0);
    QCOMPARE(post(QStringLiteral("flaky"), {{"X-Mock-Reset-Before-Head", "1"}}), 502);
    QCOMPARE(failures(QStringLiteral("flaky")), 2.0);
    // timeout: 500ms, the mock answers after 2 s: a timed-out attempt is a failure too.
    QCOMPARE(post(QStringLiteral("flaky"), {{"X-Mock-Delay-Ms", "2000"}}), 502);
    QCOMPARE(failures(QStringLiteral("flaky")), 3.0);
    // The backend answers, with an error of its own: it is there, the run is over.
    QCOMPARE(post(QStringLiteral("flaky"), {{"X-Mock-Status", "500"}}), 500);
    QCOMPARE(failures(QStringLiteral("flaky")), 0.0);
    QCOMPARE(post(QStringLiteral("flaky"), {{"X-Mock-Reset-Before-Head", "1"}}), 502);
    QCOMPARE(failures(QStringLiteral("flaky")), 1.0);
    QCOMPARE(post(QStringLiteral("flaky")), 200);
    QCOMPARE(failures(QStringLiteral("flaky")), 0.0);
}

void TestRouteMetrics::inflightPerRoute()
{
    RawConnection slow;
    QVERIFY(slow.connectTo(m_slp.host(), m_slp.port()));
    const QByteArray body = R"({"model":"slow"})";
    QVERIFY(slow.send("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "Content-Type: application/json\r\nX-Mock-Delay-Ms: 1500\r\n"
                      "Content-Length: " +
                      QByteArray::number(body.size()) + "\r\n\r\n" + body));
    const slp::PromLabels slowRoute{{"model_id", "slow"}};
    QDeadlineTimer deadline(5000);
    while (sample(QStringLiteral("slp_route_inflight_requests"), slowRoute) != 1.0) {
        QVERIFY2(!deadline.hasExpired(), "slp_route_inflight_requests{model_id=\"slow\"} never 1");
        pumpEvents(20);
    }
    QCOMPARE(sample(QStringLiteral("slp_route_inflight_requests"), {{"model_id", "flaky"}}), 0.0);
    const HttpResult r = slow.readResponse(10000);
    QCOMPARE(r.status, 200);
    deadline.setRemainingTime(5000);
    while (sample(QStringLiteral("slp_route_inflight_requests"), slowRoute) != 0.0) {
        QVERIFY2(!deadline.hasExpired(), "slp_route_inflight_requests{model_id=\"slow\"} stays");
        pumpEvents(20);
    }
}

void TestRouteMetrics::overheadObservedPerAnsweredRequest()
{
    const double before = sample(QStringLiteral("slp_overhead_seconds_count"));
    QVERIFY(before >= 0);
    constexpr int kRequests = 5;
    for (int i = 0; i < kRequests; ++i)
        QCOMPARE(post(QStringLiteral("slow")), 200);
    QCOMPARE(post(QStringLiteral("refused")), 502); // no upstream head: not observed
    QCOMPARE(sample(QStringLiteral("slp_overhead_seconds_count")), before + kRequests);
    // Microseconds to a few milliseconds each, nowhere near the mock's own time; the top
    // bucket is 100 ms, and a busy CI box stays well under it.
    QCOMPARE(sample(QStringLiteral("slp_overhead_seconds_bucket"), {{"le", "0.1"}}),
             before + kRequests);
    const double sum = sample(QStringLiteral("slp_overhead_seconds_sum"));
    QVERIFY2(sum > 0 && sum < 0.1 * (before + kRequests), qPrintable(QString::number(sum)));
}

QTEST_MAIN(TestRouteMetrics)
#include "tst_route_metrics.moc"
