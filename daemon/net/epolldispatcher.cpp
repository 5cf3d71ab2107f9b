// SPDX-License-Identifier: GPL-3.0-or-later
#include "net/epolldispatcher.h"

#include <QCoreApplication>
#include <QSocketNotifier>
#include <QThread>
#include <QTimerEvent>
#include <QVarLengthArray>

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace slp {

namespace {
constexpr int kMaxEvents = 256; // per wake-up; more stay ready for the next (level-triggered)

// As QEventDispatcherUNIX maps poll's bits: a hang-up or error wakes every notifier.
constexpr quint32 kActivating[3] = {
    EPOLLIN | EPOLLHUP | EPOLLERR,  // QSocketNotifier::Read
    EPOLLOUT | EPOLLHUP | EPOLLERR, // QSocketNotifier::Write
    EPOLLPRI | EPOLLHUP | EPOLLERR, // QSocketNotifier::Exception
};
constexpr quint32 kRequested[3] = {EPOLLIN, EPOLLOUT, EPOLLPRI};

timespec toTimespec(std::chrono::nanoseconds d)
{
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(d);
    return {time_t(s.count()), long((d - s).count())};
}
} // namespace

QAbstractEventDispatcher *createEventDispatcher()
{
    if (qEnvironmentVariable("SLP_EVENT_LOOP") == QLatin1String("qt"))
        return nullptr;
    return new EpollEventDispatcher; // the caller hands it to Qt, which owns it
}

EpollEventDispatcher::EpollEventDispatcher(QObject *parent) : QAbstractEventDispatcher(parent)
{
    m_epoll = ::epoll_create1(EPOLL_CLOEXEC);
    m_wakeFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (m_epoll < 0 || m_wakeFd < 0)
        qFatal("slp: cannot create the event loop's epoll instance: %s", strerror(errno));
    epoll_event event = {};
    event.events = EPOLLIN;
    event.data.fd = m_wakeFd;
    ::epoll_ctl(m_epoll, EPOLL_CTL_ADD, m_wakeFd, &event);
}

EpollEventDispatcher::~EpollEventDispatcher()
{
    ::close(m_wakeFd);
    ::close(m_epoll);
}

// -- socket notifiers ------------------------------------------------------------------------

void EpollEventDispatcher::registerSocketNotifier(QSocketNotifier *notifier)
{
    const int fd = int(notifier->socket());
    const int type = int(notifier->type());
    Watch &watch = m_watches[fd];
    if (watch.notifiers[type] && watch.notifiers[type] != notifier) {
        qWarning("QSocketNotifier: Multiple socket notifiers for same socket %d and type %d", fd,
                 type);
    }
    watch.notifiers[type] = notifier;
    updateWatch(fd);
}

void EpollEventDispatcher::unregisterSocketNotifier(QSocketNotifier *notifier)
{
    m_pending.removeOne(notifier); // a notifier disabled mid-pass is not activated
    const int fd = int(notifier->socket());
    const auto it = m_watches.find(fd);
    if (it == m_watches.end())
        return;
    const int type = int(notifier->type());
    if (it->second.notifiers[type] == notifier) {
        it->second.notifiers[type] = nullptr;
        updateWatch(fd);
    }
}

void EpollEventDispatcher::updateWatch(int fd)
{
    const auto it = m_watches.find(fd);
    Watch &watch = it->second;
    quint32 events = 0;
    for (int type = 0; type < 3; ++type)
        events |= watch.notifiers[type] ? kRequested[type] : 0;
    if (events == 0) {
        if (watch.alwaysReady) {
            --m_alwaysReady;
        } else {
            // Fails harmlessly (EBADF/ENOENT) when the descriptor was closed first: the kernel
            // drops closed descriptors from the set by itself.
            ::epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
        }
        m_watches.erase(it);
        return;
    }
    if (watch.alwaysReady || events == watch.events) {
        watch.events = events;
        return;
    }
    epoll_event event = {};
    event.events = events;
    event.data.fd = fd;
    const int op = watch.events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    if (::epoll_ctl(m_epoll, op, fd, &event) != 0) {
        if (errno == EPERM) {
            // A regular file: poll() calls it always ready, and so does this dispatcher.
            watch.alwaysReady = true;
            ++m_alwaysReady;
        } else if (op == EPOLL_CTL_MOD && errno == ENOENT) {
            ::epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &event); // closed and reopened meanwhile
        } else {
            qWarning("slp: epoll_ctl on descriptor %d failed: %s", fd, strerror(errno));
        }
    }
    watch.events = events;
}

