// SPDX-License-Identifier: GPL-3.0-or-later
#include "aggregate/sseaggregator.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QtTest>

#include <memory>

using slp::SseAggregator;
using Kind = SseAggregator::Kind;
using State = SseAggregator::State;

Q_DECLARE_METATYPE(SseAggregator::Kind)

namespace {

const char *stateName(State s)
{
    switch (s) {
    case State::Streaming:
        return "Streaming";
    case State::Done:
        return "Done";
    case State::UpstreamError:
        return "UpstreamError";
    case State::Malformed:
        return "Malformed";
    }
    return "?";
}

QByteArray readFixture(const QString &name)
{
    const QString path = QFINDTESTDATA(QStringLiteral("data/") + name);
    QFile f(path);
    if (path.isEmpty() || !f.open(QIODevice::ReadOnly))
        qFatal("fixture %s not found", qPrintable(name));
    return f.readAll();
}

QJsonObject parseObject(const QByteArray &json)
{
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject())
        qFatal("not a JSON object (%s): %s", qPrintable(err.errorString()), json.constData());
    return doc.object();
}

// Feeds `stream` in pieces ending at the given cut points, then finishes the input.
std::unique_ptr<SseAggregator> runCuts(Kind kind, const QByteArray &stream, QList<qsizetype> cuts,
                                       qint64 limit = 256 * 1024 * 1024)
{
    auto agg = std::make_unique<SseAggregator>(kind, limit);
    qsizetype pos = 0;
    cuts.append(stream.size());
    for (const qsizetype cut : std::as_const(cuts)) {
        agg->feed(QByteArrayView(stream).sliced(pos, cut - pos));
        pos = cut;
    }
    agg->finishInput();
    return agg;
}

std::unique_ptr<SseAggregator> runWhole(Kind kind, const QByteArray &stream,
                                        qint64 limit = 256 * 1024 * 1024)
{
    return runCuts(kind, stream, {}, limit);
}

std::unique_ptr<SseAggregator> runBytewise(Kind kind, const QByteArray &stream)
{
    QList<qsizetype> cuts;
    for (qsizetype i = 1; i < stream.size(); ++i)
        cuts.append(i);
    return runCuts(kind, stream, cuts);
}

std::unique_ptr<SseAggregator> runRandom(Kind kind, const QByteArray &stream, quint32 seed)
{
    QRandomGenerator rng(seed);
    QList<qsizetype> cuts;
    qsizetype pos = 0;
    while (true) {
        pos += 1 + rng.bounded(40);
        if (pos >= stream.size())
            break;
        cuts.append(pos);
    }
    return runCuts(kind, stream, cuts);
}

QByteArray withLineEnding(QByteArray stream, const char *ending)
{
    return stream.replace("\n", ending);
}

// A vLLM-shaped chat chunk with the given choices.
QByteArray chatChunk(const QByteArray &choices, const QByteArray &extra = {})
{
    return "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,"
           "\"model\":\"m\",\"choices\":[" +
           choices + "]" + extra + "}\n\n";
}

QByteArray deltaChunk(const QByteArray &delta, const char *finish = "null")
{
    return chatChunk("{\"index\":0,\"delta\":" + delta +
                     ",\"logprobs\":null,\"finish_reason\":" + finish + "}");
}

QJsonObject firstMessage(const QJsonObject &result)
{
    return result.value(u"choices").toArray().at(0).toObject().value(u"message").toObject();
}

#define EXPECT_STATE(agg, expected)                                                                \
    do {                                                                                           \
        if ((agg).state() != (expected))                                                           \
            QFAIL(qPrintable(QStringLiteral("state %1, expected %2 (%3)")                          \
                                 .arg(QLatin1String(stateName((agg).state())),                     \
                                      QLatin1String(stateName(expected)),                          \
                                      (agg).malformedReason())));                                  \
    } while (false)

} // namespace

class TstAggregateSse : public QObject
{
    Q_OBJECT

private slots:
    void fixtures_data();
    void fixtures();
    void matchesNonStreamingResponse();

    void unicodeSplitAcrossFeeds();
    void surrogatePairSplitAcrossChunks();
    void multiLineData();
    void commentsAndOtherFields();
    void bomAndLoneCr();
    void usageAbsent();
    void usageOnEveryChunk();
    void contentShapes();
    void toolCallsWithoutIndex();
    void topLevelFieldsMerged();

    void inBandError_data();
    void inBandError();
    void llamaCppErrorLine();

    void endsBeforeDone_data();
    void endsBeforeDone();
    void doneWithoutTrailingBlankLine();
    void afterDoneIgnored();
    void garbage_data();
    void garbage();
    void outputLimit();
    void eventLimit();
    void accessorsOutsideTheirState();
};

