// SPDX-License-Identifier: GPL-3.0-or-later
// What slp forwards, byte for byte: the request body (only the model value spliced), path and
// query, headers (minus hop-by-hop), and what comes back (status, reason, headers, gzip, close
// delimited and streamed bodies), all checked against what the mock upstream recorded or sent.
#include "testsupport.h"
#include "wire/parser.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <memory>

using namespace slp::test;
using slp::wire::headerValues;

namespace {

const QRegularExpression UpstreamIdRe(QStringLiteral("^gdqz[0-9a-f]{24}$"));
const QRegularExpression SlpIdRe(QStringLiteral("^slpq[0-9a-f]{24}$"));

// The pinned upstream names of the routes in the config below.
const QByteArray RenamedUpstream = "Upstream/Model-A";
const QString QuotedPin = QStringLiteral(R"(say "hi"\now)");

// What the upstream should see as Accept-Encoding when the client sent `sent` (empty: none).
QList<QByteArray> expectedAcceptEncoding(const QByteArray &sent)
{
    if (!sent.isEmpty())
        return {sent};
    if (SlpDaemon::transport() == QLatin1String("qnam"))
        return {"identity"};
    return {};
}

bool hasHeader(const HeaderList &headers, QByteArrayView name)
{
    for (const auto &h : headers)
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return true;
    return false;
}

QString describe(const HeaderList &headers)
{
    QStringList out;
    for (const auto &h : headers)
        out << QString::fromLatin1(h.first + ": " + h.second);
    return out.join(QStringLiteral(" | "));
}

// The response head as raw lines (status line first), without the body.
QList<QByteArray> headLines(const QByteArray &raw)
{
    QByteArray bytes = raw;
    // Skip interim 1xx heads.
    while (bytes.startsWith("HTTP/1.1 1")) {
        const qsizetype end = bytes.indexOf("\r\n\r\n");
        if (end < 0)
            break;
        bytes.remove(0, end + 4);
    }
    const qsizetype end = bytes.indexOf("\r\n\r\n");
    return bytes.left(end < 0 ? bytes.size() : end).split('\n');
}

// Ids and timestamps differ per request; everything else of a generated answer must not.
QByteArray normalizeGenerated(QByteArray body)
{
    static const QRegularExpression id(
        QStringLiteral(R"re("id":"(chatcmpl|cmpl|resp)-[0-9a-f]+")re"));
    static const QRegularExpression created(QStringLiteral(R"re("created":\d+)re"));
    QString s = QString::fromUtf8(body);
    s.replace(id, QStringLiteral(R"("id":"\1-ID")"));
    s.replace(created, QStringLiteral(R"("created":0)"));
    return s.toUtf8();
}

// A JSON body whose top-level model value is `literal` (quotes included), with the bytes
// around it returned so the expected splice can be built exactly.
struct SplitBody
{
    QByteArray before;
    QByteArray literal;
    QByteArray after;
    QByteArray whole() const { return before + literal + after; }
    QByteArray with(const QByteArray &lit) const { return before + lit + after; }
};

QByteArray largeBase64(qsizetype encodedBytes)
{
    QByteArray raw(encodedBytes / 4 * 3, Qt::Uninitialized);
    QRandomGenerator gen(20240607);
    for (qsizetype i = 0; i < raw.size(); ++i)
        raw[i] = static_cast<char>(gen.bounded(256));
    return raw.toBase64();
}

// The canned upstream's one answer: two Set-Cookie lines, a reason phrase of its own.
const QByteArray CannedResponse = "HTTP/1.1 201 Made It Here\r\n"
                                  "Content-Type: application/json\r\n"
                                  "Set-Cookie: a=1; Path=/\r\n"
                                  "Set-Cookie: b=2; HttpOnly\r\n"
                                  "X-Request-Id: gdqz0123456789abcdef01234567\r\n"
                                  "Content-Length: 2\r\n"
                                  "\r\n"
                                  "{}";

// Answers every complete request on `server` with CannedResponse (keep-alive).
void serveCanned(QTcpServer *server)
{
    QObject::connect(
        server, &QTcpServer::newConnection, server,
        [server] {
            while (QTcpSocket *socket = server->nextPendingConnection()) {
                auto parser = std::make_shared<slp::wire::Parser>(slp::wire::Parser::Kind::Request);
                parser->setStopAfterMessage(false);
                parser->onMessage = [socket] { socket->write(CannedResponse); };
                QObject::connect(
                    socket, &QTcpSocket::readyRead, socket,
                    [socket, parser] { parser->feed(socket->readAll()); });
                QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            }
        });
}

} // namespace

class TestForwardBytes : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanupTestCase();

    void renameSplicesOnlyModelBytes_data();
    void renameSplicesOnlyModelBytes();
    void noRenameIsByteIdentical_data();
    void noRenameIsByteIdentical();
    void renamedValueIsJsonEscaped();
    void largeBody_data();
    void largeBody();
    void pathAndQueryVerbatim_data();
    void pathAndQueryVerbatim();
    void requestHeaders();
    void forwardedHeadersPassThrough();
    void acceptEncodingIdentityWhenAbsent();
    void responseStatusReasonAndHeaders();
    void setCookieLinesKeptApart();
    void setCookieLinesFromUpstreamKeptApart();
    void repeatedRequestHeadersKeptApart();
    void requestIdOnLocalAnswers();
    void gzipPassesThrough_data();
    void gzipPassesThrough();
    void echoRoundTrip();
    void closeDelimitedBecomesChunked();
    void closeDelimitedToASlowClientArrivesWhole();
    void closeDelimitedUnderLoadArrivesWhole();
    void http10ClientGetsCloseDelimitedBody();
    void keepAliveSeveralRequests();
    void pipelinedAnsweredInOrder();
    void streamedChatThroughCurl();

