// SPDX-License-Identifier: GPL-3.0-or-later
// ConnectionBudget: `max_connections` shared by every worker's listener. Never more places
// than the cap, even with threads racing; a release from full (and only that) wakes the
// listeners holding connections, so none waits forever and none is woken per close.
#include "http/connectionbudget.h"

#include <QSignalSpy>
#include <QTest>

#include <atomic>
#include <thread>
#include <vector>

using slp::ConnectionBudget;

class TestConnectionBudget : public QObject
{
    Q_OBJECT

private slots:
    void capHoldsAndReleaseFromFullWakes();
    void racingThreadsNeverExceedTheCap();
};

void TestConnectionBudget::capHoldsAndReleaseFromFullWakes()
{
    ConnectionBudget budget(3);
    QSignalSpy woken(&budget, &ConnectionBudget::released);
    QVERIFY(budget.tryAcquire());
    QVERIFY(budget.tryAcquire());
    QVERIFY(budget.hasRoom());
    budget.release(); // 2 -> 1: nobody can be waiting
    QCOMPARE(woken.count(), 0);
    QVERIFY(budget.tryAcquire());
    QVERIFY(budget.tryAcquire());
    QVERIFY(!budget.hasRoom());
    QVERIFY(!budget.tryAcquire()); // full: a listener would hold its connection now
    budget.release();              // from full: wake it
    QCOMPARE(woken.count(), 1);
    QVERIFY(budget.hasRoom());
    budget.release(); // not from full
    QCOMPARE(woken.count(), 1);
    QVERIFY(budget.tryAcquire());
    QVERIFY(budget.tryAcquire());
    QVERIFY(!budget.tryAcquire());
}

void TestConnectionBudget::racingThreadsNeverExceedTheCap()
{
    constexpr int kCap = 5;
    ConnectionBudget budget(kCap);
    std::atomic_int held{0};
    std::atomic_int most{0};
    std::atomic_int refused{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 50000; ++i) {
                if (!budget.tryAcquire()) {
                    ++refused;
                    continue;
                }
                const int now = ++held;
                int seen = most.load();
                while (now > seen && !most.compare_exchange_weak(seen, now)) {
                }
                --held;
                budget.release();
            }
        });
    }
    for (std::thread &thread : threads)
        thread.join();
    QVERIFY2(most.load() <= kCap, qPrintable(QString::number(most.load())));
    // Every place came back: the whole cap is free again.
    for (int i = 0; i < kCap; ++i)
        QVERIFY(budget.tryAcquire());
    QVERIFY(!budget.tryAcquire());
    qInfo("most held at once: %d of %d; refused %d times", most.load(), kCap, refused.load());
}

QTEST_GUILESS_MAIN(TestConnectionBudget)
#include "tst_connection_budget.moc"