void TstAggregateSse::fixtures_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<Kind>("kind");
    QTest::newRow("vllm chat reasoning") << QStringLiteral("vllm_chat_reasoning") << Kind::Chat;
    QTest::newRow("vllm chat tools") << QStringLiteral("vllm_chat_tools") << Kind::Chat;
    QTest::newRow("vllm chat n=2") << QStringLiteral("vllm_chat_n2") << Kind::Chat;
    QTest::newRow("vllm completions") << QStringLiteral("vllm_completions") << Kind::Completion;
    QTest::newRow("llama.cpp chat") << QStringLiteral("llamacpp_chat") << Kind::Chat;
}

// Every fixture, in every split and with every line ending, gives the hand-written result.
void TstAggregateSse::fixtures()
{
    QFETCH(QString, name);
    QFETCH(Kind, kind);
    const QByteArray lf = readFixture(name + QStringLiteral(".sse"));
    const QJsonObject expected = parseObject(readFixture(name + QStringLiteral(".expected.json")));

    // returns what went wrong, or nothing
    const auto check = [&](const SseAggregator &agg, const QByteArray &how) -> QString {
        if (agg.state() != State::Done)
            return QStringLiteral("%1: state %2 (%3)")
                .arg(QString::fromUtf8(how), QLatin1String(stateName(agg.state())),
                     agg.malformedReason());
        if (parseObject(agg.result()) != expected)
            return QStringLiteral("%1: got %2")
                .arg(QString::fromUtf8(how), QString::fromUtf8(agg.result()));
        return {};
    };
#define CHECK(agg, how)                                                                            \
    do {                                                                                           \
        const QString problem = check(agg, how);                                                   \
        if (!problem.isEmpty())                                                                    \
            QFAIL(qPrintable(problem));                                                            \
    } while (false)

    for (const char *ending : {"\n", "\r\n", "\r"}) {
        const QByteArray stream = withLineEnding(lf, ending);
        const QByteArray label =
            QByteArrayLiteral("ending ") + QByteArray(ending).toPercentEncoding();
        CHECK(*runWhole(kind, stream), label + " whole");
        CHECK(*runBytewise(kind, stream), label + " byte by byte");
        for (quint32 seed = 1; seed <= 20; ++seed)
            CHECK(*runRandom(kind, stream, seed),
                  label + " random split seed " + QByteArray::number(seed));
    }
#undef CHECK
}

// The reassembled vLLM stream agrees with vLLM's own non-streaming answer on what matters.
void TstAggregateSse::matchesNonStreamingResponse()
{
    const auto agg = runWhole(Kind::Chat, readFixture(QStringLiteral("vllm_chat_reasoning.sse")));
    EXPECT_STATE(*agg, State::Done);
    const QJsonObject got = parseObject(agg->result());
    const QJsonObject want =
        parseObject(readFixture(QStringLiteral("vllm_chat_reasoning.nonstream.json")));

    for (const char *key : {"id", "object", "created", "model", "usage"})
        QCOMPARE(got.value(QLatin1String(key)), want.value(QLatin1String(key)));
    const QJsonArray gotChoices = got.value(u"choices").toArray();
    const QJsonArray wantChoices = want.value(u"choices").toArray();
    QCOMPARE(gotChoices.size(), wantChoices.size());
    for (qsizetype i = 0; i < gotChoices.size(); ++i) {
        const QJsonObject g = gotChoices.at(i).toObject();
        const QJsonObject w = wantChoices.at(i).toObject();
        for (const char *key : {"index", "finish_reason", "logprobs", "stop_reason"})
            QCOMPARE(g.value(QLatin1String(key)), w.value(QLatin1String(key)));
        const QJsonObject gm = g.value(u"message").toObject();
        const QJsonObject wm = w.value(u"message").toObject();
        for (const char *key : {"role", "content", "reasoning_content"})
            QCOMPARE(gm.value(QLatin1String(key)), wm.value(QLatin1String(key)));
        // vLLM says "tool_calls": [] where the aggregate leaves the key out
        QCOMPARE(gm.value(u"tool_calls").toArray(), wm.value(u"tool_calls").toArray());
    }
}

