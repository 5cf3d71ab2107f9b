// SPDX-License-Identifier: GPL-3.0-or-later
// The per-route stream timers through the real slp and the mock upstream: stream_idle_timeout
// cuts a stalled stream (broken, never a clean end; a 502 on an aggregate route) within the
// timeout plus 0.5 s and spares a slow but steady one; sse_keepalive fills a silent event
// stream with ": keep-alive" comments, only at event boundaries, and nothing else changes:
// the client's bytes are the mock's with only such comments added. JSON answers and routes
// without the keys are relayed byte for byte.
#include "prometheustext.h"
#include "testsupport.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace slp::test;

namespace {

const QByteArray kComment = ": keep-alive\n\n";

QByteArray chatBody(const QString &model, bool stream)
{
    return QStringLiteral(R"({"model":"%1",%2"messages":[{"role":"user","content":"hi"}]})")
        .arg(model, stream ? QStringLiteral("\"stream\":true,") : QString())
        .toUtf8();
}

// The chunks of a chunked response's raw bytes (head skipped), in order.
QList<QByteArray> chunksOf(const QByteArray &raw)
{
    QList<QByteArray> out;
    qsizetype at = raw.indexOf("\r\n\r\n");
    if (at < 0)
        return out;
    at += 4;
    while (at < raw.size()) {
        const qsizetype eol = raw.indexOf("\r\n", at);
        bool ok = false;
        const qsizetype size = eol < 0 ? 0 : raw.mid(at, eol - at).toLongLong(&ok, 16);
        if (!ok || size == 0 || eol + 2 + size + 2 > raw.size())
            break;
        out.append(raw.mid(eol + 2, size));
        at = eol + 2 + size + 2;
    }
    return out;
}

bool endsAtBoundary(const QByteArray &bytes)
{
    return bytes.isEmpty() || bytes.endsWith("\n\n") || bytes.endsWith("\r\n\r\n") ||
           bytes.endsWith("\r\r");
}

// Where the comments are in a de-chunked body: each offset, and whether every one starts right
// after an event boundary of the upstream's bytes (or at the start).
struct Comments
{
    QList<qsizetype> offsets; // in the client's de-chunked body
    QList<qint64> arrivalMs;  // of each comment's chunk, when known
    bool allAtBoundaries = true;
    QByteArray upstreamBytes; // the body with the comments taken out
};

Comments findComments(const HttpResult &r)
{
    Comments c;
    const QList<QByteArray> chunks = chunksOf(r.raw);
    qsizetype offset = 0;
    for (qsizetype i = 0; i < chunks.size(); ++i) {
        const QByteArray &chunk = chunks[i];
        // slp writes each comment as a chunk of its own; one inside a relayed chunk would be
        // upstream bytes, and is caught by the byte comparison with the mock's stream.
        if (chunk == kComment) {
            c.offsets << offset;
            c.arrivalMs << r.chunkArrivalMs.value(i, -1);
            c.allAtBoundaries = c.allAtBoundaries && endsAtBoundary(c.upstreamBytes);
        } else {
            c.upstreamBytes += chunk;
        }
        offset += chunk.size();
    }
    return c;
}

} // namespace

class TestForwardStreamTimers : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void countersExistForRoutesWithTheKeys();
    void stallCutsStreamWithinTimeout();
    void stallOnAggregateIs502();
    void steadyEventsNeverCut();
    void keepaliveFillsSilence();
    void keepaliveNeverInsideEvent();
    void jsonUntouched_data();
    void jsonUntouched();
    void routeWithoutKeysByteIdentical();

private:
    QJsonObject lastRecord();
    double sample(const QString &name, const QString &route);
    QString slpLog() { return m_slp.stderrText().right(4000); }

    MockUpstream m_mock;
    SlpDaemon m_slp;
};

