// SPDX-License-Identifier: GPL-3.0-or-later
// Exercises tests/mock_upstream through the test-support library, so the integration tests
// of slp can trust both.
#include "testsupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace slp::test;

namespace {

const QRegularExpression RequestIdRe(QStringLiteral("^gdqz[0-9a-f]{24}$"));

} // namespace

class TestMockUpstream : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanupTestCase();

    void modelsList();
    void changeModels();
    void modelsStatusKnob();
    void unknownModelIs404();
    void anyModelWhenListEmpty();
    void chatStreamShape();
    void completionStreamAndFull();
    void chatNonStreaming();
    void embeddings();
    void echoExactBytes();
    void dropAfterGivesIncompleteChunked();
    void delayBeforeHead();
    void eventInterval();
    void statusKnob();
    void recordingExactBody();
    void repeatedMockHeader();
    void keepAliveAndPipelining();
    void chunkedRequestWithExpectContinue();
    void http10CloseDelimited();
    void closeDelimitedKnob();
    void gzipKnob();
    void resetBeforeHead();
    void peerClosedRecorded();
    void largeResponse();
    void inFlightStats();
    void childProcessLines();
    void slpDaemonWithFakeBinary();
    void runCommandTimeout();

private:
    MockUpstream m_mock;
};

void TestMockUpstream::initTestCase()
{
    QVERIFY2(!MockUpstream::binary().isEmpty(), "set SLP_MOCK_BIN");
    QVERIFY2(m_mock.start({"alpha", "beta"}), qPrintable(m_mock.errorString()));
    QVERIFY(m_mock.port() > 0);
}

void TestMockUpstream::init()
{
    QVERIFY(m_mock.setModels({"alpha", "beta"}));
    QVERIFY(m_mock.reset());
}

void TestMockUpstream::cleanupTestCase()
{
    m_mock.stop();
}

void TestMockUpstream::modelsList()
{
    const HttpResult r = httpRequest("GET", m_mock.url() + "/v1/models");
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QVERIFY(r.header("x-request-id").size() == 28);
    QVERIFY2(RequestIdRe.match(QString::fromLatin1(r.header("X-Request-Id"))).hasMatch(),
             r.header("x-request-id"));
    QCOMPARE(r.header("content-length").toInt(), r.body.size());
    const QJsonObject o = jsonObject(r.body);
    QCOMPARE(o.value("object").toString(), "list");
    const QJsonArray data = o.value("data").toArray();
    QCOMPARE(data.size(), 2);
    QCOMPARE(data.at(0).toObject().value("id").toString(), "alpha");
    QCOMPARE(data.at(1).toObject().value("id").toString(), "beta");
    QCOMPARE(data.at(0).toObject().value("owned_by").toString(), "vllm");
    QCOMPARE(data.at(0).toObject().value("root").toString(), "alpha");
    QCOMPARE(data.at(0).toObject().value("max_model_len").toInt(), 32768);
    // Two ids differ.
    const HttpResult r2 = httpRequest("GET", m_mock.url() + "/v1/models");
    QVERIFY(r2.header("x-request-id") != r.header("x-request-id"));
}

void TestMockUpstream::changeModels()
{
    QVERIFY(m_mock.setModels({"gamma"}));
    QJsonArray data =
        jsonObject(httpRequest("GET", m_mock.url() + "/v1/models").body).value("data").toArray();
    QCOMPARE(data.size(), 1);
    QCOMPARE(data.at(0).toObject().value("id").toString(), "gamma");
    QVERIFY(m_mock.setModels({}));
    data = jsonObject(httpRequest("GET", m_mock.url() + "/v1/models").body).value("data").toArray();
    QCOMPARE(data.size(), 0);
    const QJsonObject current =
        jsonObject(httpRequest("GET", m_mock.url() + "/__mock/models").body);
    QCOMPARE(current.value("models").toArray().size(), 0);
}

