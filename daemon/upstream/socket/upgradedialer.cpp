// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/socket/upgradedialer.h"

#include "net/sockethandover.h"
#include "upstream/upstreamhead.h"

#include <unistd.h>

namespace slp {

UpgradeDialer::UpgradeDialer(SocketEndpoint endpoint, QByteArray head, QObject *parent)
    : QObject(parent), m_dialer(std::move(endpoint)), m_head(std::move(head))
{
    m_parser.reset(false, true);
}

UpgradeDialer::~UpgradeDialer()
{
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
        m_socket.reset(); // never inside its own signal here: the owner deletes the dialer later
    }
    if (m_fd >= 0)
        ::close(m_fd);
}

void UpgradeDialer::start()
{
    if (m_dialer.endpoint().tls) {
        // The splice joins plain descriptors; TLS to the upstream would need SLP to relay
        // through its own TLS layer (docs/HTTP.md).
        return fail({UpstreamCall::Failure::Other,
                     QStringLiteral("WebSocket tunnels to https backends are not supported"),
                     {},
                     false});
    }
    UpstreamCall::End refused;
    m_socket = m_dialer.dial(0, &refused);
    if (!m_socket)
        return fail(refused);
    connect(m_socket.get(), &QTcpSocket::connected, this, &UpgradeDialer::onConnected);
    connect(m_socket.get(), &QTcpSocket::readyRead, this, &UpgradeDialer::onReadyRead);
    connect(m_socket.get(), &QTcpSocket::errorOccurred, this, &UpgradeDialer::onError);
    if (m_socket->state() == QAbstractSocket::ConnectedState)
        onConnected(); // a Unix socket: connected at once
}

void UpgradeDialer::onConnected()
{
    m_peer = SocketDialer::peerOf(*m_socket);
    m_socket->write(m_head);
}

void UpgradeDialer::onReadyRead()
{
    if (m_done || !m_socket)
        return;
    m_parser.feed(m_socket->readAll());
    if (m_parser.hasError()) {
        return fail({UpstreamCall::Failure::Protocol,
                     QStringLiteral("malformed response to the upgrade: ") + m_parser.errorText(),
                     m_peer, m_haveHead});
    }
    if (!m_haveHead) {
        m_haveHead = m_parser.takeHead(&m_answer);
        if (!m_haveHead)
            return;
        // The rule both transports apply to every head before it is relayed.
        dropUnfitRequestIds(m_answer, m_dialer.endpoint().key);
    }
    if (m_parser.isUpgraded()) {
        m_fd = takeDescriptor(m_socket.get()); // the connection leaves Qt for the tunnel
        m_early = m_parser.takeUpgradeBytes();
        release();
        m_done = true;
        if (m_fd < 0)
            return fail({UpstreamCall::Failure::Other, QStringLiteral("cannot keep the connection"),
                         m_peer, true});
        Q_EMIT switched(m_answer);
        return;
    }
    if (m_parser.buffered() > kMaxAnswerBytes)
        return fail({UpstreamCall::Failure::Protocol,
                     QStringLiteral("answer to the upgrade is larger than 1 MiB"), m_peer, true});
    if (!m_parser.isComplete())
        return;
    m_done = true;
    const QByteArray body = m_parser.read(m_parser.buffered());
    release();
    Q_EMIT answered(m_answer, body);
}

void UpgradeDialer::onError(QAbstractSocket::SocketError error)
{
    if (m_done || !m_socket)
        return;
    if (error == QAbstractSocket::RemoteHostClosedError && m_haveHead) {
        m_parser.feedEof(); // a close-delimited answer ends here
        if (m_parser.isComplete()) {
            m_done = true;
            const QByteArray body = m_parser.read(m_parser.buffered());
            release();
            Q_EMIT answered(m_answer, body);
            return;
        }
    }
    fail(m_dialer.failure(*m_socket, error, m_haveHead));
}

void UpgradeDialer::fail(const UpstreamCall::End &end)
{
    m_done = true;
    release();
    Q_EMIT failed(end.failure, end.detail);
}

void UpgradeDialer::release()
{
    if (!m_socket)
        return;
    m_socket->disconnect(this);
    m_socket->abort();
    m_socket.release()->deleteLater(); // may be inside one of its signals
}

int UpgradeDialer::takeConnection(QByteArray *early)
{
    *early = std::exchange(m_early, {});
    return std::exchange(m_fd, -1);
}

} // namespace slp
