// SPDX-License-Identifier: GPL-3.0-or-later
// ForwardExchange against a fake UpstreamTransport (the seam): the test plays the upstream,
// call by call, and reads what a real client socket on 127.0.0.1 receives through a real
// ClientConnection and ResponseWriter. Covers the single re-dial, the time-to-first-byte
// timeout, the client leaving, aggregation and backpressure, and the per-route stream timers
// (stream_idle_timeout, sse_keepalive) with the SSE boundary tracker they rely on.

#include "connectionpair.h"
#include "fakeupstream.h"
#include "forward/exchangecontext.h"
#include "forward/forwardexchange.h"
#include "forward/streamwatch.h"
#include "http/clientconnection.h"
#include "http/errorbody.h"
#include "http/responsewriter.h"
#include "observe/metrics.h"
#include "quietwindow.h"
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
using slp::ConnectionSettings;
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

using slp::test::CallLog;
using slp::test::FakeCall;
using slp::test::FakeTransport;
using slp::test::kQuietWindowMs;
using slp::test::watchQuietWindow;
using Pair = slp::test::ConnectionPair;

constexpr int kWaitMs = Pair::kWaitMs;

// The route's settings as the route table compiles them; `edit` adjusts them.
std::shared_ptr<const slp::RouteForwarding>
route(int maxAttempts, std::chrono::milliseconds timeout, const QString &timeoutText,
      const std::function<void(slp::RouteForwarding &)> &edit = {})
{
    auto r = std::make_shared<slp::RouteForwarding>();
    r->modelId = QStringLiteral("m");
    r->labels = slp::metric::modelLabels(r->modelId);
    r->origin = QStringLiteral("http://127.0.0.1:9");
    r->timeout = timeout;
    r->timeoutText = timeoutText;
    r->maxAttempts = maxAttempts;
    if (edit)
        edit(*r);
    return r;
}

ForwardPlan plan(int maxAttempts, std::chrono::milliseconds timeout, const QString &timeoutText)
{
    ForwardPlan p;
    p.route = route(maxAttempts, timeout, timeoutText);
    p.requestId = "slpqtest0001";
    p.request.method = "POST";
    p.request.origin = p.route->origin;
    p.request.target = "/v1/chat/completions";
    p.request.body = QByteArrayLiteral("{\"model\":\"m\"}");
    return p;
}

// The answer the client gets for a 502 SLP wrote, with the body of `bodyJson`.
QByteArray bad502(const QByteArray &bodyJson)
{
    return "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\n"
           "X-Request-Id: slpqtest0001\r\nContent-Length: " +
           QByteArray::number(bodyJson.size()) + "\r\n\r\n" + bodyJson;
}

QByteArray errorResponse(const QString &message, const QByteArray &code)
{
    return bad502(slp::openAiErrorBody(502, message, code));
}

ForwardPlan defaultPlan()
{
    return plan(1, std::chrono::seconds(5), QStringLiteral("5s"));
}

// The exchange for one request, as the router builds it: a Qt child of its writer, with the
// worker's context (the fake transport, a registry of its own, log_requests as asked).
struct Exchange
{
    Exchange(Pair &pair, FakeTransport &transport, ForwardPlan p, const ResponseContext &context,
             bool logRequests)
        : exchangeContext{transport, metrics, nullptr, nullptr, logRequests}
    {
        slp::declareSlpMetrics(metrics);
        writer = pair.openWriter(context);
        exchange = new ForwardExchange(std::move(p), exchangeContext, writer); // child of writer
        exchange->start();
    }
    // An exchange still running when the test ends goes first: it reports to `metrics`.
    ~Exchange() { delete exchange.data(); }
    MetricsRegistry metrics;
    slp::ExchangeContext exchangeContext;
    QPointer<ResponseWriter> writer;
    QPointer<ForwardExchange> exchange;
};

// One exchange, the client connection it answers and the fake upstream it calls; start()
// comes after whatever the test sets up on the connection first.
struct Rig
{
    void start(ForwardPlan p, const ResponseContext &context = {}, bool logRequests = false)
    {
        ex = std::make_unique<Exchange>(pair, transport, std::move(p), context, logRequests);
    }
    FakeCall *call(int i = 0) const { return transport.call(i); }