private:
    HttpResult post(const QByteArray &target, const QByteArray &body,
                    const HeaderList &headers = {}, int timeoutMs = 10000);
    QJsonObject onlyRecorded();
    QByteArray rawPost(const QByteArray &target, const QByteArray &body, const HeaderList &headers,
                       QByteArrayView version = "HTTP/1.1");

    MockUpstream m_mock;
    SlpDaemon m_slp;
    QTemporaryDir m_tmp;
    QTcpServer m_canned; // an upstream with one fixed answer
};

void TestForwardBytes::initTestCase()
{
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY2(!MockUpstream::binary().isEmpty(), "set SLP_MOCK_BIN");
    QVERIFY(m_tmp.isValid());
    QVERIFY2(m_mock.start(), qPrintable(m_mock.errorString()));
    QVERIFY(m_canned.listen(QHostAddress::LocalHost, 0));
    serveCanned(&m_canned);
    // Every route is pinned or a passthrough edition: discovery never touches the mock, so its
    // recording holds exactly what the tests sent.
    const QString config = QStringLiteral(R"(header_timeout: 10s
backends:
  - name: chat-a
    url: %1
    model: "%2"
    timeout: 20s
  - name: same-id
    url: %1
    model: same-id
    timeout: 20s
  - name: quoted
    url: %1
    model: '%3'
    timeout: 20s
  - name: canned
    url: http://127.0.0.1:%4
    model: canned
    timeout: 20s
editions:
  - suffix: -raw
    url: "{{.URL}}"
    timeout: 20s
    apply_to: ["chat-a"]
)")
                               .arg(m_mock.url(), QString::fromLatin1(RenamedUpstream), QuotedPin)
                               .arg(m_canned.serverPort());
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
}

void TestForwardBytes::init()
{
    QVERIFY(m_mock.reset());
}

void TestForwardBytes::cleanupTestCase()
{
    m_slp.stop();
    m_mock.stop();
}

HttpResult TestForwardBytes::post(const QByteArray &target, const QByteArray &body,
                                  const HeaderList &headers, int timeoutMs)
{
    HeaderList h = headers;
    if (!hasHeader(h, "content-type"))
        h.prepend({"Content-Type", "application/json"});
    return httpRequest("POST", m_slp.url() + QString::fromLatin1(target), body, h, timeoutMs);
}

QByteArray TestForwardBytes::rawPost(const QByteArray &target, const QByteArray &body,
                                     const HeaderList &headers, QByteArrayView version)
{
    QByteArray out = "POST " + target + ' ' + version.toByteArray() + "\r\n";
    out += "Host: 127.0.0.1:" + QByteArray::number(m_slp.port()) + "\r\n";
    out += "Content-Type: application/json\r\n";
    for (const auto &h : headers)
        out += h.first + ": " + h.second + "\r\n";
    out += "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body;
    return out;
}

// The one request the mock recorded since init().
QJsonObject TestForwardBytes::onlyRecorded()
{
    const QJsonArray got = m_mock.waitForRequests(1, 5000);
    if (got.size() != 1) {
        qWarning("expected exactly one upstream request, got %d", int(got.size()));
        return {};
    }
    return got.first().toObject();
}

