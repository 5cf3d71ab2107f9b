// SPDX-License-Identifier: GPL-3.0-or-later
// parseRequestHead: SLP's strict reading of a client's request head (docs/HTTP.md:
// malformed framing -> 400 and close; limits -> 413/414/431; HTTP/2 -> 505).
#include "http/requesthead.h"

#include <QTest>

using slp::parseRequestHead;
using slp::RequestHead;
using slp::RequestHeadLimits;

namespace {

RequestHeadLimits limits(qint64 maxHeader = 64 * 1024, qint64 maxBody = 64ll << 20)
{
    RequestHeadLimits l;
    l.maxHeaderBytes = maxHeader;
    l.maxBodyBytes = maxBody;
    return l;
}

RequestHead parse(const QByteArray &bytes, const RequestHeadLimits &l = limits())
{
    return parseRequestHead(bytes, l);
}

} // namespace

class TestRequestHead : public QObject
{
    Q_OBJECT

private slots:
    void completeSimple();
    void completeWithBodyBytesAfterHead();
    void leadingBlankLinesTolerated();
    void incomplete_data();
    void incomplete();
    void rejected_data();
    void rejected();
    void sameContentLengthTwiceIsFine();
    void bodyLimitBoundary();
    void longTargetIncompleteLineIs414();
    void bigHeadIncompleteIs431();
    void keepAlive_data();
    void keepAlive();
    void expectContinue_data();
    void expectContinue();
    void targetKeptVerbatim();
    void repeatedHeadersKeptInOrder();
    void valuesTrimmedAndHeaderLookup();
    void chunkedRequest();
    void tokenChars();
    void qtWouldFrameDifferently_data();
    void qtWouldFrameDifferently();
    void hostRules_data();
    void hostRules();
    void targetRules_data();
    void targetRules();
    void leadingBlankLinesCount();
    void http10WithTransferEncodingCloses();
};

void TestRequestHead::completeSimple()
{
    const QByteArray bytes = "POST /v1/chat/completions HTTP/1.1\r\n"
                             "Host: slp\r\n"
                             "Content-Type: application/json\r\n"
                             "Content-Length: 17\r\n"
                             "\r\n";
    const RequestHead h = parse(bytes);
    QCOMPARE(h.state, RequestHead::State::Complete);
    QCOMPARE(h.errorStatus, 0);
    QCOMPARE(h.method, QByteArray("POST"));
    QCOMPARE(h.target, QByteArray("/v1/chat/completions"));
    QCOMPARE(h.versionMinor, 1);
    QCOMPARE(h.contentLength, 17);
    QVERIFY(!h.chunked);
    QVERIFY(!h.expectContinue);
    QVERIFY(h.keepAlive);
    QCOMPARE(h.headLength, bytes.size());
    QCOMPARE(h.headers.size(), 3);
    QCOMPARE(h.headers.at(0).first, QByteArray("Host"));
    QCOMPARE(h.headers.at(0).second, QByteArray("slp"));
}

void TestRequestHead::completeWithBodyBytesAfterHead()
{
    const QByteArray head = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    const RequestHead h = parse(head + "GET /next HTTP/1.1\r\nHost: x\r\n");
    QCOMPARE(h.state, RequestHead::State::Complete);
    QCOMPARE(h.headLength, head.size());
    QCOMPARE(h.contentLength, -1);
    QCOMPARE(h.target, QByteArray("/healthz"));
}

void TestRequestHead::leadingBlankLinesTolerated()
{
    const QByteArray bytes = "\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n";
    const RequestHead h = parse(bytes);
    QCOMPARE(h.state, RequestHead::State::Complete);
    QCOMPARE(h.method, QByteArray("GET"));
    QCOMPARE(h.headLength, bytes.size());
}

void TestRequestHead::incomplete_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("part of request line") << QByteArray("POST /v1/chat/comp");
    QTest::newRow("request line, no headers end") << QByteArray("GET / HTTP/1.1\r\nHost: x\r\n");
    QTest::newRow("header without blank line") << QByteArray("GET / HTTP/1.1\r\nHost: x\r\n");
    QTest::newRow("half a header") << QByteArray("GET / HTTP/1.1\r\nHost: x\r\nContent-Le");
    QTest::newRow("stray CRLF before a request") << QByteArray("\r\nGE");
    QTest::newRow("blank line's CR only") << QByteArray("GET / HTTP/1.1\r\nHost: x\r\n\r");
}

