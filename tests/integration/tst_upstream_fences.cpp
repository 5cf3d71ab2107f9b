// SPDX-License-Identifier: GPL-3.0-or-later
// Upstream heads and request targets that QNetworkAccessManager 6.4 would let through (issue
// 16), on both transports: an interim 1xx taken for the answer, Content-Length together with
// chunked, more than 100 header fields, a CR, LF or NUL in a reason phrase or header value, a
// response head over 64 KiB, and targets QUrl rewrites. The qnam transport fences what SLP
// can see from outside QNAM (a 502, or a 400 naming the transport for a target); the socket
// transport parses every one of them itself. Upstream: a scripted raw TCP server inside this
// test, answering by the last path segment, recording each request's bytes and connection.
#include "testsupport.h"
#include "wire/parser.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QtTest>

#include <memory>
#include <utility>

using namespace slp::test;

namespace {

constexpr int kRouteTimeoutMs = 2000;

bool onQnam()
{
    return SlpDaemon::transport() == QLatin1String("qnam");
}

QString show(const HttpResult &r)
{
    return QStringLiteral("status %1 complete %2 error '%3' raw: %4")
        .arg(r.status)
        .arg(r.complete)
        .arg(r.error, QString::fromUtf8(r.raw.left(300)));
}

} // namespace

class TestUpstreamFences : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void interimHeadIsNeverTheAnswer_data();
    void interimHeadIsNeverTheAnswer();
    void interimThenSilenceIs502();
    void lengthWithChunked();
    void moreThanHundredFields();
    void controlBytesInHead_data();
    void controlBytesInHead();
    void headOver64KiB();
    void targets_data();
    void targets();
    // Not fenced under qnam (docs/DECISIONS.md, "What qnam cannot fence"): on qnam these
    // print what the client got and skip. Reproduce with
    // SLP_TEST_TRANSPORT=qnam tst_upstream_fences unsolicitedBytesOnIdleConnection badChunkSize
    void unsolicitedBytesOnIdleConnection();
    void badChunkSize();

private:
    HttpResult post(const QByteArray &target, int timeoutMs = 15000);
    // The 502 is slp's own and the attempt's failure is logged: that line, or empty.
    QString expect502(const HttpResult &r);

    ScriptServer m_script;
    SlpDaemon m_slp;
};

