// SPDX-License-Identifier: GPL-3.0-or-later
// The socket transport (`upstream_transport: socket`) through the real slp: the exact request
// bytes an upstream receives, every response framing (Content-Length, chunked with extensions
// and trailers, close-delimited, 1xx, 204), malformed or oversized heads as 502, keep-alive
// reuse and when a connection must not be reused, no queueing, the time-to-first-byte 502,
// client-gone and upstream-gone, and backpressure on a 200 MB response to a slow client.
// Upstreams: the mock vLLM server and a scripted raw TCP server inside this test.
#include "procstatus.h"
#include "testsupport.h"
#include "wire/parser.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>
#include <QTimer>
#include <QUrl>
#include <QtTest>

#include <cstring>
#include <memory>
#include <utility>

using namespace slp::test;

namespace {

qint64 nextSeq(MockUpstream &mock)
{
    return mock.stats().value("next_seq").toInteger() - 1;
}

HeaderList parseHeaders(const QByteArray &raw)
{
    slp::wire::Parser parser(slp::wire::Parser::Kind::Request);
    parser.feed(raw);
    return parser.head().headers;
}

} // namespace

class TestSocketTransport : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void exactRequestBytes();
    void mockSeesOnlyPreparedHeaders();
    void contentLengthChunkedAndCloseDelimited();
    void chunkExtensionsAndTrailers();
    void interimHeadsSkipped();
    void noContent();
    void malformedHeadsAre502_data();
    void malformedHeadsAre502();
    void brokenChunkIsUncleanEnd();
    void notReusedAfterCloseOrHttp10_data();
    void notReusedAfterCloseOrHttp10();
    void streamingRelayedPromptly();
    void upstreamGoneMidStream();
    void resetBeforeHead_data();
    void resetBeforeHead();
    void keepAliveReuse();
    void concurrentNotQueued();
    void ttfbTimeout();
    void clientGoneClosesUpstream();
    void slowClientLargeResponse();

private:
    HttpResult post(const QByteArray &model, const QByteArray &path = "/v1/chat/completions",
                    const HeaderList &extra = {}, int timeoutMs = 10000);
    QString slpLog() { return m_slp.stderrText().right(3000); }

    MockUpstream m_mock;
    ScriptServer m_script;
    SlpDaemon m_slp;
};