void TestMockUpstream::modelsStatusKnob()
{
    QVERIFY(m_mock.setModelsStatus({{"status", 503}}));
    HttpResult r = httpRequest("GET", m_mock.url() + "/v1/models");
    QCOMPARE(r.status, 503);
    QCOMPARE(jsonObject(r.body).value("error").toObject().value("code").toInt(), 503);

    QVERIFY(m_mock.setModelsStatus({{"status", 200}, {"raw", "not json"}}));
    r = httpRequest("GET", m_mock.url() + "/v1/models");
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body, QByteArray("not json"));

    QVERIFY(m_mock.setModelsStatus({{"delay_ms", 300}}));
    r = httpRequest("GET", m_mock.url() + "/v1/models");
    QCOMPARE(r.status, 200);
    QVERIFY2(r.headMs >= 250, QByteArray::number(r.headMs));

    QVERIFY(m_mock.setModelsStatus({}));
    r = httpRequest("GET", m_mock.url() + "/v1/models");
    QCOMPARE(r.status, 200);
    QVERIFY(r.headMs < 250);
}

void TestMockUpstream::unknownModelIs404()
{
    const HttpResult r =
        httpRequest("POST", m_mock.url() + "/v1/chat/completions", R"({"model":"nope"})");
    QCOMPARE(r.status, 404);
    const QJsonObject err = jsonObject(r.body).value("error").toObject();
    QCOMPARE(err.value("message").toString(), "The model `nope` does not exist.");
    QCOMPARE(err.value("type").toString(), "NotFoundError");
    QCOMPARE(err.value("code").toInt(), 404);
    QVERIFY(err.contains("param"));
    QVERIFY(RequestIdRe.match(QString::fromLatin1(r.header("x-request-id"))).hasMatch());
}

void TestMockUpstream::anyModelWhenListEmpty()
{
    QVERIFY(m_mock.setModels({}));
    const HttpResult r =
        httpRequest("POST", m_mock.url() + "/v1/chat/completions", R"({"model":"whatever"})");
    QCOMPARE(r.status, 200);
    QCOMPARE(jsonObject(r.body).value("model").toString(), "whatever");
}

void TestMockUpstream::chatStreamShape()
{
    const HttpResult r = httpRequest("POST", m_mock.url() + "/v1/chat/completions",
                                     R"({"model":"alpha","stream":true,"messages":[]})");
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QVERIFY(r.header("content-type").startsWith("text/event-stream"));
    QCOMPARE(r.header("transfer-encoding"), QByteArray("chunked"));
    QVERIFY(!r.hasHeader("content-length"));
    QVERIFY(RequestIdRe.match(QString::fromLatin1(r.header("x-request-id"))).hasMatch());
    QVERIFY(r.body.endsWith("data: [DONE]\n\n"));
    QVERIFY(r.raw.endsWith("0\r\n\r\n"));

    const QList<QByteArray> events = sseData(r.body);
    // role + 2 reasoning + 5 content + final + [DONE]
    QCOMPARE(events.size(), 10);
    QCOMPARE(r.chunkArrivalMs.size(), 10);
    QCOMPARE(events.last(), QByteArray("[DONE]"));
    const QJsonObject first = jsonObject(events.first());
    QCOMPARE(first.value("object").toString(), "chat.completion.chunk");
    QCOMPARE(first.value("model").toString(), "alpha");
    QVERIFY(first.value("id").toString().startsWith("chatcmpl-"));
    QCOMPARE(first.value("choices")
                 .toArray()
                 .at(0)
                 .toObject()
                 .value("delta")
                 .toObject()
                 .value("role")
                 .toString(),
             "assistant");
    QString reasoning, content;
    for (qsizetype i = 1; i < events.size() - 2; ++i) {
        const QJsonObject choice =
            jsonObject(events[i]).value("choices").toArray().at(0).toObject();
        QVERIFY(choice.value("finish_reason").isNull());
        reasoning += choice.value("delta").toObject().value("reasoning_content").toString();
        content += choice.value("delta").toObject().value("content").toString();
    }
    QCOMPARE(reasoning, "Thinking about it");
    QCOMPARE(content, "Hello from alpha word3 word4");
    const QJsonObject last = jsonObject(events[events.size() - 2]);
    QCOMPARE(last.value("choices").toArray().at(0).toObject().value("finish_reason").toString(),
             "stop");
    const QJsonObject usage = last.value("usage").toObject();
    QVERIFY(usage.value("prompt_tokens").toInt() > 0);
    QCOMPARE(usage.value("completion_tokens").toInt(), 7);
    QCOMPARE(usage.value("total_tokens").toInt(),
             usage.value("prompt_tokens").toInt() + usage.value("completion_tokens").toInt());

    // X-Mock-Events changes the number of content events.
    const HttpResult r3 =
        httpRequest("POST", m_mock.url() + "/v1/chat/completions",
                    R"({"model":"beta","stream":true})", {{"X-Mock-Events", "3"}});
    QCOMPARE(sseData(r3.body).size(), 8);
}

