// SPDX-License-Identifier: GPL-3.0-or-later
// The `slp` command line, run as a real process (docs/OPERATE.md "The command line"): usage errors
// exit 2 without serving, --version/--help print to stdout, --check compiles and prints the
// route table without contacting anything, config errors are all reported, overrides work.
#include "testsupport.h"

#include <QDir>
#include <QFile>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtTest>

using namespace slp::test;

namespace {

bool canConnect(quint16 port)
{
    QTcpSocket s;
    s.connectToHost(QHostAddress::LocalHost, port);
    return s.waitForConnected(1000);
}

QString writeFile(const QTemporaryDir &dir, const QString &name, const QByteArray &text)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(text);
    return path;
}

QString sourceDir()
{
    return qEnvironmentVariable("SLP_SOURCE_DIR");
}

QStringList nonEmptyLines(const QByteArray &text)
{
    return QString::fromUtf8(text).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

} // namespace

class TestCli : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();

    void usageErrors_data();
    void usageErrors();
    void usageErrorNeverServes();
    void versionAndHelp_data();
    void versionAndHelp();
    void versionIsTheProjectVersion_data();
    void versionIsTheProjectVersion();
    void checkDesignNote();
    void checkContactsNothing();
    void checkReportsEveryError();
    void missingConfigFile();
    void badListenOverride();
    void listenOverride();
    void logRequestsFlag();
    void portTaken();

private:
    QTemporaryDir m_dir;
    DeadPort m_held;  // the port m_config listens on, held while no slp should serve there
    QString m_config; // a valid config listening on m_configPort
    quint16 m_configPort = 0;
};

void TestCli::initTestCase()
{
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY(m_dir.isValid());
    m_configPort = m_held.port();
    QVERIFY(m_configPort > 0);
    m_config = writeFile(m_dir, "valid.yaml",
                         QStringLiteral("listen: \"127.0.0.1:%1\"\n"
                                        "backends:\n"
                                        "  - name: alpha\n"
                                        "    url: http://127.0.0.1:9\n"
                                        "    model: Pinned\n")
                             .arg(m_configPort)
                             .toUtf8());
    QVERIFY(!m_config.isEmpty());
}

void TestCli::usageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message"); // a piece of the stderr message
    QTest::newRow("slp help") << QStringList{"help"} << "unexpected argument \"help\"";
    QTest::newRow("slp status") << QStringList{"status"} << "unexpected argument \"status\"";
    QTest::newRow("slp --confg x") << QStringList{"--confg", "x"} << "unknown flag --confg";
    QTest::newRow("slp --config") << QStringList{"--config"} << "--config needs a file name";
    QTest::newRow("slp") << QStringList{} << "--config FILE is required";
    QTest::newRow("slp --check") << QStringList{"--check"} << "--config FILE is required";
    QTest::newRow("slp -x") << QStringList{"-x"} << "unknown flag -x";
}

void TestCli::usageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const CommandResult r = runCommand(SlpDaemon::binary(), args, 10000);
    QVERIFY2(r.started, qPrintable(r.error));
    QVERIFY2(!r.timedOut, "a usage error must exit, not serve");
    QCOMPARE(r.exitCode, 2);
    const QString err = QString::fromUtf8(r.stdErr);
    QVERIFY2(err.contains(message), qPrintable(err));
    QVERIFY2(err.contains(QLatin1String("usage: slp --config FILE")), qPrintable(err));
    QVERIFY2(r.stdOut.isEmpty(), r.stdOut.constData());
    QVERIFY2(r.elapsedMs < 5000, qPrintable(QString::number(r.elapsedMs)));
}

void TestCli::usageErrorNeverServes()
{
    // With a perfectly good config (listening on a known free port) a stray word is still a
    // usage error: nothing listens, the binary exits at once.
    QVERIFY(!canConnect(m_configPort));
    for (const QStringList &args :
         {QStringList{"help", "--config", m_config}, QStringList{"--config", m_config, "status"},
          QStringList{"--config", m_config, "--confg", m_config},
          QStringList{"--config", m_config, "serve"}}) {
        const CommandResult r = runCommand(SlpDaemon::binary(), args, 10000);
        QVERIFY2(!r.timedOut, qPrintable(args.join(' ')));
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.elapsedMs < 1500,
                 qPrintable(QStringLiteral("%1: %2 ms").arg(args.join(' ')).arg(r.elapsedMs)));
        QVERIFY(!r.stdErr.contains("listening on"));
        QVERIFY(r.stdErr.contains("usage: slp"));
        QVERIFY2(!canConnect(m_configPort), "the config's port was opened");
    }
    // The same config does serve when asked properly (so the above proves something).
    m_held.release();
    ChildProcess serving;
    QVERIFY(serving.start(SlpDaemon::binary(), {"--config", m_config}));
    QVERIFY2(serving
                 .waitForLine(QRegularExpression("listening on 127\\.0\\.0\\.1:(\\d+)"), 10000,
                              ChildProcess::Channel::StdErr)
                 .hasMatch(),
             qPrintable(serving.allOutput()));
    QVERIFY(canConnect(m_configPort));
    QCOMPARE(serving.stop(), 0);
}

