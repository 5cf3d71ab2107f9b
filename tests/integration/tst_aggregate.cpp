// SPDX-License-Identifier: GPL-3.0-or-later
// aggregate: true end to end: a non-streaming request goes upstream with "stream": true and
// comes back as one JSON answer, so the route timeout bounds time to first token; everything
// aggregate must not touch passes through as it came.
#include "testsupport.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace slp::test;

namespace {
const QByteArray kChat = "/v1/chat/completions";

HttpResult post(const SlpDaemon &slp, const QByteArray &path, const QByteArray &body,
                const HeaderList &headers = {}, int timeoutMs = 15000)
{
    return httpRequest("POST", slp.url() + QString::fromLatin1(path), body, headers, timeoutMs);
}

QJsonObject firstChoice(const QJsonObject &o)
{
    return o.value("choices").toArray().first().toObject();
}
} // namespace

class TestAggregate : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void timeoutBoundsFirstTokenNotGeneration();
    void upstreamGetsStreamTrueAndNothingElseChanged();
    void reassembledEqualsNonStreamingAnswer_data();
    void reassembledEqualsNonStreamingAnswer();
    void completionsReassembled();
    void passThrough_data();
    void passThrough();
    void upstreamErrorStatusPassesThrough();
    void backendIgnoringStreamPassesThrough();
    void inBandErrorIs502WithUpstreamObject();
    void streamEndingBeforeDoneIs502();
    void answerOverMaxBodyBytesIs502();

private:
    MockUpstream m_mock;
    SlpDaemon m_slp;
};

void TestAggregate::initTestCase()
{
    QVERIFY2(m_mock.start({QStringLiteral("Up-Model")}), qPrintable(m_mock.errorString()));
    const QString config = QStringLiteral(R"(
log_requests: true
max_body_bytes: 64KiB
backends:
  - name: agg
    url: %1
    model: Up-Model
    timeout: 1s
    aggregate: true
  - name: plain
    url: %1
    model: Up-Model
    timeout: 1s
editions:
  - suffix: -ed
    url: "{{.URL}}"
    model: "{{.Model}}"
    timeout: 1s
    apply_to: [plain]
)")
                               .arg(m_mock.url());
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
}

void TestAggregate::init()
{
    QVERIFY(m_mock.reset());
}

// The issue's must-show: 3 s of generation, first token at once, a 1 s route timeout.
void TestAggregate::timeoutBoundsFirstTokenNotGeneration()
{
    const HeaderList slow{{"X-Mock-Events", "6"}, {"X-Mock-Event-Interval-Ms", "300"}};
    const QByteArray body = R"({"model":"agg","messages":[{"role":"user","content":"hi"}]})";
    QElapsedTimer clock;
    clock.start();
    const HttpResult agg = post(m_slp, kChat, body, slow);
    const qint64 aggMs = clock.elapsed();
    QVERIFY2(agg.ok(), qPrintable(agg.error));
    QCOMPARE(agg.status, 200);
    QVERIFY2(aggMs >= 2000, qPrintable(QStringLiteral("the generation took %1 ms").arg(aggMs)));
    qInfo("aggregate route answered 200 after %lld ms with a 1s timeout", aggMs);
    const QJsonObject answer = jsonObject(agg);
    QCOMPARE(answer.value("object").toString(), QStringLiteral("chat.completion"));
    QVERIFY(firstChoice(answer).value("message").toObject().value("content").toString().startsWith(
        QStringLiteral("Hello from Up-Model")));
    QVERIFY(agg.header("content-type").startsWith("application/json"));
    QCOMPARE(agg.header("content-length").toLongLong(), qint64(agg.body.size()));

    // The same request on the same backend without aggregate waits for the whole answer.
    const QByteArray plainBody = R"({"model":"plain","messages":[{"role":"user","content":"hi"}]})";
    const HttpResult plain = post(m_slp, kChat, plainBody, slow);
    QCOMPARE(plain.status, 502);
    QVERIFY2(QString::fromUtf8(plain.body).contains(QStringLiteral("timed out after 1s")),
             plain.body.constData());
}

