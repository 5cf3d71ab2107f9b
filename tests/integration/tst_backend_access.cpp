// SPDX-License-Identifier: GPL-3.0-or-later
// Backends as they are deployed (docs/CONFIG.md "headers", docs/HTTP.md): a backend that
// answers 401 without its key (the mock's --api-key, as vLLM's), reached through a route's
// `headers:` with ${VAR} from slp's environment. Discovery, a chat, a stream, a multipart
// upload, vLLM's paths outside /v1/ and a Realtime tunnel each carry exactly one
// Authorization, the route's, over the client's own; the key shows nowhere (--check, the
// dump, ?debug, /metrics, the request log, a 502); an unset variable refuses the config; and
// each request a mainstream parser could read another model from is a 400 that reaches no one.
#include "testsupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace slp::test;

namespace {

const QByteArray kKey = "sk-slp-test-7f3a9c";
const QString kUpstream = QStringLiteral("Qwen/Qwen3-8B");

QByteArray upgradeRequest(const QByteArray &target)
{
    return "GET " + target +
           " HTTP/1.1\r\nHost: slp\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
           "Authorization: Bearer client-key\r\nSec-WebSocket-Version: 13\r\n"
           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
}

QByteArray post(const QByteArray &target, const QByteArray &contentType, const QByteArray &body)
{
    return "POST " + target + " HTTP/1.1\r\nHost: slp\r\nConnection: close\r\n" + contentType +
           "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

QByteArray multipart(const QByteArray &modelHeaders)
{
    return "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n"
           "Content-Type: audio/wav\r\n\r\nRIFF\r\n--b\r\n" +
           modelHeaders + "\r\n\r\nkeyed\r\n--b--\r\n";
}

} // namespace

class TestBackendAccess : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void discoveryCarriesTheKey();
    void everyRequestCarriesOneKey_data();
    void everyRequestCarriesOneKey();
    void realtimeTunnelCarriesOneKey();
    void keyShowsNowhere();
    void unsetVariableRefusesTheConfig();
    void ambiguityReachesNoBackend_data();
    void ambiguityReachesNoBackend();

private:
    // The one request the mock recorded after `since`, checked for the route's headers.
    QJsonObject onlyRequestSince(qint64 since);
    qint64 lastSeq();
    QString config() const;

    MockUpstream m_mock;
    SlpDaemon m_slp;
    DeadPort m_dead;
};

QString TestBackendAccess::config() const
{
    return QStringLiteral("log_requests: true\n"
                          "backends:\n"
                          "  - name: keyed\n"
                          "    url: %1\n"
                          "    headers:\n"
                          "      Authorization: \"Bearer ${SLP_TEST_BACKEND_KEY}\"\n"
                          "      X-Vllm-Priority: \"3\"\n"
                          "  - name: dead\n"
                          "    url: %2\n"
                          "    model: dead\n"
                          "    headers: {Authorization: \"Bearer ${SLP_TEST_BACKEND_KEY}\"}\n")
        .arg(m_mock.url(), m_dead.url());
}

void TestBackendAccess::initTestCase()
{
    QVERIFY2(m_mock.start({kUpstream}, {"--api-key", QString::fromLatin1(kKey)}),
             qPrintable(m_mock.errorString()));
    QVERIFY2(m_slp.start(config(), {}, {{"SLP_TEST_BACKEND_KEY", QString::fromLatin1(kKey)}}),
             qPrintable(m_slp.errorString()));
    // Discovery learns the backend's name only with the key: a 401 would leave it pending.
    QJsonObject keyed;
    QTRY_VERIFY_WITH_TIMEOUT(
        (keyed = QJsonDocument::fromJson(
                     httpRequest("GET", m_slp.url() + "/v1/models/keyed?debug").body)
                     .object(),
         keyed.value("discovery").toString() == QStringLiteral("discovered")),
        10000);
    QCOMPARE(keyed.value("upstream_model").toString(), kUpstream);
}

qint64 TestBackendAccess::lastSeq()
{
    const QJsonArray seen = m_mock.requests();
    return seen.isEmpty() ? 0 : seen.last().toObject().value("seq").toInteger();
}

QJsonObject TestBackendAccess::onlyRequestSince(qint64 since)
{
    const QJsonArray seen = m_mock.waitForRequests(1, 5000, since);
    if (seen.size() != 1) {
        qWarning("the mock saw %d requests, not 1", int(seen.size()));
        return {};
    }
    return seen.first().toObject();
}