void TstAggregateSse::unicodeSplitAcrossFeeds()
{
    const QString text = QStringLiteral("héllo 😀 日本語 👩‍👩‍👧 ok");
    QByteArray stream = deltaChunk(R"({"role":"assistant"})");
    // one character per chunk, raw UTF-8 in the JSON
    for (qsizetype i = 0; i < text.size(); ++i) {
        const qsizetype len = text.at(i).isHighSurrogate() ? 2 : 1;
        stream += deltaChunk("{\"content\":\"" + text.mid(i, len).toUtf8() + "\"}");
        i += len - 1;
    }
    stream += deltaChunk("{}", "\"stop\"") + "data: [DONE]\n\n";

    // cut inside every multi-byte sequence: byte by byte, and two-byte strides at both parities
    for (const auto &agg : {runBytewise(Kind::Chat, stream), runRandom(Kind::Chat, stream, 7)}) {
        EXPECT_STATE(*agg, State::Done);
        QCOMPARE(firstMessage(parseObject(agg->result())).value(u"content").toString(), text);
    }
    for (qsizetype start : {1, 2}) {
        QList<qsizetype> cuts;
        for (qsizetype i = start; i < stream.size(); i += 2)
            cuts.append(i);
        const auto agg = runCuts(Kind::Chat, stream, cuts);
        EXPECT_STATE(*agg, State::Done);
        QCOMPARE(firstMessage(parseObject(agg->result())).value(u"content").toString(), text);
    }
}

// A server that escapes non-ASCII may put the two halves of a surrogate pair in two chunks:
// concatenating as QString reunites them.
void TstAggregateSse::surrogatePairSplitAcrossChunks()
{
    const QByteArray stream = deltaChunk(R"({"content":"a\ud83d"})") +
                              deltaChunk(R"({"content":"\ude00b"})", "\"stop\"") +
                              "data: [DONE]\n\n";
    const auto agg = runWhole(Kind::Chat, stream);
    EXPECT_STATE(*agg, State::Done);
    QCOMPARE(firstMessage(parseObject(agg->result())).value(u"content").toString(),
             QStringLiteral("a😀b"));
    QVERIFY(agg->result().contains("a\xF0\x9F\x98\x80"
                                   "b"));
}

// data lines of one event are joined with "\n"; JSON does not mind newlines between tokens.
void TstAggregateSse::multiLineData()
{
    const QByteArray stream = "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\n"
                              "data: \"delta\":{\"content\":\"multi\"},\n"
                              "data:\"finish_reason\":\"stop\"}]}\n"
                              "\n"
                              "data: [DONE]\n\n";
    for (const char *ending : {"\n", "\r\n"}) {
        const auto agg = runBytewise(Kind::Chat, withLineEnding(stream, ending));
        EXPECT_STATE(*agg, State::Done);
        const QJsonObject result = parseObject(agg->result());
        QCOMPARE(firstMessage(result).value(u"content").toString(), QStringLiteral("multi"));
        QCOMPARE(result.value(u"choices").toArray().at(0).toObject().value(u"finish_reason"),
                 QJsonValue(QStringLiteral("stop")));
    }
    // the join is a real LF, even inside a string (QJsonDocument accepts the raw control char)
    const auto inString =
        runWhole(Kind::Chat, "data: {\"choices\":[{\"delta\":{\"content\":\"a\r\ndata: b\"}}]}\n\n"
                             "data: [DONE]\n\n");
    EXPECT_STATE(*inString, State::Done);
    QCOMPARE(firstMessage(parseObject(inString->result())).value(u"content").toString(),
             QStringLiteral("a\nb"));
}

void TstAggregateSse::commentsAndOtherFields()
{
    const QByteArray stream = ": connected\n\n"
                              "retry: 3000\n\n"
                              ":\n\n"
                              "event: message\n"
                              "id: 1\n"
                              ": inside an event\n"
                              "data:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"A\"}}]}\n\n"
                              ": keep-alive\n\n"
                              ": keep-alive\n\n"
                              "data:\n\n"    // blank data: a keep-alive too
                              "data:   \n\n" // whitespace only
                              "event: ping\n\n"
                              "id\n" // a field without a colon
                              "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"B\"},"
                              "\"finish_reason\":\"stop\"}]}\n\n"
                              ": bye\n\n"
                              "data: [DONE]\n\n";
    const auto agg = runBytewise(Kind::Chat, stream);
    EXPECT_STATE(*agg, State::Done);
    const QJsonObject result = parseObject(agg->result());
    QCOMPARE(firstMessage(result).value(u"content").toString(), QStringLiteral("AB"));
    QCOMPARE(firstMessage(result).value(u"role").toString(), QStringLiteral("assistant"));
}

