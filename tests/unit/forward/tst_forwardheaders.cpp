// SPDX-License-Identifier: GPL-3.0-or-later
// The header rules of the forward path (docs/HTTP.md): hop-by-hop and
// Connection-named headers dropped, Host the upstream's, inbound X-Request-Id never forwarded,
// X-Forwarded-* appended or set, everything else passed with repeats kept apart.
#include "forward/forwardheaders.h"

#include <QTest>

using slp::HeaderList;
using slp::headerValue;
using slp::prepareClientHeaders;
using slp::prepareUpstreamHeaders;

namespace {

using H = QPair<QByteArray, QByteArray>;

QList<QByteArray> valuesOf(const HeaderList &headers, QByteArrayView name)
{
    QList<QByteArray> out;
    for (const auto &[n, v] : headers)
        if (n.size() == name.size() && qstrnicmp(n.constData(), name.data(), n.size()) == 0)
            out << v;
    return out;
}

bool has(const HeaderList &headers, QByteArrayView name)
{
    return !valuesOf(headers, name).isEmpty();
}

QByteArray dump(const HeaderList &headers)
{
    QByteArray out;
    for (const auto &[n, v] : headers)
        out += n + ": " + v + "\n";
    return out;
}

} // namespace

class TestForwardHeaders : public QObject
{
    Q_OBJECT

private slots:
    void upstreamDropsHopByHop_data();
    void upstreamDropsHopByHop();
    void upstreamDropsConnectionNamed();
    void upstreamDropsHostLengthExpect();
    void upstreamPassesOthersWithRepeatsInOrder();
    void requestIdNeverForwarded();
    void forwardedForAppended();
    void forwardedForWithoutClientAddress();
    void forwardedProtoAndHost();
    void clientDropsHopByHopAndFraming();
    void clientKeepsRepeatsAndRequestId();
    void headerValueFirstCaseInsensitive();
    void traceIdOfTraceparent_data();
    void traceIdOfTraceparent();
};

void TestForwardHeaders::upstreamDropsHopByHop_data()
{
    QTest::addColumn<QByteArray>("name");
    for (const char *n : {"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
                          "Proxy-Authorization", "TE", "Trailer", "Transfer-Encoding", "Upgrade",
                          "connection", "KEEP-ALIVE", "te", "upgrade"})
        QTest::newRow(n) << QByteArray(n);
}

void TestForwardHeaders::upstreamDropsHopByHop()
{
    QFETCH(QByteArray, name);
    const HeaderList in{H("Content-Type", "application/json"), H(name, "x"),
                        H("Authorization", "Bearer k")};
    const auto out = prepareUpstreamHeaders(in, "10.0.0.1");
    QVERIFY2(!has(out.forward, name), dump(out.forward));
    QCOMPARE(valuesOf(out.forward, "Content-Type"), QList<QByteArray>{"application/json"});
    QCOMPARE(valuesOf(out.forward, "Authorization"), QList<QByteArray>{"Bearer k"});
}

void TestForwardHeaders::upstreamDropsConnectionNamed()
{
    const HeaderList in{H("Connection", "X-Secret, close"), H("X-Secret", "s"),
                        H("connection", "x-other"), H("X-OTHER", "o"), H("X-Keep", "k")};
    const auto out = prepareUpstreamHeaders(in, "10.0.0.1");
    QVERIFY2(!has(out.forward, "X-Secret"), dump(out.forward));
    QVERIFY2(!has(out.forward, "X-Other"), dump(out.forward));
    QVERIFY(!has(out.forward, "Connection"));
    QCOMPARE(valuesOf(out.forward, "X-Keep"), QList<QByteArray>{"k"});
}

void TestForwardHeaders::upstreamDropsHostLengthExpect()
{
    const HeaderList in{H("Host", "slp.example:8080"), H("Content-Length", "12"),
                        H("Expect", "100-continue"), H("Accept", "*/*")};
    const auto out = prepareUpstreamHeaders(in, "10.0.0.1");
    QVERIFY2(!has(out.forward, "Host"), dump(out.forward)); // the transport sets the upstream's
    QVERIFY(!has(out.forward, "Content-Length"));           // the body may be renamed
    QVERIFY(!has(out.forward, "Expect"));
    QCOMPARE(valuesOf(out.forward, "Accept"), QList<QByteArray>{"*/*"});
}

