// SPDX-License-Identifier: GPL-3.0-or-later
// slp-monitor end to end, on a desktop of its own: Xvfb (-noreset, _NET_NUMBER_OF_DESKTOPS
// set so tint2 does not wait for a window manager), tint2's XEmbed tray, and Debian's dunst
// as the notification daemon, all on a private session bus from dbus-run-session. The real
// slp discovers a mock upstream that switches to serving two models and back; dunst must
// receive exactly one ambiguity notification and one recovery notification, and none for
// the healthy state found at start-up. Then a second route's backend fails SLP's attempts
// (resets before the head) until SLP calls the route failing: exactly one "failing"
// notification over several polls, and exactly one when it answers again.
//
// Receipt is proven by dunst itself: a dunstrc rule whose script= appends each notification
// from slp-monitor to a file.
#include "testsupport.h"

#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QDeadlineTimer>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

using namespace slp::test;

namespace {

const char kInnerMarker[] = "SLP_MONITOR_E2E_IN_SESSION";

QStringList readLines(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

int countMatching(const QStringList &lines, const QString &needle)
{
    return int(std::count_if(
        lines.cbegin(), lines.cend(), [&](const QString &l) { return l.contains(needle); }));
}

} // namespace

class TestMonitorE2e : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void notifiesOncePerTransition();
    void cleanup();

private:
    bool waitForLines(int n, int timeoutMs);
    QString diagnostics();

    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_display;
    QString m_notesPath;
    // Declared in start order; cleanup() stops them in reverse, and so do the destructors.
    ChildProcess m_xvfb;
    ChildProcess m_tint2;
    ChildProcess m_dunst;
    MockUpstream m_mock;
    SlpDaemon m_slp;
    ChildProcess m_monitor;
};

void TestMonitorE2e::initTestCase()
{
    QStringList missing;
    for (const char *tool : {"Xvfb", "xprop", "tint2", "dunst", "dbus-run-session"})
        if (QStandardPaths::findExecutable(QString::fromLatin1(tool)).isEmpty())
            missing << QString::fromLatin1(tool);
    if (!missing.isEmpty()) {
        QSKIP(qPrintable(QStringLiteral("missing %1 (scripts/install-deps.sh installs them)")
                             .arg(missing.join(QStringLiteral(", ")))));
    }
    if (!qEnvironmentVariableIsSet(kInnerMarker))
        QSKIP("not inside dbus-run-session (re-exec failed)");
    QVERIFY2(QDBusConnection::sessionBus().isConnected(), "no private session bus");
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "SLP_BIN is not set");
    QVERIFY2(!MockUpstream::binary().isEmpty(), "SLP_MOCK_BIN is not set");
    QVERIFY2(!qEnvironmentVariable("SLP_MONITOR_BIN").isEmpty(), "SLP_MONITOR_BIN is not set");
}

void TestMonitorE2e::cleanup()
{
    // Every child goes, whatever happened: monitor first, the display last.
    m_monitor.stop(3000);
    m_slp.stop(3000);
    m_mock.stop();
    m_dunst.stop(3000);
    m_tint2.stop(3000);
    m_xvfb.stop(3000);
}

bool TestMonitorE2e::waitForLines(int n, int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (readLines(m_notesPath).size() < n) {
        if (deadline.hasExpired())
            return false;
        pumpEvents(50);
    }
    return true;
}

QString TestMonitorE2e::diagnostics()
{
    return QStringLiteral(
               "\n--- notifications seen by dunst:\n%1\n--- slp-monitor:\n%2\n--- dunst:\n%3"
               "\n--- slp:\n%4")
        .arg(readLines(m_notesPath).join('\n'), m_monitor.allOutput(),
             m_dunst.allOutput().right(2000), m_slp.stderrText().right(3000));
}

