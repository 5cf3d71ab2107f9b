// SPDX-License-Identifier: GPL-3.0-or-later
// ForwardExchange against a fake UpstreamTransport (the seam): the test plays the upstream,
// call by call, and reads what a real client socket on 127.0.0.1 receives through a real
// ClientConnection and ResponseWriter. Covers the single re-dial, the time-to-first-byte
// timeout, the client leaving, aggregation and backpressure, and the per-route stream timers
// (stream_idle_timeout, sse_keepalive) with the SSE boundary tracker they rely on.

#include "connectionpair.h"
#include "forward/forwardexchange.h"
#include "forward/streamwatch.h"
#include "http/clientconnection.h"
#include "http/errorbody.h"
#include "http/responsewriter.h"
#include "observe/metrics.h"
#include "upstream/upstreamtransport.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

#include <memory>

using slp::ClientConnection;
using slp::ConnectionLimits;
using slp::ForwardExchange;
using slp::ForwardPlan;
using slp::HeaderList;
using slp::MetricsRegistry;
using slp::ResponseContext;
using slp::ResponseWriter;
using slp::SseBoundary;
using slp::StreamWatch;
using slp::UpstreamCall;
using slp::UpstreamHead;
using slp::UpstreamRequest;
using slp::UpstreamTransport;

namespace {

constexpr int kWaitMs = 5000; // generous: the CI machine is a busy 2-core box

// What outlives a FakeCall (the exchange owns and deletes the call).
struct CallLog
{
    int reads = 0;
    bool aborted = false;
    bool deleted = false;
};

// One upstream request, driven by the test.
class FakeCall : public UpstreamCall
{
    Q_OBJECT
public:
    explicit FakeCall(std::shared_ptr<CallLog> log) : m_log(std::move(log)) {}
    ~FakeCall() override { m_log->deleted = true; }

    qint64 bytesAvailable() const override { return m_buffer.size() + m_generate; }
    bool isRunning() const override { return m_running; }
    QByteArray read(qint64 maxBytes) override
    {
        ++m_log->reads;
        QByteArray out = m_buffer.left(maxBytes);
        m_buffer.remove(0, out.size());
        const qint64 more = std::min<qint64>(maxBytes - out.size(), m_generate);
        if (more > 0) {
            out += QByteArray(qsizetype(more), 'x');
            m_generate -= more;
        }
        return out;
    }
    void abort() override
    {
        if (!m_running) {
            return;
        }
        m_log->aborted = true;
        m_running = false;
        m_failure = Failure::Aborted;
        m_errorDetail = QStringLiteral("aborted");
        Q_EMIT finished(); // synchronously, as the seam allows
    }

    // The test's side.
    void sendHead(int status, const HeaderList &headers, qint64 contentLength = -1,
                  const QByteArray &reason = {})
    {
        UpstreamHead head;
        head.status = status;
        head.reason = reason;
        head.headers = headers;
        head.contentLength = contentLength;
        m_headArrived = true;
        Q_EMIT headReceived(head);
    }
    void push(const QByteArray &bytes)
    {
        m_buffer += bytes;
        Q_EMIT readyRead();
    }
    // `n` bytes of 'x' produced on demand, for backpressure.
    void generate(qint64 n) { m_generate += n; }
    qint64 generatedLeft() const { return m_generate; }
    void poke() { Q_EMIT readyRead(); }
    void succeed()
    {
        m_running = false;
        Q_EMIT finished();
    }
    void fail(Failure failure, const QString &detail)
    {
        m_running = false;
        m_failure = failure;
        m_errorDetail = detail;
        Q_EMIT finished();
    }

private:
    std::shared_ptr<CallLog> m_log;
    QByteArray m_buffer;
    qint64 m_generate = 0;
    bool m_running = true;
};

class FakeTransport : public UpstreamTransport
{
public:
    std::unique_ptr<UpstreamCall> start(const UpstreamRequest &request) override
    {
        requests.append(request);
        logs.append(std::make_shared<CallLog>());
        auto call = std::make_unique<FakeCall>(logs.last());
        calls.append(call.get());
        return call;
    }

    int started() const { return int(calls.size()); }
    FakeCall *call(int i) const { return calls.value(i); }
    CallLog &log(int i) const { return *logs.at(i); }

