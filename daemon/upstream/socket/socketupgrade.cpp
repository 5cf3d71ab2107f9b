// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/socket/socketupgrade.h"

#include "net/sockethandover.h"
#include "upstream/upstreamhead.h"

#include <unistd.h>

namespace slp {

std::unique_ptr<UpgradeCall> SocketUpgrade::start(const UpstreamRequest &request,
                                                  const SocketEndpoint &endpoint,
                                                  UpgradeCall::Observer &observer)
{
    std::unique_ptr<SocketUpgrade> call(
        new SocketUpgrade(endpoint, requestHead(request, endpoint), observer));
    if (!call->begin())
        return nullptr;
    return call;
}

SocketUpgrade::SocketUpgrade(SocketEndpoint endpoint, QByteArray head,
                             UpgradeCall::Observer &observer)
    : m_dialer(std::move(endpoint)), m_head(std::move(head)), m_observer(&observer)
{
    m_parser.reset(false, true);
}

SocketUpgrade::~SocketUpgrade()
{
    m_done = true; // no callback from here on
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
        m_socket.reset(); // never inside its own signal: the observer deletes no call there
    }
    if (m_fd >= 0)
        ::close(m_fd);
}

bool SocketUpgrade::begin()
{
    if (m_dialer.endpoint().tls) {
        // The tunnel joins plain descriptors; TLS to the upstream would need SLP to relay
        // through its own TLS layer (docs/HTTP.md).
        fail({UpstreamCall::Failure::Other,
              QStringLiteral("WebSocket tunnels to https backends are not supported"),
              {},
              false});
        return false;
    }
    UpstreamCall::End refused;
    m_socket = m_dialer.dial(0, &refused);
    if (!m_socket) {
        fail(refused);
        return false;
    }
    connect(m_socket.get(), &QTcpSocket::connected, this, &SocketUpgrade::onConnected);
    connect(m_socket.get(), &QTcpSocket::readyRead, this, &SocketUpgrade::onReadyRead);
    connect(m_socket.get(), &QTcpSocket::errorOccurred, this, &SocketUpgrade::onError);
    if (m_socket->state() == QAbstractSocket::ConnectedState)
        onConnected(); // a Unix socket: connected at once
    return true;
}

void SocketUpgrade::onConnected()
{
    m_peer = SocketDialer::peerOf(*m_socket);
    m_socket->write(m_head);
}

void SocketUpgrade::onReadyRead()
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
        if (m_fd < 0)
            return fail({UpstreamCall::Failure::Other, QStringLiteral("cannot keep the connection"),
                         m_peer, true});
        m_done = true;
        m_observer->upgradeSwitched(m_answer);
        return;
    }
    if (m_parser.buffered() > kMaxAnswerBytes)
        return fail({UpstreamCall::Failure::Protocol,
                     QStringLiteral("answer to the upgrade is larger than 1 MiB"), m_peer, true});
    if (m_parser.isComplete())
        answer();
}

void SocketUpgrade::onError(QAbstractSocket::SocketError error)
{
    if (m_done || !m_socket)
        return;
    if (error == QAbstractSocket::RemoteHostClosedError && m_haveHead) {
        m_parser.feedEof(); // a close-delimited answer ends here
        if (m_parser.isComplete())
            return answer();
    }
    fail(m_dialer.failure(*m_socket, error, m_haveHead));
}

void SocketUpgrade::answer()
{
    m_done = true;
    const QByteArray body = m_parser.read(m_parser.buffered());
    release();
    m_observer->upgradeAnswered(m_answer, body);
}

void SocketUpgrade::fail(const UpstreamCall::End &end)
{
    m_done = true;
    release();
    m_observer->upgradeFailed(end);
}

void SocketUpgrade::release()
{
    if (!m_socket)
        return;
    m_socket->disconnect(this);
    m_socket->abort();
    m_socket.release()->deleteLater(); // may be inside one of its signals
}

int SocketUpgrade::takeConnection(QByteArray *early)
{
    *early = std::exchange(m_early, {});
    return std::exchange(m_fd, -1);
}

} // namespace slp