void TestSocketTransport::initTestCase()
{
    QVERIFY2(!MockUpstream::binary().isEmpty(), "set SLP_MOCK_BIN");
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY2(m_mock.start(), qPrintable(m_mock.errorString()));
    QVERIFY(m_script.start());

    const QByteArray big(70 * 1024, 'x');
    m_script.set("interim", "HTTP/1.1 100 Continue\r\n\r\n"
                            "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
                            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
    m_script.set("chunked", "HTTP/1.1 200 Fine\r\nTransfer-Encoding: chunked\r\n"
                            "X-A: 1\r\nSet-Cookie: a=1, b\r\nX-A: 2\r\nSet-Cookie: c=3\r\n\r\n"
                            "5;ext=1;q=\"x\"\r\nhello\r\n6\r\n world\r\n"
                            "0\r\nX-Trailer: t\r\n\r\n");
    m_script.set("close", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close");
    m_script.closeAfter("close");
    m_script.set("nocontent", "HTTP/1.1 204 No Content\r\nX-B: 1\r\n\r\n");
    m_script.set("plain", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    m_script.set("http10", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
    m_script.set("connclose", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n"
                              "\r\nok");
    m_script.set("extra", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokJUNK");
    m_script.set("garbage", "this is not http at all\r\n\r\n");
    m_script.set("badstatus", "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n");
    m_script.set("badheader", "HTTP/1.1 200 OK\r\nNo Colon Here\r\nContent-Length: 0\r\n\r\n");
    m_script.set("twolengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n"
                               "\r\nok");
    m_script.set("oversized", "HTTP/1.1 200 OK\r\nX-Big: " + big + "\r\nContent-Length: 0\r\n\r\n");
    m_script.set("badchunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             "5\r\nhello\r\nzz\r\n");

    const QString config = QStringLiteral("log_requests: true\n"
                                          "shutdown_grace: 1s\n"
                                          "upstream_transport: socket\n"
                                          "backends:\n"
                                          "  - name: mock\n"
                                          "    url: %1\n"
                                          "    model: alpha\n"
                                          "    timeout: 10s\n"
                                          "  - name: mock-retry\n"
                                          "    url: %1\n"
                                          "    model: alpha\n"
                                          "    timeout: 10s\n"
                                          "    retry: true\n"
                                          "  - name: mock-quick\n"
                                          "    url: %1\n"
                                          "    model: alpha\n"
                                          "    timeout: 1s\n"
                                          "  - name: raw\n"
                                          "    url: http://127.0.0.1:%2\n"
                                          "    model: alpha\n"
                                          "    timeout: 5s\n")
                               .arg(m_mock.url())
                               .arg(m_script.port());
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
}

void TestSocketTransport::cleanupTestCase()
{
    m_slp.stop();
    m_mock.stop();
}

void TestSocketTransport::init()
{
    QVERIFY(m_mock.reset());
    m_script.recorded.clear();
}

HttpResult TestSocketTransport::post(const QByteArray &model, const QByteArray &path,
                                     const HeaderList &extra, int timeoutMs)
{
    HeaderList headers{{"Content-Type", "application/json"}};
    headers += extra;
    return httpRequest("POST", m_slp.url() + QString::fromLatin1(path),
                       R"({"model":")" + model + R"("})", headers, timeoutMs);
}

void TestSocketTransport::exactRequestBytes()
{
    const QByteArray target = "/v1/s/plain?a=%7E&b=x%2fy&c=%20";
    const QByteArray body = R"({"model":"raw", "n":1})";
    const QByteArray request = "POST " + target +
                               " HTTP/1.1\r\n"
                               "Host: front.example\r\n"
                               "Content-Type: application/json\r\n"
                               "X-Rep: one\r\n"
                               "Cookie: a=1\r\n"
                               "X-Rep: two\r\n"
                               "Cookie: b=2\r\n"
                               "Content-Length: " +
                               QByteArray::number(body.size()) + "\r\n\r\n" + body;
    const HttpResult r = rawHttp(m_slp.host(), m_slp.port(), request);
    QVERIFY2(r.ok(), qPrintable(r.error + slpLog()));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body, QByteArray("ok"));
    QCOMPARE(m_script.recorded.size(), 1);
    const QByteArray raw = m_script.recorded[0].raw;
    qInfo().noquote() << "upstream received:\n" << raw;

    // The socket transport sends the client's target byte for byte: no QUrl normalisation.
    const QByteArray requestLine = raw.left(raw.indexOf("\r\n"));
    QCOMPARE(requestLine, "POST " + target + " HTTP/1.1");
    const HeaderList got = parseHeaders(raw);
    HeaderList expected{{"Host", "127.0.0.1:" + QByteArray::number(m_script.port())},
                        {"Content-Type", "application/json"},
                        {"X-Rep", "one"},
                        {"Cookie", "a=1"},
                        {"X-Rep", "two"},
                        {"Cookie", "b=2"}};
    // Then the X-Forwarded-* the core adds, then Content-Length: nothing else.
    QVERIFY2(got.size() >= expected.size() + 1, raw.constData());
    QCOMPARE(got.mid(0, expected.size()), expected);
    for (qsizetype i = expected.size(); i < got.size() - 1; ++i)
        QVERIFY2(got[i].first.startsWith("X-Forwarded-"), got[i].first.constData());
    // The route pins the upstream name "alpha": only the model value changes.
    const QByteArray sent = QByteArray(body).replace(R"("raw")", R"("alpha")");
    QCOMPARE(got.last(),
             (QPair<QByteArray, QByteArray>("Content-Length", QByteArray::number(sent.size()))));
    QVERIFY(raw.endsWith("\r\n\r\n" + sent));
}

void TestSocketTransport::mockSeesOnlyPreparedHeaders()
{
    const qint64 since = nextSeq(m_mock);
    const HttpResult r = post("mock", "/v1/chat/completions", {{"X-Rep", "1"}, {"X-Rep", "2"}});
    QVERIFY2(r.ok(), qPrintable(r.error + slpLog()));
    QCOMPARE(r.status, 200);
    const QJsonArray recs = m_mock.waitForRequests(1, 3000, since);
    QCOMPARE(recs.size(), 1);
    const HeaderList h = MockUpstream::headers(recs[0].toObject());
    QStringList names;
    for (const auto &[name, value] : h)
        names << QString::fromLatin1(name).toLower();
    qInfo() << "mock saw" << names;
    for (const char *absent : {"user-agent", "accept-language", "accept-encoding", "connection",
                               "keep-alive", "transfer-encoding"})
        QVERIFY2(!names.contains(QLatin1String(absent)), absent);
    QCOMPARE(names.count(QStringLiteral("host")), 1);
    QCOMPARE(names.count(QStringLiteral("content-length")), 1);
    QCOMPARE(MockUpstream::header(recs[0].toObject(), "host"),
             QByteArray("127.0.0.1:") + QByteArray::number(m_mock.port()));
    QList<QByteArray> reps;
    for (const auto &[name, value] : h)
        if (name.compare("x-rep", Qt::CaseInsensitive) == 0)
            reps << value;
    QCOMPARE(reps, (QList<QByteArray>{"1", "2"}));
}

void TestSocketTransport::contentLengthChunkedAndCloseDelimited()
{
    // Content-Length (a JSON answer), chunked (a stream), close-delimited (mock knob).
    const HttpResult json = post("mock");
    QVERIFY2(json.ok(), qPrintable(json.error + slpLog()));
    QVERIFY(json.hasHeader("content-length"));
    QVERIFY(json.body.contains("chat.completion"));

    const HttpResult stream =
        httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                    R"({"model":"mock","stream":true})", {{"Content-Type", "application/json"}});
    QVERIFY2(stream.ok(), qPrintable(stream.error + slpLog()));
    QVERIFY(stream.body.contains("data: [DONE]"));

    const HttpResult closeDelimited =
        post("mock", "/v1/chat/completions", {{"X-Mock-Close-Delimited", "1"}});
    QVERIFY2(closeDelimited.ok(), qPrintable(closeDelimited.error + slpLog()));
    QCOMPARE(closeDelimited.body, json.body.left(0) + closeDelimited.body); // whole, no error
    QVERIFY(closeDelimited.body.contains("chat.completion"));

    const HttpResult rawClose = post("raw", "/v1/s/close");
    QVERIFY2(rawClose.ok(), qPrintable(rawClose.error + slpLog()));
    QCOMPARE(rawClose.body, QByteArray("until the close"));
}

void TestSocketTransport::chunkExtensionsAndTrailers()
{
    const HttpResult r = post("raw", "/v1/s/chunked");
    QVERIFY2(r.ok(), qPrintable(r.error + slpLog()));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.reason, QByteArray("Fine"));
    QCOMPARE(r.body, QByteArray("hello world"));
    QCOMPARE(r.headerValues("x-a"), (QList<QByteArray>{"1", "2"}));
    QCOMPARE(r.headerValues("set-cookie"), (QList<QByteArray>{"a=1, b", "c=3"}));
}

void TestSocketTransport::interimHeadsSkipped()
{
    const HttpResult r = post("raw", "/v1/s/interim");
    QVERIFY2(r.ok(), qPrintable(r.error + slpLog()));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body, QByteArray("{}"));
    QVERIFY(r.interimStatuses.isEmpty());
    QVERIFY(!r.hasHeader("link"));
}

void TestSocketTransport::noContent()
{
    const HttpResult r = post("raw", "/v1/s/nocontent");
    QVERIFY2(r.ok(), qPrintable(r.error + slpLog()));
    QCOMPARE(r.status, 204);
    QVERIFY(r.body.isEmpty());
    QCOMPARE(r.header("x-b"), QByteArray("1"));
    // The connection is still good for the next request.
    const HttpResult again = post("raw", "/v1/s/plain");
    QCOMPARE(again.status, 200);
    QCOMPARE(m_script.recorded.size(), 2);
    QCOMPARE(m_script.recorded[0].connection, m_script.recorded[1].connection);
}

void TestSocketTransport::malformedHeadsAre502_data()
{
    QTest::addColumn<QByteArray>("script");
    QTest::newRow("garbage") << QByteArray("garbage");
    QTest::newRow("bad status") << QByteArray("badstatus");
    QTest::newRow("bad header line") << QByteArray("badheader");
    QTest::newRow("two content-lengths") << QByteArray("twolengths");
    QTest::newRow("head over 64 KiB") << QByteArray("oversized");
}

void TestSocketTransport::malformedHeadsAre502()
{
    QFETCH(QByteArray, script);
    const ChildProcess::Mark mark = m_slp.mark();
    const HttpResult r = post("raw", "/v1/s/" + script);
    QVERIFY2(r.ok(), qPrintable(r.error + slpLog()));
    QCOMPARE(r.status, 502);
    const QString id = QString::fromLatin1(r.header("x-request-id"));
    QCOMPARE(QJsonDocument::fromJson(r.body).object().value("error").toObject().value("message"),
             QStringLiteral("upstream request failed (request id: %1)").arg(id));
    QCOMPARE(m_script.recorded.size(), 1); // a protocol failure is never re-sent
    const QRegularExpressionMatch m = m_slp.waitForLog(
        QRegularExpression(
            QStringLiteral("\\[%1\\] Attempt 1/1 .*malformed response head").arg(id)),
        3000, mark);
    QVERIFY2(m.hasMatch(), qPrintable(slpLog()));
    qInfo().noquote() << m.captured(0);
}

void TestSocketTransport::brokenChunkIsUncleanEnd()
{
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(buildRequest("POST", m_slp.url() + "/v1/s/badchunk", R"({"model":"raw"})",
                                   {{"Connection", "keep-alive"}})));
    const HttpResult r = conn.readResponse(5000);
    QCOMPARE(r.status, 200);
    QVERIFY(!r.complete);
    QVERIFY(r.peerClosed);
    QCOMPARE(r.body, QByteArray("hello"));
}

void TestSocketTransport::notReusedAfterCloseOrHttp10_data()
{
    QTest::addColumn<QByteArray>("script");
    QTest::addColumn<bool>("reused");
    QTest::newRow("HTTP/1.1 keep-alive") << QByteArray("plain") << true;
    QTest::newRow("HTTP/1.0") << QByteArray("http10") << false;
    QTest::newRow("Connection: close") << QByteArray("connclose") << false;
    QTest::newRow("bytes after the response") << QByteArray("extra") << false;
}

void TestSocketTransport::notReusedAfterCloseOrHttp10()
{
    QFETCH(QByteArray, script);
    QFETCH(bool, reused);
    const HttpResult first = post("raw", "/v1/s/" + script);
    QVERIFY2(first.ok(), qPrintable(first.error + slpLog()));
    QCOMPARE(first.body, QByteArray("ok"));
    const HttpResult second = post("raw", "/v1/s/plain");
    QVERIFY2(second.ok(), qPrintable(second.error + slpLog()));
    QCOMPARE(m_script.recorded.size(), 2);
    QCOMPARE(m_script.recorded[0].connection == m_script.recorded[1].connection, reused);
}

void TestSocketTransport::streamingRelayedPromptly()
{
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(buildRequest("POST", m_slp.url() + "/v1/chat/completions",
                                   R"({"model":"mock","stream":true})",
                                   {{"X-Mock-Event-Interval-Ms", "200"},
                                    {"X-Mock-Events", "5"},
                                    {"X-Mock-Reasoning-Events", "0"}})));
    const HttpResult r = conn.readResponse(10000);
    QVERIFY2(r.ok(), qPrintable(r.error + slpLog()));
    qInfo() << "chunk arrivals (ms):" << r.chunkArrivalMs;
    QVERIFY(r.chunkArrivalMs.size() >= 5);
    // The first event long before the last: relayed as it came, not at the end.
    QVERIFY2(r.chunkArrivalMs.first() < 500, qPrintable(slpLog()));
    QVERIFY(r.chunkArrivalMs.last() - r.chunkArrivalMs.first() >= 600);
    QVERIFY(r.body.contains("data: [DONE]"));
}