    QList<UpstreamRequest> requests;
    QList<QPointer<FakeCall>> calls;
    QList<std::shared_ptr<CallLog>> logs;
};

bool waitFor(const std::function<bool()> &condition, int ms = kWaitMs)
{
    QDeadlineTimer deadline(ms);
    while (!condition()) {
        if (deadline.hasExpired()) {
            return false;
        }
        QTest::qWait(5);
    }
    return true;
}

using Pair = slp::test::ConnectionPair;

ForwardPlan plan(int maxAttempts, std::chrono::milliseconds timeout, const QString &timeoutText)
{
    ForwardPlan p;
    p.requestId = "slpqtest0001";
    p.modelId = QStringLiteral("m");
    p.origin = QStringLiteral("http://127.0.0.1:9");
    p.method = "POST";
    p.target = "/v1/chat/completions";
    p.timeout = timeout;
    p.timeoutText = timeoutText;
    p.maxAttempts = maxAttempts;
    p.request.method = "POST";
    p.request.origin = p.origin;
    p.request.target = p.target;
    p.request.body = "{\"model\":\"m\"}";
    return p;
}

QByteArray errorResponse(const QString &message, const QByteArray &code)
{
    const QByteArray body = slp::openAiErrorBody(502, message, code);
    return "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\n"
           "X-Request-Id: slpqtest0001\r\nContent-Length: " +
           QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

// The exchange for one request, as the router builds it: a Qt child of its writer.
struct Exchange
{
    Exchange(Pair &pair, FakeTransport &transport, ForwardPlan p,
             const ResponseContext &context = {})
    {
        slp::declareSlpMetrics(metrics);
        writer = pair.connection()->openWriter(context);
        exchange = new ForwardExchange(std::move(p), transport, metrics, writer); // child of writer
        exchange->start();
    }
    // An exchange still running when the test ends goes first: it reports to `metrics`.
    ~Exchange() { delete exchange.data(); }
    MetricsRegistry metrics;
    QPointer<ResponseWriter> writer;
    QPointer<ForwardExchange> exchange;
};

const HeaderList kJsonHead{{"Content-Type", "application/json"}};
const HeaderList kSseHead{{"Content-Type", "text/event-stream; charset=utf-8"}};
const QByteArray kComment = ": keep-alive\n\n";

// The chunks' data of a chunked response (head skipped), in order; `ended` says whether the
// last chunk (0) was there.
QList<QByteArray> chunksOf(const QByteArray &raw, bool *ended = nullptr)
{
    QList<QByteArray> out;
    qsizetype at = raw.indexOf("\r\n\r\n");
    if (ended) {
        *ended = false;
    }
    if (at < 0) {
        return out;
    }
    at += 4;
    while (at < raw.size()) {
        const qsizetype eol = raw.indexOf("\r\n", at);
        if (eol < 0) {
            break;
        }
        bool ok = false;
        const qsizetype size = raw.mid(at, eol - at).toLongLong(&ok, 16);
        if (!ok || eol + 2 + size + 2 > raw.size()) {
            break;
        }
        if (size == 0) {
            if (ended) {
                *ended = true;
            }
            break;
        }
        out.append(raw.mid(eol + 2, size));
        at = eol + 2 + size + 2;
    }
    return out;
}

// Checks that every keep-alive comment chunk follows an event boundary of the upstream bytes
// before it (or nothing); returns the number of comments, -1 when one is misplaced.
int checkComments(const QList<QByteArray> &chunks)
{
    int comments = 0;
    SseBoundary boundary;
    for (const QByteArray &chunk : chunks) {
        if (chunk == kComment) {
            if (!boundary.atBoundary()) {
                return -1;
            }
            ++comments;
            continue;
        }
        boundary.feed(chunk);
    }
    return comments;
}

QByteArray withoutComments(const QList<QByteArray> &chunks)
{
    QByteArray out;
    for (const QByteArray &chunk : chunks) {
        out += chunk == kComment ? QByteArray() : chunk;
    }
    return out;
}

ForwardPlan watchedPlan(std::chrono::milliseconds idle, std::chrono::milliseconds keepalive)
{
    ForwardPlan p = plan(1, std::chrono::seconds(5), QStringLiteral("5s"));
    p.streamIdleTimeout = idle;
    p.streamIdleTimeoutText = QStringLiteral("%1ms").arg(idle.count());
    p.sseKeepalive = keepalive;
    return p;
}

double modelCounter(const MetricsRegistry &metrics, const QString &name)
{
    return metrics.value(name, {{QStringLiteral("model_id"), QStringLiteral("m")}});
}

} // namespace

Q_DECLARE_METATYPE(UpstreamCall::Failure)

class TestForwardExchange : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void retriesOnceOnConnectionFailure_data()
    {
        QTest::addColumn<UpstreamCall::Failure>("failure");
        QTest::newRow("refused") << UpstreamCall::Failure::Refused;
        QTest::newRow("closed before a head") << UpstreamCall::Failure::Closed;
        QTest::newRow("name lookup") << UpstreamCall::Failure::NameLookup;
    }
    void retriesOnceOnConnectionFailure()
    {
        QFETCH(UpstreamCall::Failure, failure);
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport, plan(2, std::chrono::seconds(5), QStringLiteral("5s")));
        QCOMPARE(transport.started(), 1);
        transport.call(0)->fail(failure, QStringLiteral("connection refused"));
        QCOMPARE(transport.started(), 2); // re-dialled at once
        QCOMPARE(transport.requests.at(1).body, transport.requests.at(0).body);
        QCOMPARE(transport.requests.at(1).target, QByteArray("/v1/chat/completions"));
        QTRY_VERIFY_WITH_TIMEOUT(transport.log(0).deleted, kWaitMs); // the spent call is freed

