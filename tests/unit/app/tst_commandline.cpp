// SPDX-License-Identifier: GPL-3.0-or-later
// parseCommandLine (docs/OPERATE.md "The command line"): strict on purpose, so a stray word or a
// misspelt flag is a usage error and can never start a server.
//
// (If it ever moves into slp_core, drop this include.)
#include "app/commandline.h"

#include <QTest>

using slp::CommandLine;
using slp::parseCommandLine;

Q_DECLARE_METATYPE(CommandLine::Action)

class TestCommandLine : public QObject
{
    Q_OBJECT

private slots:
    void table_data();
    void table();
    void usageTextNamesEveryFlag();
    void watchConfig();
};

void TestCommandLine::table_data()
{
    using A = CommandLine::Action;
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<A>("action");
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("listen");
    QTest::addColumn<bool>("logRequests");
    QTest::addColumn<QString>("errorContains"); // UsageError only

    // Serving and checking.
    QTest::newRow("serve") << QStringList{"--config", "slp.yaml"} << A::Serve << "slp.yaml"
                           << "" << false << "";
    QTest::newRow("serve --config=FILE")
        << QStringList{"--config=/etc/slp/slp.yaml"} << A::Serve << "/etc/slp/slp.yaml"
        << "" << false << "";
    QTest::newRow("serve with overrides")
        << QStringList{"--config", "c.yaml", "--listen", "127.0.0.1:9000", "--log-requests"}
        << A::Serve << "c.yaml"
        << "127.0.0.1:9000" << true << "";
    QTest::newRow("flags in any order")
        << QStringList{"--log-requests", "--listen=[::1]:8080", "--config", "c.yaml"} << A::Serve
        << "c.yaml"
        << "[::1]:8080" << true << "";
    QTest::newRow("check") << QStringList{"--check", "--config", "c.yaml"} << A::Check << "c.yaml"
                           << "" << false << "";
    QTest::newRow("check after config")
        << QStringList{"--config", "c.yaml", "--check"} << A::Check << "c.yaml"
        << "" << false << "";
    // The container image's entrypoint names /etc/slp/slp.yaml; a --config after it wins.
    QTest::newRow("a later --config wins")
        << QStringList{"--config", "/etc/slp/slp.yaml", "--check", "--config", "other.yaml"}
        << A::Check << "other.yaml"
        << "" << false << "";
    QTest::newRow("config value with a dash")
        << QStringList{"--config", "-odd.yaml"} << A::Serve << "-odd.yaml"
        << "" << false << "";

    // The health check asks where the config listens, or where --listen says (no config).
    QTest::newRow("health-check") << QStringList{"--health-check", "--config", "c.yaml"}
                                  << A::HealthCheck << "c.yaml"
                                  << "" << false << "";
    QTest::newRow("health-check, listen only")
        << QStringList{"--health-check", "--listen", "unix:/run/slp/slp.sock"} << A::HealthCheck
        << ""
        << "unix:/run/slp/slp.sock" << false << "";
    QTest::newRow("health-check, config and listen")
        << QStringList{"--config", "c.yaml", "--listen", "[::]:9000", "--health-check"}
        << A::HealthCheck << "c.yaml"
        << "[::]:9000" << false << "";
    QTest::newRow("health-check with version")
        << QStringList{"--health-check", "--version"} << A::Version << ""
        << "" << false << "";

    // Version and help need no config, and win over everything else that parses.
    QTest::newRow("version") << QStringList{"--version"} << A::Version << ""
                             << "" << false << "";
    QTest::newRow("help") << QStringList{"--help"} << A::Help << ""
                          << "" << false << "";
    QTest::newRow("-h") << QStringList{"-h"} << A::Help << ""
                        << "" << false << "";
    QTest::newRow("help with config")
        << QStringList{"--config", "c.yaml", "--help"} << A::Help << "c.yaml"
        << "" << false << "";
    QTest::newRow("help beats version") << QStringList{"--version", "--help"} << A::Help << ""
                                        << "" << false << "";

    // Usage errors: never a server.
    QTest::newRow("no arguments") << QStringList{} << A::UsageError << ""
                                  << "" << false << "--config FILE is required";
    QTest::newRow("check without config") << QStringList{"--check"} << A::UsageError << ""
                                          << "" << false << "--config FILE is required";
    QTest::newRow("health-check alone")
        << QStringList{"--health-check"} << A::UsageError << ""
        << "" << false << "--health-check needs --config FILE or --listen ADDR";
    QTest::newRow("health-check and check")
        << QStringList{"--health-check", "--check", "--config", "c.yaml"} << A::UsageError << ""
        << "" << false << "--check and --health-check: choose one";
    QTest::newRow("--health-check=yes")
        << QStringList{"--health-check=yes", "--config", "c.yaml"} << A::UsageError << ""
        << "" << false << "--health-check takes no value";
    QTest::newRow("log-requests only") << QStringList{"--log-requests"} << A::UsageError << ""
                                       << "" << false << "--config";
    QTest::newRow("slp help") << QStringList{"help"} << A::UsageError << ""
                              << "" << false << "did you mean --help?";
    QTest::newRow("slp status") << QStringList{"status"} << A::UsageError << ""
                                << "" << false << "unexpected argument \"status\"";
    QTest::newRow("slp config x") << QStringList{"config", "x"} << A::UsageError << ""
                                  << "" << false << "did you mean --config?";
    QTest::newRow("stray word after config")
        << QStringList{"--config", "c.yaml", "serve"} << A::UsageError << "c.yaml"
        << "" << false << "unexpected argument \"serve\"";
    QTest::newRow("stray word with help") << QStringList{"--help", "status"} << A::UsageError << ""
                                          << "" << false << "unexpected argument";
    QTest::newRow("two files") << QStringList{"--config", "a.yaml", "b.yaml"} << A::UsageError
                               << "a.yaml"
                               << "" << false << "\"b.yaml\"";
    QTest::newRow("misspelt flag") << QStringList{"--confg", "x"} << A::UsageError << ""
                                   << "" << false << "unknown flag --confg";
    QTest::newRow("single-dash long flag") << QStringList{"-config", "x"} << A::UsageError << ""
                                           << "" << false << "unknown flag -config";
    QTest::newRow("-v is not a flag") << QStringList{"-v"} << A::UsageError << ""
                                      << "" << false << "unknown flag -v";
    QTest::newRow("--config without value") << QStringList{"--config"} << A::UsageError << ""
                                            << "" << false << "--config needs a file name";
    QTest::newRow("--config= empty") << QStringList{"--config="} << A::UsageError << ""
                                     << "" << false << "--config needs a file name";
    QTest::newRow("--config followed by flag")
        << QStringList{"--config", "--check"} << A::UsageError << ""
        << "" << false << "--config needs a file name";
    QTest::newRow("--listen without value")
        << QStringList{"--config", "c.yaml", "--listen"} << A::UsageError << "c.yaml"
        << "" << false << "--listen needs an address";
    QTest::newRow("--check=yes") << QStringList{"--check=yes", "--config", "c"} << A::UsageError
                                 << ""
                                 << "" << false << "--check takes no value";
    QTest::newRow("--version=1") << QStringList{"--version=1"} << A::UsageError << ""
                                 << "" << false << "takes no value";
    QTest::newRow("empty word") << QStringList{"--config", "c.yaml", ""} << A::UsageError
                                << "c.yaml"
                                << "" << false << "unexpected argument";
}