void TestMockUpstream::completionStreamAndFull()
{
    HttpResult r = httpRequest("POST", m_mock.url() + "/v1/completions",
                               R"({"model":"alpha","prompt":"hi","stream":true})");
    QVERIFY2(r.ok(), qPrintable(r.error));
    const QList<QByteArray> events = sseData(r.body);
    QCOMPARE(events.size(), 7);
    QString text;
    for (qsizetype i = 0; i < events.size() - 1; ++i) {
        const QJsonObject o = jsonObject(events[i]);
        QCOMPARE(o.value("object").toString(), "text_completion");
        text += o.value("choices").toArray().at(0).toObject().value("text").toString();
    }
    QCOMPARE(text, "Hello from alpha word3 word4");
    QVERIFY(jsonObject(events[events.size() - 2]).contains("usage"));

    r = httpRequest("POST", m_mock.url() + "/v1/completions", R"({"model":"alpha","prompt":"hi"})");
    QCOMPARE(r.status, 200);
    QCOMPARE(r.header("content-length").toInt(), r.body.size());
    const QJsonObject o = jsonObject(r.body);
    QCOMPARE(o.value("object").toString(), "text_completion");
    QCOMPARE(o.value("choices").toArray().at(0).toObject().value("text").toString(), text);
    QVERIFY(o.value("usage").toObject().value("total_tokens").toInt() > 0);
}

void TestMockUpstream::chatNonStreaming()
{
    const HttpResult r =
        httpRequest("POST", m_mock.url() + "/v1/chat/completions?x=1",
                    R"({"model":"beta","messages":[{"role":"user","content":"hi"}]})");
    QCOMPARE(r.status, 200);
    QCOMPARE(r.header("content-type"), QByteArray("application/json"));
    const QJsonObject o = jsonObject(r.body);
    QCOMPARE(o.value("object").toString(), "chat.completion");
    QCOMPARE(o.value("model").toString(), "beta");
    const QJsonObject msg =
        o.value("choices").toArray().at(0).toObject().value("message").toObject();
    QCOMPARE(msg.value("content").toString(), "Hello from beta word3 word4");
    QCOMPARE(msg.value("reasoning_content").toString(), "Thinking about it");
    QVERIFY(o.value("usage").toObject().value("total_tokens").toInt() > 0);
    // Key order is vLLM's, not alphabetical.
    QVERIFY(r.body.startsWith("{\"id\":\"chatcmpl-"));
}

void TestMockUpstream::embeddings()
{
    const HttpResult r =
        httpRequest("POST", m_mock.url() + "/v1/embeddings", R"({"model":"alpha","input":"x"})");
    QCOMPARE(r.status, 200);
    const QJsonObject o = jsonObject(r.body);
    QCOMPARE(o.value("object").toString(), "list");
    QCOMPARE(o.value("model").toString(), "alpha");
    const QJsonObject item = o.value("data").toArray().at(0).toObject();
    QCOMPARE(item.value("object").toString(), "embedding");
    QVERIFY(item.value("embedding").toArray().size() > 0);
    QVERIFY(o.contains("usage"));
}

void TestMockUpstream::echoExactBytes()
{
    const QByteArray body = "{ \"model\" :\t\"alpha\",\n \"x\":\"\\u00e9\\\"\" }  ";
    const HttpResult r =
        httpRequest("POST", m_mock.url() + "/v1/chat/completions", body, {{"X-Mock-Echo", "1"}});
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body, body);
    QCOMPARE(r.header("content-length").toInt(), body.size());
}