void TestMonitorE2e::notifiesOncePerTransition()
{
    QElapsedTimer total;
    total.start();
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    const QString dir = m_dir->path();
    m_notesPath = dir + QStringLiteral("/notifications.log");

    // --- the desktop: Xvfb picks a free display and tells us its number on stdout.
    QVERIFY2(m_xvfb.start(QStringLiteral("Xvfb"), {"-displayfd", "1", "-screen", "0", "1280x800x24",
                                                   "-noreset", "-nolisten", "tcp"}),
             qPrintable(m_xvfb.errorString()));
    const QRegularExpressionMatch displayNo = m_xvfb.waitForLine(
        QRegularExpression(QStringLiteral("^(\\d+)$")), 10000, ChildProcess::Channel::StdOut);
    QVERIFY2(displayNo.hasMatch(), qPrintable(m_xvfb.allOutput()));
    m_display = QStringLiteral(":") + displayNo.captured(1);
    const QMap<QString, QString> onDisplay{{"DISPLAY", m_display}};

    const CommandResult xprop = runCommand(
        QStringLiteral("xprop"),
        {"-root", "-f", "_NET_NUMBER_OF_DESKTOPS", "32c", "-set", "_NET_NUMBER_OF_DESKTOPS", "1"},
        5000, {}, onDisplay);
    QVERIFY2(xprop.exitCode == 0, xprop.stdErr.constData());

    QFile tint2rc(dir + QStringLiteral("/tint2rc"));
    QVERIFY(tint2rc.open(QIODevice::WriteOnly));
    tint2rc.write(
        "panel_items = S\npanel_size = 100% 32\npanel_position = bottom right horizontal\n"
        "systray_icon_size = 24\nwm_menu = 0\nautohide = 0\n");
    tint2rc.close();
    QVERIFY2(m_tint2.start(QStringLiteral("tint2"), {"-c", tint2rc.fileName()}, onDisplay),
             qPrintable(m_tint2.errorString()));
    QVERIFY2(m_tint2.waitForLine(QRegularExpression(QStringLiteral("systray started")), 10000)
                 .hasMatch(),
             qPrintable(m_tint2.allOutput()));

    // --- the notification daemon, logging every slp-monitor notification it receives.
    const QString logScript = dir + QStringLiteral("/log-notification.sh");
    QFile script(logScript);
    QVERIFY(script.open(QIODevice::WriteOnly));
    // dunst passes appname, summary, body, icon, urgency.
    script.write(QStringLiteral("#!/bin/sh\nprintf '%s|%s|%s\\n' \"$1\" \"$2\" \"$5\" >> '%1'\n")
                     .arg(m_notesPath)
                     .toUtf8());
    script.close();
    QVERIFY(script.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
    QFile dunstrc(dir + QStringLiteral("/dunstrc"));
    QVERIFY(dunstrc.open(QIODevice::WriteOnly));
    dunstrc.write(QStringLiteral("[global]\n    font = DejaVu Sans 9\n"
                                 "[slp_log]\n    appname = \"slp-monitor\"\n    script = %1\n")
                      .arg(logScript)
                      .toUtf8());
    dunstrc.close();
    QVERIFY2(m_dunst.start(QStringLiteral("dunst"), {"-config", dunstrc.fileName()}, onDisplay),
             qPrintable(m_dunst.errorString()));
    // Ours must own the name before anyone calls Notify, or D-Bus activation would start a
    // dunst with the default config.
    QDBusConnectionInterface *bus = QDBusConnection::sessionBus().interface();
    QDeadlineTimer dunstUp(10000);
    while (!bus->isServiceRegistered(QStringLiteral("org.freedesktop.Notifications")).value()) {
        QVERIFY2(!dunstUp.hasExpired() && m_dunst.isRunning(), qPrintable(m_dunst.allOutput()));
        pumpEvents(50);
    }

    // --- SLP in front of a mock serving one model; discovery rechecks fast.
    QVERIFY2(m_mock.start({"Qwen/Qwen3-8B"}), qPrintable(m_mock.errorString()));
    QVERIFY2(m_slp.start(QStringLiteral("discovery:\n"
                                        "  backoff_initial: 100ms\n"
                                        "  backoff_max: 300ms\n"
                                        "  recheck: 300ms\n"
                                        "backends:\n"
                                        "  - name: qwen3-8b\n"
                                        "    url: %1\n"
                                        "  - name: flaky\n"
                                        "    url: %1\n"
                                        "    model: Qwen/Qwen3-8B\n")
                             .arg(m_mock.url())),
             qPrintable(m_slp.errorString()));
    QVERIFY2(m_slp.waitForLog(QRegularExpression(QStringLiteral("qwen3-8b: backend serves")), 10000)
                 .hasMatch(),
             qPrintable(m_slp.stderrText()));

    // --- the monitor, on this display and bus, with settings of its own.
    QDir(dir).mkpath(QStringLiteral("runtime"));
    QFile::setPermissions(dir + QStringLiteral("/runtime"),
                          QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    QVERIFY2(m_monitor.start(qEnvironmentVariable("SLP_MONITOR_BIN"),
                             {"--url", m_slp.url(), "--interval", "300ms"},
                             {{"DISPLAY", m_display},
                              {"QT_QPA_PLATFORM", "xcb"}, // scripts/test.sh exports offscreen
                              {"XDG_CONFIG_HOME", dir + QStringLiteral("/config")},
                              {"XDG_RUNTIME_DIR", dir + QStringLiteral("/runtime")}}),
             qPrintable(m_monitor.errorString()));
    QVERIFY2(
        m_monitor
            .waitForLine(QRegularExpression(QStringLiteral("running in the system tray")), 10000)
            .hasMatch(),
        qPrintable(diagnostics()));
    QVERIFY2(m_monitor.waitForLine(QRegularExpression(QStringLiteral("first poll: ok")), 10000)
                 .hasMatch(),
             qPrintable(diagnostics()));

    // Healthy at start-up: several polls, no notification.
    pumpEvents(1200);
    QVERIFY2(readLines(m_notesPath).isEmpty(), qPrintable(diagnostics()));

    // --- the backend starts serving two models: one ambiguity notification.
    QVERIFY(m_mock.setModels({"Qwen/Qwen3-8B", "Qwen/Qwen3-32B"}));
    QVERIFY2(waitForLines(1, 15000), qPrintable(diagnostics()));
    pumpEvents(1500); // five more polls while still ambiguous: nothing more
    QStringList lines = readLines(m_notesPath);
    QVERIFY2(lines.size() == 1, qPrintable(diagnostics()));
    QVERIFY2(lines[0].startsWith(QLatin1String("slp-monitor|SLP: route qwen3-8b is ambiguous|")),
             qPrintable(diagnostics()));
    QVERIFY2(lines[0].endsWith(QLatin1String("CRITICAL")), qPrintable(diagnostics()));

    // --- back to one model: one recovery notification.
    QVERIFY(m_mock.setModels({"Qwen/Qwen3-8B"}));
    QVERIFY2(waitForLines(2, 15000), qPrintable(diagnostics()));
    pumpEvents(1500);
    lines = readLines(m_notesPath);
    QVERIFY2(lines.size() == 2, qPrintable(diagnostics()));
    QCOMPARE(countMatching(lines, QStringLiteral("is ambiguous")), 1);
    QCOMPARE(countMatching(lines, QStringLiteral("SLP: route qwen3-8b recovered")), 1);

    // --- flaky's backend resets SLP's requests, over several polls: one notification.
    const auto post = [this](const HeaderList &extra) {
        HeaderList headers{{"Content-Type", "application/json"}};
        headers << extra;
        return httpRequest("POST", m_slp.url() + "/v1/chat/completions", R"({"model":"flaky"})",
                           headers, 10000)
            .status;
    };
    // SLP calls a route failing after three attempts in a row (docs/METRICS.md "Route state").
    // Two polls or so between the resets, with the failure count climbing: not failing yet.
    for (int i = 0; i < 3; ++i) {
        QCOMPARE(post({{"X-Mock-Reset-Before-Head", "1"}}), 502);
        if (i < 2) {
            pumpEvents(700);
            QVERIFY2(readLines(m_notesPath).size() == 2, qPrintable(diagnostics()));
        }
    }
    QVERIFY2(waitForLines(3, 15000), qPrintable(diagnostics()));
    pumpEvents(1500); // five more polls while it keeps failing: nothing more
    lines = readLines(m_notesPath);
    QVERIFY2(lines.size() == 3, qPrintable(diagnostics()));
    QVERIFY2(lines[2].startsWith(QLatin1String("slp-monitor|SLP: backend of flaky failing|")),
             qPrintable(diagnostics()));
    QVERIFY2(m_monitor
                 .waitForLine(QRegularExpression(
                                  QStringLiteral("route flaky: failing: .+ \\(request id \\S+\\)")),
                              5000)
                 .hasMatch(),
             qPrintable(diagnostics()));

    // --- it answers again: one notification.
    QCOMPARE(post({}), 200);
    QVERIFY2(waitForLines(4, 15000), qPrintable(diagnostics()));
    pumpEvents(1500);
    lines = readLines(m_notesPath);
    QVERIFY2(lines.size() == 4, qPrintable(diagnostics()));
    QCOMPARE(countMatching(lines, QStringLiteral("SLP: backend of flaky failing")), 1);
    QCOMPARE(countMatching(lines, QStringLiteral("SLP: backend of flaky answers again")), 1);
    QVERIFY2(m_monitor.isRunning(), qPrintable(diagnostics()));
    qInfo("end to end in %lld ms", total.elapsed());
}

// Re-runs itself inside `dbus-run-session` so the test, dunst and slp-monitor share a private
// session bus that dies with the test: without it libdbus would autolaunch a bus over X11 and
// D-Bus activation would start a stray dunst, both outliving the run.
int main(int argc, char **argv)
{
    if (!qEnvironmentVariableIsSet(kInnerMarker)) {
        const QString runner = QStandardPaths::findExecutable(QStringLiteral("dbus-run-session"));
        if (!runner.isEmpty()) {
            qputenv(kInnerMarker, "1");
            const QByteArray runnerPath = runner.toLocal8Bit();
            std::vector<char *> args{const_cast<char *>(runnerPath.constData()),
                                     const_cast<char *>("--")};
            for (int i = 0; i < argc; ++i)
                args.push_back(argv[i]);
            args.push_back(nullptr);
            ::execv(runnerPath.constData(), args.data());
            qunsetenv(kInnerMarker); // exec failed: run here and skip, saying why
        }
    }
    QCoreApplication app(argc, argv);
    TestMonitorE2e test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_monitor_e2e.moc"