void TestForwardBytes::renameSplicesOnlyModelBytes_data()
{
    QTest::addColumn<QByteArray>("before");
    QTest::addColumn<QByteArray>("literal");
    QTest::addColumn<QByteArray>("after");

    // Odd whitespace, model not first, escapes, raw UTF-8, and "model" keys nested in messages
    // (and inside strings) that must keep their bytes.
    QTest::newRow("odd-layout")
        << QByteArray(" \r\n{ \"messages\" :\t[ {\"role\":\"user\",\"model\": \"chat-a\","
                      "\"content\":\"caf\\u00e9 \xe2\x98\x95 \\\"model\\\":\\\"chat-a\\\" "
                      "\\/ \\\\ \\n\"} , {\"model\":{\"model\":\"chat-a\"}} ] ,\n  \"model\"   :\t")
        << QByteArray("\"chat-a\"")
        << QByteArray(
               " ,\"temperature\" : 0.5e+0,\"stream\":false,\"nested\":{\"model\":\"chat-a\"},"
               "\"emoji\":\"\xf0\x9f\x98\x80 \\ud83d\\ude00\"}\r\n");
    QTest::newRow("model-first") << QByteArray("{\"model\":") << QByteArray("\"chat-a\"")
                                 << QByteArray(
                                        ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    QTest::newRow("model-last-no-space")
        << QByteArray("{\"max_tokens\":5,\"messages\":[],\"model\":") << QByteArray("\"chat-a\"")
        << QByteArray("}");
    // The id written with escapes still names the route; the whole literal is replaced.
    QTest::newRow("escaped-value") << QByteArray("{\"messages\":[], \"model\" : ")
                                   << QByteArray("\"ch\\u0061t\\u002da\"") << QByteArray(" }");
    QTest::newRow("escaped-key") << QByteArray("{\"mod\\u0065l\":") << QByteArray("\"chat-a\"")
                                 << QByteArray(",\"model_extra\":\"chat-a\"}");
}

void TestForwardBytes::renameSplicesOnlyModelBytes()
{
    QFETCH(QByteArray, before);
    QFETCH(QByteArray, literal);
    QFETCH(QByteArray, after);
    const SplitBody body{before, literal, after};
    const QByteArray expected = body.with('"' + RenamedUpstream + '"');

    const HttpResult r = post("/v1/chat/completions", body.whole(), {{"X-Mock-Echo", "1"}});
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    // The echo is what the upstream read, as the upstream sent it back.
    QCOMPARE(r.body, expected);

    const QJsonObject rec = onlyRecorded();
    QCOMPARE(MockUpstream::body(rec), expected);
    QCOMPARE(rec.value("body_size").toInteger(), qint64(expected.size()));
    QCOMPARE(rec.value("chunked").toBool(), false);
    const HeaderList headers = MockUpstream::headers(rec);
    QCOMPARE(headerValues(headers, "content-length"),
             QList<QByteArray>{QByteArray::number(expected.size())});
}

void TestForwardBytes::noRenameIsByteIdentical_data()
{
    QTest::addColumn<QByteArray>("model");
    // An edition without model: forwards its own id; a pin equal to the id changes nothing.
    QTest::newRow("edition-passthrough") << QByteArray("chat-a-raw");
    QTest::newRow("pinned-to-same-id") << QByteArray("same-id");
}

void TestForwardBytes::noRenameIsByteIdentical()
{
    QFETCH(QByteArray, model);
    const QByteArray body =
        "\n{ "
        "\"messages\":[{\"role\":\"user\",\"model\":\"x\",\"content\":\"\\u00e9\xc3\xa9\\\"\"}],"
        "  \"model\" :\t\"" +
        model + "\" , \"n\":1.0E2 }\n\n";
    const HttpResult r = post("/v1/chat/completions", body, {{"X-Mock-Echo", "1"}});
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body, body);

    const QJsonObject rec = onlyRecorded();
    QCOMPARE(MockUpstream::body(rec), body);
    QCOMPARE(rec.value("body_sha256").toString().toLatin1(), sha256Hex(body));
    QCOMPARE(MockUpstream::header(rec, "content-length"), QByteArray::number(body.size()));
}

void TestForwardBytes::renamedValueIsJsonEscaped()
{
    const QByteArray body = R"({"model":"quoted","messages":[]})";
    const QByteArray expected = R"({"model":"say \"hi\"\\now","messages":[]})";
    const HttpResult r = post("/v1/chat/completions", body, {{"X-Mock-Echo", "1"}});
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body, expected);
    const QJsonObject rec = onlyRecorded();
    QCOMPARE(MockUpstream::body(rec), expected);
    QCOMPARE(MockUpstream::header(rec, "content-length"), QByteArray::number(expected.size()));
    // And it is still JSON naming the pinned model.
    QCOMPARE(QJsonDocument::fromJson(MockUpstream::body(rec)).object().value("model").toString(),
             QuotedPin);
}

void TestForwardBytes::largeBody_data()
{
    QTest::addColumn<bool>("useCurl");
    QTest::addColumn<QByteArray>("model");
    QTest::addColumn<QByteArray>("upstreamModel");
    QTest::newRow("raw-rename") << false << QByteArray("chat-a") << RenamedUpstream;
    QTest::newRow("raw-passthrough")
        << false << QByteArray("chat-a-raw") << QByteArray("chat-a-raw");
    QTest::newRow("curl-rename") << true << QByteArray("chat-a") << RenamedUpstream;
    QTest::newRow("curl-passthrough")
        << true << QByteArray("chat-a-raw") << QByteArray("chat-a-raw");
}

