// SPDX-License-Identifier: GPL-3.0-or-later
#include "net/sharedport.h"

#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace slp {

namespace {
struct Endpoint
{
    sockaddr_storage address = {};
    socklen_t length = 0;
    int family = AF_INET;
    bool dualStack = false; // IPV6_V6ONLY off
    bool v6Only = false;
};

Endpoint endpointOf(const QHostAddress &host, quint16 port)
{
    Endpoint e;
    QHostAddress address = host;
    if (host == QHostAddress::Any || host == QHostAddress::AnyIPv6) {
        e.dualStack = host == QHostAddress::Any;
        e.v6Only = !e.dualStack;
        address = QHostAddress::AnyIPv6;
    } else if (host == QHostAddress::AnyIPv4) {
        address = QHostAddress(QHostAddress::AnyIPv4);
    }
    if (address.protocol() == QAbstractSocket::IPv6Protocol) {
        auto *in6 = reinterpret_cast<sockaddr_in6 *>(&e.address);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        const Q_IPV6ADDR raw = address.toIPv6Address();
        std::memcpy(&in6->sin6_addr, &raw, sizeof(raw));
        in6->sin6_scope_id = address.scopeId().toUInt();
        e.length = sizeof(sockaddr_in6);
        e.family = AF_INET6;
    } else {
        auto *in4 = reinterpret_cast<sockaddr_in *>(&e.address);
        in4->sin_family = AF_INET;
        in4->sin_port = htons(port);
        in4->sin_addr.s_addr = htonl(address.toIPv4Address());
        e.length = sizeof(sockaddr_in);
        e.family = AF_INET;
    }
    return e;
}

QString systemError(const char *what)
{
    return QStringLiteral("%1: %2").arg(QLatin1String(what),
                                        QString::fromLocal8Bit(strerror(errno)));
}

// A bound (not yet listening) socket on `host:port`; -1 with `error` set.
int boundSocket(const QHostAddress &host, quint16 port, bool reusePort, QString *error)
{
    Endpoint e = endpointOf(host, port);
    int fd = ::socket(e.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 && e.dualStack && errno == EAFNOSUPPORT) {
        e = endpointOf(QHostAddress(QHostAddress::AnyIPv4), port); // no IPv6 on this host
        fd = ::socket(e.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    }
    if (fd < 0) {
        *error = systemError("socket");
        return -1;
    }
    const int on = 1;
    const int off = 0;
    bool ok = ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == 0;
    if (ok && reusePort)
        ok = ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) == 0;
    if (ok && e.family == AF_INET6 && (e.dualStack || e.v6Only))
        ok = ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, e.v6Only ? &on : &off, sizeof(int)) == 0;
    if (!ok) {
        *error = systemError("setsockopt");
        ::close(fd);
        return -1;
    }
    if (::bind(fd, reinterpret_cast<const sockaddr *>(&e.address), e.length) != 0) {
        *error = errno == EADDRINUSE ? QStringLiteral("The bound address is already in use")
                                     : systemError("bind");
        ::close(fd);
        return -1;
    }
    return fd;
}
} // namespace

int openSharedListenSocket(const QHostAddress &host, quint16 port, int backlog, QString *error)
{
    const int fd = boundSocket(host, port, true, error);
    if (fd >= 0 && ::listen(fd, backlog) != 0) {
        *error = systemError("listen");
        ::close(fd);
        return -1;
    }
    return fd;
}

bool portIsFree(const QHostAddress &host, quint16 port, QString *error)
{
    if (port == 0)
        return true; // the OS picks a free one
    const int fd = boundSocket(host, port, false, error);
    if (fd < 0)
        return false;
    ::close(fd);
    return true;
}

} // namespace slp