void TestMockUpstream::dropAfterGivesIncompleteChunked()
{
    const HttpResult r =
        httpRequest("POST", m_mock.url() + "/v1/chat/completions",
                    R"({"model":"alpha","stream":true})", {{"X-Mock-Drop-After", "3"}});
    QCOMPARE(r.status, 200);
    QVERIFY(!r.complete);
    QVERIFY(r.peerClosed);
    QCOMPARE(sseData(r.body).size(), 3);
    QVERIFY(!r.raw.endsWith("0\r\n\r\n"));

    // Non-streaming: the head promises more than arrives.
    const HttpResult n = httpRequest("POST", m_mock.url() + "/v1/chat/completions",
                                     R"({"model":"alpha"})", {{"X-Mock-Drop-After", "10"}});
    QCOMPARE(n.status, 200);
    QVERIFY(!n.complete);
    QCOMPARE(n.body.size(), 10);
}

void TestMockUpstream::delayBeforeHead()
{
    const HttpResult r = httpRequest("POST", m_mock.url() + "/v1/chat/completions",
                                     R"({"model":"alpha"})", {{"X-Mock-Delay-Ms", "400"}});
    QCOMPARE(r.status, 200);
    QVERIFY2(r.headMs >= 380, QByteArray::number(r.headMs));
    QVERIFY2(r.headMs < 3000, QByteArray::number(r.headMs));
}

void TestMockUpstream::eventInterval()
{
    const HttpResult r = httpRequest("POST", m_mock.url() + "/v1/chat/completions",
                                     R"({"model":"alpha","stream":true})",
                                     {{"X-Mock-Events", "2"},
                                      {"X-Mock-Reasoning-Events", "0"},
                                      {"X-Mock-Event-Interval-Ms", "100"},
                                      {"X-Mock-Pause-After", "2"},
                                      {"X-Mock-Pause-Ms", "300"}});
    QVERIFY2(r.ok(), qPrintable(r.error));
    // role, c1, [pause] c2, final, [DONE]: 5 events over >= 4*100 + 300 ms.
    QCOMPARE(r.chunkArrivalMs.size(), 5);
    const qint64 span = r.chunkArrivalMs.last() - r.chunkArrivalMs.first();
    QVERIFY2(span >= 650, QByteArray::number(span));
    QVERIFY2(r.chunkArrivalMs[2] - r.chunkArrivalMs[1] >= 350,
             QByteArray::number(r.chunkArrivalMs[2] - r.chunkArrivalMs[1]));
}

void TestMockUpstream::statusKnob()
{
    const HttpResult r = httpRequest("POST", m_mock.url() + "/v1/chat/completions",
                                     R"({"model":"alpha"})", {{"X-Mock-Status", "503"}});
    QCOMPARE(r.status, 503);
    QCOMPARE(r.reason, QByteArray("Service Unavailable"));
    const QJsonObject err = jsonObject(r.body).value("error").toObject();
    QCOMPARE(err.value("code").toInt(), 503);
    QVERIFY(!err.value("message").toString().isEmpty());
}

void TestMockUpstream::recordingExactBody()
{
    const qint64 since = m_mock.stats().value("next_seq").toInteger() - 1;
    const QByteArray body =
        "{\"model\":\"alpha\",  \"messages\":[{\"role\":\"user\",\"content\":\"h\\u00e9\"}]}";
    const QByteArray request = "POST /v1/chat/completions?a=1&b=%20 HTTP/1.1\r\n"
                               "Host: example\r\n"
                               "X-Dup: one\r\n"
                               "Content-Type: application/json\r\n"
                               "X-Dup: two\r\n"
                               "Content-Length: " +
                               QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n" +
                               body;
    const HttpResult r = rawHttp("127.0.0.1", m_mock.port(), request);
    QCOMPARE(r.status, 200);

    const QJsonArray recs = m_mock.requests(since);
    QCOMPARE(recs.size(), 1);
    const QJsonObject rec = recs.at(0).toObject();
    QCOMPARE(rec.value("method").toString(), "POST");
    QCOMPARE(rec.value("target").toString(), "/v1/chat/completions?a=1&b=%20");
    QCOMPARE(rec.value("version").toString(), "HTTP/1.1");
    QCOMPARE(rec.value("body_sha256").toString().toLatin1(), sha256Hex(body));
    QCOMPARE(rec.value("body_size").toInt(), body.size());
    QCOMPARE(MockUpstream::body(rec), body);
    const HeaderList headers = MockUpstream::headers(rec);
    QCOMPARE(headers.size(), 6);
    QCOMPARE(headers.at(1), qMakePair(QByteArray("X-Dup"), QByteArray("one")));
    QCOMPARE(headers.at(3), qMakePair(QByteArray("X-Dup"), QByteArray("two")));
    QCOMPARE(MockUpstream::header(rec, "content-type"), QByteArray("application/json"));
    QVERIFY(rec.value("peer_closed_ms").isNull());

    // Control requests are not recorded; `since` filters.
    QCOMPARE(m_mock.requests(rec.value("seq").toInteger()).size(), 0);
    QVERIFY(m_mock.reset());
    QCOMPARE(m_mock.requests().size(), 0);
}