void TestSocketTransport::upstreamGoneMidStream()
{
    for (const QByteArray &body :
         {QByteArray(R"({"model":"mock","stream":true})"), QByteArray(R"({"model":"mock"})")}) {
        const qint64 since = nextSeq(m_mock);
        RawConnection conn;
        QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
        QVERIFY(conn.send(buildRequest("POST", m_slp.url() + "/v1/chat/completions", body,
                                       {{"X-Mock-Drop-After", body.contains("stream") ? "2" : "10"},
                                        {"Connection", "keep-alive"}})));
        const HttpResult r = conn.readResponse(10000);
        QCOMPARE(r.status, 200);
        QVERIFY2(!r.complete, r.raw.right(300).constData());
        QVERIFY(r.peerClosed);
        QCOMPARE(m_mock.requests(since).size(), 1);
    }
}

void TestSocketTransport::resetBeforeHead_data()
{
    QTest::addColumn<QByteArray>("model");
    QTest::addColumn<int>("attempts");
    QTest::newRow("no retry") << QByteArray("mock") << 1;
    QTest::newRow("retry: true") << QByteArray("mock-retry") << 2;
}

void TestSocketTransport::resetBeforeHead()
{
    QFETCH(QByteArray, model);
    QFETCH(int, attempts);
    // Warm: the reset then hits a reused connection.
    QCOMPARE(post(model).status, 200);
    const qint64 since = nextSeq(m_mock);
    const HttpResult r = post(model, "/v1/chat/completions", {{"X-Mock-Reset-Before-Head", "1"}});
    QVERIFY2(r.ok(), qPrintable(r.error + slpLog()));
    QCOMPARE(r.status, 502);
    QTRY_VERIFY_WITH_TIMEOUT(m_mock.requests(since).size() >= attempts, 5000);
    pumpEvents(kQuietWindowMs); // and no more
    QCOMPARE(m_mock.requests(since).size(), attempts);
}

