// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/socket/socketorigin.h"
#include "upstream/upstreamtransport.h"

#include <QAbstractSocket>

#include <memory>

class QTcpSocket;

namespace slp {

// The one way SLP opens a connection to a backend (HAProxy's connect_server() for HTTP and
// TCP alike): a forwarded request's new connection, a WebSocket upgrade's and a discovery
// probe's all come from here, and a socket error means the same Failure, worded the same way,
// whoever meets it.
class SocketDialer
{
public:
    explicit SocketDialer(SocketEndpoint endpoint) : m_endpoint(std::move(endpoint)) {}

    const SocketEndpoint &endpoint() const { return m_endpoint; }

    // A socket to the endpoint: connecting (TCP, TLS: `connected` or `errorOccurred`
    // follows), or connected already (a Unix socket connects or fails at once). Null with
    // `failed` set when it failed at once. `readBufferSize`: what Qt may read ahead of its
    // reader (0: unbounded).
    std::unique_ptr<QTcpSocket> dial(qint64 readBufferSize, UpstreamCall::End *failed) const;

    // What `error` on a socket of this endpoint means: Refused, NameLookup, Closed (or
    // BrokenBody once a head arrived) or Other, with its detail for the log ("connect to
    // HOST:PORT: Connection refused"; the endpoint named while no peer address is known) and
    // the peer.
    UpstreamCall::End failure(const QTcpSocket &socket, QAbstractSocket::SocketError error,
                              bool headArrived) const;
    // "HOST:PORT: " while the socket knows no peer address, else empty: what a failure's
    // detail starts with.
    QString where(const QTcpSocket &socket) const;

    // The resolved "address:port" of a connected TCP socket ("[::1]:8000"), else empty.
    static QString peerOf(const QTcpSocket &socket);

private:
    SocketEndpoint m_endpoint;
};

} // namespace slp
