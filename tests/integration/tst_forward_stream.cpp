// SPDX-License-Identifier: GPL-3.0-or-later
// Streaming through the real slp against the mock vLLM upstream: SSE pieces are relayed as they
// arrive (not at the end), a broken upstream stream never looks like a clean end, a client that
// leaves stops the upstream at once (the GPU stops generating), a slow client holds back a large
// response instead of making slp buffer it, and curl -N sees a long stream whole and in order.
#include "testsupport.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <QThread>
#include <QtTest>

#include <cstring>

using namespace slp::test;

namespace {

const QString ModelId = QStringLiteral("stream-a");
const QByteArray StreamBody =
    R"({"model":"stream-a","stream":true,"messages":[{"role":"user","content":"hi"}]})";

// VmRSS of a process in KiB, or -1 when it cannot be read.
qint64 rssKb(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/status").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n')) {
        if (line.startsWith("VmRSS:")) {
            const QList<QByteArray> parts = line.mid(6).simplified().split(' ');
            return parts.value(0).toLongLong();
        }
    }
    return -1;
}

// The mock's record with seq > since (the first one), waiting up to timeoutMs for it.
QJsonObject recordAfter(MockUpstream &mock, qint64 since, int timeoutMs = 5000)
{
    const QJsonArray recs = mock.waitForRequests(1, timeoutMs, since);
    return recs.isEmpty() ? QJsonObject() : recs.at(0).toObject();
}

qint64 nextSeq(MockUpstream &mock)
{
    return mock.stats().value("next_seq").toInteger() - 1;
}

// Polls until the mock reports that the upstream connection of request `seq` was closed by
// its peer (slp); returns the ms waited on the test's clock, or -1 after timeoutMs.
qint64 waitForPeerClose(MockUpstream &mock, qint64 seq, int timeoutMs, qint64 *peerClosedMs)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeoutMs) {
        for (const QJsonValue &v : mock.requests(seq - 1)) {
            const QJsonObject rec = v.toObject();
            if (rec.value("seq").toInteger() == seq && !rec.value("peer_closed_ms").isNull()) {
                *peerClosedMs = rec.value("peer_closed_ms").toInteger();
                return t.elapsed();
            }
        }
        pumpEvents(20);
    }
    return -1;
}

// The content of the mock's generated chat stream with `events` content events (model as the
// upstream sees it): "Hello", " from", " MODEL", " word3", ...
QString expectedContent(int events, const QString &model)
{
    QString out;
    for (int i = 0; i < events; ++i)
        if (i == 0)
            out += QStringLiteral("Hello");
        else if (i == 1)
            out += QStringLiteral(" from");
        else if (i == 2)
            out += QLatin1Char(' ') + model;
        else
            out += QStringLiteral(" word%1").arg(i);
    return out;
}

} // namespace

class TestForwardStream : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void piecesArriveDuringUpstreamPause();
    void eventsArriveSpreadOut();
    void upstreamGoneMidStream();
    void upstreamGoneMidBody();
    void clientGoneMidStreamStopsUpstream();
    void clientGoneBeforeFirstByteStopsUpstream();
    void slowClientBackpressure();
    void curlLongStreamInOrder();

private:
    QByteArray streamRequest(const HeaderList &headers, const QByteArray &body = StreamBody) const
    {
        return buildRequest("POST", m_slp.url() + "/v1/chat/completions", body, headers);
    }
    void checkUpstreamDrop(const HeaderList &headers, const QByteArray &body, int rounds);
    QString slpLog() { return m_slp.stderrText().right(4000); }

    MockUpstream m_mock;
    SlpDaemon m_slp;
};

void TestForwardStream::initTestCase()
{
    QVERIFY2(!MockUpstream::binary().isEmpty(), "set SLP_MOCK_BIN");
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY2(m_mock.start(), qPrintable(m_mock.errorString()));
    // Pinned (model: alpha), so discovery never probes the mock and its records stay ours.
    const QString config = QStringLiteral("log_requests: true\n"
                                          "shutdown_grace: 1s\n"
                                          "backends:\n"
                                          "  - name: %1\n"
                                          "    url: %2\n"
                                          "    model: alpha\n"
                                          "    timeout: 10s\n")
                               .arg(ModelId, m_mock.url());
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
}

void TestForwardStream::cleanupTestCase()
{
    m_slp.stop();
    m_mock.stop();
}

void TestForwardStream::init()
{
    QVERIFY(m_mock.reset());
}

