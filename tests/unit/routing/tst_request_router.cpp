// SPDX-License-Identifier: GPL-3.0-or-later
// RequestRouter against a fake UpstreamTransport (the seam): requests go in as the front
// hands them over, answers come out of a real ClientConnection on 127.0.0.1, and what the
// transport was asked to send is read back from the fake. Covers the model lookup, the body's
// rename (discovered and pinned), the aggregate route's splice, body errors and the plan the
// transport receives.

#include "connectionpair.h"
#include "fakeupstream.h"
#include "forward/forwardexchange.h"
#include "http/requesthead.h"
#include "http/responsewriter.h"
#include "observe/metrics.h"
#include "routing/requestrouter.h"
#include "routing/routetable.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using slp::InboundRequest;
using slp::MetricsRegistry;
using slp::RequestRouter;
using slp::RouteTable;
using slp::test::FakeTransport;
using Pair = slp::test::ConnectionPair;

namespace {

// Routes: disc (discovered as "Disc-Upstream" below), pin (pinned), agg (aggregate, pinned).
const QByteArray kYaml = R"(listen: "127.0.0.1:0"
backends:
  - name: disc
    url: http://127.0.0.1:9001
  - name: pin
    url: http://127.0.0.1:9002
    model: Pinned-Upstream
    timeout: 2m
    retry: true
  - name: agg
    url: http://127.0.0.1:9003
    model: agg
    aggregate: true
    stream_idle_timeout: 1500ms
  - name: keyed
    url: http://127.0.0.1:9004
    model: keyed
    headers:
      Authorization: Bearer route-key
      X-Vllm-Priority: 5
)";

std::shared_ptr<const RouteTable> table()
{
    auto result = slp::compileConfig(kYaml, QStringLiteral("router.yaml"));
    if (auto *errors = std::get_if<QList<slp::ConfigError>>(&result))
        qFatal("config did not compile: %s", qPrintable(errors->first().toString()));
    auto routes = std::make_shared<RouteTable>(std::get<slp::Config>(std::move(result)));
    routes->discovery(routes->find(QStringLiteral("disc"))).name = QStringLiteral("Disc-Upstream");
    return routes;
}

// One router, one client connection, one fake upstream.
struct Fixture
{
    Fixture()
    {
        slp::declareSlpMetrics(metrics);
        router = std::make_unique<RequestRouter>(table(), slp::ExchangeContext{transport, metrics},
                                                 slp::RouterOptions{});
    }
    // Hands one request to the router, as the front does once a request is complete.
    void send(const QByteArray &body, const QByteArray &target = "/v1/chat/completions",
              const slp::HeaderList &headers = {{"Host", "slp.test"}},
              const QByteArray &method = "POST")
    {
        InboundRequest request;
        request.method = method;
        request.setTarget(target);
        request.headers = headers;
        request.body = body;
        request.clientAddress = "127.0.0.1";
        router->handle(std::move(request), pair.openWriter({}));
    }
    double requests(const QString &model, int code) const
    {
        return metrics.value(slp::metric::requestsTotal, slp::metric::requestLabels(model, code));
    }
    // The JSON body of the answer that reached the client.
    QJsonObject answer()
    {
        const QByteArray got = pair.received();
        return QJsonDocument::fromJson(got.mid(got.indexOf("\r\n\r\n") + 4)).object();
    }

    MetricsRegistry metrics;
    FakeTransport transport;
    std::unique_ptr<RequestRouter> router;
    Pair pair; // first to go, with the exchanges its connection owns
};

QString errorCode(const QJsonObject &answer)
{
    return answer.value(u"error").toObject().value(u"code").toString();
}

} // namespace

