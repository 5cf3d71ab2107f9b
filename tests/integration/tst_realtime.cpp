// SPDX-License-Identifier: GPL-3.0-or-later
// The Realtime WebSocket through the real slp: the `ws` npm client against the mock
// upstream's WebSocket backend. A session (session.update, 1 MiB of input_audio_buffer.append
// in 8 KiB events, server events back) closed by either side; the ?model= rename reaching the
// backend; a tunnel held open across a SIGHUP; the counts in /metrics; and the upgrades that
// must not become tunnels, each a 4xx or 502 that never reaches a backend it should not.
#include "deadport.h"
#include "prometheustext.h"
#include "testsupport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QUrl>
#include <QtTest>

using namespace slp::test;

namespace {
// A name that must be percent-encoded in a query: the rename re-encodes it.
const QString rtUpstream = QStringLiteral("org/gpt rt+local");

QByteArray upgradeRequest(const QByteArray &target)
{
    return "GET " + target +
           " HTTP/1.1\r\nHost: slp\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
           "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
}
} // namespace

class TestRealtime : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void session_data();
    void session();
    void tunnelSurvivesReload();
    void sessionOverUnixBackend();
    void silentTunnelClosedByStreamIdleTimeout();
    void shutdownCutsTunnelsAfterTheGrace();
    void countsInMetrics();
    void upgradesThatAreNotTunnels_data();
    void upgradesThatAreNotTunnels();

private:
    // A session that waits `holdMs` mid-way (realtime_ws.mjs hold:MS), started on `slp`;
    // returns once the client says it is holding.
    bool startHoldingClient(ChildProcess &client, SlpDaemon &slp, int holdMs);
    QJsonObject runClient(const QString &model, const QString &mode);
    int upgradesSeenBy(MockUpstream &mock);
    double metric(const QString &name, const slp::PromLabels &labels);

    MockUpstream m_mock;
    MockUpstream m_refusing;
    DeadPort m_dead;
    SlpDaemon m_slp;
    int m_sessions = 0;
};

void TestRealtime::initTestCase()
{
    if (const QString why = nodeSkipReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    const QString missing = nodePackageMissing(QStringLiteral("ws"));
    QVERIFY2(missing.isEmpty(), qPrintable(missing));
    QVERIFY2(m_mock.start({rtUpstream}), qPrintable(m_mock.errorString()));
    QVERIFY2(m_refusing.start({QStringLiteral("refused")}, {QStringLiteral("--ws-refuse")}),
             qPrintable(m_refusing.errorString()));
    const QString config = QStringLiteral(R"(
log_requests: true
backends:
  - name: rt
    url: %1
    model: "%2"
    timeout: 5s
  - name: refused
    url: %3
    model: refused
  - name: dead
    url: http://127.0.0.1:%4
    model: dead
)")
                               .arg(m_mock.url(), rtUpstream, m_refusing.url())
                               .arg(m_dead.port());
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
}

QJsonObject TestRealtime::runClient(const QString &model, const QString &mode)
{
    const QString script = nodeScript(QStringLiteral("realtime_ws.mjs"));
    QString wsUrl = m_slp.url();
    wsUrl.replace(QStringLiteral("http://"), QStringLiteral("ws://"));
    const CommandResult run = runCommand(nodeProgram(), {script, wsUrl, model, mode}, 60000);
    if (!run.started || run.exitCode != 0) {
        qWarning().noquote() << run.error << run.stdErr << m_slp.stderrText().right(2000);
        return {};
    }
    const QList<QByteArray> lines = run.stdOut.trimmed().split('\n');
    return QJsonDocument::fromJson(lines.last()).object();
}

int TestRealtime::upgradesSeenBy(MockUpstream &mock)
{
    int n = 0;
    for (const QJsonValue &v : mock.requests())
        n += v.toObject()
                 .value(QStringLiteral("target"))
                 .toString()
                 .startsWith(QStringLiteral("/v1/realtime"));
    return n;
}

double TestRealtime::metric(const QString &name, const slp::PromLabels &labels)
{
    const HttpResult r = httpRequest("GET", m_slp.url() + "/metrics");
    const slp::PromParseResult parsed = slp::parsePromText(r.body);
    return slp::findPromSample(parsed.samples, name, labels).value_or(0);
}

void TestRealtime::session_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("client closes") << QStringLiteral("client-close");
    QTest::newRow("server closes") << QStringLiteral("server-close");
}