void TestForwardStream::piecesArriveDuringUpstreamPause()
{
    // role, "Thinking", " about it" | 2 s pause | "Hello", " from", ... , final, [DONE]
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QElapsedTimer clock;
    clock.start();
    QVERIFY(conn.send(streamRequest({{"X-Mock-Pause-After", "3"}, {"X-Mock-Pause-Ms", "2000"}})));
    QVERIFY2(conn.waitForData(" about it", 1500), conn.received().constData());
    const qint64 firstPiecesMs = clock.elapsed();
    qInfo() << "first three events reached the client after" << firstPiecesMs
            << "ms (upstream pauses 2000 ms)";
    QVERIFY2(firstPiecesMs < 1000, QByteArray::number(firstPiecesMs));
    // Still inside the pause: nothing after it has arrived yet.
    QVERIFY(conn.received().contains("assistant"));
    QVERIFY2(!conn.received().contains("Hello"), conn.received().constData());

    const HttpResult r = conn.readResponse(10000);
    QVERIFY2(r.ok(), qPrintable(r.error + "\n" + slpLog()));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.header("transfer-encoding"), QByteArray("chunked"));
    QVERIFY(r.body.endsWith("data: [DONE]\n\n"));
    QVERIFY(r.raw.endsWith("\r\n0\r\n\r\n"));
    const QList<QByteArray> events = sseData(r.body);
    QCOMPARE(events.size(), 10);
    QCOMPARE(events.last(), QByteArray("[DONE]"));
    QCOMPARE(jsonObject(events.at(events.size() - 2))
                 .value("choices")
                 .toArray()
                 .at(0)
                 .toObject()
                 .value("finish_reason")
                 .toString(),
             QStringLiteral("stop"));
    const qint64 endMs = r.chunkArrivalMs.isEmpty() ? -1 : r.chunkArrivalMs.last();
    qInfo() << "stream ended (terminal chunk) after" << endMs << "ms; chunk arrivals"
            << r.chunkArrivalMs;
    // The mock's 2 s pause is a coarse QTimer: it may end up to 5 % early.
    QVERIFY2(endMs >= 1700, QByteArray::number(endMs));
    QVERIFY2(endMs - firstPiecesMs >= 1000, QByteArray::number(endMs - firstPiecesMs));
}

void TestForwardStream::eventsArriveSpreadOut()
{
    // 10 events, 200 ms apart: about 1.8 s from first to last.
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(
        conn.send(streamRequest({{"X-Mock-Event-Interval-Ms", "200"}, {"X-Mock-Events", "5"}})));
    const HttpResult r = conn.readResponse(15000);
    QVERIFY2(r.ok(), qPrintable(r.error + "\n" + slpLog()));
    QCOMPARE(sseData(r.body).size(), 10);
    qInfo() << "chunk arrival ms:" << r.chunkArrivalMs;

    // Arrival times at least 100 ms apart from the previous distinct one.
    QList<qint64> distinct;
    for (const qint64 ms : r.chunkArrivalMs)
        if (distinct.isEmpty() || ms - distinct.last() >= 100)
            distinct << ms;
    qInfo() << "distinct arrival times (>= 100 ms apart):" << distinct;
    QVERIFY2(distinct.size() >= 3, qPrintable(QStringLiteral("%1 distinct").arg(distinct.size())));
    QVERIFY(!r.chunkArrivalMs.isEmpty());
    QVERIFY2(r.chunkArrivalMs.first() < 1000, QByteArray::number(r.chunkArrivalMs.first()));
    QVERIFY2(r.chunkArrivalMs.last() - r.chunkArrivalMs.first() >= 1000,
             QByteArray::number(r.chunkArrivalMs.last() - r.chunkArrivalMs.first()));
}

void TestForwardStream::upstreamGoneMidStream()
{
    // The mock sends the head and two events, then closes its connection without the chunked
    // body's end. The client must see a close without the 0-length chunk. Whether the upstream's
    // FIN is read together with the last data is down to timing, so several rounds.
    checkUpstreamDrop({{"X-Mock-Drop-After", "2"}}, StreamBody, 6);
}

void TestForwardStream::upstreamGoneMidBody()
{
    // Content-Length promises 436 bytes, 10 arrive, then the upstream closes.
    checkUpstreamDrop({{"X-Mock-Drop-After", "10"}}, R"({"model":"stream-a"})", 3);
}

