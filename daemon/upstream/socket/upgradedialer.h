// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/socket/socketdialer.h"
#include "upstream/upstreamtransport.h"
#include "wire/responseparser.h"

#include <QObject>
#include <QPointer>
#include <QTcpSocket>

#include <memory>

namespace slp {

// A WebSocket upgrade request sent to an upstream on a connection of its own: never a pooled
// one, since after a 101 the connection belongs to the tunnel. Both transports use it (QNAM
// cannot hand a connection over). It reports one of:
//  - switched(): the upstream's 101 head; then takeConnection() gives the descriptor (now the
//    caller's) and the bytes that came after the head;
//  - answered(): any other answer, whole (bounded), to relay as an ordinary response;
//  - failed(): no usable head (refused, closed, malformed, TLS asked).
class UpgradeDialer : public QObject
{
    Q_OBJECT
public:
    // The largest non-101 answer relayed (an error page; a longer one is a protocol failure).
    static constexpr qint64 kMaxAnswerBytes = 1 << 20;

    // `head`: the request as it goes on the wire (requestHead()).
    UpgradeDialer(SocketEndpoint endpoint, QByteArray head, QObject *parent = nullptr);
    ~UpgradeDialer() override;

    void start();
    // After switched(): the connection's descriptor and its early bytes, once.
    int takeConnection(QByteArray *early);
    // For the log: the resolved "address:port" once connected.
    QString peerForLog() const { return m_peer; }

Q_SIGNALS:
    void switched(const slp::UpstreamHead &head);
    void answered(const slp::UpstreamHead &head, const QByteArray &body);
    void failed(slp::UpstreamCall::Failure failure, const QString &detail);

private:
    void onConnected();
    void onReadyRead();
    void onError(QAbstractSocket::SocketError error);
    void fail(const UpstreamCall::End &end);
    void release();

    SocketDialer m_dialer;
    QByteArray m_head;
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
