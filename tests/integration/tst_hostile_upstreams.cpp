// SPDX-License-Identifier: GPL-3.0-or-later
// A backend run by an attacker (issue 27), against the real slp on both transports: discovery
// reads at most 4 MiB of /v1/models and gives the memory back (RSS from /proc), parses a list
// of 200,000 models off the serving thread (/healthz stays fast), refuses ids with control
// characters or over 256 bytes and logs every id escaped; keep-alive comments go only into a
// text/event-stream; an unfit upstream X-Request-Id never reaches the client.
#include "hostileupstream.h"
#include "procstatus.h"
#include "prometheustext.h"
#include "testsupport.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <algorithm>

using namespace slp::test;

namespace {

constexpr int kSettleMs = 15000; // a loaded 2-core machine
const QString kGood = QStringLiteral("good-1");

QRegularExpression containing(const QString &text)
{
    return QRegularExpression(QRegularExpression::escape(text));
}

// The first control byte in `text` other than the line ends, as "0x1b at 123", or empty.
QString controlByteIn(const QByteArray &text)
{
    for (qsizetype i = 0; i < text.size(); ++i) {
        const auto u = static_cast<unsigned char>(text.at(i));
        if ((u < 0x20 && u != '\n') || u == 0x7f)
            return QStringLiteral("0x%1 at %2 in ...%3")
                .arg(u, 2, 16, QLatin1Char('0'))
                .arg(i)
                .arg(QString::fromUtf8(text.mid(std::max<qsizetype>(0, i - 120), 120)));
    }
    return {};
}

QByteArray chunk(const QByteArray &data)
{
    return QByteArray::number(data.size(), 16) + "\r\n" + data + "\r\n";
}

} // namespace

class TestHostileUpstreams : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void boundedDiscoveryMemory_data();
    void boundedDiscoveryMemory();
    void healthzDuringLargeProbe();
    void hostileIdsAreErrors_data();
    void hostileIdsAreErrors();
    void oddButValidNameIsEscapedEverywhere();
    void keepAliveOnlyInEventStream_data();
    void keepAliveOnlyInEventStream();
    void unfitUpstreamRequestId_data();
    void unfitUpstreamRequestId();
    void logHasNoControlBytes();

private:
    QJsonObject debugEntry(const QString &id);
    // Serves `kGood` again and waits until a probe confirmed it.
    void restoreGood();
    HttpResult chat(const QByteArray &model);

    HostileUpstream m_upstream;
    SlpDaemon m_slp;
};

void TestHostileUpstreams::initTestCase()
{
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY(m_upstream.start());
    m_upstream.setModels(HostileUpstream::modelList({kGood}));
    // alpha is probed; raw is pinned (never probed) and takes the scripted POST answers.
    const QString config = QStringLiteral("log_requests: true\n"
                                          "shutdown_grace: 1s\n"
                                          "discovery:\n"
                                          "  backoff_initial: 100ms\n"
                                          "  backoff_max: 500ms\n"
                                          "  recheck: 300ms\n"
                                          "  probe_timeout: 5s\n"
                                          "backends:\n"
                                          "  - name: alpha\n"
                                          "    url: %1\n"
                                          "  - name: raw\n"
                                          "    url: %1\n"
                                          "    model: pinned\n"
                                          "    sse_keepalive: 100ms\n")
                               .arg(m_upstream.url());
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
    QVERIFY2(m_slp.waitForLog(containing("backend serves \"good-1\""), kSettleMs).hasMatch(),
             qPrintable(m_slp.stderrText()));
}

void TestHostileUpstreams::cleanupTestCase()
{
    const bool alive = m_slp.process().isRunning();
    QCOMPARE(m_slp.stop(), 0);
    QVERIFY2(alive, "slp died during the test");
}

void TestHostileUpstreams::init()
{
    m_upstream.setModels(HostileUpstream::modelList({kGood}));
}

QJsonObject TestHostileUpstreams::debugEntry(const QString &id)
{
    const HttpResult r = httpRequest("GET", m_slp.url() + "/v1/models?debug");
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(r.body, &error);
    if (r.status != 200 || doc.isNull()) {
        qWarning("?debug is not JSON (%s): %s", qPrintable(error.errorString()),
                 r.body.constData());
        return {};
    }
    for (const QJsonValue &v : doc.object().value("data").toArray())
        if (v.toObject().value("id").toString() == id)
            return v.toObject();
    return {};
}

void TestHostileUpstreams::restoreGood()
{
    m_upstream.setModels(HostileUpstream::modelList({kGood}));
    // Probes run one after another: once two more arrived, one answered after the switch has
    // settled.
    const int before = m_upstream.modelsRequests();
    QTRY_VERIFY_WITH_TIMEOUT(m_upstream.modelsRequests() >= before + 2, kSettleMs);
    QTRY_VERIFY_WITH_TIMEOUT(debugEntry("alpha").value("last_probe") == QLatin1String("ok"),
                             kSettleMs);
    QCOMPARE(debugEntry("alpha").value("upstream_model").toString(), kGood);
}

