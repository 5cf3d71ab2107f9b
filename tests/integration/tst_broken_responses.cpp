// SPDX-License-Identifier: GPL-3.0-or-later
// Responses that started and did not end cleanly, through the real slp and the mock upstream:
// an idle cut (stream_idle_timeout), the upstream closing mid-body, the upstream resetting
// (RST) mid-body and the client leaving mid-stream. Each is counted in
// slp_responses_broken_total{model_id,reason}, and each one's log line is found by grepping
// the daemon's log for the X-Request-Id the client got (the upstream's) and for the model.
// The /metrics text passes `promtool check metrics`. Runs on both transports (.qnam twin).
#include "prometheustext.h"
#include "testsupport.h"

#include <QProcess>
#include <QStandardPaths>
#include <QtTest>

using namespace slp::test;

namespace {

QByteArray streamBody(const QString &model)
{
    return QStringLiteral(
               R"({"model":"%1","stream":true,"messages":[{"role":"user","content":"hi"}]})")
        .arg(model)
        .toUtf8();
}

// The X-Request-Id of a response head in raw bytes (the client's view), or empty.
QByteArray requestIdIn(const QByteArray &raw)
{
    const QByteArray head = raw.left(raw.indexOf("\r\n\r\n")).toLower();
    const qsizetype at = head.indexOf("\r\nx-request-id: ");
    if (at < 0)
        return {};
    const qsizetype start = at + 16;
    const qsizetype end = head.indexOf("\r\n", start);
    return raw.mid(start, (end < 0 ? head.size() : end) - start).trimmed();
}

} // namespace

class TestBrokenResponses : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void idleCut();
    void upstreamCutsMidBody_data();
    void upstreamCutsMidBody();
    void clientLeavesMidStream();
    void cleanStreamNotCounted();
    void promtoolChecksMetrics();

private:
    double broken(const QString &model, const QString &reason);
    // The request's log lines: those with the upstream's id, each naming the model.
    void expectLogLines(const QByteArray &upstreamId, const QString &model, const QString &what,
                        ChildProcess::Mark mark);
    HttpResult cutStream(const QString &model, const HeaderList &knobs);

    MockUpstream m_mock;
    SlpDaemon m_slp;
};

void TestBrokenResponses::initTestCase()
{
    QVERIFY2(!MockUpstream::binary().isEmpty(), "set SLP_MOCK_BIN");
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY2(m_mock.start(), qPrintable(m_mock.errorString()));
    // Pinned models: discovery never probes the mock.
    const QString config = QStringLiteral("log_requests: true\n"
                                          "shutdown_grace: 1s\n"
                                          "backends:\n"
                                          "  - name: plain\n"
                                          "    url: %1\n"
                                          "    model: alpha\n"
                                          "  - name: stall\n"
                                          "    url: %1\n"
                                          "    model: alpha\n"
                                          "    stream_idle_timeout: 500ms\n")
                               .arg(m_mock.url());
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
}

void TestBrokenResponses::cleanupTestCase()
{
    QCOMPARE(m_slp.stop(), 0);
    m_mock.stop();
}

void TestBrokenResponses::init()
{
    QVERIFY(m_mock.reset());
}

double TestBrokenResponses::broken(const QString &model, const QString &reason)
{
    const HttpResult r = httpRequest("GET", m_slp.url() + "/metrics");
    if (r.status != 200)
        return -2;
    const slp::PromParseResult parsed = slp::parsePromText(r.body);
    return slp::findPromSample(
               parsed.samples, QStringLiteral("slp_responses_broken_total"),
               {{QStringLiteral("model_id"), model}, {QStringLiteral("reason"), reason}})
        .value_or(0);
}

void TestBrokenResponses::expectLogLines(const QByteArray &upstreamId, const QString &model,
                                         const QString &what, ChildProcess::Mark mark)
{
    QVERIFY2(upstreamId.startsWith("gdqz"), upstreamId.constData()); // the mock's, not SLP's
    const QRegularExpression byId(
        QRegularExpression::escape(QStringLiteral("upstream=") + QString::fromLatin1(upstreamId)));
    const QRegularExpressionMatch line = m_slp.waitForLog(
        QRegularExpression(QStringLiteral("^\\[slpq[0-9a-f]{24}\\] %1.* upstream=%2 model=\"%3\"")
                               .arg(what,
                                    QRegularExpression::escape(QString::fromLatin1(upstreamId)),
                                    QRegularExpression::escape(model))),
        5000, mark);
    QVERIFY2(line.hasMatch(), qPrintable(m_slp.stderrText().right(3000)));
    qInfo() << "logged:" << line.captured(0);
    // Grepping for the id finds this request's lines, and each names the model.
    const QStringList lines = m_slp.process().lines(ChildProcess::Channel::Both, mark);
    int found = 0;
    for (const QString &l : lines) {
        if (l.contains(byId)) {
            ++found;
            QVERIFY2(l.contains(QStringLiteral(" model=\"%1\"").arg(model)), qPrintable(l));
        }
    }
    QVERIFY(found >= 1);
}

HttpResult TestBrokenResponses::cutStream(const QString &model, const HeaderList &knobs)
{
    RawConnection conn;
    if (!conn.connectTo(m_slp.host(), m_slp.port()) ||
        !conn.send(
            buildRequest("POST", m_slp.url() + "/v1/chat/completions", streamBody(model), knobs)))
        return {};
    return conn.readResponse(8000);
}

