// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QObject>
#include <QTimer>

#include <chrono>

namespace slp {

class ExchangeCounter;
class WorkerPool;

// SIGTERM's one named step: stop accepting; after a moment (requests already sent on
// accepted connections are read first), close each kept-alive connection once it owes
// nothing; then wait for the exchanges (and tunnels) in flight, up to the shutdown grace.
// finished() once all have ended, or when the grace is over (what is left is cut).
class Drain : public QObject
{
    Q_OBJECT
public:
    Drain(WorkerPool &pool, ExchangeCounter &exchanges, QObject *parent = nullptr);

    void begin(int signal, std::chrono::milliseconds grace, const QString &graceText);
    bool isRunning() const { return m_running; }

Q_SIGNALS:
    void finished();

private:
    void closeConnections(); // repeated while requests are unread
    void check();

    WorkerPool &m_pool;
    ExchangeCounter &m_exchanges;
    bool m_running = false;
    bool m_settled = false; // read what was sent and closed idle connections
    QTimer m_grace;         // shutdown_grace: what is still in flight then is cut
};

} // namespace slp