void TestForwardStreamTimers::initTestCase()
{
    QVERIFY2(!MockUpstream::binary().isEmpty(), "set SLP_MOCK_BIN");
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY2(m_mock.start(), qPrintable(m_mock.errorString()));
    // Pinned models: discovery never probes the mock, so its records are the tests' own.
    const QString config = QStringLiteral("log_requests: true\n"
                                          "shutdown_grace: 1s\n"
                                          "backends:\n"
                                          "  - name: plain\n"
                                          "    url: %1\n"
                                          "    model: alpha\n"
                                          "  - name: stall\n"
                                          "    url: %1\n"
                                          "    model: alpha\n"
                                          "    stream_idle_timeout: 1s\n"
                                          "  - name: keep\n"
                                          "    url: %1\n"
                                          "    model: alpha\n"
                                          "    sse_keepalive: 400ms\n"
                                          "  - name: agg-stall\n"
                                          "    url: %1\n"
                                          "    model: alpha\n"
                                          "    aggregate: true\n"
                                          "    stream_idle_timeout: 1s\n")
                               .arg(m_mock.url());
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
}

void TestForwardStreamTimers::cleanupTestCase()
{
    m_slp.stop();
    m_mock.stop();
}

void TestForwardStreamTimers::init()
{
    QVERIFY(m_mock.reset());
}

QJsonObject TestForwardStreamTimers::lastRecord()
{
    const QJsonArray records = m_mock.waitForRequests(1, 5000);
    return records.isEmpty() ? QJsonObject() : records.last().toObject();
}

double TestForwardStreamTimers::sample(const QString &name, const QString &route)
{
    const HttpResult r = httpRequest("GET", m_slp.url() + "/metrics");
    if (r.status != 200)
        return -2;
    const slp::PromParseResult parsed = slp::parsePromText(r.body);
    return slp::findPromSample(parsed.samples, name, {{QStringLiteral("model_id"), route}})
        .value_or(-1);
}

void TestForwardStreamTimers::countersExistForRoutesWithTheKeys()
{
    const QString stalls = QStringLiteral("slp_stream_idle_timeouts_total");
    const QString keepalives = QStringLiteral("slp_sse_keepalives_total");
    QCOMPARE(sample(stalls, QStringLiteral("stall")), 0.0);
    QCOMPARE(sample(stalls, QStringLiteral("agg-stall")), 0.0);
    QCOMPARE(sample(keepalives, QStringLiteral("keep")), 0.0);
    // Routes that do not set a key carry no series of it.
    QCOMPARE(sample(stalls, QStringLiteral("plain")), -1.0);
    QCOMPARE(sample(stalls, QStringLiteral("keep")), -1.0);
    QCOMPARE(sample(keepalives, QStringLiteral("plain")), -1.0);
    QCOMPARE(sample(keepalives, QStringLiteral("stall")), -1.0);
}

