// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/socket/upgradedialer.h"

#include "net/sockethandover.h"
#include "net/unixsocket.h"
#include "upstream/upstreamhead.h"

#include <QNetworkProxy>

#include <unistd.h>

namespace slp {

UpgradeDialer::UpgradeDialer(SocketEndpoint endpoint, QByteArray head, QObject *parent)
    : QObject(parent), m_endpoint(std::move(endpoint)), m_head(std::move(head))
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
    if (m_endpoint.tls) {
        // The splice joins plain descriptors; TLS to the upstream would need SLP to relay
        // through its own TLS layer (docs/HTTP.md).
        return fail(UpstreamCall::Failure::Other,
                    QStringLiteral("WebSocket tunnels to https backends are not supported"));
    }
    m_socket = std::make_unique<QTcpSocket>();
    m_socket->setProxy(QNetworkProxy::NoProxy);
    connect(m_socket.get(), &QTcpSocket::connected, this, &UpgradeDialer::onConnected);
    connect(m_socket.get(), &QTcpSocket::readyRead, this, &UpgradeDialer::onReadyRead);
    connect(m_socket.get(), &QTcpSocket::errorOccurred, this, &UpgradeDialer::onError);
    if (m_endpoint.unixPath.isEmpty()) {
        m_socket->connectToHost(m_endpoint.host, m_endpoint.port);
        return;
    }
    bool refused = false;
    QString message;
    const int fd = connectUnixSocket(m_endpoint.unixPath, &refused, &message);
    if (fd < 0) {
        return fail(refused ? UpstreamCall::Failure::Refused : UpstreamCall::Failure::Other,
                    message);
    }
    if (!m_socket->setSocketDescriptor(fd, QAbstractSocket::ConnectedState)) {
        ::close(fd);
        return fail(UpstreamCall::Failure::Other, m_endpoint.key + ": cannot use the socket");
    }
    onConnected();
}

void UpgradeDialer::onConnected()
{
    if (m_endpoint.unixPath.isEmpty())
        m_peer = QStringLiteral("%1:%2")
                     .arg(m_socket->peerAddress().toString())
                     .arg(m_socket->peerPort());
    m_socket->write(m_head);
}

void UpgradeDialer::onReadyRead()
{
    if (m_done || !m_socket)
        return;
    m_parser.feed(m_socket->readAll());
    if (m_parser.hasError()) {
        return fail(UpstreamCall::Failure::Protocol,
                    QStringLiteral("malformed response to the upgrade: ") + m_parser.errorText());
    }
    if (!m_haveHead) {
        m_haveHead = m_parser.takeHead(&m_answer);
        if (!m_haveHead)
            return;
        // The rule both transports apply to every head before it is relayed.
        dropUnfitRequestIds(m_answer, m_endpoint.key);
    }
    if (m_parser.isUpgraded()) {
        m_fd = takeDescriptor(m_socket.get()); // the connection leaves Qt for the tunnel
        m_early = m_parser.takeUpgradeBytes();
        release();
        m_done = true;
        if (m_fd < 0)
            return fail(UpstreamCall::Failure::Other, QStringLiteral("cannot keep the connection"));
        Q_EMIT switched(m_answer);
        return;
    }
    if (m_parser.buffered() > kMaxAnswerBytes)
        return fail(UpstreamCall::Failure::Protocol,
                    QStringLiteral("answer to the upgrade is larger than 1 MiB"));
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
    const QString detail = m_socket->errorString();
    switch (error) {
    case QAbstractSocket::ConnectionRefusedError:
        return fail(UpstreamCall::Failure::Refused, detail);
    case QAbstractSocket::HostNotFoundError:
        return fail(UpstreamCall::Failure::NameLookup, detail);
    case QAbstractSocket::RemoteHostClosedError:
        return fail(m_haveHead ? UpstreamCall::Failure::BrokenBody : UpstreamCall::Failure::Closed,
                    detail);
    default:
        return fail(UpstreamCall::Failure::Other, detail);
    }
}

void UpgradeDialer::fail(UpstreamCall::Failure failure, const QString &detail)
{
    m_done = true;
    release();
    Q_EMIT failed(failure, detail);
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