void TestRealtime::session()
{
    QFETCH(QString, mode);
    const ChildProcess::Mark from = m_slp.mark();
    const QJsonObject got = runClient(QStringLiteral("rt"), mode);
    QVERIFY2(got.value(QStringLiteral("ok")).toBool(), QJsonDocument(got).toJson().constData());
    ++m_sessions;
    // The backend saw its own name, re-encoded in the query; the rest of the target verbatim.
    QCOMPARE(got.value(QStringLiteral("model")).toString(), rtUpstream);
    const QString target = got.value(QStringLiteral("target")).toString();
    QVERIFY2(target.startsWith(QStringLiteral("/v1/realtime?model=") +
                               QString::fromLatin1(QUrl::toPercentEncoding(rtUpstream))),
             qPrintable(target));
    QCOMPARE(got.value(QStringLiteral("bytes")).toInteger(), 1 << 20);
    QVERIFY(got.value(QStringLiteral("deltas")).toInt() >= 1);
    QCOMPARE(got.value(QStringLiteral("closeCode")).toInt(), 1000);
    // One line at open, one at close, with the same request id.
    const QRegularExpressionMatch open = m_slp.waitForLog(
        QRegularExpression(QStringLiteral("\\[(slpq\\w+)\\] GET /v1/realtime\\S* .* 101 ")), 5000,
        from);
    QVERIFY2(open.hasMatch(), qPrintable(m_slp.stderrText().right(2000)));
    QVERIFY(m_slp
                .waitForLog(QRegularExpression(QStringLiteral("\\[%1\\] tunnel for model rt "
                                                              "closed after \\S+ \\(\\d+ B up, "
                                                              "\\d+ B down\\)")
                                                   .arg(open.captured(1))),
                            5000, from)
                .hasMatch());
}

void TestRealtime::tunnelSurvivesReload()
{
    ChildProcess client;
    const QString script = nodeScript(QStringLiteral("realtime_ws.mjs"));
    QString wsUrl = m_slp.url();
    wsUrl.replace(QStringLiteral("http://"), QStringLiteral("ws://"));
    QVERIFY(client.start(nodeProgram(),
                         {script, wsUrl, QStringLiteral("rt"), QStringLiteral("hold:3000")}));
    QVERIFY2(client.waitForLine(QRegularExpression(QStringLiteral("^HOLDING")), 20000).hasMatch(),
             qPrintable(client.allOutput()));
    const ChildProcess::Mark from = m_slp.mark();
    QVERIFY(m_slp.reload());
    QVERIFY2(m_slp.waitForLog(QRegularExpression(QStringLiteral("reload")), 5000, from).hasMatch(),
             qPrintable(m_slp.stderrText().right(2000)));
    QVERIFY(client.waitForExit(30000));
    QVERIFY2(client.exitCode() == 0, qPrintable(client.allOutput()));
    ++m_sessions;
}

// A unix: backend: the tunnel's dialer connects the socket file (the socket transport is
// named in the config: under qnam, unix: backends are refused at start-up).
void TestRealtime::sessionOverUnixBackend()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("rt.sock"));
    MockUpstream onUnix;
    QVERIFY2(onUnix.start({QStringLiteral("rt-unix")}, {QStringLiteral("--unix"), path}),
             qPrintable(onUnix.errorString()));
    SlpDaemon slp;
    QVERIFY2(slp.start(QStringLiteral("upstream_transport: socket\nbackends:\n  - name: rt\n"
                                      "    url: unix:%1\n    model: rt-unix\n")
                           .arg(path)),
             qPrintable(slp.errorString()));
    const QString script = nodeScript(QStringLiteral("realtime_ws.mjs"));
    const CommandResult run =
        runCommand(nodeProgram(),
                   {script, slp.url().replace(QStringLiteral("http://"), QStringLiteral("ws://")),
                    QStringLiteral("rt"), QStringLiteral("client-close")},
                   60000);
    QVERIFY2(run.exitCode == 0, run.stdErr.constData());
    const QJsonObject got =
        QJsonDocument::fromJson(run.stdOut.trimmed().split('\n').last()).object();
    QCOMPARE(got.value(QStringLiteral("model")).toString(), QStringLiteral("rt-unix"));
    QCOMPARE(got.value(QStringLiteral("bytes")).toInteger(), 1 << 20);
    QCOMPARE(slp.stop(), 0);
}

bool TestRealtime::startHoldingClient(ChildProcess &client, SlpDaemon &slp, int holdMs)
{
    const QString script = nodeScript(QStringLiteral("realtime_ws.mjs"));
    return client.start(nodeProgram(),
                        {script,
                         slp.url().replace(QStringLiteral("http://"), QStringLiteral("ws://")),
                         QStringLiteral("rt"), QStringLiteral("hold:%1").arg(holdMs)}) &&
           client.waitForLine(QRegularExpression(QStringLiteral("^HOLDING")), 20000).hasMatch();
}

// stream_idle_timeout closes a tunnel silent in both directions, and says so.
void TestRealtime::silentTunnelClosedByStreamIdleTimeout()
{
    SlpDaemon slp;
    QVERIFY2(slp.start(QStringLiteral("log_requests: true\nbackends:\n  - name: rt\n"
                                      "    url: %1\n    model: \"%2\"\n"
                                      "    stream_idle_timeout: 400ms\n")
                           .arg(m_mock.url(), rtUpstream)),
             qPrintable(slp.errorString()));
    ChildProcess client;
    QVERIFY2(startHoldingClient(client, slp, 5000), qPrintable(client.allOutput()));
    QVERIFY2(slp.waitForLog(QRegularExpression(QStringLiteral(
                                "tunnel for model rt closed: idle for 400ms after ")),
                            5000)
                 .hasMatch(),
             qPrintable(slp.stderrText().right(2000)));
    QVERIFY(client.waitForExit(20000));
    QVERIFY2(client.exitCode() != 0, "the client's session should have been cut");
    QCOMPARE(slp.stop(), 0);
}

