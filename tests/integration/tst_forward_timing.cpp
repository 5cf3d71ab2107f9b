// SPDX-License-Identifier: GPL-3.0-or-later
// Timing through the real slp against the mock vLLM upstream: no per-host connection cap
// queues requests (Qt's 6 per host), the timeout is time to the response head only (and is
// spelled as configured), never retried, measured in the latency histogram, and SIGTERM drains
// in-flight streams before a clean exit.
#include "prometheustext.h"
#include "testsupport.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>
#include <QtTest>

#include <algorithm>
#include <csignal>
#include <functional>
#include <memory>
#include <vector>

using namespace slp::test;

namespace {

const QRegularExpression SlpIdRe(QStringLiteral("^slpq[0-9a-f]{24}$"));

QByteArray chatBody(const QString &model, bool stream)
{
    return QStringLiteral(
               R"({"model":"%1","stream":%2,"messages":[{"role":"user","content":"hi"}]})")
        .arg(model, stream ? QStringLiteral("true") : QStringLiteral("false"))
        .toUtf8();
}

qint64 nextSeq(MockUpstream &mock)
{
    return mock.stats().value("next_seq").toInteger() - 1;
}

// Min / median / max of a list of latencies, for the log.
QString summary(QList<qint64> values)
{
    if (values.isEmpty())
        return QStringLiteral("(none)");
    std::sort(values.begin(), values.end());
    return QStringLiteral("min %1 ms, median %2 ms, max %3 ms")
        .arg(values.first())
        .arg(values.at(values.size() / 2))
        .arg(values.last());
}

// N client connections sending at once; each one's first response byte is timed from its own
// send on the test's clock (readyRead fires as bytes arrive, whatever order we read in later).
struct Fleet
{
    std::vector<std::unique_ptr<RawConnection>> conns;
    std::vector<qint64> sentAt;
    std::vector<qint64> firstByteAt;
    QElapsedTimer clock;
    qint64 connectPhaseMs = 0;
    qint64 maxConnectMs = 0;
    int slowConnects = 0; // > 500 ms: a SYN dropped by a full accept queue, retried after 1 s

    // Connects n sockets first (so connection set-up is not in the measurement), then sends.
    QString launch(int n, const QString &host, quint16 port,
                   const std::function<QByteArray(int)> &request)
    {
        clock.start();
        conns.clear();
        sentAt.assign(size_t(n), -1);
        firstByteAt.assign(size_t(n), -1);
        for (int i = 0; i < n; ++i) {
            auto c = std::make_unique<RawConnection>();
            const qint64 before = clock.elapsed();
            const bool connected = c->connectTo(host, port, 10000);
            maxConnectMs = std::max(maxConnectMs, clock.elapsed() - before);
            slowConnects += clock.elapsed() - before > 500 ? 1 : 0;
            if (!connected)
                return QStringLiteral("connection %1 failed: %2").arg(i).arg(c->errorString());
            QObject::connect(c->socket(), &QTcpSocket::readyRead, c->socket(), [this, i] {
                if (firstByteAt[size_t(i)] < 0)
                    firstByteAt[size_t(i)] = clock.elapsed();
            });
            conns.push_back(std::move(c));
        }
        connectPhaseMs = clock.elapsed();
        for (int i = 0; i < n; ++i) {
            sentAt[size_t(i)] = clock.elapsed();
            if (!conns[size_t(i)]->send(request(i)))
                return QStringLiteral("send %1 failed").arg(i);
        }
        return {};
    }

    bool waitAllFirstBytes(int timeoutMs)
    {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < timeoutMs) {
            if (std::all_of(firstByteAt.begin(), firstByteAt.end(),
                            [](qint64 v) { return v >= 0; }))
                return true;
            pumpEvents(10);
        }
        return false;
    }

    QList<qint64> latencies() const
    {
        QList<qint64> out;
        for (size_t i = 0; i < sentAt.size(); ++i)
            out << (firstByteAt[i] < 0 ? -1 : firstByteAt[i] - sentAt[i]);
        return out;
    }
};

} // namespace