    Pair pair;
    FakeTransport transport;
    std::unique_ptr<Exchange> ex; // first to go
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
    if (ended)
        *ended = false;
    if (at < 0)
        return out;
    at += 4;
    while (at < raw.size()) {
        const qsizetype eol = raw.indexOf("\r\n", at);
        if (eol < 0)
            break;
        bool ok = false;
        const qsizetype size = raw.mid(at, eol - at).toLongLong(&ok, 16);
        if (!ok || eol + 2 + size + 2 > raw.size())
            break;
        if (size == 0) {
            if (ended)
                *ended = true;
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
            if (!boundary.atBoundary())
                return -1;
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
    for (const QByteArray &chunk : chunks)
        out += chunk == kComment ? QByteArray() : chunk;
    return out;
}

ForwardPlan aggregatePlan(ForwardPlan p = defaultPlan())
{
    p.aggregate = ForwardPlan::Aggregate::Chat;
    return p;
}

ForwardPlan watchedPlan(std::chrono::milliseconds idle, std::chrono::milliseconds keepalive)
{
    ForwardPlan p = plan(1, std::chrono::seconds(5), QStringLiteral("5s"));
    p.route = route(1, std::chrono::seconds(5), QStringLiteral("5s"), [&](auto &r) {
        r.streamIdleTimeout = idle;
        r.streamIdleTimeoutText = QStringLiteral("%1ms").arg(idle.count());
        r.sseKeepalive = keepalive;
    });
    return p;
}

// The head of a relayed answer with a Content-Length, SLP's id added.
QByteArray relayedHead(int length, const QByteArray &contentType = "application/json")
{
    return "HTTP/1.1 200 OK\r\nContent-Type: " + contentType +
           "\r\nX-Request-Id: slpqtest0001\r\nContent-Length: " + QByteArray::number(length) +
           "\r\n\r\n";
}

// One chat.completion.chunk event carrying `delta`.
QByteArray chatChunk(const QByteArray &delta, const QByteArray &finish = "null")
{
    return "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,"
           "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":" +
           delta + ",\"logprobs\":null,\"finish_reason\":" + finish + "}]}\n\n";
}

// Small buffers everywhere and a client that does not read, so the socket backs up after
// little data: Qt's client buffer is bounded (else it reads the kernel dry whatever the test
// does), the kernel's are shrunk (autotuning would take megabytes).
void makeSlowClient(Pair &pair)
{
    pair.client()->setReadBufferSize(64 * 1024);
    pair.client()->setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, 64 * 1024);
    pair.serverSide()->setSocketOption(QAbstractSocket::SendBufferSizeSocketOption, 64 * 1024);
    pair.setReading(false);
}

// Waits for the last chunk of a chunked answer.
bool waitChunkedEnd(Pair &pair, int ms = kWaitMs)
{
    return Pair::waitFor([&] { return pair.received().endsWith("\r\n0\r\n\r\n"); }, ms);
}

// Nothing more reaches the client and its keep-alive connection stays open.
bool staysOpen(Pair &pair)
{
    watchQuietWindow();
    return !pair.closed();
}

// A chunked event stream of "data: 1" and "data: 2", as the client receives it.
QByteArray twoEventsRelayed(const QByteArray &contentType)
{
    return "HTTP/1.1 200 OK\r\nContent-Type: " + contentType +
           "\r\nX-Request-Id: slpqtest0001\r\nTransfer-Encoding: chunked\r\n\r\n"
           "9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n0\r\n\r\n";
}

double attemptFailures(const MetricsRegistry &metrics, const QString &reason)
{
    return metrics.value(
        slp::metric::upstreamAttempts,
        {{QStringLiteral("model_id"), QStringLiteral("m")}, {QStringLiteral("reason"), reason}});
}

// The lines logRequestIds() expects: every outside value escaped, the ids at the end.
const char *const kBrokeOffLine =
    "[slpqtest0001] upstream response for model m broke off after 5 B: POST "
    "\"http://127.0.0.1:9/v1/chat/completions?a=%2F\\x7f\": cut upstream=up-9\\x0a model=\"m\" "
    "client=\"c\\x01\\\"x\" trace=4bf92f3577b34da6a3ce929d0e0e4736";
const QString kRequestLine =
    QStringLiteral("^\\[slpqtest0001\\] POST /v1/chat/completions\\?a=%2F: m as \"Up\\\\x0a1\" -> "
                   "http://127\\.0\\.0\\.1:9 200 in \\S+ \\(13 B up, 2 B down\\) upstream=up-3 "
                   "model=\"m\" trace=4bf92f3577b34da6a3ce929d0e0e4736$");

double broken(const MetricsRegistry &metrics, const QString &reason)
{
    return metrics.value(
        slp::metric::responsesBroken,
        {{QStringLiteral("model_id"), QStringLiteral("m")}, {QStringLiteral("reason"), reason}});
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
        Rig rig;
        rig.start(plan(2, std::chrono::seconds(5), QStringLiteral("5s")));
        QCOMPARE(rig.transport.started(), 1);
        rig.call()->fail(failure, QStringLiteral("connection refused"));
        QCOMPARE(rig.transport.started(), 2); // re-dialled at once
        QCOMPARE(rig.transport.requests.at(1).body.joined(),
                 rig.transport.requests.at(0).body.joined());
        QCOMPARE(rig.transport.requests.at(1).target, QByteArray("/v1/chat/completions"));
        QTRY_VERIFY_WITH_TIMEOUT(rig.transport.log(0).deleted, kWaitMs); // the spent call is freed

        FakeCall *second = rig.call(1);
        second->sendHead(200, kJsonHead + HeaderList{{"Content-Length", "2"}}, 2);
        second->push("ok");
        second->succeed();
        QVERIFY(rig.pair.receiveResponse());
        QCOMPARE(rig.pair.received(), relayedHead(2) + "ok");
        QCOMPARE(rig.transport.started(), 2);
        QCOMPARE(attemptFailures(rig.ex->metrics, QStringLiteral("connect")), 1.0);
        QVERIFY(staysOpen(rig.pair));
    }

    void noRetryWithOneAttempt()
    {
        Rig rig;
        rig.start(defaultPlan());
        rig.call()->fail(UpstreamCall::Failure::Refused, QStringLiteral("connection refused"));
        QVERIFY(rig.pair.receiveResponse());
        QCOMPARE(rig.pair.received(),
                 errorResponse(QStringLiteral("upstream request failed (request id: slpqtest0001)"),
                               "upstream_failed"));
        QCOMPARE(rig.transport.started(), 1);
    }

