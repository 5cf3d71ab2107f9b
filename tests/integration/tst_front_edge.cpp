// SPDX-License-Identifier: GPL-3.0-or-later
// The front edge tried as an attacker would, with raw sockets: SLP's own parse alone decides
// where each request starts and ends. For every case the bytes the client gets back and the
// requests the upstream saw are checked: a refused request never reaches the mock, and no
// byte of one request is ever run as another. Limits are shrunk so each case is quick:
// header_timeout 1s, idle_timeout 1s (the body deadline), max_header_bytes 8KiB,
// max_body_bytes 64KiB.
#include "clientedge.h"
#include "testsupport.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace slp::test;

namespace {

const QByteArray kBody = R"({"model":"good","messages":[{"role":"user","content":"hi"}]})";
// What a smuggler hides in a body, a trailer or after a closing request.
const QByteArray kHidden = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                           QByteArray::number(kBody.size()) + "\r\n\r\n" + kBody;

QByteArray post(QByteArrayView extraHeaders, QByteArrayView body,
                QByteArrayView target = "/v1/chat/completions")
{
    return "POST " + target.toByteArray() + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
           extraHeaders.toByteArray() + "\r\n" + body.toByteArray();
}

QByteArray lengthOf(const QByteArray &body)
{
    return "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
}

QString show(const HttpResult &r)
{
    return QStringLiteral("status %1 error '%2' raw: %3")
        .arg(r.status)
        .arg(r.error, QString::fromUtf8(r.raw.left(300)));
}

} // namespace

class TestFrontEdge : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanupTestCase();

    void tooManyFieldsIs431AndNothingRuns();
    void oversizedFieldIs431();
    void chunkedTrailerIsRefused();
    void leadingBlankLinesCountTowardTheHeadLimit();
    void chunkSizeLinesAreBounded();
    void chunkFramingCountsTowardTheBodyLimit();
    void bodyDeadlineRunsFromTheHead();
    void validatorSeesEveryByteWhateverTheReads();
    void headAnswersCarryNoBody();
    void http10WithTransferEncodingCloses();
    void nothingAfterConnectionCloseRuns();
    void pipelinedPostsRunOneAtATime();
    void continueIsQueuedBehindEarlierResponses();
    void hostRules_data();
    void hostRules();
    void targetRules_data();
    void targetRules();

private:
    // `request` on a new connection: the response, and whether slp closed the connection.
    HttpResult send(const QByteArray &request, bool *closed);
    int mockRequests(int atLeast = 0, int timeoutMs = 1500);

    MockUpstream m_mock;
    SlpDaemon m_slp;
};

void TestFrontEdge::initTestCase()
{
    QVERIFY2(m_slp.startWith(m_mock, clientEdgeConfig), qPrintable(m_slp.errorString()));
}

void TestFrontEdge::init()
{
    QVERIFY(m_mock.reset());
}

void TestFrontEdge::cleanupTestCase()
{
    const bool alive = m_slp.process().isRunning();
    QCOMPARE(m_slp.stop(10000), 0);
    m_mock.stop();
    QVERIFY2(alive, "slp died during the test");
}

HttpResult TestFrontEdge::send(const QByteArray &request, bool *closed)
{
    RawConnection conn;
    if (!conn.connectTo(m_slp.host(), m_slp.port()))
        return {};
    conn.send(request);
    HttpResult r = conn.readResponse(8000);
    // Anything more on the connection would be a second, smuggled answer.
    const bool more = conn.waitForData("HTTP/1.1", 500);
    if (more)
        r.error =
            QStringLiteral("a second response followed: ") + QString::fromUtf8(conn.received());
    *closed = r.peerClosed || conn.waitForClosed(5000);
    return r;
}

// What the upstream saw, after giving anything in flight a moment to arrive.
int TestFrontEdge::mockRequests(int atLeast, int timeoutMs)
{
    return int(m_mock.waitForRequests(std::max(atLeast, 1), timeoutMs).size());
}