void TestForwardHeaders::upstreamPassesOthersWithRepeatsInOrder()
{
    const HeaderList in{H("X-Multi", "one"), H("Accept", "a"),      H("x-multi", "two"),
                        H("Cookie", "c=1"),  H("X-MULTI", "three"), H("OpenAI-Beta", "b")};
    const auto out = prepareUpstreamHeaders(in, "");
    QCOMPARE(valuesOf(out.forward, "X-Multi"), (QList<QByteArray>{"one", "two", "three"}));
    // Kept apart, not folded into one comma list, and in the client's order.
    QList<QByteArray> names;
    for (const auto &[n, v] : out.forward)
        if (!n.startsWith("X-Forwarded"))
            names << n;
    QCOMPARE(names, (QList<QByteArray>{"X-Multi", "Accept", "x-multi", "Cookie", "X-MULTI",
                                       "OpenAI-Beta"}));
}

void TestForwardHeaders::requestIdNeverForwarded()
{
    const HeaderList in{H("X-Request-Id", "client-one"), H("x-request-id", "client-two"),
                        H("Accept", "a")};
    const auto out = prepareUpstreamHeaders(in, "10.0.0.1");
    QVERIFY2(!has(out.forward, "X-Request-Id"), dump(out.forward));
    QVERIFY(out.hasClientRequestId);
    QCOMPARE(out.clientRequestId, QByteArray("client-one")); // the first one is logged

    const auto none = prepareUpstreamHeaders({H("Accept", "a")}, "10.0.0.1");
    QVERIFY(!none.hasClientRequestId);
    QVERIFY(none.clientRequestId.isEmpty());
}

void TestForwardHeaders::forwardedForAppended()
{
    // No X-Forwarded-For: the client address alone.
    auto out = prepareUpstreamHeaders({H("Accept", "a")}, "127.0.0.1");
    QCOMPARE(valuesOf(out.forward, "X-Forwarded-For"), QList<QByteArray>{"127.0.0.1"});

    // One inbound: the client goes last.
    out = prepareUpstreamHeaders({H("X-Forwarded-For", "203.0.113.7")}, "127.0.0.1");
    QCOMPARE(valuesOf(out.forward, "X-Forwarded-For"), QList<QByteArray>{"203.0.113.7, 127.0.0.1"});

    // Several inbound lines are one list, in order, then the client.
    out = prepareUpstreamHeaders({H("X-Forwarded-For", "1.1.1.1, 2.2.2.2"), H("Accept", "a"),
                                  H("x-forwarded-for", "3.3.3.3")},
                                 "::1");
    QCOMPARE(valuesOf(out.forward, "X-Forwarded-For"),
             QList<QByteArray>{"1.1.1.1, 2.2.2.2, 3.3.3.3, ::1"});
}

void TestForwardHeaders::forwardedForWithoutClientAddress()
{
    auto out = prepareUpstreamHeaders({H("X-Forwarded-For", "1.1.1.1")}, "");
    QCOMPARE(valuesOf(out.forward, "X-Forwarded-For"), QList<QByteArray>{"1.1.1.1"});
    out = prepareUpstreamHeaders({H("Accept", "a")}, "");
    QVERIFY(!has(out.forward, "X-Forwarded-For"));
}

void TestForwardHeaders::forwardedProtoAndHost()
{
    // Absent: set to http and the inbound Host.
    auto out = prepareUpstreamHeaders({H("Host", "api.example:8443")}, "10.0.0.1");
    QCOMPARE(valuesOf(out.forward, "X-Forwarded-Proto"), QList<QByteArray>{"http"});
    QCOMPARE(valuesOf(out.forward, "X-Forwarded-Host"), QList<QByteArray>{"api.example:8443"});

    // Present (Caddy in front): passed through untouched, not duplicated.
    out = prepareUpstreamHeaders({H("Host", "127.0.0.1:8080"), H("X-Forwarded-Proto", "https"),
                                  H("x-forwarded-host", "public.example")},
                                 "10.0.0.1");
    QCOMPARE(valuesOf(out.forward, "X-Forwarded-Proto"), QList<QByteArray>{"https"});
    QCOMPARE(valuesOf(out.forward, "X-Forwarded-Host"), QList<QByteArray>{"public.example"});

    // No Host at all (HTTP/1.0 client): no X-Forwarded-Host invented.
    out = prepareUpstreamHeaders({H("Accept", "a")}, "10.0.0.1");
    QVERIFY(!has(out.forward, "X-Forwarded-Host"));
    QCOMPARE(valuesOf(out.forward, "X-Forwarded-Proto"), QList<QByteArray>{"http"});
}