    void onlyOneRetry()
    {
        Rig rig;
        rig.start(plan(2, std::chrono::seconds(5), QStringLiteral("5s")));
        rig.call()->fail(UpstreamCall::Failure::Refused, QStringLiteral("refused"));
        QCOMPARE(rig.transport.started(), 2);
        rig.call(1)->fail(UpstreamCall::Failure::Refused, QStringLiteral("refused"));
        QVERIFY(rig.pair.receiveResponse());
        QCOMPARE(rig.pair.received(),
                 errorResponse(QStringLiteral("upstream request failed (request id: slpqtest0001)"),
                               "upstream_failed"));
        QCOMPARE(rig.transport.started(), 2);
    }

    // A transport that cannot even begin reports through the observer from inside start()
    // and returns no call: the exchange re-dials from there, as after a later failure.
    void failureInsideStartRedials()
    {
        Rig rig;
        rig.transport.failNextStart(UpstreamCall::End{
            UpstreamCall::Failure::Refused, QStringLiteral("refused"), {}, false});
        rig.start(plan(2, std::chrono::seconds(5), QStringLiteral("5s")));
        QCOMPARE(rig.transport.failedAtStart, 1);
        QCOMPARE(rig.transport.started(), 2);
        FakeCall *second = rig.call(1);
        QVERIFY(second);
        second->sendHead(200, kJsonHead + HeaderList{{"Content-Length", "2"}}, 2);
        second->push("ok");
        second->succeed();
        QVERIFY(rig.pair.receiveResponse());
        QCOMPARE(rig.pair.received(), relayedHead(2) + "ok");
        QCOMPARE(attemptFailures(rig.ex->metrics, QStringLiteral("connect")), 1.0);
    }

    void failureInsideStartWithoutRetryIs502()
    {
        Rig rig;
        rig.transport.failNextStart(UpstreamCall::End{
            UpstreamCall::Failure::Refused, QStringLiteral("refused"), {}, false});
        rig.start(defaultPlan());
        QCOMPARE(rig.transport.started(), 1);
        QVERIFY(rig.pair.receiveResponse());
        QCOMPARE(rig.pair.received(),
                 errorResponse(QStringLiteral("upstream request failed (request id: slpqtest0001)"),
                               "upstream_failed"));
        // Answered from inside start(): the exchange goes with its writer, with no call left.
        QTRY_VERIFY_WITH_TIMEOUT(!rig.ex->exchange, kWaitMs);
    }

    void unsendableInsideStartIs400()
    {
        Rig rig;
        rig.transport.failNextStart(UpstreamCall::End{
            UpstreamCall::Failure::Unsendable, QStringLiteral("target cannot be sent"), {}, false});
        rig.start(plan(2, std::chrono::seconds(5), QStringLiteral("5s")));
        QCOMPARE(rig.transport.started(), 1); // a 400 is never re-dialled
        QVERIFY(rig.pair.receiveResponse());
        QVERIFY2(rig.pair.received().startsWith("HTTP/1.1 400 "), rig.pair.received().constData());
        QVERIFY(rig.pair.received().contains("target cannot be sent"));
    }

    void noRetryOnProtocolError()
    {
        Rig rig;
        rig.start(plan(2, std::chrono::seconds(5), QStringLiteral("5s")));
        rig.call()->fail(UpstreamCall::Failure::Protocol,
                         QStringLiteral("malformed response head"));
        QVERIFY(rig.pair.receiveResponse());
        QCOMPARE(rig.transport.started(), 1); // the request may have reached the model
        QVERIFY(rig.pair.received().startsWith("HTTP/1.1 502 Bad Gateway\r\n"));
    }

    void timeoutAnswers502AndNeverRetries()
    {
        Rig rig;
        QElapsedTimer clock;
        clock.start();
        rig.start(plan(2, std::chrono::seconds(1), QStringLiteral("1s")));
        QVERIFY(rig.pair.receiveResponse());
        const qint64 elapsed = clock.elapsed();
        QVERIFY2(elapsed >= 990, qPrintable(QString::number(elapsed)));
        QVERIFY2(elapsed < 4000, qPrintable(QString::number(elapsed)));
        QCOMPARE(
            rig.pair.received(),
            errorResponse(
                QStringLiteral("upstream request timed out after 1s (request id: slpqtest0001)"),
                "upstream_timeout"));
        QVERIFY(rig.transport.log(0).aborted); // the upstream request is stopped
        watchQuietWindow();
        QCOMPARE(rig.transport.started(), 1); // it may still be generating: never re-sent
        QCOMPARE(attemptFailures(rig.ex->metrics, QStringLiteral("timed out")), 1.0);
    }

    void timeoutIsTimeToFirstByteOnly()
    {
        Rig rig;
        rig.start(plan(1, std::chrono::milliseconds(100), QStringLiteral("100ms")));
        FakeCall *call = rig.call();
        call->sendHead(200, {{"Content-Type", "text/event-stream"}});
        call->push("data: 1\n\n");
        static_assert(kQuietWindowMs >= 2 * 100, "the window outlasts the timeout");
        watchQuietWindow(); // well past the timeout, with the head in
        QVERIFY(!rig.transport.log(0).aborted);
        call->push("data: 2\n\n");
        call->succeed();
        const QByteArray expected = twoEventsRelayed("text/event-stream");
        QVERIFY(rig.pair.receive(expected.size()));
        QCOMPARE(rig.pair.received(), expected);
    }