// Exactly one Authorization (the route's) and one X-Vllm-Priority on a recorded request.
static bool carriesTheRouteHeaders(const QJsonObject &recorded)
{
    QList<QByteArray> auth;
    QList<QByteArray> priority;
    for (const auto &[name, value] : MockUpstream::headers(recorded)) {
        if (name.compare("authorization", Qt::CaseInsensitive) == 0)
            auth << value;
        if (name.compare("x-vllm-priority", Qt::CaseInsensitive) == 0)
            priority << value;
    }
    if (auth == QList<QByteArray>{"Bearer " + kKey} && priority == QList<QByteArray>{"3"})
        return true;
    qWarning() << "Authorization" << auth.size() << "header(s), X-Vllm-Priority" << priority;
    return false;
}

void TestBackendAccess::discoveryCarriesTheKey()
{
    int probes = 0;
    for (const QJsonValue &v : m_mock.requests()) {
        const QJsonObject r = v.toObject();
        if (r.value("target").toString() != QStringLiteral("/v1/models"))
            continue;
        ++probes;
        QVERIFY(carriesTheRouteHeaders(r));
    }
    QVERIFY(probes >= 1);
}

void TestBackendAccess::everyRequestCarriesOneKey_data()
{
    QTest::addColumn<QByteArray>("target");
    QTest::addColumn<QByteArray>("contentType");
    QTest::addColumn<QByteArray>("body");
    const QByteArray json = "Content-Type: application/json\r\n";
    QTest::newRow("chat") << QByteArray("/v1/chat/completions") << json
                          << QByteArray(R"({"model":"keyed","messages":[]})");
    QTest::newRow("stream") << QByteArray("/v1/chat/completions") << json
                            << QByteArray(R"({"model":"keyed","messages":[],"stream":true})");
    QTest::newRow("multipart upload")
        << QByteArray("/v1/audio/transcriptions")
        << QByteArray("Content-Type: multipart/form-data; boundary=b\r\n")
        << multipart("Content-Disposition: form-data; name=\"model\"");
    for (const char *path : {"/tokenize", "/detokenize", "/v2/rerank", "/score", "/pooling"})
        QTest::newRow(path) << QByteArray(path) << json
                            << QByteArray(R"({"model":"keyed","prompt":"x","query":"q"})");
}

// The client's own Authorization (twice, in two spellings) is replaced, not added to.
void TestBackendAccess::everyRequestCarriesOneKey()
{
    QFETCH(QByteArray, target);
    QFETCH(QByteArray, contentType);
    QFETCH(QByteArray, body);
    const qint64 since = lastSeq();
    const HttpResult r = rawHttp(
        m_slp.host(), m_slp.port(),
        post(target,
             contentType + "Authorization: Bearer client-key\r\nauthorization: Bearer other\r\n",
             body));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    const QJsonObject seen = onlyRequestSince(since);
    QCOMPARE(seen.value("target").toString(), QString::fromLatin1(target));
    QVERIFY(carriesTheRouteHeaders(seen));
    // Renamed to the name discovery learned (the mock answers 404 to any other).
    QVERIFY2(MockUpstream::body(seen).contains(kUpstream.toUtf8()),
             MockUpstream::body(seen).constData());
    if (body.contains("\"stream\":true"))
        QVERIFY(r.body.contains("data: [DONE]"));
}

void TestBackendAccess::realtimeTunnelCarriesOneKey()
{
    const qint64 since = lastSeq();
    RawConnection c;
    QVERIFY(c.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(c.send(upgradeRequest("/v1/realtime?model=keyed")));
    const HttpResult r = c.readResponse(5000);
    QCOMPARE(r.status, 101);
    const QJsonObject seen = onlyRequestSince(since);
    QVERIFY(carriesTheRouteHeaders(seen));
    QVERIFY2(seen.value("target").toString().contains(QStringLiteral("Qwen%2FQwen3-8B")),
             qPrintable(seen.value("target").toString()));
    c.abort();
}

void TestBackendAccess::keyShowsNowhere()
{
    // A 502 from the dead route: its key was set, and its error body says nothing of it.
    const HttpResult failed = httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                                          R"({"model":"dead","messages":[]})");
    QCOMPARE(failed.status, 502);
    const HttpResult debug = httpRequest("GET", m_slp.url() + "/v1/models?debug");
    const HttpResult metrics = httpRequest("GET", m_slp.url() + "/metrics");
    QCOMPARE(debug.status, 200);
    QCOMPARE(metrics.status, 200);
    const CommandResult check =
        runCommand(SlpDaemon::binary(), {"--check", "--config", m_slp.configPath()}, 15000, {},
                   {{"SLP_TEST_BACKEND_KEY", QString::fromLatin1(kKey)}});
    QCOMPARE(check.exitCode, 0);
    const QByteArray checked = check.stdOut + check.stdErr;
    QVERIFY2(checked.contains("headers=Authorization,X-Vllm-Priority"), checked.constData());
    QVERIFY(m_slp.stderrText().contains(QStringLiteral("headers=Authorization")));
    const QList<QPair<const char *, QByteArray>> places{{"a 502 body", failed.raw},
                                                        {"?debug", debug.body},
                                                        {"/metrics", metrics.body},
                                                        {"slp --check", checked},
                                                        {"the log", m_slp.stderrText().toUtf8()}};
    for (const auto &[where, text] : places) {
        QVERIFY2(!text.isEmpty(), where);
        QVERIFY2(!text.contains(kKey), where);
    }
}