class TestRequestRouter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void unknownModelIs404()
    {
        Fixture f;
        f.send(R"({"model":"nope","messages":[]})");
        QVERIFY(f.pair.receiveResponse());
        QVERIFY(f.pair.received().startsWith("HTTP/1.1 404 Not Found\r\n"));
        QCOMPARE(errorCode(f.answer()), QStringLiteral("model_not_found"));
        QCOMPARE(f.transport.started(), 0);
        QCOMPARE(f.requests(slp::metric::unknownModel, 404), 1.0);
    }

    void bodyErrorsAre4xx_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("message");
        QTest::newRow("not json") << QByteArray("{\"model\":") << 400
                                  << QByteArray("request body is not valid JSON");
        QTest::newRow("not an object")
            << QByteArray("[1]") << 400 << QByteArray("must be a JSON object");
        QTest::newRow("no model") << QByteArray("{\"messages\":[]}") << 400
                                  << QByteArray("has no \\\"model\\\" field");
        QTest::newRow("model not a string")
            << QByteArray("{\"model\":7}") << 400 << QByteArray("\\\"model\\\" must be a string");
        QTest::newRow("model twice") << QByteArray(R"({"model":"pin","model":"disc"})") << 400
                                     << QByteArray("more than once");
    }
    void bodyErrorsAre4xx()
    {
        QFETCH(QByteArray, body);
        QFETCH(int, status);
        QFETCH(QByteArray, message);
        Fixture f;
        f.send(body);
        QVERIFY(f.pair.receiveResponse());
        QVERIFY2(f.pair.received().startsWith("HTTP/1.1 " + QByteArray::number(status)),
                 f.pair.received().constData());
        QVERIFY2(f.pair.received().contains(message), f.pair.received().constData());
        QCOMPARE(f.transport.started(), 0);
        QCOMPARE(f.requests(slp::metric::unknownModel, status), 1.0);
    }

    // The discovered name replaces the model value's bytes and nothing else.
    void discoveredNameIsSpliced()
    {
        Fixture f;
        f.send(R"({ "model" : "disc", "messages":[{"role":"user","content":"disc"}]})");
        QCOMPARE(f.transport.started(), 1);
        QCOMPARE(
            f.transport.requests.at(0).body.joined(),
            QByteArray(
                R"({ "model" : "Disc-Upstream", "messages":[{"role":"user","content":"disc"}]})"));
    }

    void pinnedNameIsSpliced()
    {
        Fixture f;
        f.send(R"({"model":"pin","stream":true})");
        QCOMPARE(f.transport.started(), 1);
        QCOMPARE(f.transport.requests.at(0).body.joined(),
                 QByteArray(R"({"model":"Pinned-Upstream","stream":true})"));
    }

    // What the transport receives: the route's origin, the client's method and target
    // verbatim, the headers filtered; the route's settings ride along by reference.
    void transportReceivesThePlan()
    {
        Fixture f;
        f.send(R"({"model":"pin"})", "/v1/chat/completions?x=%2F&y",
               {{"Host", "slp.test"},
                {"Connection", "keep-alive, X-Hop"},
                {"X-Hop", "1"},
                {"X-Request-Id", "client-7"},
                {"Authorization", "Bearer k"}});
        QCOMPARE(f.transport.started(), 1);
        const slp::UpstreamRequest &sent = f.transport.requests.at(0);
        QCOMPARE(sent.method, QByteArray("POST"));
        QCOMPARE(sent.target, QByteArray("/v1/chat/completions?x=%2F&y"));
        QCOMPARE(sent.origin, QStringLiteral("http://127.0.0.1:9002"));
        QCOMPARE(sent.originUrl, QUrl(QStringLiteral("http://127.0.0.1:9002")));
        QCOMPARE(slp::headerValue(sent.headers, "authorization"), QByteArray("Bearer k"));
        QVERIFY(slp::headerValue(sent.headers, "x-hop").isEmpty());
        QVERIFY(slp::headerValue(sent.headers, "x-request-id").isEmpty());
        QCOMPARE(slp::headerValue(sent.headers, "x-forwarded-host"), QByteArray("slp.test"));

        // The exchange runs on the route's settings: retry: true re-dials once.
        f.transport.call(0)->fail(slp::UpstreamCall::Failure::Refused, QStringLiteral("refused"));
        QCOMPARE(f.transport.started(), 2);
        f.transport.call(1)->sendHead(200, {{"Content-Type", "application/json"}}, 2);
        f.transport.call(1)->push("{}");
        f.transport.call(1)->succeed();
        QVERIFY(f.pair.receiveResponse());
        QVERIFY(f.pair.received().startsWith("HTTP/1.1 200 OK\r\n"));
        QCOMPARE(f.requests(QStringLiteral("pin"), 200), 1.0);
    }

    // A non-streaming chat request on an aggregate route goes upstream with "stream": true
    // and comes back as one JSON answer.
    void aggregateRouteSplicesStreamAndAnswersJson()
    {
        Fixture f;
        f.send(R"({"model":"agg","messages":[]})");
        QCOMPARE(f.transport.started(), 1);
        QCOMPARE(f.transport.requests.at(0).body.joined(),
                 QByteArray(R"({"stream":true,"model":"agg","messages":[]})"));
        slp::test::FakeCall *call = f.transport.call(0);
        call->sendHead(200, {{"Content-Type", "text/event-stream"}});
        call->push("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,"
                   "\"model\":\"agg\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},"
                   "\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
        call->succeed();
        QVERIFY(f.pair.receiveResponse());
        const QJsonObject json = f.answer();
        QCOMPARE(json.value(u"object").toString(), QStringLiteral("chat.completion"));
        QCOMPARE(f.requests(QStringLiteral("agg"), 200), 1.0);
    }

    // Already streaming, another endpoint, or a "stream" value SLP cannot set (an object):
    // the body goes as sent, not aggregated (the last once went out empty).
    void aggregateRouteLeavesOthersAlone_data()
    {
        QTest::addColumn<QByteArray>("target");
        QTest::addColumn<QByteArray>("body");
        QTest::newRow("streaming")
            << QByteArray("/v1/chat/completions") << QByteArray(R"({"model":"agg","stream":true})");
        QTest::newRow("embeddings")
            << QByteArray("/v1/embeddings") << QByteArray(R"({"model":"agg","input":"x"})");
        QTest::newRow("compound stream")
            << QByteArray("/v1/chat/completions")
            << QByteArray(R"({"model":"agg","stream":{"include_usage":true}})");
    }
    void aggregateRouteLeavesOthersAlone()
    {
        QFETCH(QByteArray, target);
        QFETCH(QByteArray, body);
        Fixture f;
        f.send(body, target);
        QCOMPARE(f.transport.started(), 1);
        QCOMPARE(f.transport.requests.at(0).body.joined(), body);
    }

    // The endpoint table: a path names a resource, its entries the methods it takes; a
    // method it does not take is a 405 that lists them, a path it does not know a 404.
    void endpointTable_data()
    {
        QTest::addColumn<QByteArray>("method");
        QTest::addColumn<QByteArray>("target");
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("says");
        QTest::newRow("GET /healthz")
            << QByteArray("GET") << QByteArray("/healthz") << 200 << QByteArray("ok");
        QTest::newRow("POST /healthz")
            << QByteArray("POST") << QByteArray("/healthz") << 405 << QByteArray("it answers GET");
        QTest::newRow("DELETE /metrics") << QByteArray("DELETE") << QByteArray("/metrics") << 405
                                         << QByteArray("it answers GET");
        QTest::newRow("PUT /v1/models")
            << QByteArray("PUT") << QByteArray("/v1/models") << 405 << QByteArray("it answers GET");
        QTest::newRow("GET /v1/models/pin") << QByteArray("GET") << QByteArray("/v1/models/pin")
                                            << 200 << QByteArray("\"id\":\"pin\"");
        QTest::newRow("POST /v1/models/pin") << QByteArray("POST") << QByteArray("/v1/models/pin")
                                             << 405 << QByteArray("it answers GET");
        QTest::newRow("GET /v1/chat/completions")
            << QByteArray("GET") << QByteArray("/v1/chat/completions") << 405
            << QByteArray("it answers GET (a WebSocket upgrade), POST");
        QTest::newRow("GET /v2/x")
            << QByteArray("GET") << QByteArray("/v2/x") << 405 << QByteArray("it answers POST");
        QTest::newRow("OPTIONS /tokenize") << QByteArray("OPTIONS") << QByteArray("/tokenize")
                                           << 405 << QByteArray("it answers POST");
        QTest::newRow("GET /v1/responses/resp_1")
            << QByteArray("GET") << QByteArray("/v1/responses/resp_1") << 404
            << QByteArray("a stored response is named by its id alone");
        QTest::newRow("DELETE /v1/responses/resp_1")
            << QByteArray("DELETE") << QByteArray("/v1/responses/resp_1") << 404
            << QByteArray("docs/HTTP.md, \\\"Stored responses\\\"");
        QTest::newRow("PUT /v1/responses/resp_1")
            << QByteArray("PUT") << QByteArray("/v1/responses/resp_1") << 405
            << QByteArray("it answers GET, DELETE, POST");
        QTest::newRow("not a path")
            << QByteArray("POST") << QByteArray("*") << 404 << QByteArray("no such endpoint");
    }
    void endpointTable()
    {
        QFETCH(QByteArray, method);
        QFETCH(QByteArray, target);
        QFETCH(int, status);
        QFETCH(QByteArray, says);
        Fixture f;
        f.send(R"({"model":"pin"})", target, {{"Host", "slp.test"}}, method);
        QVERIFY(f.pair.receiveResponse());
        const QByteArray got = f.pair.received();
        QVERIFY2(got.startsWith("HTTP/1.1 " + QByteArray::number(status) + ' '), got.constData());
        QVERIFY2(got.contains(says), got.constData());
        QCOMPARE(f.transport.started(), 0);
    }

    // The connection scans a body as it arrives only for what the table routes by its model.
    void scanOnlyWhatIsRoutedByModel()
    {
        const auto head = [](const QByteArray &method, const QByteArray &target) {
            slp::RequestHead h;
            h.method = method;
            h.target = target;
            return h;
        };
        QVERIFY(RequestRouter::scanFor(head("POST", "/v1/chat/completions?x=1")));
        QVERIFY(!RequestRouter::scanFor(head("POST", "/metrics")));
        QVERIFY(!RequestRouter::scanFor(head("POST", "/v1/models/pin")));
        QVERIFY(!RequestRouter::scanFor(head("GET", "/v1/models")));
        QVERIFY(RequestRouter::scanFor(head("POST", "/tokenize")));
        QVERIFY(RequestRouter::scanFor(head("POST", "/v1/responses/resp_1/cancel")));
        QVERIFY(!RequestRouter::scanFor(head("GET", "/v1/responses/resp_1")));
    }

    // Any POST outside SLP's own paths is routed by its model like one under /v1/: vLLM's
    // paths outside /v1/ are the reason.
    void routesAnyPostPath_data()
    {
        QTest::addColumn<QByteArray>("target");
        for (const char *path : {"/tokenize", "/detokenize", "/v2/rerank", "/rerank", "/score",
                                 "/pooling", "/classify", "/v1/responses/resp_1/cancel"})
            QTest::newRow(path) << QByteArray(path);
    }
    void routesAnyPostPath()
    {
        QFETCH(QByteArray, target);
        Fixture f;
        f.send(R"({"model":"disc","prompt":"x"})", target);
        QCOMPARE(f.transport.started(), 1);
        QCOMPARE(f.transport.requests.at(0).target, target);
        QCOMPARE(f.transport.requests.at(0).body.joined(),
                 QByteArray(R"({"model":"Disc-Upstream","prompt":"x"})"));
    }

    // A POST that carries no model says how SLP routes and where to read more.
    void noModelSaysHowSlpRoutes()
    {
        Fixture f;
        f.send({}, "/tokenize");
        QVERIFY(f.pair.receiveResponse());
        QVERIFY2(f.pair.received().startsWith("HTTP/1.1 400 "), f.pair.received().constData());
        QVERIFY2(f.pair.received().contains("SLP routes each POST by its model"),
                 f.pair.received().constData());
        QVERIFY(f.pair.received().contains("docs/HTTP.md"));
        QCOMPARE(f.transport.started(), 0);
    }

    // A route's headers: replace the client's of the same name, in any case; the rest pass.
    void routeHeadersReplaceTheClients()
    {
        Fixture f;
        f.send(R"({"model":"keyed"})", "/v1/chat/completions",
               {{"Host", "slp.test"},
                {"Authorization", "Bearer client"},
                {"authorization", "Bearer client-2"},
                {"X-VLLM-PRIORITY", "0"},
                {"X-Client", "kept"}});
        QCOMPARE(f.transport.started(), 1);
        const slp::HeaderList &sent = f.transport.requests.at(0).headers;
        QStringList names;
        for (const auto &[name, value] : sent)
            names << QString::fromLatin1(name).toLower();
        QCOMPARE(names.count(QStringLiteral("authorization")), 1);
        QCOMPARE(names.count(QStringLiteral("x-vllm-priority")), 1);
        QCOMPARE(slp::headerValue(sent, "authorization"), QByteArray("Bearer route-key"));
        QCOMPARE(slp::headerValue(sent, "x-vllm-priority"), QByteArray("5"));
        QCOMPARE(slp::headerValue(sent, "x-client"), QByteArray("kept"));

        // A route without headers: leaves the client's alone.
        Fixture g;
        g.send(R"({"model":"pin"})", "/v1/chat/completions",
               {{"Host", "slp.test"}, {"Authorization", "Bearer client"}});
        QCOMPARE(slp::headerValue(g.transport.requests.at(0).headers, "authorization"),
                 QByteArray("Bearer client"));
    }
};

QTEST_GUILESS_MAIN(TestRequestRouter)
#include "tst_request_router.moc"
