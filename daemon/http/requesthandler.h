// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "wire/http1.h"

#include <QByteArray>

namespace slp {

class ResponseWriter;

// A client request as SLP's own parse framed it, copied out of QtHttpServer's reused request
// object (docs/QT64.md, "Responses held open").
struct InboundRequest
{
    QByteArray method;
    QByteArray target;  // path and query exactly as sent
    HeaderList headers; // in order, repeats kept
    QByteArray body;
    QByteArray clientAddress;
};

// What the front hands each request to (qBittorrent's pattern: parse, route and write never
// mix). The handler answers through `writer`, now or later; the writer outlives it only while
// the client connection does.
class RequestHandler
{
public:
    virtual ~RequestHandler() = default;
    virtual void handle(InboundRequest request, ResponseWriter *writer) = 0;
};

} // namespace slp