void TestForwardBytes::largeBody()
{
    QFETCH(bool, useCurl);
    QFETCH(QByteArray, model);
    QFETCH(QByteArray, upstreamModel);

    static const QByteArray image = largeBase64(22 * 1000 * 1000);
    const QByteArray before = "{\"model\":";
    const QByteArray after = ",\"messages\":[{\"role\":\"user\",\"content\":\"" + image + "\"}]}";
    const QByteArray body = before + '"' + model + '"' + after;
    const QByteArray expectedSha = sha256Hex(before + '"' + upstreamModel + '"' + after);
    const qsizetype expectedSize = body.size() - model.size() + upstreamModel.size();
    QVERIFY(body.size() > 22 * 1000 * 1000);

    if (useCurl) {
        const QString file = m_tmp.filePath(QStringLiteral("large.json"));
        {
            QFile f(file);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QCOMPARE(f.write(body), body.size());
        }
        const QString out = m_tmp.filePath(QStringLiteral("large.out"));
        const CommandResult c = runCommand("curl",
                                           {"-sS", "-v", "-o", out, "-w", "%{http_code}", "-H",
                                            "Content-Type: application/json", "--data-binary",
                                            "@" + file, m_slp.url() + "/v1/chat/completions"},
                                           60000);
        QVERIFY2(c.exitCode == 0, c.stdErr.right(2000).constData());
        QCOMPARE(c.stdOut, QByteArray("200"));
        // curl asked for 100-continue and slp gave it, so curl did not sit out its 1 s wait.
        QVERIFY2(c.stdErr.contains("> Expect: 100-continue"), c.stdErr.left(2000).constData());
        QVERIFY2(c.stdErr.contains("< HTTP/1.1 100 Continue"), c.stdErr.left(2000).constData());
        qInfo("curl posted %lld bytes in %lld ms", qint64(body.size()), c.elapsedMs);
    } else {
        RawConnection conn;
        QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
        QByteArray head = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Content-Type: application/json\r\nExpect: 100-continue\r\n"
                          "Content-Length: " +
                          QByteArray::number(body.size()) + "\r\n\r\n";
        QVERIFY(conn.send(head));
        // slp answers Expect itself: the interim head arrives before any body byte is sent.
        QVERIFY2(conn.waitForData("HTTP/1.1 100 Continue\r\n\r\n", 5000),
                 conn.received().constData());
        QVERIFY(conn.send(body, 60000));
        const HttpResult r = conn.readResponse(60000);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.interimStatuses, QList<int>{100});
        QCOMPARE(r.status, 200);
        QCOMPARE(QJsonDocument::fromJson(r.body).object().value("model").toString().toUtf8(),
                 upstreamModel);
    }

    const QJsonObject rec = onlyRecorded();
    QCOMPARE(rec.value("body_size").toInteger(), qint64(expectedSize));
    QCOMPARE(rec.value("body_sha256").toString().toLatin1(), expectedSha);
    QCOMPARE(MockUpstream::header(rec, "content-length"), QByteArray::number(expectedSize));
    // slp consumed the Expect itself; the upstream gets the body without it.
    QVERIFY(!hasHeader(MockUpstream::headers(rec), "expect"));
}

void TestForwardBytes::pathAndQueryVerbatim_data()
{
    QTest::addColumn<QByteArray>("target");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("brief") << QByteArray("/v1/chat/completions?foo=bar&x=%20y")
                           << QByteArray("/v1/chat/completions?foo=bar&x=%20y");
    QTest::newRow("plain-escapes")
        << QByteArray("/v1/chat/completions?b=%2F&d=a+b&e=%C3%A9&f&g=&h=1=2")
        << QByteArray("/v1/chat/completions?b=%2F&d=a+b&e=%C3%A9&f&g=&h=1=2");
    // The qnam transport sends a QUrl, which applies RFC 3986 6.2.2 normalisation: escaped
    // unreserved characters are decoded and hex digits upper-cased. Decoding an unreserved
    // character is the one change it may make (docs/DECISIONS.md); anything more, such as the
    // upper-cased %2f, is a 400 under qnam (an empty `expected`). The socket transport writes
    // the client's target as it came.
    const bool qnam = SlpDaemon::transport() == QLatin1String("qnam");
    QTest::newRow("escapes-qnam-decodes")
        << QByteArray("/v1/chat/completions?a=%7E&b=%2F")
        << (qnam ? QByteArray("/v1/chat/completions?a=~&b=%2F")
                 : QByteArray("/v1/chat/completions?a=%7E&b=%2F"));
    QTest::newRow("escapes-qnam-would-upcase")
        << QByteArray("/v1/chat/completions?a=%7E&c=%2f")
        << (qnam ? QByteArray() : QByteArray("/v1/chat/completions?a=%7E&c=%2f"));
    QTest::newRow("other-endpoint") << QByteArray("/v1/responses?api-version=2024-10-01")
                                    << QByteArray("/v1/responses?api-version=2024-10-01");
    QTest::newRow("encoded-path") << QByteArray("/v1/x%2Fy/completions")
                                  << QByteArray("/v1/x%2Fy/completions");
}

void TestForwardBytes::pathAndQueryVerbatim()
{
    QFETCH(QByteArray, target);
    QFETCH(QByteArray, expected);
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(rawPost(target, R"({"model":"same-id"})", {{"Connection", "close"}})));
    const HttpResult r = conn.readResponse(10000);
    QVERIFY2(r.ok(), qPrintable(r.error));
    if (expected.isEmpty()) {
        QCOMPARE(r.status, 400); // qnam would change it: not sent
        QVERIFY(r.body.contains("upstream_transport: qnam"));
        return;
    }
    QCOMPARE(r.status, 200);
    const QJsonObject rec = onlyRecorded();
    QCOMPARE(rec.value("method").toString(), QStringLiteral("POST"));
    QCOMPARE(rec.value("target").toString().toLatin1(), expected);
}