void TstAggregateSse::bomAndLoneCr()
{
    const QByteArray body = deltaChunk(R"({"content":"x"})", "\"stop\"") + "data: [DONE]\n\n";
    const auto withBom = runBytewise(Kind::Chat, "\xEF\xBB\xBF" + body);
    EXPECT_STATE(*withBom, State::Done);
    QCOMPARE(firstMessage(parseObject(withBom->result())).value(u"content").toString(),
             QStringLiteral("x"));

    // CR then LF in separate feeds is one line ending, not a blank line in between
    QByteArray crlf = withLineEnding(body, "\r\n");
    QList<qsizetype> cuts;
    for (qsizetype i = 0; i < crlf.size(); ++i)
        if (crlf[i] == '\r')
            cuts.append(i + 1);
    const auto split = runCuts(Kind::Chat, crlf, cuts);
    EXPECT_STATE(*split, State::Done);
    QCOMPARE(split->result(), withBom->result());
}

void TstAggregateSse::usageAbsent()
{
    const QByteArray stream =
        chatChunk(R"({"index":0,"delta":{"content":"hi"},"finish_reason":"stop"})",
                  ",\"usage\":null") +
        "data: [DONE]\n\n";
    const auto agg = runWhole(Kind::Chat, stream);
    EXPECT_STATE(*agg, State::Done);
    const QJsonObject result = parseObject(agg->result());
    QVERIFY(!result.contains(u"usage"));
    QCOMPARE(firstMessage(result).value(u"content").toString(), QStringLiteral("hi"));
}

// vLLM's continuous_usage_stats puts a running usage on every chunk: the last one is the total.
void TstAggregateSse::usageOnEveryChunk()
{
    QByteArray stream;
    for (int i = 1; i <= 3; ++i)
        stream += chatChunk(
            R"({"index":0,"delta":{"content":"t"},"finish_reason":null})",
            ",\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":" + QByteArray::number(i) +
                ",\"total_tokens\":" + QByteArray::number(4 + i) + "}");
    stream += chatChunk(R"({"index":0,"delta":{},"finish_reason":"length"})", ",\"usage\":null");
    stream += "data: [DONE]\n\n";
    const auto agg = runWhole(Kind::Chat, stream);
    EXPECT_STATE(*agg, State::Done);
    const QJsonObject usage = parseObject(agg->result()).value(u"usage").toObject();
    QCOMPARE(usage.value(u"completion_tokens").toInt(), 3);
    QCOMPARE(usage.value(u"total_tokens").toInt(), 7);
}

void TstAggregateSse::contentShapes()
{
    // nothing at all: role defaults to assistant, content "", finish_reason null
    {
        const auto agg = runWhole(Kind::Chat, chatChunk("") + "data: [DONE]\n\n");
        EXPECT_STATE(*agg, State::Done);
        const QJsonObject result = parseObject(agg->result());
        QCOMPARE(result.value(u"choices").toArray().size(), 0);
        QCOMPARE(result.value(u"object").toString(), QStringLiteral("chat.completion"));
    }
    {
        const auto agg = runWhole(Kind::Chat, deltaChunk("{}") + "data: [DONE]\n\n");
        EXPECT_STATE(*agg, State::Done);
        const QJsonObject choice =
            parseObject(agg->result()).value(u"choices").toArray().at(0).toObject();
        const QJsonObject message = choice.value(u"message").toObject();
        QCOMPARE(message.value(u"role").toString(), QStringLiteral("assistant"));
        QCOMPARE(message.value(u"content"), QJsonValue(QString()));
        QVERIFY(!message.contains(u"reasoning_content"));
        QVERIFY(!message.contains(u"tool_calls"));
        QVERIFY(choice.value(u"finish_reason").isNull());
    }
    // content next to tool calls is kept; the first role wins; the last finish_reason wins
    {
        const QByteArray stream =
            deltaChunk(R"({"role":"assistant","content":"Let me check."})") +
            deltaChunk(R"({"role":"ignored","tool_calls":[{"index":0,"id":"c1",)"
                       R"("function":{"name":"f","arguments":"{}"}}]})") +
            deltaChunk("{}", "\"length\"") + deltaChunk("{}", "\"tool_calls\"") + deltaChunk("{}") +
            "data: [DONE]\n\n";
        const auto agg = runWhole(Kind::Chat, stream);
        EXPECT_STATE(*agg, State::Done);
        const QJsonObject choice =
            parseObject(agg->result()).value(u"choices").toArray().at(0).toObject();
        const QJsonObject message = choice.value(u"message").toObject();
        QCOMPARE(message.value(u"role").toString(), QStringLiteral("assistant"));
        QCOMPARE(message.value(u"content").toString(), QStringLiteral("Let me check."));
        const QJsonObject call = message.value(u"tool_calls").toArray().at(0).toObject();
        QCOMPARE(call.value(u"type").toString(), QStringLiteral("function")); // defaulted
        QCOMPARE(call.value(u"id").toString(), QStringLiteral("c1"));
        QCOMPARE(choice.value(u"finish_reason").toString(), QStringLiteral("tool_calls"));
    }
    // newer vLLM names the field "reasoning": any string delta field is concatenated
    {
        const QByteArray stream = deltaChunk(R"({"reasoning":"a"})") +
                                  deltaChunk(R"({"reasoning":"b","content":"c"})", "\"stop\"") +
                                  "data: [DONE]\n\n";
        const auto agg = runWhole(Kind::Chat, stream);
        EXPECT_STATE(*agg, State::Done);
        const QJsonObject message = firstMessage(parseObject(agg->result()));
        QCOMPARE(message.value(u"reasoning").toString(), QStringLiteral("ab"));
        QCOMPARE(message.value(u"content").toString(), QStringLiteral("c"));
    }
    // choices arriving out of order are sorted by index
    {
        const QByteArray stream =
            chatChunk(R"({"index":2,"delta":{"content":"two"},"finish_reason":"stop"})") +
            chatChunk(R"({"index":0,"delta":{"content":"zero"},"finish_reason":"stop"})") +
            "data: [DONE]\n\n";
        const auto agg = runWhole(Kind::Chat, stream);
        EXPECT_STATE(*agg, State::Done);
        const QJsonArray choices = parseObject(agg->result()).value(u"choices").toArray();
        QCOMPARE(choices.size(), 2);
        QCOMPARE(choices.at(0).toObject().value(u"index").toInt(), 0);
        QCOMPARE(choices.at(1).toObject().value(u"index").toInt(), 2);
        QCOMPARE(choices.at(1).toObject().value(u"message").toObject().value(u"content"),
                 QJsonValue(QStringLiteral("two")));
    }
}