void TestFrontEdge::tooManyFieldsIs431AndNothingRuns()
{
    // Qt 6.4 drops every field past 100, then takes the body for the next request.
    QByteArray fields;
    for (int i = 0; i < 101; ++i)
        fields += "X-F" + QByteArray::number(i) + ": v\r\n";
    bool closed = false;
    const HttpResult r = send(post(fields + lengthOf(kHidden), kHidden), &closed);
    QVERIFY2(r.status == 431 && r.error.isEmpty(), qPrintable(show(r)));
    QVERIFY(closed);
    QCOMPARE(mockRequests(), 0);

    // 100 fields are Qt's limit, and pass whole.
    fields.clear();
    for (int i = 0; i < 97; ++i) // with Host, Connection and Content-Length: 100
        fields += "X-F" + QByteArray::number(i) + ": v\r\n";
    const HttpResult ok = rawHttp(m_slp.host(), m_slp.port(),
                                  post(fields + "Connection: close\r\n" + lengthOf(kBody), kBody));
    QVERIFY2(ok.status == 200, qPrintable(show(ok)));
}

void TestFrontEdge::oversizedFieldIs431()
{
    // A 100 KiB field is past both limits; SLP answers 431 on its own head limit first and
    // never lets Qt frame the body.
    bool closed = false;
    const QByteArray big = "X-Big: " + QByteArray(101 * 1024, 'a') + "\r\n";
    const HttpResult r = send(post(big + lengthOf(kHidden), kHidden), &closed);
    QVERIFY2(r.status == 431, qPrintable(show(r)));
    QVERIFY(closed);
    QCOMPARE(mockRequests(), 0);
}

void TestFrontEdge::chunkedTrailerIsRefused()
{
    // Qt reads two bytes after the last chunk and calls the body done: a trailer would run.
    const QByteArray chunked = QByteArray::number(kBody.size(), 16) + "\r\n" + kBody + "\r\n0\r\n" +
                               kHidden.first(kHidden.indexOf("\r\n\r\n") + 2) + "\r\n";
    bool closed = false;
    const HttpResult r = send(post("Transfer-Encoding: chunked\r\n", chunked), &closed);
    QVERIFY2(r.status == 400 && r.error.isEmpty(), qPrintable(show(r)));
    QVERIFY(r.body.contains("trailer"));
    QVERIFY(closed);
    QCOMPARE(mockRequests(), 0);
}

void TestFrontEdge::leadingBlankLinesCountTowardTheHeadLimit()
{
    QByteArray blanks;
    for (int i = 0; i < 8 * 1024; ++i)
        blanks += "\r\n";
    bool closed = false;
    const HttpResult r = send(blanks + post(lengthOf(kBody), kBody), &closed);
    QVERIFY2(r.status == 431, qPrintable(show(r)));
    QVERIFY(closed);
    QCOMPARE(mockRequests(), 0);
    // A few stray CRLFs between requests stay tolerated.
    const HttpResult ok =
        rawHttp(m_slp.host(), m_slp.port(),
                "\r\n\r\n" + post("Connection: close\r\n" + lengthOf(kBody), kBody));
    QVERIFY2(ok.status == 200, qPrintable(show(ok)));
}

void TestFrontEdge::chunkSizeLinesAreBounded()
{
    bool closed = false;
    const QByteArray ext = QByteArray::number(kBody.size(), 16) + ";x=" + QByteArray(6000, 'a') +
                           "\r\n" + kBody + "\r\n0\r\n\r\n";
    const HttpResult r = send(post("Transfer-Encoding: chunked\r\n", ext), &closed);
    QVERIFY2(r.status == 400, qPrintable(show(r)));
    QVERIFY(closed);
    const QByteArray spaces = QByteArray::number(kBody.size(), 16) + QByteArray(6000, ' ') +
                              "\r\n" + kBody + "\r\n0\r\n\r\n";
    const HttpResult s = send(post("Transfer-Encoding: chunked\r\n", spaces), &closed);
    QVERIFY2(s.status == 400, qPrintable(show(s)));
    QCOMPARE(mockRequests(), 0);
}