class TestForwardTiming : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void concurrentStreamsStartTogether();
    void manyConcurrentRequestsNotQueued();
    void timeoutBeforeHeadIs502();
    void timeoutSpelledAsConfigured();
    void timeoutInDebugCatalog();
    void pauseAfterHeadIsNotATimeout();
    void noRetryAfterTimeout();
    void latencyHistogramCounts();
    void gracefulDrainOnSigterm();

private:
    QString slpLog(SlpDaemon &slp) { return slp.stderrText().right(4000); }
    QString configYaml(const QString &extraTop = {}) const
    {
        // Every backend pinned (model: alpha), so discovery never probes the mock.
        return extraTop + QStringLiteral("backends:\n"
                                         "  - name: t-main\n"
                                         "    url: %1\n"
                                         "    model: alpha\n"
                                         "    timeout: 10s\n"
                                         "  - name: t-1s\n"
                                         "    url: %1\n"
                                         "    model: alpha\n"
                                         "    timeout: 1s\n"
                                         "  - name: t-1500\n"
                                         "    url: %1\n"
                                         "    model: alpha\n"
                                         "    timeout: 1500ms\n"
                                         "  - name: t-default\n"
                                         "    url: %1\n"
                                         "    model: alpha\n"
                                         "  - name: t-retry\n"
                                         "    url: %1\n"
                                         "    model: alpha\n"
                                         "    timeout: 1s\n"
                                         "    retry: true\n")
                              .arg(m_mock.url());
    }
    // One timed-out request: checks status, elapsed window, message; returns slp's request id.
    QString expectTimeout(const QString &model, const QString &timeoutText, qint64 minMs,
                          qint64 maxMs);

    MockUpstream m_mock;
    SlpDaemon m_slp;
};

void TestForwardTiming::initTestCase()
{
    QVERIFY2(m_slp.startWith(
                 m_mock, [this](const QString &) { return configYaml(); }),
             qPrintable(m_slp.errorString()));
}

void TestForwardTiming::cleanupTestCase()
{
    m_slp.stop();
    m_mock.stop();
}

void TestForwardTiming::init()
{
    QVERIFY(m_mock.reset());
}

void TestForwardTiming::concurrentStreamsStartTogether()
{
    // Each stream: role, 4 content, final, [DONE], 500 ms apart = 3 s long. With Qt's 6
    // connections per host in the way, heads would come in batches of 6, 3 s apart (the 64th
    // after ~30 s). Without queueing every head comes within tens of ms; the limit of 1500 ms
    // is half a batch period, leaving a loaded 2-core box 1.5 s of slack while still failing
    // for any queueing at all.
    constexpr int N = 64;
    constexpr qint64 HeadLimitMs = 1500;
    Fleet fleet;
    const QByteArray request =
        buildRequest("POST", m_slp.url() + "/v1/chat/completions", chatBody("t-main", true),
                     {{"X-Mock-Event-Interval-Ms", "500"},
                      {"X-Mock-Events", "4"},
                      {"X-Mock-Reasoning-Events", "0"}});
    const QString err = fleet.launch(N, m_slp.host(), m_slp.port(), [&](int) { return request; });
    QVERIFY2(err.isEmpty(), qPrintable(err));
    const qint64 sendSpan = fleet.sentAt.back() - fleet.sentAt.front();
    qInfo() << N << "client connections opened in" << fleet.connectPhaseMs << "ms (slowest connect"
            << fleet.maxConnectMs << "ms," << fleet.slowConnects << "connects over 500 ms)";
    const bool allHeads = fleet.waitAllFirstBytes(15000);
    const QList<qint64> lat = fleet.latencies();
    qInfo().noquote() << QStringLiteral("%1 streams sent over %2 ms; head latency %3")
                             .arg(N)
                             .arg(sendSpan)
                             .arg(summary(lat));
    qInfo() << "per-connection head latency ms:" << lat;
    QVERIFY2(allHeads, qPrintable(slpLog(m_slp)));

    const QJsonObject stats = m_mock.stats();
    qInfo() << "mock stats:" << stats;
    QVERIFY2(stats.value("max_in_flight").toInt() >= N, qPrintable(QJsonDocument(stats).toJson()));

    for (qsizetype i = 0; i < lat.size(); ++i)
        QVERIFY2(lat.at(i) < HeadLimitMs,
                 qPrintable(QStringLiteral("connection %1: %2 ms").arg(i).arg(lat.at(i))));

    QElapsedTimer done;
    done.start();
    for (int i = 0; i < N; ++i) {
        const HttpResult r = fleet.conns[size_t(i)]->readResponse(20000);
        QVERIFY2(r.ok(), qPrintable(QStringLiteral("stream %1: %2").arg(i).arg(r.error)));
        QCOMPARE(r.status, 200);
        const QList<QByteArray> events = sseData(r.body);
        QCOMPARE(events.size(), 7);
        QCOMPARE(events.last(), QByteArray("[DONE]"));
    }
    qInfo() << "all" << N << "streams complete" << fleet.clock.elapsed()
            << "ms after the first send";
    // 3 s streams all running at once: the last ends long before a second batch could.
    QVERIFY2(fleet.clock.elapsed() < 8000, QByteArray::number(fleet.clock.elapsed()));
}