void TestCli::versionAndHelp_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected"); // regex on stdout
    QTest::newRow("--version") << QStringList{"--version"} << "^slp \\d+\\.\\d+\\.\\d+\\S*\\n$";
    QTest::newRow("--help") << QStringList{"--help"} << "^usage: slp --config FILE";
    QTest::newRow("-h") << QStringList{"-h"} << "^usage: slp --config FILE";
    QTest::newRow("--help with config")
        << QStringList{"--config", "/nonexistent.yaml", "--help"} << "^usage: slp";
}

void TestCli::versionAndHelp()
{
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    const CommandResult r = runCommand(SlpDaemon::binary(), args, 10000);
    QVERIFY(!r.timedOut);
    QCOMPARE(r.exitCode, 0);
    const QString out = QString::fromUtf8(r.stdOut);
    QVERIFY2(QRegularExpression(expected).match(out).hasMatch(), qPrintable(out));
    QVERIFY2(r.stdErr.isEmpty(), r.stdErr.constData());
    if (args.contains("--help") || args.contains("-h"))
        for (const char *flag : {"--config", "--check", "--listen", "--log-requests", "--version"})
            QVERIFY2(out.contains(QLatin1String(flag)), flag);
}

// SLP_VERSION is the CMake project(VERSION), passed to every target as a compile definition;
// both programs must print exactly it (the package test checks the .deb's Version too).
void TestCli::versionIsTheProjectVersion_data()
{
    QTest::addColumn<QString>("binary");
    QTest::addColumn<QString>("name");
    QTest::newRow("slp") << SlpDaemon::binary() << "slp";
    QTest::newRow("slp-monitor") << qEnvironmentVariable("SLP_MONITOR_BIN") << "slp-monitor";
}

void TestCli::versionIsTheProjectVersion()
{
    QFETCH(QString, binary);
    QFETCH(QString, name);
    if (binary.isEmpty())
        QSKIP("SLP_MONITOR_BIN is not set (built with SLP_BUILD_MONITOR=OFF)");
    const CommandResult r = runCommand(binary, {"--version"}, 10000);
    QVERIFY(!r.timedOut);
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(QString::fromUtf8(r.stdOut), name + QStringLiteral(" " SLP_VERSION "\n"));
    QVERIFY(QStringLiteral(SLP_VERSION).contains(QRegularExpression("^\\d+\\.\\d+\\.\\d+$")));
}

void TestCli::checkDesignNote()
{
    QVERIFY2(!sourceDir().isEmpty(), "set SLP_SOURCE_DIR");
    const QString file = sourceDir() + "/resources/examples/design-note.yaml";
    QVERIFY2(QFile::exists(file), qPrintable(file));
    const CommandResult r = runCommand(SlpDaemon::binary(), {"--check", "--config", file}, 10000);
    QVERIFY(!r.timedOut);
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(!r.stdErr.contains("listening on"), r.stdErr.constData());

    const QStringList expected{
        "mistral-7b           -> http://gllm.c2-talos:8000 (discovering)",
        "mistral-small        -> http://vllm.c2-talos:8000 (discovering)",
        "llama-70b            -> http://gllm-2.c2-talos:8000 (discovering)",
        "mistral-7b-edited    -> http://copydesk-mistral-7b.c2-talos:8100 (passthrough)",
        "mistral-small-edited -> http://copydesk-mistral-small.c2-talos:8100 (passthrough)",
        "llama-70b-edited     -> http://copydesk-llama-70b.c2-talos:8100 (passthrough)",
    };
    QStringList routes;
    for (const QString &line : nonEmptyLines(r.stdOut))
        if (line.contains(QLatin1String(" -> ")))
            routes << line;
    QCOMPARE(routes.size(), 6);
    // The transport in use, socket unless the config says otherwise.
    QVERIFY2(nonEmptyLines(r.stdOut).contains(QStringLiteral("upstream_transport: socket")),
             r.stdOut.constData());
    for (qsizetype i = 0; i < expected.size(); ++i) {
        // Padding before "->" is allowed: compare with runs of spaces collapsed.
        QCOMPARE(routes[i].simplified(), expected[i].simplified());
        QVERIFY2(routes[i].startsWith(expected[i].section(' ', 0, 0) + ' '), qPrintable(routes[i]));
    }
}

