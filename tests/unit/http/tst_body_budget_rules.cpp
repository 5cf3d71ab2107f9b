// SPDX-License-Identifier: GPL-3.0-or-later
// BodyBudget's rules: what fits is taken at once, what does not waits in line and is let in
// strictly in order as leases come back (a small body never overtakes a larger one ahead of
// it), a raised limit lets waiters in, a cancelled waiter leaves the line, and a grant whose
// waiter is gone gives its bytes back.
#include "http/bodybudget.h"

#include <QtTest>

#include <memory>
#include <vector>

using slp::BodyBudget;

namespace {

// A waiting body: records its grant.
struct Waiter : QObject
{
    std::unique_ptr<BodyBudget::Lease> lease;
    BodyBudget::Granted granted()
    {
        return [this](std::unique_ptr<BodyBudget::Lease> l) { lease = std::move(l); };
    }
};

} // namespace

class TestBodyBudgetRules : public QObject
{
    Q_OBJECT

private slots:
    void fitsAtOnce();
    void waitsAndGoesInOrder();
    void raisedLimitLetsWaitersIn();
    void cancelledWaiterLeavesTheLine();
    void grantForAGoneWaiterComesBack();
    void defaultIsAtMostOneGiB();
};

void TestBodyBudgetRules::fitsAtOnce()
{
    BodyBudget budget(100);
    Waiter w;
    auto a = budget.tryAcquire(60, &w, w.granted());
    auto b = budget.tryAcquire(40, &w, w.granted());
    QVERIFY(a && b);
    QCOMPARE(budget.used(), 100);
    a.reset();
    QCOMPARE(budget.used(), 40);
}

void TestBodyBudgetRules::waitsAndGoesInOrder()
{
    BodyBudget budget(100);
    Waiter first, big, small;
    auto held = budget.tryAcquire(100, &first, first.granted());
    QVERIFY(held);
    QVERIFY(!budget.tryAcquire(80, &big, big.granted()));
    // Would fit once 20 free, but waits behind `big`: nobody overtakes the line.
    QVERIFY(!budget.tryAcquire(10, &small, small.granted()));
    held.reset();
    QTRY_VERIFY(big.lease != nullptr);
    QTRY_VERIFY(small.lease != nullptr); // 80 + 10 fit together
    QCOMPARE(budget.used(), 90);

    // A newcomer waits behind a waiting body even when it would fit.
    Waiter blocked, later;
    QVERIFY(!budget.tryAcquire(50, &blocked, blocked.granted()));
    QVERIFY(!budget.tryAcquire(5, &later, later.granted()));
    QTest::qWait(20); // the queued grants would have arrived by now
    QVERIFY(!later.lease);
    big.lease.reset();
    QTRY_VERIFY(blocked.lease && later.lease);
}

void TestBodyBudgetRules::raisedLimitLetsWaitersIn()
{
    BodyBudget budget(10);
    Waiter holder, waiter;
    auto held = budget.tryAcquire(10, &holder, holder.granted());
    QVERIFY(!budget.tryAcquire(10, &waiter, waiter.granted()));
    budget.setLimit(20);
    QTRY_VERIFY(waiter.lease != nullptr);
    QCOMPARE(budget.used(), 20);
}

void TestBodyBudgetRules::cancelledWaiterLeavesTheLine()
{
    BodyBudget budget(10);
    Waiter holder, gone, next;
    auto held = budget.tryAcquire(10, &holder, holder.granted());
    QVERIFY(!budget.tryAcquire(10, &gone, gone.granted()));
    QVERIFY(!budget.tryAcquire(5, &next, next.granted()));
    budget.cancel(&gone);
    held.reset();
    QTRY_VERIFY(next.lease != nullptr);
    QVERIFY(!gone.lease);
    QCOMPARE(budget.used(), 5);
}

void TestBodyBudgetRules::grantForAGoneWaiterComesBack()
{
    BodyBudget budget(10);
    Waiter holder;
    auto held = budget.tryAcquire(10, &holder, holder.granted());
    auto waiter = std::make_unique<Waiter>();
    QVERIFY(!budget.tryAcquire(10, waiter.get(), waiter->granted()));
    held.reset(); // the grant is posted ...
    QCOMPARE(budget.used(), 10);
    waiter.reset(); // ... and its receiver is destroyed before it arrives
    QCoreApplication::processEvents();
    QCOMPARE(budget.used(), 0);
}

void TestBodyBudgetRules::defaultIsAtMostOneGiB()
{
    const qint64 d = BodyBudget::defaultLimit();
    QVERIFY(d > 0);
    QVERIFY(d <= qint64(1) << 30);
}

QTEST_GUILESS_MAIN(TestBodyBudgetRules)
#include "tst_body_budget_rules.moc"