// SIGTERM: an open tunnel keeps the drain waiting up to shutdown_grace, then it is cut, and
// the cut is logged.
void TestRealtime::shutdownCutsTunnelsAfterTheGrace()
{
    SlpDaemon slp;
    QVERIFY2(slp.start(QStringLiteral("shutdown_grace: 1s\nbackends:\n  - name: rt\n"
                                      "    url: %1\n    model: \"%2\"\n")
                           .arg(m_mock.url(), rtUpstream)),
             qPrintable(slp.errorString()));
    ChildProcess client;
    QVERIFY2(startHoldingClient(client, slp, 20000), qPrintable(client.allOutput()));
    QElapsedTimer clock;
    clock.start();
    QCOMPARE(slp.stop(15000), 0);
    const qint64 tookMs = clock.elapsed();
    QVERIFY2(tookMs >= 900, qPrintable(QString::number(tookMs))); // it waited for the tunnel
    QVERIFY2(slp.stderrText().contains(QStringLiteral("shutdown grace over")),
             qPrintable(slp.stderrText().right(2000)));
    QVERIFY2(slp.stderrText().contains(QStringLiteral("tunnel for model rt cut at shutdown")),
             qPrintable(slp.stderrText().right(2000)));
    QVERIFY(client.waitForExit(20000));
    QVERIFY(client.exitCode() != 0);
}

void TestRealtime::countsInMetrics()
{
    const slp::PromLabels rt{{QStringLiteral("model_id"), QStringLiteral("rt")}};
    QCOMPARE(metric(QStringLiteral("slp_requests_total"),
                    {{QStringLiteral("model_id"), QStringLiteral("rt")},
                     {QStringLiteral("code"), QStringLiteral("101")}}),
             double(m_sessions));
    QTRY_COMPARE_WITH_TIMEOUT(metric(QStringLiteral("slp_open_tunnels"), rt), 0.0, 5000);
    // 1 MiB of audio goes up base64-encoded in JSON, in masked frames: more than 1.33 MiB.
    const double up = metric(QStringLiteral("slp_tunnel_bytes_total"),
                             {{QStringLiteral("model_id"), QStringLiteral("rt")},
                              {QStringLiteral("direction"), QStringLiteral("up")}});
    QVERIFY2(up > m_sessions * (4.0 / 3) * (1 << 20), qPrintable(QString::number(up)));
    QVERIFY(metric(QStringLiteral("slp_tunnel_bytes_total"),
                   {{QStringLiteral("model_id"), QStringLiteral("rt")},
                    {QStringLiteral("direction"), QStringLiteral("down")}}) > 0);
}

void TestRealtime::upgradesThatAreNotTunnels_data()
{
    QTest::addColumn<QByteArray>("target");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("says");
    QTest::addColumn<bool>("reachesRt");
    QTest::newRow("no model parameter (a call_id sideband)")
        << QByteArray("/v1/realtime?call_id=rtc_123") << 400 << QByteArray("no model query")
        << false;
    QTest::newRow("empty model") << QByteArray("/v1/realtime?model=") << 400
                                 << QByteArray("model query parameter is empty") << false;
    QTest::newRow("model not UTF-8")
        << QByteArray("/v1/realtime?model=%ff") << 400 << QByteArray("not valid UTF-8") << false;
    QTest::newRow("unknown model")
        << QByteArray("/v1/realtime?model=nope") << 404 << QByteArray("does not exist") << false;
    QTest::newRow("refused upstream, relayed")
        << QByteArray("/v1/realtime?model=refused") << 403 << QByteArray() << false;
    QTest::newRow("backend down") << QByteArray("/v1/realtime?model=dead") << 502
                                  << QByteArray("upstream_failed") << false;
}

void TestRealtime::upgradesThatAreNotTunnels()
{
    QFETCH(QByteArray, target);
    QFETCH(int, status);
    QFETCH(QByteArray, says);
    QFETCH(bool, reachesRt);
    const int before = upgradesSeenBy(m_mock);
    const HttpResult r = rawHttp(m_slp.host(), m_slp.port(), upgradeRequest(target));
    QCOMPARE(r.status, status);
    QVERIFY2(r.body.contains(says), r.body.constData());
    QVERIFY(!r.header("x-request-id").isEmpty());
    // An answer to an upgrade closes the connection: it asked to leave HTTP.
    QCOMPARE(r.header("connection").toLower(), QByteArray("close"));
    pumpEvents(kQuietWindowMs);
    QCOMPARE(upgradesSeenBy(m_mock) - before, reachesRt ? 1 : 0);
}

QTEST_GUILESS_MAIN(TestRealtime)
#include "tst_realtime.moc"
