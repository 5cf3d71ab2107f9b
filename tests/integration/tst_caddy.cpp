// SPDX-License-Identifier: GPL-3.0-or-later
// Debian's Caddy in front of the real `slp` (docs/OPERATE.md; resources/caddy/):
// `tls internal` on 127.0.0.1, HTTP/2 to the client, `reverse_proxy` with `flush_interval -1`.
// A streamed answer arrives over HTTP/2 piece by piece, and so do the ": keep-alive" comments
// of an sse_keepalive route during a silence (the events unchanged); errors SLP answers keep SLP's
// request id through Caddy; two slp instances behind one Caddy (round robin, health checks,
// lb_try_duration, buffer_requests): with one killed, requests keep flowing through the other.
// (Without buffer_requests, Debian's Caddy 2.6.2 answers 502 to the POST it retries after a
// dial error, "body closed by handler": caddyserver/caddy#5454.)
// Caddy's state (its internal CA, certificates, autosave) goes to a temporary HOME/XDG dirs;
// the admin endpoint is off and nothing is installed into the system trust store.
#include "testsupport.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

using namespace slp::test;

namespace {

const QByteArray kStreamBody =
    R"({"model":"stream-a","stream":true,"messages":[{"role":"user","content":"hi"}]})";

quint16 freePort()
{
    QTcpServer s;
    if (!s.listen(QHostAddress::LocalHost, 0))
        return 0;
    return s.serverPort();
}

// The value of header `name` in a curl -D dump (the last response head in it), or empty.
QByteArray dumpedHeader(const QByteArray &dump, const QByteArray &name)
{
    QByteArray value;
    for (const QByteArray &line : dump.split('\n')) {
        const qsizetype colon = line.indexOf(':');
        if (colon > 0 && line.left(colon).trimmed().toLower() == name.toLower())
            value = line.mid(colon + 1).trimmed();
    }
    return value;
}

struct CurlResult
{
    CommandResult command;
    QByteArray head; // the response head curl received (-D)
    QByteArray body;
    QByteArray httpVersion; // "2" for HTTP/2
    int status = 0;
};

const QRegularExpression kSlpId(QStringLiteral("^slpq[0-9a-f]{24}$"));

} // namespace

class TestCaddy : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();

    void streamOverHttp2ArrivesPieceByPiece();
    void keepaliveCommentsPassThrough();
    void errorsKeepSlpRequestId();
    void twoInstancesOneKilled();

private:
    bool startCaddy(QString *error);
    QString httpsUrl(quint16 port, const QString &path) const
    {
        return QStringLiteral("https://127.0.0.1:%1%2").arg(port).arg(path);
    }
    CurlResult curl(const QString &url, const QByteArray &body = {},
                    const QStringList &extraHeaders = {});
    QString logs()
    {
        // Caddy logs JSON lines; the ones about failures are what explains a failure here.
        QStringList caddyErrors;
        for (const QString &line : m_caddy.lines())
            if (line.contains(QLatin1String("\"level\":\"error\"")) ||
                line.contains(QLatin1String("\"level\":\"warn\"")))
                caddyErrors << line;
        return QStringLiteral("--- caddy warnings and errors ---\n") +
               caddyErrors.join(QLatin1Char('\n')).right(3000) +
               QStringLiteral("\n--- slp1 ---\n") + m_slp1.stderrText().right(2000) +
               QStringLiteral("\n--- slp2 ---\n") + m_slp2.stderrText().right(2000);
    }

    QString m_caddyBin;
    QString m_curlBin;
    QTemporaryDir m_dir;
    MockUpstream m_mockA; // behind slp1; X-Request-Id aaaa...
    MockUpstream m_mockB; // behind slp2; X-Request-Id bbbb...
    SlpDaemon m_slp1;
    SlpDaemon m_slp2;
    ChildProcess m_caddy;
    quint16 m_single = 0; // https: slp1 alone
    quint16 m_pool = 0;   // https: slp1 + slp2, round robin
};

