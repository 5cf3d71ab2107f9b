// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArrayView>
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <chrono>

namespace slp {

// Whether the bytes of an SSE stream seen so far end at an event boundary: nothing yet, or a
// blank line written as "\n\n", "\r\n\r\n" or "\r\r". Only the last bytes are kept, so a
// boundary split across pieces ("...\r\n" then "\r\n") is still seen. Mixed forms such as
// "\n\r\n" are not taken as boundaries: a comment there is merely written later, at the next
// plain one (docs/DECISIONS.md, "Stream watch").
class SseBoundary
{
public:
    void feed(QByteArrayView bytes);
    bool atBoundary() const;

private:
    char m_tail[4] = {};
    int m_size = 0; // bytes of m_tail in use (the stream's last ones, in order)
};

// The per-route stream timers of one relayed response, armed after its head:
// - stream_idle_timeout: no upstream body byte for that long emits stalled() (once; the
//   exchange decides and calls upstreamActivity() when the silence was its own doing);
// - sse_keepalive: each interval of upstream silence emits keepaliveDue() while the relayed
//   bytes end at an event boundary (the exchange writes the comment, or skips the tick when
//   the client is backed up).
// Silence is measured from the last upstream activity with one clock read per readyRead, not a
// timer restart per event: a timer that fires early is re-armed for what is left.
class StreamWatch : public QObject
{
    Q_OBJECT
public:
    // A zero duration turns that timer off.
    StreamWatch(std::chrono::milliseconds idleTimeout, std::chrono::milliseconds keepalive,
                QObject *parent = nullptr);
    // A started watch for one response whose head just arrived (the exchange calls
    // upstreamActivity() for each readable upstream body piece), or nullptr when nothing is to be
    // watched (neither key set, or only sse_keepalive and `keepalive` false): a route without the
    // keys arms no timer at all.
    static StreamWatch *create(std::chrono::milliseconds idleTimeout,
                               std::chrono::milliseconds keepaliveInterval, bool keepalive,
                               QObject *parent);

    // After the response head; `keepalive` says whether this response may get comments.
    void start(bool keepalive);
    void stop();
    // Upstream body bytes arrived: both silences start over.
    void upstreamActivity();
    // Bytes of the upstream's body relayed to the client (comments excluded).
    void relayed(QByteArrayView bytes) { m_boundary.feed(bytes); }
    bool atBoundary() const { return m_boundary.atBoundary(); }
    bool keepaliveArmed() const { return m_keepaliveOn; }

Q_SIGNALS:
    void stalled();
    void keepaliveDue();

private:
    void onIdleTimer();
    void onKeepaliveTimer();
    std::chrono::milliseconds silence() const;

    std::chrono::milliseconds m_idleTimeout;
    std::chrono::milliseconds m_keepalive;
    QTimer m_idleTimer;
    QTimer m_keepaliveTimer;
    QElapsedTimer m_lastActivity;
    SseBoundary m_boundary;
    bool m_running = false;
    bool m_keepaliveOn = false;
};

} // namespace slp