    void noRetryAfterHead()
    {
        Rig rig;
        rig.start(plan(2, std::chrono::seconds(5), QStringLiteral("5s")));
        FakeCall *call = rig.call();
        call->sendHead(200, kJsonHead, 10);
        call->push("hello");
        call->fail(UpstreamCall::Failure::Closed, QStringLiteral("connection closed mid-body"));
        QVERIFY(rig.pair.waitClosed());
        rig.pair.setReading(true);
        // Cut off, never completed and never re-sent.
        QCOMPARE(rig.pair.received(), relayedHead(10) + "hello");
        QCOMPARE(rig.transport.started(), 1);
    }

    void retriedAttemptHasItsOwnTimeout()
    {
        Rig rig;
        QElapsedTimer sinceFirst;
        sinceFirst.start();
        rig.start(plan(2, std::chrono::milliseconds(250), QStringLiteral("250ms")));
        // The first attempt spends 100 ms of its 250 before it fails.
        QVERIFY(Pair::waitFor([&] { return sinceFirst.elapsed() >= 100; }));
        rig.call()->fail(UpstreamCall::Failure::Refused, QStringLiteral("refused"));
        QCOMPARE(rig.transport.started(), 2);
        QElapsedTimer clock;
        clock.start();
        QVERIFY(rig.pair.receiveResponse());
        const qint64 elapsed = clock.elapsed();
        QVERIFY2(elapsed >= 240, qPrintable(QString::number(elapsed))); // restarted, not left over
        QCOMPARE(rig.pair.received(),
                 errorResponse(QStringLiteral("upstream request timed out after 250ms (request "
                                              "id: slpqtest0001)"),
                               "upstream_timeout"));
        QVERIFY(rig.transport.log(1).aborted);
        watchQuietWindow();
        QCOMPARE(rig.transport.started(), 2);
    }

    void moreThanContentLengthBreaksOff()
    {
        Rig rig;
        rig.start(defaultPlan());
        FakeCall *call = rig.call();
        call->sendHead(200, kJsonHead, 3);
        call->push("hello"); // two bytes past the length: the upstream connection is spent
        QVERIFY(rig.pair.waitClosed());
        rig.pair.setReading(true);
        QCOMPARE(rig.pair.received(), relayedHead(3) + "hel");
        QVERIFY(rig.transport.log(0).aborted);
    }

    void bodylessStatusCompletesAtItsHead()
    {
        Rig rig;
        rig.start(defaultPlan());
        FakeCall *call = rig.call();
        // A length on a 304 is the 200's; nothing follows, and nothing is waited for.
        call->sendHead(304, {{"ETag", "\"e\""}, {"Content-Length", "40"}}, 40, "Not Modified");
        const QByteArray expected = "HTTP/1.1 304 Not Modified\r\nETag: \"e\"\r\n"
                                    "X-Request-Id: slpqtest0001\r\n\r\n";
        QVERIFY(rig.pair.receive(expected.size()));
        QTRY_VERIFY_WITH_TIMEOUT(rig.ex->exchange.isNull(), kWaitMs); // done without finished()
        QCOMPARE(rig.pair.received(), expected);
        QVERIFY(!rig.transport.log(0).aborted); // a clean end: the call may finish its bookkeeping
        QVERIFY(rig.call());
        rig.call()->succeed();
        QTRY_VERIFY_WITH_TIMEOUT(rig.transport.log(0).deleted, kWaitMs);
        QVERIFY(staysOpen(rig.pair));
    }

    void headRequestWithContentLength()
    {
        // RequestRouter forwards POSTs only, so no HEAD reaches an exchange today; should one,
        // its answer's Content-Length describes the GET it stands for and no body follows
        // (relayHead() counts a HEAD answer as bodyless): a correct answer, the connection
        // kept.
        Rig rig;
        ForwardPlan p = defaultPlan();
        p.request.method = "HEAD";
        p.request.body = {};
        ResponseContext context;
        context.headRequest = true;
        rig.start(std::move(p), context);
        FakeCall *call = rig.call();
        call->sendHead(200, kJsonHead + HeaderList{{"Content-Length", "5"}}, 5);
        call->succeed();
        const QByteArray expected = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                    "X-Request-Id: slpqtest0001\r\nContent-Length: 5\r\n\r\n";
        QVERIFY(rig.pair.receive(expected.size()));
        watchQuietWindow();
        QCOMPARE(rig.pair.received(), expected); // the answer itself is right
        QVERIFY(!rig.pair.closed());
    }

    void upstreamRequestIdReplacesSlps()
    {
        Rig rig;
        rig.start(defaultPlan());
        FakeCall *call = rig.call();
        call->sendHead(404, kJsonHead + HeaderList{{"X-Request-Id", "up-7"}}, 2);
        call->push("{}");
        call->succeed();
        QVERIFY(rig.pair.receiveResponse());
        QCOMPARE(rig.pair.received(),
                 QByteArray("HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
                            "X-Request-Id: up-7\r\nContent-Length: 2\r\n\r\n{}"));
    }