void TestForwardStream::checkUpstreamDrop(const HeaderList &headers, const QByteArray &body,
                                          int rounds)
{
    QStringList failures;
    int badRounds = 0;
    for (int round = 0; round < rounds; ++round) {
        const qsizetype failuresBefore = failures.size();
        const QByteArray clientId =
            "drop-probe-" + QByteArray::number(QRandomGenerator::global()->generate(), 16);
        const ChildProcess::Mark mark = m_slp.mark();
        const qint64 since = nextSeq(m_mock);
        RawConnection conn;
        QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
        HeaderList h = headers;
        h.append({"X-Request-Id", clientId});
        QVERIFY(conn.send(streamRequest(h, body)));
        const HttpResult r = conn.readResponse(10000);
        qInfo() << "round" << round << ": status" << r.status << "complete" << r.complete
                << "peerClosed" << r.peerClosed << "error" << r.error << "body bytes"
                << r.body.size() << "ends with 0-chunk" << r.raw.endsWith("0\r\n\r\n");
        QCOMPARE(r.status, 200);
        QCOMPARE(m_mock.requests(since).size(), 1); // the mock answered exactly once
        QVERIFY(!r.body.contains("[DONE]"));
        if (r.complete || !r.peerClosed || r.raw.endsWith("0\r\n\r\n")) {
            failures << QStringLiteral("round %1: the client saw a clean end (complete=%2, %3 body "
                                       "bytes); raw response:\n%4")
                            .arg(round)
                            .arg(r.complete)
                            .arg(r.body.size())
                            .arg(QString::fromLatin1(r.raw.right(600)));
        }

        // A line about the broken response, starting with slp's own id and naming the
        // client's; never the request's success line ("[ID] POST /v1/... 200 in ...").
        const QString escapedClient = QRegularExpression::escape(QString::fromLatin1(clientId));
        const QRegularExpression lineRe(
            QStringLiteral(
                "^\\[(slpq[0-9a-f]{24})\\] (?!ignoring inbound)(?!POST ).*%1.*client=\"%2\"")
                .arg(QRegularExpression::escape(ModelId), escapedClient));
        const QRegularExpressionMatch m = m_slp.waitForLog(lineRe, 1500, mark);
        if (m.hasMatch()) {
            qInfo() << "slp logged:" << m.captured(0);
        } else {
            failures
                << QStringLiteral("round %1: no log line about the broken response").arg(round);
        }
        const QRegularExpression successRe(
            QStringLiteral("^\\[slpq[0-9a-f]{24}\\] POST .* 200 in .*client=\"%1\"")
                .arg(escapedClient));
        if (m_slp.countLog(successRe, mark) > 0) {
            failures << QStringLiteral("round %1: logged as a success: %2")
                            .arg(round)
                            .arg(m_slp.process()
                                     .lines(ChildProcess::Channel::StdErr, mark)
                                     .filter(QRegularExpression(successRe))
                                     .join('\n'));
        }
        badRounds += failures.size() > failuresBefore ? 1 : 0;
    }
    qInfo() << badRounds << "of" << rounds << "rounds went wrong";
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1String("\n"))));
}

void TestForwardStream::clientGoneMidStreamStopsUpstream()
{
    // A stream of ~6 s; the client leaves after the first event.
    const qint64 since = nextSeq(m_mock);
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(
        conn.send(streamRequest({{"X-Mock-Event-Interval-Ms", "300"}, {"X-Mock-Events", "20"}})));
    QVERIFY2(conn.waitForData("\"assistant\"", 3000), qPrintable(slpLog()));
    const QJsonObject rec = recordAfter(m_mock, since);
    QVERIFY(!rec.isEmpty());
    QVERIFY(rec.value("peer_closed_ms").isNull());
    const qint64 seq = rec.value("seq").toInteger();
    conn.abort();

    qint64 peerClosedMs = -1;
    const qint64 waited = waitForPeerClose(m_mock, seq, 3000, &peerClosedMs);
    qInfo() << "upstream saw its connection closed" << waited
            << "ms after the client aborted (peer_closed_ms" << peerClosedMs
            << "after the request arrived)";
    QVERIFY2(waited >= 0, qPrintable(slpLog()));
    QVERIFY2(waited < 1000, QByteArray::number(waited));
    // Far before the stream would have ended (20+ events at 300 ms).
    QVERIFY2(peerClosedMs < 3000, QByteArray::number(peerClosedMs));
    QTRY_COMPARE_WITH_TIMEOUT(m_mock.stats().value("in_flight").toInt(), 0, 3000);
}

