// SPDX-License-Identifier: GPL-3.0-or-later
#include "net/sockethandover.h"

#include <QTcpSocket>

#include <fcntl.h>

namespace slp {

int takeDescriptor(QTcpSocket *socket)
{
    if (!socket || socket->socketDescriptor() < 0)
        return -1;
    const int fd = ::fcntl(int(socket->socketDescriptor()), F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    QObject::disconnect(socket, &QIODevice::readyRead, nullptr, nullptr);
    QObject::disconnect(socket, &QIODevice::bytesWritten, nullptr, nullptr);
    QObject::disconnect(socket, &QIODevice::aboutToClose, nullptr, nullptr);
    QObject::disconnect(socket, &QAbstractSocket::connected, nullptr, nullptr);
    QObject::disconnect(socket, &QAbstractSocket::disconnected, nullptr, nullptr);
    QObject::disconnect(socket, &QAbstractSocket::errorOccurred, nullptr, nullptr);
    QObject::disconnect(socket, &QAbstractSocket::stateChanged, nullptr, nullptr);
    socket->abort();
    return fd;
}

} // namespace slp
