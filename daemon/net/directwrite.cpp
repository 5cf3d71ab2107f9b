// SPDX-License-Identifier: GPL-3.0-or-later
#include "net/directwrite.h"

#include <QSslSocket>
#include <QTcpSocket>

#include <cerrno>
#include <sys/socket.h>

namespace slp {

namespace {
// The bytes of `bytes` from `from` on, sharing its storage: what the kernel did not take of a
// 22 MB body goes to Qt's write buffer without a second copy (QIODevice::write keeps a
// QByteArray of 4 KiB or more as it is). Raw data, whose lifetime is the caller's, is copied.
QByteArray tailOf(const QByteArray &bytes, qsizetype from)
{
    QByteArray tail = bytes; // one more reference, no copy
    QByteArray::DataPointer &d = tail.data_ptr();
    if (from <= 0 || d.d_ptr() == nullptr)
        return from <= 0 ? tail : bytes.mid(from);
    d.ptr += from; // the same block, seen from `from`: still NUL-terminated at its end
    d.size -= from;
    return tail;
}
} // namespace

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
            if (n > 0)
                sent += n;
            else if (n < 0 && errno == EINTR)
                continue;
            else
                break; // full (EAGAIN) or an error: Qt's path takes the rest and reports errors
        }
    }
    if (sent < bytes.size())
        socket->write(tailOf(bytes, sent));
    return sent;
}

} // namespace slp