void TestCommandLine::table()
{
    QFETCH(QStringList, args);
    QFETCH(CommandLine::Action, action);
    QFETCH(QString, config);
    QFETCH(QString, listen);
    QFETCH(bool, logRequests);
    QFETCH(QString, errorContains);

    const CommandLine cl = parseCommandLine(args);
    QCOMPARE(cl.action, action);
    if (action == CommandLine::Action::UsageError) {
        QVERIFY2(!cl.error.isEmpty(), "a usage error says what was wrong");
        QVERIFY2(cl.error.contains(errorContains), qPrintable(cl.error));
        return;
    }
    QVERIFY2(cl.error.isEmpty(), qPrintable(cl.error));
    QCOMPARE(cl.configPath, config);
    QCOMPARE(cl.listen, listen);
    QCOMPARE(cl.logRequests, logRequests);
}

void TestCommandLine::usageTextNamesEveryFlag()
{
    const QString usage = slp::usageText();
    QVERIFY(usage.startsWith(QLatin1String("usage: slp")));
    for (const char *flag : {"--config", "--check", "--health-check", "--listen", "--log-requests",
                             "--watch-config", "--version", "--help", "-h", "unix:"})
        QVERIFY2(usage.contains(QLatin1String(flag)), flag);
    QVERIFY(usage.endsWith(QLatin1Char('\n')));
}

void TestCommandLine::watchConfig()
{
    QVERIFY(!parseCommandLine({"--config", "c.yaml"}).watchConfig);
    const CommandLine cl = parseCommandLine({"--config", "c.yaml", "--watch-config"});
    QCOMPARE(cl.action, CommandLine::Action::Serve);
    QVERIFY(cl.watchConfig);
    QVERIFY(parseCommandLine({"--config", "c.yaml", "--watch-config=yes"}).action ==
            CommandLine::Action::UsageError);
}

QTEST_APPLESS_MAIN(TestCommandLine)
#include "tst_commandline.moc"
