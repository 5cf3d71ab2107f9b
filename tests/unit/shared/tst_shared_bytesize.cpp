// SPDX-License-Identifier: GPL-3.0-or-later
#include "bytesize.h"

#include <QTest>

class TestByteSize : public QObject
{
    Q_OBJECT

private slots:
    void parse_data();
    void parse();
    void parseErrors_data();
    void parseErrors();
    void format_data();
    void format();
};

void TestByteSize::parse_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("bytes");
    QTest::newRow("plain") << "1048576" << qint64(1048576);
    QTest::newRow("zero") << "0" << qint64(0);
    QTest::newRow("B") << "512B" << qint64(512);
    QTest::newRow("KiB") << "64KiB" << qint64(65536);
    QTest::newRow("MiB") << "64MiB" << qint64(64) * 1024 * 1024;
    QTest::newRow("GiB") << "2GiB" << qint64(2) * 1024 * 1024 * 1024;
    QTest::newRow("TiB") << "1TiB" << (qint64(1) << 40);
    QTest::newRow("KB") << "5KB" << qint64(5000);
    QTest::newRow("MB") << "5MB" << qint64(5000000);
    QTest::newRow("GB") << "1GB" << qint64(1000000000);
    QTest::newRow("space") << "64 MiB" << qint64(64) * 1024 * 1024;
    QTest::newRow("outer space") << " 10KiB " << qint64(10240);
}

void TestByteSize::parse()
{
    QFETCH(QString, text);
    QFETCH(qint64, bytes);
    QString error;
    const auto v = slp::parseByteSize(text, &error);
    QVERIFY2(v.has_value(), qPrintable(error));
    QCOMPARE(*v, bytes);
}

void TestByteSize::parseErrors_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reason");
    QTest::newRow("empty") << ""
                           << "empty";
    QTest::newRow("unit only") << "MiB"
                               << "does not start with a number";
    QTest::newRow("negative") << "-5"
                              << "negative";
    QTest::newRow("fraction") << "1.5MiB"
                              << "whole number";
    QTest::newRow("lowercase unit") << "64mib"
                                    << "unknown unit \"mib\"";
    QTest::newRow("unknown unit") << "64M"
                                  << "unknown unit \"M\"";
    QTest::newRow("overflow") << "99999999999999999999"
                              << "too large";
    QTest::newRow("overflow unit") << "9999999999GiB"
                                   << "too large";
}

void TestByteSize::parseErrors()
{
    QFETCH(QString, text);
    QFETCH(QString, reason);
    QString error;
    QVERIFY(!slp::parseByteSize(text, &error).has_value());
    QVERIFY2(error.contains(reason), qPrintable(error));
}

void TestByteSize::format_data()
{
    QTest::addColumn<qint64>("bytes");
    QTest::addColumn<QString>("text");
    QTest::newRow("zero") << qint64(0) << "0";
    QTest::newRow("1000") << qint64(1000) << "1000";
    QTest::newRow("512KiB") << qint64(512 * 1024) << "512KiB";
    QTest::newRow("64MiB") << qint64(64) * 1024 * 1024 << "64MiB";
    QTest::newRow("1536KiB") << qint64(1536) * 1024 << "1536KiB";
    QTest::newRow("1GiB") << (qint64(1) << 30) << "1GiB";
}

void TestByteSize::format()
{
    QFETCH(qint64, bytes);
    QFETCH(QString, text);
    QCOMPARE(slp::formatByteSize(bytes), text);
    // What we print, we parse back.
    QCOMPARE(slp::parseByteSize(text).value_or(-1), bytes);
}

QTEST_APPLESS_MAIN(TestByteSize)
#include "tst_shared_bytesize.moc"