void EpollEventDispatcher::markPending(const Watch &watch, quint32 events)
{
    for (int type = 0; type < 3; ++type) {
        QSocketNotifier *notifier = watch.notifiers[type];
        if (notifier && (events & kActivating[type]) && !m_pending.contains(notifier))
            m_pending.append(notifier);
    }
}

int EpollEventDispatcher::activateSocketNotifiers()
{
    int activated = 0;
    QEvent event(QEvent::SockAct);
    while (!m_pending.isEmpty()) {
        QSocketNotifier *notifier = m_pending.takeFirst();
        QCoreApplication::sendEvent(notifier, &event);
        ++activated;
    }
    return activated;
}

// -- timers -----------------------------------------------------------------------------------

void EpollEventDispatcher::registerTimer(int timerId, qint64 interval, Qt::TimerType timerType,
                                         QObject *object)
{
    Q_ASSERT(object && object->thread() == thread() && thread() == QThread::currentThread());
    Timer timer;
    timer.interval = interval;
    timer.type = timerType;
    timer.object = object;
    timer.due = Clock::now() + std::chrono::milliseconds(interval);
    timer.serial = ++m_nextSerial;
    m_timers[timerId] = timer;
    m_queue.insert({timer.due, timerId});
    m_timersOf.insert({object, timerId});
}

void EpollEventDispatcher::dropTimer(std::unordered_map<int, Timer>::iterator it)
{
    m_queue.erase({it->second.due, it->first});
    auto [first, last] = m_timersOf.equal_range(it->second.object);
    for (auto owned = first; owned != last; ++owned) {
        if (owned->second == it->first) {
            m_timersOf.erase(owned);
            break;
        }
    }
    m_timers.erase(it);
}

bool EpollEventDispatcher::unregisterTimer(int timerId)
{
    const auto it = m_timers.find(timerId);
    if (it == m_timers.end())
        return false;
    dropTimer(it);
    return true;
}

bool EpollEventDispatcher::unregisterTimers(QObject *object)
{
    bool any = false;
    for (auto owned = m_timersOf.find(object); owned != m_timersOf.end();
         owned = m_timersOf.find(object)) {
        dropTimer(m_timers.find(owned->second));
        any = true;
    }
    return any;
}

QList<QAbstractEventDispatcher::TimerInfo>
EpollEventDispatcher::registeredTimers(QObject *object) const
{
    QList<TimerInfo> list;
    auto [first, last] = m_timersOf.equal_range(object);
    for (auto owned = first; owned != last; ++owned) {
        const Timer &timer = m_timers.at(owned->second);
        list.append(TimerInfo(owned->second, int(timer.interval), timer.type));
    }
    return list;
}

