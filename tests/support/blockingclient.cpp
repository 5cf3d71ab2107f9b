// SPDX-License-Identifier: GPL-3.0-or-later
#include "blockingclient.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace slp::test {

QString BlockingAnswer::describe() const
{
    return QStringLiteral("status line '%1', error %2 (%3)")
        .arg(QString::fromLatin1(statusLine))
        .arg(error)
        .arg(QString::fromLatin1(error ? std::strerror(error) : "none"));
}

int blockingConnect(const QString &host, quint16 port, int timeoutS)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    ::inet_pton(AF_INET, host.toLatin1().constData(), &addr.sin_addr);
    timeval limit{timeoutS, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
        const int saved = errno;
        ::close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

bool blockingSendAll(int fd, const QByteArray &bytes, int *error)
{
    qsizetype sent = 0;
    while (sent < bytes.size()) {
        const ssize_t n =
            ::send(fd, bytes.constData() + sent, size_t(bytes.size() - sent), MSG_NOSIGNAL);
        if (n <= 0) {
            *error = n < 0 ? errno : EPIPE;
            return false;
        }
        sent += n;
    }
    return true;
}

BlockingAnswer sendThenRead(const QString &host, quint16 port, const QByteArray &request,
                            int timeoutS)
{
    BlockingAnswer out;
    const int fd = blockingConnect(host, port, timeoutS);
    if (fd < 0) {
        out.error = errno;
        return out;
    }
    if (blockingSendAll(fd, request, &out.error)) {
        char buf[16 * 1024];
        for (int reads = 0; reads < 100000; ++reads) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n < 0)
                out.error = errno;
            if (n <= 0)
                break;
            out.raw.append(buf, n);
        }
    }
    ::close(fd);
    if (const qsizetype end = out.raw.indexOf("\r\n"); end >= 0)
        out.statusLine = out.raw.left(end);
    return out;
}

} // namespace slp::test