void TestSocketTransport::keepAliveReuse()
{
    const qint64 before = m_mock.stats().value("connections_accepted").toInteger();
    for (int i = 0; i < 50; ++i) {
        const HttpResult r = post("mock");
        QVERIFY2(r.ok() && r.status == 200, qPrintable(r.error + slpLog()));
    }
    const QJsonObject stats = m_mock.stats();
    const qint64 used = stats.value("connections_accepted").toInteger() - before;
    qInfo() << "50 sequential requests used" << used << "new upstream connections";
    // The test's own control requests to the mock open connections too (about one each).
    QVERIFY2(used <= 5, qPrintable(QString::number(used)));
}

void TestSocketTransport::concurrentNotQueued()
{
    constexpr int N = 256;
    std::vector<std::unique_ptr<RawConnection>> conns;
    for (int i = 0; i < N; ++i) {
        auto c = std::make_unique<RawConnection>();
        QVERIFY(c->connectTo(m_slp.host(), m_slp.port()));
        conns.push_back(std::move(c));
    }
    QElapsedTimer clock;
    clock.start();
    for (auto &c : conns) {
        QVERIFY(c->send(buildRequest("POST", m_slp.url() + "/v1/chat/completions",
                                     R"({"model":"mock"})", {{"X-Mock-Delay-Ms", "1500"}})));
    }
    int ok = 0;
    for (auto &c : conns) {
        const HttpResult r = c->readResponse(15000);
        ok += r.status == 200 ? 1 : 0;
    }
    const qint64 elapsed = clock.elapsed();
    const QJsonObject stats = m_mock.stats();
    qInfo() << N << "requests of 1.5 s took" << elapsed << "ms; upstream max in flight"
            << stats.value("max_in_flight").toInt();
    QCOMPARE(ok, N);
    QCOMPARE(stats.value("max_in_flight").toInt(), N);
}