void TestCli::checkContactsNothing()
{
    MockUpstream mock;
    QVERIFY2(mock.start({"Up-1"}), qPrintable(mock.errorString()));
    const DeadPort held;
    const quint16 port = held.port();
    const QString file = writeFile(m_dir, "check-mock.yaml",
                                   QStringLiteral("listen: \"127.0.0.1:%1\"\n"
                                                  "upstream_transport: qnam\n"
                                                  "backends:\n"
                                                  "  - name: alpha\n"
                                                  "    url: %2\n"
                                                  "editions:\n"
                                                  "  - suffix: -ed\n"
                                                  "    url: %2\n"
                                                  "    model: \"{{.Model}}\"\n")
                                       .arg(port)
                                       .arg(mock.url())
                                       .toUtf8());
    const CommandResult r = runCommand(SlpDaemon::binary(), {"--check", "--config", file}, 10000);
    QCOMPARE(r.exitCode, 0);
    const QStringList lines = nonEmptyLines(r.stdOut);
    QVERIFY2(lines.size() >= 2, r.stdOut.constData());
    QCOMPARE(lines[0].simplified(), QStringLiteral("alpha -> %1 (discovering)").arg(mock.url()));
    QCOMPARE(lines[1].simplified(),
             QStringLiteral("alpha-ed -> %1 (follows alpha)").arg(mock.url()));
    QVERIFY2(lines.contains(QStringLiteral("upstream_transport: qnam")), r.stdOut.constData());
    pumpEvents(kQuietWindowMs);
    QCOMPARE(mock.requests().size(), 0); // not even a discovery probe
    QVERIFY(!canConnect(port));
}

void TestCli::checkReportsEveryError()
{
    const QString file = writeFile(m_dir, "three-errors.yaml",
                                   "listen: \":8080\"\n"         // 1
                                   "header_timeout: 30x\n"       // 2: bad duration
                                   "backends:\n"                 // 3
                                   "  - name: a\n"               // 4
                                   "    url: http://a:8000/v1\n" // 5: a path
                                   "    retry: \"maybe\"\n");    // 6: not a boolean
    for (const bool check : {true, false}) {
        QStringList args{"--config", file};
        if (check)
            args.prepend("--check");
        const CommandResult r = runCommand(SlpDaemon::binary(), args, 10000);
        QVERIFY(!r.timedOut);
        QCOMPARE(r.exitCode, 1);
        const QString err = QString::fromUtf8(r.stdErr);
        for (const int line : {2, 5, 6}) {
            const QRegularExpression re(
                QStringLiteral("three-errors\\.yaml:%1(:\\d+)?: \\S").arg(line));
            QVERIFY2(re.match(err).hasMatch(),
                     qPrintable(QStringLiteral("line %1 not reported:\n%2").arg(line).arg(err)));
        }
        QVERIFY2(err.contains(QLatin1String("header_timeout")), qPrintable(err));
        QVERIFY2(err.contains(QLatin1String("hint")), qPrintable(err));
        QVERIFY2(!err.contains(QLatin1String("listening on")), qPrintable(err));
        QVERIFY2(err.contains(QLatin1String("3 config errors")), qPrintable(err));
        QVERIFY2(!r.stdOut.contains(" -> "), r.stdOut.constData()); // no route table
    }
}

void TestCli::missingConfigFile()
{
    const QString missing = m_dir.filePath("does-not-exist.yaml");
    for (const QStringList &args :
         {QStringList{"--config", missing}, QStringList{"--check", "--config", missing}}) {
        const CommandResult r = runCommand(SlpDaemon::binary(), args, 10000);
        QVERIFY(!r.timedOut);
        QCOMPARE(r.exitCode, 1);
        const QString err = QString::fromUtf8(r.stdErr);
        QVERIFY2(err.contains(missing), qPrintable(err));
        QVERIFY2(err.contains(QLatin1String("cannot read the config")), qPrintable(err));
        QVERIFY2(!err.contains(QLatin1String("usage:")), qPrintable(err)); // not a usage error
    }
}