void TestForwardTiming::manyConcurrentRequestsNotQueued()
{
    // 256 requests whose answers each take 1 s upstream. Any connection cap below 256 would
    // queue some behind a full second: the slowest would take >= 2 s.
    constexpr int N = 256;
    constexpr qint64 Delay = 1000;
    constexpr qint64 LimitMs = 1800;
    Fleet fleet;
    const QByteArray request =
        buildRequest("POST", m_slp.url() + "/v1/chat/completions", chatBody("t-main", false),
                     {{"X-Mock-Delay-Ms", QByteArray::number(Delay)}});
    const QString err = fleet.launch(N, m_slp.host(), m_slp.port(), [&](int) { return request; });
    QVERIFY2(err.isEmpty(), qPrintable(err));
    const qint64 sendSpan = fleet.sentAt.back() - fleet.sentAt.front();
    qInfo() << N << "client connections opened in" << fleet.connectPhaseMs << "ms (slowest connect"
            << fleet.maxConnectMs << "ms," << fleet.slowConnects << "connects over 500 ms)";
    const bool all = fleet.waitAllFirstBytes(15000);
    const QList<qint64> lat = fleet.latencies();
    qInfo().noquote()
        << QStringLiteral(
               "%1 requests (upstream delay %2 ms) sent over %3 ms; response latency %4; "
               "last answer %5 ms after the first send")
               .arg(N)
               .arg(Delay)
               .arg(sendSpan)
               .arg(summary(lat))
               .arg(*std::max_element(fleet.firstByteAt.begin(), fleet.firstByteAt.end()));
    QVERIFY2(all, qPrintable(slpLog(m_slp)));
    const QJsonObject stats = m_mock.stats();
    qInfo() << "mock stats:" << stats;
    QVERIFY2(stats.value("max_in_flight").toInt() >= N, qPrintable(QJsonDocument(stats).toJson()));
    // The mock's delay is a coarse QTimer (up to 5 % early): a lower bound of 90 % of it.
    for (qsizetype i = 0; i < lat.size(); ++i) {
        QVERIFY2(lat.at(i) >= Delay * 9 / 10,
                 qPrintable(QStringLiteral("connection %1: %2 ms").arg(i).arg(lat.at(i))));
        QVERIFY2(lat.at(i) < LimitMs,
                 qPrintable(QStringLiteral("connection %1: %2 ms").arg(i).arg(lat.at(i))));
    }
    for (int i = 0; i < N; ++i) {
        const HttpResult r = fleet.conns[size_t(i)]->readResponse(10000);
        QVERIFY2(r.ok(), qPrintable(QStringLiteral("request %1: %2").arg(i).arg(r.error)));
        QCOMPARE(r.status, 200);
        QCOMPARE(jsonObject(r.body).value("object").toString(), QStringLiteral("chat.completion"));
    }
}

