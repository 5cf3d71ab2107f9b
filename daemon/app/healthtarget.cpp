// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/healthtarget.h"

namespace slp {

QString HealthTarget::text() const
{
    if (isUnix())
        return QStringLiteral("unix:") + unixPath;
    if (host.protocol() == QAbstractSocket::IPv6Protocol)
        return QStringLiteral("[%1]:%2").arg(host.toString()).arg(port);
    return QStringLiteral("%1:%2").arg(host.toString()).arg(port);
}

QByteArray HealthTarget::request() const
{
    // A Unix socket has no host name; slp's front wants a Host header all the same.
    const QByteArray hostHeader = isUnix() ? QByteArrayLiteral("localhost") : text().toLatin1();
    return QByteArrayLiteral("GET /healthz HTTP/1.1\r\nHost: ") + hostHeader +
           QByteArrayLiteral("\r\nUser-Agent: slp-health-check/" SLP_VERSION
                             "\r\nConnection: close\r\n\r\n");
}

std::optional<HealthTarget> healthTargetFor(const ListenAddress &listen, QString *error)
{
    HealthTarget target;
    if (listen.isUnix()) {
        target.unixPath = listen.unixPath;
        return target;
    }
    if (listen.port == 0) {
        if (error)
            *error = QStringLiteral("listen: %1 lets the OS pick the port, so there is none to "
                                    "ask; give --listen HOST:PORT")
                         .arg(listen.text);
        return std::nullopt;
    }
    target.port = listen.port;
    // ":PORT" (dual-stack) and "0.0.0.0:PORT" accept on IPv4 loopback; "[::]:PORT" surely on
    // IPv6's, and IPv4 may be off for it (IPV6_V6ONLY).
    if (listen.host == QHostAddress(QHostAddress::Any) ||
        listen.host == QHostAddress(QHostAddress::AnyIPv4))
        target.host = QHostAddress(QHostAddress::LocalHost);
    else if (listen.host == QHostAddress(QHostAddress::AnyIPv6))
        target.host = QHostAddress(QHostAddress::LocalHostIPv6);
    else
        target.host = listen.host;
    return target;
}

int responseStatus(QByteArrayView received)
{
    const qsizetype end = received.indexOf('\n');
    const QByteArrayView prefix("HTTP/1.");
    // Enough of the line to tell: "HTTP/1.x NNN".
    const QByteArrayView head = received.first(std::min<qsizetype>(received.size(), 12));
    if (!prefix.startsWith(head.first(std::min(head.size(), prefix.size()))))
        return -1;
    if (end < 0)
        return received.size() > 1024 ? -1 : 0;
    const QByteArrayView line = received.first(end);
    if (line.size() < 12 || (line[7] != '0' && line[7] != '1') || line[8] != ' ')
        return -1;
    int status = 0;
    for (const char c : line.sliced(9, 3)) {
        if (c < '0' || c > '9')
            return -1;
        status = status * 10 + (c - '0');
    }
    const bool endsThere = line.size() == 12 || line[12] == ' ' || line[12] == '\r';
    return endsThere && status >= 100 ? status : -1;
}

} // namespace slp