void TestForwardStreamTimers::stallCutsStreamWithinTimeout()
{
    // role, two reasoning events, then the upstream hangs for 8 s: cut about 1 s after the
    // last byte, with no last chunk, and the upstream's connection closed.
    const double before = sample(QStringLiteral("slp_stream_idle_timeouts_total"), "stall");
    const ChildProcess::Mark mark = m_slp.mark();
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(buildRequest("POST", m_slp.url() + "/v1/chat/completions",
                                   chatBody("stall", true),
                                   {{"X-Mock-Pause-After", "3"}, {"X-Mock-Pause-Ms", "8000"}})));
    const HttpResult r = conn.readResponse(6000);
    QVERIFY2(r.status == 200, qPrintable(r.error + "\n" + slpLog()));
    QVERIFY(!r.chunkArrivalMs.isEmpty());
    const qint64 cutMs = r.elapsedMs - r.chunkArrivalMs.last();
    qInfo() << "stalled stream cut" << cutMs << "ms after its last byte (stream_idle_timeout 1s;"
            << "last byte at" << r.chunkArrivalMs.last() << "ms, close seen at" << r.elapsedMs
            << "ms)";
    QVERIFY2(r.peerClosed, qPrintable(r.error));
    QVERIFY(!r.complete);
    QVERIFY(!r.raw.endsWith("0\r\n\r\n"));
    QVERIFY(r.body.contains(" about it")); // the events before the stall were relayed
    QVERIFY2(cutMs >= 950 && cutMs < 1500, QByteArray::number(cutMs));

    const QRegularExpression line(
        QStringLiteral("^\\[slpq[0-9a-f]{24}\\] stream idle for 1s after (\\d+) bytes: POST "
                       "\"%1/v1/chat/completions\" upstream=gdqz[0-9a-f]{24} model=\"stall\"$")
            .arg(QRegularExpression::escape(m_mock.url())));
    const QRegularExpressionMatch m = m_slp.waitForLog(line, 3000, mark);
    QVERIFY2(m.hasMatch(), qPrintable(slpLog()));
    qInfo() << "slp logged:" << m.captured(0);
    QCOMPARE(m.captured(1).toLongLong(), qint64(r.body.size()));

    // The upstream saw its connection closed, long before its 8 s pause ended.
    const QJsonObject rec = lastRecord();
    QTRY_VERIFY_WITH_TIMEOUT(!m_mock.requests(rec.value("seq").toInteger() - 1)
                                  .at(0)
                                  .toObject()
                                  .value("peer_closed_ms")
                                  .isNull(),
                             3000);
    const qint64 peerClosedMs = m_mock.requests(rec.value("seq").toInteger() - 1)
                                    .at(0)
                                    .toObject()
                                    .value("peer_closed_ms")
                                    .toInteger();
    qInfo() << "upstream connection closed" << peerClosedMs << "ms after the request arrived";
    QVERIFY2(peerClosedMs < 3000, QByteArray::number(peerClosedMs));
    QCOMPARE(sample(QStringLiteral("slp_stream_idle_timeouts_total"), "stall"), before + 1);
}

void TestForwardStreamTimers::stallOnAggregateIs502()
{
    const double before = sample(QStringLiteral("slp_stream_idle_timeouts_total"), "agg-stall");
    QElapsedTimer clock;
    clock.start();
    const HttpResult r =
        httpRequest("POST", m_slp.url() + "/v1/chat/completions", chatBody("agg-stall", false),
                    {{"Content-Type", "application/json"},
                     {"X-Mock-Pause-After", "3"},
                     {"X-Mock-Pause-Ms", "8000"}},
                    6000);
    const qint64 answeredMs = clock.elapsed();
    qInfo() << "stalled aggregate answered" << r.status << "after" << answeredMs << "ms";
    QVERIFY2(r.ok(), qPrintable(r.error + "\n" + slpLog()));
    QCOMPARE(r.status, 502);
    const QJsonObject error = QJsonDocument::fromJson(r.body).object().value("error").toObject();
    const QRegularExpression message(
        QStringLiteral("^upstream stream stalled \\(request id: slpq[0-9a-f]{24}\\)$"));
    QVERIFY2(message.match(error.value("message").toString()).hasMatch(), r.body.constData());
    QCOMPARE(error.value("type").toString(), QStringLiteral("upstream_error"));
    QCOMPARE(error.value("code").toString(), QStringLiteral("upstream_stalled"));
    QVERIFY2(answeredMs >= 950 && answeredMs < 1500, QByteArray::number(answeredMs));
    QCOMPARE(sample(QStringLiteral("slp_stream_idle_timeouts_total"), "agg-stall"), before + 1);
}