int EpollEventDispatcher::remainingTime(int timerId)
{
    const auto it = m_timers.find(timerId);
    if (it == m_timers.end())
        return -1;
    const auto left = it->second.due - Clock::now();
    if (left <= Clock::duration::zero())
        return 0;
    // Rounded up, as Qt does: a timer with time left never reports 0.
    return int(std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

int EpollEventDispatcher::activateTimers()
{
    if (m_queue.empty())
        return 0;
    const Clock::time_point now = Clock::now();
    // The due timers as the pass starts: one started or restarted by a handler waits for the
    // next pass (a 0 ms timer fires once per pass, never in a loop).
    QVarLengthArray<std::pair<int, quint64>, 64> due;
    for (auto it = m_queue.begin(); it != m_queue.end() && it->first <= now; ++it)
        due.append({it->second, m_timers.at(it->second).serial});
    int activated = 0;
    for (const auto &[id, serial] : due) {
        const auto it = m_timers.find(id);
        if (it == m_timers.end() || it->second.serial != serial)
            continue; // killed by an earlier handler (its id maybe taken again)
        Timer &timer = it->second;
        // As QTimerInfoList: the next one is an interval after this one was due, unless that
        // is already past (a late or blocked loop does not fire a burst to catch up).
        m_queue.erase({timer.due, id});
        timer.due += std::chrono::milliseconds(timer.interval);
        if (timer.due < now)
            timer.due = now + std::chrono::milliseconds(timer.interval);
        m_queue.insert({timer.due, id});
        QObject *object = timer.object; // `timer` may be gone once the handler ran
        QTimerEvent event(id);
        QCoreApplication::sendEvent(object, &event);
        ++activated;
    }
    return activated;
}

// -- the loop ---------------------------------------------------------------------------------

void EpollEventDispatcher::wakeUp()
{
    // Any thread. One write until the loop has drained it.
    if (!m_wakeUpPending.exchange(true, std::memory_order_acq_rel)) {
        const quint64 one = 1;
        [[maybe_unused]] const ssize_t n = ::write(m_wakeFd, &one, sizeof(one));
    }
}

void EpollEventDispatcher::interrupt()
{
    m_interrupted.store(true, std::memory_order_release);
    wakeUp();
}

void EpollEventDispatcher::drainWakeUps()
{
    // Read, then clear the flag. Cleared first, a wakeUp() racing in between would set it and
    // write, this read would swallow the write, and the flag would stay set with nothing to
    // read: every later wakeUp() would be skipped. This way a wakeUp() that sees the flag still
    // set is covered by the pass that follows (it sends the posted events).
    quint64 count = 0;
    [[maybe_unused]] const ssize_t n = ::read(m_wakeFd, &count, sizeof(count));
    m_wakeUpPending.store(false, std::memory_order_release);
}

bool EpollEventDispatcher::wait(const timespec *timeout, bool includeNotifiers)
{
    if (!includeNotifiers) {
        // Sockets are excluded from this pass: wait on the wake-up descriptor alone, or
        // level-triggered readiness would return at once forever.
        pollfd wake = {m_wakeFd, POLLIN, 0};
        const int n = ::ppoll(&wake, 1, timeout, nullptr);
        if (n > 0)
            drainWakeUps();
        return n >= 0 || errno == EINTR;
    }
    epoll_event events[kMaxEvents];
    int n = -1;
    if (m_pwait2) {
        n = ::epoll_pwait2(m_epoll, events, kMaxEvents, timeout, nullptr);
        if (n < 0 && errno == ENOSYS)
            m_pwait2 = false; // kernels before 5.11
    }
    if (!m_pwait2) {
        int ms = -1;
        if (timeout) {
            // Rounded up: waking a little early would only spin until the timer is due.
            ms = int(timeout->tv_sec * 1000 + (timeout->tv_nsec + 999999) / 1000000);
        }
        n = ::epoll_wait(m_epoll, events, kMaxEvents, ms);
    }
    if (n < 0)
        return errno == EINTR;
    for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == m_wakeFd) {
            drainWakeUps();
            continue;
        }
        const auto it = m_watches.find(fd);
        if (it != m_watches.end())
            markPending(it->second, events[i].events);
    }
    if (m_alwaysReady > 0) {
        for (const auto &[fd, watch] : m_watches)
            if (watch.alwaysReady)
                markPending(watch, EPOLLIN | EPOLLOUT);
    }
    return true;
}

bool EpollEventDispatcher::processEvents(QEventLoop::ProcessEventsFlags flags)
{
    m_interrupted.store(false, std::memory_order_relaxed);
    Q_EMIT awake();
    QCoreApplication::sendPostedEvents();

    const bool includeTimers = !(flags & QEventLoop::X11ExcludeTimers);
    const bool includeNotifiers = !(flags & QEventLoop::ExcludeSocketNotifiers);
    // An event posted while sendPostedEvents() ran has written the wake-up descriptor, so
    // waiting here cannot sleep on it.
    const bool canWait =
        (flags & QEventLoop::WaitForMoreEvents) && !m_interrupted.load(std::memory_order_acquire);
    if (canWait)
        Q_EMIT aboutToBlock();
    if (m_interrupted.load(std::memory_order_acquire))
        return false;

    timespec zero = {0, 0};
    timespec untilTimer = {0, 0};
    const timespec *timeout = &zero;
    if (canWait && !(includeNotifiers && m_alwaysReady > 0)) {
        timeout = nullptr; // nothing due: sleep until a socket or a wake-up
        if (includeTimers && !m_queue.empty()) {
            const auto left = m_queue.begin()->first - Clock::now();
            untilTimer = toTimespec(std::max(left, Clock::duration::zero()));
            timeout = &untilTimer;
        }
    }
    if (!wait(timeout, includeNotifiers))
        qErrnoWarning("slp: epoll_wait");

    int activated = includeNotifiers ? activateSocketNotifiers() : 0;
    if (includeTimers)
        activated += activateTimers();
    return activated > 0;
}

} // namespace slp
