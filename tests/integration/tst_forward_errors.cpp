// SPDX-License-Identifier: GPL-3.0-or-later
// What slp answers itself and never forwards: bad bodies, unknown ids, oversized bodies,
// malformed framing, wrong methods and paths; and how it reports upstreams that fail
// (502 message, log line, retries), the metrics those requests leave, and the head timeout.
#include "prometheustext.h"
#include "testsupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <QtTest>

using namespace slp::test;

namespace {

const QRegularExpression SlpIdRe(QStringLiteral("^slpq[0-9a-f]{24}$"));

// Empty when `r` is slp's own OpenAI-style error with `status`; else what is wrong.
QString errorShapeProblem(const HttpResult &r, int status)
{
    if (r.status != status)
        return QStringLiteral("status %1, want %2 (%3): %4")
            .arg(r.status)
            .arg(status)
            .arg(r.error, QString::fromUtf8(r.raw.left(600)));
    if (!SlpIdRe.match(QString::fromLatin1(r.header("x-request-id"))).hasMatch())
        return QStringLiteral("X-Request-Id %1 is not slp's")
            .arg(QString::fromLatin1(r.header("x-request-id")));
    if (r.headerValues("x-request-id").size() != 1)
        return QStringLiteral("more than one X-Request-Id");
    if (!r.header("content-type").startsWith("application/json"))
        return QStringLiteral("Content-Type %1").arg(QString::fromLatin1(r.header("content-type")));
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(r.body, &err);
    if (!doc.isObject())
        return QStringLiteral("body is not a JSON object: %1").arg(QString::fromUtf8(r.body));
    const QJsonObject top = doc.object();
    if (top.keys() != QStringList{QStringLiteral("error")} || !top.value("error").isObject())
        return QStringLiteral("want {\"error\":{...}}: %1").arg(QString::fromUtf8(r.body));
    const QJsonObject e = top.value("error").toObject();
    for (const char *key : {"message", "type", "param", "code"}) {
        if (!e.contains(QLatin1String(key)))
            return QStringLiteral("error.%1 missing: %2")
                .arg(QLatin1String(key), QString::fromUtf8(r.body));
    }
    if (!e.value("message").isString() || e.value("message").toString().isEmpty())
        return QStringLiteral("error.message must be a non-empty string");
    if (!e.value("type").isString() || e.value("type").toString().isEmpty())
        return QStringLiteral("error.type must be a non-empty string");
    if (!e.value("param").isString() && !e.value("param").isNull())
        return QStringLiteral("error.param must be a string or null");
    if (!e.value("code").isString() && !e.value("code").isNull())
        return QStringLiteral("error.code must be a string or null");
    return {};
}

QJsonObject errorObject(const HttpResult &r)
{
    return QJsonDocument::fromJson(r.body).object().value("error").toObject();
}

QByteArray post(QByteArrayView extraHeaders, QByteArrayView body)
{
    return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
           extraHeaders.toByteArray() + "\r\n" + body.toByteArray();
}

// The failure line of one attempt: `[ID] Attempt N/M for model M failed: POST "URL": detail`
// (a leading timestamp allowed).
QRegularExpression attemptLine(const QString &id, int n, int of, const QString &model, quint16 port)
{
    // Built without a raw string: moc mistakes a "//" inside one for a comment.
    const QString url = QStringLiteral("http://127\\.0\\.0\\.1:%1/v1/chat/completions").arg(port);
    return QRegularExpression(
        QStringLiteral("^(\\S+ )?\\[%1\\] Attempt %2/%3 for model %4 failed: POST \"%5\": \\S")
            .arg(id)
            .arg(n)
            .arg(of)
            .arg(QRegularExpression::escape(model), url));
}

} // namespace