void TestForwardStreamTimers::steadyEventsNeverCut()
{
    // Seven events 600 ms apart (3.6 s in all) under a 1 s idle timeout: whole, clean end.
    const double before = sample(QStringLiteral("slp_stream_idle_timeouts_total"), "stall");
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(buildRequest("POST", m_slp.url() + "/v1/chat/completions",
                                   chatBody("stall", true),
                                   {{"X-Mock-Event-Interval-Ms", "600"},
                                    {"X-Mock-Reasoning-Events", "0"},
                                    {"X-Mock-Events", "4"}})));
    const HttpResult r = conn.readResponse(15000);
    QVERIFY2(r.ok(), qPrintable(r.error + "\n" + slpLog()));
    qInfo() << "events every 600 ms arrived at" << r.chunkArrivalMs << "ms";
    QVERIFY(r.raw.endsWith("\r\n0\r\n\r\n"));
    QCOMPARE(sseData(r.body).size(), 7);
    QVERIFY(r.chunkArrivalMs.last() >= 3000);
    QCOMPARE(r.body, MockUpstream::responseBody(lastRecord()));
    QCOMPARE(sample(QStringLiteral("slp_stream_idle_timeouts_total"), "stall"), before);
}

void TestForwardStreamTimers::keepaliveFillsSilence()
{
    // Three events, 1.6 s of silence, the rest: a 400 ms keep-alive writes 2 to 5 comments,
    // each right after an event's blank line.
    const double before = sample(QStringLiteral("slp_sse_keepalives_total"), "keep");
    const ChildProcess::Mark mark = m_slp.mark();
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(
        conn.send(buildRequest("POST", m_slp.url() + "/v1/chat/completions", chatBody("keep", true),
                               {{"X-Mock-Pause-After", "3"}, {"X-Mock-Pause-Ms", "1600"}})));
    const HttpResult r = conn.readResponse(10000);
    QVERIFY2(r.ok(), qPrintable(r.error + "\n" + slpLog()));
    QCOMPARE(r.header("content-type"), QByteArray("text/event-stream; charset=utf-8"));
    const Comments c = findComments(r);
    qInfo() << c.offsets.size() << "comments at body offsets" << c.offsets << "arriving at"
            << c.arrivalMs << "ms; chunk arrivals" << r.chunkArrivalMs;
    QVERIFY2(c.offsets.size() >= 2 && c.offsets.size() <= 5, QByteArray::number(c.offsets.size()));
    QVERIFY2(c.allAtBoundaries, r.body.constData());
    QCOMPARE(qsizetype(r.body.count(kComment)), c.offsets.size()); // all of them own chunks
    // Take the comments out: what is left is exactly what the mock sent.
    const QByteArray upstream = MockUpstream::responseBody(lastRecord());
    QVERIFY(!upstream.isEmpty());
    QCOMPARE(c.upstreamBytes, upstream);
    QCOMPARE(r.body.size(), upstream.size() + c.offsets.size() * kComment.size());
    // The openai client still reads the same events.
    QCOMPARE(sseData(r.body), sseData(upstream));
    QCOMPARE(sample(QStringLiteral("slp_sse_keepalives_total"), "keep"),
             before + double(c.offsets.size()));
    // The request's "B down" is the upstream's body: comments are counted apart.
    const QRegularExpression line(
        QStringLiteral("^\\[slpq[0-9a-f]{24}\\] POST /v1/chat/completions: keep as \"alpha\" -> "
                       "\\S+ 200 in \\S+ \\(\\d+ B up, (\\d+) B down\\)"));
    const QRegularExpressionMatch m = m_slp.waitForLog(line, 3000, mark);
    QVERIFY2(m.hasMatch(), qPrintable(slpLog()));
    QCOMPARE(m.captured(1).toLongLong(), qint64(upstream.size()));
}