void TestCaddy::initTestCase()
{
    m_caddyBin = QStandardPaths::findExecutable(QStringLiteral("caddy"));
    if (m_caddyBin.isEmpty())
        QSKIP("caddy is not installed: scripts/install-deps.sh installs Debian's caddy package");
    m_curlBin = QStandardPaths::findExecutable(QStringLiteral("curl"));
    QVERIFY2(!m_curlBin.isEmpty(), "curl is needed (scripts/install-deps.sh installs it)");
    QVERIFY2(!MockUpstream::binary().isEmpty(), "set SLP_MOCK_BIN");
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY(m_dir.isValid());

    QVERIFY2(m_mockA.start({}, {"--id-prefix", "aaaa"}), qPrintable(m_mockA.errorString()));
    QVERIFY2(m_mockB.start({}, {"--id-prefix", "bbbb"}), qPrintable(m_mockB.errorString()));
    // The same route table on both instances, as a scale-out deployment would have; each
    // points at its own mock so the answering instance shows in X-Request-Id. "dead" points
    // at a port nobody listens on (502 from slp itself).
    const QString config = QStringLiteral("shutdown_grace: 1s\n"
                                          "backends:\n"
                                          "  - name: stream-a\n"
                                          "    url: %1\n"
                                          "    model: alpha\n"
                                          "    timeout: 10s\n"
                                          "  - name: stream-keep\n"
                                          "    url: %1\n"
                                          "    model: alpha\n"
                                          "    sse_keepalive: 300ms\n"
                                          "  - name: dead\n"
                                          "    url: http://127.0.0.1:%2\n"
                                          "    model: nobody\n");
    const quint16 closedPort = freePort();
    QVERIFY2(m_slp1.start(config.arg(m_mockA.url()).arg(closedPort)),
             qPrintable(m_slp1.errorString()));
    QVERIFY2(m_slp2.start(config.arg(m_mockB.url()).arg(closedPort)),
             qPrintable(m_slp2.errorString()));

    QString error;
    QVERIFY2(startCaddy(&error), qPrintable(error + "\n" + logs()));
}

void TestCaddy::cleanupTestCase()
{
    m_caddy.stop(5000);
    m_slp1.stop();
    m_slp2.stop();
    m_mockA.stop();
    m_mockB.stop();
}

