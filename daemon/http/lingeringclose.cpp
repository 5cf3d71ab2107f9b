// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/lingeringclose.h"

#include <sys/socket.h>

namespace slp {

void LingeringClose::start(QTcpSocket *socket, const Limits &limits)
{
    if (!socket || socket->state() != QAbstractSocket::ConnectedState) {
        if (socket)
            socket->disconnectFromHost();
        return;
    }
    new LingeringClose(socket, limits); // a Qt child of the socket
}

LingeringClose::LingeringClose(QTcpSocket *socket, const Limits &limits)
    : QObject(socket), m_socket(socket), m_limits(limits)
{
    // From here on the linger is the socket's only reader: neither SLP's framer nor
    // QtHttpServer's parser may take the bytes still arriving for a request.
    disconnect(socket, &QTcpSocket::readyRead, nullptr, nullptr);
    // QtHttpServer reads inside a transaction that stays open until a request is complete;
    // ended here, the bytes dropped below are not kept for a rollback that never comes.
    if (socket->isTransactionStarted())
        socket->commitTransaction();
    connect(socket, &QTcpSocket::readyRead, this, &LingeringClose::onReadyRead);
    connect(socket, &QTcpSocket::bytesWritten, this, &LingeringClose::onBytesWritten);
    m_total.setSingleShot(true);
    m_quiet.setSingleShot(true);
    connect(&m_total, &QTimer::timeout, this, &LingeringClose::finish);
    connect(&m_quiet, &QTimer::timeout, this, &LingeringClose::finish);
    m_total.start(m_limits.total);
    m_quiet.start(m_limits.quiet);
    onBytesWritten();
    onReadyRead();
}

void LingeringClose::onBytesWritten()
{
    if (!m_shut && m_socket && m_socket->bytesToWrite() == 0)
        shutWriteSide();
}

void LingeringClose::shutWriteSide()
{
    // The answer is in the kernel: its FIN follows it, and the client can read both while
    // its own send side is still busy.
    m_shut = true;
    ::shutdown(int(m_socket->socketDescriptor()), SHUT_WR);
}

void LingeringClose::onReadyRead()
{
    if (!m_socket)
        return;
    char sink[64 * 1024];
    qint64 n = 0;
    while ((n = m_socket->read(sink, sizeof sink)) > 0)
        m_dropped += n;
    if (m_dropped > 0)
        m_quiet.start(m_limits.quiet);
    if (m_dropped >= m_limits.maxBytes)
        finish();
}

void LingeringClose::finish()
{
    m_total.stop();
    m_quiet.stop();
    if (m_socket)
        m_socket->abort(); // the answer went out long ago; disconnected() cleans up
}

} // namespace slp