void TestSocketTransport::ttfbTimeout()
{
    const HttpResult r = post("mock-quick", "/v1/chat/completions", {{"X-Mock-Delay-Ms", "3000"}});
    QVERIFY2(r.ok(), qPrintable(r.error + slpLog()));
    QCOMPARE(r.status, 502);
    const QString id = QString::fromLatin1(r.header("x-request-id"));
    QCOMPARE(QJsonDocument::fromJson(r.body).object().value("error").toObject().value("message"),
             QStringLiteral("upstream request timed out after 1s (request id: %1)").arg(id));
    QVERIFY2(r.elapsedMs < 2500, QByteArray::number(r.elapsedMs));
}

void TestSocketTransport::clientGoneClosesUpstream()
{
    const qint64 since = nextSeq(m_mock);
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(buildRequest(
        "POST", m_slp.url() + "/v1/chat/completions", R"({"model":"mock","stream":true})",
        {{"X-Mock-Event-Interval-Ms", "300"}, {"X-Mock-Events", "20"}})));
    QVERIFY2(conn.waitForData("\"assistant\"", 3000), qPrintable(slpLog()));
    const QJsonArray recs = m_mock.waitForRequests(1, 3000, since);
    QCOMPARE(recs.size(), 1);
    const qint64 seq = recs[0].toObject().value("seq").toInteger();
    conn.abort();
    QElapsedTimer t;
    t.start();
    qint64 waited = -1;
    while (t.elapsed() < 3000 && waited < 0) {
        for (const QJsonValue &v : m_mock.requests(seq - 1)) {
            const QJsonObject rec = v.toObject();
            if (rec.value("seq").toInteger() == seq && !rec.value("peer_closed_ms").isNull())
                waited = t.elapsed();
        }
        if (waited < 0)
            pumpEvents(20);
    }
    qInfo() << "upstream saw the close" << waited << "ms after the client left";
    QVERIFY2(waited >= 0 && waited < 1000, qPrintable(QString::number(waited) + slpLog()));
}