void TestForwardStreamTimers::keepaliveNeverInsideEvent()
{
    // The same 1.6 s silence, but halfway through the fourth event: no comment may be
    // written until its blank line, and the rest follows at once, so there is none at all.
    const double before = sample(QStringLiteral("slp_sse_keepalives_total"), "keep");
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(
        conn.send(buildRequest("POST", m_slp.url() + "/v1/chat/completions", chatBody("keep", true),
                               {{"X-Mock-Pause-After", "3"},
                                {"X-Mock-Pause-Ms", "1600"},
                                {"X-Mock-Pause-Mid-Event", "1"}})));
    const HttpResult r = conn.readResponse(10000);
    QVERIFY2(r.ok(), qPrintable(r.error + "\n" + slpLog()));
    const Comments c = findComments(r);
    qInfo() << c.offsets.size() << "comments during a 1.6 s pause inside an event; chunk arrivals"
            << r.chunkArrivalMs;
    QVERIFY(r.chunkArrivalMs.last() >= 1400); // the pause did happen
    QCOMPARE(c.offsets.size(), 0);
    QCOMPARE(r.body, MockUpstream::responseBody(lastRecord()));
    QCOMPARE(sample(QStringLiteral("slp_sse_keepalives_total"), "keep"), before);
}

void TestForwardStreamTimers::jsonUntouched_data()
{
    QTest::addColumn<HeaderList>("knobs");
    QTest::newRow("content-length") << HeaderList{{"X-Mock-Body-Pause-Ms", "1200"}};
    QTest::newRow("close-delimited (relayed chunked)")
        << HeaderList{{"X-Mock-Body-Pause-Ms", "1200"}, {"X-Mock-Close-Delimited", "1"}};
}

void TestForwardStreamTimers::jsonUntouched()
{
    // A JSON answer silent for 1.2 s halfway through its body, on the keep-alive route: no
    // comment, the exact bytes.
    QFETCH(HeaderList, knobs);
    const double before = sample(QStringLiteral("slp_sse_keepalives_total"), "keep");
    HeaderList headers{{"Content-Type", "application/json"}};
    headers << knobs;
    const HttpResult r = httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                                     chatBody("keep", false), headers, 10000);
    QVERIFY2(r.ok(), qPrintable(r.error + "\n" + slpLog()));
    QCOMPARE(r.status, 200);
    QVERIFY(r.header("content-type").startsWith("application/json"));
    qInfo() << "JSON body pieces arrived at" << r.chunkArrivalMs << "ms";
    QVERIFY(r.elapsedMs >= 1000);
    QVERIFY(!r.body.contains("keep-alive"));
    QCOMPARE(r.body, MockUpstream::responseBody(lastRecord()));
    QCOMPARE(sample(QStringLiteral("slp_sse_keepalives_total"), "keep"), before);
}

void TestForwardStreamTimers::routeWithoutKeysByteIdentical()
{
    // A 1.6 s silent stream and a paused JSON answer on a route without the keys: the
    // client's body is the mock's, byte for byte; nothing was added or cut.
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(buildRequest("POST", m_slp.url() + "/v1/chat/completions",
                                   chatBody("plain", true),
                                   {{"X-Mock-Pause-After", "3"}, {"X-Mock-Pause-Ms", "1600"}})));
    const HttpResult r = conn.readResponse(10000);
    QVERIFY2(r.ok(), qPrintable(r.error + "\n" + slpLog()));
    QVERIFY(r.chunkArrivalMs.last() >= 1400);
    QVERIFY(!r.body.contains("keep-alive"));
    QCOMPARE(r.body, MockUpstream::responseBody(lastRecord()));

    QVERIFY(m_mock.reset());
    const HttpResult json = httpRequest(
        "POST", m_slp.url() + "/v1/chat/completions", chatBody("plain", false),
        {{"Content-Type", "application/json"}, {"X-Mock-Body-Pause-Ms", "1200"}}, 10000);
    QVERIFY2(json.ok(), qPrintable(json.error));
    QCOMPARE(json.body, MockUpstream::responseBody(lastRecord()));
}

QTEST_GUILESS_MAIN(TestForwardStreamTimers)
#include "tst_forward_stream_timers.moc"
