// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/upstreamtransport.h"

#include <QByteArray>
#include <QString>
#include <QUrl>

namespace slp {

// Where an origin's connections go, worked out once per origin (not per request).
struct SocketEndpoint
{
    QString host;          // what to dial (ACE, IPv6 without brackets)
    quint16 port = 0;      // default applied
    bool tls = false;      // https
    QByteArray hostHeader; // the Host value: host[:port], port only when not the default
    QString key;           // pool key: the route's origin text
    QString unixPath;      // a "unix:/PATH" origin's socket file; empty for TCP
};

// The endpoint of a route's origin (`key` is its text, the pool key). A "unix:/PATH" origin
// is dialled at PATH with "Host: localhost", what vLLM and llama-server expect there.
SocketEndpoint endpointFor(const QUrl &url, const QString &key);

// The request head as it goes on the wire: the request line with the client's target
// verbatim, the core's headers, Host and Content-Length.
QByteArray requestHead(const UpstreamRequest &request, const SocketEndpoint &endpoint);

} // namespace slp
