// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>
#include <QMutex>
#include <QObject>
#include <QTimer>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

namespace slp {

// systemd's watchdog (WatchdogSec=) for every event loop, not just the main one: each watched
// thread stamps a heartbeat from a timer on its own loop every interval/4, and this object,
// on the main loop, calls `ping` (WATCHDOG=1) every interval/4 only while every stamp is
// younger than interval/2. A worker stuck in one call stops its stamps, the pings stop, and
// systemd restarts the service one interval after the last ping.
class LoopWatchdog : public QObject
{
    Q_OBJECT
public:
    using Clock = std::chrono::steady_clock;
    LoopWatchdog(std::chrono::microseconds interval, std::function<void()> ping,
                 QObject *parent = nullptr);

    // Starts a heartbeat on `owner`'s thread, a Qt child of `owner` (it stops with it). Call
    // on that thread; `name` says which loop stalled in the log.
    void watch(QObject *owner, const QString &name);
    void start(); // the main loop's checks, from now on

    // The names of the loops whose last stamp is older than `maxAge` at `now` (pure).
    struct Beat
    {
        QString name;
        std::atomic<qint64> stampNs{0}; // Clock's time since epoch
    };
    static QStringList stalled(const QList<std::shared_ptr<Beat>> &beats, Clock::time_point now,
                               std::chrono::nanoseconds maxAge);

private:
    void check();

    std::chrono::microseconds m_interval;
    std::function<void()> m_ping;
    QMutex m_mutex; // watch() runs on the workers' threads
    QList<std::shared_ptr<Beat>> m_beats;
    QTimer m_timer;
    bool m_stalled = false; // logged once per stall
};

} // namespace slp