void TestFrontEdge::chunkFramingCountsTowardTheBodyLimit()
{
    // 1-byte chunks with 3 KiB extensions: 120 KiB on the wire for a 40-byte body.
    QByteArray body;
    for (int i = 0; i < 40; ++i)
        body += "1;e=" + QByteArray(3000, 'x') + "\r\n" + "a\r\n";
    body += "0\r\n\r\n";
    bool closed = false;
    const HttpResult r = send(post("Transfer-Encoding: chunked\r\n", body), &closed);
    QVERIFY2(r.status == 413, qPrintable(show(r)));
    QVERIFY(closed);
    QCOMPARE(mockRequests(), 0);
}

void TestFrontEdge::bodyDeadlineRunsFromTheHead()
{
    // One byte every 200 ms is progress each time, but the whole body must arrive within
    // idle_timeout (1s) of the head.
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(post(lengthOf(kBody), "")));
    QElapsedTimer clock;
    clock.start();
    qsizetype sent = 0;
    while (sent < kBody.size() - 1 && conn.isOpen() && clock.elapsed() < 6000) {
        conn.send(kBody.mid(sent++, 1));
        if (conn.waitForData("HTTP/1.1", 200))
            break;
    }
    const HttpResult r = conn.readResponse(5000);
    QVERIFY2(r.status == 408, qPrintable(show(r)));
    QVERIFY2(clock.elapsed() < 1500 + 500, qPrintable(QString::number(clock.elapsed())));
    QCOMPARE(mockRequests(), 0);
}

void TestFrontEdge::validatorSeesEveryByteWhateverTheReads()
{
    // The head ends in a second write that also carries a bad chunk size: every split is
    // refused the same way.
    const QByteArray request = post("Transfer-Encoding: chunked\r\n", "0x0\r\n\r\n" + kHidden);
    for (int round = 0; round < 5; ++round) {
        const qsizetype cut = request.indexOf("\r\n\r\n") - 3 - round;
        RawConnection conn;
        QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
        QVERIFY(conn.send(request.first(cut)));
        QTest::qWait(50);
        QVERIFY(conn.send(request.sliced(cut)));
        const HttpResult r = conn.readResponse(5000);
        QVERIFY2(r.status == 400, qPrintable(QString::number(round) + ": " + show(r)));
    }
    QCOMPARE(mockRequests(), 0);
}

void TestFrontEdge::headAnswersCarryNoBody()
{
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    const HttpResult head = conn.readResponse(5000, true);
    QVERIFY2(head.status == 405 && head.body.isEmpty(), qPrintable(show(head)));
    // The next answer starts right where the HEAD answer's head ended.
    const HttpResult next = conn.readResponse(5000);
    QVERIFY2(next.status == 200 && next.body == "ok\n", qPrintable(show(next)));
}

void TestFrontEdge::http10WithTransferEncodingCloses()
{
    const QByteArray chunked =
        QByteArray::number(kBody.size(), 16) + "\r\n" + kBody + "\r\n0\r\n\r\n";
    const QByteArray request = "POST /v1/chat/completions HTTP/1.0\r\nConnection: keep-alive\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n" +
                               chunked;
    bool closed = false;
    const HttpResult r = send(request, &closed);
    QVERIFY2(r.status == 200, qPrintable(show(r)));
    QCOMPARE(r.header("connection").toLower(), QByteArray("close"));
    QVERIFY(closed);
}

void TestFrontEdge::nothingAfterConnectionCloseRuns()
{
    bool closed = false;
    const HttpResult r =
        send(post("Connection: close\r\n" + lengthOf(kBody), kBody) + kHidden, &closed);
    QVERIFY2(r.status == 200 && r.error.isEmpty(), qPrintable(show(r)));
    QVERIFY(closed);
    QCOMPARE(mockRequests(2), 1);
}