void TestCli::badListenOverride()
{
    const CommandResult r =
        runCommand(SlpDaemon::binary(), {"--config", m_config, "--listen", "nonsense"}, 10000);
    QVERIFY(!r.timedOut);
    QVERIFY2(r.exitCode == 1 || r.exitCode == 2, qPrintable(QString::number(r.exitCode)));
    QVERIFY2(r.stdErr.contains("--listen"), r.stdErr.constData());
    QVERIFY(!r.stdErr.contains("listening on"));
    QVERIFY(!canConnect(m_configPort));
}

void TestCli::listenOverride()
{
    // The config says m_configPort; --listen 127.0.0.1:0 wins and the OS picks another.
    SlpDaemon slp;
    QFile f(m_config);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY2(slp.start(QString::fromUtf8(f.readAll())), qPrintable(slp.errorString()));
    QVERIFY(slp.port() != 0);
    QVERIFY(slp.port() != m_configPort);
    QCOMPARE(slp.host(), QStringLiteral("127.0.0.1"));
    QCOMPARE(httpRequest("GET", slp.url() + "/healthz").status, 200);
    QVERIFY(!canConnect(m_configPort));
    QCOMPARE(slp.stop(), 0);
}

void TestCli::logRequestsFlag()
{
    MockUpstream mock;
    QVERIFY2(mock.start({"Up-1"}), qPrintable(mock.errorString()));
    const QString yaml = QStringLiteral("log_requests: false\n"
                                        "backends:\n"
                                        "  - name: alpha\n"
                                        "    url: %1\n"
                                        "    model: Up-1\n")
                             .arg(mock.url());
    const QByteArray body = R"({"model":"alpha","messages":[]})";
    const QRegularExpression logLine(
        QStringLiteral(
            "^(?:\\S+\\s+)?\\[slpq[0-9a-f]{24}\\] POST /v1/chat/completions: alpha as "
            "\"Up-1\" -> %1 200 in \\S+ \\(\\d+ B up, \\d+ B down\\) upstream=gdqz[0-9a-f]{24}")
            .arg(QRegularExpression::escape(mock.url())));

    // Without the flag: no request line.
    {
        SlpDaemon slp;
        QVERIFY2(slp.start(yaml), qPrintable(slp.errorString()));
        QCOMPARE(httpRequest("POST", slp.url() + "/v1/chat/completions", body).status, 200);
        pumpEvents(kQuietWindowMs);
        QCOMPARE(slp.countLog(QRegularExpression("POST /v1/chat/completions")), 0);
        slp.stop();
    }
    // With --log-requests: one line per forwarded request.
    SlpDaemon slp;
    QVERIFY2(slp.start(yaml, {"--log-requests"}), qPrintable(slp.errorString()));
    // Several requests, each fully answered (status, head and whole body) before the client
    // closes: every one gets its line, none is reported as abandoned by the client.
    constexpr int kRequests = 20;
    for (int i = 0; i < kRequests; ++i) {
        const HttpResult r = httpRequest("POST", slp.url() + "/v1/chat/completions", body);
        QCOMPARE(r.status, 200);
        QVERIFY2(r.ok(), qPrintable(r.error));
    }
    const bool all = QTest::qWaitFor([&] { return slp.countLog(logLine) == kRequests; }, 5000);
    QVERIFY2(all, qPrintable(
                      QStringLiteral("%1 of %2 requests logged; %3 said \"client went away\":\n%4")
                          .arg(slp.countLog(logLine))
                          .arg(kRequests)
                          .arg(slp.countLog(QRegularExpression("client went away")))
                          .arg(slp.stderrText())));
}

void TestCli::portTaken()
{
    QTcpServer holder;
    QVERIFY(holder.listen(QHostAddress::LocalHost, 0));
    const QString file = writeFile(m_dir, "taken.yaml",
                                   QStringLiteral("listen: \"127.0.0.1:%1\"\n"
                                                  "backends:\n"
                                                  "  - name: alpha\n"
                                                  "    url: http://127.0.0.1:9\n"
                                                  "    model: Pinned\n")
                                       .arg(holder.serverPort())
                                       .toUtf8());
    const CommandResult r = runCommand(SlpDaemon::binary(), {"--config", file}, 10000);
    QVERIFY2(!r.timedOut, "slp kept running without a listener");
    QCOMPARE(r.exitCode, 1);
    const QString err = QString::fromUtf8(r.stdErr);
    QVERIFY2(err.contains(QStringLiteral("cannot listen on 127.0.0.1:%1").arg(holder.serverPort())),
             qPrintable(err));
    QVERIFY(!err.contains(QLatin1String("listening on")));
}

QTEST_MAIN(TestCli)
#include "tst_cli.moc"
