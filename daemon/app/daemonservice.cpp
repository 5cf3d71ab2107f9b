// SPDX-License-Identifier: GPL-3.0-or-later
// The daemon's side of running under systemd: the STATUS= line, the watchdog over every event
// loop, and the config-file watch (watch_config). The rest of Daemon is in daemon.cpp.
#include "app/configwatcher.h"
#include "app/daemon.h"
#include "app/loopwatchdog.h"
#include "app/servingworker.h"
#include "observe/logging.h"
#include "routing/routetable.h"

#include <QThread>

namespace slp {

QString Daemon::statusLine() const
{
    qsizetype ambiguous = 0;
    qsizetype failing = 0;
    qsizetype stalled = 0;
    for (qsizetype i = 0; i < m_table->size(); ++i) {
        const DiscoveryState &state = m_table->discovery(i);
        ambiguous += state.ambiguous ? 1 : 0;
        // Failing: its last probe failed, or its last forwarded requests did.
        const double failures =
            m_metrics.value(metric::consecutiveFailures, metric::modelLabels(m_table->route(i).id));
        failing += state.lastProbe == QLatin1String("error") || failures > 0 ? 1 : 0;
        stalled += m_health.state(m_table->route(i).id) == RouteState::Stalled ? 1 : 0;
    }
    return serviceStatusLine(m_table->size(), ambiguous, failing, stalled, m_reloadFailure);
}

void Daemon::refreshStatus()
{
    if (!m_draining && !m_reloadCheck && ServiceNotifier::active())
        m_notifier.setStatus(statusLine());
}

void Daemon::startWatchdog()
{
    const std::chrono::microseconds interval = ServiceNotifier::watchdogInterval();
    if (interval.count() <= 0)
        return;
    m_watchdog = new LoopWatchdog(
        interval, [this] { m_notifier.watchdogPing(); }, this);
    // The main loop (worker 0's too) proves itself by running the watchdog's own checks.
    onEveryWorker([this](ServingWorker *worker) {
        if (worker->thread() != thread())
            m_watchdog->watch(worker, worker->thread()->objectName());
    });
    m_watchdog->start();
    qCInfo(lcServer).noquote()
        << QStringLiteral("watchdog: telling systemd every %1 ms while all %2 event loops turn")
               .arg(std::chrono::duration_cast<std::chrono::milliseconds>(interval / 4).count())
               .arg(m_workers.size());
}

void Daemon::updateConfigWatch()
{
    if (m_config.watchConfig == (m_configWatcher != nullptr))
        return;
    if (!m_config.watchConfig) {
        delete std::exchange(m_configWatcher, nullptr);
        qCInfo(lcConfig).noquote() << QStringLiteral("no longer watching %1").arg(m_configPath);
        return;
    }
    m_configWatcher = new ConfigWatcher(m_configPath, this);
    connect(m_configWatcher, &ConfigWatcher::changed, this, [this] {
        qCInfo(lcConfig).noquote() << QStringLiteral("%1 changed: reloading").arg(m_configPath);
        reload();
    });
    qCInfo(lcConfig).noquote()
        << QStringLiteral("watching %1 for changes (watch_config)").arg(m_configPath);
}

} // namespace slp