// Non-conforming servers omit the tool call index: a new id starts a new call.
void TstAggregateSse::toolCallsWithoutIndex()
{
    const QByteArray stream =
        deltaChunk(R"({"tool_calls":[{"id":"a","type":"function","function":{"name":"f"}}]})") +
        deltaChunk(R"({"tool_calls":[{"function":{"arguments":"{\"x\":"}}]})") +
        deltaChunk(R"({"tool_calls":[{"function":{"arguments":"1}"}}]})") +
        deltaChunk(R"({"tool_calls":[{"id":"b","type":"function","function":{"name":"g",)"
                   R"("arguments":"{}"}}]})",
                   "\"tool_calls\"") +
        "data: [DONE]\n\n";
    const auto agg = runWhole(Kind::Chat, stream);
    EXPECT_STATE(*agg, State::Done);
    const QJsonObject message = firstMessage(parseObject(agg->result()));
    QVERIFY(message.value(u"content").isNull());
    const QJsonArray calls = message.value(u"tool_calls").toArray();
    QCOMPARE(calls.size(), 2);
    QCOMPARE(calls.at(0).toObject().value(u"function").toObject(),
             (QJsonObject{{QStringLiteral("name"), QStringLiteral("f")},
                          {QStringLiteral("arguments"), QStringLiteral("{\"x\":1}")}}));
    QCOMPARE(calls.at(1).toObject().value(u"id").toString(), QStringLiteral("b"));
}

void TstAggregateSse::topLevelFieldsMerged()
{
    const QByteArray stream =
        "data: {\"id\":\"a\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
        "\"system_fingerprint\":null,\"prompt_logprobs\":null,"
        "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":null}]}\n\n"
        "data: {\"id\":\"a\",\"object\":\"chat.completion.chunk\",\"created\":2,\"model\":\"m\","
        "\"system_fingerprint\":\"fp_1\",\"x_gllm\":{\"edition\":\"copydesk\"},"
        "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\","
        "\"stop_reason\":\"</s>\",\"matched_stop\":2}]}\n\n"
        "data: {\"id\":\"a\",\"object\":\"chat.completion.chunk\",\"created\":2,\"model\":\"m\","
        "\"system_fingerprint\":null,\"choices\":[{\"index\":0,\"delta\":{},"
        "\"finish_reason\":null,\"stop_reason\":null}]}\n\n"
        "data: [DONE]\n\n";
    const auto agg = runWhole(Kind::Chat, stream);
    EXPECT_STATE(*agg, State::Done);
    const QJsonObject result = parseObject(agg->result());
    QCOMPARE(result.value(u"object").toString(), QStringLiteral("chat.completion"));
    QCOMPARE(result.value(u"created").toInt(), 2);
    QCOMPARE(result.value(u"system_fingerprint").toString(), QStringLiteral("fp_1"));
    QVERIFY(result.contains(u"prompt_logprobs"));
    QVERIFY(result.value(u"prompt_logprobs").isNull());
    QCOMPARE(result.value(u"x_gllm").toObject().value(u"edition").toString(),
             QStringLiteral("copydesk"));
    const QJsonObject choice = result.value(u"choices").toArray().at(0).toObject();
    QCOMPARE(choice.value(u"finish_reason").toString(), QStringLiteral("stop"));
    QCOMPARE(choice.value(u"stop_reason").toString(), QStringLiteral("</s>"));
    QCOMPARE(choice.value(u"matched_stop").toInt(), 2);
    QVERIFY(choice.value(u"logprobs").isNull());
    QVERIFY(!choice.contains(u"delta"));
}

