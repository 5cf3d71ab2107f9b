// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "app/servicenotifier.h"

#include <QObject>
#include <QTimer>

#include <functional>

namespace slp {

class LoopWatchdog;
class WorkerPool;

// What systemd is told, and kept told: READY=, RELOADING=, STOPPING=, a STATUS= line kept
// current while running (every 5 s: failures are counted on the workers), and the watchdog
// over every event loop (WatchdogSec=). Outside systemd every call is a no-op.
class ServiceStatus : public QObject
{
    Q_OBJECT
public:
    // `statusLine`: the STATUS= text as things stand; `mayReport`: false while a reload is
    // being checked or a drain runs (STATUS= then says that).
    ServiceStatus(std::function<QString()> statusLine, std::function<bool()> mayReport,
                  QObject *parent = nullptr);

    void ready();
    void reloading() { m_notifier.reloading(); }
    void stopping(const QString &status) { m_notifier.stopping(status); }
    // STATUS= now, when allowed.
    void refresh();
    // The watchdog over every worker's loop, and the STATUS= timer.
    void startWatching(WorkerPool &pool);

    // A failed reload is named in STATUS= until one succeeds.
    void setReloadFailure(const QString &summary) { m_reloadFailure = summary; }
    const QString &reloadFailure() const { return m_reloadFailure; }

private:
    std::function<QString()> m_statusLine;
    std::function<bool()> m_mayReport;
    ServiceNotifier m_notifier;
    LoopWatchdog *m_watchdog = nullptr; // Qt child, with WatchdogSec=
    QTimer m_statusTimer;
    QString m_reloadFailure;
};

} // namespace slp
