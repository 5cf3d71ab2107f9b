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
        QCOMPARE(findUpgradeModel("/v1/realtime?x=1&model=").id, QByteArray());
        QVERIFY(findUpgradeModel("/v1/realtime?x=1&model=").found);
        // A key without '=' is a key with an empty value, as Starlette and Go read it.
        QVERIFY(findUpgradeModel("/v1/realtime?model").found);
        QVERIFY(findUpgradeModel("/v1/realtime?model").error.isEmpty());
    }
    void noModel()
    {
        QVERIFY(!findUpgradeModel("/v1/realtime").found);
        QVERIFY(!findUpgradeModel("/v1/realtime?call_id=abc").found);
        QVERIFY(!findUpgradeModel("/v1/realtime?xmodel=a&models=b&Model=c").found);
        QVERIFY(!findUpgradeModel("/v1/realtime?model+=a&%20model=b").found); // not "model"
    }
    // Decoded as the backends decode it: percent escapes, '+' a space.
    void decodedAsBackendsDo()
    {
        QCOMPARE(findUpgradeModel("/v1/realtime?model=a+b%2Bc").id, QByteArray("a b+c"));
        const UpgradeModel spelled = findUpgradeModel("/v1/realtime?%6Dodel=gpt");
        QVERIFY(spelled.found);
        QCOMPARE(spelled.id, QByteArray("gpt"));
    }
    // Where Starlette (the last value), Go (the first, dropping a pair it cannot decode) or an
    // older Python (';' a separator) would read another model than SLP: refused.
    void ambiguousQueriesRefused_data()
    {
        QTest::addColumn<QByteArray>("target");
        QTest::newRow("twice") << QByteArray("/v1/realtime?model=m1&model=other");
        QTest::newRow("twice, escaped key") << QByteArray("/v1/realtime?model=m1&%6Dodel=x");
        QTest::newRow("twice, '+' spelled") << QByteArray("/v1/realtime?mo%64el=a&model=b");
        QTest::newRow("empty twice") << QByteArray("/v1/realtime?model&model=b");
        QTest::newRow("semicolon hides one") << QByteArray("/v1/realtime?a=1;model=x&model=y");
        QTest::newRow("semicolon in the value") << QByteArray("/v1/realtime?model=a;b");
        QTest::newRow("bad escape") << QByteArray("/v1/realtime?model=a%zz");
        QTest::newRow("cut escape") << QByteArray("/v1/realtime?model=a%4");
        QTest::newRow("fragment") << QByteArray("/v1/realtime?model=a#model=b");
        // Starlette decodes the raw query as latin-1, Go keeps the bytes: "caf\xc3\xa9" is two
        // ids. Percent-encoded, both decode the same UTF-8.
        QTest::newRow("raw UTF-8 in the value") << QByteArray("/v1/realtime?model=caf\xc3\xa9");
    }
    void ambiguousQueriesRefused()
    {
        QFETCH(QByteArray, target);
        const UpgradeModel m = findUpgradeModel(target);
        QVERIFY2(m.error.startsWith(QLatin1String("the model query parameter is ambiguous")),
                 qPrintable(m.error));
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