void TestRequestHead::incomplete()
{
    QFETCH(QByteArray, bytes);
    const RequestHead h = parse(bytes);
    QCOMPARE(h.state, RequestHead::State::Incomplete);
    QCOMPARE(h.errorStatus, 0);
}

void TestRequestHead::rejected_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<qint64>("maxHeader");
    QTest::addColumn<qint64>("maxBody");
    QTest::addColumn<int>("status");

    const qint64 H = 64 * 1024;
    const qint64 B = 64ll << 20;
    const QByteArray rl = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n";

    // 400: framing
    QTest::newRow("two different Content-Length")
        << rl + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n"
        << H << B << 400;
    QTest::newRow("Content-Length with Transfer-Encoding")
        << rl + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
        << H << B << 400;
    QTest::newRow("Transfer-Encoding then Content-Length")
        << rl + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
        << H << B << 400;
    QTest::newRow("non-numeric Content-Length") << rl + "Content-Length: 12a\r\n\r\n"
                                                << H << B << 400;
    QTest::newRow("negative Content-Length") << rl + "Content-Length: -1\r\n\r\n" << H << B << 400;
    QTest::newRow("empty Content-Length") << rl + "Content-Length:\r\n\r\n" << H << B << 400;
    QTest::newRow("bare CR in value") << rl + "X-A: one\rtwo\r\n\r\n" << H << B << 400;
    QTest::newRow("bare CR before CRLF") << rl + "X-A: one\r\r\n\r\n" << H << B << 400;
    QTest::newRow("NUL in value") << rl + QByteArray("X-A: a\0b\r\n\r\n", 13) << H << B << 400;
    QTest::newRow("NUL in incomplete header") << rl + QByteArray("X-A: a\0b", 8) << H << B << 400;
    QTest::newRow("NUL in incomplete request line") << QByteArray("GET /a\0b", 8) << H << B << 400;
    // Complete or not, the same answer (fuzz_request_split found 505 whole, 400 split).
    QTest::newRow("NUL in the version")
        << QByteArray("GET / HTTP/1\0\0#5\r\nHost: x\r\n\r\n", 29) << H << B << 400;
    QTest::newRow("LF-only request line")
        << QByteArray("GET / HTTP/1.1\nHost: x\n\n") << H << B << 400;
    QTest::newRow("LF-only header line")
        << QByteArray("GET / HTTP/1.1\r\nHost: x\n\r\n") << H << B << 400;
    QTest::newRow("LF-only blank line")
        << QByteArray("GET / HTTP/1.1\r\nHost: x\r\n\n") << H << B << 400;
    QTest::newRow("space in header name") << rl + "X A: b\r\n\r\n" << H << B << 400;
    QTest::newRow("space before colon") << rl + "Host : x\r\n\r\n" << H << B << 400;
    QTest::newRow("non-token char in name") << rl + "X@A: b\r\n\r\n" << H << B << 400;
    QTest::newRow("empty header name") << rl + ": b\r\n\r\n" << H << B << 400;
    QTest::newRow("no colon") << rl + "JustAWord\r\n\r\n" << H << B << 400;
    QTest::newRow("obs-fold space") << rl + "X-A: one\r\n two\r\n\r\n" << H << B << 400;
    QTest::newRow("obs-fold tab") << rl + "X-A: one\r\n\ttwo\r\n\r\n" << H << B << 400;
    QTest::newRow("request line: two words") << QByteArray("GET /\r\n\r\n") << H << B << 400;
    QTest::newRow("request line: four words")
        << QByteArray("GET / HTTP/1.1 extra\r\n\r\n") << H << B << 400;
    QTest::newRow("request line: double space")
        << QByteArray("GET  / HTTP/1.1\r\nHost: x\r\n\r\n") << H << B << 400;
    QTest::newRow("request line: leading space")
        << QByteArray(" GET / HTTP/1.1\r\nHost: x\r\n\r\n") << H << B << 400;
    QTest::newRow("request line: not HTTP") << QByteArray("GET / FTP/1.1\r\n\r\n") << H << B << 400;
    QTest::newRow("request line: bad method")
        << QByteArray("GE(T / HTTP/1.1\r\nHost: x\r\n\r\n") << H << B << 400;
    QTest::newRow("request line: control char in target")
        << QByteArray("GET /a\x01"
                      "b HTTP/1.1\r\nHost: x\r\n\r\n")
        << H << B << 400;

    // 413 / 414 / 431: limits
    QTest::newRow("body over maxBodyBytes") << rl + "Content-Length: 1001\r\n\r\n"
                                            << H << qint64(1000) << 413;
    QTest::newRow("long target") << "GET /" + QByteArray(200, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n"
                                 << qint64(100) << B << 414;
    QTest::newRow("big head") << rl + "X-A: " + QByteArray(150, 'b') + "\r\nX-B: c\r\n\r\n"
                              << qint64(100) << B << 431;
    QTest::newRow("many headers") << rl + QByteArray("X-A: bbbbbbbbbb\r\n").repeated(20) + "\r\n"
                                  << qint64(200) << B << 431;

    // 505: other HTTP versions
    QTest::newRow("HTTP/2 preface")
        << QByteArray("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") << H << B << 505;
    QTest::newRow("HTTP/2.0") << QByteArray("GET / HTTP/2.0\r\n\r\n") << H << B << 505;
    QTest::newRow("HTTP/0.9ish") << QByteArray("GET / HTTP/0.9\r\n\r\n") << H << B << 505;
    QTest::newRow("HTTP/1.2") << QByteArray("GET / HTTP/1.2\r\n\r\n") << H << B << 505;

    // 501: Transfer-Encoding other than chunked
    QTest::newRow("TE gzip") << rl + "Transfer-Encoding: gzip\r\n\r\n" << H << B << 501;
    QTest::newRow("TE gzip, chunked") << rl + "Transfer-Encoding: gzip, chunked\r\n\r\n"
                                      << H << B << 501;
    QTest::newRow("TE twice")
        << rl + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
        << H << B << 501;

    // 417: Expect other than 100-continue
    QTest::newRow("Expect odd") << rl + "Content-Length: 1\r\nExpect: 200-ok\r\n\r\n"
                                << H << B << 417;
}