void TestForwardBytes::requestHeaders()
{
    const QByteArray inboundHost = "proxy.example:8443";
    const HeaderList sent{
        {"Host", inboundHost},
        {"Content-Type", "application/json"},
        {"Authorization", "Bearer sk-test"},
        {"Connection", "close, X-Secret"},
        {"Keep-Alive", "timeout=5"},
        {"TE", "trailers"},
        {"Trailer", "X-Checksum"},
        {"Upgrade", "websocket"},
        {"Proxy-Connection", "keep-alive"},
        {"X-Secret", "must-not-pass"},
        {"X-Request-Id", "client-chosen-id"},
        {"X-Forwarded-For", "1.2.3.4"},
        {"Accept-Encoding", "gzip, br"},
        {"User-Agent", "tst-forward/1"},
        {"OpenAI-Organization", "org-123"},
        {"X-Custom", "a \"quoted\" value; with=params"},
    };
    const QByteArray body = R"({"model":"same-id"})";
    const HttpResult r = httpRequest("POST", m_slp.url() + "/v1/chat/completions", body, sent);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);

    const QJsonObject rec = onlyRecorded();
    const HeaderList got = MockUpstream::headers(rec);
    const QString all = describe(got);

    // Hop-by-hop headers, and the one named in Connection, stay on the client's hop.
    for (const char *name :
         {"keep-alive", "te", "trailer", "upgrade", "proxy-connection", "x-secret"})
        QVERIFY2(!hasHeader(got, name),
                 qPrintable(QStringLiteral("%1 forwarded: %2").arg(name, all)));
    // The upstream hop may have its own Connection header, never the client's tokens.
    for (const QByteArray &v : headerValues(got, "connection")) {
        QVERIFY2(!v.toLower().contains("close") && !v.toLower().contains("x-secret"),
                 qPrintable(all));
    }
    // Host is the upstream's own authority.
    QCOMPARE(headerValues(got, "host"),
             QList<QByteArray>{"127.0.0.1:" + QByteArray::number(m_mock.port())});
    // The client's id is never forwarded (nor adopted).
    QVERIFY2(!hasHeader(got, "x-request-id"), qPrintable(all));
    QVERIFY(r.header("x-request-id") != "client-chosen-id");
    // End-to-end headers pass unchanged.
    for (const char *name : {"content-type", "authorization", "accept-encoding", "user-agent",
                             "openai-organization", "x-custom"})
        QCOMPARE(headerValues(got, name), headerValues(sent, name));
    QCOMPARE(headerValues(got, "x-forwarded-for"), QList<QByteArray>{"1.2.3.4, 127.0.0.1"});
    QCOMPARE(headerValues(got, "x-forwarded-proto"), QList<QByteArray>{"http"});
    QCOMPARE(headerValues(got, "x-forwarded-host"), QList<QByteArray>{inboundHost});
    QCOMPARE(headerValues(got, "content-length"),
             QList<QByteArray>{QByteArray::number(body.size())});
    // The end-to-end headers keep their relative order.
    QList<QByteArray> order;
    for (const auto &h : got) {
        const QByteArray n = h.first.toLower();
        if (n == "content-type" || n == "authorization" || n == "openai-organization" ||
            n == "x-custom")
            order << n;
    }
    QCOMPARE(order, (QList<QByteArray>{"content-type", "authorization", "openai-organization",
                                       "x-custom"}));
}

void TestForwardBytes::forwardedHeadersPassThrough()
{
    const HeaderList sent{
        {"Content-Type", "application/json"},
        {"X-Forwarded-Proto", "https"},
        {"X-Forwarded-Host", "api.example.com"},
    };
    const HttpResult r =
        httpRequest("POST", m_slp.url() + "/v1/chat/completions", R"({"model":"same-id"})", sent);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    const HeaderList got = MockUpstream::headers(onlyRecorded());
    QCOMPARE(headerValues(got, "x-forwarded-proto"), QList<QByteArray>{"https"});
    QCOMPARE(headerValues(got, "x-forwarded-host"), QList<QByteArray>{"api.example.com"});
    // Without one, the client's address starts the list.
    QCOMPARE(headerValues(got, "x-forwarded-for"), QList<QByteArray>{"127.0.0.1"});
}

void TestForwardBytes::acceptEncodingIdentityWhenAbsent()
{
    const HttpResult r = post("/v1/chat/completions", R"({"model":"same-id"})");
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    const HeaderList got = MockUpstream::headers(onlyRecorded());
    // Never a gzip the client did not ask for: QNAM would add one and then silently inflate,
    // so the qnam transport says "identity"; the socket transport adds nothing at all.
    QCOMPARE(headerValues(got, "accept-encoding"), expectedAcceptEncoding({}));
    // No Host from the client's request line is invented either: it is the inbound Host.
    QCOMPARE(headerValues(got, "x-forwarded-host"),
             QList<QByteArray>{"127.0.0.1:" + QByteArray::number(m_slp.port())});
}

void TestForwardBytes::responseStatusReasonAndHeaders()
{
    const HeaderList knobs{
        {"Content-Type", "application/json"},
        {"X-Mock-Status", "418"},
        {"X-Mock-Header", "X-Upstream-Thing: v1"},
    };
    const QByteArray body = R"({"model":"same-id"})";
    const HttpResult direct =
        httpRequest("POST", m_mock.url() + "/v1/chat/completions", body, knobs);
    QVERIFY2(direct.ok(), qPrintable(direct.error));
    QCOMPARE(direct.status, 418);
    QVERIFY(m_mock.reset());

    const HttpResult r = httpRequest("POST", m_slp.url() + "/v1/chat/completions", body, knobs);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, direct.status);
    QCOMPARE(r.reason, direct.reason);
    QCOMPARE(headLines(r.raw).value(0), QByteArray("HTTP/1.1 418 " + direct.reason + "\r"));
    QCOMPARE(r.body, direct.body);
    for (const char *name : {"content-type", "content-length", "server", "x-upstream-thing"})
        QCOMPARE(r.headerValues(name), direct.headerValues(name));
    // The upstream answered: its id is the one the client sees, and only it.
    const QList<QByteArray> ids = r.headerValues("x-request-id");
    QCOMPARE(ids.size(), 1);
    QVERIFY2(UpstreamIdRe.match(QString::fromLatin1(ids.first())).hasMatch(),
             ids.first().constData());
    QVERIFY(ids.first() != direct.header("x-request-id"));
    QCOMPARE(m_mock.requests().size(), 1);
}

