// SPDX-License-Identifier: GPL-3.0-or-later
// The notifier's policy: transitions only, one notice per kind and poll, nothing for the state
// found at start-up except an alert. Driven by text recorded from the real daemon.
#include "fixture.h"
#include "noticepolicy.h"
#include "statusmodel.h"

#include <QtTest>

using namespace slp::monitor;

namespace {

StatusSnapshot recorded(const QString &moment)
{
    return readSnapshot(slp::monitor::test::recordedPoll(moment));
}

StatusSnapshot refused()
{
    return readSnapshot(slp::monitor::test::refusedPoll());
}

// Feeds the moments to one model; returns every notice, as "kind:title".
QStringList run(const QStringList &moments)
{
    StatusModel model;
    QStringList out;
    for (const QString &m : moments) {
        const StatusUpdate u = model.apply(m == QLatin1String("down") ? refused() : recorded(m));
        for (const Notice &n : noticesFor(u)) {
            static const char *names[] = {"ambiguous", "recovered", "unreachable",
                                          "reachable", "failing",   "answering"};
            out << QStringLiteral("%1:%2").arg(QLatin1String(names[int(n.kind)]), n.title);
        }
    }
    return out;
}

} // namespace

class TestMonitorNotices : public QObject
{
    Q_OBJECT

private slots:
    void startup_data();
    void startup();
    void ambiguityAndRecoveryOncePerTransition();
    void groupedPerPoll();
    void outage();
    void quietTransitions();
    void urgency();
};

void TestMonitorNotices::startup_data()
{
    QTest::addColumn<QString>("moment");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("ok") << "ok" << QStringList{};
    QTest::newRow("attention") << "attention" << QStringList{};
    QTest::newRow("ambiguous") << "ambiguous"
                               << QStringList{
                                      QStringLiteral("ambiguous:SLP: 2 routes are ambiguous")};
    QTest::newRow("unreachable") << "down"
                                 << QStringList{QStringLiteral("unreachable:SLP unreachable")};
}

void TestMonitorNotices::startup()
{
    QFETCH(QString, moment);
    QFETCH(QStringList, expected);
    QCOMPARE(run({moment}), expected);
}

void TestMonitorNotices::ambiguityAndRecoveryOncePerTransition()
{
    const QStringList notices = run({"attention", "ok", "ok", "ambiguous", "ambiguous", "ambiguous",
                                     "recovered", "recovered", "ok"});
    QCOMPARE(notices, (QStringList{QStringLiteral("ambiguous:SLP: 2 routes are ambiguous"),
                                   QStringLiteral("recovered:SLP: 2 routes recovered")}));
}

void TestMonitorNotices::groupedPerPoll()
{
    StatusModel model;
    model.apply(recorded("ok"));
    const QList<Notice> notices = noticesFor(model.apply(recorded("ambiguous")));
    QCOMPARE(notices.size(), 1);
    QCOMPARE(notices[0].routeIds, (QStringList{"qwen3-8b", "qwen3-8b-edited"}));
    QVERIFY(notices[0].body.contains(QStringLiteral("qwen3-8b \u2192 Qwen/Qwen3-8B")));
    QVERIFY(notices[0].body.contains(QStringLiteral("qwen3-8b-edited \u2192 Qwen/Qwen3-8B")));

    // One route alone is named in the title.
    StatusModel single;
    single.apply(recorded("ok"));
    StatusSnapshot s = recorded("ambiguous");
    s.routes[3].state = RouteState::Ok; // only the backend
    const QList<Notice> one = noticesFor(single.apply(s));
    QCOMPARE(one.size(), 1);
    QCOMPARE(one[0].title, QStringLiteral("SLP: route qwen3-8b is ambiguous"));
}

void TestMonitorNotices::outage()
{
    QCOMPARE(run({"ok", "down", "down", "down", "ok", "ok"}),
             (QStringList{QStringLiteral("unreachable:SLP unreachable"),
                          QStringLiteral("reachable:SLP is back")}));
    // Start-up with SLP down, then it comes up fine: the alert, then the all-clear.
    QCOMPARE(run({"down", "ok"}), (QStringList{QStringLiteral("unreachable:SLP unreachable"),
                                               QStringLiteral("reachable:SLP is back")}));
}

void TestMonitorNotices::quietTransitions()
{
    // pending/probe error <-> ok are attention, shown by the icon, never a popup.
    QVERIFY(run({"ok", "attention", "ok", "attention"}).isEmpty());
}

void TestMonitorNotices::urgency()
{
    StatusModel model;
    model.apply(recorded("ok"));
    QCOMPARE(noticesFor(model.apply(recorded("ambiguous")))[0].urgency, Notice::Urgency::Critical);
    QCOMPARE(noticesFor(model.apply(recorded("recovered")))[0].urgency, Notice::Urgency::Normal);
    const QList<Notice> down = noticesFor(model.apply(refused()));
    QCOMPARE(down[0].urgency, Notice::Urgency::Critical);
    QVERIFY(down[0].body.contains(QLatin1String("http://127.0.0.1:8080: Connection refused")));
}

QTEST_GUILESS_MAIN(TestMonitorNotices)
#include "tst_monitor_notices.moc"