void TestRequestHead::rejected()
{
    QFETCH(QByteArray, bytes);
    QFETCH(qint64, maxHeader);
    QFETCH(qint64, maxBody);
    QFETCH(int, status);
    const RequestHead h = parse(bytes, limits(maxHeader, maxBody));
    QCOMPARE(h.state, RequestHead::State::Rejected);
    QCOMPARE(h.errorStatus, status);
    QVERIFY2(!h.errorMessage.isEmpty(), "a rejection says why");
}

void TestRequestHead::sameContentLengthTwiceIsFine()
{
    const RequestHead h =
        parse("POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n");
    QCOMPARE(h.state, RequestHead::State::Complete);
    QCOMPARE(h.contentLength, 5);
}

void TestRequestHead::bodyLimitBoundary()
{
    const RequestHead at =
        parse("POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", limits(1024, 1000));
    QCOMPARE(at.state, RequestHead::State::Complete);
    QCOMPARE(at.contentLength, 1000);
    const RequestHead over =
        parse("POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n", limits(1024, 1000));
    QCOMPARE(over.state, RequestHead::State::Rejected);
    QCOMPARE(over.errorStatus, 413);
    // An absurd length is still a number: 413, not a crash or an overflow to "small".
    const RequestHead huge =
        parse("POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999999999\r\n\r\n");
    QCOMPARE(huge.state, RequestHead::State::Rejected);
    QCOMPARE(huge.errorStatus, 413);
}

void TestRequestHead::longTargetIncompleteLineIs414()
{
    // The request line has not ended yet, but it is already longer than the limit.
    const RequestHead h = parse("GET /" + QByteArray(500, 'a'), limits(100));
    QCOMPARE(h.state, RequestHead::State::Rejected);
    QCOMPARE(h.errorStatus, 414);
}

void TestRequestHead::bigHeadIncompleteIs431()
{
    const RequestHead h =
        parse("GET / HTTP/1.1\r\nHost: x\r\nX-A: " + QByteArray(500, 'b'), limits(100));
    QCOMPARE(h.state, RequestHead::State::Rejected);
    QCOMPARE(h.errorStatus, 431);
}

