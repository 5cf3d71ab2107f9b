// SPDX-License-Identifier: GPL-3.0-or-later
// slp_test_wire: the HTTP/1.1 parser and serializers of the test client, the mock upstream
// and slp_bench. Every stream is also fed split at every byte, and one byte at a time, and
// must give the same events.

#include "wire/parser.h"

#include <QTest>

using namespace slp::wire;

namespace {

// What a parser reported, as text: consecutive body pieces are joined (how a stream is split
// decides the pieces, not what they carry).
struct Trace
{
    QByteArrayList events;
    QByteArray body;
    int messages = 0;

    void flushBody()
    {
        if (!body.isEmpty())
            events << "body " + body;
        body.clear();
    }
};

struct Options
{
    bool eof = false;        // finish() after the last byte
    bool headFirst = false;  // the first response answers HEAD
    bool keepHeaders = true; // Parser::setKeepHeaders
};

QByteArray describe(const Head &h)
{
    QByteArray s = "head ";
    if (!h.method.isEmpty())
        s += h.method + ' ' + h.target + ' ' + h.version;
    else
        s += h.version + ' ' + QByteArray::number(h.status) + ' ' + h.reason;
    for (const auto &kv : h.headers)
        s += " [" + kv.first + ": " + kv.second + ']';
    s += h.chunked ? " chunked" : "";
    s += h.contentLength >= 0 ? " length=" + QByteArray::number(h.contentLength) : "";
    s += h.keepAlive ? " keep-alive" : " close";
    return s;
}

// Feeds pieces in order; each piece is fed until it is used up (feed stops after a message).
Trace run(Parser::Kind kind, const QList<QByteArrayView> &pieces, const Options &o = {})
{
    Parser p(kind);
    p.setKeepHeaders(o.keepHeaders);
    p.expectHeadResponse(o.headFirst);
    Trace t;
    p.onHead = [&](const Head &h) {
        t.flushBody();
        t.events << describe(h);
    };
    p.onBody = [&](QByteArrayView piece) { t.body += piece.toByteArray(); };
    p.onChunk = [&](qint64 size) {
        t.flushBody();
        t.events << "chunk " + QByteArray::number(size);
    };
    p.onMessage = [&] {
        t.flushBody();
        t.events << "message";
        ++t.messages;
    };
    for (QByteArrayView piece : pieces) {
        while (!piece.isEmpty() && !p.failed()) {
            const qsizetype n = p.feed(piece);
            if (n <= 0 && !p.failed()) {
                t.events << "stuck";
                return t;
            }
            piece = piece.sliced(n);
        }
        if (p.failed())
            break;
    }
    if (o.eof && !p.failed())
        p.finish();
    t.flushBody();
    if (p.failed())
        t.events << "error " + QByteArray::number(int(p.failure()));
    return t;
}

Trace whole(Parser::Kind kind, const QByteArray &bytes, const Options &o = {})
{
    return run(kind, {QByteArrayView(bytes)}, o);
}

// The same stream split at every byte (two pieces), and one byte at a time, gives `expected`.
void checkSplits(Parser::Kind kind, const QByteArray &bytes, const Trace &expected,
                 const Options &o = {})
{
    for (qsizetype cut = 1; cut < bytes.size(); ++cut) {
        const QByteArrayView v(bytes);
        const Trace t = run(kind, {v.first(cut), v.sliced(cut)}, o);
        if (t.events != expected.events) {
            qWarning() << "split at" << cut << "of" << bytes.size() << ":" << t.events << "expected"
                       << expected.events;
            QFAIL("a split changed the events");
        }
    }
    QList<QByteArrayView> bytesOneByOne;
    for (qsizetype i = 0; i < bytes.size(); ++i)
        bytesOneByOne << QByteArrayView(bytes).sliced(i, 1);
    QCOMPARE(run(kind, bytesOneByOne, o).events, expected.events);
}

constexpr auto Req = Parser::Kind::Request;
constexpr auto Resp = Parser::Kind::Response;

} // namespace

class TestWireParser : public QObject
{
    Q_OBJECT
private slots:
    void responseWithLength();
    void headersKeepOrderRepeatsAndSpelling();
    void chunkedResponse();
    void closeDelimitedResponse();
    void closeInsideBodyFails();
    void noBodyResponses_data();
    void noBodyResponses();
    void headResponseThenNext();
    void interimThenFinal();
    void pipelinedResponsesStopAtEachEnd();
    void requestWithLength();
    void chunkedRequest();
    void pipelinedRequestsAndStrayCrlf();
    void requestKeepAlive_data();
    void requestKeepAlive();
    void malformed_data();
    void malformed();
    void headTooLarge();
    void withoutHeaders();
    void serializersRoundTrip();
    void splitsGiveTheSameEvents_data();
    void splitsGiveTheSameEvents();
};