HttpResult TestHostileUpstreams::chat(const QByteArray &model)
{
    return httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                       R"({"model":")" + model + R"(","stream":true,"messages":[]})",
                       {{"Content-Type", "application/json"}}, 15000);
}

void TestHostileUpstreams::boundedDiscoveryMemory_data()
{
    QTest::addColumn<QString>("kind");
    QTest::newRow("50 MB list") << QStringLiteral("huge");
    QTest::newRow("endless list") << QStringLiteral("endless");
}

void TestHostileUpstreams::boundedDiscoveryMemory()
{
    QFETCH(QString, kind);
    restoreGood();
    const qint64 pid = m_slp.process().pid();
    const qint64 baselineKb = residentKb(pid);
    QVERIFY(baselineKb > 0);
    const ChildProcess::Mark mark = m_slp.mark();
    const qint64 sentBefore = m_upstream.bytesSent();
    if (kind == QLatin1String("huge"))
        m_upstream.setModelsHuge(50ll * 1000 * 1000);
    else
        m_upstream.setModelsEndless();

    // Several probes hit the limit; RSS sampled all along.
    const QRegularExpression failed(QStringLiteral(
        "discovery: alpha: probe GET \"\\S+\" failed: model list larger than 4194304 bytes: "
        "stopped reading; keeping \"good-1\""));
    qint64 peakKb = baselineKb;
    QElapsedTimer clock;
    clock.start();
    while (m_slp.countLog(failed, mark) < 4 && clock.elapsed() < 20000) {
        peakKb = std::max(peakKb, residentKb(pid));
        QTest::qWait(20);
    }
    const int probes = m_slp.countLog(failed, mark);
    QVERIFY2(probes >= 4, qPrintable(m_slp.stderrText().right(2000)));
    QCOMPARE(debugEntry("alpha").value("upstream_model").toString(), kGood); // last good kept
    const qint64 sentMb = (m_upstream.bytesSent() - sentBefore) >> 20;

    restoreGood();
    // Memory back: within 10 s, RSS near the baseline again.
    qint64 afterKb = residentKb(pid);
    clock.restart();
    while (afterKb > baselineKb + 4096 && clock.elapsed() < 10000) {
        QTest::qWait(50);
        afterKb = residentKb(pid);
    }
    qInfo("%s on %s: baseline %lld KiB, peak %lld KiB (+%lld), %lld ms later %lld KiB (+%lld); "
          "%d probes, the upstream got %lld MiB out",
          qPrintable(kind), qPrintable(SlpDaemon::transport()), baselineKb, peakKb,
          peakKb - baselineKb, clock.elapsed(), afterKb, afterKb - baselineKb, probes, sentMb);
    if (sanitizedBuild())
        QSKIP("RSS bounds do not hold under ASan");
    QVERIFY2(peakKb < baselineKb + 16 * 1024, "a probe buffered more than its limit");
    // slp stopped reading: per probe, the limit plus what the sockets' buffers hold (one more
    // probe may be under way).
    QVERIFY2(sentMb <= 12 * (probes + 1), "a probe kept reading past its limit");
    QVERIFY2(afterKb <= baselineKb + 4096, "memory not given back within 10 s");
}

void TestHostileUpstreams::healthzDuringLargeProbe()
{
    restoreGood();
    const ChildProcess::Mark mark = m_slp.mark();
    m_upstream.setModels(HostileUpstream::manyModels(200000));
    const QRegularExpression ambiguous(
        QStringLiteral("discovery: WARNING: alpha: backend serves 200000 models \\["));
    QVERIFY2(m_slp.waitForLog(ambiguous, kSettleMs, mark).hasMatch(),
             qPrintable(m_slp.stderrText().right(2000)));
    // /healthz back to back while further probes fetch and parse the list.
    const int probesBefore = m_slp.countLog(ambiguous, mark);
    QList<qint64> latencies;
    QElapsedTimer clock;
    clock.start();
    while (m_slp.countLog(ambiguous, mark) < probesBefore + 4 && clock.elapsed() < 30000) {
        QElapsedTimer one;
        one.start();
        const HttpResult r = httpRequest("GET", m_slp.url() + "/healthz");
        latencies << one.elapsed();
        QCOMPARE(r.status, 200);
        QTest::qWait(1);
    }
    const int probes = m_slp.countLog(ambiguous, mark) - probesBefore;
    std::sort(latencies.begin(), latencies.end());
    const auto slow =
        std::count_if(latencies.cbegin(), latencies.cend(), [](qint64 ms) { return ms >= 80; });
    qInfo("/healthz during %d probes of 200,000 models on %s: %lld requests, median %lld ms, "
          "max %lld ms, %lld at 80 ms or more",
          probes, qPrintable(SlpDaemon::transport()), qint64(latencies.size()),
          latencies.value(latencies.size() / 2), latencies.value(latencies.size() - 1),
          qint64(slow));
    QVERIFY2(probes >= 4, qPrintable(m_slp.stderrText().right(2000)));
    // A parse on the serving thread (100+ ms each) would stall one request per probe; one slow
    // answer is allowed for a loaded machine.
    QVERIFY2(slow <= 1, "the serving thread was blocked while a probe parsed");
    // Its line names 32 ids at most, not 200,000.
    QVERIFY(m_slp.stderrText().size() < 1000000);
    restoreGood();
}