class TestForwardErrors : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanupTestCase();

    void badBody_data();
    void badBody();
    void unknownModel_data();
    void unknownModel();
    void metricsCountBodyErrors();
    void bodyOverLimitRefusedBeforeBody_data();
    void bodyOverLimitRefusedBeforeBody();
    void chunkedBodyOverLimit_data();
    void chunkedBodyOverLimit();
    void bodyAtLimitPasses();
    void malformedFraming_data();
    void malformedFraming();
    void http2Preface();
    void methodsAndPaths_data();
    void methodsAndPaths();
    void healthz();
    void upstreamRefused();
    void upstreamRefusedWithRetry();
    void resetBeforeHeadWithRetry();
    void resetBeforeHeadWithoutRetry();
    void metricsCountUpstreamFailures();
    void headerTimeout();

private:
    HttpResult postBody(const QByteArray &body, int timeoutMs = 10000);
    // The mock's recording since init(): slp's own answers must leave it empty.
    bool upstreamUntouched();

    MockUpstream m_mock;
    SlpDaemon m_slp;
    DeadPort m_deadPort; // held for the whole suite: connections to it are refused
    quint16 m_closedPort = 0;
    // What was sent, for the metrics check.
    int m_sent400 = 0;
    int m_sent404 = 0;
    QStringList m_unknownIds;
};

void TestForwardErrors::initTestCase()
{
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY2(!MockUpstream::binary().isEmpty(), "set SLP_MOCK_BIN");
    QVERIFY2(m_mock.start(), qPrintable(m_mock.errorString()));
    m_closedPort = m_deadPort.port();
    QVERIFY(m_closedPort > 0);
    // All pinned: no discovery probe ever reaches the mock or the closed port.
    const QString config = QStringLiteral(R"(max_body_bytes: 1KiB
header_timeout: 1s
backends:
  - name: good
    url: %1
    model: good-upstream
    timeout: 10s
  - name: refused
    url: http://127.0.0.1:%2
    model: refused-upstream
    timeout: 5s
  - name: refused-retry
    url: http://127.0.0.1:%2
    model: refused-upstream
    timeout: 5s
    retry: true
  - name: reset-retry
    url: %1
    model: reset-upstream
    timeout: 10s
    retry: true
)")
                               .arg(m_mock.url())
                               .arg(m_closedPort);
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
}

void TestForwardErrors::init()
{
    QVERIFY(m_mock.reset());
}

void TestForwardErrors::cleanupTestCase()
{
    m_slp.stop();
    m_mock.stop();
}

HttpResult TestForwardErrors::postBody(const QByteArray &body, int timeoutMs)
{
    return httpRequest("POST", m_slp.url() + "/v1/chat/completions", body,
                       {{"Content-Type", "application/json"}}, timeoutMs);
}

bool TestForwardErrors::upstreamUntouched()
{
    // Give a stray forward a moment to land before declaring the recording empty.
    pumpEvents(50);
    const QJsonArray got = m_mock.requests();
    if (!got.isEmpty())
        qWarning("upstream received %d request(s): %s", int(got.size()),
                 QJsonDocument(got).toJson(QJsonDocument::Compact).left(600).constData());
    return got.isEmpty();
}

void TestForwardErrors::badBody_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::newRow("not-json-truncated") << QByteArray(R"({"model":"good",)");
    QTest::newRow("not-json-text") << QByteArray("model=good");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("trailing-garbage") << QByteArray(R"({"model":"good"} x)");
    QTest::newRow("invalid-utf8") << QByteArray("{\"model\":\"good\",\"x\":\"\xff\xfe\"}");
    QTest::newRow("json-array") << QByteArray(R"([{"model":"good"}])");
    QTest::newRow("json-string") << QByteArray(R"("good")");
    QTest::newRow("json-number") << QByteArray("42");
    QTest::newRow("missing-model")
        << QByteArray(R"({"messages":[{"role":"user","content":"hi"}]})");
    QTest::newRow("model-only-nested") << QByteArray(R"({"messages":[{"model":"good"}]})");
    QTest::newRow("model-number") << QByteArray(R"({"model":5})");
    QTest::newRow("model-null") << QByteArray(R"({"model":null})");
    QTest::newRow("model-object") << QByteArray(R"({"model":{"id":"good"}})");
    QTest::newRow("model-array") << QByteArray(R"({"model":["good"]})");
    QTest::newRow("model-bool") << QByteArray(R"({"model":true})");
    QTest::newRow("model-twice-same") << QByteArray(R"({"model":"good","model":"good"})");
    QTest::newRow("model-twice-different")
        << QByteArray(R"({"model":"good","messages":[],"model":"nope"})");
    QTest::newRow("model-twice-escaped-key")
        << QByteArray(R"({"model":"good","mod\u0065l":"good"})");
}