        FakeCall *second = transport.call(1);
        second->sendHead(200, kJsonHead + HeaderList{{"Content-Length", "2"}}, 2);
        second->push("ok");
        second->succeed();
        QVERIFY(pair.receiveResponse());
        QCOMPARE(pair.received(),
                 QByteArray("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                            "X-Request-Id: slpqtest0001\r\nContent-Length: 2\r\n\r\nok"));
        QCOMPARE(transport.started(), 2);
        QCOMPARE(ex.metrics.value(slp::metric::upstreamAttempts,
                                  {{QStringLiteral("model_id"), QStringLiteral("m")},
                                   {QStringLiteral("reason"), QStringLiteral("connect")}}),
                 1.0);
        QTest::qWait(100);
        QVERIFY(!pair.closed());
    }

    void noRetryWithOneAttempt()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport, plan(1, std::chrono::seconds(5), QStringLiteral("5s")));
        transport.call(0)->fail(UpstreamCall::Failure::Refused,
                                QStringLiteral("connection refused"));
        QVERIFY(pair.receiveResponse());
        QCOMPARE(pair.received(),
                 errorResponse(QStringLiteral("upstream request failed (request id: slpqtest0001)"),
                               "upstream_failed"));
        QCOMPARE(transport.started(), 1);
    }

    void onlyOneRetry()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport, plan(2, std::chrono::seconds(5), QStringLiteral("5s")));
        transport.call(0)->fail(UpstreamCall::Failure::Refused, QStringLiteral("refused"));
        QCOMPARE(transport.started(), 2);
        transport.call(1)->fail(UpstreamCall::Failure::Refused, QStringLiteral("refused"));
        QVERIFY(pair.receiveResponse());
        QCOMPARE(pair.received(),
                 errorResponse(QStringLiteral("upstream request failed (request id: slpqtest0001)"),
                               "upstream_failed"));
        QCOMPARE(transport.started(), 2);
    }

    void noRetryOnProtocolError()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport, plan(2, std::chrono::seconds(5), QStringLiteral("5s")));
        transport.call(0)->fail(UpstreamCall::Failure::Protocol,
                                QStringLiteral("malformed response head"));
        QVERIFY(pair.receiveResponse());
        QCOMPARE(transport.started(), 1); // the request may have reached the model
        QVERIFY(pair.received().startsWith("HTTP/1.1 502 Bad Gateway\r\n"));
    }

    void timeoutAnswers502AndNeverRetries()
    {
        Pair pair;
        FakeTransport transport;
        QElapsedTimer clock;
        clock.start();
        Exchange ex(pair, transport, plan(2, std::chrono::seconds(1), QStringLiteral("1s")));
        QVERIFY(pair.receiveResponse());
        const qint64 elapsed = clock.elapsed();
        QVERIFY2(elapsed >= 990, qPrintable(QString::number(elapsed)));
        QVERIFY2(elapsed < 4000, qPrintable(QString::number(elapsed)));
        QCOMPARE(
            pair.received(),
            errorResponse(
                QStringLiteral("upstream request timed out after 1s (request id: slpqtest0001)"),
                "upstream_timeout"));
        QVERIFY(transport.log(0).aborted); // the upstream request is stopped
        QTest::qWait(200);
        QCOMPARE(transport.started(), 1); // it may still be generating: never re-sent
        QCOMPARE(ex.metrics.value(slp::metric::upstreamAttempts,
                                  {{QStringLiteral("model_id"), QStringLiteral("m")},
                                   {QStringLiteral("reason"), QStringLiteral("timed out")}}),
                 1.0);
    }

    void timeoutIsTimeToFirstByteOnly()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport,
                    plan(1, std::chrono::milliseconds(200), QStringLiteral("200ms")));
        FakeCall *call = transport.call(0);
        call->sendHead(200, {{"Content-Type", "text/event-stream"}});
        call->push("data: 1\n\n");
        QTest::qWait(500); // well past the timeout, with the head in
        QVERIFY(!transport.log(0).aborted);
        call->push("data: 2\n\n");
        call->succeed();
        const QByteArray expected = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                    "X-Request-Id: slpqtest0001\r\n"
                                    "Transfer-Encoding: chunked\r\n\r\n"
                                    "9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n0\r\n\r\n";
        QVERIFY(pair.receive(expected.size()));
        QCOMPARE(pair.received(), expected);
    }

    void noRetryAfterHead()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport, plan(2, std::chrono::seconds(5), QStringLiteral("5s")));
        FakeCall *call = transport.call(0);
        call->sendHead(200, kJsonHead, 10);
        call->push("hello");
        call->fail(UpstreamCall::Failure::Closed, QStringLiteral("connection closed mid-body"));
        QVERIFY(pair.waitClosed());
        pair.setReading(true);
        // Cut off, never completed and never re-sent.
        QCOMPARE(pair.received(),
                 QByteArray("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                            "X-Request-Id: slpqtest0001\r\nContent-Length: 10\r\n\r\nhello"));
        QCOMPARE(transport.started(), 1);
    }

    void retriedAttemptHasItsOwnTimeout()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport,
                    plan(2, std::chrono::milliseconds(250), QStringLiteral("250ms")));
        QTest::qWait(100);
        transport.call(0)->fail(UpstreamCall::Failure::Refused, QStringLiteral("refused"));
        QCOMPARE(transport.started(), 2);
        QElapsedTimer clock;
        clock.start();
        QVERIFY(pair.receiveResponse());
        const qint64 elapsed = clock.elapsed();
        QVERIFY2(elapsed >= 240, qPrintable(QString::number(elapsed))); // restarted, not left over
        QCOMPARE(pair.received(),
                 errorResponse(QStringLiteral("upstream request timed out after 250ms (request "
                                              "id: slpqtest0001)"),
                               "upstream_timeout"));
        QVERIFY(transport.log(1).aborted);
        QTest::qWait(100);
        QCOMPARE(transport.started(), 2);
    }

    void moreThanContentLengthBreaksOff()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport, plan(1, std::chrono::seconds(5), QStringLiteral("5s")));
        FakeCall *call = transport.call(0);
        call->sendHead(200, kJsonHead, 3);
        call->push("hello"); // two bytes past the length: the upstream connection is spent
        QVERIFY(pair.waitClosed());
        pair.setReading(true);
        QCOMPARE(pair.received(),
                 QByteArray("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                            "X-Request-Id: slpqtest0001\r\nContent-Length: 3\r\n\r\nhel"));
        QVERIFY(transport.log(0).aborted);
    }

    void bodylessStatusCompletesAtItsHead()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport, plan(1, std::chrono::seconds(5), QStringLiteral("5s")));
        FakeCall *call = transport.call(0);
        // A length on a 304 is the 200's; nothing follows, and nothing is waited for.
        call->sendHead(304, {{"ETag", "\"e\""}, {"Content-Length", "40"}}, 40, "Not Modified");
        const QByteArray expected = "HTTP/1.1 304 Not Modified\r\nETag: \"e\"\r\n"
                                    "X-Request-Id: slpqtest0001\r\n\r\n";
        QVERIFY(pair.receive(expected.size()));
        QTRY_VERIFY_WITH_TIMEOUT(ex.exchange.isNull(), kWaitMs); // done without finished()
        QCOMPARE(pair.received(), expected);
        QVERIFY(!transport.log(0).aborted); // a clean end: the call may finish its bookkeeping
        QVERIFY(transport.call(0));
        transport.call(0)->succeed();
        QTRY_VERIFY_WITH_TIMEOUT(transport.log(0).deleted, kWaitMs);
        QTest::qWait(100);
        QVERIFY(!pair.closed());
    }

    void headRequestWithContentLength()
    {
        // Latent: RequestRouter forwards POSTs only, so no HEAD reaches an exchange today. The
        // writer (Framing::None for HEAD) and the socket transport (ResponseParser::reset(true))
        // both support a forwarded HEAD; ForwardExchange does not: onHead() takes the upstream's
        // Content-Length as bytes owed (m_expectedLength = head.contentLength, m_bodyless only
        // looks at the status), so a HEAD answer with "Content-Length: 5" and no body ends in
        // complete() as a short body -> breakOff() -> breakConnection(): a warning "broke off
        // after 0 B" and the client's keep-alive connection closed after a correct answer.
        Pair pair;
        FakeTransport transport;
        ForwardPlan p = plan(1, std::chrono::seconds(5), QStringLiteral("5s"));
        p.method = "HEAD";
        p.request.method = "HEAD";
        p.request.body.clear();
        ResponseContext context;
        context.headRequest = true;
        Exchange ex(pair, transport, std::move(p), context);
        FakeCall *call = transport.call(0);
        call->sendHead(200, kJsonHead + HeaderList{{"Content-Length", "5"}}, 5);
        call->succeed();
        const QByteArray expected = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                    "X-Request-Id: slpqtest0001\r\nContent-Length: 5\r\n\r\n";
        QVERIFY(pair.receive(expected.size()));
        QTest::qWait(200);
        QCOMPARE(pair.received(), expected); // the answer itself is right
        QVERIFY(!pair.closed());
    }

    void upstreamRequestIdReplacesSlps()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport, plan(1, std::chrono::seconds(5), QStringLiteral("5s")));
        FakeCall *call = transport.call(0);
        call->sendHead(404, kJsonHead + HeaderList{{"X-Request-Id", "up-7"}}, 2);
        call->push("{}");
        call->succeed();
        QVERIFY(pair.receiveResponse());
        QCOMPARE(pair.received(),
                 QByteArray("HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
                            "X-Request-Id: up-7\r\nContent-Length: 2\r\n\r\n{}"));
    }

    void clientGoneBeforeHeadAbortsUpstream()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport, plan(2, std::chrono::seconds(5), QStringLiteral("5s")));
        QVERIFY(!transport.log(0).aborted);
        pair.client()->abort();
        QTRY_VERIFY_WITH_TIMEOUT(transport.log(0).aborted, kWaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(ex.exchange.isNull(), kWaitMs); // deleted with its writer
        QTRY_VERIFY_WITH_TIMEOUT(transport.log(0).deleted, kWaitMs);
        QCOMPARE(transport.started(), 1); // an abort is not a reason to re-dial
        QCOMPARE(ex.metrics.value(slp::metric::requestsTotal,
                                  {{QStringLiteral("model_id"), QStringLiteral("m")},
                                   {QStringLiteral("code"), QStringLiteral("499")}}),
                 1.0);
    }

    void clientGoneMidBodyAbortsUpstream()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport, plan(1, std::chrono::seconds(5), QStringLiteral("5s")));
        FakeCall *call = transport.call(0);
        call->sendHead(200, {{"Content-Type", "text/event-stream"}});
        call->push("data: 1\n\n");
        QVERIFY(pair.receive(10));
        pair.client()->abort();
        QTRY_VERIFY_WITH_TIMEOUT(transport.log(0).aborted, kWaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(transport.log(0).deleted, kWaitMs);
    }

    void aggregateChatAnswersOneJson()
    {
        Pair pair;
        FakeTransport transport;
        ForwardPlan p = plan(1, std::chrono::seconds(5), QStringLiteral("5s"));
        p.aggregate = ForwardPlan::Aggregate::Chat;
        Exchange ex(pair, transport, std::move(p));
        FakeCall *call = transport.call(0);
        call->sendHead(200, {{"Content-Type", "text/event-stream; charset=utf-8"},
                             {"Cache-Control", "no-cache"},
                             {"X-Upstream", "u"}});
        const auto chunk = [](const QByteArray &delta, const char *finish) {
            return "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\","
                   "\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":" +
                   delta + ",\"logprobs\":null,\"finish_reason\":" + finish + "}]}\n\n";
        };
        const QByteArray stream = chunk("{\"role\":\"assistant\",\"content\":\"\"}", "null") +
                                  chunk("{\"content\":\"Hello\"}", "null") +
                                  chunk("{\"content\":\" world\"}", "null") +
                                  chunk("{}", "\"stop\"");
        // In awkward pieces, and nothing reaches the client before the end.
        for (qsizetype at = 0; at < stream.size(); at += 37) {
            call->push(stream.mid(at, 37));
        }
        QTest::qWait(50);
        QVERIFY(pair.received().isEmpty());
        // [DONE] is the end: the answer goes out without waiting for the transport's finish.
        call->push("data: [DONE]\n\n");
        QVERIFY(pair.receiveResponse());

        const QByteArray got = pair.received();
        const qsizetype end = got.indexOf("\r\n\r\n");
        QVERIFY(end > 0);
        const QByteArray body = got.mid(end + 4);
        // The stream's Content-Type and Cache-Control described the stream, not this answer.
        QCOMPARE(got.left(end + 4),
                 QByteArray("HTTP/1.1 200 OK\r\nX-Upstream: u\r\nX-Request-Id: slpqtest0001\r\n"
                            "Content-Type: application/json\r\nContent-Length: ") +
                     QByteArray::number(body.size()) + "\r\n\r\n");
        QJsonParseError error;
        const QJsonObject json = QJsonDocument::fromJson(body, &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError, body.constData());
        QCOMPARE(json.value(u"object").toString(), QStringLiteral("chat.completion"));
        const QJsonObject choice = json.value(u"choices").toArray().at(0).toObject();
        QCOMPARE(choice.value(u"message").toObject().value(u"content").toString(),
                 QStringLiteral("Hello world"));
        QCOMPARE(choice.value(u"finish_reason").toString(), QStringLiteral("stop"));
        // A clean end: the call is left to finish its bookkeeping, never aborted.
        QVERIFY(!transport.log(0).aborted);
        QVERIFY(transport.call(0));
        transport.call(0)->succeed();
        QTRY_VERIFY_WITH_TIMEOUT(transport.log(0).deleted, kWaitMs);
        QVERIFY(!transport.log(0).aborted);
        QTest::qWait(100);
        QVERIFY(!pair.closed());
    }

    void aggregateClientGoneAbortsUpstream()
    {
        Pair pair;
        FakeTransport transport;
        ForwardPlan p = plan(1, std::chrono::seconds(5), QStringLiteral("5s"));
        p.aggregate = ForwardPlan::Aggregate::Chat;
        Exchange ex(pair, transport, std::move(p));
        FakeCall *call = transport.call(0);
        call->sendHead(200, {{"Content-Type", "text/event-stream"}});
        call->push("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,"
                   "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},"
                   "\"finish_reason\":null}]}\n\n");
        pair.client()->abort();
        QTRY_VERIFY_WITH_TIMEOUT(transport.log(0).aborted, kWaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(transport.log(0).deleted, kWaitMs);
    }

    void aggregateCutStreamIs502()
    {
        Pair pair;
        FakeTransport transport;
        ForwardPlan p = plan(1, std::chrono::seconds(5), QStringLiteral("5s"));
        p.aggregate = ForwardPlan::Aggregate::Chat;
        Exchange ex(pair, transport, std::move(p));
        FakeCall *call = transport.call(0);
        call->sendHead(200, {{"Content-Type", "text/event-stream"}});
        call->push("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,"
                   "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},"
                   "\"finish_reason\":null}]}\n\n");
        call->fail(UpstreamCall::Failure::BrokenBody, QStringLiteral("closed mid-body"));
        QVERIFY(pair.receiveResponse());
        const QByteArray body = slp::openAiErrorJson(
            QStringLiteral("upstream stream ended before completion (request id: slpqtest0001)"),
            QStringLiteral("upstream_error"), "upstream_incomplete");
        QCOMPARE(pair.received(), "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\n"
                                  "X-Request-Id: slpqtest0001\r\nContent-Length: " +
                                      QByteArray::number(body.size()) + "\r\n\r\n" + body);
    }

    void backpressureStopsAndResumesReads()
    {
        Pair pair;
        // Small buffers everywhere, so the socket backs up after little data: Qt's client
        // buffer is bounded (else it reads the kernel dry whatever the test does), the
        // kernel's are shrunk (autotuning would take megabytes).
        pair.client()->setReadBufferSize(64 * 1024);
        pair.client()->setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, 64 * 1024);
        pair.serverSide()->setSocketOption(QAbstractSocket::SendBufferSizeSocketOption, 64 * 1024);
        pair.setReading(false);

        FakeTransport transport;
        Exchange ex(pair, transport, plan(1, std::chrono::seconds(5), QStringLiteral("5s")));
        FakeCall *call = transport.call(0);
        constexpr qint64 kTotal = 48ll << 20;
        call->generate(kTotal);
        call->sendHead(200, {{"Content-Type", "application/octet-stream"}});

        // The exchange reads until the writer is no longer writable, then stops.
        QVERIFY(transport.log(0).reads > 0);
        QTest::qWait(300);
        const int stalledAt = transport.log(0).reads;
        QVERIFY(!ex.writer->isWritable());
        QVERIFY2(call->generatedLeft() > 0,
                 "the whole stream was read without backpressure"); // bounded, not everything
        qInfo() << "reads before backpressure:" << stalledAt << "of" << kTotal / (64 * 1024);
        // More upstream data announced: still no read while the client does not read.
        call->poke();
        call->poke();
        QTest::qWait(300);
        QCOMPARE(transport.log(0).reads, stalledAt);
        QVERIFY(!transport.log(0).aborted);

        // The client reads: the socket drains, the writer becomes writable, reads resume.
        pair.setReading(true);
        QTRY_VERIFY_WITH_TIMEOUT(transport.log(0).reads > stalledAt, kWaitMs);
        QTRY_COMPARE_WITH_TIMEOUT(call->generatedLeft(), 0, 60000);
        call->succeed();
        QVERIFY(waitFor([&] { return pair.received().endsWith("\r\n0\r\n\r\n"); }, 60000));
        // Every byte arrived, in 64 KiB chunks.
        const QByteArray got = pair.received();
        const qsizetype bodyStart = got.indexOf("\r\n\r\n") + 4;
        const qint64 chunks = kTotal / (64 * 1024);
        const qint64 framed = chunks * (5 + 2 + 64 * 1024 + 2) + 5; // "10000\r\n" ... "\r\n"
        QCOMPARE(qint64(got.size() - bodyStart), framed);
        QVERIFY(!pair.closed());
    }

    // The tracker behind sse_keepalive: a boundary is a blank line as "\n\n", "\r\n\r\n" or
    // "\r\r", wherever the pieces split it; nothing fed yet counts as one.
    void sseBoundary_data()
    {
        QTest::addColumn<QByteArrayList>("pieces");
        QTest::addColumn<bool>("atBoundary");
        QTest::newRow("nothing yet") << QByteArrayList{} << true;
        QTest::newRow("empty piece") << QByteArrayList{""} << true;
        QTest::newRow("LF event") << QByteArrayList{"data: 1\n\n"} << true;
        QTest::newRow("CRLF event") << QByteArrayList{"data: 1\r\n\r\n"} << true;
        QTest::newRow("CR event") << QByteArrayList{"data: 1\r\r"} << true;
        QTest::newRow("CRLF then LF") << QByteArrayList{"data: 1\r\n\n"} << true;
        QTest::newRow("one line only") << QByteArrayList{"data: 1\n"} << false;
        QTest::newRow("one CRLF line") << QByteArrayList{"data: 1\r\n"} << false;
        QTest::newRow("half a CRLF blank line") << QByteArrayList{"data: 1\r\n\r"} << false;
        QTest::newRow("inside the next event") << QByteArrayList{"data: 1\n\ndata: 2"} << false;
        QTest::newRow("LF split") << QByteArrayList{"data: 1\n", "\n"} << true;
        QTest::newRow("CRLF split 3+1") << QByteArrayList{"data: 1\r\n\r", "\n"} << true;
        QTest::newRow("CRLF split 1+3") << QByteArrayList{"data: 1\r", "\n\r\n"} << true;
        QTest::newRow("CRLF byte by byte")
            << QByteArrayList{"d", ":", "\r", "\n", "\r", "\n"} << true;
        QTest::newRow("CR split") << QByteArrayList{"data: 1\r", "\r"} << true;
        QTest::newRow("boundary then a byte") << QByteArrayList{"data: 1\n\n", "d"} << false;
        QTest::newRow("long piece then tail")
            << QByteArrayList{QByteArray(100000, 'x') + "\n", "\n"} << true;
        QTest::newRow("mixed LF CRLF is not taken") << QByteArrayList{"data: 1\n\r\n"} << false;
        QTest::newRow("comment event") << QByteArrayList{": ping\n\n"} << true;
    }
    void sseBoundary()
    {
        QFETCH(QByteArrayList, pieces);
        QFETCH(bool, atBoundary);
        SseBoundary boundary;
        for (const QByteArray &piece : pieces) {
            boundary.feed(piece);
        }
        QCOMPARE(boundary.atBoundary(), atBoundary);
    }

    // A route without the keys arms nothing: no watch object, no timer, bytes as before.
    void noStreamKeysNoWatch()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport, plan(1, std::chrono::seconds(5), QStringLiteral("5s")));
        FakeCall *call = transport.call(0);
        call->sendHead(200, kSseHead);
        call->push("data: 1\n\n");
        QVERIFY(ex.exchange);
        QVERIFY(!ex.exchange->findChild<StreamWatch *>());
        QTest::qWait(300);
        call->push("data: 2\n\n");
        call->succeed();
        const QByteArray expected = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; "
                                    "charset=utf-8\r\nX-Request-Id: slpqtest0001\r\n"
                                    "Transfer-Encoding: chunked\r\n\r\n"
                                    "9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n0\r\n\r\n";
        QVERIFY(pair.receive(expected.size()));
        QCOMPARE(pair.received(), expected);
    }

    // stream_idle_timeout 300ms: two events, then silence; the client's chunked response is
    // cut (no last chunk, connection closed) within the timeout plus 0.5 s, the upstream call
    // aborted, the stall counted.
    void idleTimeoutBreaksRelayedStream()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport,
                    watchedPlan(std::chrono::milliseconds(300), std::chrono::milliseconds(0)));
        FakeCall *call = transport.call(0);
        call->sendHead(200, kSseHead);
        call->push("data: 1\n\n");
        QElapsedTimer clock;
        clock.start();
        call->push("data: 2\n\n");
        QVERIFY(pair.waitClosed());
        const qint64 cutMs = clock.elapsed();
        qInfo() << "stalled stream cut after" << cutMs << "ms (stream_idle_timeout 300ms)";
        QVERIFY2(cutMs >= 290 && cutMs < 800, QByteArray::number(cutMs));
        QVERIFY(transport.log(0).aborted);
        pair.setReading(true);
        bool ended = true;
        const QList<QByteArray> chunks = chunksOf(pair.received(), &ended);
        QVERIFY(!ended);
        QCOMPARE(chunks, (QList<QByteArray>{"data: 1\n\n", "data: 2\n\n"}));
        QVERIFY(pair.received().endsWith("data: 2\n\n\r\n"));
        QCOMPARE(modelCounter(ex.metrics, slp::metric::streamIdleTimeouts), 1.0);
    }

    // With a Content-Length the cut leaves the body short, then closed.
    void idleTimeoutLeavesLengthShort()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport,
                    watchedPlan(std::chrono::milliseconds(200), std::chrono::milliseconds(0)));
        FakeCall *call = transport.call(0);
        call->sendHead(200, kJsonHead, 10);
        call->push("hello");
        QVERIFY(pair.waitClosed());
        pair.setReading(true);
        QCOMPARE(pair.received(),
                 QByteArray("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                            "X-Request-Id: slpqtest0001\r\nContent-Length: 10\r\n\r\nhello"));
        QVERIFY(transport.log(0).aborted);
    }

    // Bytes every 150 ms keep a 400 ms idle timeout from firing, however long the stream.
    void idleTimeoutSparedByActivity()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport,
                    watchedPlan(std::chrono::milliseconds(400), std::chrono::milliseconds(0)));
        FakeCall *call = transport.call(0);
        call->sendHead(200, kSseHead);
        for (int i = 0; i < 8; ++i) {
            call->push("data: " + QByteArray::number(i) + "\n\n");
            QTest::qWait(150);
            QVERIFY(!transport.log(0).aborted);
        }
        call->succeed();
        QVERIFY(waitFor([&] { return pair.received().endsWith("\r\n0\r\n\r\n"); }));
        QCOMPARE(modelCounter(ex.metrics, slp::metric::streamIdleTimeouts), 0.0);
        QVERIFY(!pair.closed());
    }

    // On an aggregate route nothing was sent: the stall is a 502 with its own message.
    void idleTimeoutAggregateIs502()
    {
        Pair pair;
        FakeTransport transport;
        ForwardPlan p = watchedPlan(std::chrono::milliseconds(300), std::chrono::milliseconds(100));
        p.aggregate = ForwardPlan::Aggregate::Chat;
        Exchange ex(pair, transport, std::move(p));
        FakeCall *call = transport.call(0);
        call->sendHead(200, kSseHead);
        QElapsedTimer clock;
        clock.start();
        call->push("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,"
                   "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},"
                   "\"finish_reason\":null}]}\n\n");
        QVERIFY(pair.receiveResponse());
        const qint64 cutMs = clock.elapsed();
        qInfo() << "stalled aggregate answered 502 after" << cutMs << "ms";
        QVERIFY2(cutMs >= 290 && cutMs < 800, QByteArray::number(cutMs));
        const QByteArray body = slp::openAiErrorJson(
            QStringLiteral("upstream stream stalled (request id: slpqtest0001)"),
            QStringLiteral("upstream_error"), "upstream_stalled");
        // No keep-alive comment either: an aggregate route writes nothing before its answer.
        QCOMPARE(pair.received(), "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\n"
                                  "X-Request-Id: slpqtest0001\r\nContent-Length: " +
                                      QByteArray::number(body.size()) + "\r\n\r\n" + body);
        QVERIFY(transport.log(0).aborted);
        QCOMPARE(modelCounter(ex.metrics, slp::metric::streamIdleTimeouts), 1.0);
        QCOMPARE(modelCounter(ex.metrics, slp::metric::sseKeepalives), 0.0);
    }

    // Bytes held back for a slow client are not the upstream's silence.
    void idleTimeoutNotWhileClientBacksUp()
    {
        Pair pair;
        pair.client()->setReadBufferSize(64 * 1024);
        pair.client()->setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, 64 * 1024);
        pair.serverSide()->setSocketOption(QAbstractSocket::SendBufferSizeSocketOption, 64 * 1024);
        pair.setReading(false);
        FakeTransport transport;
        Exchange ex(pair, transport,
                    watchedPlan(std::chrono::milliseconds(200), std::chrono::milliseconds(0)));
        FakeCall *call = transport.call(0);
        call->generate(16ll << 20);
        call->sendHead(200, {{"Content-Type", "application/octet-stream"}});
        QTest::qWait(800);
        QVERIFY(!ex.writer->isWritable());
        QVERIFY(!transport.log(0).aborted);
        pair.setReading(true);
        QTRY_COMPARE_WITH_TIMEOUT(call->generatedLeft(), 0, 60000);
        call->succeed();
        QVERIFY(waitFor([&] { return pair.received().endsWith("\r\n0\r\n\r\n"); }, 60000));
        QCOMPARE(modelCounter(ex.metrics, slp::metric::streamIdleTimeouts), 0.0);
    }

    // sse_keepalive 100ms: comments before the first byte and between events, never inside a
    // partly relayed event; once that event's boundary arrives and silence goes on, they
    // resume. The upstream's bytes come through unchanged.
    void keepaliveOnlyAtBoundaries()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport,
                    watchedPlan(std::chrono::milliseconds(0), std::chrono::milliseconds(100)));
        FakeCall *call = transport.call(0);
        call->sendHead(200, kSseHead);
        QTest::qWait(250); // before any body byte
        call->push("data: 1\n\n");
        QTest::qWait(350); // after a whole event
        const int beforePartial = int(pair.received().count(kComment));
        call->push("data: par");
        QTest::qWait(450); // inside an event: nothing
        const int duringPartial = int(pair.received().count(kComment)) - beforePartial;
        call->push("tial\r\n");
        QTest::qWait(250); // a line ended, the event did not
        const int afterLine = int(pair.received().count(kComment)) - beforePartial;
        call->push("\r\n");
        QTest::qWait(350);
        call->push("data: [DONE]\n\n");
        call->succeed();
        QVERIFY(waitFor([&] { return pair.received().endsWith("\r\n0\r\n\r\n"); }));
        bool ended = false;
        const QList<QByteArray> chunks = chunksOf(pair.received(), &ended);
        QVERIFY(ended);
        const int comments = checkComments(chunks);
        qInfo() << "comments:" << comments << "before the partial event:" << beforePartial
                << "during it:" << duringPartial << "chunks:" << chunks;
        QVERIFY2(comments >= 0, "a comment inside an event");
        QCOMPARE(duringPartial, 0);
        QCOMPARE(afterLine, 0);
        QVERIFY2(beforePartial >= 3 && beforePartial <= 7, QByteArray::number(beforePartial));
        QVERIFY2(comments - beforePartial >= 2, QByteArray::number(comments));
        QCOMPARE(chunks.first(), kComment); // no byte yet counts as a boundary
        QCOMPARE(withoutComments(chunks),
                 QByteArray("data: 1\n\ndata: partial\r\n\r\ndata: [DONE]\n\n"));
        QCOMPARE(modelCounter(ex.metrics, slp::metric::sseKeepalives), double(comments));
    }

    // Comments are not upstream activity: a silent stream with keep-alives still stalls.
    void keepaliveDoesNotFeedIdleTimeout()
    {
        Pair pair;
        FakeTransport transport;
        Exchange ex(pair, transport,
                    watchedPlan(std::chrono::milliseconds(500), std::chrono::milliseconds(100)));
        FakeCall *call = transport.call(0);
        call->sendHead(200, kSseHead);
        QElapsedTimer clock;
        clock.start();
        call->push("data: 1\n\n");
        QVERIFY(pair.waitClosed());
        const qint64 cutMs = clock.elapsed();
        pair.setReading(true);
        bool ended = true;
        const QList<QByteArray> chunks = chunksOf(pair.received(), &ended);
        const int comments = checkComments(chunks);
        qInfo() << "cut after" << cutMs << "ms with" << comments << "comments in between";
        QVERIFY2(cutMs >= 490 && cutMs < 1000, QByteArray::number(cutMs));
        QVERIFY(!ended);
        QVERIFY2(comments >= 2 && comments <= 5, QByteArray::number(comments));
        QCOMPARE(modelCounter(ex.metrics, slp::metric::streamIdleTimeouts), 1.0);
    }

    // Never on another content type, never past a Content-Length, never on aggregate routes.
    void keepaliveOnlyForUnframedEventStreams_data()
    {
        QTest::addColumn<HeaderList>("headers");
        QTest::addColumn<qint64>("length");
        QTest::addColumn<bool>("aggregate");
        QTest::newRow("json") << kJsonHead << qint64(-1) << false;
        QTest::newRow("plain text")
            << HeaderList{{"Content-Type", "text/plain"}} << qint64(-1) << false;
        QTest::newRow("no content type") << HeaderList{} << qint64(-1) << false;
        QTest::newRow("event stream with a length")
            << (kSseHead + HeaderList{{"Content-Length", "18"}}) << qint64(18) << false;
        QTest::newRow("aggregate") << kSseHead << qint64(-1) << true;
    }
    void keepaliveOnlyForUnframedEventStreams()
    {
        QFETCH(HeaderList, headers);
        QFETCH(qint64, length);
        QFETCH(bool, aggregate);
        Pair pair;
        FakeTransport transport;
        ForwardPlan p = watchedPlan(std::chrono::milliseconds(0), std::chrono::milliseconds(50));
        if (aggregate) {
            p.aggregate = ForwardPlan::Aggregate::Chat;
        }
        Exchange ex(pair, transport, std::move(p));
        FakeCall *call = transport.call(0);
        call->sendHead(200, headers, length);
        QVERIFY(ex.exchange);
        QVERIFY(!ex.exchange->findChild<StreamWatch *>()); // nothing to watch: nothing armed
        QTest::qWait(250);
        if (!aggregate) { // (an aggregate would answer 502 to these)
            call->push("data: 1\n\n");
            QTest::qWait(250);
            call->push("data: 2\n\n");
        }
        QTest::qWait(100);
        QVERIFY(!pair.received().contains(kComment));
        QCOMPARE(modelCounter(ex.metrics, slp::metric::sseKeepalives), 0.0);
        // The upstream ends its side too: a call still running when its exchange is done is
        // kept until it finishes (its connection goes back to the pool).
        if (call->isRunning()) {
            call->succeed();
        }
    }
};

QTEST_GUILESS_MAIN(TestForwardExchange)
#include "tst_forward_exchange.moc"