void TestWireParser::responseWithLength()
{
    const Trace t = whole(
        Resp, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello");
    QCOMPARE(t.events, QByteArrayList({"head HTTP/1.1 200 OK [Content-Type: text/plain] "
                                       "[Content-Length: 5] length=5 keep-alive",
                                       "body hello", "message"}));
}

void TestWireParser::headersKeepOrderRepeatsAndSpelling()
{
    Parser p(Resp);
    Head got;
    p.onHead = [&](const Head &h) { got = h; };
    const QByteArray in = "HTTP/1.1 404 Not Quite Found\r\nX-B: 1\r\nset-cookie: a=1\r\n"
                          "X-A:   padded value  \r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n";
    QCOMPARE(p.feed(in), in.size());
    QCOMPARE(got.status, 404);
    QCOMPARE(got.reason, QByteArray("Not Quite Found"));
    QCOMPARE(got.headers, HeaderList({{"X-B", "1"},
                                      {"set-cookie", "a=1"},
                                      {"X-A", "padded value"},
                                      {"Set-Cookie", "b=2"},
                                      {"Content-Length", "0"}}));
    QCOMPARE(got.values("SET-COOKIE"), QByteArrayList({"a=1", "b=2"}));
    QCOMPARE(got.header("x-a"), QByteArray("padded value"));
    QVERIFY(!got.has("x-c"));
    QCOMPARE(p.messages(), 1);
    QVERIFY(!p.inMessage());
}

void TestWireParser::chunkedResponse()
{
    const Trace t = whole(Resp, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "5;ext=1\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-Trailer: t\r\n\r\n");
    QCOMPARE(t.events,
             QByteArrayList({"head HTTP/1.1 200 OK [Transfer-Encoding: chunked] chunked keep-alive",
                             "body hello", "chunk 5", "body , world!!!", "chunk 10", "message"}));
}

void TestWireParser::closeDelimitedResponse()
{
    const QByteArray in = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\n";
    // Without the close the body has not ended yet.
    QCOMPARE(whole(Resp, in).messages, 0);
    const Trace t = whole(Resp, in, {.eof = true});
    QCOMPARE(t.events, QByteArrayList({"head HTTP/1.1 200 OK [Content-Type: text/event-stream] "
                                       "close",
                                       "body data: 1\n\n", "message"}));
}

void TestWireParser::closeInsideBodyFails()
{
    Parser p(Resp);
    p.feed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf");
    QVERIFY(p.headDone());
    QVERIFY(p.inMessage());
    p.finish();
    QCOMPARE(p.failure(), Parser::Failure::Closed);
    QVERIFY(!p.error().isEmpty());

    Parser q(Resp);
    q.feed("HTTP/1.1 200 OK\r\nContent-Le");
    QVERIFY(!q.headDone());
    q.finish();
    QCOMPARE(q.failure(), Parser::Failure::Closed);

    Parser idle(Resp); // nothing began: a close between messages is no failure
    idle.finish();
    QVERIFY(!idle.failed());
}

void TestWireParser::noBodyResponses_data()
{
    QTest::addColumn<QByteArray>("status");
    QTest::newRow("204") << QByteArray("204 No Content");
    QTest::newRow("304") << QByteArray("304 Not Modified");
}

void TestWireParser::noBodyResponses()
{
    // A Content-Length on a 204/304 describes another representation: no body follows, the
    // next bytes are the next response.
    QFETCH(QByteArray, status);
    const QByteArray in = "HTTP/1.1 " + status + "\r\nContent-Length: 7\r\n\r\n" +
                          "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    const Trace t = whole(Resp, in);
    QCOMPARE(t.messages, 2);
    QCOMPARE(t.events.value(1), QByteArray("message"));
    QCOMPARE(t.events.value(3), QByteArray("body ok"));
}

void TestWireParser::headResponseThenNext()
{
    const QByteArray in = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
                          "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc";
    const Trace t = whole(Resp, in, {.headFirst = true});
    QCOMPARE(
        t.events,
        QByteArrayList({"head HTTP/1.1 200 OK [Content-Length: 100] length=100 keep-alive",
                        "message", "head HTTP/1.1 200 OK [Content-Length: 3] length=3 keep-alive",
                        "body abc", "message"}));
}

void TestWireParser::interimThenFinal()
{
    const QByteArray in =
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
        "HTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx";
    const Trace t = whole(Resp, in);
    QCOMPARE(t.events,
             QByteArrayList({"head HTTP/1.1 100 Continue keep-alive",
                             "head HTTP/1.1 103 Early Hints [Link: </a>] keep-alive",
                             "head HTTP/1.1 201 Created [Content-Length: 1] length=1 keep-alive",
                             "body x", "message"}));
}

void TestWireParser::pipelinedResponsesStopAtEachEnd()
{
    const QByteArray first = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na";
    const QByteArray second =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nb\r\n0\r\n\r\n";
    const QByteArray third = "HTTP/1.1 500 Oops\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    const QByteArray in = first + second + third;
    Parser p(Resp);
    QCOMPARE(p.feed(in), first.size());
    QCOMPARE(p.messages(), 1);
    QCOMPARE(p.feed(QByteArrayView(in).sliced(first.size())), second.size());
    QCOMPARE(p.messages(), 2);
    QCOMPARE(p.feed(QByteArrayView(in).sliced(first.size() + second.size())), third.size());
    QCOMPARE(p.messages(), 3);
    QCOMPARE(p.head().status, 500);
    QVERIFY(!p.head().keepAlive);

    Parser all(Resp);
    all.setStopAfterMessage(false);
    QCOMPARE(all.feed(in), in.size());
    QCOMPARE(all.messages(), 3);
}

void TestWireParser::requestWithLength()
{
    const Trace t = whole(Req, "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: h\r\n"
                               "Content-Length: 4\r\nExpect: 100-continue\r\n\r\n{\"a\"");
    QCOMPARE(t.events, QByteArrayList({"head POST /v1/chat/completions?x=1 HTTP/1.1 [Host: h] "
                                       "[Content-Length: 4] [Expect: 100-continue] length=4 "
                                       "keep-alive",
                                       "body {\"a\"", "message"}));
    Head h;
    h.target = "/v1/models?since=3&x";
    QCOMPARE(h.path(), QByteArray("/v1/models"));
    QCOMPARE(h.query(), QByteArray("since=3&x"));
}

void TestWireParser::chunkedRequest()
{
    const Trace t = whole(Req, "POST /up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                               "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
    QCOMPARE(t.events, QByteArrayList({"head POST /up HTTP/1.1 [Transfer-Encoding: chunked] "
                                       "chunked keep-alive",
                                       "body abc", "chunk 3", "body de", "chunk 2", "message"}));
}

void TestWireParser::pipelinedRequestsAndStrayCrlf()
{
    // RFC 9112 2.2: stray CRLFs between requests are tolerated.
    const Trace t = whole(Req, "GET /a HTTP/1.1\r\n\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n");
    QCOMPARE(t.events, QByteArrayList({"head GET /a HTTP/1.1 keep-alive", "message",
                                       "head GET /b HTTP/1.1 [Host: x] keep-alive", "message"}));
}

void TestWireParser::requestKeepAlive_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<bool>("keepAlive");
    QTest::newRow("1.1") << QByteArray("GET / HTTP/1.1\r\n\r\n") << true;
    QTest::newRow("1.1 close") << QByteArray("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
                               << false;
    QTest::newRow("1.0") << QByteArray("GET / HTTP/1.0\r\n\r\n") << false;
    QTest::newRow("1.0 keep-alive")
        << QByteArray("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n") << true;
}

void TestWireParser::requestKeepAlive()
{
    QFETCH(QByteArray, request);
    QFETCH(bool, keepAlive);
    Parser p(Req);
    QCOMPARE(p.feed(request), request.size());
    QCOMPARE(p.head().keepAlive, keepAlive);
    QCOMPARE(p.head().version, request.mid(request.indexOf("HTTP/"), 8));
}

void TestWireParser::malformed_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<QByteArray>("bytes");
    QTest::newRow("status line") << int(Resp) << QByteArray("FOO 200 OK\r\n\r\n");
    QTest::newRow("status code") << int(Resp) << QByteArray("HTTP/1.1 2x0 OK\r\n\r\n");
    QTest::newRow("chunk size") << int(Resp)
                                << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                                              "\r\nzz\r\n");
    QTest::newRow("chunk CRLF") << int(Resp)
                                << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                                              "\r\n1\r\nab\r\n");
    QTest::newRow("content-length")
        << int(Resp) << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n");
    QTest::newRow("header name") << int(Req) << QByteArray("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n");
    QTest::newRow("length and chunked")
        << int(Req)
        << QByteArray("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n");
    QTest::newRow("request line") << int(Req) << QByteArray("GET\r\n\r\n");
}

