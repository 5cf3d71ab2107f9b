// SPDX-License-Identifier: GPL-3.0-or-later
#include "net/directwrite.h"

#include <QSslSocket>
#include <QTcpSocket>
#include <QVarLengthArray>

#include <cerrno>
#include <sys/socket.h>
#include <sys/uio.h>

namespace slp {

namespace {
// The descriptor the kernel may take bytes on directly, or -1: a TLS socket's bytes are Qt's
// to encrypt, and bytes Qt still holds must go out first.
int directDescriptor(QTcpSocket *socket)
{
    if (qobject_cast<QSslSocket *>(socket) || socket->state() != QAbstractSocket::ConnectedState ||
        socket->bytesToWrite() > 0)
        return -1;
    return int(socket->socketDescriptor());
}

// One send over every piece (a gather write): what the kernel took, 0 when nothing (full:
// EAGAIN, or an error that Qt's path then reports).
qint64 sendPieces(int fd, const QList<QByteArray> &pieces)
{
    QVarLengthArray<iovec, 8> iov;
    for (const QByteArray &piece : pieces) {
        if (iov.size() == IOV_MAX)
            break; // the rest on the next round
        iov.append({const_cast<char *>(piece.constData()), size_t(piece.size())});
    }
    msghdr message{};
    message.msg_iov = iov.data();
    message.msg_iovlen = size_t(iov.size());
    ssize_t n;
    do
        n = ::sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    return n > 0 ? n : 0;
}
} // namespace

qint64 writeDirect(QTcpSocket *socket, const QByteArray &bytes)
{
    qint64 sent = 0;
    if (const int fd = directDescriptor(socket); fd >= 0) {
        while (sent < bytes.size()) {
            const ssize_t n = ::send(fd, bytes.constData() + sent, size_t(bytes.size() - sent),
                                     MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0)
                sent += n;
            else if (n < 0 && errno == EINTR)
                continue;
            else
                break;
        }
    }
    // QIODevice::write keeps a QByteArray of 4 KiB or more as it is: what the kernel did not
    // take waits in Qt's buffer as a slice of the caller's block, not as a copy.
    if (sent < bytes.size())
        socket->write(sharedSlice(bytes, sent, bytes.size()));
    return sent;
}

qint64 writeDirect(QTcpSocket *socket, const ByteChain &bytes)
{
    qint64 sent = 0;
    if (const int fd = directDescriptor(socket); fd >= 0) {
        while (sent < bytes.size()) {
            const qint64 n = sendPieces(fd, bytes.from(sent).pieces());
            if (n == 0)
                break;
            sent += n;
        }
    }
    const ByteChain rest = bytes.from(sent);
    for (const QByteArray &piece : rest.pieces())
        socket->write(piece);
    return sent;
}

} // namespace slp
