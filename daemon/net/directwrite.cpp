// SPDX-License-Identifier: GPL-3.0-or-later
#include "net/directwrite.h"

#include <QSslSocket>
#include <QTcpSocket>

#include <cerrno>
#include <sys/socket.h>

namespace slp {

qint64 writeDirect(QTcpSocket *socket, const QByteArray &bytes)
{
    qint64 sent = 0;
    const bool plain = !qobject_cast<QSslSocket *>(socket); // TLS bytes must be Qt's to encrypt
    if (plain && socket->state() == QAbstractSocket::ConnectedState &&
        socket->bytesToWrite() == 0) {
        const int fd = int(socket->socketDescriptor());
        while (fd >= 0 && sent < bytes.size()) {
            const ssize_t n = ::send(fd, bytes.constData() + sent, size_t(bytes.size() - sent),
                                     MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                sent += n;
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else {
                break; // full (EAGAIN) or an error: Qt's path takes the rest and reports errors
            }
        }
    }
    if (sent < bytes.size()) {
        socket->write(sent == 0 ? bytes : bytes.mid(sent));
    }
    return sent;
}

} // namespace slp
