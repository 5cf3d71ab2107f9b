// SPDX-License-Identifier: GPL-3.0-or-later
// ResponseWriter on real sockets: a client QTcpSocket on 127.0.0.1 talks to an accepted
// socket wrapped in a ClientConnection, writers are opened on it as the front does, and the
// test compares the exact bytes the client receives.

#include "connectionpair.h"
#include "http/clientconnection.h"
#include "http/responsequeue.h"
#include "http/responsewriter.h"

#include <QPointer>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

#include <memory>

using slp::ClientConnection;
using slp::ConnectionSettings;
using slp::HeaderList;
using slp::ResponseContext;
using slp::ResponseHead;
using slp::ResponseWriter;

namespace {

constexpr int kWaitMs = 5000; // generous: the CI machine is a busy 2-core box

using Pair = slp::test::ConnectionPair;

ResponseHead head(int status, qint64 length, const HeaderList &headers = {})
{
    ResponseHead h;
    h.status = status;
    h.contentLength = length;
    h.headers = headers;
    return h;
}

ResponseContext context(bool keepAlive = true, int versionMinor = 1, bool headRequest = false)
{
    ResponseContext c;
    c.keepAlive = keepAlive;
    c.versionMinor = versionMinor;
    c.headRequest = headRequest;
    return c;
}

// The bytes a 200 "next" response writes, to prove nothing was sent between two responses.
const QByteArray kNext = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Request-Id: next\r\n"
                         "Content-Length: 4\r\n\r\nnext";

void respondNext(Pair &pair)
{
    pair.openWriter(context())->respond(200, "text/plain", "next", "next");
}

} // namespace

#define RECEIVE(pair, expected)                                                                    \
    do {                                                                                           \
        const QByteArray want_ = (expected);                                                       \
        QVERIFY2((pair).receive(want_.size()), (pair).received().constData());                     \
        QCOMPARE((pair).received(), want_);                                                        \
    } while (false)