void TestForwardErrors::badBody()
{
    QFETCH(QByteArray, body);
    const HttpResult r = postBody(body);
    QVERIFY2(r.ok(), qPrintable(r.error));
    ++m_sent400;
    const QString problem = errorShapeProblem(r, 400);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(errorObject(r).value("type").toString(), QStringLiteral("invalid_request_error"));
    QVERIFY(upstreamUntouched());
}

void TestForwardErrors::unknownModel_data()
{
    QTest::addColumn<QString>("id");
    QTest::newRow("absent") << QStringLiteral("no-such-model-7f3");
    // Exact match only: no case folding, no trimming, no prefix match.
    QTest::newRow("case") << QStringLiteral("GOOD");
    QTest::newRow("trailing-space") << QStringLiteral("good ");
    QTest::newRow("prefix") << QStringLiteral("goo");
    QTest::newRow("pinned-upstream-name") << QStringLiteral("good-upstream");
}

void TestForwardErrors::unknownModel()
{
    QFETCH(QString, id);
    const QByteArray body =
        QJsonDocument(QJsonObject{{"model", id}}).toJson(QJsonDocument::Compact);
    const HttpResult r = postBody(body);
    QVERIFY2(r.ok(), qPrintable(r.error));
    ++m_sent404;
    m_unknownIds << id;
    const QString problem = errorShapeProblem(r, 404);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const QJsonObject e = errorObject(r);
    QCOMPARE(e.value("code").toString(), QStringLiteral("model_not_found"));
    QVERIFY2(e.value("message").toString().contains(id), qPrintable(e.value("message").toString()));
    QVERIFY(upstreamUntouched());
}

void TestForwardErrors::bodyOverLimitRefusedBeforeBody_data()
{
    QTest::addColumn<QByteArray>("extra");
    QTest::newRow("plain") << QByteArray();
    // The 413 replaces the 100 Continue: the client never sends the body.
    QTest::newRow("expect-100") << QByteArray("Expect: 100-continue\r\n");
}

void TestForwardErrors::bodyOverLimitRefusedBeforeBody()
{
    QFETCH(QByteArray, extra);
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    // Only the head: a large declared body that never comes.
    QVERIFY(conn.send(
        post("Content-Type: application/json\r\nContent-Length: 100000\r\n" + extra, {})));
    const HttpResult r = conn.readResponse(5000);
    const QString problem = errorShapeProblem(r, 413);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(r.interimStatuses.isEmpty());
    QVERIFY2(conn.waitForClosed(5000), "slp keeps a connection whose body it refused");
    QVERIFY(upstreamUntouched());
}

void TestForwardErrors::chunkedBodyOverLimit_data()
{
    QTest::addColumn<int>("total");
    QTest::addColumn<bool>("complete");
    // Small enough to arrive whole, yet over the 1 KiB limit.
    QTest::newRow("complete-2KiB") << 2048 << true;
    // Far over: slp must stop reading before it has it all.
    QTest::newRow("streaming-4MiB") << (4 << 20) << false;
}