void TestForwardBytes::setCookieLinesKeptApart()
{
    // As the brief's mock knob does it: two X-Mock-Header lines on the request make the mock
    // send two Set-Cookie lines. Both request lines must reach it apart for that to work.
    const HeaderList knobs{
        {"Content-Type", "application/json"},
        {"X-Mock-Header", "Set-Cookie: a=1; Path=/"},
        {"X-Mock-Header", "Set-Cookie: b=2; HttpOnly"},
    };
    const HttpResult r =
        httpRequest("POST", m_slp.url() + "/v1/chat/completions", R"({"model":"same-id"})", knobs);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QList<QByteArray> cookies;
    for (const QByteArray &l : headLines(r.raw))
        if (l.toLower().startsWith("set-cookie:"))
            cookies << l.mid(11).trimmed();
    QCOMPARE(cookies, (QList<QByteArray>{"a=1; Path=/", "b=2; HttpOnly"}));
}

void TestForwardBytes::setCookieLinesFromUpstreamKeptApart()
{
    // The response side alone: an upstream that always answers with two Set-Cookie lines and
    // a reason phrase of its own.
    const HttpResult r = post("/v1/chat/completions", R"({"model":"canned"})");
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 201);
    QCOMPARE(r.reason, QByteArray("Made It Here"));
    QCOMPARE(r.body, QByteArray("{}"));
    QList<QByteArray> cookies;
    for (const QByteArray &l : headLines(r.raw))
        if (l.toLower().startsWith("set-cookie:"))
            cookies << l.mid(11).trimmed();
    QCOMPARE(cookies, (QList<QByteArray>{"a=1; Path=/", "b=2; HttpOnly"}));
    QCOMPARE(r.headerValues("x-request-id"), QList<QByteArray>{"gdqz0123456789abcdef01234567"});
}

void TestForwardBytes::repeatedRequestHeadersKeptApart()
{
    const HeaderList sent{
        {"Content-Type", "application/json"},
        {"X-Dup", "one"},
        {"X-Dup", "two"},
    };
    const HttpResult r =
        httpRequest("POST", m_slp.url() + "/v1/chat/completions", R"({"model":"same-id"})", sent);
    QVERIFY2(r.ok(), qPrintable(r.error));
    const HeaderList got = MockUpstream::headers(onlyRecorded());
    QCOMPARE(headerValues(got, "x-dup"), (QList<QByteArray>{"one", "two"}));
}

void TestForwardBytes::requestIdOnLocalAnswers()
{
    // No upstream involved: slp's own id.
    const HttpResult r = httpRequest("GET", m_slp.url() + "/healthz");
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QVERIFY2(SlpIdRe.match(QString::fromLatin1(r.header("x-request-id"))).hasMatch(),
             r.header("x-request-id").constData());
    const HttpResult unknown = post("/v1/chat/completions", R"({"model":"nope"})");
    QCOMPARE(unknown.status, 404);
    QVERIFY(SlpIdRe.match(QString::fromLatin1(unknown.header("x-request-id"))).hasMatch());
    QCOMPARE(m_mock.requests().size(), 0);
}

void TestForwardBytes::gzipPassesThrough_data()
{
    QTest::addColumn<QByteArray>("acceptEncoding");
    QTest::newRow("client-accepts-gzip") << QByteArray("gzip");
    QTest::newRow("client-sent-none") << QByteArray();
}

void TestForwardBytes::gzipPassesThrough()
{
    QFETCH(QByteArray, acceptEncoding);
    HeaderList knobs{
        {"Content-Type", "application/json"}, {"X-Mock-Gzip", "1"}, {"X-Mock-Echo", "1"}};
    if (!acceptEncoding.isEmpty())
        knobs << qMakePair(QByteArray("Accept-Encoding"), acceptEncoding);
    const QByteArray body =
        R"({"model":"same-id","messages":[{"role":"user","content":"zip me"}]})";
    const HttpResult direct =
        httpRequest("POST", m_mock.url() + "/v1/chat/completions", body, knobs);
    QVERIFY2(direct.ok(), qPrintable(direct.error));
    QCOMPARE(direct.header("content-encoding"), QByteArray("gzip"));
    QVERIFY(direct.body.startsWith("\x1f\x8b"));
    QVERIFY(m_mock.reset());

    const HttpResult r = httpRequest("POST", m_slp.url() + "/v1/chat/completions", body, knobs);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.header("content-encoding"), QByteArray("gzip"));
    // Still compressed, byte for byte what the upstream sent.
    QCOMPARE(r.body, direct.body);
    QCOMPARE(r.header("content-length"), QByteArray::number(direct.body.size()));
    const HeaderList got = MockUpstream::headers(onlyRecorded());
    QCOMPARE(headerValues(got, "accept-encoding"), expectedAcceptEncoding(acceptEncoding));
}