bool TestCaddy::startCaddy(QString *error)
{
    m_single = freePort();
    m_pool = freePort();
    const quint16 httpPort = freePort();
    const QString home = m_dir.filePath(QStringLiteral("home"));
    QDir().mkpath(home);
    // The example in resources/caddy/Caddyfile, on loopback with Caddy's internal CA.
    const QString caddyfile = QStringLiteral("{\n"
                                             "\tadmin off\n"
                                             "\tskip_install_trust\n"
                                             "\tauto_https disable_redirects\n"
                                             "\thttp_port %1\n"
                                             "\tgrace_period 1s\n"
                                             "\tdefault_bind 127.0.0.1\n"
                                             "\tservers {\n"
                                             "\t\tprotocols h1 h2\n"
                                             "\t}\n"
                                             "\tstorage file_system {\n"
                                             "\t\troot %2\n"
                                             "\t}\n"
                                             "}\n"
                                             "https://127.0.0.1:%3 {\n"
                                             "\ttls internal\n"
                                             "\treverse_proxy 127.0.0.1:%4 {\n"
                                             "\t\tflush_interval -1\n"
                                             "\t}\n"
                                             "}\n"
                                             "https://127.0.0.1:%5 {\n"
                                             "\ttls internal\n"
                                             "\treverse_proxy 127.0.0.1:%4 127.0.0.1:%6 {\n"
                                             "\t\tflush_interval -1\n"
                                             "\t\tlb_policy round_robin\n"
                                             "\t\tlb_try_duration 5s\n"
                                             "\t\tlb_try_interval 100ms\n"
                                             "\t\tfail_duration 10s\n"
                                             "\t\thealth_uri /healthz\n"
                                             "\t\thealth_interval 500ms\n"
                                             "\t\thealth_timeout 1s\n"
                                             "\t\tbuffer_requests\n"
                                             "\t}\n"
                                             "}\n")
                                  .arg(httpPort)
                                  .arg(m_dir.filePath(QStringLiteral("caddy-storage")))
                                  .arg(m_single)
                                  .arg(m_slp1.port())
                                  .arg(m_pool)
                                  .arg(m_slp2.port());
    const QString path = m_dir.filePath(QStringLiteral("Caddyfile"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(caddyfile.toUtf8()) < 0) {
        *error = QStringLiteral("cannot write %1").arg(path);
        return false;
    }
    f.close();
    const QMap<QString, QString> env{{"HOME", home},
                                     {"XDG_DATA_HOME", home + "/.local/share"},
                                     {"XDG_CONFIG_HOME", home + "/.config"}};
    if (!m_caddy.start(m_caddyBin, {"run", "--config", path, "--adapter", "caddyfile"}, env,
                       m_dir.path())) {
        *error = m_caddy.errorString();
        return false;
    }
    // Ready once both sites answer over TLS (the internal CA and the certificates are made at
    // start-up, a moment after the listeners open).
    QElapsedTimer t;
    t.start();
    for (const quint16 port : {m_single, m_pool}) {
        for (;;) {
            const CommandResult c = runCommand(m_curlBin,
                                               {"-sS", "-k", "--max-time", "3", "-o", "/dev/null",
                                                "-w", "%{http_code}", httpsUrl(port, "/healthz")},
                                               5000);
            if (c.exitCode == 0 && c.stdOut == "200")
                break;
            if (!m_caddy.isRunning() || t.elapsed() > 20000) {
                *error = QStringLiteral("caddy did not serve https://127.0.0.1:%1 (last curl: "
                                        "%2 %3)")
                             .arg(port)
                             .arg(QString::fromUtf8(c.stdOut), QString::fromUtf8(c.stdErr));
                return false;
            }
            pumpEvents(200);
        }
    }
    qInfo() << "caddy ready in" << t.elapsed() << "ms";
    return true;
}

CurlResult TestCaddy::curl(const QString &url, const QByteArray &body,
                           const QStringList &extraHeaders)
{
    static int n = 0;
    const QString headFile = m_dir.filePath(QStringLiteral("head-%1").arg(++n));
    QStringList args{"-sS", "-k",     "--http2", "--max-time",       "20",
                     "-D",  headFile, "-w",      "\n%{http_version}"};
    if (!body.isEmpty())
        args << "-H"
             << "Content-Type: application/json"
             << "--data-binary" << QString::fromUtf8(body);
    for (const QString &h : extraHeaders)
        args << "-H" << h;
    args << url;
    CurlResult r;
    r.command = runCommand(m_curlBin, args, 30000);
    QFile f(headFile);
    if (f.open(QIODevice::ReadOnly))
        r.head = f.readAll();
    const qsizetype nl = r.command.stdOut.lastIndexOf('\n');
    r.body = nl < 0 ? r.command.stdOut : r.command.stdOut.left(nl);
    r.httpVersion = nl < 0 ? QByteArray() : r.command.stdOut.mid(nl + 1).trimmed();
    static const QRegularExpression statusLine(QStringLiteral("^HTTP/\\S+ (\\d{3})"));
    const QRegularExpressionMatch m = statusLine.match(QString::fromLatin1(r.head));
    r.status = m.hasMatch() ? m.captured(1).toInt() : 0;
    return r;
}

void TestCaddy::streamOverHttp2ArrivesPieceByPiece()
{
    // curl -N prints each piece as it arrives; its stdout goes to a file the test watches.
    ChildProcess stream;
    const QString headFile = m_dir.filePath(QStringLiteral("stream-head"));
    QElapsedTimer clock;
    clock.start();
    QVERIFY(stream.start(m_curlBin, {"-sS", "-k", "-N", "--http2", "--max-time", "30", "-D",
                                     headFile, "-w", "\nHTTP_VERSION=%{http_version}\n", "-H",
                                     "Content-Type: application/json", "-H", "X-Mock-Events: 8",
                                     "-H", "X-Mock-Event-Interval-Ms: 250", "--data-binary",
                                     QString::fromUtf8(kStreamBody),
                                     httpsUrl(m_single, "/v1/chat/completions")}));
    const QRegularExpressionMatch first = stream.waitForLine(
        QRegularExpression(QStringLiteral("^data: \\{")), 15000, ChildProcess::Channel::StdOut);
    const qint64 firstMs = clock.elapsed();
    QVERIFY2(first.hasMatch(), qPrintable(stream.allOutput() + logs()));
    const QRegularExpressionMatch done =
        stream.waitForLine(QRegularExpression(QStringLiteral("^data: \\[DONE\\]")), 20000,
                           ChildProcess::Channel::StdOut);
    const qint64 lastMs = clock.elapsed();
    QVERIFY2(done.hasMatch(), qPrintable(stream.allOutput() + logs()));
    QVERIFY(stream.waitForExit(10000));
    QCOMPARE(stream.exitCode(), 0);
    qInfo() << "first event at" << firstMs << "ms, [DONE] at" << lastMs << "ms";

    // 2 reasoning + 8 content events + the final one, 250 ms apart: about 2.5 s of stream.
    // Buffered anywhere, the first event would arrive with the last.
    QVERIFY2(lastMs - firstMs >= 1500,
             qPrintable(QStringLiteral("first %1 ms, last %2 ms").arg(firstMs).arg(lastMs)));
    QVERIFY2(stream.countLines(QRegularExpression(QStringLiteral("^HTTP_VERSION=2$")),
                               ChildProcess::Channel::StdOut) == 1,
             qPrintable(stream.allOutput()));
    QFile f(headFile);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray head = f.readAll();
    QVERIFY2(head.startsWith("HTTP/2 200"), head.constData());
    QVERIFY2(dumpedHeader(head, "content-type").startsWith("text/event-stream"), head.constData());
    QVERIFY2(dumpedHeader(head, "x-request-id").startsWith("aaaa"), head.constData());
    const QList<QByteArray> events = sseData(stream.stdoutBytes());
    QVERIFY(events.size() >= 10);
    QCOMPARE(events.last().left(6), QByteArray("[DONE]"));
}

void TestCaddy::keepaliveCommentsPassThrough()
{
    // Three events, 1.5 s of silence, the rest, on a route with sse_keepalive: 300ms. Through
    // Caddy (HTTP/2, flush_interval -1) the comments reach curl during the silence, and the
    // events around them are the mock's, byte for byte.
    ChildProcess stream;
    const QString headFile = m_dir.filePath(QStringLiteral("keep-head"));
    QElapsedTimer clock;
    clock.start();
    QVERIFY(stream.start(
        m_curlBin,
        {"-sS", "-k", "-N", "--http2", "--max-time", "30", "-D", headFile, "-H",
         "Content-Type: application/json", "-H", "X-Mock-Pause-After: 3", "-H",
         "X-Mock-Pause-Ms: 1500", "--data-binary",
         QStringLiteral(R"({"model":"stream-keep","stream":true,"messages":[{"role":"user",)"
                        R"("content":"hi"}]})"),
         httpsUrl(m_single, "/v1/chat/completions")}));
    const QRegularExpressionMatch comment = stream.waitForLine(
        QRegularExpression(QStringLiteral("^: keep-alive$")), 15000, ChildProcess::Channel::StdOut);
    const qint64 commentMs = clock.elapsed();
    QVERIFY2(comment.hasMatch(), qPrintable(stream.allOutput() + logs()));
    const QRegularExpressionMatch done =
        stream.waitForLine(QRegularExpression(QStringLiteral("^data: \\[DONE\\]")), 20000,
                           ChildProcess::Channel::StdOut);
    const qint64 doneMs = clock.elapsed();
    QVERIFY2(done.hasMatch(), qPrintable(stream.allOutput() + logs()));
    QVERIFY(stream.waitForExit(10000));
    QCOMPARE(stream.exitCode(), 0);
    const QByteArray body = stream.stdoutBytes();
    const int comments = int(body.count(": keep-alive\n\n"));
    qInfo() << "first comment through caddy at" << commentMs << "ms, [DONE] at" << doneMs << "ms,"
            << comments << "comments";
    // The first comment came while the upstream was silent, not flushed with the rest.
    QVERIFY2(doneMs - commentMs >= 600,
             qPrintable(QStringLiteral("comment %1 ms, done %2 ms").arg(commentMs).arg(doneMs)));
    QVERIFY2(comments >= 2 && comments <= 5, QByteArray::number(comments));
    QFile f(headFile);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray head = f.readAll();
    QVERIFY2(head.startsWith("HTTP/2 200"), head.constData());
    QVERIFY2(dumpedHeader(head, "content-type").startsWith("text/event-stream"), head.constData());
    // Only comments were added, each at an event boundary.
    const QJsonArray records = m_mockA.requests();
    QVERIFY(!records.isEmpty());
    const QByteArray upstream = MockUpstream::responseBody(records.last().toObject());
    QByteArray stripped = body;
    while (stripped.contains("\n\n: keep-alive\n\n")) // one pass leaves every second one
        stripped.replace("\n\n: keep-alive\n\n", "\n\n");
    QCOMPARE(stripped, upstream);
}

void TestCaddy::errorsKeepSlpRequestId()
{
    // 404 for an unknown model: SLP's own answer, with SLP's id, through Caddy over HTTP/2.
    const CurlResult notFound =
        curl(httpsUrl(m_single, "/v1/chat/completions"),
             R"({"model":"no-such-model","messages":[{"role":"user","content":"hi"}]})");
    QVERIFY2(notFound.command.exitCode == 0, notFound.command.stdErr.constData());
    QCOMPARE(notFound.httpVersion, QByteArray("2"));
    QCOMPARE(notFound.status, 404);
    const QString id404 = QString::fromLatin1(dumpedHeader(notFound.head, "x-request-id"));
    QVERIFY2(kSlpId.match(id404).hasMatch(), notFound.head.constData());
    QCOMPARE(jsonObject(notFound.body).value("error").toObject().value("code").toString(),
             QStringLiteral("model_not_found"));
    // 502 from an unreachable backend: the message names the same id as the header, and
    // slp's log line starts with it.
    const CurlResult failed =
        curl(httpsUrl(m_single, "/v1/chat/completions"),
             R"({"model":"dead","messages":[{"role":"user","content":"hi"}]})");
    QVERIFY2(failed.command.exitCode == 0, failed.command.stdErr.constData());
    QCOMPARE(failed.status, 502);
    const QString id502 = QString::fromLatin1(dumpedHeader(failed.head, "x-request-id"));
    QVERIFY2(kSlpId.match(id502).hasMatch(), failed.head.constData());
    QVERIFY2(jsonObject(failed.body)
                 .value("error")
                 .toObject()
                 .value("message")
                 .toString()
                 .contains(QStringLiteral("(request id: %1)").arg(id502)),
             failed.body.constData());
    QVERIFY2(m_slp1
                 .waitForLog(QRegularExpression(QStringLiteral("^(?:\\S+\\s+)?\\[%1\\] ")
                                                    .arg(QRegularExpression::escape(id502))),
                             3000)
                 .hasMatch(),
             qPrintable(logs()));
    QVERIFY(id404 != id502);
}

void TestCaddy::twoInstancesOneKilled()
{
    const QByteArray body = R"({"model":"stream-a","messages":[{"role":"user","content":"hi"}]})";
    const QString url = httpsUrl(m_pool, "/v1/chat/completions");
    auto servedBy = [](const CurlResult &r) {
        return dumpedHeader(r.head, "x-request-id").left(4);
    };

    // Both instances serve, in turn.
    QMap<QByteArray, int> before;
    for (int i = 0; i < 8; ++i) {
        const CurlResult r = curl(url, body);
        QVERIFY2(r.status == 200, qPrintable(r.head + r.body + logs()));
        ++before[servedBy(r)];
    }
    qInfo() << "before the kill:" << before;
    QVERIFY2(before.value("aaaa") > 0 && before.value("bbbb") > 0, qPrintable(logs()));

    // slp1 dies without a drain (as in a crash); every request still gets an answer.
    QVERIFY(m_slp1.process().sendSignal(SIGKILL));
    QVERIFY(m_slp1.process().waitForExit(5000));
    QMap<QByteArray, int> after;
    QElapsedTimer t;
    t.start();
    for (int i = 0; i < 10; ++i) {
        const CurlResult r = curl(url, body);
        QVERIFY2(r.status == 200, qPrintable(r.head + r.body + r.command.stdErr + logs()));
        QCOMPARE(jsonObject(r.body).value("model").toString(), QStringLiteral("alpha"));
        ++after[servedBy(r)];
    }
    qInfo() << "after the kill:" << after << "in" << t.elapsed() << "ms";
    QCOMPARE(after.value("bbbb"), 10);
}

QTEST_GUILESS_MAIN(TestCaddy)
#include "tst_caddy.moc"