void TstAggregateSse::inBandError_data()
{
    QTest::addColumn<QByteArray>("event");
    QTest::addColumn<QByteArray>("expected");
    const QByteArray vllm = R"({"object":"error","message":"The decoder prompt is too long",)"
                            R"("type":"BadRequestError","param":null,"code":400})";
    QTest::newRow("vLLM {error:{...}}") << "data: {\"error\":" + vllm + "}\n\n"
                                        << "{\"error\":" + vllm + "}";
    const QByteArray openai = R"({"message":"The server had an error","type":"server_error",)"
                              R"("param":null,"code":null})";
    QTest::newRow("OpenAI {error:{...}}") << "data: {\"error\":" + openai + "}\n\n"
                                          << "{\"error\":" + openai + "}";
    QTest::newRow("bare object:error") << "data: " + vllm + "\n\n"
                                       << "{\"error\":" + vllm + "}";
    QTest::newRow("string error") << QByteArray("data: {\"error\":\"engine died\"}\n\n")
                                  << QByteArray(R"({"error":{"message":"engine died"}})");
    QTest::newRow("numeric error")
        << QByteArray("data: {\"error\":500}\n\n")
        << QByteArray(R"({"error":{"message":"upstream error","detail":500}})");
}

void TstAggregateSse::inBandError()
{
    QFETCH(QByteArray, event);
    QFETCH(QByteArray, expected);
    // after some output, and then the connection closes: the error wins, not "no [DONE]"
    const QByteArray stream = deltaChunk(R"({"role":"assistant","content":"partial"})") + event;
    for (const auto &agg : {runWhole(Kind::Chat, stream), runBytewise(Kind::Chat, stream),
                            runWhole(Kind::Completion, stream)}) {
        EXPECT_STATE(*agg, State::UpstreamError);
        QCOMPARE(parseObject(agg->errorJson()), parseObject(expected));
        QVERIFY(agg->result().isEmpty());
    }
    // an event with "error": null is not an error
    const auto ok =
        runWhole(Kind::Chat, deltaChunk(R"({"content":"x"})", "\"stop\"")
                                     .replace("\"created\"", "\"error\":null,\"created\"") +
                                 "data: [DONE]\n\n");
    EXPECT_STATE(*ok, State::Done);
    QVERIFY(!parseObject(ok->result()).contains(u"error"));
}

// llama.cpp's server writes `error: {...}` (not an SSE field) and closes without [DONE].
void TstAggregateSse::llamaCppErrorLine()
{
    const QByteArray err =
        R"({"code":400,"message":"the request exceeds the available context size, try increasing it",)"
        R"("type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096})";
    const QByteArray stream = readFixture(QStringLiteral("llamacpp_chat.sse"));
    const QByteArray body = stream.left(stream.indexOf("\n\n") + 2) + "error: " + err + "\n\n";
    const auto agg = runBytewise(Kind::Chat, body);
    EXPECT_STATE(*agg, State::UpstreamError);
    QCOMPARE(parseObject(agg->errorJson()), parseObject("{\"error\":" + err + "}"));
    // also when the line is the last thing and unterminated
    const auto unterminated = runWhole(Kind::Chat, "error: " + err);
    EXPECT_STATE(*unterminated, State::UpstreamError);
}

void TstAggregateSse::endsBeforeDone_data()
{
    QTest::addColumn<QByteArray>("stream");
    const QByteArray full = readFixture(QStringLiteral("vllm_chat_reasoning.sse"));
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("only comments") << QByteArray(": ping\n\n: ping\n\n");
    QTest::newRow("complete events, no [DONE]") << full.left(full.indexOf("data: [DONE]"));
    QTest::newRow("cut mid-event") << full.left(full.size() / 2);
    QTest::newRow("cut inside [DONE]") << full.left(full.indexOf("data: [DONE]") + 9);
    QTest::newRow("cut inside a UTF-8 sequence") << full.left(full.indexOf("\xF0\x9F\x8E\x89") + 2);
}

void TstAggregateSse::endsBeforeDone()
{
    QFETCH(QByteArray, stream);
    for (const auto &agg : {runWhole(Kind::Chat, stream), runBytewise(Kind::Chat, stream)}) {
        EXPECT_STATE(*agg, State::Malformed);
        QCOMPARE(agg->malformedReason(), QStringLiteral("stream ended before data: [DONE]"));
        QVERIFY(agg->result().isEmpty());
    }
}