void TestForwardBytes::echoRoundTrip()
{
    // A body with every kind of byte JSON allows, echoed by the upstream: what comes back is
    // what the upstream read, which is what the client sent.
    QByteArray content;
    for (int c = 0x20; c < 0x7f; ++c)
        if (c != '"' && c != '\\')
            content += char(c);
    content +=
        "\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\\uffff \xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80";
    const QByteArray body =
        "{\"model\":\"same-id\",\"messages\":[{\"role\":\"user\",\"content\":\"" +
        content.repeated(200) + "\"}]}";
    const HttpResult r = post("/v1/chat/completions", body, {{"X-Mock-Echo", "1"}});
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.header("content-type"), QByteArray("application/json"));
    QCOMPARE(r.header("content-length"), QByteArray::number(body.size()));
    QCOMPARE(sha256Hex(r.body), sha256Hex(body));
    QCOMPARE(r.body, body);
}

void TestForwardBytes::closeDelimitedBecomesChunked()
{
    const qint64 size = 300000;
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(rawPost(
        "/v1/chat/completions", R"({"model":"same-id"})",
        {{"X-Mock-Close-Delimited", "1"}, {"X-Mock-Large-Response", QByteArray::number(size)}})));
    const HttpResult r = conn.readResponse(20000);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.header("transfer-encoding").toLower(), QByteArray("chunked"));
    QVERIFY(!r.hasHeader("content-length"));
    QCOMPARE(r.body.size(), size);
    const QByteArray alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    QCOMPARE(r.body, alphabet.repeated(size / alphabet.size() + 1).left(size));
    QVERIFY(r.raw.endsWith("0\r\n\r\n"));
    // A complete chunked body: the client connection stays usable.
    QVERIFY(conn.send(
        rawPost("/v1/chat/completions", R"({"model":"same-id"})", {{"X-Mock-Echo", "1"}})));
    const HttpResult again = conn.readResponse(10000);
    QVERIFY2(again.ok(), qPrintable(again.error));
    QCOMPARE(again.body, QByteArray(R"({"model":"same-id"})"));
}

void TestForwardBytes::closeDelimitedToASlowClientArrivesWhole()
{
    // The upstream sends a 16 MB close-delimited body and closes while this client is not
    // reading: slp's buffers fill and it stops reading upstream, with the rest of the body
    // and the close already waiting. The close ends the body only after every byte before it:
    // Qt 6.4's QNAM, reading with a bounded buffer, reported the close at once and dropped
    // what it had not read, which slp relayed as a clean, short chunked body.
    const qint64 size = 16 * 1000 * 1000;
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(rawPost(
        "/v1/chat/completions", R"({"model":"same-id"})",
        {{"X-Mock-Close-Delimited", "1"}, {"X-Mock-Large-Response", QByteArray::number(size)}})));
    QThread::msleep(1500); // not reading: no event loop runs here
    const HttpResult r = conn.readResponse(60000);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body.size(), size);
    QVERIFY(r.raw.endsWith("0\r\n\r\n"));
}

void TestForwardBytes::closeDelimitedUnderLoadArrivesWhole()
{
    // 72 close-delimited 300 KB answers, 12 at a time: with slp busy, its unread reply fills
    // up while the upstream's tail and close are already in. Under ASan, qnam relayed 3 in 36
    // as clean 200s cut at 224-256 KiB before the fix (the close was taken for the end).
    const QString curl = QStandardPaths::findExecutable(QStringLiteral("curl"));
    QVERIFY2(!curl.isEmpty(), "curl is needed");
    constexpr int kRequests = 72;
    constexpr qint64 kSize = 300000;
    QStringList args{QStringLiteral("--no-progress-meter"),
                     QStringLiteral("--parallel"),
                     QStringLiteral("--parallel-max"),
                     QStringLiteral("12"),
                     QStringLiteral("-H"),
                     QStringLiteral("X-Mock-Close-Delimited: 1"),
                     QStringLiteral("-H"),
                     QStringLiteral("X-Mock-Large-Response: %1").arg(kSize),
                     QStringLiteral("-d"),
                     QStringLiteral(R"({"model":"same-id"})"),
                     QStringLiteral("-w"),
                     QStringLiteral("%{http_code} %{size_download}\n")};
    for (int i = 0; i < kRequests; ++i)
        args << m_slp.url() + QStringLiteral("/v1/chat/completions") << QStringLiteral("-o")
             << QStringLiteral("/dev/null");
    const CommandResult c = runCommand(curl, args, 60000);
    QVERIFY2(c.exitCode == 0, c.stdErr.constData());
    const QList<QByteArray> lines = c.stdOut.trimmed().split('\n');
    QCOMPARE(lines.size(), kRequests);
    int whole = 0;
    for (const QByteArray &line : lines)
        whole += line == "200 " + QByteArray::number(kSize) ? 1 : 0;
    QVERIFY2(whole == kRequests, c.stdOut.constData());
}

void TestForwardBytes::http10ClientGetsCloseDelimitedBody()
{
    // A streamed (chunked upstream) answer has no length: an HTTP/1.0 client can only be told
    // where it ends by the close.
    const QByteArray body = R"({"model":"chat-a","stream":true,"messages":[]})";
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(rawPost("/v1/chat/completions", body, {}, "HTTP/1.0")));
    const HttpResult r = conn.readResponse(20000);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QVERIFY2(!r.hasHeader("transfer-encoding"), r.raw.left(600).constData());
    QVERIFY(!r.hasHeader("content-length"));
    QVERIFY(r.peerClosed);
    const QList<QByteArray> events = sseData(r.body);
    QVERIFY(events.size() > 3);
    QCOMPARE(events.last(), QByteArray("[DONE]"));
    QVERIFY(r.body.endsWith("data: [DONE]\n\n"));
    QVERIFY(events.first().contains("\"model\":\"" + RenamedUpstream + "\""));
}

