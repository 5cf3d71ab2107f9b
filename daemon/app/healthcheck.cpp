// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/healthcheck.h"

#include <QFileInfo>
#include <QLocalSocket>
#include <QTcpSocket>

namespace slp {

namespace {
QString tcpFailure(QAbstractSocket::SocketError error, const QString &detail)
{
    switch (error) {
    case QAbstractSocket::ConnectionRefusedError:
        return QStringLiteral("connection refused");
    case QAbstractSocket::RemoteHostClosedError:
        return QStringLiteral("connection closed before a status line");
    default:
        return detail;
    }
}

QString unixFailure(QLocalSocket::LocalSocketError error, const QString &detail)
{
    switch (error) {
    case QLocalSocket::ConnectionRefusedError:
        return QStringLiteral("connection refused");
    case QLocalSocket::ServerNotFoundError:
        return QStringLiteral("connection refused (no socket there)");
    case QLocalSocket::PeerClosedError:
        return QStringLiteral("connection closed before a status line");
    default:
        return detail;
    }
}
} // namespace

HealthCheck::HealthCheck(const HealthTarget &target, std::chrono::milliseconds bound,
                         QObject *parent)
    : QObject(parent), m_target(target), m_bound(bound)
{
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, [this] {
        finish(false, QStringLiteral("timed out: no answer within %1 ms").arg(m_bound.count()));
    });
}

void HealthCheck::start()
{
    m_elapsed.start();
    m_deadline.start(m_bound);
    if (m_target.isUnix())
        connectUnix();
    else
        connectTcp();
}

// Every signal is connected before the connect: a Unix socket connects (or fails) inside
// connectToServer.
void HealthCheck::connectTcp()
{
    auto *socket = new QTcpSocket(this);
    m_socket = socket;
    connect(socket, &QIODevice::readyRead, this, &HealthCheck::onReadyRead);
    connect(socket, &QTcpSocket::connected, this, &HealthCheck::onConnected);
    connect(socket, &QTcpSocket::errorOccurred, this, [this, socket](auto error) {
        finish(false, tcpFailure(error, socket->errorString()));
    });
    socket->connectToHost(m_target.host, m_target.port);
}

void HealthCheck::connectUnix()
{
    auto *socket = new QLocalSocket(this);
    m_socket = socket;
    connect(socket, &QIODevice::readyRead, this, &HealthCheck::onReadyRead);
    connect(socket, &QLocalSocket::connected, this, &HealthCheck::onConnected);
    connect(socket, &QLocalSocket::errorOccurred, this, [this, socket](auto error) {
        finish(false, unixFailure(error, socket->errorString()));
    });
    // QLocalSocket would look for a relative name under /tmp; slp bound it relative to its
    // working directory, which is taken to be this one.
    socket->connectToServer(QFileInfo(m_target.unixPath).absoluteFilePath());
}

void HealthCheck::onConnected()
{
    m_socket->write(m_target.request());
}

void HealthCheck::onReadyRead()
{
    m_received += m_socket->readAll();
    const int status = responseStatus(m_received);
    if (status == 0)
        return;
    if (status < 0)
        finish(false, QStringLiteral("the answer is not HTTP/1.x"));
    else if (status != 200)
        finish(false, QStringLiteral("status %1").arg(status));
    else
        finish(true, QStringLiteral("status 200 in %1 ms").arg(m_elapsed.elapsed()));
}

void HealthCheck::finish(bool healthy, const QString &message)
{
    if (m_done)
        return;
    m_done = true;
    m_deadline.stop();
    Q_EMIT finished(healthy, message);
}

} // namespace slp