void TestHostileUpstreams::hostileIdsAreErrors_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<QString>("reason");
    QTest::newRow("ESC CR BEL") << QStringLiteral("red\x1b[31mRED\x1b[0m\r\x07"
                                                  "end")
                                << QStringLiteral("a model id with a control character "
                                                  "(\"red\\x1b[31mRED\\x1b[0m\\x0d\\x07end\")");
    QTest::newRow("LF forging a line")
        << QStringLiteral("x\ndiscovery: alpha: backend serves \"forged\"")
        << QStringLiteral("a model id with a control character (\"x\\x0adiscovery");
    QTest::newRow("300 bytes") << QString(300, QLatin1Char('y'))
                               << QStringLiteral("a model id over 256 bytes (\"yyyy");
}

void TestHostileUpstreams::hostileIdsAreErrors()
{
    QFETCH(QString, id);
    QFETCH(QString, reason);
    restoreGood();
    const ChildProcess::Mark mark = m_slp.mark();
    m_upstream.setModels(HostileUpstream::modelList({id}));
    const QRegularExpressionMatch line = m_slp.waitForLog(
        QRegularExpression(QStringLiteral("discovery: alpha: probe GET .* failed: ") +
                           QRegularExpression::escape(reason) +
                           QStringLiteral(".*; keeping \"good-1\"; next probe in")),
        kSettleMs, mark);
    QVERIFY2(line.hasMatch(), qPrintable(m_slp.stderrText().right(2000)));
    qInfo("%s", qPrintable(line.captured(0)));
    QVERIFY(controlByteIn(line.captured(0).toUtf8()).isEmpty());
    QCOMPARE(m_slp.countLog(containing("backend serves \"forged\""), mark), 0);
    const QJsonObject entry = debugEntry("alpha");
    QCOMPARE(entry.value("upstream_model").toString(), kGood); // the last good name is kept
    QCOMPARE(entry.value("last_probe").toString(), QStringLiteral("error"));
    restoreGood();
}

void TestHostileUpstreams::oddButValidNameIsEscapedEverywhere()
{
    // No control character, within 256 bytes: a name, renamed to, and escaped wherever written.
    const QString odd = QStringLiteral("we\"ird\\name <b>x</b> caf\u00e9");
    restoreGood();
    ChildProcess::Mark mark = m_slp.mark();
    m_upstream.setModels(HostileUpstream::modelList({odd}));
    const QString expected = QStringLiteral("discovery: alpha: upstream model changed from "
                                            "\"good-1\" to \"we\\\"ird\\\\name <b>x</b> "
                                            "caf\\xc3\\xa9\"; the rewrite follows");
    QVERIFY2(m_slp.waitForLog(containing(expected), kSettleMs, mark).hasMatch(),
             qPrintable(m_slp.stderrText().right(2000)));
    // ?debug is valid JSON that carries the name exactly.
    QCOMPARE(debugEntry("alpha").value("upstream_model").toString(), odd);
    // /metrics: the label value reads back exactly.
    const HttpResult metrics = httpRequest("GET", m_slp.url() + "/metrics");
    const slp::PromParseResult prom = slp::parsePromText(metrics.body);
    QVERIFY2(prom.error.isEmpty(), qPrintable(prom.error));
    QCOMPARE(slp::findPromSample(prom.samples, "slp_upstream_model_info",
                                 {{"model_id", "alpha"}, {"upstream_model", odd}}),
             std::optional<double>(1));
    // An ambiguous list quotes what is not a plain id.
    mark = m_slp.mark();
    m_upstream.setModels(HostileUpstream::modelList({"plain", "two words"}));
    QVERIFY2(m_slp
                 .waitForLog(containing("backend serves 2 models [plain \"two words\"]"), kSettleMs,
                             mark)
                 .hasMatch(),
             qPrintable(m_slp.stderrText().right(2000)));
    m_upstream.setModels(HostileUpstream::modelList({kGood}));
    QVERIFY(m_slp
                .waitForLog(containing("backend serves exactly one model again: \"good-1\""),
                            kSettleMs, mark)
                .hasMatch());
}