QString TestForwardTiming::expectTimeout(const QString &model, const QString &timeoutText,
                                         qint64 minMs, qint64 maxMs)
{
    const ChildProcess::Mark mark = m_slp.mark();
    const HttpResult r = httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                                     chatBody(model, false), {{"X-Mock-Delay-Ms", "3000"}}, 10000);
    qInfo() << model << "(timeout" << timeoutText << "): status" << r.status << "after" << r.headMs
            << "ms; body" << r.body;
    [&] {
        QCOMPARE(r.status, 502);
        QVERIFY2(r.headMs >= minMs && r.headMs <= maxMs,
                 qPrintable(QStringLiteral("502 after %1 ms, want %2..%3")
                                .arg(r.headMs)
                                .arg(minMs)
                                .arg(maxMs)));
    }();
    if (QTest::currentTestFailed())
        return {};
    const QString id = QString::fromLatin1(r.header("x-request-id"));
    [&] {
        QVERIFY2(SlpIdRe.match(id).hasMatch(), qPrintable(id));
        const QJsonObject error = jsonObject(r.body).value("error").toObject();
        QCOMPARE(error.value("message").toString(),
                 QStringLiteral("upstream request timed out after %1 (request id: %2)")
                     .arg(timeoutText, id));
        QVERIFY(error.contains("type"));
        QVERIFY(error.contains("param"));
        QVERIFY(error.contains("code"));
    }();
    if (QTest::currentTestFailed())
        return {};
    // The log line carries slp's id, the same spelling and the model; for retry: true routes the
    // attempt count reads 1/2. The socket transport names the address it connected to.
    const QString peer = SlpDaemon::transport() == QLatin1String("socket")
                             ? QStringLiteral(" \\(127\\.0\\.0\\.1:\\d+\\)")
                             : QString();
    const QRegularExpression lineRe(
        QStringLiteral("^\\[%1\\] Attempt 1/\\d for model %2 failed: timed out after %3: POST "
                       "\"%4\"%5: no response headers model=\"%2\"$")
            .arg(id, QRegularExpression::escape(model), QRegularExpression::escape(timeoutText),
                 QRegularExpression::escape(m_mock.url() + "/v1/chat/completions"), peer));
    const QRegularExpressionMatch m = m_slp.waitForLog(lineRe, 3000, mark);
    [&] {
        QVERIFY2(m.hasMatch(), qPrintable(QStringLiteral("no log line like %1 in:\n%2")
                                              .arg(lineRe.pattern(), slpLog(m_slp))));
    }();
    if (m.hasMatch())
        qInfo() << "slp logged:" << m.captured(0);
    return id;
}

void TestForwardTiming::timeoutBeforeHeadIs502()
{
    const QString id = expectTimeout("t-1s", "1s", 900, 2500);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(!id.isEmpty());
    QCOMPARE(m_slp.countLog(QRegularExpression(
                 QStringLiteral("^\\[%1\\] Attempt 1/1 for model t-1s failed: timed out after 1s: ")
                     .arg(id))),
             1);
    // The upstream request was abandoned, not left running.
    QTRY_COMPARE_WITH_TIMEOUT(m_mock.stats().value("in_flight").toInt(), 0, 3000);
}

void TestForwardTiming::timeoutSpelledAsConfigured()
{
    const QString id = expectTimeout("t-1500", "1500ms", 1400, 2900);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(!id.isEmpty());
}

void TestForwardTiming::timeoutInDebugCatalog()
{
    const HttpResult r = httpRequest("GET", m_slp.url() + "/v1/models?debug");
    QCOMPARE(r.status, 200);
    QMap<QString, QString> timeouts;
    for (const QJsonValue &v : jsonObject(r.body).value("data").toArray())
        timeouts.insert(v.toObject().value("id").toString(),
                        v.toObject().value("timeout").toString());
    qInfo() << "debug catalog timeouts:" << timeouts;
    QCOMPARE(timeouts.value("t-default"), QStringLiteral("1m0s")); // the 60s default
    QCOMPARE(timeouts.value("t-1s"), QStringLiteral("1s"));
    QCOMPARE(timeouts.value("t-1500"), QStringLiteral("1.5s"));
    QCOMPARE(timeouts.value("t-main"), QStringLiteral("10s"));
}