void TestUpstreamFences::initTestCase()
{
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY(m_script.start());
    m_script.set("plain", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    // The real answer follows the interim heads in the same write: under qnam it sat on the
    // pooled connection and went to the next request.
    m_script.set("interim102", "HTTP/1.1 102 Processing\r\n\r\n"
                               "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst");
    m_script.set("interim103", "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
                               "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst");
    m_script.set("interimsilence", "HTTP/1.1 102 Processing\r\n\r\n");
    QByteArray chunks;
    for (int i = 0; i < 8; ++i)
        chunks += "a\r\n" + QByteArray(10, char('a' + i)) + "\r\n";
    m_script.set("lengthchunked", "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n" +
                                      chunks + "0\r\n\r\n");
    QByteArray many = "HTTP/1.1 200 OK\r\n";
    for (int i = 0; i < 150; ++i)
        many += "X-Field-" + QByteArray::number(i) + ": v" + QByteArray::number(i) + "\r\n";
    m_script.set("manyfields", many + "Content-Length: 2\r\n\r\nok");
    m_script.set("crreason", "HTTP/1.1 200 O\rK\r\nContent-Length: 2\r\n\r\nok");
    m_script.set("nulreason", QByteArray("HTTP/1.1 200 O\0K\r\nContent-Length: 2\r\n\r\nok", 41));
    m_script.set("crvalue", "HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 2\r\n\r\nok");
    m_script.set("nulvalue",
                 QByteArray("HTTP/1.1 200 OK\r\nX-A: a\0b\r\nContent-Length: 2\r\n\r\nok", 50));
    m_script.set("idleforge", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    m_script.setLater("idleforge", "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged");
    m_script.set("badchunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             "5\r\nhello\r\nzz\r\n");
    m_script.closeAfter("badchunk");
    m_script.set("bighead", "HTTP/1.1 200 OK\r\nX-Big: " + QByteArray(70 * 1024, 'x') +
                                "\r\nContent-Length: 2\r\n\r\nok");

    const QString config = QStringLiteral("log_requests: true\n"
                                          "shutdown_grace: 1s\n"
                                          "backends:\n"
                                          "  - name: raw\n"
                                          "    url: http://127.0.0.1:%1\n"
                                          "    model: alpha\n"
                                          "    timeout: %2ms\n")
                               .arg(m_script.port())
                               .arg(kRouteTimeoutMs);
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
}

void TestUpstreamFences::cleanupTestCase()
{
    const bool alive = m_slp.process().isRunning();
    m_slp.stop();
    QVERIFY2(alive, "slp died during the test");
}

void TestUpstreamFences::init()
{
    m_script.recorded.clear();
}

HttpResult TestUpstreamFences::post(const QByteArray &target, int timeoutMs)
{
    const QByteArray body = R"({"model":"raw"})";
    return rawHttp(m_slp.host(), m_slp.port(),
                   "POST " + target +
                       " HTTP/1.1\r\nHost: slp\r\nContent-Type: application/json\r\n"
                       "Content-Length: " +
                       QByteArray::number(body.size()) + "\r\n\r\n" + body,
                   timeoutMs);
}

QString TestUpstreamFences::expect502(const HttpResult &r)
{
    [&] {
        QVERIFY2(r.status == 502, qPrintable(show(r) + m_slp.stderrText().right(1500)));
        QVERIFY2(r.interimStatuses.isEmpty(), qPrintable(show(r)));
    }();
    const QString id = QString::fromLatin1(r.header("x-request-id"));
    const QRegularExpressionMatch line = m_slp.waitForLog(QRegularExpression(
        QStringLiteral("\\[%1\\] Attempt 1/1 for model raw failed: .*").arg(id)));
    [&] {
        QVERIFY2(id.startsWith(QLatin1String("slpq")), qPrintable(show(r)));
        QVERIFY2(line.hasMatch(), qPrintable(m_slp.stderrText().right(1500)));
    }();
    return line.captured(0);
}

void TestUpstreamFences::interimHeadIsNeverTheAnswer_data()
{
    QTest::addColumn<QByteArray>("script");
    QTest::newRow("102") << QByteArray("interim102");
    QTest::newRow("103") << QByteArray("interim103");
}

void TestUpstreamFences::interimHeadIsNeverTheAnswer()
{
    QFETCH(QByteArray, script);
    const HttpResult first = post("/v1/s/" + script);
    if (onQnam()) {
        // QNAM would take the 1xx for the answer: refused, and its connection closed.
        expect502(first);
    } else {
        // The socket transport skips interim heads and relays the final one.
        QVERIFY2(first.ok() && first.status == 200, qPrintable(show(first)));
        QCOMPARE(first.body, QByteArray("first"));
    }
    // The next request gets its own answer, never the first one's.
    for (int i = 0; i < 3; ++i) {
        const HttpResult next = post("/v1/s/plain");
        QVERIFY2(next.ok() && next.status == 200, qPrintable(show(next)));
        QCOMPARE(next.body, QByteArray("ok"));
    }
}

void TestUpstreamFences::interimThenSilenceIs502()
{
    QElapsedTimer clock;
    clock.start();
    const HttpResult r = post("/v1/s/interimsilence");
    expect502(r);
    // At the latest when the route's timeout fires (qnam refuses the 1xx at once).
    QVERIFY2(clock.elapsed() < kRouteTimeoutMs + 3000,
             qPrintable(QString::number(clock.elapsed())));
    const HttpResult next = post("/v1/s/plain");
    QVERIFY2(next.ok() && next.status == 200 && next.body == "ok", qPrintable(show(next)));
}

void TestUpstreamFences::lengthWithChunked()
{
    // Both transports refuse it (http-parser since 2.9.3, qnam's fence): never "told 8 bytes
    // and 80 relayed".
    const HttpResult r = post("/v1/s/lengthchunked");
    expect502(r);
    const HttpResult next = post("/v1/s/plain");
    QVERIFY2(next.ok() && next.body == "ok", qPrintable(show(next)));
}

void TestUpstreamFences::moreThanHundredFields()
{
    QElapsedTimer clock;
    clock.start();
    const HttpResult r = post("/v1/s/manyfields");
    qInfo("150 fields: %d after %lld ms", r.status, clock.elapsed());
    if (onQnam()) {
        // Qt 6.4 drops every field of a head with more than 100 and reads the body to the
        // close: a 502 (at once: no field at all is refused), within the route's timeout.
        expect502(r);
        QVERIFY2(clock.elapsed() < kRouteTimeoutMs + 3000,
                 qPrintable(QString::number(clock.elapsed())));
    } else {
        QVERIFY2(r.ok() && r.status == 200, qPrintable(show(r)));
        QCOMPARE(r.header("x-field-149"), QByteArray("v149"));
        QCOMPARE(r.body, QByteArray("ok"));
    }
    const HttpResult next = post("/v1/s/plain");
    QVERIFY2(next.ok() && next.body == "ok", qPrintable(show(next)));
}

void TestUpstreamFences::controlBytesInHead_data()
{
    QTest::addColumn<QByteArray>("script");
    QTest::newRow("CR in reason") << QByteArray("crreason");
    QTest::newRow("NUL in reason") << QByteArray("nulreason");
    QTest::newRow("CR in value") << QByteArray("crvalue");
    QTest::newRow("NUL in value") << QByteArray("nulvalue");
}

void TestUpstreamFences::controlBytesInHead()
{
    QFETCH(QByteArray, script);
    const HttpResult r = post("/v1/s/" + script);
    expect502(r);
    QVERIFY2(!r.raw.contains("O\rK") && !r.raw.contains("a\rb"), qPrintable(show(r)));
    const HttpResult next = post("/v1/s/plain");
    QVERIFY2(next.ok() && next.body == "ok", qPrintable(show(next)));
}

void TestUpstreamFences::headOver64KiB()
{
    QElapsedTimer clock;
    clock.start();
    const HttpResult r = post("/v1/s/bighead");
    const QString line = expect502(r);
    qInfo("70 KiB head: %d after %lld ms: %s", r.status, clock.elapsed(), qPrintable(line));
    const HttpResult next = post("/v1/s/plain");
    QVERIFY2(next.ok() && next.body == "ok", qPrintable(show(next)));
}

void TestUpstreamFences::targets_data()
{
    QTest::addColumn<QByteArray>("target");
    QTest::addColumn<bool>("qnamSends"); // QUrl keeps it (unreserved %XX decoded at most)
    QTest::addColumn<QByteArray>("qnamWire");
    QTest::newRow("%zz") << QByteArray("/v1/s/plain?q=%zz") << false << QByteArray();
    QTest::newRow("50%") << QByteArray("/v1/s/plain?off=50%") << false << QByteArray();
    QTest::newRow("{x}|y^") << QByteArray("/v1/s/plain?{x}|y^") << false << QByteArray();
    QTest::newRow("#frag") << QByteArray("/v1/s/plain#frag") << false << QByteArray();
    QTest::newRow("%7e") << QByteArray("/v1/s/plain?a=%7e") << true
                         << QByteArray("/v1/s/plain?a=~");
    QTest::newRow("plain") << QByteArray("/v1/s/plain?a=1&b=x%2Fy") << true
                           << QByteArray("/v1/s/plain?a=1&b=x%2Fy");
}

void TestUpstreamFences::targets()
{
    QFETCH(QByteArray, target);
    QFETCH(bool, qnamSends);
    QFETCH(QByteArray, qnamWire);
    const HttpResult r = post(target);
    if (onQnam() && !qnamSends) {
        QVERIFY2(r.status == 400, qPrintable(show(r)));
        const QString message = QJsonDocument::fromJson(r.body)
                                    .object()
                                    .value("error")
                                    .toObject()
                                    .value("message")
                                    .toString();
        QCOMPARE(message, QStringLiteral("request target cannot be sent unchanged through "
                                         "upstream_transport: qnam (use socket)"));
        QVERIFY(m_script.recorded.isEmpty()); // nothing went upstream
        return;
    }
    QVERIFY2(r.ok() && r.status == 200, qPrintable(show(r) + m_slp.stderrText().right(1500)));
    QCOMPARE(m_script.recorded.size(), 1);
    QCOMPARE(m_script.recorded.first().target, onQnam() ? qnamWire : target);
}

void TestUpstreamFences::unsolicitedBytesOnIdleConnection()
{
    const HttpResult first = post("/v1/s/idleforge");
    QVERIFY2(first.ok() && first.body == "ok", qPrintable(show(first)));
    // The forged response goes out on the idle pooled connection; slp has a quiet window to
    // read it before the next request comes.
    // (Written once the connection is still open 200 ms after the answer: say what happened
    // to it when it was not.)
    QVERIFY2(QTest::qWaitFor([&] { return m_script.laterWritten == 1; }, 5000),
             qPrintable(QStringLiteral("no forged answer written: %1 connections, %2 requests; "
                                       "slp said: %3")
                            .arg(m_script.connections)
                            .arg(m_script.recorded.size())
                            .arg(m_slp.stderrText().right(1500))));
    QTest::qWait(kQuietWindowMs);
    const HttpResult next = post("/v1/s/plain");
    if (onQnam()) {
        qWarning("qnam: the next request got status %d body '%s' (its own answer is 'ok')",
                 next.status, next.body.constData());
        QSKIP("known qnam limit: bytes on an idle pooled connection become the next answer");
    }
    QVERIFY2(next.ok() && next.body == "ok", qPrintable(show(next)));
}

void TestUpstreamFences::badChunkSize()
{
    const auto mark = m_slp.mark();
    const HttpResult r = post("/v1/s/badchunk");
    if (onQnam()) {
        qWarning("qnam: status %d, complete %d, body '%s' (a clean end would be a silent cut)",
                 r.status, int(r.complete), r.body.constData());
        QSKIP("known qnam limit: a malformed chunk size reads as the end of the body");
    }
    QCOMPARE(r.status, 200);
    QVERIFY2(!r.complete, qPrintable(show(r))); // never a clean end
    QVERIFY(m_slp.waitForLog(QRegularExpression(QStringLiteral("broke off after")), 5000, mark)
                .hasMatch());
}

QTEST_GUILESS_MAIN(TestUpstreamFences)
#include "tst_upstream_fences.moc"