void TestForwardStream::clientGoneBeforeFirstByteStopsUpstream()
{
    const qint64 since = nextSeq(m_mock);
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QElapsedTimer clock;
    clock.start();
    QVERIFY(conn.send(streamRequest({{"X-Mock-Delay-Ms", "5000"}})));
    const QJsonObject rec = recordAfter(m_mock, since, 3000);
    QVERIFY2(!rec.isEmpty(), qPrintable(slpLog()));
    const qint64 seq = rec.value("seq").toInteger();
    pumpEvents(static_cast<int>(std::max<qint64>(0, 300 - clock.elapsed())));
    QVERIFY(conn.received().isEmpty()); // nothing yet: the upstream is still "thinking"
    conn.abort();
    const qint64 abortedAt = clock.elapsed();

    qint64 peerClosedMs = -1;
    const qint64 waited = waitForPeerClose(m_mock, seq, 3000, &peerClosedMs);
    qInfo() << "client aborted at" << abortedAt << "ms; upstream saw the close" << waited
            << "ms later (peer_closed_ms" << peerClosedMs << ")";
    QVERIFY2(waited >= 0, qPrintable(slpLog()));
    QVERIFY2(waited < 1000, QByteArray::number(waited));
    QVERIFY2(peerClosedMs < 2000, QByteArray::number(peerClosedMs));
    QTRY_COMPARE_WITH_TIMEOUT(m_mock.stats().value("in_flight").toInt(), 0, 3000);
}

void TestForwardStream::slowClientBackpressure()
{
    constexpr qint64 Size = 200'000'000;
    constexpr qint64 FirstRead = 4 * 1024 * 1024;
    constexpr qint64 RssLimitKb = 150 * 1024;
    const qint64 pid = m_slp.process().pid();
    const qint64 baseKb = rssKb(pid);
    QVERIFY2(baseKb > 0, "cannot read slp's VmRSS");

    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QTcpSocket *socket = conn.socket();
    socket->setReadBufferSize(256 * 1024); // our side holds little: the rest stays in the network
    QElapsedTimer clock;
    clock.start();
    QVERIFY(conn.send(buildRequest("POST", m_slp.url() + "/v1/chat/completions",
                                   R"({"model":"stream-a"})",
                                   {{"X-Mock-Large-Response", QByteArray::number(Size)}})));

    // The mock's body: LargeAlphabet repeated from offset 0.
    const QByteArray alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    constexpr qint64 Piece = 1024 * 1024;
    QByteArray pattern;
    pattern.reserve(Piece + 2 * alphabet.size());
    while (pattern.size() < Piece + alphabet.size())
        pattern += alphabet;

    QByteArray head = conn.received(); // whatever send() already drained
    qint64 bodyRead = 0;
    qint64 contentLength = -1;
    bool patternOk = true;
    qint64 maxRssKb = baseKb;
    auto consumeBody = [&](const char *data, qint64 n) {
        if (patternOk &&
            std::memcmp(data, pattern.constData() + bodyRead % alphabet.size(), size_t(n)) != 0)
            patternOk = false;
        bodyRead += n;
    };
    auto feed = [&](const QByteArray &bytes) {
        if (contentLength < 0) {
            head += bytes;
            const qsizetype end = head.indexOf("\r\n\r\n");
            if (end < 0)
                return;
            static const QRegularExpression clRe(
                QStringLiteral("(?im)^content-length:\\s*(\\d+)\\s*$"));
            const QString headText = QString::fromLatin1(head.left(end));
            const QRegularExpressionMatch m = clRe.match(headText);
            contentLength = m.hasMatch() ? m.captured(1).toLongLong() : 0;
            qInfo().noquote() << "response head:"
                              << headText.left(400).replace(QLatin1String("\r\n"), " | ");
            const QByteArray rest = head.mid(end + 4);
            for (qsizetype off = 0; off < rest.size(); off += Piece)
                consumeBody(rest.constData() + off, std::min<qint64>(Piece, rest.size() - off));
            return;
        }
        consumeBody(bytes.constData(), bytes.size());
    };
    if (!head.isEmpty()) {
        const QByteArray first = std::exchange(head, {});
        feed(first);
    }
    // Reads until `until` body bytes (or the deadline); false on a stall or close.
    auto readUntil = [&](qint64 until, int timeoutMs) {
        QElapsedTimer t;
        t.start();
        qint64 lastSample = bodyRead;
        while (contentLength < 0 || bodyRead < until) {
            if (socket->bytesAvailable() == 0) {
                if (t.elapsed() > timeoutMs || socket->state() != QAbstractSocket::ConnectedState)
                    return false;
                socket->waitForReadyRead(
                    std::max<int>(1, std::min<int>(1000, timeoutMs - int(t.elapsed()))));
                continue;
            }
            const qint64 want =
                contentLength < 0 ? Piece : std::min<qint64>(Piece, until - bodyRead);
            feed(socket->read(std::max<qint64>(1, want)));
            if (bodyRead - lastSample >= 16 * 1024 * 1024) {
                lastSample = bodyRead;
                maxRssKb = std::max(maxRssKb, rssKb(pid));
            }
        }
        return true;
    };

    QVERIFY2(readUntil(FirstRead, 10000),
             qPrintable(QStringLiteral("read %1 bytes").arg(bodyRead) + slpLog()));
    QCOMPARE(contentLength, Size);
    const qint64 firstReadMs = clock.elapsed();

    // The client stops reading for 2 s. slp must not pull the whole response in meanwhile.
    qint64 pauseMaxKb = 0;
    for (int i = 0; i < 8; ++i) {
        QThread::msleep(250);
        pauseMaxKb = std::max(pauseMaxKb, rssKb(pid));
    }
    maxRssKb = std::max(maxRssKb, pauseMaxKb);
    qInfo() << "slp RSS: before" << baseKb / 1024 << "MiB; during the client's 2 s pause (after"
            << bodyRead / (1024 * 1024) << "MiB read in" << firstReadMs << "ms) max"
            << pauseMaxKb / 1024 << "MiB";
    if (!sanitizedBuild())
        QVERIFY2(pauseMaxKb < RssLimitKb, qPrintable(QStringLiteral("%1 KiB").arg(pauseMaxKb)));

    QElapsedTimer rest;
    rest.start();
    QVERIFY2(
        readUntil(Size, 30000),
        qPrintable(QStringLiteral("stalled after %1 of %2 body bytes\n").arg(bodyRead).arg(Size) +
                   slpLog()));
    qInfo() << "read the remaining" << (Size - FirstRead) / (1024 * 1024) << "MiB in"
            << rest.elapsed() << "ms; slp max RSS" << maxRssKb / 1024 << "MiB; total"
            << clock.elapsed() << "ms";
    QCOMPARE(bodyRead, Size);
    QVERIFY2(patternOk, "body bytes differ from the upstream's");
    if (!sanitizedBuild())
        QVERIFY2(maxRssKb < RssLimitKb, qPrintable(QStringLiteral("%1 KiB").arg(maxRssKb)));
    // Nothing beyond the declared length.
    socket->waitForReadyRead(200);
    QCOMPARE(socket->bytesAvailable(), 0);
}

