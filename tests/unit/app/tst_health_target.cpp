// SPDX-License-Identifier: GPL-3.0-or-later
// Where `slp --health-check` asks for each form of listen: (a wildcard on the loopback of its
// family, a Unix socket at its path), the request it sends, and how it reads the status line.
#include "app/healthtarget.h"

#include <QTest>

using slp::healthTargetFor;
using slp::parseListenAddress;
using slp::responseStatus;

class TestHealthTarget : public QObject
{
    Q_OBJECT

private slots:
    void target_data();
    void target();
    void portZeroHasNoTarget();
    void request();
    void status_data();
    void status();
};

void TestHealthTarget::target_data()
{
    QTest::addColumn<QString>("listen");
    QTest::addColumn<QString>("asked");
    QTest::newRow(":PORT") << ":8080"
                           << "127.0.0.1:8080";
    QTest::newRow("0.0.0.0") << "0.0.0.0:8080"
                             << "127.0.0.1:8080";
    QTest::newRow("[::]") << "[::]:9000"
                          << "[::1]:9000";
    QTest::newRow("loopback as written") << "127.0.0.1:8080"
                                         << "127.0.0.1:8080";
    QTest::newRow("localhost") << "localhost:8081"
                               << "127.0.0.1:8081";
    QTest::newRow("[::1]") << "[::1]:8080"
                           << "[::1]:8080";
    QTest::newRow("another address as written") << "10.0.0.5:80"
                                                << "10.0.0.5:80";
    QTest::newRow("unix") << "unix:/run/slp/slp.sock"
                          << "unix:/run/slp/slp.sock";
    QTest::newRow("unix, relative") << "unix:slp.sock"
                                    << "unix:slp.sock";
}

void TestHealthTarget::target()
{
    QFETCH(QString, listen);
    QFETCH(QString, asked);
    QString error;
    const auto address = parseListenAddress(listen, &error);
    QVERIFY2(address, qPrintable(error));
    const auto target = healthTargetFor(*address, &error);
    QVERIFY2(target, qPrintable(error));
    QCOMPARE(target->text(), asked);
    QCOMPARE(target->isUnix(), listen.startsWith(QLatin1String("unix:")));
}

void TestHealthTarget::portZeroHasNoTarget()
{
    QString error;
    const auto address = parseListenAddress(QStringLiteral("127.0.0.1:0"));
    QVERIFY(address);
    QVERIFY(!healthTargetFor(*address, &error));
    QVERIFY2(error.contains(QLatin1String("--listen")), qPrintable(error));
}

void TestHealthTarget::request()
{
    const auto tcp = healthTargetFor(*parseListenAddress(QStringLiteral("[::]:8080")), nullptr);
    QVERIFY(tcp);
    QVERIFY(tcp->request().startsWith("GET /healthz HTTP/1.1\r\nHost: [::1]:8080\r\n"));
    QVERIFY(tcp->request().contains("\r\nConnection: close\r\n"));
    QVERIFY(tcp->request().endsWith("\r\n\r\n"));
    const auto local = healthTargetFor(*parseListenAddress(QStringLiteral("unix:/s")), nullptr);
    QVERIFY(local);
    QVERIFY(local->request().startsWith("GET /healthz HTTP/1.1\r\nHost: localhost\r\n"));
}

void TestHealthTarget::status_data()
{
    QTest::addColumn<QByteArray>("received");
    QTest::addColumn<int>("status"); // 0: wait for more; -1: not HTTP
    QTest::newRow("200") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n") << 200;
    QTest::newRow("503") << QByteArray("HTTP/1.1 503 Service Unavailable\r\n") << 503;
    QTest::newRow("HTTP/1.0, no reason") << QByteArray("HTTP/1.0 200\r\n") << 200;
    QTest::newRow("bare LF") << QByteArray("HTTP/1.1 404 Not Found\n") << 404;
    QTest::newRow("nothing yet") << QByteArray() << 0;
    QTest::newRow("part of the line") << QByteArray("HTTP/1.1 20") << 0;
    QTest::newRow("a prefix of HTTP") << QByteArray("HTT") << 0;
    QTest::newRow("not HTTP") << QByteArray("SSH-2.0-OpenSSH_9.2\r\n") << -1;
    QTest::newRow("not HTTP, no newline yet") << QByteArray("SSH-2.0") << -1;
    QTest::newRow("HTTP/2 preface") << QByteArray("HTTP/2 200\r\n") << -1;
    QTest::newRow("status not digits") << QByteArray("HTTP/1.1 2x0 OK\r\n") << -1;
    QTest::newRow("status too long") << QByteArray("HTTP/1.1 2000 OK\r\n") << -1;
    QTest::newRow("status below 100") << QByteArray("HTTP/1.1 099 Odd\r\n") << -1;
    QTest::newRow("an endless line") << QByteArray("HTTP/1.1 200 ") + QByteArray(2000, 'a') << -1;
}

void TestHealthTarget::status()
{
    QFETCH(QByteArray, received);
    QFETCH(int, status);
    QCOMPARE(responseStatus(received), status);
}

QTEST_APPLESS_MAIN(TestHealthTarget)
#include "tst_health_target.moc"