void TestForwardErrors::chunkedBodyOverLimit()
{
    QFETCH(int, total);
    QFETCH(bool, complete);
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(
        conn.send(post("Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n", {})));
    const QByteArray opening = R"({"model":"good","pad":")";
    QByteArray piece(16384, 'a');
    int sent = 0;
    bool answered = false;
    QVERIFY(conn.send("17\r\n" + opening + "\r\n"));
    while (sent < total && !answered) {
        const QByteArray data = piece.left(std::min<int>(piece.size(), total - sent));
        if (!conn.send(QByteArray::number(data.size(), 16) + "\r\n" + data + "\r\n", 2000))
            break; // slp closed on us: its answer is already in
        sent += int(data.size());
        // Read as we go, as a client watching for an early answer does.
        answered = conn.waitForData("HTTP/1.1 413", 20);
    }
    if (complete && !answered)
        QVERIFY(conn.send("2\r\n\"}\r\n0\r\n\r\n"));
    const HttpResult r = conn.readResponse(10000);
    const QString problem = errorShapeProblem(r, 413);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    if (!complete)
        QVERIFY2(sent < total, "slp read the whole over-limit body before answering");
    QVERIFY(upstreamUntouched());
}

void TestForwardErrors::bodyAtLimitPasses()
{
    // Exactly max_body_bytes is allowed, one byte more is not.
    QByteArray body = R"({"model":"good","pad":""})";
    body.insert(body.size() - 2, QByteArray(1024 - body.size(), 'x'));
    QCOMPARE(body.size(), 1024);
    const HttpResult ok = postBody(body);
    QVERIFY2(ok.ok(), qPrintable(ok.error));
    QCOMPARE(ok.status, 200);
    QCOMPARE(m_mock.waitForRequests(1, 5000).size(), 1);
    QVERIFY(m_mock.reset());

    body.insert(body.size() - 2, "x");
    const HttpResult over = postBody(body);
    const QString problem = errorShapeProblem(over, 413);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(upstreamUntouched());
}

void TestForwardErrors::malformedFraming_data()
{
    QTest::addColumn<QByteArray>("request");
    const QByteArray body = R"({"model":"good"})"; // 16 bytes
    const QByteArray json = "Content-Type: application/json\r\n";
    QTest::newRow("two-different-content-length")
        << post(json + "Content-Length: 16\r\nContent-Length: 17\r\n", body + " ");
    QTest::newRow("content-length-and-chunked")
        << post(json + "Content-Length: 16\r\nTransfer-Encoding: chunked\r\n",
                "10\r\n" + body + "\r\n0\r\n\r\n");
    QTest::newRow("chunked-and-content-length")
        << post(json + "Transfer-Encoding: chunked\r\nContent-Length: 16\r\n",
                "10\r\n" + body + "\r\n0\r\n\r\n");
    QTest::newRow("content-length-not-a-number") << post(json + "Content-Length: 1x\r\n", body);
    QTest::newRow("content-length-negative") << post(json + "Content-Length: -16\r\n", body);
    QTest::newRow("cr-in-value") << post(json + "X-Note: a\rb\r\nContent-Length: 16\r\n", body);
    QTest::newRow("nul-in-value") << post(
        json + QByteArray("X-Note: a\0b\r\n", 13) + "Content-Length: 16\r\n", body);
    QTest::newRow("bare-lf-line-end") << post(json + "X-Note: a\nContent-Length: 16\r\n", body);
    QTest::newRow("space-in-name") << post(json + "X Note: a\r\nContent-Length: 16\r\n", body);
    QTest::newRow("space-before-colon")
        << post(json + "X-Note : a\r\nContent-Length: 16\r\n", body);
    QTest::newRow("paren-in-name") << post(json + "X(Note): a\r\nContent-Length: 16\r\n", body);
    QTest::newRow("obs-fold") << post(json + "X-Note: a\r\n  folded\r\nContent-Length: 16\r\n",
                                      body);
    QTest::newRow("bad-chunk-size")
        << post(json + "Transfer-Encoding: chunked\r\n", "zz\r\n" + body + "\r\n0\r\n\r\n");
    // After a bad chunk size the rest of the bytes are body, never a request of their own:
    // this one would reach the upstream if they were read as one (request smuggling).
    QTest::newRow("bad-chunk-size-smuggled-request")
        << post(json + "Transfer-Encoding: chunked\r\n",
                "zz\r\nXX" + post(json + "Content-Length: 16\r\nConnection: close\r\n", body));
}

