// SPDX-License-Identifier: GPL-3.0-or-later
// slp-monitor: the tray app of SLP. See docs/MONITOR.md.
#include "monitorapp.h"
#include "monitoroptions.h"
#include "statuspoller.h"
#include "statustext.h"

#include <QApplication>
#include <QCoreApplication>
#include <QSettings>

#include <cstdio>
#include <memory>

using namespace slp::monitor;

namespace {

void setIdentity()
{
    // QSettings' file: ~/.config/SLP/slp-monitor.conf
    QCoreApplication::setOrganizationName(QStringLiteral("SLP"));
    QCoreApplication::setApplicationName(QStringLiteral("slp-monitor"));
    QCoreApplication::setApplicationVersion(QStringLiteral(SLP_VERSION));
}

int runOnce(int argc, char **argv, const MonitorCommandLine &cl)
{
    // No display needed: --once works over ssh and in cron.
    QCoreApplication app(argc, argv);
    setIdentity();
    const MonitorSettings settings = withCommandLine(MonitorSettings::load(QSettings()), cl);

    StatusPoller poller;
    if (!settings.caFile.isEmpty()) {
        QString why;
        const auto certificates = loadCaFile(settings.caFile, &why);
        if (!certificates) {
            std::fprintf(stderr, "slp-monitor: %s: %s\n",
                         cl.caFile ? "--ca-file" : "the ca_file setting", qPrintable(why));
            return 2;
        }
        poller.setCaCertificates(*certificates);
    }
    poller.setBaseUrl(settings.url);
    poller.setTimeout(StatusPoller::defaultTimeout(settings.interval));
    int exitCode = 2;
    QObject::connect(&poller, &StatusPoller::pollFinished, &app, [&](const PollResult &result) {
        const StatusSnapshot snapshot = readSnapshot(result);
        std::fputs(onceReport(snapshot).toUtf8().constData(), stdout);
        std::fflush(stdout);
        exitCode = onceExitCode(snapshot.health);
        QCoreApplication::quit();
    });
    poller.pollNow();
    app.exec();
    return exitCode;
}

} // namespace

int main(int argc, char **argv)
{
    // Parsed before any QApplication exists, so a usage error never needs a display.
    QStringList args;
    for (int i = 1; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    const MonitorCommandLine cl = parseMonitorCommandLine(args);
    switch (cl.action) {
    case MonitorCommandLine::Action::UsageError:
        std::fprintf(stderr, "slp-monitor: %s\n\n%s", qPrintable(cl.error),
                     qPrintable(monitorUsageText()));
        return 2;
    case MonitorCommandLine::Action::Help:
        std::fputs(qPrintable(monitorUsageText()), stdout);
        return 0;
    case MonitorCommandLine::Action::Version:
        std::printf("slp-monitor %s\n", SLP_VERSION);
        return 0;
    case MonitorCommandLine::Action::Once:
        return runOnce(argc, argv, cl);
    case MonitorCommandLine::Action::Run:
        break;
    }

    qSetMessagePattern(QStringLiteral("slp-monitor: %{if-warning}warning: %{endif}%{message}"));
    QApplication app(argc, argv);
    setIdentity();
    if (QString why; cl.caFile && !loadCaFile(*cl.caFile, &why)) {
        std::fprintf(stderr, "slp-monitor: --ca-file: %s\n\n%s", qPrintable(why),
                     qPrintable(monitorUsageText()));
        return 2;
    }
    QApplication::setDesktopFileName(QStringLiteral("slp-monitor"));
    qRegisterMetaType<PollResult>();
    MonitorApp monitor(MonitorSettings::load(QSettings()), cl);
    monitor.start();
    return app.exec();
}
