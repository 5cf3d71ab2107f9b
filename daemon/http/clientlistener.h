// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "http/clientconnection.h"

#include <QList>
#include <QTcpServer>

#include <optional>

namespace slp {

class ConnectionBudget;

// Accepts client connections: TCP_NODELAY on each (QtHttpServer sets none, and Nagle plus
// delayed ACK stalls small writes 40 ms), a ClientConnection attached before QtHttpServer
// connects its own handlers, and a cap (the budget every worker's listener shares) past which
// new connections wait in the accept queue.
class ClientListener : public QTcpServer
{
    Q_OBJECT
public:
    ClientListener(const ConnectionSettings &settings, ConnectionBudget *budget,
                   QObject *parent = nullptr);
    ~ClientListener() override;
    // For the connections accepted from now on (a reload).
    void setSettings(const ConnectionSettings &settings) { m_settings = settings; }
    // Stops accepting and drops the parked connections (the first step of a drain).
    void stopAccepting();
    // Lets every open connection finish what it owes and close (no new requests on kept-alive
    // connections); an idle one closes now. One with bytes not yet read (a request sent just
    // before the drain) is left for the next call: returns how many were left.
    int closeConnections();

Q_SIGNALS:
    void connectionCountChanged(int open);
    void requestRejected(int status);

protected:
    void incomingConnection(qintptr handle) override;

private:
    void adopt(qintptr handle);
    void admitParked();
    bool isUnixDomain(); // listening on an AF_UNIX socket (asked once)

    ConnectionSettings m_settings;
    ConnectionBudget *m_budget; // the daemon's; outlives every listener
    int m_open = 0;
    std::optional<bool> m_unixDomain;
    // Accepted past the cap, not read: QTcpServer's accept loop keeps calling accept() after
    // pauseAccepting() until the kernel queue is empty, so a burst lands here beyond
    // max_connections. They wait here as they would have in the kernel's queue and are
    // adopted as connections close (on any worker).
    QList<qintptr> m_parked;
    static constexpr qsizetype kMaxParked = 4096; // the listen backlog slp asks for
};

} // namespace slp