void TestForwardErrors::malformedFraming()
{
    QFETCH(QByteArray, request);
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(request));
    const HttpResult r = conn.readResponse(5000);
    const QString problem = errorShapeProblem(r, 400);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    // After a framing error nothing later on the connection can be trusted: one answer, then
    // the close.
    QVERIFY2(conn.waitForClosed(5000), "connection left open after malformed framing");
    QVERIFY(upstreamUntouched());
    QVERIFY2(conn.received().isEmpty(),
             qPrintable("more after the 400: " + QString::fromUtf8(conn.received().left(600))));
}

void TestForwardErrors::http2Preface()
{
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
    const HttpResult r = conn.readResponse(5000);
    QVERIFY2(r.status == 505 || r.status == 400, qPrintable(QString::fromUtf8(r.raw.left(400))));
    const QString problem = errorShapeProblem(r, r.status);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY2(conn.waitForClosed(5000), "connection left open after an HTTP/2 preface");
    QVERIFY(upstreamUntouched());
}

void TestForwardErrors::methodsAndPaths_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("status");
    QTest::newRow("GET chat") << QByteArray("GET") << QStringLiteral("/v1/chat/completions") << 405;
    QTest::newRow("PUT chat") << QByteArray("PUT") << QStringLiteral("/v1/chat/completions") << 405;
    QTest::newRow("DELETE embeddings")
        << QByteArray("DELETE") << QStringLiteral("/v1/embeddings") << 405;
    QTest::newRow("POST models") << QByteArray("POST") << QStringLiteral("/v1/models") << 405;
    // Any POST outside SLP's own paths is routed (tst_backend_access); other methods are not.
    QTest::newRow("GET nope") << QByteArray("GET") << QStringLiteral("/nope") << 405;
    QTest::newRow("PUT tokenize") << QByteArray("PUT") << QStringLiteral("/tokenize") << 405;
    QTest::newRow("GET stored response")
        << QByteArray("GET") << QStringLiteral("/v1/responses/resp_1") << 404;
    QTest::newRow("POST healthz") << QByteArray("POST") << QStringLiteral("/healthz") << 405;
    QTest::newRow("POST metrics") << QByteArray("POST") << QStringLiteral("/metrics") << 405;
    QTest::newRow("POST models outside v1")
        << QByteArray("POST") << QStringLiteral("/models/good") << 405;
}

void TestForwardErrors::methodsAndPaths()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(int, status);
    // A valid, routable body: only the method or path can be what is refused.
    const QByteArray body = method == "GET" ? QByteArray() : QByteArray(R"({"model":"good"})");
    const HttpResult r =
        httpRequest(method, m_slp.url() + path, body, {{"Content-Type", "application/json"}});
    QVERIFY2(r.ok(), qPrintable(r.error));
    const QString problem = errorShapeProblem(r, status);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(upstreamUntouched());
}

void TestForwardErrors::healthz()
{
    const HttpResult r = httpRequest("GET", m_slp.url() + "/healthz");
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body.trimmed(), QByteArray("ok"));
    QVERIFY(SlpIdRe.match(QString::fromLatin1(r.header("x-request-id"))).hasMatch());
    QVERIFY(upstreamUntouched());
}

void TestForwardErrors::upstreamRefused()
{
    const ChildProcess::Mark mark = m_slp.mark();
    const HttpResult r = postBody(R"({"model":"refused"})");
    QVERIFY2(r.ok(), qPrintable(r.error));
    const QString problem = errorShapeProblem(r, 502);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const QString id = QString::fromLatin1(r.header("x-request-id"));
    QCOMPARE(errorObject(r).value("message").toString(),
             QStringLiteral("upstream request failed (request id: %1)").arg(id));

    const QRegularExpression line = attemptLine(id, 1, 1, QStringLiteral("refused"), m_closedPort);
    QVERIFY2(m_slp.waitForLog(line, 5000, mark).hasMatch(),
             qPrintable(m_slp.stderrText().right(2000)));
    // No retry configured: one attempt only.
    QCOMPARE(m_slp.countLog(QRegularExpression(QStringLiteral(R"(\[%1\] Attempt )").arg(id)), mark),
             1);
}