void TestForwardTiming::pauseAfterHeadIsNotATimeout()
{
    // timeout: 1s, the head comes at once, then the stream pauses 2.5 s: it must not be cut.
    const HttpResult r =
        httpRequest("POST", m_slp.url() + "/v1/chat/completions", chatBody("t-1s", true),
                    {{"X-Mock-Pause-After", "2"}, {"X-Mock-Pause-Ms", "2500"}}, 15000);
    qInfo() << "status" << r.status << "head after" << r.headMs << "ms, done after" << r.elapsedMs
            << "ms; chunk arrivals" << r.chunkArrivalMs;
    QVERIFY2(r.ok(), qPrintable(r.error + "\n" + slpLog(m_slp)));
    QCOMPARE(r.status, 200);
    QVERIFY(r.body.endsWith("data: [DONE]\n\n"));
    QCOMPARE(sseData(r.body).size(), 10);
    QVERIFY2(r.headMs < 1000, QByteArray::number(r.headMs));
    // The mock's 2.5 s pause is a coarse QTimer (5 % early at most): well past the 1 s timeout.
    QVERIFY2(r.chunkArrivalMs.last() >= 2200, QByteArray::number(r.chunkArrivalMs.last()));
}

void TestForwardTiming::noRetryAfterTimeout()
{
    const qint64 since = nextSeq(m_mock);
    const ChildProcess::Mark mark = m_slp.mark();
    const QString id = expectTimeout("t-retry", "1s", 900, 2500);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(!id.isEmpty());
    QVERIFY(
        m_slp.countLog(QRegularExpression(
                           QStringLiteral("^\\[%1\\] Attempt 1/2 for model t-retry failed: timed "
                                          "out after 1s: ")
                               .arg(id)),
                       mark) == 1);
    // A re-dial would follow the timeout at once: none comes within the quiet window.
    pumpEvents(kQuietWindowMs);
    const QJsonArray recs = m_mock.requests(since);
    qInfo() << "upstream requests recorded:" << recs.size();
    QCOMPARE(recs.size(), 1);
    QCOMPARE(
        m_slp.countLog(QRegularExpression(QStringLiteral("^\\[%1\\] Attempt 2/2").arg(id)), mark),
        0);
}

void TestForwardTiming::latencyHistogramCounts()
{
    auto count = [this](const QString &sample) -> std::optional<double> {
        const HttpResult r = httpRequest("GET", m_slp.url() + "/metrics");
        if (r.status != 200)
            return std::nullopt;
        const slp::PromParseResult parsed = slp::parsePromText(r.body);
        if (!parsed.error.isEmpty())
            return std::nullopt;
        if (parsed.families.value("slp_upstream_latency_seconds").type !=
            QLatin1String("histogram"))
            return std::nullopt;
        return slp::findPromSample(parsed.samples, sample, {{"model_id", "t-main"}}).value_or(0.0);
    };
    const std::optional<double> before = count("slp_upstream_latency_seconds_count");
    const std::optional<double> sumBefore = count("slp_upstream_latency_seconds_sum");
    QVERIFY2(before.has_value(), "no slp_upstream_latency_seconds histogram in /metrics");
    constexpr int N = 3;
    for (int i = 0; i < N; ++i) {
        const HttpResult r = httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                                         chatBody("t-main", false), {{"X-Mock-Delay-Ms", "100"}});
        QCOMPARE(r.status, 200);
        const std::optional<double> now = count("slp_upstream_latency_seconds_count");
        QVERIFY(now.has_value());
        QCOMPARE(*now, *before + i + 1);
    }
    const std::optional<double> sumAfter = count("slp_upstream_latency_seconds_sum");
    qInfo() << "latency count" << *before << "->" << *before + N << "; sum"
            << sumBefore.value_or(-1) << "->" << sumAfter.value_or(-1);
    QVERIFY(sumBefore && sumAfter);
    // Three heads the mock held back 100 ms each (a coarse QTimer: up to 5 % early).
    QVERIFY2(*sumAfter - *sumBefore >= 0.25, qPrintable(QString::number(*sumAfter - *sumBefore)));
    QCOMPARE(count("slp_upstream_latency_seconds_bucket").has_value(), true);
}

