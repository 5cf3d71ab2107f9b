// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/socket/socketorigin.h"

namespace slp {

SocketEndpoint endpointFor(const QUrl &url, const QString &key)
{
    SocketEndpoint e;
    e.key = key;
    if (key.startsWith(QLatin1String("unix:"))) {
        e.unixPath = key.mid(5);
        e.hostHeader = QByteArrayLiteral("localhost");
        return e;
    }
    e.tls = url.scheme().compare(QLatin1String("https"), Qt::CaseInsensitive) == 0;
    const quint16 defaultPort = e.tls ? 443 : 80;
    e.host = url.host(QUrl::EncodeUnicode);
    e.port = quint16(url.port(defaultPort));
    QByteArray host = url.host(QUrl::FullyEncoded).toLatin1();
    if (host.contains(':'))
        host = '[' + host + ']';
    e.hostHeader = host;
    if (e.port != defaultPort)
        e.hostHeader += ':' + QByteArray::number(e.port);
    e.key = key;
    return e;
}

QByteArray requestHead(const UpstreamRequest &request, const SocketEndpoint &endpoint)
{
    const QByteArray target = request.target.isEmpty() ? QByteArray("/") : request.target;
    qsizetype size = request.method.size() + target.size() + endpoint.hostHeader.size() + 64;
    for (const auto &[name, value] : request.headers)
        size += name.size() + value.size() + 4;
    QByteArray head;
    head.reserve(size);
    head += request.method;
    head += ' ';
    head += target;
    head += " HTTP/1.1\r\nHost: ";
    head += endpoint.hostHeader;
    head += "\r\n";
    for (const auto &[name, value] : request.headers) {
        // Framing and Host are the transport's; the core never passes them, but a stray one
        // would make the upstream read a different request.
        if (equalsNoCase(name, "host") || equalsNoCase(name, "content-length") ||
            equalsNoCase(name, "transfer-encoding"))
            continue;
        head += name;
        head += ": ";
        head += value;
        head += "\r\n";
    }
    const bool bodyMethod =
        request.method == "POST" || request.method == "PUT" || request.method == "PATCH";
    if (bodyMethod || !request.body.isEmpty()) {
        head += "Content-Length: ";
        head += QByteArray::number(request.body.size());
        head += "\r\n";
    }
    head += "\r\n";
    return head;
}

// False when the upstream closed the idle connection (or sent something unasked for).
} // namespace slp
