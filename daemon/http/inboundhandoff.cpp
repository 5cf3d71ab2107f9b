// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/inboundhandoff.h"

namespace slp {

InboundHandoff::InboundHandoff(RequestHead head, const QByteArray &dispatchedBody,
                               const QHostAddress &peer)
{
    if (head.state != RequestHead::State::Complete) {
        refuse(400, "request framing could not be confirmed");
        return;
    }
    if (dispatchedBody.size() != head.bodyBytes) {
        refuse(400, "request body length does not match its framing");
        return;
    }
    m_request.method = std::move(head.method);
    m_request.setTarget(std::move(head.target));
    m_request.headers = std::move(head.headers);
    m_request.body = dispatchedBody;
    m_request.clientAddress = clientAddress(peer);
    m_request.webSocketUpgrade = head.webSocketUpgrade;
    // After an upgrade request the connection is a tunnel or nothing: an answer closes it.
    m_context.keepAlive = head.keepAlive && !head.webSocketUpgrade;
    m_context.versionMinor = head.versionMinor;
    m_context.headRequest = m_request.method == "HEAD";
}

QByteArray InboundHandoff::clientAddress(const QHostAddress &peer)
{
    bool mapped = false;
    const quint32 v4 = peer.toIPv4Address(&mapped);
    return (mapped ? QHostAddress(v4) : peer).toString().toLatin1();
}

void InboundHandoff::refuse(int status, QByteArray message)
{
    m_refusalStatus = status;
    m_refusalMessage = std::move(message);
}

} // namespace slp
