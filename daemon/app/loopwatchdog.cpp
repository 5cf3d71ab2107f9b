// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/loopwatchdog.h"

#include "observe/logging.h"

namespace slp {

namespace {
qint64 nanosOf(LoopWatchdog::Clock::time_point t)
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::chrono::milliseconds quarterOf(std::chrono::microseconds interval)
{
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(interval / 4));
}
} // namespace

LoopWatchdog::LoopWatchdog(std::chrono::microseconds interval, std::function<void()> ping,
                           QObject *parent)
    : QObject(parent), m_interval(interval), m_ping(std::move(ping))
{
    m_timer.setInterval(quarterOf(m_interval));
    connect(&m_timer, &QTimer::timeout, this, &LoopWatchdog::check);
}

void LoopWatchdog::watch(QObject *owner, const QString &name)
{
    auto beat = std::make_shared<Beat>();
    beat->name = name;
    beat->stampNs = nanosOf(Clock::now());
    auto *timer = new QTimer(owner); // Qt child: runs on, and stops with, the owner's thread
    timer->setInterval(quarterOf(m_interval));
    connect(timer, &QTimer::timeout, timer, [beat] { beat->stampNs = nanosOf(Clock::now()); });
    timer->start();
    const QMutexLocker lock(&m_mutex);
    m_beats.append(std::move(beat));
}

void LoopWatchdog::start()
{
    check();
    m_timer.start();
}

QStringList LoopWatchdog::stalled(const QList<std::shared_ptr<Beat>> &beats, Clock::time_point now,
                                  std::chrono::nanoseconds maxAge)
{
    QStringList names;
    for (const std::shared_ptr<Beat> &beat : beats)
        if (nanosOf(now) - beat->stampNs.load() > maxAge.count())
            names << beat->name;
    return names;
}

void LoopWatchdog::check()
{
    // This runs on the main loop: that it runs at all is the main loop's heartbeat.
    QList<std::shared_ptr<Beat>> beats;
    {
        const QMutexLocker lock(&m_mutex);
        beats = m_beats;
    }
    const QStringList late = stalled(beats, Clock::now(), m_interval / 2);
    if (late.isEmpty()) {
        if (m_stalled)
            qCInfo(lcServer) << "watchdog: every event loop turns again";
        m_stalled = false;
        m_ping();
        return;
    }
    if (!m_stalled) {
        qCWarning(lcServer).noquote()
            << QStringLiteral("watchdog: %1 has not turned for over %2 ms; not telling systemd "
                              "it is alive")
                   .arg(late.join(QStringLiteral(", ")))
                   .arg(std::chrono::duration_cast<std::chrono::milliseconds>(m_interval / 2)
                            .count());
    }
    m_stalled = true;
}

} // namespace slp
