// SPDX-License-Identifier: GPL-3.0-or-later
// The pure parts of running under systemd: the STATUS= summary line and the watchdog's
// judgement of which event loops are late.
#include "app/loopwatchdog.h"
#include "app/servicenotifier.h"

#include <QTest>

using namespace slp;
using namespace std::chrono_literals;

class TestServiceNotify : public QObject
{
    Q_OBJECT
private slots:
    void statusLine();
    void stalledLoops();
    void notifierIsSilentOutsideSystemd();
};

void TestServiceNotify::statusLine()
{
    QCOMPARE(serviceStatusLine(6, 1, 0),
             QStringLiteral("serving 6 routes; 1 ambiguous; 0 failing; 0 stalled"));
    QCOMPARE(serviceStatusLine(1, 0, 1),
             QStringLiteral("serving 1 route; 0 ambiguous; 1 failing; 0 stalled"));
    QCOMPARE(
        serviceStatusLine(2, 0, 0, 0, QStringLiteral("/etc/slp/slp.yaml has 2 error(s)")),
        QStringLiteral("serving 2 routes; 0 ambiguous; 0 failing; 0 stalled; last reload failed: "
                       "/etc/slp/slp.yaml has 2 error(s)"));
}

void TestServiceNotify::stalledLoops()
{
    using Beat = LoopWatchdog::Beat;
    const LoopWatchdog::Clock::time_point now = LoopWatchdog::Clock::now();
    const auto at = [](LoopWatchdog::Clock::time_point t) {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
    };
    auto fresh = std::make_shared<Beat>();
    fresh->name = QStringLiteral("slp-worker-1");
    fresh->stampNs = at(now - 100ms);
    auto late = std::make_shared<Beat>();
    late->name = QStringLiteral("slp-worker-2");
    late->stampNs = at(now - 1500ms);
    QCOMPARE(LoopWatchdog::stalled({fresh, late}, now, 1s), QStringList{"slp-worker-2"});
    QCOMPARE(LoopWatchdog::stalled({fresh}, now, 1s), QStringList());
    QCOMPARE(LoopWatchdog::stalled({}, now, 1s), QStringList());
    // The boundary: exactly maxAge old still counts as turning.
    late->stampNs = at(now - 1s);
    QCOMPARE(LoopWatchdog::stalled({late}, now, 1s), QStringList());
}

void TestServiceNotify::notifierIsSilentOutsideSystemd()
{
    qunsetenv("NOTIFY_SOCKET");
    qunsetenv("WATCHDOG_USEC");
    QVERIFY(!ServiceNotifier::active());
    QCOMPARE(ServiceNotifier::watchdogInterval().count(), 0);
    ServiceNotifier notifier; // no socket: every call is a no-op, and none fails
    notifier.ready(QStringLiteral("serving 0 routes; 0 ambiguous; 0 failing; 0 stalled"));
    notifier.reloading();
    notifier.watchdogPing();
    notifier.stopping(QStringLiteral("draining"));
    qputenv("WATCHDOG_USEC", "30000000");
    QCOMPARE(ServiceNotifier::watchdogInterval(), std::chrono::microseconds(30000000));
    qunsetenv("WATCHDOG_USEC");
}

QTEST_APPLESS_MAIN(TestServiceNotify)
#include "tst_service_notify.moc"