void TestForwardErrors::upstreamRefusedWithRetry()
{
    const ChildProcess::Mark mark = m_slp.mark();
    const HttpResult r = postBody(R"({"model":"refused-retry"})");
    QVERIFY2(r.ok(), qPrintable(r.error));
    const QString problem = errorShapeProblem(r, 502);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const QString id = QString::fromLatin1(r.header("x-request-id"));
    QCOMPARE(errorObject(r).value("message").toString(),
             QStringLiteral("upstream request failed (request id: %1)").arg(id));
    for (int n = 1; n <= 2; ++n) {
        const QRegularExpression line =
            attemptLine(id, n, 2, QStringLiteral("refused-retry"), m_closedPort);
        QVERIFY2(m_slp.waitForLog(line, 5000, mark).hasMatch(),
                 qPrintable(m_slp.stderrText().right(2000)));
    }
    QCOMPARE(m_slp.countLog(QRegularExpression(QStringLiteral(R"(\[%1\] Attempt )").arg(id)), mark),
             2);
}

void TestForwardErrors::resetBeforeHeadWithRetry()
{
    // A warm keep-alive connection first, as any busy upstream has: the reset then hits a
    // reused connection, where Qt would like to re-send on its own.
    HttpResult warm = postBody(R"({"model":"reset-retry"})");
    QCOMPARE(warm.status, 200);
    QVERIFY(m_mock.reset());

    const ChildProcess::Mark mark = m_slp.mark();
    const HttpResult r =
        httpRequest("POST", m_slp.url() + "/v1/chat/completions", R"({"model":"reset-retry"})",
                    {{"Content-Type", "application/json"}, {"X-Mock-Reset-Before-Head", "1"}});
    QVERIFY2(r.ok(), qPrintable(r.error));
    const QString problem = errorShapeProblem(r, 502);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const QString id = QString::fromLatin1(r.header("x-request-id"));
    QCOMPARE(errorObject(r).value("message").toString(),
             QStringLiteral("upstream request failed (request id: %1)").arg(id));
    // retry: true means one re-dial: the upstream saw the request exactly twice.
    QTRY_VERIFY_WITH_TIMEOUT(m_mock.requests().size() >= 2, 5000);
    pumpEvents(kQuietWindowMs); // and no third
    const QJsonArray got = m_mock.requests();
    QVERIFY2(got.size() == 2, qPrintable(QStringLiteral("upstream saw %1 request(s); log:\n%2")
                                             .arg(got.size())
                                             .arg(m_slp.stderrText().right(1500))));
    for (const QJsonValue &v : got)
        QCOMPARE(MockUpstream::body(v.toObject()), QByteArray(R"({"model":"reset-upstream"})"));
    QCOMPARE(m_slp.countLog(QRegularExpression(QStringLiteral(R"(\[%1\] Attempt [12]/2 )").arg(id)),
                            mark),
             2);
}

void TestForwardErrors::resetBeforeHeadWithoutRetry()
{
    // Without retry: a POST that reached the upstream is never sent again, by slp or by Qt.
    HttpResult warm = postBody(R"({"model":"good"})");
    QCOMPARE(warm.status, 200);
    QVERIFY(m_mock.reset());

    const HttpResult r =
        httpRequest("POST", m_slp.url() + "/v1/chat/completions", R"({"model":"good"})",
                    {{"Content-Type", "application/json"}, {"X-Mock-Reset-Before-Head", "1"}});
    QVERIFY2(r.ok(), qPrintable(r.error));
    const QString problem = errorShapeProblem(r, 502);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QTRY_VERIFY_WITH_TIMEOUT(m_mock.requests().size() >= 1, 5000);
    pumpEvents(kQuietWindowMs); // and no second
    const QJsonArray got = m_mock.requests();
    QVERIFY2(got.size() == 1,
             qPrintable(QStringLiteral("upstream saw %1 request(s)").arg(got.size())));
}