void TestBrokenResponses::idleCut()
{
    const double before = broken(QStringLiteral("stall"), QStringLiteral("idle_timeout"));
    const ChildProcess::Mark mark = m_slp.mark();
    const HttpResult r = cutStream(QStringLiteral("stall"),
                                   {{"X-Mock-Pause-After", "2"}, {"X-Mock-Pause-Ms", "8000"}});
    QCOMPARE(r.status, 200);
    QVERIFY(!r.complete);
    expectLogLines(r.header("x-request-id"), QStringLiteral("stall"),
                   QStringLiteral("stream idle for 500ms"), mark);
    QTRY_COMPARE_WITH_TIMEOUT(broken(QStringLiteral("stall"), QStringLiteral("idle_timeout")),
                              before + 1, 5000);
}

void TestBrokenResponses::upstreamCutsMidBody_data()
{
    QTest::addColumn<HeaderList>("knobs");
    QTest::addColumn<QString>("reason");
    QTest::newRow("close") << HeaderList{{"X-Mock-Drop-After", "2"}}
                           << QStringLiteral("upstream_closed");
    // Qt 6.4 reads a connection reset (ECONNRESET) as a close; the socket transport asks the
    // kernel (TCP_INFO) and says "reset", the qnam transport cannot (docs/DECISIONS.md).
    const bool socket = SlpDaemon::transport() == QLatin1String("socket");
    QTest::newRow("reset") << HeaderList{{"X-Mock-Drop-After", "2"}, {"X-Mock-Drop-Reset", "1"}}
                           << (socket ? QStringLiteral("upstream_reset")
                                      : QStringLiteral("upstream_closed"));
}

void TestBrokenResponses::upstreamCutsMidBody()
{
    QFETCH(HeaderList, knobs);
    QFETCH(QString, reason);
    const QString plain = QStringLiteral("plain");
    const QString other = reason == QLatin1String("upstream_reset")
                              ? QStringLiteral("upstream_closed")
                              : QStringLiteral("upstream_reset");
    const double before = broken(plain, reason);
    const double otherBefore = broken(plain, other);
    const ChildProcess::Mark mark = m_slp.mark();
    const HttpResult r = cutStream(plain, knobs);
    QCOMPARE(r.status, 200);
    QVERIFY(!r.complete);
    expectLogLines(r.header("x-request-id"), plain,
                   QStringLiteral("upstream response for model plain broke off"), mark);
    QTRY_COMPARE_WITH_TIMEOUT(broken(plain, reason), before + 1, 5000);
    QCOMPARE(broken(plain, other), otherBefore); // counted once, under one reason
}

void TestBrokenResponses::clientLeavesMidStream()
{
    const double before = broken(QStringLiteral("plain"), QStringLiteral("client_gone"));
    const ChildProcess::Mark mark = m_slp.mark();
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(buildRequest(
        "POST", m_slp.url() + "/v1/chat/completions", streamBody(QStringLiteral("plain")),
        {{"X-Mock-Events", "200"}, {"X-Mock-Event-Interval-Ms", "50"}})));
    QVERIFY(conn.waitForData("data:", 5000));
    const QByteArray upstreamId = requestIdIn(conn.received());
    conn.abort();
    expectLogLines(upstreamId, QStringLiteral("plain"), QStringLiteral("client went away"), mark);
    QTRY_COMPARE_WITH_TIMEOUT(broken(QStringLiteral("plain"), QStringLiteral("client_gone")),
                              before + 1, 5000);
}

// A stream that ends with its last chunk is a clean 200: no broken series moves.
void TestBrokenResponses::cleanStreamNotCounted()
{
    const QByteArray before = httpRequest("GET", m_slp.url() + "/metrics").body;
    const auto brokenLines = [](const QByteArray &text) {
        QByteArrayList out;
        for (const QByteArray &line : text.split('\n'))
            if (line.startsWith("slp_responses_broken_total{"))
                out << line;
        return out;
    };
    const HttpResult r = httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                                     streamBody(QStringLiteral("plain")));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(brokenLines(httpRequest("GET", m_slp.url() + "/metrics").body), brokenLines(before));
}

void TestBrokenResponses::promtoolChecksMetrics()
{
    const QString promtool = QStandardPaths::findExecutable(QStringLiteral("promtool"));
    if (promtool.isEmpty()) {
        if (qEnvironmentVariableIsSet("CI"))
            QFAIL("promtool not found: apt-get install prometheus (scripts/install-deps.sh)");
        QSKIP("promtool not found: /metrics is NOT checked by promtool on this machine");
    }
    // After the cases above every reason has a series (the suite runs in order).
    const HttpResult r = httpRequest("GET", m_slp.url() + "/metrics");
    QCOMPARE(r.status, 200);
    QVERIFY(
        r.body.contains("slp_responses_broken_total{model_id=\"stall\",reason=\"idle_timeout\"}"));
    QVERIFY(
        r.body.contains("slp_responses_broken_total{model_id=\"plain\",reason=\"client_gone\"}"));
    QProcess check;
    check.start(promtool, {QStringLiteral("check"), QStringLiteral("metrics")});
    QVERIFY(check.waitForStarted(5000));
    check.write(r.body);
    check.closeWriteChannel();
    QVERIFY(check.waitForFinished(30000));
    const QByteArray said = check.readAllStandardOutput() + check.readAllStandardError();
    QVERIFY2(check.exitStatus() == QProcess::NormalExit && check.exitCode() == 0, said.constData());
    QVERIFY2(said.trimmed().isEmpty(), said.constData()); // no lint finding either
}

QTEST_GUILESS_MAIN(TestBrokenResponses)
#include "tst_broken_responses.moc"
