// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/listenaddress.h"

#include <QTest>

class TestListenAddress : public QObject
{
    Q_OBJECT

private slots:
    void valid_data();
    void valid();
    void invalid_data();
    void invalid();
    void unixPath();
};

void TestListenAddress::valid_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QHostAddress>("host");
    QTest::addColumn<int>("port");
    QTest::newRow("all interfaces") << ":8080" << QHostAddress(QHostAddress::Any) << 8080;
    QTest::newRow("ipv4") << "127.0.0.1:8080" << QHostAddress(QStringLiteral("127.0.0.1")) << 8080;
    QTest::newRow("ipv4 any") << "0.0.0.0:80" << QHostAddress(QStringLiteral("0.0.0.0")) << 80;
    QTest::newRow("ipv6 loopback") << "[::1]:8080" << QHostAddress(QStringLiteral("::1")) << 8080;
    QTest::newRow("ipv6 any") << "[::]:9000" << QHostAddress(QStringLiteral("::")) << 9000;
    QTest::newRow("localhost") << "localhost:8080" << QHostAddress(QHostAddress::LocalHost) << 8080;
    QTest::newRow("port 0") << ":0" << QHostAddress(QHostAddress::Any) << 0;
    QTest::newRow("port max") << "127.0.0.1:65535" << QHostAddress(QStringLiteral("127.0.0.1"))
                              << 65535;
}

void TestListenAddress::valid()
{
    QFETCH(QString, text);
    QFETCH(QHostAddress, host);
    QFETCH(int, port);
    QString error;
    const auto addr = slp::parseListenAddress(text, &error);
    QVERIFY2(addr.has_value(), qPrintable(error));
    QCOMPARE(addr->host, host);
    QCOMPARE(int(addr->port), port);
    QCOMPARE(addr->text, text);
}

void TestListenAddress::invalid_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reason");
    QTest::newRow("empty") << ""
                           << "missing port";
    QTest::newRow("port alone") << "8080"
                                << "missing port";
    QTest::newRow("host alone") << "localhost"
                                << "missing port";
    QTest::newRow("host colon") << "host:"
                                << "missing port";
    QTest::newRow("colon only") << ":"
                                << "missing port";
    QTest::newRow("unclosed bracket") << "[::1"
                                      << "missing \"]\"";
    QTest::newRow("bracket without port") << "[::1]"
                                          << "missing port";
    QTest::newRow("bracket bad separator") << "[::1]8080"
                                           << "missing port";
    QTest::newRow("ipv6 without brackets") << "::1:8080"
                                           << "too many colons";
    QTest::newRow("ipv4 in brackets") << "[127.0.0.1]:80"
                                      << "not an IPv6";
    QTest::newRow("port too big") << ":65536"
                                  << "invalid port";
    QTest::newRow("port huge") << ":123456789"
                               << "invalid port";
    QTest::newRow("port negative") << ":-1"
                                   << "invalid port";
    QTest::newRow("port plus") << ":+80"
                               << "invalid port";
    QTest::newRow("port name") << ":http"
                               << "invalid port";
    QTest::newRow("port space") << ": 80"
                                << "invalid port";
    QTest::newRow("hostname") << "example.com:8080"
                              << "not an IP address";
    QTest::newRow("bad ipv4") << "256.1.1.1:80"
                              << "not an IP address";
    QTest::newRow("unix without path") << "unix:"
                                       << "missing path";
    QTest::newRow("unix path too long")
        << "unix:/" + QString(107, QLatin1Char('x')) << "longer than 107 bytes";
}

void TestListenAddress::unixPath()
{
    QString error;
    const auto addr = slp::parseListenAddress(QStringLiteral("unix:/run/slp/slp.sock"), &error);
    QVERIFY2(addr.has_value(), qPrintable(error));
    QVERIFY(addr->isUnix());
    QCOMPARE(addr->unixPath, QStringLiteral("/run/slp/slp.sock"));
    QCOMPARE(addr->text, QStringLiteral("unix:/run/slp/slp.sock"));
    const auto relative = slp::parseListenAddress(QStringLiteral("unix:slp.sock"), &error);
    QVERIFY(relative && relative->unixPath == QStringLiteral("slp.sock"));
    QVERIFY(!slp::parseListenAddress(QStringLiteral("127.0.0.1:80"))->isUnix());
}

void TestListenAddress::invalid()
{
    QFETCH(QString, text);
    QFETCH(QString, reason);
    QString error;
    QVERIFY(!slp::parseListenAddress(text, &error).has_value());
    QVERIFY2(error.contains(reason), qPrintable(error));
}

QTEST_APPLESS_MAIN(TestListenAddress)
#include "tst_config_listen.moc"