void TestWireParser::malformed()
{
    QFETCH(int, kind);
    QFETCH(QByteArray, bytes);
    Parser p{Parser::Kind(kind)};
    p.feed(bytes);
    QCOMPARE(p.failure(), Parser::Failure::Malformed);
    QVERIFY(!p.error().isEmpty());
    QCOMPARE(p.feed("more"), 0); // a failed parser takes nothing more
}

void TestWireParser::headTooLarge()
{
    Parser p(Req);
    const QByteArray big = "GET / HTTP/1.1\r\nX-Big: " + QByteArray(200 * 1024, 'a') + "\r\n\r\n";
    p.feed(big);
    QCOMPARE(p.failure(), Parser::Failure::HeadTooLarge);
}

void TestWireParser::withoutHeaders()
{
    const QByteArray in = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX: y\r\n\r\nok";
    const Trace t = whole(Resp, in, {.keepHeaders = false});
    QCOMPARE(t.events,
             QByteArrayList({"head HTTP/1.1 200 OK length=2 keep-alive", "body ok", "message"}));
}

void TestWireParser::serializersRoundTrip()
{
    const QByteArray req =
        requestHead("POST", "/x", {{"Host", "h:1"}, {"Transfer-Encoding", "chunked"}}) +
        chunk("abc") + chunk(QByteArray(300, 'z')) + LastChunk.toByteArray();
    QVERIFY(
        req.startsWith("POST /x HTTP/1.1\r\nHost: h:1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n"));
    const Trace r = whole(Req, req);
    QCOMPARE(r.events.value(2), QByteArray("chunk 3"));
    QCOMPARE(r.events.value(4), QByteArray("chunk 300"));
    QCOMPARE(r.messages, 1);

    const QByteArray resp = responseHead(418, "I'm a teapot", {{"content-length", "1"}}) + "t";
    QCOMPARE(resp, QByteArray("HTTP/1.1 418 I'm a teapot\r\ncontent-length: 1\r\n\r\nt"));
    QCOMPARE(whole(Resp, resp).events.value(1), QByteArray("body t"));
}