void TestMockUpstream::repeatedMockHeader()
{
    const HttpResult r = httpRequest("GET", m_mock.url() + "/v1/models", {},
                                     {{"X-Mock-Header", "Set-Cookie: a=1; Path=/"},
                                      {"X-Mock-Header", "Set-Cookie: b=2, c=3"},
                                      {"X-Mock-Header", "X-Upstream-Thing: yes"}});
    QCOMPARE(r.status, 200);
    const QList<QByteArray> cookies = r.headerValues("set-cookie");
    QCOMPARE(cookies.size(), 2);
    QCOMPARE(cookies.at(0), QByteArray("a=1; Path=/"));
    QCOMPARE(cookies.at(1), QByteArray("b=2, c=3"));
    QCOMPARE(r.header("x-upstream-thing"), QByteArray("yes"));
}

void TestMockUpstream::keepAliveAndPipelining()
{
    const qint64 before = m_mock.stats().value("connections_accepted").toInteger();
    RawConnection conn;
    QVERIFY(conn.connectTo("127.0.0.1", m_mock.port()));
    const QByteArray get = "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
    QVERIFY(conn.send(get));
    HttpResult a = conn.readResponse(5000);
    QVERIFY2(a.ok(), qPrintable(a.error));
    QVERIFY(!a.peerClosed);
    // Two pipelined requests in one write, answered in order on the same connection.
    QVERIFY(conn.send(get + "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n"
                            "{\"model\":\"beta\"}\n"));
    HttpResult b = conn.readResponse(5000);
    HttpResult c = conn.readResponse(5000);
    QVERIFY2(b.ok(), qPrintable(b.error));
    QVERIFY2(c.ok(), qPrintable(c.error));
    QCOMPARE(jsonObject(c.body).value("model").toString(), "beta");
    QVERIFY(conn.isOpen());
    const QJsonObject stats = m_mock.stats();
    QCOMPARE(stats.value("connections_accepted").toInteger() - before, 2); // ours + stats()
    const QJsonArray recs = m_mock.requests();
    QCOMPARE(recs.size(), 3);
    QCOMPARE(recs.at(0).toObject().value("connection"), recs.at(2).toObject().value("connection"));
}

void TestMockUpstream::chunkedRequestWithExpectContinue()
{
    RawConnection conn;
    QVERIFY(conn.connectTo("127.0.0.1", m_mock.port()));
    QVERIFY(
        conn.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                  "Expect: 100-continue\r\nX-Mock-Echo: 1\r\n\r\n"));
    QVERIFY(conn.waitForData("HTTP/1.1 100 Continue\r\n\r\n", 3000));
    QVERIFY(conn.send("8;ext=1\r\n{\"model\"\r\n9\r\n:\"alpha\"}\r\n0\r\nX-Trailer: t\r\n\r\n"));
    const HttpResult r = conn.readResponse(5000);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.interimStatuses, QList<int>{100});
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body, QByteArray("{\"model\":\"alpha\"}"));
    const QJsonObject rec = m_mock.requests().last().toObject();
    QVERIFY(rec.value("chunked").toBool());
    QCOMPARE(rec.value("body_size").toInt(), 17);
}

void TestMockUpstream::http10CloseDelimited()
{
    const QByteArray body = R"({"model":"alpha","stream":true})";
    const HttpResult r = rawHttp("127.0.0.1", m_mock.port(),
                                 "POST /v1/chat/completions HTTP/1.0\r\nContent-Length: " +
                                     QByteArray::number(body.size()) + "\r\n\r\n" + body);
    QCOMPARE(r.status, 200);
    QVERIFY(r.ok());
    QVERIFY(!r.hasHeader("transfer-encoding"));
    QVERIFY(!r.hasHeader("content-length"));
    QVERIFY(r.peerClosed);
    QCOMPARE(sseData(r.body).last(), QByteArray("[DONE]"));
}

