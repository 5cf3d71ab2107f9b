// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/socket/sockettransport.h"

#include "upstream/socket/socketupgrade.h"

#include <QTcpSocket>

namespace slp {

namespace {
constexpr std::chrono::milliseconds kSweepEvery{5000};
} // namespace

SocketTransport::SocketTransport(int maxIdlePerOrigin, QObject *parent)
    : IdlePool(parent), m_maxIdlePerOrigin(std::max(1, maxIdlePerOrigin))
{
    m_clock.start();
    m_sweep.setInterval(kSweepEvery);
    connect(&m_sweep, &QTimer::timeout, this, &SocketTransport::sweep);
}

SocketTransport::~SocketTransport()
{
    for (auto &list : m_idle) {
        for (const Idle &idle : list) {
            if (SocketLink *link = SocketLink::of(idle.socket))
                link->pool = nullptr; // no drop() while this is being destroyed
            idle.socket->abort();
            delete idle.socket;
        }
    }
}

void SocketTransport::setIdleTimeout(std::chrono::milliseconds timeout)
{
    m_idleTimeout = timeout;
    m_sweep.setInterval(std::min(kSweepEvery, std::max(timeout / 2, std::chrono::milliseconds(1))));
}

int SocketTransport::idleConnectionCount() const
{
    return int(m_idleKey.size());
}

std::unique_ptr<UpstreamCall> SocketTransport::start(const UpstreamRequest &request,
                                                     UpstreamCall::Observer &observer)
{
    const SocketEndpoint &endpoint = endpointOf(request);
    auto call = std::make_unique<SocketCall>(this, endpoint, requestHead(request, endpoint),
                                             request.body, request.method == "HEAD", observer);
    call->begin();
    if (!call->isRunning())
        return nullptr; // it failed inside begin(): the observer has its End already
    return call;
}

std::unique_ptr<UpgradeCall> SocketTransport::upgrade(const UpstreamRequest &request,
                                                      UpgradeCall::Observer &observer)
{
    return SocketUpgrade::start(request, endpointOf(request), observer);
}

const SocketEndpoint &SocketTransport::endpointOf(const UpstreamRequest &request)
{
    auto it = m_endpoints.find(request.origin);
    if (it == m_endpoints.end())
        it = m_endpoints.insert(request.origin, endpointFor(request.originUrl, request.origin));
    return *it;
}

QTcpSocket *SocketTransport::take(const QString &key)
{
    const auto it = m_idle.find(key);
    if (it == m_idle.end())
        return nullptr;
    const bool tls = key.startsWith(QLatin1String("https:"));
    const qint64 now = m_clock.elapsed();
    while (!it->isEmpty()) {
        const Idle idle = it->takeLast(); // LIFO: the warmest connection
        m_idleKey.remove(idle.socket);
        if (now - idle.since < m_idleTimeout.count() && stillUsable(idle.socket, tls)) {
            idle.socket->setParent(nullptr);
            return idle.socket;
        }
        discard(idle.socket);
    }
    return nullptr;
}

void SocketTransport::release(const QString &key, QTcpSocket *socket)
{
    QList<Idle> &list = m_idle[key];
    if (list.size() >= m_maxIdlePerOrigin) {
        discard(socket);
        return;
    }
    socket->setParent(this); // its SocketLink drops it on data, close or error (dropIdle)
    list.append(Idle{socket, m_clock.elapsed()});
    m_idleKey.insert(socket, key);
    if (!m_sweep.isActive())
        m_sweep.start();
}

void SocketTransport::drop(QTcpSocket *socket)
{
    const auto keyIt = m_idleKey.find(socket);
    if (keyIt == m_idleKey.end())
        return;
    QList<Idle> &list = m_idle[keyIt.value()];
    m_idleKey.erase(keyIt);
    list.removeIf([socket](const Idle &idle) { return idle.socket == socket; });
    discard(socket);
}

void SocketTransport::sweep()
{
    const qint64 now = m_clock.elapsed();
    for (auto it = m_idle.begin(); it != m_idle.end();) {
        QList<Idle> &list = it.value();
        // Oldest first: expire from the front.
        while (!list.isEmpty() && now - list.first().since >= m_idleTimeout.count()) {
            const Idle idle = list.takeFirst();
            m_idleKey.remove(idle.socket);
            discard(idle.socket);
        }
        it = list.isEmpty() ? m_idle.erase(it) : std::next(it);
    }
    if (m_idle.isEmpty())
        m_sweep.stop();
}

} // namespace slp