void TestForwardStream::curlLongStreamInOrder()
{
    constexpr int ContentEvents = 200;
    const CommandResult c =
        runCommand("curl",
                   {"-sS", "-N", "--max-time", "30", "-H", "Content-Type: application/json", "-H",
                    QStringLiteral("X-Mock-Events: %1").arg(ContentEvents), "-H",
                    "X-Mock-Event-Interval-Ms: 2", "-d", QString::fromUtf8(StreamBody),
                    m_slp.url() + "/v1/chat/completions"},
                   40000);
    qInfo() << "curl exit" << c.exitCode << "in" << c.elapsedMs << "ms," << c.stdOut.size()
            << "bytes";
    QVERIFY2(c.started, qPrintable(c.error));
    QVERIFY2(c.exitCode == 0, c.stdErr.constData());
    const QList<QByteArray> events = sseData(c.stdOut);
    // role + 2 reasoning + 200 content + final + [DONE]
    QCOMPARE(events.size(), 3 + ContentEvents + 2);
    QCOMPARE(events.last(), QByteArray("[DONE]"));
    QString content;
    int contentEvents = 0;
    for (qsizetype i = 0; i < events.size() - 1; ++i) {
        const QJsonObject o = jsonObject(events.at(i));
        QVERIFY2(!o.isEmpty(), events.at(i).constData());
        const QJsonObject delta =
            o.value("choices").toArray().at(0).toObject().value("delta").toObject();
        if (delta.contains("content") && !delta.value("content").toString().isEmpty()) {
            content += delta.value("content").toString();
            ++contentEvents;
        }
    }
    QCOMPARE(contentEvents, ContentEvents);
    // In order, none lost or repeated; the mock saw the pinned upstream name.
    QCOMPARE(content, expectedContent(ContentEvents, QStringLiteral("alpha")));
    QCOMPARE(jsonObject(events.at(events.size() - 2))
                 .value("choices")
                 .toArray()
                 .at(0)
                 .toObject()
                 .value("finish_reason")
                 .toString(),
             QStringLiteral("stop"));
}

QTEST_GUILESS_MAIN(TestForwardStream)
#include "tst_forward_stream.moc"
