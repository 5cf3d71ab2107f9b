// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/socket/peerend.h"
#include "upstream/socket/socketorigin.h"

#include <QObject>
#include <QPointer>

#include <memory>

class QTcpSocket;

namespace slp {

class SocketCall;
class SocketTransport;

// Wired to its socket once, for the socket's whole life: it hands the socket's signals to the
// call using it, or, while the socket idles in the pool, tells the pool to drop it. Connecting
// and disconnecting five signals per request cost more than parsing the response.
class SocketLink : public QObject
{
public:
    SocketLink(QTcpSocket *socket, SocketTransport *transport);
    static SocketLink *of(QTcpSocket *socket);

    SocketCall *call = nullptr; // the call using the socket; null while pooled or discarded
    QPointer<SocketTransport> transport;
    // Taken once connected, so a pooled connection keeps it: one dup per connection.
    SocketShadow shadow;

private:
    void idleEvent(QTcpSocket *socket);
};

// One exchange on `idle` (a pooled connection of the endpoint) or, when it is null or dies
// before the request went out, on a new connection.
std::unique_ptr<UpstreamCall> startSocketCall(SocketTransport *transport,
                                              const SocketEndpoint &endpoint, QByteArray head,
                                              QByteArray body, bool headRequest, QTcpSocket *idle);

// Whether a pooled connection can carry another request (nothing arrived, still connected).
bool stillUsable(QTcpSocket *socket, bool tls);
// Closes a connection for good.
void discard(QTcpSocket *socket);

} // namespace slp
