// SPDX-License-Identifier: GPL-3.0-or-later
#include "forward/streamwatch.h"

#include <algorithm>
#include <cstring>

namespace slp {

void SseBoundary::feed(QByteArrayView bytes)
{
    const qsizetype n = bytes.size();
    if (n >= 4) {
        std::memcpy(m_tail, bytes.data() + n - 4, 4);
        m_size = 4;
        return;
    }
    for (qsizetype i = 0; i < n; ++i) {
        if (m_size == 4) {
            std::memmove(m_tail, m_tail + 1, 3);
            m_size = 3;
        }
        m_tail[m_size++] = bytes[i];
    }
}

bool SseBoundary::atBoundary() const
{
    if (m_size == 0)
        return true; // nothing relayed yet: a comment cannot land inside an event
    if (m_size < 2)
        return false;
    const char a = m_tail[m_size - 2];
    const char b = m_tail[m_size - 1];
    if ((a == '\n' && b == '\n') || (a == '\r' && b == '\r'))
        return true;
    return m_size == 4 && std::memcmp(m_tail, "\r\n\r\n", 4) == 0;
}

StreamWatch::StreamWatch(std::chrono::milliseconds idleTimeout, std::chrono::milliseconds keepalive,
                         QObject *parent)
    : QObject(parent), m_idleTimeout(idleTimeout), m_keepalive(keepalive)
{
    // Precise: stream_idle_timeout is a contract number, and a coarse timer may fire 5 % late.
    m_idleTimer.setSingleShot(true);
    m_idleTimer.setTimerType(Qt::PreciseTimer);
    m_keepaliveTimer.setSingleShot(true);
    m_keepaliveTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_idleTimer, &QTimer::timeout, this, &StreamWatch::onIdleTimer);
    connect(&m_keepaliveTimer, &QTimer::timeout, this, &StreamWatch::onKeepaliveTimer);
}

StreamWatch *StreamWatch::create(std::chrono::milliseconds idleTimeout,
                                 std::chrono::milliseconds keepaliveInterval, bool keepalive,
                                 QObject *parent)
{
    if (idleTimeout.count() <= 0 && (!keepalive || keepaliveInterval.count() <= 0))
        return nullptr;
    auto *watch = new StreamWatch(idleTimeout, keepaliveInterval, parent);
    watch->start(keepalive);
    return watch;
}

void StreamWatch::start(bool keepalive)
{
    m_running = true;
    m_keepaliveOn = keepalive && m_keepalive.count() > 0;
    m_lastActivity.start();
    if (m_idleTimeout.count() > 0)
        m_idleTimer.start(m_idleTimeout);
    if (m_keepaliveOn)
        m_keepaliveTimer.start(m_keepalive);
}

void StreamWatch::stop()
{
    m_running = false;
    m_idleTimer.stop();
    m_keepaliveTimer.stop();
}

void StreamWatch::upstreamActivity()
{
    if (!m_running)
        return;
    m_lastActivity.start();
    // The timers stay as they are (they re-arm for what is left when they fire), except the
    // idle one after a stalled() the exchange did not act on.
    if (m_idleTimeout.count() > 0 && !m_idleTimer.isActive())
        m_idleTimer.start(m_idleTimeout);
}

std::chrono::milliseconds StreamWatch::silence() const
{
    return std::chrono::milliseconds(m_lastActivity.elapsed());
}

void StreamWatch::onIdleTimer()
{
    const std::chrono::milliseconds quiet = silence();
    if (quiet < m_idleTimeout) {
        m_idleTimer.start(m_idleTimeout - quiet);
        return;
    }
    Q_EMIT stalled();
}

void StreamWatch::onKeepaliveTimer()
{
    const std::chrono::milliseconds quiet = silence();
    if (quiet < m_keepalive) {
        m_keepaliveTimer.start(m_keepalive - quiet);
        return;
    }
    // Re-armed before the signal: its handler writes to the client and may end the exchange.
    m_keepaliveTimer.start(m_keepalive);
    if (m_boundary.atBoundary())
        Q_EMIT keepaliveDue();
}

} // namespace slp