void TestFrontEdge::pipelinedPostsRunOneAtATime()
{
    // Three slow POSTs in one write: answered in order, never more than one upstream at once.
    const QByteArray slow = "X-Mock-Delay-Ms: 300\r\n" + lengthOf(kBody);
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(post(slow, kBody) + post(slow, kBody) + post(slow, kBody)));
    for (int i = 0; i < 3; ++i) {
        const HttpResult r = conn.readResponse(8000);
        QVERIFY2(r.status == 200, qPrintable(QString::number(i) + ": " + show(r)));
    }
    QCOMPARE(mockRequests(3), 3);
    QCOMPARE(m_mock.stats().value("max_in_flight").toInt(), 1);
}

void TestFrontEdge::continueIsQueuedBehindEarlierResponses()
{
    // A slow answer is still being written when the next request asks for 100 Continue: the
    // interim answer waits for its turn instead of landing inside the first response.
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    const QByteArray stream = R"({"model":"good","stream":true,"messages":[]})";
    QVERIFY(conn.send(post("X-Mock-Event-Interval-Ms: 100\r\n" + lengthOf(stream), stream) +
                      post("Expect: 100-continue\r\n" + lengthOf(kBody), "")));
    const HttpResult first = conn.readResponse(8000);
    QVERIFY2(first.status == 200 && first.complete, qPrintable(show(first)));
    QVERIFY2(!first.raw.contains("100 Continue"), qPrintable(show(first)));
    QVERIFY(conn.waitForData("HTTP/1.1 100 Continue\r\n\r\n", 5000));
    QVERIFY(conn.received().startsWith("HTTP/1.1 100 Continue\r\n\r\n"));
    QVERIFY(conn.send(kBody));
    const HttpResult second = conn.readResponse(8000);
    QVERIFY2(second.status == 200, qPrintable(show(second)));
}

void TestFrontEdge::hostRules_data()
{
    QTest::addColumn<QByteArray>("hosts");
    QTest::newRow("missing") << QByteArray();
    QTest::newRow("repeated") << QByteArray("Host: a\r\nHost: a\r\n");
    QTest::newRow("with a path") << QByteArray("Host: a/b\r\n");
    QTest::newRow("with userinfo") << QByteArray("Host: u@a\r\n");
    QTest::newRow("bad port") << QByteArray("Host: a:x\r\n");
}

void TestFrontEdge::hostRules()
{
    QFETCH(QByteArray, hosts);
    const QByteArray request =
        "POST /v1/chat/completions HTTP/1.1\r\n" + hosts + lengthOf(kBody) + "\r\n" + kBody;
    bool closed = false;
    const HttpResult r = send(request, &closed);
    QVERIFY2(r.status == 400, qPrintable(show(r)));
    QVERIFY(r.body.contains("Host"));
    QCOMPARE(mockRequests(), 0);
}

void TestFrontEdge::targetRules_data()
{
    QTest::addColumn<QByteArray>("target");
    QTest::newRow("dotdot") << QByteArray("/v1/../admin/x");
    QTest::newRow("encoded dotdot") << QByteArray("/v1/%2e%2e/admin/x");
    QTest::newRow("dot") << QByteArray("/v1/./chat/completions");
    QTest::newRow("absolute form") << QByteArray("http://127.0.0.1/v1/chat/completions");
}

void TestFrontEdge::targetRules()
{
    QFETCH(QByteArray, target);
    bool closed = false;
    const HttpResult r = send(post(lengthOf(kBody), kBody, target), &closed);
    QVERIFY2(r.status == 400, qPrintable(show(r)));
    QCOMPARE(mockRequests(), 0);
}

QTEST_MAIN(TestFrontEdge)
#include "tst_front_edge.moc"