void TestRequestHead::keepAlive_data()
{
    QTest::addColumn<QByteArray>("version");
    QTest::addColumn<QByteArray>("connection"); // empty = no header
    QTest::addColumn<bool>("keepAlive");
    QTest::newRow("1.1 default") << QByteArray("HTTP/1.1") << QByteArray() << true;
    QTest::newRow("1.1 close") << QByteArray("HTTP/1.1") << QByteArray("close") << false;
    QTest::newRow("1.1 Close (case)") << QByteArray("HTTP/1.1") << QByteArray("Close") << false;
    QTest::newRow("1.1 keep-alive") << QByteArray("HTTP/1.1") << QByteArray("keep-alive") << true;
    QTest::newRow("1.1 list with close")
        << QByteArray("HTTP/1.1") << QByteArray("x-foo, close") << false;
    QTest::newRow("1.0 default") << QByteArray("HTTP/1.0") << QByteArray() << false;
    QTest::newRow("1.0 keep-alive") << QByteArray("HTTP/1.0") << QByteArray("keep-alive") << true;
    QTest::newRow("1.0 Keep-Alive (case)")
        << QByteArray("HTTP/1.0") << QByteArray("Keep-Alive") << true;
    QTest::newRow("1.0 close") << QByteArray("HTTP/1.0") << QByteArray("close") << false;
}

void TestRequestHead::keepAlive()
{
    QFETCH(QByteArray, version);
    QFETCH(QByteArray, connection);
    QFETCH(bool, keepAlive);
    QByteArray bytes = "GET / " + version + "\r\nHost: x\r\n";
    if (!connection.isEmpty())
        bytes += "Connection: " + connection + "\r\n";
    bytes += "\r\n";
    const RequestHead h = parse(bytes);
    QCOMPARE(h.state, RequestHead::State::Complete);
    QCOMPARE(h.versionMinor, version.endsWith("1.1") ? 1 : 0);
    QCOMPARE(h.keepAlive, keepAlive);
}

void TestRequestHead::expectContinue_data()
{
    QTest::addColumn<QByteArray>("version");
    QTest::addColumn<QByteArray>("expect");
    QTest::addColumn<bool>("expectContinue");
    QTest::newRow("1.1 none") << QByteArray("HTTP/1.1") << QByteArray() << false;
    QTest::newRow("1.1 100-continue")
        << QByteArray("HTTP/1.1") << QByteArray("100-continue") << true;
    QTest::newRow("1.1 100-Continue (case)")
        << QByteArray("HTTP/1.1") << QByteArray("100-Continue") << true;
    QTest::newRow("1.0 100-continue (ignored)")
        << QByteArray("HTTP/1.0") << QByteArray("100-continue") << false;
}

void TestRequestHead::expectContinue()
{
    QFETCH(QByteArray, version);
    QFETCH(QByteArray, expect);
    QFETCH(bool, expectContinue);
    QByteArray bytes = "POST /v1/x " + version + "\r\nHost: x\r\nContent-Length: 3\r\n";
    if (!expect.isEmpty())
        bytes += "Expect: " + expect + "\r\n";
    bytes += "\r\n";
    const RequestHead h = parse(bytes);
    QCOMPARE(h.state, RequestHead::State::Complete);
    QCOMPARE(h.expectContinue, expectContinue);
}

