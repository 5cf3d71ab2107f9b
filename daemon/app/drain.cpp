// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/drain.h"

#include "app/workerpool.h"
#include "forward/exchangecounter.h"
#include "observe/logging.h"

namespace slp {

namespace {
// How long a drain reads requests already sent before it closes idle connections.
constexpr std::chrono::milliseconds kSettle(200);
} // namespace

Drain::Drain(WorkerPool &pool, ExchangeCounter &exchanges, QObject *parent)
    : QObject(parent), m_pool(pool), m_exchanges(exchanges)
{
    m_grace.setSingleShot(true);
    connect(&m_grace, &QTimer::timeout, this, [this] {
        qCWarning(lcServer).noquote()
            << QStringLiteral("shutdown grace over: cutting %1 in-flight requests")
                   .arg(m_exchanges.count());
        Q_EMIT finished();
    });
}

void Drain::begin(int signal, std::chrono::milliseconds grace, const QString &graceText)
{
    m_running = true;
    // Stop accepting: with a socket from systemd new connections wait in its queue for the
    // next slp; without one the kernel refuses them.
    m_pool.stopAccepting();
    qCInfo(lcServer).noquote() << QStringLiteral(
                                      "signal %1: draining in-flight requests for up to %2")
                                      .arg(signal)
                                      .arg(graceText);
    // Exchanges count themselves on their worker threads; the last one to end says so.
    connect(&m_exchanges, &ExchangeCounter::drained, this, &Drain::check, Qt::QueuedConnection);
    m_grace.start(grace);
    // Then close kept-alive connections once they owe nothing (a proxy in front must not keep
    // sending new requests here), but only after a moment: a request already sent on a
    // connection accepted just before the signal is read first, so its client gets an answer
    // instead of a closed connection (a restart under a request loop lost about 1 in 400).
    QTimer::singleShot(std::min(kSettle, grace), this, &Drain::closeConnections);
}

void Drain::closeConnections()
{
    if (m_pool.closeConnections() > 0 && m_grace.isActive()) {
        // Requests that arrived but are not read yet (a loaded machine): read them first.
        QTimer::singleShot(kSettle / 4, this, &Drain::closeConnections);
        return;
    }
    m_settled = true;
    check();
}

void Drain::check()
{
    if (!m_settled || m_exchanges.count() > 0 || !m_grace.isActive())
        return; // reading what was sent, still in flight (the last one reports), or over
    m_grace.stop();
    qCInfo(lcServer) << "drained; exiting";
    Q_EMIT finished();
}

} // namespace slp
