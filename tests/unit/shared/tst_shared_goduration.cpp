// SPDX-License-Identifier: GPL-3.0-or-later
#include "goduration.h"

#include <QTest>

using namespace std::chrono_literals;

class TestGoDuration : public QObject
{
    Q_OBJECT

private slots:
    void format_data();
    void format();
    void parse_data();
    void parse();
    void parseErrors_data();
    void parseErrors();
    void roundTrip();
};

void TestGoDuration::format_data()
{
    QTest::addColumn<qint64>("ns");
    QTest::addColumn<QString>("text");
    // Expected strings are what Go's Duration.String() prints.
    QTest::newRow("zero") << qint64(0) << "0s";
    QTest::newRow("1ns") << qint64(1) << "1ns";
    QTest::newRow("999ns") << qint64(999) << "999ns";
    QTest::newRow("1.1us") << qint64(1100) << QString::fromUtf8("1.1\u00b5s");
    QTest::newRow("1500us") << qint64(1500000) << "1.5ms";
    QTest::newRow("300ms") << qint64(300000000) << "300ms";
    QTest::newRow("1s") << qint64(1000000000) << "1s";
    QTest::newRow("1.5s") << qint64(1500000000) << "1.5s";
    QTest::newRow("60s") << qint64(60000000000) << "1m0s";
    QTest::newRow("90s") << qint64(90000000000) << "1m30s";
    QTest::newRow("120s") << qint64(120000000000) << "2m0s";
    QTest::newRow("300s") << qint64(300000000000) << "5m0s";
    QTest::newRow("1h30m") << qint64(5400000000000) << "1h30m0s";
    QTest::newRow("1h") << qint64(3600000000000) << "1h0m0s";
    QTest::newRow("2h45m30.5s") << qint64(9930500000000) << "2h45m30.5s";
    QTest::newRow("-1.5s") << qint64(-1500000000) << "-1.5s";
    QTest::newRow("-300ms") << qint64(-300000000) << "-300ms";
    QTest::newRow("-1ns") << qint64(-1) << "-1ns";
    QTest::newRow("max") << std::numeric_limits<qint64>::max() << "2562047h47m16.854775807s";
    QTest::newRow("min") << std::numeric_limits<qint64>::min() << "-2562047h47m16.854775808s";
}

void TestGoDuration::format()
{
    QFETCH(qint64, ns);
    QFETCH(QString, text);
    QCOMPARE(slp::formatGoDuration(slp::Nanoseconds(ns)), text);
}

void TestGoDuration::parse_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("ns");
    QTest::newRow("0") << "0" << qint64(0);
    QTest::newRow("-0") << "-0" << qint64(0);
    QTest::newRow("+0") << "+0" << qint64(0);
    QTest::newRow("0s") << "0s" << qint64(0);
    QTest::newRow("300ms") << "300ms" << qint64(300000000);
    QTest::newRow("1.5s") << "1.5s" << qint64(1500000000);
    QTest::newRow("2m") << "2m" << qint64(120000000000);
    QTest::newRow("1h30m") << "1h30m" << qint64(5400000000000);
    QTest::newRow("1500us") << "1500us" << qint64(1500000);
    QTest::newRow("micro sign") << QString::fromUtf8("3\u00b5s") << qint64(3000);
    QTest::newRow("greek mu") << QString::fromUtf8("3\u03bcs") << qint64(3000);
    QTest::newRow("ns") << "7ns" << qint64(7);
    QTest::newRow(".5s") << ".5s" << qint64(500000000);
    QTest::newRow("5.s") << "5.s" << qint64(5000000000);
    QTest::newRow("-1.5h") << "-1.5h" << qint64(-5400000000000);
    QTest::newRow("+5s") << "+5s" << qint64(5000000000);
    QTest::newRow("1h1m1s1ms1us1ns") << "1h1m1s1ms1us1ns" << qint64(3661001001001);
    QTest::newRow("fraction of hour") << "0.3333333333333333333h" << qint64(1200000000000);
    QTest::newRow("max") << "9223372036854775807ns" << std::numeric_limits<qint64>::max();
    QTest::newRow("min") << "-9223372036854775808ns" << std::numeric_limits<qint64>::min();
}

void TestGoDuration::parse()
{
    QFETCH(QString, text);
    QFETCH(qint64, ns);
    QString error;
    const auto d = slp::parseGoDuration(text, &error);
    QVERIFY2(d.has_value(), qPrintable(error));
    QCOMPARE(d->count(), ns);
}

void TestGoDuration::parseErrors_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reason");
    QTest::newRow("empty") << ""
                           << "invalid duration";
    QTest::newRow("sign only") << "-"
                               << "invalid duration";
    QTest::newRow("no unit") << "60"
                             << "missing unit";
    QTest::newRow("no unit after unit") << "1h30"
                                        << "missing unit";
    QTest::newRow("unknown unit") << "5x"
                                  << "unknown unit \"x\"";
    QTest::newRow("uppercase unit") << "5S"
                                    << "unknown unit \"S\"";
    QTest::newRow("days") << "1d"
                          << "unknown unit \"d\"";
    QTest::newRow("space") << "1h 30m"
                           << "unknown unit \"h \"";
    QTest::newRow("dot only") << ".s"
                              << "invalid duration";
    QTest::newRow("letters") << "abc"
                             << "invalid duration";
    QTest::newRow("overflow") << "9223372036854775808ns"
                              << "invalid duration";
    QTest::newRow("overflow hours") << "3000000h"
                                    << "invalid duration";
}

void TestGoDuration::parseErrors()
{
    QFETCH(QString, text);
    QFETCH(QString, reason);
    QString error;
    QVERIFY(!slp::parseGoDuration(text, &error).has_value());
    QVERIFY2(error.contains(reason), qPrintable(error));
    QVERIFY(!slp::parseGoDuration(text).has_value()); // no error pointer is fine too
}

void TestGoDuration::roundTrip()
{
    for (const qint64 ns : {qint64(1), qint64(1234), qint64(60000000000), qint64(5400000000001),
                            qint64(-77777777777)}) {
        const QString text = slp::formatGoDuration(slp::Nanoseconds(ns));
        const auto back = slp::parseGoDuration(text);
        QVERIFY2(back.has_value(), qPrintable(text));
        QCOMPARE(back->count(), ns);
    }
}

QTEST_APPLESS_MAIN(TestGoDuration)
#include "tst_shared_goduration.moc"
