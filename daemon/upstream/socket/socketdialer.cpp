// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/socket/socketdialer.h"

#include "net/unixsocket.h"

#include <QNetworkProxy>
#include <QSslSocket>
#include <QTcpSocket>

#include <unistd.h>

namespace slp {

std::unique_ptr<QTcpSocket> SocketDialer::dial(qint64 readBufferSize,
                                               UpstreamCall::End *failed) const
{
    using Failure = UpstreamCall::Failure;
    std::unique_ptr<QTcpSocket> socket(m_endpoint.tls ? new QSslSocket : new QTcpSocket);
    socket->setProxy(QNetworkProxy::NoProxy); // never http_proxy from the environment
    socket->setReadBufferSize(readBufferSize);
    if (m_endpoint.unixPath.isEmpty()) {
        if (m_endpoint.tls)
            static_cast<QSslSocket &>(*socket).connectToHostEncrypted(m_endpoint.host,
                                                                      m_endpoint.port);
        else
            socket->connectToHost(m_endpoint.host, m_endpoint.port);
        return socket;
    }
    // A Unix socket's connect(2) never waits for a peer. The descriptor is wrapped in a
    // QTcpSocket, as QLocalSocket itself does, so everything above works unchanged.
    bool refused = false;
    QString message;
    const int fd = connectUnixSocket(m_endpoint.unixPath, &refused, &message);
    if (fd < 0) { // refused: nothing reached the upstream, so retry: true may dial once more
        *failed = {refused ? Failure::Refused : Failure::Other, message, {}, false};
        return nullptr;
    }
    if (!socket->setSocketDescriptor(fd, QAbstractSocket::ConnectedState)) {
        ::close(fd);
        *failed = {
            Failure::Other, m_endpoint.key + QStringLiteral(": cannot use the socket"), {}, false};
        return nullptr;
    }
    return socket;
}

UpstreamCall::End SocketDialer::failure(const QTcpSocket &socket,
                                        QAbstractSocket::SocketError error, bool headArrived) const
{
    using Failure = UpstreamCall::Failure;
    UpstreamCall::End end;
    end.headArrived = headArrived;
    end.peer = peerOf(socket);
    const bool connecting = error == QAbstractSocket::ConnectionRefusedError ||
                            error == QAbstractSocket::HostNotFoundError;
    if (headArrived)
        end.failure = Failure::BrokenBody;
    else if (error == QAbstractSocket::ConnectionRefusedError)
        end.failure = Failure::Refused;
    else if (error == QAbstractSocket::HostNotFoundError)
        end.failure = Failure::NameLookup;
    else if (error == QAbstractSocket::RemoteHostClosedError)
        end.failure = Failure::Closed;
    else
        end.failure = Failure::Other;
    end.detail = (connecting ? QStringLiteral("connect to ") : QString()) + where(socket) +
                 socket.errorString();
    return end;
}

QString SocketDialer::where(const QTcpSocket &socket) const
{
    if (!peerOf(socket).isEmpty())
        return QString();
    if (!m_endpoint.unixPath.isEmpty())
        return m_endpoint.key + QStringLiteral(": "); // the log names the socket's path
    return m_endpoint.host + QLatin1Char(':') + QString::number(m_endpoint.port) +
           QStringLiteral(": ");
}

QString SocketDialer::peerOf(const QTcpSocket &socket)
{
    const QHostAddress a = socket.peerAddress();
    if (a.isNull())
        return QString();
    const QString ip = a.protocol() == QAbstractSocket::IPv6Protocol
                           ? QLatin1Char('[') + a.toString() + QLatin1Char(']')
                           : a.toString();
    return ip + QLatin1Char(':') + QString::number(socket.peerPort());
}

} // namespace slp