void TestSocketTransport::slowClientLargeResponse()
{
    constexpr qint64 Size = 200'000'000;
    constexpr qint64 RssLimitKb = 100 * 1024;
    const qint64 pid = m_slp.process().pid();
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QTcpSocket *socket = conn.socket();
    socket->setReadBufferSize(256 * 1024);
    QVERIFY(
        conn.send(buildRequest("POST", m_slp.url() + "/v1/chat/completions", R"({"model":"mock"})",
                               {{"X-Mock-Large-Response", QByteArray::number(Size)}})));
    const QByteArray alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    QByteArray head = conn.received();
    qint64 bodyRead = -1;
    bool patternOk = true;
    qint64 maxRssKb = 0;
    auto feed = [&](QByteArray bytes) {
        if (bodyRead < 0) {
            head += bytes;
            const qsizetype end = head.indexOf("\r\n\r\n");
            if (end < 0)
                return;
            bytes = head.mid(end + 4);
            bodyRead = 0;
        }
        for (qsizetype i = 0; i < bytes.size() && patternOk; i += 4096) {
            const qsizetype n = std::min<qsizetype>(4096, bytes.size() - i);
            for (qsizetype k = 0; k < n; ++k) {
                if (bytes[i + k] != alphabet[(bodyRead + i + k) % alphabet.size()]) {
                    patternOk = false;
                    break;
                }
            }
        }
        bodyRead += bytes.size();
    };
    QElapsedTimer clock;
    clock.start();
    qint64 lastSample = 0;
    int pauses = 0;
    while (bodyRead < Size && clock.elapsed() < 120000) {
        if (socket->bytesAvailable() == 0) {
            if (socket->state() != QAbstractSocket::ConnectedState)
                break;
            socket->waitForReadyRead(1000);
            continue;
        }
        feed(socket->read(1024 * 1024));
        if (bodyRead - lastSample >= 20 * 1024 * 1024) {
            lastSample = bodyRead;
            maxRssKb = std::max(maxRssKb, residentKb(pid));
            if (pauses < 3) {
                ++pauses; // a slow client: stop reading for a while
                for (int i = 0; i < 4; ++i) {
                    QThread::msleep(150);
                    maxRssKb = std::max(maxRssKb, residentKb(pid));
                }
            }
        }
    }
    qInfo() << "read" << bodyRead << "bytes in" << clock.elapsed() << "ms; slp max RSS"
            << maxRssKb / 1024 << "MiB";
    QCOMPARE(bodyRead, Size);
    QVERIFY(patternOk);
    if (!sanitizedBuild())
        QVERIFY2(maxRssKb < RssLimitKb, qPrintable(QString::number(maxRssKb)));
}

QTEST_GUILESS_MAIN(TestSocketTransport)
#include "tst_socket_transport.moc"
