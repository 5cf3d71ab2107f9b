// SPDX-License-Identifier: GPL-3.0-or-later
// The details pane's words: what a route's state means, its last failure's sentence, when
// (local time and how long ago), the request id, and which route the pane explains.
#include "glancefixture.h"
#include "routedetails.h"

#include <QtTest>

using namespace slp::monitor;
using namespace slp::monitor::test;

class TestMonitorDetails : public QObject
{
    Q_OBJECT

private slots:
    void ago_data();
    void ago();
    void whenIsLocalTime();
    void failingRoute();
    void routeWithoutFailure();
    void olderSlp();
    void untrustedTextIsShownLiterally();
    void whichRoute();
};

void TestMonitorDetails::ago_data()
{
    QTest::addColumn<qint64>("seconds");
    QTest::addColumn<QString>("text");
    QTest::newRow("clock ahead") << qint64(-30) << "just now";
    QTest::newRow("0") << qint64(0) << "just now";
    QTest::newRow("59 s") << qint64(59) << "just now";
    QTest::newRow("1 min") << qint64(60) << "1 min ago";
    QTest::newRow("59 min") << qint64(59 * 60 + 59) << "59 min ago";
    QTest::newRow("1 h") << qint64(3600) << "1 h ago";
    QTest::newRow("3 h 5 min") << qint64(3 * 3600 + 5 * 60 + 10) << "3 h 5 min ago";
    QTest::newRow("1 day") << qint64(26 * 3600) << "1 day ago";
    QTest::newRow("2 days") << qint64(49 * 3600) << "2 days ago";
}

void TestMonitorDetails::ago()
{
    QFETCH(qint64, seconds);
    QFETCH(QString, text);
    QCOMPARE(agoText(seconds), text);
}

void TestMonitorDetails::whenIsLocalTime()
{
    const QDateTime at = kT0;
    const QString local = at.toLocalTime().toString(u"yyyy-MM-dd HH:mm:ss");
    QCOMPARE(whenText(at, kT0.addSecs(4 * 60 + 5)), local + QStringLiteral(" (4 min ago)"));
}

void TestMonitorDetails::failingRoute()
{
    FakeRoute a{"a", "failing"};
    a.failure = failureAt(0, QStringLiteral("connection refused"),
                          QStringLiteral("slpq0123456789abcdef01234567"));
    const StatusSnapshot s = snapshotAt(0, {a});
    const RouteDetails d = routeDetails(s.routes.first(), kT0.addSecs(120));
    QCOMPARE(d.title, QStringLiteral("a \u2192 A: failing"));
    QVERIFY2(d.explanation.startsWith(QStringLiteral("Failing: the last attempts failed before "
                                                     "a response head")),
             qPrintable(d.explanation));
    QVERIFY(d.hasFailure);
    QCOMPARE(d.failure, QStringLiteral("connection refused"));
    QVERIFY2(d.when.endsWith(QStringLiteral(" (2 min ago)")), qPrintable(d.when));
    QCOMPARE(d.requestId, QStringLiteral("slpq0123456789abcdef01234567"));

    FakeRoute b{"b", "stalled"};
    b.failure = failureAt(-7200, QStringLiteral("stream idle 30s after 1834 bytes"),
                          QStringLiteral("up-7"));
    const RouteDetails stalled = routeDetails(snapshotAt(0, {b}).routes.first(), kT0);
    QVERIFY(stalled.explanation.startsWith(QStringLiteral("Stalled: ")));
    QCOMPARE(stalled.failure, QStringLiteral("stream idle 30s after 1834 bytes"));
    QVERIFY2(stalled.when.endsWith(QStringLiteral(" (2 h ago)")), qPrintable(stalled.when));

    const RouteDetails slow = routeDetails(snapshotAt(0, {{"c", "slow"}}).routes.first(), kT0);
    QCOMPARE(slow.explanation, QStringLiteral("Slow: the last response heads each took over "
                                              "half the route's timeout (1m0s)."));
}

void TestMonitorDetails::routeWithoutFailure()
{
    const RouteDetails d = routeDetails(snapshotAt(0, {{"a", "ok"}}).routes.first(), kT0);
    QVERIFY(!d.hasFailure);
    QCOMPARE(d.failure, QStringLiteral("No failed request since SLP started."));
    QVERIFY(d.when.isEmpty());
    QVERIFY(d.requestId.isEmpty());
    QCOMPARE(d.explanation, QStringLiteral("SLP sees no trouble in the route's recent answers."));
}

void TestMonitorDetails::olderSlp()
{
    FakeRoute a{"a"};
    a.consecutive = 2;
    const RouteDetails d = routeDetails(snapshotAt(0, {a}).routes.first(), kT0);
    QCOMPARE(d.explanation, QStringLiteral("Backend failing: SLP's last 2 attempt(s) failed "
                                           "before a response head; clients get 502."));
    QVERIFY(!d.hasFailure);
}

void TestMonitorDetails::untrustedTextIsShownLiterally()
{
    // A request id may come from a backend: its control characters are shown, not acted on.
    FakeRoute a{"a", "failing"};
    a.failure = failureAt(0, QStringLiteral("timed out\nafter 60s"), QStringLiteral("id\x1b[31m"));
    const RouteDetails d = routeDetails(snapshotAt(0, {a}).routes.first(), kT0);
    QCOMPARE(d.failure, QStringLiteral("timed out\\x0aafter 60s"));
    QCOMPARE(d.requestId, QStringLiteral("id\\x1b[31m"));
}

void TestMonitorDetails::whichRoute()
{
    const QList<RouteStatus> routes =
        snapshotAt(
            0, {{"a", "ok"}, {"b", "slow"}, {"c", "stalled"}, {"d", "failing"}, {"e", "failing"}})
            .routes;
    QCOMPARE(routeToExplain(routes, QStringLiteral("a")), QStringLiteral("a")); // chosen
    QCOMPARE(routeToExplain(routes, QString()), QStringLiteral("d"));           // the first worst
    QCOMPARE(routeToExplain(routes, QStringLiteral("gone")), QStringLiteral("d"));
    const QList<RouteStatus> calm = snapshotAt(0, {{"a", "ok"}, {"b", "slow"}}).routes;
    QCOMPARE(routeToExplain(calm, QString()), QStringLiteral("b"));
    QVERIFY(routeToExplain(snapshotAt(0, {{"a", "ok"}}).routes, QString()).isEmpty());
    QVERIFY(routeToExplain({}, QStringLiteral("a")).isEmpty());
}

QTEST_APPLESS_MAIN(TestMonitorDetails)
#include "tst_monitor_details.moc"