void TestRequestHead::targetKeptVerbatim()
{
    const QByteArray target =
        "/v1/chat/completions?api-version=2024-01-01&x=%20y%2F&debug&a=b=c#frag";
    const RequestHead h =
        parse("POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    QCOMPARE(h.state, RequestHead::State::Complete);
    QCOMPARE(h.target, target);
    // Empty segments are not dot segments: kept as sent.
    const RequestHead slashes = parse("GET /v1/models//x HTTP/1.1\r\nHost: x\r\n\r\n");
    QCOMPARE(slashes.state, RequestHead::State::Complete);
    QCOMPARE(slashes.target, QByteArray("/v1/models//x"));
}

void TestRequestHead::repeatedHeadersKeptInOrder()
{
    const RequestHead h = parse("POST /v1/x HTTP/1.1\r\n"
                                "X-Multi: one\r\n"
                                "Host: x\r\n"
                                "x-multi: two\r\n"
                                "Set-Thing: a, b\r\n"
                                "X-MULTI: three\r\n"
                                "\r\n");
    QCOMPARE(h.state, RequestHead::State::Complete);
    QCOMPARE(h.headers.size(), 5);
    QStringList values;
    QStringList names;
    for (const auto &[n, v] : h.headers) {
        if (n.compare("x-multi", Qt::CaseInsensitive) == 0) {
            values << QString::fromLatin1(v);
            names << QString::fromLatin1(n);
        }
    }
    QCOMPARE(values, QStringList({"one", "two", "three"}));
    QCOMPARE(names, QStringList({"X-Multi", "x-multi", "X-MULTI"})); // case as sent
    QCOMPARE(h.headers.at(3).second, QByteArray("a, b"));
    QCOMPARE(slp::headerValue(h.headers, "X-MULTI"), QByteArray("one"));
}

void TestRequestHead::valuesTrimmedAndHeaderLookup()
{
    const RequestHead h =
        parse("GET / HTTP/1.1\r\nHost: x\r\nX-A:  \t spaced out \t \r\nX-Empty:\r\n\r\n");
    QCOMPARE(h.state, RequestHead::State::Complete);
    QCOMPARE(slp::headerValue(h.headers, "x-a"), QByteArray("spaced out"));
    QCOMPARE(slp::headerValue(h.headers, "X-Empty"), QByteArray());
    QCOMPARE(slp::headerValue(h.headers, "absent"), QByteArray());
    QCOMPARE(h.headers.size(), 3);
}

void TestRequestHead::chunkedRequest()
{
    const RequestHead h =
        parse("POST /v1/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\nhello");
    QCOMPARE(h.state, RequestHead::State::Complete);
    QVERIFY(h.chunked);
    QCOMPARE(h.contentLength, -1);
}

void TestRequestHead::tokenChars()
{
    for (const char c : QByteArray("abzAZ09!#$%&'*+-.^_`|~"))
        QVERIFY2(slp::isTokenChar(c), QByteArray(1, c));
    for (const char c : QByteArray(" \t\"(),/:;<=>?@[\\]{}\x7f\x01"))
        QVERIFY2(!slp::isTokenChar(c), QByteArray::number(int(c)));
    QVERIFY(!slp::isTokenChar('\0'));
}

// QtHttpServer 6.4 drops every field past 100, or past a 100 KiB field, and then frames the
// body without them: SLP must refuse first.
void TestRequestHead::qtWouldFrameDifferently_data()
{
    QTest::addColumn<int>("fields");
    QTest::addColumn<int>("fieldBytes");
    QTest::addColumn<int>("status");
    QTest::newRow("100 fields pass") << 100 << 10 << 0;
    QTest::newRow("101 fields") << 101 << 10 << 431;
    QTest::newRow("field of 100 KiB with its CRLF") << 3 << 100 * 1024 - 2 << 0;
    QTest::newRow("one byte more") << 3 << 100 * 1024 - 1 << 431;
}

void TestRequestHead::qtWouldFrameDifferently()
{
    QFETCH(int, fields);
    QFETCH(int, fieldBytes);
    QFETCH(int, status);
    QByteArray head = "POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n";
    for (int i = 2; i < fields; ++i) {
        const QByteArray name = "X-F" + QByteArray::number(i) + ": ";
        const int pad = std::max(1, fieldBytes - int(name.size()));
        head += name + QByteArray(i == 2 ? pad : 1, 'v') + "\r\n";
    }
    head += "\r\n";
    const RequestHead h = parse(head, limits(1 << 22, 1 << 20));
    if (status == 0) {
        QCOMPARE(h.state, RequestHead::State::Complete);
        QCOMPARE(h.headers.size(), qsizetype(fields));
    } else {
        QCOMPARE(h.state, RequestHead::State::Rejected);
        QCOMPARE(h.errorStatus, status);
    }
}

void TestRequestHead::hostRules_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<bool>("ok");
    const QByteArray rl = "GET /v1/models HTTP/1.1\r\n";
    QTest::newRow("one host") << rl + "Host: 127.0.0.1:8080\r\n" << true;
    QTest::newRow("name") << rl + "Host: slp.example\r\n" << true;
    QTest::newRow("ipv6") << rl + "Host: [::1]:8080\r\n" << true;
    QTest::newRow("missing on 1.1") << rl << false;
    QTest::newRow("missing on 1.0") << QByteArray("GET / HTTP/1.0\r\n") << true;
    QTest::newRow("two") << rl + "Host: a\r\nHost: a\r\n" << false;
    QTest::newRow("empty") << rl + "Host:\r\n" << false;
    QTest::newRow("userinfo") << rl + "Host: user@a\r\n" << false;
    QTest::newRow("path") << rl + "Host: a/b\r\n" << false;
    QTest::newRow("space") << rl + "Host: a b\r\n" << false;
    QTest::newRow("bad port") << rl + "Host: a:80x\r\n" << false;
    QTest::newRow("long port") << rl + "Host: a:123456\r\n" << false;
    QTest::newRow("unclosed ipv6") << rl + "Host: [::1\r\n" << false;
    QTest::newRow("two on 1.0") << QByteArray("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n") << false;
}