// "data: [DONE]" at EOF without its blank line (or newline) still completes the stream.
void TstAggregateSse::doneWithoutTrailingBlankLine()
{
    const QByteArray body = deltaChunk(R"({"content":"x"})", "\"stop\"");
    for (const QByteArray &tail :
         {QByteArray("data: [DONE]"), QByteArray("data: [DONE]\n"), QByteArray("data:[DONE]\r\n"),
          QByteArray("data: [DONE] \n\n")}) {
        const auto agg = runBytewise(Kind::Chat, body + tail);
        EXPECT_STATE(*agg, State::Done);
        QCOMPARE(firstMessage(parseObject(agg->result())).value(u"content").toString(),
                 QStringLiteral("x"));
    }
}

void TstAggregateSse::afterDoneIgnored()
{
    SseAggregator agg(Kind::Chat);
    agg.feed(QByteArray(deltaChunk(R"({"content":"x"})", "\"stop\"") + "data: [DONE]\n\n"));
    QCOMPARE(agg.state(), State::Done);
    const QByteArray result = agg.result();
    agg.feed(QByteArray("data: this is not json\n\n" + deltaChunk(R"({"content":"more"})")));
    agg.finishInput();
    QCOMPARE(agg.state(), State::Done);
    QCOMPARE(agg.result(), result);
}

void TstAggregateSse::garbage_data()
{
    QTest::addColumn<QByteArray>("event");
    QTest::addColumn<QString>("reason");
    QTest::newRow("not JSON") << QByteArray("data: hello world\n\n")
                              << QStringLiteral("event 2: data is not JSON");
    QTest::newRow("truncated JSON")
        << QByteArray("data: {\"choices\":[\n\n") << QStringLiteral("event 2: data is not JSON");
    QTest::newRow("HTML") << QByteArray("data: <html><body>502 Bad Gateway</body></html>\n\n")
                          << QStringLiteral("event 2: data is not JSON");
    QTest::newRow("array") << QByteArray("data: [1,2]\n\n")
                           << QStringLiteral("event 2: data is not a JSON object");
    QTest::newRow("choices not an array") << QByteArray("data: {\"choices\":{}}\n\n")
                                          << QStringLiteral("event 2: \"choices\" is not");
    QTest::newRow("choice not an object")
        << QByteArray("data: {\"choices\":[3]}\n\n") << QStringLiteral("event 2: a choice is not");
    QTest::newRow("bad index") << QByteArray("data: {\"choices\":[{\"index\":-1}]}\n\n")
                               << QStringLiteral("event 2: bad choice index");
    QTest::newRow("fractional index") << QByteArray("data: {\"choices\":[{\"index\":0.5}]}\n\n")
                                      << QStringLiteral("event 2: bad choice index");
    QTest::newRow("delta not an object")
        << QByteArray("data: {\"choices\":[{\"index\":0,\"delta\":\"x\"}]}\n\n")
        << QStringLiteral("event 2: \"delta\" is not");
    QTest::newRow("tool_calls not an array")
        << QByteArray("data: {\"choices\":[{\"delta\":{\"tool_calls\":{}}}]}\n\n")
        << QStringLiteral("event 2: \"tool_calls\" is not");
    QTest::newRow("huge tool index")
        << QByteArray("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1e300}]}}]}\n\n")
        << QStringLiteral("event 2: bad tool call index");
}

void TstAggregateSse::garbage()
{
    QFETCH(QByteArray, event);
    QFETCH(QString, reason);
    const QByteArray stream = deltaChunk(R"({"content":"x"})") + event +
                              deltaChunk(R"({"content":"y"})", "\"stop\"") + "data: [DONE]\n\n";
    for (const auto &agg : {runWhole(Kind::Chat, stream), runBytewise(Kind::Chat, stream)}) {
        EXPECT_STATE(*agg, State::Malformed);
        if (!agg->malformedReason().startsWith(reason))
            QFAIL(qPrintable(agg->malformedReason()));
        QVERIFY(agg->result().isEmpty());
        QVERIFY(agg->errorJson().isEmpty());
    }
}