void TestMockUpstream::closeDelimitedKnob()
{
    const HttpResult r =
        httpRequest("POST", m_mock.url() + "/v1/chat/completions",
                    R"({"model":"alpha","stream":true})", {{"X-Mock-Close-Delimited", "1"}});
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(!r.hasHeader("transfer-encoding"));
    QVERIFY(!r.hasHeader("content-length"));
    QCOMPARE(r.header("connection"), QByteArray("close"));
    QCOMPARE(sseData(r.body).size(), 10);
}

void TestMockUpstream::gzipKnob()
{
    const HttpResult r = httpRequest("POST", m_mock.url() + "/v1/chat/completions",
                                     R"({"model":"alpha"})", {{"X-Mock-Gzip", "1"}});
    QCOMPARE(r.status, 200);
    QCOMPARE(r.header("content-encoding"), QByteArray("gzip"));
    QCOMPARE(r.header("content-length").toInt(), r.body.size());
    QVERIFY(r.body.startsWith("\x1f\x8b"));
    const CommandResult gunzip = runCommand("gzip", {"-dc"}, 10000, r.body);
    QVERIFY2(gunzip.exitCode == 0, gunzip.stdErr.constData());
    QCOMPARE(jsonObject(gunzip.stdOut).value("object").toString(), "chat.completion");
}

void TestMockUpstream::resetBeforeHead()
{
    const HttpResult r = httpRequest("POST", m_mock.url() + "/v1/chat/completions",
                                     R"({"model":"alpha"})", {{"X-Mock-Reset-Before-Head", "1"}});
    QCOMPARE(r.status, 0);
    QVERIFY(!r.complete);
    QVERIFY(!r.error.isEmpty());
    QCOMPARE(m_mock.requests().size(), 1); // recorded even though never answered
}

void TestMockUpstream::peerClosedRecorded()
{
    RawConnection conn;
    QVERIFY(conn.connectTo("127.0.0.1", m_mock.port()));
    QVERIFY(conn.send(buildRequest("POST", m_mock.url() + "/v1/chat/completions",
                                   R"({"model":"alpha"})", {{"X-Mock-Delay-Ms", "5000"}})));
    QTRY_COMPARE_WITH_TIMEOUT(m_mock.stats().value("in_flight").toInt(), 1, 3000);
    pumpEvents(200);
    conn.abort();
    QTRY_VERIFY_WITH_TIMEOUT(!m_mock.requests().last().toObject().value("peer_closed_ms").isNull(),
                             3000);
    const qint64 closedMs = m_mock.requests().last().toObject().value("peer_closed_ms").toInteger();
    QVERIFY2(closedMs >= 150 && closedMs < 3000, QByteArray::number(closedMs));
    QTRY_COMPARE_WITH_TIMEOUT(m_mock.stats().value("in_flight").toInt(), 0, 3000);
}

void TestMockUpstream::largeResponse()
{
    const qint64 size = 8 * 1024 * 1024 + 7;
    const HttpResult r =
        httpRequest("POST", m_mock.url() + "/v1/chat/completions", R"({"model":"alpha"})",
                    {{"X-Mock-Large-Response", QByteArray::number(size)}}, 30000);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.body.size(), size);
    QCOMPARE(r.header("content-length").toLongLong(), size);
    QVERIFY(r.body.startsWith("ABCDEFGHIJ"));
    QCOMPARE(r.body.at(64), 'A');
}

void TestMockUpstream::inFlightStats()
{
    std::vector<std::unique_ptr<RawConnection>> conns;
    for (int i = 0; i < 20; ++i) {
        auto c = std::make_unique<RawConnection>();
        QVERIFY(c->connectTo("127.0.0.1", m_mock.port()));
        QVERIFY(c->send(buildRequest("POST", m_mock.url() + "/v1/chat/completions",
                                     R"({"model":"alpha"})", {{"X-Mock-Delay-Ms", "500"}})));
        conns.push_back(std::move(c));
    }
    QTRY_COMPARE_WITH_TIMEOUT(m_mock.stats().value("in_flight").toInt(), 20, 3000);
    for (auto &c : conns) {
        const HttpResult r = c->readResponse(5000);
        QCOMPARE(r.status, 200);
    }
    const QJsonObject stats = m_mock.stats();
    QCOMPARE(stats.value("in_flight").toInt(), 0);
    QVERIFY(stats.value("max_in_flight").toInt() >= 20);
    QCOMPARE(stats.value("requests").toInt(), 20);
}