void TestRequestHead::hostRules()
{
    QFETCH(QByteArray, head);
    QFETCH(bool, ok);
    const RequestHead h = parse(head + "\r\n");
    if (ok) {
        QCOMPARE(h.state, RequestHead::State::Complete);
    } else {
        QCOMPARE(h.state, RequestHead::State::Rejected);
        QCOMPARE(h.errorStatus, 400);
    }
}

void TestRequestHead::targetRules_data()
{
    QTest::addColumn<QByteArray>("target");
    QTest::addColumn<bool>("ok");
    QTest::newRow("plain") << QByteArray("/v1/chat/completions") << true;
    QTest::newRow("dots in names") << QByteArray("/v1/a.b/..c/.d?x=../y") << true;
    QTest::newRow("dotdot") << QByteArray("/v1/../admin/x") << false;
    QTest::newRow("dot") << QByteArray("/v1/./models") << false;
    QTest::newRow("trailing dotdot") << QByteArray("/v1/..") << false;
    QTest::newRow("encoded dotdot") << QByteArray("/v1/%2e%2e/admin") << false;
    QTest::newRow("encoded upper") << QByteArray("/v1/%2E./admin") << false;
    QTest::newRow("half encoded") << QByteArray("/v1/.%2e/admin") << false;
    QTest::newRow("encoded dot") << QByteArray("/v1/%2e/models") << false;
    QTest::newRow("absolute form") << QByteArray("http://evil/v1/models") << false;
    QTest::newRow("asterisk") << QByteArray("*") << false;
    QTest::newRow("authority") << QByteArray("evil:80") << false;
}

void TestRequestHead::targetRules()
{
    QFETCH(QByteArray, target);
    QFETCH(bool, ok);
    const RequestHead h = parse("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n");
    if (ok) {
        QCOMPARE(h.state, RequestHead::State::Complete);
        QCOMPARE(h.target, target);
    } else {
        QCOMPARE(h.state, RequestHead::State::Rejected);
        QCOMPARE(h.errorStatus, 400);
    }
}

void TestRequestHead::leadingBlankLinesCount()
{
    // Blank lines before a request line are head bytes like any other.
    const QByteArray blanks = QByteArray(600, '\r').replace("\r", "\r\n");
    const RequestHead h = parse(blanks + "GET / HTTP/1.1\r\nHost: x\r\n\r\n", limits(1000));
    QCOMPARE(h.state, RequestHead::State::Rejected);
    QCOMPARE(h.errorStatus, 431);
    const RequestHead onlyBlanks = parse(blanks, limits(1000));
    QCOMPARE(onlyBlanks.state, RequestHead::State::Rejected);
    const RequestHead few = parse("\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", limits(1000));
    QCOMPARE(few.state, RequestHead::State::Complete);
}

void TestRequestHead::http10WithTransferEncodingCloses()
{
    const RequestHead h = parse("POST /v1/x HTTP/1.0\r\nConnection: keep-alive\r\n"
                                "Transfer-Encoding: chunked\r\n\r\n");
    QCOMPARE(h.state, RequestHead::State::Complete);
    QVERIFY(!h.keepAlive);
}

QTEST_APPLESS_MAIN(TestRequestHead)
#include "tst_requesthead.moc"