// slp_requests_total as slp serves it, parsed with slp's own reader.
static QList<slp::PromSample> metricSamples(const QString &url, QString *error)
{
    const HttpResult r = httpRequest("GET", url + "/metrics");
    if (!r.ok() || r.status != 200) {
        *error = QStringLiteral("GET /metrics: %1 %2").arg(r.status).arg(r.error);
        return {};
    }
    const slp::PromParseResult parsed = slp::parsePromText(r.body);
    *error = parsed.error;
    return parsed.samples;
}

static double requestsTotal(const QList<slp::PromSample> &samples, const QString &model,
                            const QString &code)
{
    return slp::findPromSample(
               samples, QStringLiteral("slp_requests_total"),
               {{QStringLiteral("model_id"), model}, {QStringLiteral("code"), code}})
        .value_or(0);
}

void TestForwardErrors::metricsCountBodyErrors()
{
    // Right after the body tests, before anything else could add to the same series.
    QString error;
    const QList<slp::PromSample> samples = metricSamples(m_slp.url(), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY(m_sent400 > 0 && m_sent404 > 0);
    QCOMPARE(requestsTotal(samples, QStringLiteral("unknown"), QStringLiteral("400")),
             double(m_sent400));
    QCOMPARE(requestsTotal(samples, QStringLiteral("unknown"), QStringLiteral("404")),
             double(m_sent404));
    // The client's strings never become model_id values.
    for (const slp::PromSample &s : samples) {
        for (const auto &[label, value] : s.labels) {
            QVERIFY2(label != QLatin1String("model_id") || !m_unknownIds.contains(value),
                     qPrintable(QStringLiteral("%1{%2=\"%3\"}").arg(s.name, label, value)));
        }
    }
}

void TestForwardErrors::metricsCountUpstreamFailures()
{
    QString error;
    const QList<slp::PromSample> samples = metricSamples(m_slp.url(), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(requestsTotal(samples, QStringLiteral("refused"), QStringLiteral("502")), 1.0);
    QCOMPARE(requestsTotal(samples, QStringLiteral("refused-retry"), QStringLiteral("502")), 1.0);
    QCOMPARE(requestsTotal(samples, QStringLiteral("reset-retry"), QStringLiteral("502")), 1.0);
    QCOMPARE(requestsTotal(samples, QStringLiteral("reset-retry"), QStringLiteral("200")), 1.0);
    // Only configured ids and "unknown" ever label a series.
    const QSet<QString> allowed{"unknown", "good", "refused", "refused-retry", "reset-retry"};
    for (const slp::PromSample &s : samples) {
        for (const auto &[label, value] : s.labels) {
            if (label == QLatin1String("model_id"))
                QVERIFY2(allowed.contains(value),
                         qPrintable(QStringLiteral("%1{model_id=\"%2\"}").arg(s.name, value)));
        }
    }
}

void TestForwardErrors::headerTimeout()
{
    // A slow client: half a head, then silence.
    RawConnection slow;
    QVERIFY(slow.connectTo(m_slp.host(), m_slp.port()));
    QElapsedTimer clock;
    clock.start();
    QVERIFY(slow.send("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-"));

    // Another client is served meanwhile.
    const HttpResult other = postBody(R"({"model":"good"})");
    QVERIFY2(other.ok(), qPrintable(other.error));
    QCOMPARE(other.status, 200);
    QCOMPARE(m_mock.waitForRequests(1, 5000).size(), 1);

    const HttpResult r = slow.readResponse(8000);
    const qint64 elapsed = clock.elapsed();
    if (r.status != 0) {
        const QString problem = errorShapeProblem(r, 408);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    } else {
        QVERIFY2(r.peerClosed, qPrintable(r.error));
    }
    QVERIFY2(slow.waitForClosed(5000), "the slow client's connection stays open");
    // header_timeout is 1s: not much before it, and well within the bound after it.
    QVERIFY2(elapsed >= 800 && elapsed < 6000, qPrintable(QString::number(elapsed)));
    // The half request never reached the upstream (only the other client's did).
    QCOMPARE(m_mock.requests().size(), 1);
}

QTEST_GUILESS_MAIN(TestForwardErrors)
#include "tst_forward_errors.moc"
