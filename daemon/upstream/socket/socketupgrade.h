// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/socket/socketdialer.h"
#include "upstream/upstreamtransport.h"
#include "wire/responseparser.h"

#include <QTcpSocket>

#include <memory>

namespace slp {

// A WebSocket upgrade on a connection SocketDialer opens for it alone, its answer read with
// the one ResponseParser: a 101 hands the descriptor over (the connection leaves Qt), any
// other answer is read whole (at most kMaxAnswerBytes) to be relayed, anything else fails.
// Both transports make their upgrades here: QNAM cannot hand a connection over.
class SocketUpgrade : public UpgradeCall
{
public:
    // The largest non-101 answer relayed (an error page; a longer one is a protocol failure).
    static constexpr qint64 kMaxAnswerBytes = 1 << 20;

    // The upgrade of `request` to `endpoint`; reports to `observer` from start() on.
    static std::unique_ptr<UpgradeCall> start(const UpstreamRequest &request,
                                              const SocketEndpoint &endpoint,
                                              UpgradeCall::Observer &observer);
    ~SocketUpgrade() override;

    int takeConnection(QByteArray *early) override;
    QString peerForLog() const override { return m_peer; }

private:
    // `head`: the request as it goes on the wire (requestHead()).
    SocketUpgrade(SocketEndpoint endpoint, QByteArray head, UpgradeCall::Observer &observer);
    // False when it failed at once (reported already).
    bool begin();
    void onConnected();
    void onReadyRead();
    void onError(QAbstractSocket::SocketError error);
    void answer();
    void fail(const UpstreamCall::End &end);
    void release();

    SocketDialer m_dialer;
    QByteArray m_head;
    UpgradeCall::Observer *m_observer;
    std::unique_ptr<QTcpSocket> m_socket;
    ResponseParser m_parser;
    UpstreamHead m_answer;
    bool m_haveHead = false;
    bool m_done = false;
    int m_fd = -1; // after a 101: the connection's descriptor until taken
    QByteArray m_early;
    QString m_peer;
};

} // namespace slp
