// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/socket/socketcall.h"
#include "upstream/socket/socketorigin.h"

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QObject>
#include <QTimer>

#include <chrono>

class QTcpSocket;

namespace slp {

// `upstream_transport: socket`: a keep-alive pool of QTcpSockets (QSslSocket for https) per
// upstream origin, living in its worker's event-loop thread, and responses parsed with
// nodejs' http-parser. No connection cap that queues: a request takes the most recently idled
// connection of its origin or dials a new one. Only Host and Content-Length are added to the
// headers the core prepared; repeated headers stay apart both ways. See DECISIONS.md.
class SocketTransport : public IdlePool, public UpstreamTransport
{
    Q_OBJECT
public:
    // maxIdlePerOrigin: idle connections kept per origin (more are closed, never queued for).
    explicit SocketTransport(int maxIdlePerOrigin, QObject *parent = nullptr);
    ~SocketTransport() override;

    std::unique_ptr<UpstreamCall> start(const UpstreamRequest &request,
                                        UpstreamCall::Observer &observer) override;
    std::unique_ptr<UpgradeCall> upgrade(const UpstreamRequest &request,
                                         UpgradeCall::Observer &observer) override;

    // An idle connection older than this is closed (default 30 s).
    void setIdleTimeout(std::chrono::milliseconds timeout);
    int idleConnectionCount() const;

private:
    struct Idle
    {
        QTcpSocket *socket = nullptr; // Qt child of this while idle
        qint64 since = 0;             // m_clock ms
    };

    // IdlePool, for the calls and their SocketLinks.
    QTcpSocket *take(const QString &key) override;
    void release(const QString &key, QTcpSocket *socket) override;
    void drop(QTcpSocket *socket) override;
    void sweep();
    const SocketEndpoint &endpointOf(const UpstreamRequest &request);

    int m_maxIdlePerOrigin;
    std::chrono::milliseconds m_idleTimeout{30000};
    QHash<QString, QList<Idle>> m_idle; // per origin key, oldest first (taken from the back)
    QHash<QTcpSocket *, QString> m_idleKey;
    QHash<QString, SocketEndpoint> m_endpoints; // per origin; a handful, never pruned
    QElapsedTimer m_clock;
    QTimer m_sweep;
};

} // namespace slp