void TestForwardBytes::keepAliveSeveralRequests()
{
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QSet<QByteArray> ids;
    for (int i = 0; i < 4; ++i) {
        const QByteArray body = "{\"model\":\"same-id\",\"i\":" + QByteArray::number(i) + "}";
        QVERIFY(conn.send(rawPost("/v1/chat/completions", body, {{"X-Mock-Echo", "1"}})));
        const HttpResult r = conn.readResponse(10000);
        QVERIFY2(r.ok(), qPrintable(QStringLiteral("request %1: %2").arg(i).arg(r.error)));
        QCOMPARE(r.status, 200);
        QCOMPARE(r.body, body);
        QVERIFY(!r.peerClosed);
        ids.insert(r.header("x-request-id"));
    }
    QVERIFY(conn.isOpen());
    QCOMPARE(ids.size(), 4);
    QCOMPARE(m_mock.waitForRequests(4, 5000).size(), 4);
}

void TestForwardBytes::pipelinedAnsweredInOrder()
{
    // Three requests in one write; the first is the slowest, yet answers keep request order.
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    const QByteArray b1 = R"({"model":"same-id","n":"first"})";
    const QByteArray b2 = R"({"model":"same-id","n":"second"})";
    const QByteArray b3 = R"({"model":"chat-a","n":"third"})";
    QVERIFY(conn.send(
        rawPost("/v1/chat/completions", b1, {{"X-Mock-Echo", "1"}, {"X-Mock-Delay-Ms", "700"}}) +
        rawPost("/v1/chat/completions", b2, {{"X-Mock-Echo", "1"}, {"X-Mock-Delay-Ms", "100"}}) +
        rawPost("/v1/chat/completions", b3, {{"X-Mock-Echo", "1"}})));
    const HttpResult r1 = conn.readResponse(10000);
    const HttpResult r2 = conn.readResponse(10000);
    const HttpResult r3 = conn.readResponse(10000);
    QVERIFY2(r1.ok() && r2.ok() && r3.ok(), qPrintable(r1.error + r2.error + r3.error));
    QCOMPARE(r1.body, b1);
    QCOMPARE(r2.body, b2);
    QCOMPARE(r3.body, QByteArray(R"({"model":")" + RenamedUpstream + R"(","n":"third"})"));
    QVERIFY(r1.headMs >= 500);
    QVERIFY(conn.isOpen());
    QCOMPARE(m_mock.waitForRequests(3, 5000).size(), 3);
}

void TestForwardBytes::streamedChatThroughCurl()
{
    const QByteArray body =
        R"({"model":"chat-a","stream":true,"messages":[{"role":"user","content":"think"}]})";
    const QByteArray upstreamBody =
        R"({"model":")" + RenamedUpstream +
        R"(","stream":true,"messages":[{"role":"user","content":"think"}]})";
    auto curl = [](const QString &url, const QByteArray &data) {
        return runCommand("curl",
                          {"-sS", "-N", "-D", "-", "-H", "Content-Type: application/json", "-H",
                           "X-Mock-Event-Interval-Ms: 20", "--data-binary", QString::fromUtf8(data),
                           url + "/v1/chat/completions"},
                          30000);
    };
    const CommandResult viaSlp = curl(m_slp.url(), body);
    QVERIFY2(viaSlp.exitCode == 0, viaSlp.stdErr.constData());
    const CommandResult direct = curl(m_mock.url(), upstreamBody);
    QVERIFY2(direct.exitCode == 0, direct.stdErr.constData());

    auto split = [](const QByteArray &out) {
        const qsizetype end = out.indexOf("\r\n\r\n");
        return qMakePair(out.left(end), out.mid(end + 4));
    };
    const auto [slpHead, slpBody] = split(viaSlp.stdOut);
    const auto [mockHead, mockBody] = split(direct.stdOut);
    QVERIFY2(slpHead.startsWith("HTTP/1.1 200"), slpHead.constData());
    QVERIFY(slpHead.toLower().contains("content-type: text/event-stream"));

    const QList<QByteArray> events = sseData(slpBody);
    QVERIFY2(events.size() >= 5, slpBody.constData());
    QCOMPARE(events.last(), QByteArray("[DONE]"));
    QVERIFY(slpBody.endsWith("data: [DONE]\n\n"));
    int reasoning = 0;
    for (const QByteArray &e : events)
        reasoning += e.contains("\"reasoning_content\":") ? 1 : 0;
    QVERIFY(reasoning >= 1);
    const QJsonObject last = QJsonDocument::fromJson(events.at(events.size() - 2)).object();
    QVERIFY2(last.value("usage").isObject(), events.at(events.size() - 2).constData());
    QVERIFY(last.value("usage").toObject().value("completion_tokens").toInt() > 0);
    // Event for event what the upstream sends for the same (renamed) body, ids and times aside.
    QCOMPARE(normalizeGenerated(slpBody), normalizeGenerated(mockBody));
}

QTEST_GUILESS_MAIN(TestForwardBytes)
#include "tst_forward_bytes.moc"