void TestBackendAccess::unsetVariableRefusesTheConfig()
{
    const CommandResult check =
        runCommand(SlpDaemon::binary(), {"--check", "--config", m_slp.configPath()}, 15000);
    QVERIFY(check.exitCode != 0);
    // The line as written (a suite variant may have put keys above it); column 30 is the "${".
    QFile file(m_slp.configPath());
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = file.readAll().split('\n');
    int line = 0;
    while (line < lines.size() && !lines.at(line).contains("Authorization: \"Bearer"))
        ++line;
    QVERIFY2(check.stdErr.contains(":" + QByteArray::number(line + 1) +
                                   ":30: backends[0].headers.Authorization: "
                                   "${SLP_TEST_BACKEND_KEY} is not set in SLP's environment"),
             check.stdErr.constData());
}

void TestBackendAccess::ambiguityReachesNoBackend_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<QByteArray>("says");
    const QByteArray json = "Content-Type: application/json\r\n";
    const QByteArray form = "Content-Type: multipart/form-data; boundary=b\r\n";
    QTest::newRow("model query key twice, encoded")
        << upgradeRequest("/v1/realtime?model=keyed&%6Dodel=other") << QByteArray("more than once");
    QTest::newRow("model query after ';'")
        << upgradeRequest("/v1/realtime?x=1;model=other&model=keyed") << QByteArray("';'");
    QTest::newRow("two Content-Disposition headers")
        << post("/v1/audio/transcriptions", form,
                multipart("Content-Disposition: form-data; name=\"model\"\r\n"
                          "Content-Disposition: form-data; name=\"prompt\""))
        << QByteArray("more than one Content-Disposition");
    QTest::newRow("Content-Disposition repeats a parameter")
        << post("/v1/audio/transcriptions", form,
                multipart("Content-Disposition: form-data; name=\"model\"; filename=a; "
                          "filename=b"))
        << QByteArray("parameter twice");
    QTest::newRow("transport padding after a delimiter")
        << post("/v1/audio/transcriptions", form,
                "--b \r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nkeyed\r\n--b--\r\n")
        << QByteArray("transport padding");
    QTest::newRow("raw UTF-8 in the query's model")
        << upgradeRequest("/v1/realtime?model=keyed\xc3\xa9") << QByteArray("0x7F");
    QTest::newRow("Content-Type twice")
        << post("/v1/chat/completions", json + form, R"({"model":"keyed"})")
        << QByteArray("Content-Type is given more than once");
    QTest::newRow("model in another case too")
        << post("/v1/chat/completions", json, R"({"model":"keyed","Model":"other"})")
        << QByteArray("ambiguous");
    QTest::newRow("lone surrogate")
        << post("/v1/chat/completions", json, R"({"model":"keyed\ud800"})")
        << QByteArray("lone surrogate");
}

void TestBackendAccess::ambiguityReachesNoBackend()
{
    QFETCH(QByteArray, request);
    QFETCH(QByteArray, says);
    const qint64 since = lastSeq();
    const HttpResult r = rawHttp(m_slp.host(), m_slp.port(), request);
    QCOMPARE(r.status, 400);
    QVERIFY2(r.body.contains(says), r.body.constData());
    // A good request after it is the proof the mock has seen all there was to see.
    const HttpResult ok = httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                                      R"({"model":"keyed","messages":[]})");
    QCOMPARE(ok.status, 200);
    const QJsonArray seen = m_mock.waitForRequests(1, 5000, since);
    QCOMPARE(seen.size(), 1);
    QCOMPARE(seen.first().toObject().value("target").toString(),
             QStringLiteral("/v1/chat/completions"));
}

QTEST_GUILESS_MAIN(TestBackendAccess)
#include "tst_backend_access.moc"
