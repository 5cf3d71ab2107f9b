// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "http/requesthandler.h"
#include "http/requesthead.h"
#include "http/responsewriter.h"

#include <QByteArray>
#include <QHostAddress>

namespace slp {

// One request at the moment QtHttpServer dispatches it: SLP's own reading of its head (from
// the connection's RequestFramer) and what Qt framed (its body) meet here. Either they agree,
// and this holds the request to handle and what its response needs to know, or they do not,
// and the request is refused: SLP's parse alone decides framing, so no byte of one request is
// ever taken for another (docs/QT64.md). Pure: no socket, no Qt request object kept.
class InboundHandoff
{
public:
    // `head`: SLP's parse (State::Incomplete when it has none); `dispatchedBody`: the body Qt
    // framed, copied (Qt reuses its request object for the next one); `peer`: the client.
    InboundHandoff(RequestHead head, const QByteArray &dispatchedBody, const QHostAddress &peer);

    bool isRefused() const { return m_refusalStatus != 0; }
    int refusalStatus() const { return m_refusalStatus; }
    QByteArray refusalMessage() const { return m_refusalMessage; }

    // What the response writer needs to know of the request.
    const ResponseContext &responseContext() const { return m_context; }
    // The request to handle, moved out: call once, and only when not refused.
    InboundRequest takeRequest() { return std::move(m_request); }

    // The client's address as logs and X-Forwarded-For show it: an IPv4-mapped IPv6 address
    // as plain IPv4.
    static QByteArray clientAddress(const QHostAddress &peer);

private:
    void refuse(int status, QByteArray message);

    InboundRequest m_request;
    ResponseContext m_context;
    int m_refusalStatus = 0;
    QByteArray m_refusalMessage;
};

} // namespace slp
