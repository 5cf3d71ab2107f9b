// SPDX-License-Identifier: GPL-3.0-or-later
// InboundHandoff: where SLP's parse of a request head and the body QtHttpServer dispatched
// meet. Pure: heads come from parseRequestHead, bodies are plain byte arrays.

#include "http/inboundhandoff.h"
#include "http/requesthead.h"

#include <QtTest>

using slp::InboundHandoff;
using slp::RequestHead;

namespace {

// A complete head as the connection's framer leaves it: parsed, with the body length framed.
RequestHead framedHead(const QByteArray &text, qint64 bodyBytes)
{
    RequestHead head = slp::parseRequestHead(text, {});
    head.bodyBytes = bodyBytes;
    return head;
}

const QHostAddress kPeer(QStringLiteral("127.0.0.1"));

} // namespace

class TestInboundHandoff : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void agreeingHeadAndBodyMakeTheRequest()
    {
        const QByteArray text = "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\n"
                                "Content-Length: 2\r\nX-A: 1\r\nX-A: 2\r\n\r\n";
        InboundHandoff handoff(framedHead(text, 2), "{}", kPeer);
        QVERIFY(!handoff.isRefused());
        QCOMPARE(handoff.responseContext().keepAlive, true);
        QCOMPARE(handoff.responseContext().versionMinor, 1);
        QCOMPARE(handoff.responseContext().headRequest, false);
        const slp::InboundRequest request = handoff.takeRequest();
        QCOMPARE(request.method, QByteArray("POST"));
        QCOMPARE(request.target, QByteArray("/v1/chat/completions?x=1"));
        QCOMPARE(request.body, QByteArray("{}"));
        QCOMPARE(request.clientAddress, QByteArray("127.0.0.1"));
        const slp::HeaderList expected = {
            {"Host", "a"}, {"Content-Length", "2"}, {"X-A", "1"}, {"X-A", "2"}};
        QCOMPARE(request.headers, expected);
    }

    void responseContextFollowsTheHead()
    {
        InboundHandoff head(framedHead("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", 0), {}, kPeer);
        QVERIFY(!head.isRefused());
        QVERIFY(head.responseContext().headRequest);

        InboundHandoff old(framedHead("GET / HTTP/1.0\r\n\r\n", 0), {}, kPeer);
        QVERIFY(!old.isRefused());
        QCOMPARE(old.responseContext().versionMinor, 0);
        QCOMPARE(old.responseContext().keepAlive, false);

        InboundHandoff closing(
            framedHead("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", 0), {}, kPeer);
        QCOMPARE(closing.responseContext().keepAlive, false);
    }

    void noHeadOfSlpsOwnIsRefused()
    {
        InboundHandoff handoff(RequestHead(), {}, kPeer);
        QVERIFY(handoff.isRefused());
        QCOMPARE(handoff.refusalStatus(), 400);
        QCOMPARE(handoff.refusalMessage(), QByteArray("request framing could not be confirmed"));
    }

    void bodyQtFramedOtherwiseIsRefused()
    {
        const QByteArray text = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n";
        InboundHandoff shorter(framedHead(text, 3), "ab", kPeer);
        QVERIFY(shorter.isRefused());
        QCOMPARE(shorter.refusalStatus(), 400);
        QCOMPARE(shorter.refusalMessage(),
                 QByteArray("request body length does not match its framing"));
        InboundHandoff longer(framedHead(text, 3), "abcd", kPeer);
        QVERIFY(longer.isRefused());
    }

    void clientAddressIsPlainIpv4WhenMapped()
    {
        QCOMPARE(InboundHandoff::clientAddress(QHostAddress(QStringLiteral("::ffff:10.1.2.3"))),
                 QByteArray("10.1.2.3"));
        QCOMPARE(InboundHandoff::clientAddress(QHostAddress(QStringLiteral("10.1.2.3"))),
                 QByteArray("10.1.2.3"));
        QCOMPARE(InboundHandoff::clientAddress(QHostAddress(QStringLiteral("::1"))),
                 QByteArray("::1"));
    }
};

QTEST_GUILESS_MAIN(TestInboundHandoff)
#include "tst_inbound_handoff.moc"