void TestMockUpstream::childProcessLines()
{
    ChildProcess p;
    QVERIFY(p.start("/bin/sh",
                    {"-c", "echo out1; echo err1 >&2; sleep 0.2; echo late >&2; exec sleep 30"}));
    QVERIFY(p.waitForLine(QRegularExpression("^err1$"), 3000, ChildProcess::Channel::StdErr)
                .hasMatch());
    QVERIFY(
        !p.waitForLine(QRegularExpression("^err1$"), 0, ChildProcess::Channel::StdOut).hasMatch());
    const ChildProcess::Mark mark = p.mark();
    QVERIFY(!p.waitForLine(QRegularExpression("^out1$"), 0, ChildProcess::Channel::Both, mark)
                 .hasMatch());
    QVERIFY(p.waitForLine(QRegularExpression("^late$"), 3000, ChildProcess::Channel::Both, mark)
                .hasMatch());
    QVERIFY(p.allOutput().contains("out1"));
    QElapsedTimer t;
    t.start();
    p.stop();
    QVERIFY(t.elapsed() < 4000);
    QVERIFY(!p.isRunning());
    // A child that exits ends the wait early.
    ChildProcess q;
    QVERIFY(q.start("/bin/sh", {"-c", "exit 3"}));
    t.restart();
    QVERIFY(!q.waitForLine(QRegularExpression("never"), 5000).hasMatch());
    QVERIFY(t.elapsed() < 4000);
    QCOMPARE(q.exitCode(), 3);
}

void TestMockUpstream::slpDaemonWithFakeBinary()
{
    QTemporaryDir dir;
    const QString script = dir.filePath("fake-slp");
    QFile f(script);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("#!/bin/sh\n"
            "echo \"args: $*\" >&2\n"
            "echo \"2024-01-01T00:00:00Z listening on 127.0.0.1:5555\" >&2\n"
            "trap 'echo reloaded >&2' HUP\n"
            "while :; do sleep 0.05; done\n");
    f.close();
    f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
    const QByteArray saved = qgetenv("SLP_BIN");
    qputenv("SLP_BIN", script.toLocal8Bit());
    SlpDaemon d;
    const bool started = d.start("listen: \":8080\"\nbackends: []\n", {"--log-requests"});
    qputenv("SLP_BIN", saved);
    QVERIFY2(started, qPrintable(d.errorString()));
    QCOMPARE(d.port(), quint16(5555));
    QCOMPARE(d.url(), "http://127.0.0.1:5555");
    QVERIFY(d.stderrText().contains("--config " + d.configPath() +
                                    " --listen 127.0.0.1:0 --log-requests"));
    QFile cfg(d.configPath());
    QVERIFY(cfg.open(QIODevice::ReadOnly));
    QVERIFY(cfg.readAll().startsWith("listen:"));
    const auto mark = d.mark();
    QVERIFY(d.reload());
    QVERIFY(d.waitForLog(QRegularExpression("^reloaded$"), 3000, mark).hasMatch());
    QCOMPARE(d.countLog(QRegularExpression("listening on")), 1);
    d.stop(2000);
}

void TestMockUpstream::runCommandTimeout()
{
    CommandResult r = runCommand("/bin/sh", {"-c", "cat; echo err >&2; exit 4"}, 5000, "in-bytes");
    QCOMPARE(r.exitCode, 4);
    QCOMPARE(r.stdOut, QByteArray("in-bytes"));
    QCOMPARE(r.stdErr, QByteArray("err\n"));
    r = runCommand("sleep", {"10"}, 200);
    QVERIFY(r.timedOut);
    QVERIFY(r.elapsedMs < 3000);
}

QTEST_GUILESS_MAIN(TestMockUpstream)
#include "tst_mock_upstream.moc"