void TestWireParser::splitsGiveTheSameEvents_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<bool>("eof");
    QTest::addColumn<bool>("headFirst");
    QTest::addColumn<int>("messages");
    QTest::newRow("length") << int(Resp)
                            << QByteArray("HTTP/1.1 200 OK\r\nA: 1\r\nContent-Length: 5\r\n\r\n"
                                          "hello")
                            << false << false << 1;
    QTest::newRow("chunked with trailers")
        << int(Resp)
        << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Long-Name: long value\r\n"
                      "\r\n5;e=1\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\nT: 1\r\n\r\n")
        << false << false << 1;
    QTest::newRow("close-delimited")
        << int(Resp) << QByteArray("HTTP/1.0 200 OK\r\nServer: s\r\n\r\ndata: a\n\ndata: b\n\n")
        << true << false << 1;
    QTest::newRow("interim, HEAD-less pipeline")
        << int(Resp)
        << QByteArray("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"
                      "ab"
                      "HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n"
                      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\ncd\r\n0\r\n\r\n")
        << false << false << 3;
    QTest::newRow("HEAD then GET") << int(Resp)
                                   << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n"
                                                 "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nxyz")
                                   << false << true << 2;
    QTest::newRow("requests")
        << int(Req)
        << QByteArray("POST /a?b=c HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc\r\n"
                      "PUT /d HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n"
                      "GET /e HTTP/1.0\r\nUser-Agent: u\r\n\r\n")
        << false << false << 3;
    QTest::newRow("error mid-stream")
        << int(Resp)
        << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nq\r\n")
        << false << false << 0;
    QTest::newRow("closed mid-body")
        << int(Resp) << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc") << true
        << false << 0;
}

void TestWireParser::splitsGiveTheSameEvents()
{
    QFETCH(int, kind);
    QFETCH(QByteArray, bytes);
    QFETCH(bool, eof);
    QFETCH(bool, headFirst);
    QFETCH(int, messages);
    const Options o{.eof = eof, .headFirst = headFirst};
    const Trace expected = whole(Parser::Kind(kind), bytes, o);
    QCOMPARE(expected.messages, messages);
    QVERIFY(!expected.events.contains("stuck"));
    checkSplits(Parser::Kind(kind), bytes, expected, o);
}

QTEST_APPLESS_MAIN(TestWireParser)
#include "tst_wire_parser.moc"