void TestAggregate::upstreamGetsStreamTrueAndNothingElseChanged()
{
    const QByteArray body = "{ \"messages\" : [ {\"role\":\"user\",\"content\":\"caf\\u00e9\"} ],"
                            "\n  \"model\":\"agg\", \"stream\": false, \"n\": 1 }";
    const HttpResult r = post(m_slp, kChat, body);
    QCOMPARE(r.status, 200);
    const QJsonArray recorded = m_mock.requests();
    QCOMPARE(recorded.size(), 1);
    QByteArray expected = body;
    expected.replace("\"model\":\"agg\"", "\"model\":\"Up-Model\"");
    expected.replace("\"stream\": false", "\"stream\": true");
    QCOMPARE(MockUpstream::body(recorded.first().toObject()), expected);
}

void TestAggregate::reassembledEqualsNonStreamingAnswer_data()
{
    QTest::addColumn<HeaderList>("knobs");
    QTest::newRow("content and reasoning") << HeaderList{{"X-Mock-Events", "7"}};
    QTest::newRow("tool calls") << HeaderList{{"X-Mock-Tool-Calls", "2"}};
    QTest::newRow("no reasoning") << HeaderList{{"X-Mock-Reasoning-Events", "0"}};
}

// What aggregate returns must be what the backend itself answers without streaming.
void TestAggregate::reassembledEqualsNonStreamingAnswer()
{
    QFETCH(HeaderList, knobs);
    const QByteArray question = R"(,"messages":[{"role":"user","content":"same"}]})";
    const HttpResult agg = post(m_slp, kChat, "{\"model\":\"agg\"" + question, knobs);
    // The -ed edition forwards to the same backend, renamed the same way, without aggregate.
    const HttpResult direct = post(m_slp, kChat, "{\"model\":\"plain-ed\"" + question, knobs);
    QCOMPARE(agg.status, 200);
    QCOMPARE(direct.status, 200);
    const QJsonObject a = jsonObject(agg);
    const QJsonObject d = jsonObject(direct);
    QCOMPARE(a.value("object"), d.value("object"));
    QCOMPARE(a.value("model"), d.value("model"));
    const QJsonObject ac = firstChoice(a);
    const QJsonObject dc = firstChoice(d);
    QCOMPARE(ac.value("finish_reason"), dc.value("finish_reason"));
    QCOMPARE(ac.value("index"), dc.value("index"));
    const QJsonObject am = ac.value("message").toObject();
    const QJsonObject dm = dc.value("message").toObject();
    QCOMPARE(am.value("role"), dm.value("role"));
    QCOMPARE(am.value("content"), dm.value("content"));
    QCOMPARE(am.value("reasoning_content").toString(), dm.value("reasoning_content").toString());
    // vLLM's non-streaming answer carries "tool_calls": [] when there are none.
    QCOMPARE(am.value("tool_calls").toArray(), dm.value("tool_calls").toArray());
    QVERIFY2(a.value("usage").isObject(), agg.body.constData());
    QVERIFY(a.value("id").toString().startsWith(QStringLiteral("chatcmpl-")));
    QVERIFY(agg.header("x-request-id").startsWith("gdqz"));
}

void TestAggregate::completionsReassembled()
{
    const HttpResult agg =
        post(m_slp, "/v1/completions", R"({"model":"agg","prompt":"Say hello","max_tokens":8})");
    const HttpResult direct = post(m_slp, "/v1/completions",
                                   R"({"model":"plain-ed","prompt":"Say hello","max_tokens":8})");
    QCOMPARE(agg.status, 200);
    const QJsonObject a = jsonObject(agg);
    QCOMPARE(a.value("object").toString(), QStringLiteral("text_completion"));
    QCOMPARE(firstChoice(a).value("text"), firstChoice(jsonObject(direct)).value("text"));
    QCOMPARE(firstChoice(a).value("finish_reason"),
             firstChoice(jsonObject(direct)).value("finish_reason"));
}