void TestForwardHeaders::clientDropsHopByHopAndFraming()
{
    const HeaderList up{H("Content-Type", "text/event-stream"),
                        H("Transfer-Encoding", "chunked"),
                        H("Content-Length", "99"),
                        H("Connection", "keep-alive, X-Hop"),
                        H("Keep-Alive", "timeout=5"),
                        H("X-Hop", "h"),
                        H("Upgrade", "h2c"),
                        H("Trailer", "X-T"),
                        H("Proxy-Authenticate", "Basic"),
                        H("Cache-Control", "no-cache")};
    const HeaderList out = prepareClientHeaders(up);
    for (const char *gone : {"Transfer-Encoding", "Content-Length", "Connection", "Keep-Alive",
                             "X-Hop", "Upgrade", "Trailer", "Proxy-Authenticate"})
        QVERIFY2(!has(out, gone), gone);
    QCOMPARE(valuesOf(out, "Content-Type"), QList<QByteArray>{"text/event-stream"});
    QCOMPARE(valuesOf(out, "Cache-Control"), QList<QByteArray>{"no-cache"});
}

void TestForwardHeaders::clientKeepsRepeatsAndRequestId()
{
    const HeaderList up{H("Set-Cookie", "a=1"), H("X-Request-Id", "gdqz0123456789abcdef01234567"),
                        H("set-cookie", "b=2"), H("Server", "vllm")};
    const HeaderList out = prepareClientHeaders(up);
    QCOMPARE(out, up); // nothing to drop: passed as is, order and case kept
}

void TestForwardHeaders::headerValueFirstCaseInsensitive()
{
    const HeaderList h{H("X-A", "1"), H("x-a", "2"), H("Content-Type", "t")};
    QCOMPARE(headerValue(h, "x-A"), QByteArray("1"));
    QCOMPARE(headerValue(h, "CONTENT-TYPE"), QByteArray("t"));
    QCOMPARE(headerValue(h, "missing"), QByteArray());
    QCOMPARE(headerValue(h, "X-A-longer"), QByteArray());
}

// W3C Trace Context, "traceparent": only a valid one yields its trace id (for the log).
void TestForwardHeaders::traceIdOfTraceparent_data()
{
    QTest::addColumn<HeaderList>("headers");
    QTest::addColumn<QByteArray>("traceId");
    const QByteArray trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const QByteArray valid = "00-" + trace + "-00f067aa0ba902b7-01";
    QTest::newRow("valid") << HeaderList{H("traceparent", valid)} << trace;
    QTest::newRow("name case, spaces") << HeaderList{H("TraceParent", " " + valid + " ")} << trace;
    QTest::newRow("none") << HeaderList{H("tracestate", "a=b")} << QByteArray();
    QTest::newRow("twice") << HeaderList{H("traceparent", valid), H("traceparent", valid)}
                           << QByteArray();
    QTest::newRow("upper hex") << HeaderList{H("traceparent", valid.toUpper())} << QByteArray();
    QTest::newRow("version ff") << HeaderList{H("traceparent", "ff" + valid.mid(2))}
                                << QByteArray();
    QTest::newRow("zero trace id")
        << HeaderList{H("traceparent", "00-" + QByteArray(32, '0') + "-00f067aa0ba902b7-01")}
        << QByteArray();
    QTest::newRow("zero parent id")
        << HeaderList{H("traceparent", "00-" + trace + "-0000000000000000-01")} << QByteArray();
    QTest::newRow("short") << HeaderList{H("traceparent", valid.chopped(1))} << QByteArray();
    QTest::newRow("version 00 with more")
        << HeaderList{H("traceparent", valid + "-x")} << QByteArray();
    QTest::newRow("later version with more")
        << HeaderList{H("traceparent", "01" + valid.mid(2) + "-future")} << trace;
    QTest::newRow("later version glued")
        << HeaderList{H("traceparent", "01" + valid.mid(2) + "x")} << QByteArray();
    QTest::newRow("bad separator")
        << HeaderList{H("traceparent", "00_" + trace + "-00f067aa0ba902b7-01")} << QByteArray();
    QTest::newRow("control byte") << HeaderList{H("traceparent", "00-" + trace.left(31) +
                                                                     "\n-00f067aa0ba902b7-01")}
                                  << QByteArray();
}

void TestForwardHeaders::traceIdOfTraceparent()
{
    QFETCH(HeaderList, headers);
    QFETCH(QByteArray, traceId);
    QCOMPARE(slp::traceIdOf(headers), traceId);
}

QTEST_APPLESS_MAIN(TestForwardHeaders)
#include "tst_forwardheaders.moc"