void TestForwardTiming::gracefulDrainOnSigterm()
{
    SlpDaemon slp;
    QVERIFY2(slp.start(configYaml(QStringLiteral("shutdown_grace: 5s\n"))),
             qPrintable(slp.errorString()));

    // role, 4 content, final, [DONE], 400 ms apart: about 2.4 s.
    RawConnection conn;
    QVERIFY(conn.connectTo(slp.host(), slp.port()));
    QElapsedTimer clock;
    clock.start();
    QVERIFY(
        conn.send(buildRequest("POST", slp.url() + "/v1/chat/completions", chatBody("t-main", true),
                               {{"X-Mock-Event-Interval-Ms", "400"},
                                {"X-Mock-Events", "4"},
                                {"X-Mock-Reasoning-Events", "0"}})));
    QVERIFY2(conn.waitForData("\"assistant\"", 3000), qPrintable(slpLog(slp)));

    QVERIFY(slp.process().sendSignal(SIGTERM));
    const qint64 signalledAt = clock.elapsed();

    // New connections are refused soon after the signal.
    qint64 refusedAt = -1;
    int accepted = 0;
    while (clock.elapsed() - signalledAt < 3000) {
        QTcpSocket probe;
        probe.connectToHost(slp.host(), slp.port());
        if (!probe.waitForConnected(1000)) {
            refusedAt = clock.elapsed();
            qInfo() << "new connection refused" << refusedAt - signalledAt
                    << "ms after SIGTERM:" << probe.errorString();
            break;
        }
        ++accepted;
        probe.abort();
        pumpEvents(25);
    }
    QVERIFY2(refusedAt >= 0,
             qPrintable(QStringLiteral("still accepting 3 s after SIGTERM\n") + slpLog(slp)));
    QVERIFY2(refusedAt - signalledAt < 1000, QByteArray::number(refusedAt - signalledAt));

    // The stream under way finishes whole.
    const HttpResult r = conn.readResponse(10000);
    const qint64 streamDoneAt = clock.elapsed();
    QVERIFY2(r.ok(), qPrintable(r.error + "\n" + slpLog(slp)));
    QCOMPARE(r.status, 200);
    QVERIFY(r.body.endsWith("data: [DONE]\n\n"));
    QVERIFY(r.raw.endsWith("0\r\n\r\n"));
    QCOMPARE(sseData(r.body).size(), 7);

    // Then slp exits 0, within shutdown_grace of the signal.
    QVERIFY2(slp.process().waitForExit(8000), qPrintable(slpLog(slp)));
    const qint64 exitedAt = clock.elapsed();
    qInfo() << "SIGTERM at" << signalledAt << "ms; probes accepted before refusal:" << accepted
            << "; stream done at" << streamDoneAt << "ms; slp exited at" << exitedAt
            << "ms with code" << slp.process().exitCode();
    QVERIFY(!slp.process().crashed());
    QCOMPARE(slp.process().exitCode(), 0);
    QVERIFY2(exitedAt - signalledAt < 5000 + 1000, QByteArray::number(exitedAt - signalledAt));
    // The stream ran to its natural end after the signal (it was not cut at once).
    QVERIFY2(streamDoneAt - signalledAt >= 1000, QByteArray::number(streamDoneAt - signalledAt));
}

QTEST_GUILESS_MAIN(TestForwardTiming)
#include "tst_forward_timing.moc"