void TestAggregate::passThrough_data()
{
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<bool>("expectSse");
    QTest::newRow("client asked to stream")
        << kChat << QByteArray(R"({"model":"agg","stream":true})") << true;
    QTest::newRow("logprobs") << kChat << QByteArray(R"({"model":"agg","logprobs":true})") << false;
    QTest::newRow("top_logprobs") << kChat << QByteArray(R"({"model":"agg","top_logprobs":2})")
                                  << false;
    QTest::newRow("completions echo")
        << QByteArray("/v1/completions")
        << QByteArray(R"({"model":"agg","prompt":"x","echo":true})") << false;
    QTest::newRow("embeddings") << QByteArray("/v1/embeddings")
                                << QByteArray(R"({"model":"agg","input":"x"})") << false;
}

// Requests aggregate leaves alone reach the upstream with only the model renamed.
void TestAggregate::passThrough()
{
    QFETCH(QByteArray, path);
    QFETCH(QByteArray, body);
    QFETCH(bool, expectSse);
    const HttpResult r = post(m_slp, path, body);
    QCOMPARE(r.status, 200);
    QCOMPARE(r.header("content-type").startsWith("text/event-stream"), expectSse);
    if (expectSse)
        QVERIFY(r.body.contains("data: [DONE]"));
    const QJsonArray recorded = m_mock.requests();
    QCOMPARE(recorded.size(), 1);
    QByteArray expected = body;
    expected.replace("\"model\":\"agg\"", "\"model\":\"Up-Model\"");
    QCOMPARE(MockUpstream::body(recorded.first().toObject()), expected);
}

void TestAggregate::upstreamErrorStatusPassesThrough()
{
    const HttpResult r = post(m_slp, kChat, R"({"model":"agg"})", {{"X-Mock-Status", "400"}});
    QCOMPARE(r.status, 400);
    const QJsonObject error = jsonObject(r).value("error").toObject();
    QVERIFY2(!error.isEmpty(), r.body.constData());
    QVERIFY(r.header("x-request-id").startsWith("gdqz"));
}

void TestAggregate::backendIgnoringStreamPassesThrough()
{
    const HttpResult r = post(m_slp, kChat, R"({"model":"agg"})", {{"X-Mock-Ignore-Stream", "1"}});
    QCOMPARE(r.status, 200);
    QVERIFY(r.header("content-type").startsWith("application/json"));
    QCOMPARE(jsonObject(r).value("object").toString(), QStringLiteral("chat.completion"));
}

void TestAggregate::inBandErrorIs502WithUpstreamObject()
{
    const HttpResult r =
        post(m_slp, kChat, R"({"model":"agg"})", {{"X-Mock-Stream-Error-After", "3"}});
    QCOMPARE(r.status, 502);
    const QJsonObject error = jsonObject(r).value("error").toObject();
    QCOMPARE(error.value("message").toString(), QStringLiteral("mock in-band error"));
    QVERIFY(
        m_slp
            .waitForLog(QRegularExpression(QStringLiteral(
                            "aggregate for model agg failed: the upstream sent an error event")),
                        5000)
            .hasMatch());
}

void TestAggregate::streamEndingBeforeDoneIs502()
{
    for (const auto &knob :
         {HeaderList{{"X-Mock-No-Done", "1"}}, HeaderList{{"X-Mock-Drop-After", "3"}}}) {
        const HttpResult r = post(m_slp, kChat, R"({"model":"agg"})", knob);
        QCOMPARE(r.status, 502); // never a truncated 200
        const QString message = jsonObject(r).value("error").toObject().value("message").toString();
        QVERIFY2(message.startsWith(QStringLiteral("upstream stream ended before completion")),
                 r.body.constData());
    }
}

void TestAggregate::answerOverMaxBodyBytesIs502()
{
    // The reassembled answer is buffered like a request body: max_body_bytes (64 KiB here)
    // bounds it, and the 502 says which key.
    const HttpResult r = post(m_slp, kChat, R"({"model":"agg"})", {{"X-Mock-Events", "20000"}});
    QCOMPARE(r.status, 502);
    const QString message = jsonObject(r).value("error").toObject().value("message").toString();
    QVERIFY2(message.contains(QStringLiteral("larger than max_body_bytes (65536 bytes")),
             r.body.constData());
    // A long stream under the bound is still reassembled.
    QCOMPARE(post(m_slp, kChat, R"({"model":"agg"})", {{"X-Mock-Events", "200"}}).status, 200);
}

QTEST_GUILESS_MAIN(TestAggregate)
#include "tst_aggregate.moc"
