// SPDX-License-Identifier: GPL-3.0-or-later
#include "wire/upgradetarget.h"

#include <QtTest>

using namespace slp;

class TestUpgradeTarget : public QObject
{
    Q_OBJECT
private slots:
    void findsDecodedModel()
    {
        const UpgradeModel m = findUpgradeModel("/v1/realtime?intent=x&model=gpt%2F4o%20rt&a=b");
        QVERIFY(m.found);
        QCOMPARE(m.id, QByteArray("gpt/4o rt"));
        QCOMPARE(m.valueLength, qsizetype(13));
    }
    void modelFirstAndLast()
    {
        QCOMPARE(findUpgradeModel("/v1/realtime?model=a").id, QByteArray("a"));
        QCOMPARE(findUpgradeModel("/v1/realtime?model=a#frag").id, QByteArray("a"));
        QCOMPARE(findUpgradeModel("/v1/realtime?x=1&model=").id, QByteArray());
        QVERIFY(findUpgradeModel("/v1/realtime?x=1&model=").found);
    }
    void noModel()
    {
        QVERIFY(!findUpgradeModel("/v1/realtime").found);
        QVERIFY(!findUpgradeModel("/v1/realtime?call_id=abc").found);
        QVERIFY(!findUpgradeModel("/v1/realtime?xmodel=a&models=b").found);
        QVERIFY(!findUpgradeModel("/v1/realtime?a=1#model=b").found);
    }
    void renameTouchesOnlyTheValue()
    {
        const QByteArray target = "/v1/realtime?intent=%7E&model=gpt%2F4o&z=%41";
        const UpgradeModel m = findUpgradeModel(target);
        QCOMPARE(renameUpgradeModel(target, m, "org/model name"),
                 QByteArray("/v1/realtime?intent=%7E&model=org%2Fmodel%20name&z=%41"));
    }
    void renameWithoutModelKeepsTarget()
    {
        const QByteArray target = "/v1/realtime?call_id=1";
        QCOMPARE(renameUpgradeModel(target, findUpgradeModel(target), "x"), target);
    }
};

QTEST_APPLESS_MAIN(TestUpgradeTarget)
#include "tst_upgrade_target.moc"