    void clientGoneBeforeHeadAbortsUpstream()
    {
        Rig rig;
        rig.start(plan(2, std::chrono::seconds(5), QStringLiteral("5s")));
        QVERIFY(!rig.transport.log(0).aborted);
        rig.pair.client()->abort();
        QTRY_VERIFY_WITH_TIMEOUT(rig.transport.log(0).aborted, kWaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(rig.ex->exchange.isNull(), kWaitMs); // deleted with its writer
        QTRY_VERIFY_WITH_TIMEOUT(rig.transport.log(0).deleted, kWaitMs);
        QCOMPARE(rig.transport.started(), 1); // an abort is not a reason to re-dial
        QCOMPARE(rig.ex->metrics.value(slp::metric::requestsTotal,
                                       {{QStringLiteral("model_id"), QStringLiteral("m")},
                                        {QStringLiteral("code"), QStringLiteral("499")}}),
                 1.0);
    }

    void clientGoneMidBodyAbortsUpstream()
    {
        Rig rig;
        rig.start(defaultPlan());
        FakeCall *call = rig.call();
        call->sendHead(200, {{"Content-Type", "text/event-stream"}});
        call->push("data: 1\n\n");
        QVERIFY(rig.pair.receive(10));
        rig.pair.client()->abort();
        QTRY_VERIFY_WITH_TIMEOUT(rig.transport.log(0).aborted, kWaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(rig.transport.log(0).deleted, kWaitMs);
    }

    void aggregateChatAnswersOneJson()
    {
        Rig rig;
        rig.start(aggregatePlan());
        FakeCall *call = rig.call();
        call->sendHead(200, {{"Content-Type", "text/event-stream; charset=utf-8"},
                             {"Cache-Control", "no-cache"},
                             {"X-Upstream", "u"}});
        const QByteArray stream = chatChunk("{\"role\":\"assistant\",\"content\":\"\"}", "null") +
                                  chatChunk("{\"content\":\"Hello\"}", "null") +
                                  chatChunk("{\"content\":\" world\"}", "null") +
                                  chatChunk("{}", "\"stop\"");
        // In awkward pieces, and nothing reaches the client before the end.
        for (qsizetype at = 0; at < stream.size(); at += 37)
            call->push(stream.mid(at, 37));
        watchQuietWindow();
        QVERIFY(rig.pair.received().isEmpty());
        // [DONE] is the end: the answer goes out without waiting for the transport's finish.
        call->push("data: [DONE]\n\n");
        QVERIFY(rig.pair.receiveResponse());

        const QByteArray got = rig.pair.received();
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
        QVERIFY(!rig.transport.log(0).aborted);
        QVERIFY(rig.call());
        rig.call()->succeed();
        QTRY_VERIFY_WITH_TIMEOUT(rig.transport.log(0).deleted, kWaitMs);
        QVERIFY(!rig.transport.log(0).aborted);
        QVERIFY(staysOpen(rig.pair));
    }

    void aggregateClientGoneAbortsUpstream()
    {
        Rig rig;
        rig.start(aggregatePlan());
        FakeCall *call = rig.call();
        call->sendHead(200, {{"Content-Type", "text/event-stream"}});
        call->push(chatChunk(R"({"content":"Hel"})"));
        rig.pair.client()->abort();
        QTRY_VERIFY_WITH_TIMEOUT(rig.transport.log(0).aborted, kWaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(rig.transport.log(0).deleted, kWaitMs);
    }

    void aggregateCutStreamIs502()
    {
        Rig rig;
        rig.start(aggregatePlan());
        FakeCall *call = rig.call();
        call->sendHead(200, {{"Content-Type", "text/event-stream"}});
        call->push(chatChunk(R"({"content":"Hel"})"));
        call->fail(UpstreamCall::Failure::BrokenBody, QStringLiteral("closed mid-body"));
        QVERIFY(rig.pair.receiveResponse());
        const QByteArray body = slp::openAiErrorJson(
            QStringLiteral("upstream stream ended before completion (request id: slpqtest0001)"),
            QStringLiteral("upstream_error"), "upstream_incomplete");
        QCOMPARE(rig.pair.received(), bad502(body));
    }

    void backpressureStopsAndResumesReads()
    {
        Rig rig;
        makeSlowClient(rig.pair);

        rig.start(defaultPlan());
        FakeCall *call = rig.call();
        constexpr qint64 kTotal = 48ll << 20;
        call->generate(kTotal);
        call->sendHead(200, {{"Content-Type", "application/octet-stream"}});

        // The exchange reads until the writer is no longer writable, then stops.
        QVERIFY(rig.transport.log(0).reads > 0);
        QVERIFY(Pair::waitFor([&] { return !rig.ex->writer->isWritable(); }));
        watchQuietWindow(); // the kernel's buffers fill up: the last reads it allowed happen
        const int stalledAt = rig.transport.log(0).reads;
        QVERIFY(!rig.ex->writer->isWritable());
        QVERIFY2(call->generatedLeft() > 0,
                 "the whole stream was read without backpressure"); // bounded, not everything
        qInfo() << "reads before backpressure:" << stalledAt << "of" << kTotal / (64 * 1024);
        // More upstream data announced: still no read while the client does not read.
        call->poke();
        call->poke();
        watchQuietWindow();
        QCOMPARE(rig.transport.log(0).reads, stalledAt);
        QVERIFY(!rig.transport.log(0).aborted);

        // The client reads: the socket drains, the writer becomes writable, reads resume.
        rig.pair.setReading(true);
        QTRY_VERIFY_WITH_TIMEOUT(rig.transport.log(0).reads > stalledAt, kWaitMs);
        QTRY_COMPARE_WITH_TIMEOUT(call->generatedLeft(), 0, 60000);
        call->succeed();
        QVERIFY(waitChunkedEnd(rig.pair, 60000));
        // Every byte arrived, in 64 KiB chunks.
        const QByteArray got = rig.pair.received();
        const qsizetype bodyStart = got.indexOf("\r\n\r\n") + 4;
        const qint64 chunks = kTotal / (64 * 1024);
        const qint64 framed = chunks * (5 + 2 + 64 * 1024 + 2) + 5; // "10000\r\n" ... "\r\n"
        QCOMPARE(qint64(got.size() - bodyStart), framed);
        QVERIFY(!rig.pair.closed());
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
        for (const QByteArray &piece : pieces)
            boundary.feed(piece);
        QCOMPARE(boundary.atBoundary(), atBoundary);
    }

    // A route without the keys arms nothing: no watch object, no timer, bytes as before.
    void noStreamKeysNoWatch()
    {
        Rig rig;
        rig.start(defaultPlan());
        FakeCall *call = rig.call();
        call->sendHead(200, kSseHead);
        call->push("data: 1\n\n");
        QVERIFY(rig.ex->exchange);
        QVERIFY(!rig.ex->exchange->findChild<StreamWatch *>());
        watchQuietWindow();
        call->push("data: 2\n\n");
        call->succeed();
        const QByteArray expected = twoEventsRelayed("text/event-stream; charset=utf-8");
        QVERIFY(rig.pair.receive(expected.size()));
        QCOMPARE(rig.pair.received(), expected);
    }

    // stream_idle_timeout 300ms: two events, then silence; the client's chunked response is
    // cut (no last chunk, connection closed) within the timeout plus 0.5 s, the upstream call
    // aborted, the stall counted.
    void idleTimeoutBreaksRelayedStream()
    {
        Rig rig;
        rig.start(watchedPlan(std::chrono::milliseconds(300), std::chrono::milliseconds(0)));
        FakeCall *call = rig.call();
        call->sendHead(200, kSseHead);
        call->push("data: 1\n\n");
        QElapsedTimer clock;
        clock.start();
        call->push("data: 2\n\n");
        QVERIFY(rig.pair.waitClosed());
        const qint64 cutMs = clock.elapsed();
        qInfo() << "stalled stream cut after" << cutMs << "ms (stream_idle_timeout 300ms)";
        QVERIFY2(cutMs >= 290 && cutMs < 800, QByteArray::number(cutMs));
        QVERIFY(rig.transport.log(0).aborted);
        rig.pair.setReading(true);
        bool ended = true;
        const QList<QByteArray> chunks = chunksOf(rig.pair.received(), &ended);
        QVERIFY(!ended);
        QCOMPARE(chunks, (QList<QByteArray>{"data: 1\n\n", "data: 2\n\n"}));
        QVERIFY(rig.pair.received().endsWith("data: 2\n\n\r\n"));
        QCOMPARE(modelCounter(rig.ex->metrics, slp::metric::streamIdleTimeouts), 1.0);
    }

    // With a Content-Length the cut leaves the body short, then closed.
    void idleTimeoutLeavesLengthShort()
    {
        Rig rig;
        rig.start(watchedPlan(std::chrono::milliseconds(200), std::chrono::milliseconds(0)));
        FakeCall *call = rig.call();
        call->sendHead(200, kJsonHead, 10);
        call->push("hello");
        QVERIFY(rig.pair.waitClosed());
        rig.pair.setReading(true);
        QCOMPARE(rig.pair.received(), relayedHead(10) + "hello");
        QVERIFY(rig.transport.log(0).aborted);
    }

    // Bytes every 150 ms keep a 400 ms idle timeout from firing, however long the stream.
    void idleTimeoutSparedByActivity()
    {
        Rig rig;
        rig.start(watchedPlan(std::chrono::milliseconds(400), std::chrono::milliseconds(0)));
        FakeCall *call = rig.call();
        call->sendHead(200, kSseHead);
        QElapsedTimer clock;
        clock.start();
        for (int i = 1; i <= 8; ++i) {
            call->push("data: " + QByteArray::number(i) + "\n\n");
            // The pace is the point: the next event is due 150 ms after this one.
            QVERIFY(Pair::waitFor([&] { return clock.elapsed() >= 150 * i; }));
            QVERIFY(!rig.transport.log(0).aborted);
        }
        call->succeed();
        QVERIFY(waitChunkedEnd(rig.pair));
        QCOMPARE(modelCounter(rig.ex->metrics, slp::metric::streamIdleTimeouts), 0.0);
        QVERIFY(!rig.pair.closed());
    }

    // On an aggregate route nothing was sent: the stall is a 502 with its own message.
    void idleTimeoutAggregateIs502()
    {
        Rig rig;
        rig.start(aggregatePlan(
            watchedPlan(std::chrono::milliseconds(300), std::chrono::milliseconds(100))));
        FakeCall *call = rig.call();
        call->sendHead(200, kSseHead);
        QElapsedTimer clock;
        clock.start();
        call->push(chatChunk(R"({"content":"Hel"})"));
        QVERIFY(rig.pair.receiveResponse());
        const qint64 cutMs = clock.elapsed();
        qInfo() << "stalled aggregate answered 502 after" << cutMs << "ms";
        QVERIFY2(cutMs >= 290 && cutMs < 800, QByteArray::number(cutMs));
        const QByteArray body = slp::openAiErrorJson(
            QStringLiteral("upstream stream stalled (request id: slpqtest0001)"),
            QStringLiteral("upstream_error"), "upstream_stalled");
        // No keep-alive comment either: an aggregate route writes nothing before its answer.
        QCOMPARE(rig.pair.received(), bad502(body));
        QVERIFY(rig.transport.log(0).aborted);
        QCOMPARE(modelCounter(rig.ex->metrics, slp::metric::streamIdleTimeouts), 1.0);
        QCOMPARE(modelCounter(rig.ex->metrics, slp::metric::sseKeepalives), 0.0);
    }

    // Bytes held back for a slow client are not the upstream's silence.
    void idleTimeoutNotWhileClientBacksUp()
    {
        Rig rig;
        makeSlowClient(rig.pair);
        rig.start(watchedPlan(std::chrono::milliseconds(200), std::chrono::milliseconds(0)));
        FakeCall *call = rig.call();
        call->generate(16ll << 20);
        call->sendHead(200, {{"Content-Type", "application/octet-stream"}});
        QVERIFY(Pair::waitFor([&] { return !rig.ex->writer->isWritable(); }));
        static_assert(kQuietWindowMs > 200, "the idle timer fires inside the window");
        watchQuietWindow();
        QVERIFY(!rig.ex->writer->isWritable());
        QVERIFY(!rig.transport.log(0).aborted);
        // The upstream ends while SLP still holds its bytes: the rest drains without a timer
        // that a slow (sanitized) event loop could trip between the last byte and the end.
        // Once drained, the exchange ends and deletes `call`: only the client is read from here.
        call->succeed();
        rig.pair.setReading(true);
        QVERIFY(waitChunkedEnd(rig.pair, 60000));
        QVERIFY(rig.pair.received().size() > (16ll << 20)); // every generated byte, framed
        QCOMPARE(modelCounter(rig.ex->metrics, slp::metric::streamIdleTimeouts), 0.0);
    }

    // sse_keepalive 100ms: comments before the first byte and between events, never inside a
    // partly relayed event; once that event's boundary arrives and silence goes on, they
    // resume. The upstream's bytes come through unchanged.
    void keepaliveOnlyAtBoundaries()
    {
        Rig rig;
        rig.start(watchedPlan(std::chrono::milliseconds(0), std::chrono::milliseconds(100)));
        FakeCall *call = rig.call();
        const auto seen = [&] { return int(rig.pair.received().count(kComment)); };
        QElapsedTimer clock;
        clock.start();
        call->sendHead(200, kSseHead);
        QVERIFY(Pair::waitFor([&] { return seen() >= 2; })); // before any body byte
        call->push("data: 1\n\n");
        const int beforeEvent = seen();
        QVERIFY(Pair::waitFor([&] { return seen() >= beforeEvent + 2; })); // after a whole event
        const int beforePartial = seen();
        const qint64 beforePartialMs = clock.elapsed();
        call->push("data: par");
        watchQuietWindow(); // inside an event: nothing
        const int duringPartial = seen() - beforePartial;
        call->push("tial\r\n");
        watchQuietWindow(); // a line ended, the event did not
        const int afterLine = seen() - beforePartial;
        call->push("\r\n");
        QVERIFY(Pair::waitFor([&] { return seen() >= beforePartial + 2; })); // they resume
        call->push("data: [DONE]\n\n");
        call->succeed();
        QVERIFY(waitChunkedEnd(rig.pair));
        bool ended = false;
        const QList<QByteArray> chunks = chunksOf(rig.pair.received(), &ended);
        QVERIFY(ended);
        const int comments = checkComments(chunks);
        qInfo() << "comments:" << comments << "before the partial event:" << beforePartial
                << "during it:" << duringPartial << "chunks:" << chunks;
        QVERIFY2(comments >= 0, "a comment inside an event");
        QCOMPARE(duringPartial, 0);
        QCOMPARE(afterLine, 0);
        // One per 100 ms of silence at most.
        QVERIFY2(beforePartial <= beforePartialMs / 100 + 1, QByteArray::number(beforePartial));
        QVERIFY2(comments - beforePartial >= 2, QByteArray::number(comments));
        QCOMPARE(chunks.first(), kComment); // no byte yet counts as a boundary
        QCOMPARE(withoutComments(chunks),
                 QByteArray("data: 1\n\ndata: partial\r\n\r\ndata: [DONE]\n\n"));
        QCOMPARE(modelCounter(rig.ex->metrics, slp::metric::sseKeepalives), double(comments));
    }

    // Comments are not upstream activity: a silent stream with keep-alives still stalls.
    void keepaliveDoesNotFeedIdleTimeout()
    {
        Rig rig;
        rig.start(watchedPlan(std::chrono::milliseconds(500), std::chrono::milliseconds(100)));
        FakeCall *call = rig.call();
        call->sendHead(200, kSseHead);
        QElapsedTimer clock;
        clock.start();
        call->push("data: 1\n\n");
        QVERIFY(rig.pair.waitClosed());
        const qint64 cutMs = clock.elapsed();
        rig.pair.setReading(true);
        bool ended = true;
        const QList<QByteArray> chunks = chunksOf(rig.pair.received(), &ended);
        const int comments = checkComments(chunks);
        qInfo() << "cut after" << cutMs << "ms with" << comments << "comments in between";
        QVERIFY2(cutMs >= 490 && cutMs < 1000, QByteArray::number(cutMs));
        QVERIFY(!ended);
        QVERIFY2(comments >= 2 && comments <= 5, QByteArray::number(comments));
        QCOMPARE(modelCounter(rig.ex->metrics, slp::metric::streamIdleTimeouts), 1.0);
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
        Rig rig;
        const ForwardPlan p =
            watchedPlan(std::chrono::milliseconds(0), std::chrono::milliseconds(50));
        rig.start(aggregate ? aggregatePlan(p) : p);
        FakeCall *call = rig.call();
        call->sendHead(200, headers, length);
        QVERIFY(rig.ex->exchange);
        QVERIFY(!rig.ex->exchange->findChild<StreamWatch *>()); // nothing to watch: nothing armed
        watchQuietWindow();
        if (!aggregate) { // (an aggregate would answer 502 to these)
            call->push("data: 1\n\n");
            call->push("data: 2\n\n");
            watchQuietWindow();
        }
        QVERIFY(!rig.pair.received().contains(kComment));
        QCOMPARE(modelCounter(rig.ex->metrics, slp::metric::sseKeepalives), 0.0);
        // The upstream ends its side too: a call still running when its exchange is done is
        // kept until it finishes (its connection goes back to the pool).
        if (call->isRunning())
            call->succeed();
    }

    // slp_responses_broken_total: a head reached the client and its body did not end cleanly.
    void brokenResponsesCountedByReason_data()
    {
        QTest::addColumn<QString>("reason");
        QTest::newRow("idle") << QStringLiteral("idle_timeout");
        QTest::newRow("closed") << QStringLiteral("upstream_closed");
        QTest::newRow("reset") << QStringLiteral("upstream_reset");
        QTest::newRow("client gone") << QStringLiteral("client_gone");
    }
    void brokenResponsesCountedByReason()
    {
        QFETCH(QString, reason);
        Rig rig;
        rig.start(watchedPlan(std::chrono::milliseconds(reason == "idle_timeout" ? 200 : 0),
                              std::chrono::milliseconds(0)));
        FakeCall *call = rig.call();
        call->sendHead(200, kSseHead);
        call->push("data: 1\n\n");
        QVERIFY(rig.pair.receive(10));
        if (reason == "upstream_closed") {
            call->fail(UpstreamCall::Failure::BrokenBody,
                       QStringLiteral("connection closed by the upstream mid-body"));
        } else if (reason == "upstream_reset") {
            call->fail(UpstreamCall::Failure::ResetBody,
                       QStringLiteral("connection reset by the upstream mid-body"));
        } else if (reason == "client_gone") {
            rig.pair.client()->abort();
        }
        QTRY_COMPARE_WITH_TIMEOUT(broken(rig.ex->metrics, reason), 1.0, kWaitMs);
        const QByteArray text = rig.ex->metrics.render();
        QCOMPARE(text.count("slp_responses_broken_total{"), 1); // that reason only
    }

    // No head reached the client (a 502, a 499, an aggregate's 502) or the body ended: none.
    void notBrokenWithoutHeadOrWhenComplete_data()
    {
        QTest::addColumn<int>("how");
        QTest::newRow("complete") << 0;
        QTest::newRow("502 before a head") << 1;
        QTest::newRow("client gone before a head") << 2;
        QTest::newRow("aggregate cut") << 3;
    }
    void notBrokenWithoutHeadOrWhenComplete()
    {
        QFETCH(int, how);
        Rig rig;
        rig.start(how == 3 ? aggregatePlan() : defaultPlan());
        FakeCall *call = rig.call();
        if (how == 0) {
            call->sendHead(200, kJsonHead, 2);
            call->push("{}");
            call->succeed();
        } else if (how == 1) {
            call->fail(UpstreamCall::Failure::Protocol, QStringLiteral("malformed"));
        } else if (how == 2) {
            rig.pair.client()->abort();
            QTRY_VERIFY_WITH_TIMEOUT(rig.transport.log(0).aborted, kWaitMs);
        } else {
            call->sendHead(200, kSseHead);
            call->push(chatChunk(R"({"content":"Hel"})"));
            call->fail(UpstreamCall::Failure::BrokenBody, QStringLiteral("closed mid-body"));
        }
        if (how != 2)
            QVERIFY(rig.pair.receiveResponse());
        QVERIFY(!rig.ex->metrics.render().contains("slp_responses_broken_total{"));
    }

    // Every line about a request: SLP's id first, the upstream's id once it answered, the
    // model, the client's id and the trace id; what came from outside escaped.
    void logLinesCarryTheIds()
    {
        Rig rig;
        ForwardPlan p = defaultPlan();
        p.clientRequestId = "c\x01\"x";
        p.traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        p.request.target = "/v1/chat/completions?a=%2F\x7f";
        rig.start(std::move(p), {}, true);
        FakeCall *call = rig.call();
        QTest::ignoreMessage(QtWarningMsg, kBrokeOffLine);
        call->sendHead(200, kJsonHead + HeaderList{{"X-Request-Id", "up-9\n"}}, 10);
        call->push("hello");
        call->fail(UpstreamCall::Failure::BrokenBody, QStringLiteral("cut"));
        QVERIFY(rig.pair.waitClosed());
    }

    void requestLineCarriesTheIds()
    {
        Rig rig;
        ForwardPlan p = defaultPlan();
        p.traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        p.renamedTo = QStringLiteral("Up\n1");
        p.request.target = "/v1/chat/completions?a=%2F";
        rig.start(std::move(p), {}, true);
        QTest::ignoreMessage(QtInfoMsg, QRegularExpression(kRequestLine));
        rig.call()->sendHead(200, kJsonHead + HeaderList{{"X-Request-Id", "up-3"}}, 2);
        rig.call()->push("{}");
        rig.call()->succeed();
        QVERIFY(rig.pair.receiveResponse());
    }
};

QTEST_GUILESS_MAIN(TestForwardExchange)
#include "tst_forward_exchange.moc"
