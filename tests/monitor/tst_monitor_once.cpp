// SPDX-License-Identifier: GPL-3.0-or-later
// `slp-monitor --once`: after the route lines, each route that is not ok with its state and
// last failure (UTC time, sentence, request id), in a format scripts can rely on.
#include "glancefixture.h"
#include "statustext.h"

#include <QtTest>

using namespace slp::monitor;
using namespace slp::monitor::test;

class TestMonitorOnce : public QObject
{
    Q_OBJECT

private slots:
    void everyRouteOk();
    void routesNotOk();
    void olderSlp();
};

void TestMonitorOnce::everyRouteOk()
{
    const StatusSnapshot s = snapshotAt(0, {{"a", "ok"}, {"b", "ok"}});
    QVERIFY(failureReport(s).isEmpty());
    QVERIFY(!onceReport(s).contains(QStringLiteral("not ok")));
}

void TestMonitorOnce::routesNotOk()
{
    FakeRoute a{"a", "failing"};
    a.failed = 3;
    a.failure = failureAt(0, QStringLiteral("connection refused"),
                          QStringLiteral("slpq0123456789abcdef01234567"));
    FakeRoute c{"c-long-id", "stalled"};
    c.ok = 5;
    c.failure = failureAt(-90, QStringLiteral("stream idle 30s after 1834 bytes"), QString());
    // An ok route with an old failure is not listed: ok is ok.
    FakeRoute d{"d", "ok"};
    d.failure = failureAt(-9000, QStringLiteral("timed out after 60s"), QStringLiteral("r1"));
    const StatusSnapshot s = snapshotAt(0, {a, {"b", "slow"}, c, d});
    const QString expected =
        QStringLiteral("SLP http://127.0.0.1:8080: attention: 1 failing, 1 stalled, 1 slow\n"
                       "  a          failing      3 requests, 3 failed  A (pinned)\n"
                       "  b          slow         0 requests, 0 failed  B (pinned)\n"
                       "  c-long-id  stalled      5 requests, 0 failed  C-LONG-ID (pinned)\n"
                       "  d          ok           0 requests, 0 failed  D (pinned)\n"
                       "routes not ok:\n"
                       "  a: failing; last failure 2027-01-15T08:00:00Z: connection refused "
                       "(request id slpq0123456789abcdef01234567)\n"
                       "  b: slow; no failure reported\n"
                       "  c-long-id: stalled; last failure 2027-01-15T07:58:30Z: stream idle "
                       "30s after 1834 bytes (request id none)\n");
    QCOMPARE(onceReport(s), expected);
    QCOMPARE(onceExitCode(s.health), 1);
}

void TestMonitorOnce::olderSlp()
{
    FakeRoute a{"a"};
    a.consecutive = 3;
    QCOMPARE(failureReport(snapshotAt(0, {a, {"b"}})),
             QStringLiteral("routes not ok:\n"
                            "  a: backend failing: 3 attempts in a row; no failure reported\n"));
}

QTEST_APPLESS_MAIN(TestMonitorOnce)
#include "tst_monitor_once.moc"
