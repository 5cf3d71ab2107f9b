// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QAbstractEventDispatcher>
#include <QList>

#include <atomic>
#include <chrono>
#include <set>
#include <unordered_map>

namespace slp {

// An event dispatcher on Linux epoll for slp's event-loop threads. Qt 6.4 has only poll()
// dispatchers (glib's and its own): every wake-up hands the kernel every descriptor and walks
// them all again. At 1,000 streams (2,000 sockets) that was half of slp's CPU (perf: the
// kernel's sock_poll/tcp_poll and glib's g_main_context_check); with epoll a wake-up costs
// what became ready.
//
// Semantics follow QEventDispatcherUNIX: posted events first, then socket notifiers (read on
// IN/HUP/ERR, write on OUT/HUP/ERR, exception on PRI/HUP/ERR; level-triggered, as poll is),
// then due timers, each fired at most once per pass. Every timer type is kept precisely.
class EpollEventDispatcher : public QAbstractEventDispatcher
{
    Q_OBJECT
public:
    explicit EpollEventDispatcher(QObject *parent = nullptr);
    ~EpollEventDispatcher() override;

    bool processEvents(QEventLoop::ProcessEventsFlags flags) override;

    void registerSocketNotifier(QSocketNotifier *notifier) override;
    void unregisterSocketNotifier(QSocketNotifier *notifier) override;

    void registerTimer(int timerId, qint64 interval, Qt::TimerType timerType,
                       QObject *object) override;
    bool unregisterTimer(int timerId) override;
    bool unregisterTimers(QObject *object) override;
    QList<TimerInfo> registeredTimers(QObject *object) const override;
    int remainingTime(int timerId) override;

    void wakeUp() override;
    void interrupt() override;

private:
    using Clock = std::chrono::steady_clock;
    struct Timer
    {
        qint64 interval = 0; // ms
        Qt::TimerType type = Qt::CoarseTimer;
        QObject *object = nullptr;
        Clock::time_point due;
        quint64 serial = 0; // tells a re-registered id from the timer a pass started with
    };
    struct Watch
    {
        QSocketNotifier *notifiers[3] = {}; // by QSocketNotifier::Type
        quint32 events = 0;                 // registered with epoll
        bool alwaysReady = false;           // not pollable by epoll (a regular file)
    };

    void updateWatch(int fd);
    void markPending(const Watch &watch, quint32 events);
    int activateSocketNotifiers();
    int activateTimers();
    void dropTimer(std::unordered_map<int, Timer>::iterator it);
    // Waits for events (or not, with `timeout` zero); fills m_ready. Returns false on error.
    bool wait(const timespec *timeout, bool includeNotifiers);
    void drainWakeUps();

    int m_epoll = -1;
    int m_wakeFd = -1; // eventfd: wakeUp() from any thread
    std::atomic_bool m_wakeUpPending{false};
    std::atomic_bool m_interrupted{false};
    bool m_pwait2 = true; // epoll_pwait2 (ns timeouts); else epoll_wait with ms rounded up

    std::unordered_map<int, Watch> m_watches;
    int m_alwaysReady = 0;              // watches with alwaysReady set
    QList<QSocketNotifier *> m_pending; // activated one by one; unregistering drops one

    std::unordered_map<int, Timer> m_timers;
    std::set<std::pair<Clock::time_point, int>> m_queue; // (due, id)
    std::unordered_multimap<QObject *, int> m_timersOf;
    quint64 m_nextSerial = 0;
};

// The dispatcher for a new event-loop thread: an EpollEventDispatcher, or nullptr for Qt's own
// when the environment says SLP_EVENT_LOOP=qt (the escape hatch; see docs/DECISIONS.md). The
// caller hands it to Qt (QCoreApplication::setEventDispatcher, QThread::setEventDispatcher).
QAbstractEventDispatcher *createEventDispatcher();

} // namespace slp