void TestHostileUpstreams::keepAliveOnlyInEventStream_data()
{
    QTest::addColumn<QByteArray>("contentType");
    QTest::addColumn<bool>("comments");
    QTest::newRow("text/event-streaming") << QByteArray("text/event-streaming") << false;
    QTest::newRow("text/event-stream-x") << QByteArray("text/event-stream-x") << false;
    QTest::newRow("Text/Event-Stream; charset")
        << QByteArray("Text/Event-Stream; charset=utf-8") << true;
}

void TestHostileUpstreams::keepAliveOnlyInEventStream()
{
    QFETCH(QByteArray, contentType);
    QFETCH(bool, comments);
    // Two events 600 ms apart on a route with sse_keepalive: 100ms.
    m_upstream.setAnswer("HTTP/1.1 200 OK\r\nContent-Type: " + contentType +
                             "\r\nTransfer-Encoding: chunked\r\n\r\n",
                         {chunk("data: 1\n\n"), chunk("data: 2\n\n"), "0\r\n\r\n"}, 600);
    const HttpResult r = chat("raw");
    QVERIFY2(r.ok() && r.status == 200, qPrintable(r.error + m_slp.stderrText().right(1500)));
    QCOMPARE(r.header("content-type"), contentType);
    QCOMPARE(r.body.contains(": keep-alive\n\n"), comments);
    QCOMPARE(QByteArray(r.body).replace(": keep-alive\n\n", ""),
             QByteArray("data: 1\n\ndata: 2\n\n"));
}

void TestHostileUpstreams::unfitUpstreamRequestId_data()
{
    QTest::addColumn<QByteArray>("upstreamId");
    QTest::addColumn<int>("status");
    QTest::addColumn<bool>("relayed");
    QTest::newRow("plain id") << QByteArray("up-1234") << 200 << true;
    QTest::newRow("129 bytes") << QByteArray(129, 'r') << 200 << false;
    QTest::newRow("1 KiB") << QByteArray(1024, 'r') << 200 << false;
    QTest::newRow("space inside") << QByteArray("a b") << 200 << false;
    QTest::newRow("non-ASCII") << QByteArray("caf\xc3\xa9") << 200 << false;
    // A control byte makes the head malformed on both transports: never relayed, a 502.
    QTest::newRow("ESC") << QByteArray("red\x1b[31m") << 502 << false;
    QTest::newRow("BEL") << QByteArray("a\x07") << 502 << false;
}

void TestHostileUpstreams::unfitUpstreamRequestId()
{
    QFETCH(QByteArray, upstreamId);
    QFETCH(int, status);
    QFETCH(bool, relayed);
    const ChildProcess::Mark mark = m_slp.mark();
    m_upstream.setAnswer("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Request-Id: " +
                             upstreamId + "\r\nContent-Length: 2\r\n\r\n",
                         {"{}"}, 0);
    const HttpResult r = chat("raw");
    QVERIFY2(r.ok() && r.status == status, qPrintable(r.error + m_slp.stderrText().right(1500)));
    QCOMPARE(r.headerValues("x-request-id").size(), 1);
    if (relayed) {
        QCOMPARE(r.header("x-request-id"), upstreamId);
        return;
    }
    const QByteArray id = r.header("x-request-id");
    QVERIFY2(id.startsWith("slpq"), id.constData());
    const QString control = controlByteIn(QByteArray(r.raw).replace("\r\n", "\n"));
    QVERIFY2(control.isEmpty(), qPrintable(control));
    if (status == 200) {
        // Logged escaped and cut, with why.
        const QRegularExpressionMatch line = m_slp.waitForLog(
            QRegularExpression(QStringLiteral("upstream \\S+ sent X-Request-Id \"[^\"]*\" \\(") +
                               QStringLiteral(".*\\): not relayed, the client gets SLP's own id")),
            5000, mark);
        QVERIFY2(line.hasMatch(), qPrintable(m_slp.stderrText().right(1500)));
        QVERIFY(line.captured(0).size() < 400);
    } else {
        QVERIFY(m_slp.waitForLog(containing("malformed response head: "), 5000, mark).hasMatch());
    }
}

void TestHostileUpstreams::logHasNoControlBytes()
{
    // Everything the attacker's names and ids went through: not one control byte in slp's log.
    const QString found = controlByteIn(m_slp.stderrText().toUtf8());
    QVERIFY2(found.isEmpty(), qPrintable(found));
}

QTEST_GUILESS_MAIN(TestHostileUpstreams)
#include "tst_hostile_upstreams.moc"
