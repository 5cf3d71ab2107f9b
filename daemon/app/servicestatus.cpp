// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/servicestatus.h"

#include "app/loopwatchdog.h"
#include "app/workerpool.h"
#include "observe/logging.h"

#include <QThread>

namespace slp {

ServiceStatus::ServiceStatus(std::function<QString()> statusLine, std::function<bool()> mayReport,
                             QObject *parent)
    : QObject(parent), m_statusLine(std::move(statusLine)), m_mayReport(std::move(mayReport))
{}

void ServiceStatus::ready()
{
    m_notifier.ready(m_statusLine());
}

void ServiceStatus::refresh()
{
    if (ServiceNotifier::active() && m_mayReport())
        m_notifier.setStatus(m_statusLine());
}

void ServiceStatus::startWatching(WorkerPool &pool)
{
    if (ServiceNotifier::active()) {
        connect(&m_statusTimer, &QTimer::timeout, this, &ServiceStatus::refresh);
        m_statusTimer.start(std::chrono::seconds(5)); // failures counted on the workers
    }
    const std::chrono::microseconds interval = ServiceNotifier::watchdogInterval();
    if (interval.count() <= 0)
        return;
    m_watchdog = new LoopWatchdog(
        interval, [this] { m_notifier.watchdogPing(); }, this);
    // The main loop (worker 0's too) proves itself by running the watchdog's own checks.
    pool.onEveryWorker([this](ServingWorker *worker) {
        if (worker->thread() != thread())
            m_watchdog->watch(worker, worker->thread()->objectName());
    });
    m_watchdog->start();
    qCInfo(lcServer).noquote()
        << QStringLiteral("watchdog: telling systemd every %1 ms while all %2 event loops turn")
               .arg(std::chrono::duration_cast<std::chrono::milliseconds>(interval / 4).count())
               .arg(pool.size());
}

} // namespace slp