void TstAggregateSse::outputLimit()
{
    // 10 chunks of 100 bytes of content: 1000 bytes of output
    QByteArray stream;
    for (int i = 0; i < 10; ++i)
        stream += deltaChunk("{\"content\":\"" + QByteArray(100, 'a') + "\"}");
    stream += deltaChunk("{}", "\"stop\"") + "data: [DONE]\n\n";

    const auto big = runWhole(Kind::Chat, stream, 4096);
    EXPECT_STATE(*big, State::Done);
    const auto tight = runWhole(Kind::Chat, stream, 999);
    EXPECT_STATE(*tight, State::Malformed);
    QCOMPARE(tight->malformedReason(), QStringLiteral("reassembled output exceeds 999 bytes"));

    // multi-byte text is counted in UTF-8 bytes: 100 x "日" is 300 bytes
    const QByteArray cjk =
        deltaChunk("{\"content\":\"" + QString(100, QChar(0x65E5)).toUtf8() + "\"}") +
        "data: [DONE]\n\n";
    const auto cjkTight = runWhole(Kind::Chat, cjk, 299);
    EXPECT_STATE(*cjkTight, State::Malformed);

    // tool call arguments and reasoning count too
    QByteArray args;
    for (int i = 0; i < 10; ++i)
        args += deltaChunk(R"({"tool_calls":[{"index":0,"function":{"arguments":")" +
                           QByteArray(100, 'x') + "\"}}]}");
    const auto argsTight = runWhole(Kind::Chat, args + "data: [DONE]\n\n", 900);
    EXPECT_STATE(*argsTight, State::Malformed);
    QByteArray reasoning;
    for (int i = 0; i < 10; ++i)
        reasoning += deltaChunk("{\"reasoning_content\":\"" + QByteArray(100, 'r') + "\"}");
    const auto reasoningTight = runWhole(Kind::Chat, reasoning + "data: [DONE]\n\n", 900);
    EXPECT_STATE(*reasoningTight, State::Malformed);

    // carried-over fields count: a big metadata object on the final chunk
    const QByteArray meta =
        chatChunk("", ",\"x_gllm\":{\"trace\":\"" + QByteArray(2000, 't') + "\"}");
    const auto metaTight = runWhole(Kind::Chat, meta + "data: [DONE]\n\n", 1000);
    EXPECT_STATE(*metaTight, State::Malformed);
    const auto metaFits = runWhole(Kind::Chat, meta + "data: [DONE]\n\n", 3000);
    EXPECT_STATE(*metaFits, State::Done);

    // many empty choices are bounded as well
    QByteArray choices;
    for (int i = 0; i < 1000; ++i)
        choices += chatChunk("{\"index\":" + QByteArray::number(i) + ",\"delta\":{}}");
    const auto choicesTight = runWhole(Kind::Chat, choices + "data: [DONE]\n\n", 10000);
    EXPECT_STATE(*choicesTight, State::Malformed);
}

// One event (or a line that never ends) may not grow past the limit plus the envelope slack.
void TstAggregateSse::eventLimit()
{
    SseAggregator agg(Kind::Chat, 1000);
    const QByteArray chunk(64 * 1024, 'a');
    agg.feed("data: {\"x\":\"");
    int fed = 0;
    while (agg.state() == State::Streaming && fed < 100) {
        agg.feed(chunk);
        ++fed;
    }
    EXPECT_STATE(agg, State::Malformed);
    QVERIFY(agg.malformedReason().startsWith(QStringLiteral("an SSE event exceeds")));
    QVERIFY(fed <= 17); // 1 MiB slack + 1000 bytes, in 64 KiB steps

    // many data lines of one event count together; a comment line without end does too
    SseAggregator lines(Kind::Chat, 1000);
    for (int i = 0; i < 100 && lines.state() == State::Streaming; ++i)
        lines.feed(QByteArray("data: " + chunk + "\n"));
    EXPECT_STATE(lines, State::Malformed);
    SseAggregator comment(Kind::Chat, 1000);
    for (int i = 0; i < 100 && comment.state() == State::Streaming; ++i)
        comment.feed(QByteArray(": " + chunk));
    EXPECT_STATE(comment, State::Malformed);
}

void TstAggregateSse::accessorsOutsideTheirState()
{
    SseAggregator agg(Kind::Completion);
    QCOMPARE(agg.state(), State::Streaming);
    QVERIFY(agg.result().isEmpty());
    QVERIFY(agg.errorJson().isEmpty());
    QVERIFY(agg.malformedReason().isEmpty());
    agg.feed("data: {\"choices\":[{\"index\":0,\"text\":\"a\"}]}\n\n");
    QCOMPARE(agg.state(), State::Streaming);
    QVERIFY(agg.result().isEmpty());
    agg.finishInput();
    QCOMPARE(agg.state(), State::Malformed);
    agg.finishInput(); // idempotent
    agg.feed("data: [DONE]\n\n");
    QCOMPARE(agg.state(), State::Malformed);
}

QTEST_APPLESS_MAIN(TstAggregateSse)
#include "tst_aggregate_sse.moc"