class TestResponseWriter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void respondFramesAndStaysOpen()
    {
        Pair pair;
        QPointer<ResponseWriter> writer = pair.openWriter(context());
        QVERIFY(writer->isWritable());
        writer->respond(200, "text/plain", "hello", "slpq-test-1", {{"X-Extra", "e"}});
        RECEIVE(pair, "HTTP/1.1 200 OK\r\n"
                      "Content-Type: text/plain\r\n"
                      "X-Request-Id: slpq-test-1\r\n"
                      "X-Extra: e\r\n"
                      "Content-Length: 5\r\n"
                      "\r\n"
                      "hello");
        QVERIFY(!writer || writer->isFinished()); // a finished writer is deleted once written
        Pair::settle();
        QVERIFY(!pair.closed()); // keep-alive: the connection carries the next request
        pair.take();
        respondNext(pair);
        RECEIVE(pair, kNext);
    }

    void respondWithoutIdMintsOne()
    {
        Pair pair;
        pair.openWriter(context())->respond(404, "text/plain", "", {});
        QVERIFY(pair.waitFor([&] { return pair.received().endsWith("\r\n\r\n"); }));
        const QByteArray got = pair.received();
        static const QRegularExpression re(
            QStringLiteral("^HTTP/1\\.1 404 Not Found\r\nContent-Type: text/plain\r\n"
                           "X-Request-Id: slpq[0-9a-f]{24}\r\nContent-Length: 0\r\n\r\n$"));
        QVERIFY2(re.match(QString::fromLatin1(got)).hasMatch(), got.constData());
    }

    void respondError()
    {
        Pair pair;
        pair.openWriter(context())->respondError(502, QStringLiteral("it broke"), "slpq-e",
                                                 "upstream_failed");
        const QByteArray body = "{\"error\":{\"message\":\"it broke\",\"type\":\"upstream_error\","
                                "\"param\":null,\"code\":\"upstream_failed\"}}";
        RECEIVE(pair, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\n"
                      "X-Request-Id: slpq-e\r\nContent-Length: " +
                          QByteArray::number(body.size()) + "\r\n\r\n" + body);
    }

    void contentLengthInPieces()
    {
        Pair pair;
        QPointer<ResponseWriter> writer = pair.openWriter(context());
        writer->writeHead(head(201, 10, {{"X-A", "1"}, {"X-A", "2"}}));
        QVERIFY(writer->isHeadWritten());
        QVERIFY(writer->writeBody("hello"));
        QVERIFY(writer->writeBody(""));
        QVERIFY(writer->writeBody("world"));
        writer->finish();
        // 201 is not in reasonPhrase()'s table: an empty reason is written as "Status".
        RECEIVE(pair, "HTTP/1.1 201 Status\r\nX-A: 1\r\nX-A: 2\r\nContent-Length: 10\r\n\r\n"
                      "helloworld");
        Pair::settle();
        QVERIFY(!pair.closed());
        pair.take();
        respondNext(pair);
        RECEIVE(pair, kNext);
    }

    void givenReasonIsKept()
    {
        Pair pair;
        QPointer<ResponseWriter> writer = pair.openWriter(context());
        ResponseHead h = head(299, 0);
        h.reason = "Upstream Said So";
        writer->writeHead(h);
        writer->finish();
        RECEIVE(pair, "HTTP/1.1 299 Upstream Said So\r\nContent-Length: 0\r\n\r\n");
    }

    void writeBodyPastLengthStopsAtLength()
    {
        Pair pair;
        QPointer<ResponseWriter> writer = pair.openWriter(context());
        writer->writeHead(head(200, 8));
        QVERIFY(writer->writeBody("hello"));
        QVERIFY(!writer->writeBody("world")); // 2 bytes too many: only "wor" goes out
        QVERIFY(!writer->writeBody("more"));  // nothing left to write
        writer->breakConnection();            // as the contract tells the caller
        QVERIFY(pair.waitClosed());
        pair.setReading(true);
        QCOMPARE(pair.received(),
                 QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nhellowor"));
    }

    void finishShortBodyBreaksConnection()
    {
        Pair pair;
        QPointer<ResponseWriter> writer = pair.openWriter(context());
        writer->writeHead(head(200, 10));
        QVERIFY(writer->writeBody("hello"));
        writer->finish();                         // 5 of 10: never a clean end
        QVERIFY(!writer || writer->isFinished()); // a finished writer is deleted once written
        QVERIFY(pair.waitClosed());
        pair.setReading(true);
        QCOMPARE(pair.received(), QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello"));
    }

    void finishWithoutHeadBreaksConnection()
    {
        Pair pair;
        pair.openWriter(context())->finish();
        QVERIFY(pair.waitClosed());
        QVERIFY(pair.received().isEmpty());
    }

    void chunkedFraming()
    {
        Pair pair;
        QPointer<ResponseWriter> writer = pair.openWriter(context());
        writer->writeHead(head(200, -1, {{"Content-Type", "text/event-stream"}}));
        QVERIFY(writer->writeBody("hello"));
        QVERIFY(writer->writeBody("")); // an empty piece is nothing, never a last chunk
        QVERIFY(writer->writeBody(QByteArray(26, 'x')));
        writer->finish();
        RECEIVE(pair, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n"
                      "5\r\nhello\r\n"
                      "1a\r\n" +
                          QByteArray(26, 'x') +
                          "\r\n"
                          "0\r\n\r\n");
        Pair::settle();
        QVERIFY(!pair.closed());
        pair.take();
        respondNext(pair);
        RECEIVE(pair, kNext);
    }

    void brokenChunkedHasNoLastChunk()
    {
        Pair pair;
        QPointer<ResponseWriter> writer = pair.openWriter(context());
        writer->writeHead(head(200, -1));
        QVERIFY(writer->writeBody("abc"));
        writer->breakConnection();
        QVERIFY(!writer || writer->isFinished()); // a finished writer is deleted once written
        QVERIFY(pair.waitClosed());
        pair.setReading(true);
        QCOMPARE(pair.received(),
                 QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"));
    }

    void http10UnknownLengthIsCloseDelimited()
    {
        Pair pair;
        QPointer<ResponseWriter> writer = pair.openWriter(context(true, 0));
        writer->writeHead(head(200, -1, {{"X-B", "b"}}));
        QVERIFY(writer->writeBody("raw "));
        QVERIFY(writer->writeBody("bytes"));
        writer->finish();
        QVERIFY(pair.waitClosed()); // the close ends the body
        pair.setReading(true);
        QCOMPARE(pair.received(),
                 QByteArray("HTTP/1.1 200 OK\r\nX-B: b\r\nConnection: close\r\n\r\nraw bytes"));
    }

    void http10KnownLengthKeepAlive()
    {
        Pair pair;
        pair.openWriter(context(true, 0))->respond(200, "text/plain", "ok", "id10");
        RECEIVE(pair, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Request-Id: id10\r\n"
                      "Content-Length: 2\r\nConnection: keep-alive\r\n\r\nok");
        Pair::settle();
        QVERIFY(!pair.closed());
    }

    void notKeepAliveSaysCloseAndCloses()
    {
        Pair pair;
        QPointer<ResponseWriter> writer = pair.openWriter(context(false));
        writer->respond(200, "text/plain", "bye", "idc");
        QVERIFY(pair.waitClosed());
        pair.setReading(true);
        QCOMPARE(pair.received(),
                 QByteArray("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Request-Id: idc\r\n"
                            "Content-Length: 3\r\nConnection: close\r\n\r\nbye"));
    }

    void headRequestHasNoBody()
    {
        Pair pair;
        // respond(): the length of the body it would have, no byte of it.
        pair.openWriter(context(true, 1, true))->respond(200, "text/plain", "hello", "idh");
        // writeHead() with an unknown length: no framing line at all, and no chunks.
        QPointer<ResponseWriter> streamed = pair.openWriter(context(true, 1, true));
        streamed->writeHead(head(200, -1));
        QVERIFY(streamed->writeBody("dropped"));
        streamed->finish();
        respondNext(pair);
        const QByteArray expected =
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Request-Id: idh\r\n"
            "Content-Length: 5\r\n\r\n"
            "HTTP/1.1 200 OK\r\n\r\n" +
            kNext;
        RECEIVE(pair, expected);
        Pair::settle();
        QCOMPARE(pair.received(), expected);
        QVERIFY(!pair.closed());
    }

    void bodylessStatuses_data()
    {
        QTest::addColumn<int>("status");
        QTest::addColumn<qint64>("length");
        QTest::addColumn<QByteArray>("statusLine");
        // 304 is not in reasonPhrase()'s table: with no reason given it is "Status".
        QTest::newRow("204") << 204 << qint64(-1) << QByteArray("HTTP/1.1 204 No Content\r\n");
        QTest::newRow("204 with a length")
            << 204 << qint64(5) << QByteArray("HTTP/1.1 204 No Content\r\n");
        QTest::newRow("304") << 304 << qint64(-1) << QByteArray("HTTP/1.1 304 Status\r\n");
        QTest::newRow("304 with a length")
            << 304 << qint64(40) << QByteArray("HTTP/1.1 304 Status\r\n");
    }
    void bodylessStatuses()
    {
        QFETCH(int, status);
        QFETCH(qint64, length);
        QFETCH(QByteArray, statusLine);
        Pair pair;
        QPointer<ResponseWriter> writer = pair.openWriter(context());
        writer->writeHead(head(status, length, {{"ETag", "\"e\""}}));
        QVERIFY(writer->writeBody("not sent"));
        writer->finish(); // clean: there was no body to be short of
        respondNext(pair);
        // No Content-Length (a 304's would only repeat the 200's, and SLP writes none), no
        // chunked framing, no body, and the next response right after.
        RECEIVE(pair, statusLine + "ETag: \"e\"\r\n\r\n" + kNext);
        Pair::settle();
        QCOMPARE(pair.received(), statusLine + "ETag: \"e\"\r\n\r\n" + kNext);
        QVERIFY(!pair.closed());
    }

    void queuedWriterWaitsForTheFirst()
    {
        Pair pair;
        QPointer<ResponseWriter> first = pair.openWriter(context());
        QPointer<ResponseWriter> second = pair.openWriter(context());
        QVERIFY(first->isWritable());
        QVERIFY(!second->isWritable());
        QSignalSpy secondWritable(second, &ResponseWriter::writable);

        // The second response is produced first, and is held.
        second->writeHead(head(200, -1));
        QVERIFY(second->writeBody("second-1"));
        first->writeHead(head(200, 5));
        QVERIFY(first->writeBody("fir"));
        RECEIVE(pair, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfir");
        Pair::settle();
        QCOMPARE(pair.received(), QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfir"));
        QCOMPARE(secondWritable.count(), 0);

        QVERIFY(first->writeBody("st"));
        first->finish();
        // Now the second is the head of the queue: its held bytes go out, and it is told.
        QTRY_VERIFY_WITH_TIMEOUT(secondWritable.count() >= 1, kWaitMs);
        QVERIFY(second->isWritable());
        QVERIFY(second->writeBody("second-2"));
        second->finish();
        RECEIVE(pair, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"
                      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "8\r\nsecond-1\r\n8\r\nsecond-2\r\n0\r\n\r\n");
    }

    void brokenFirstDropsTheQueue()
    {
        Pair pair;
        QPointer<ResponseWriter> first = pair.openWriter(context());
        QPointer<ResponseWriter> second = pair.openWriter(context());
        QSignalSpy secondGone(second.data(), &ResponseWriter::clientGone);
        second->respond(200, "text/plain", "never", "id2");
        first->writeHead(head(200, 10));
        QVERIFY(first->writeBody("part"));
        first->breakConnection();
        QVERIFY(pair.waitClosed());
        pair.setReading(true);
        // Nothing of the second: the client sees the first cut off, then the close.
        QCOMPARE(pair.received(), QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\npart"));
        QCOMPARE(secondGone.count(), 1);
    }

    void clientGoneIsSignalled()
    {
        Pair pair;
        QPointer<ResponseWriter> writer = pair.openWriter(context());
        QSignalSpy gone(writer, &ResponseWriter::clientGone);
        writer->writeHead(head(200, -1));
        QVERIFY(writer->writeBody("x"));
        pair.client()->abort();
        QTRY_COMPARE_WITH_TIMEOUT(gone.count(), 1, kWaitMs);
    }

    void backedUpSocketIsNotWritable()
    {
        Pair pair;
        pair.client()->setReadBufferSize(64 * 1024); // else Qt reads the kernel dry
        pair.client()->setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, 64 * 1024);
        pair.serverSide()->setSocketOption(QAbstractSocket::SendBufferSizeSocketOption, 64 * 1024);
        pair.setReading(false);
        QPointer<ResponseWriter> writer = pair.openWriter(context());
        QSignalSpy writable(writer, &ResponseWriter::writable);
        writer->writeHead(head(200, -1));
        const QByteArray piece(64 * 1024, 'y');
        qint64 written = 0;
        while (writer->isWritable() && written < (64ll << 20)) {
            QVERIFY(writer->writeBody(piece));
            written += piece.size();
        }
        QVERIFY2(!writer->isWritable(), "64 MiB written without the socket backing up");
        // A margin over the high-water mark: past TCP's 200 ms zero-window probe the kernel
        // compacts the client's receive queue and takes a little more (on a loaded machine the
        // window below can outlast it), which is not SLP draining anything.
        for (int i = 0; i < 4; ++i, written += piece.size())
            QVERIFY(writer->writeBody(piece));
        QVERIFY(pair.serverSide()->bytesToWrite() >= slp::ResponseQueue::kHighWater);
        writable.clear();
        Pair::settle(100);
        QVERIFY(!writer->isWritable()); // nothing drains while the client does not read

        pair.setReading(true);
        QTRY_VERIFY_WITH_TIMEOUT(writable.count() >= 1, kWaitMs);
        QVERIFY(writer->isWritable());
        writer->finish();
        QVERIFY(pair.waitFor([&] { return pair.received().endsWith("\r\n0\r\n\r\n"); }));
        const qsizetype bodyStart = pair.received().indexOf("\r\n\r\n") + 4;
        QCOMPARE(qint64(pair.received().size() - bodyStart),
                 written / piece.size() * (5 + 2 + piece.size() + 2) + 5);
    }

    void continueQueuedBehindEarlierResponse()
    {
        Pair pair;
        // An earlier pipelined request's response is still being written ...
        QPointer<ResponseWriter> earlier = pair.openWriter(context());
        earlier->writeHead(head(200, -1));
        QVERIFY(earlier->writeBody("early"));
        const QByteArray earlyBytes =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nearly\r\n";
        RECEIVE(pair, earlyBytes);

        // ... when the next request arrives asking for 100 Continue.
        pair.client()->write("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                             "Content-Length: 5\r\nExpect: 100-continue\r\n\r\n");
        // SLP reads the head off the socket as it arrives: wait until the client sent it.
        QVERIFY(pair.waitFor([&] { return pair.client()->bytesToWrite() == 0; }));
        Pair::settle();
        QCOMPARE(pair.received(), earlyBytes); // the 100 must not land inside the chunked body

        earlier->finish();
        RECEIVE(pair, earlyBytes + "0\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n");
        Pair::settle();
        QVERIFY(!pair.closed());

        // The final response to the POST comes after the 100.
        pair.take();
        respondNext(pair);
        RECEIVE(pair, kNext);
    }

    void continueAtOnceWhenIdle()
    {
        Pair pair;
        pair.client()->write("PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                             "Expect: 100-continue\r\n\r\n");
        RECEIVE(pair, "HTTP/1.1 100 Continue\r\n\r\n");
        Pair::settle();
        QCOMPARE(pair.received(), QByteArray("HTTP/1.1 100 Continue\r\n\r\n")); // only once
    }

    void noContinueWhenBodyAlreadySent()
    {
        Pair pair;
        pair.client()->write("PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                             "Expect: 100-continue\r\n\r\nabc");
        QVERIFY(pair.waitFor([&] { return pair.client()->bytesToWrite() == 0; }));
        Pair::settle();
        QVERIFY(pair.received().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestResponseWriter)
#include "tst_response_writer.moc"
