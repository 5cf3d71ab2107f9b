// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "body/modellocator.h"
#include "wire/http1.h"

#include <QByteArray>

#include <functional>
#include <memory>

namespace slp {

class ResponseWriter;
struct RequestHead;

// Makes the model scan a connection shows a request's body to as it arrives, when the head
// says the request is routed by its model (the router's endpoint table decides); null for
// none.
using ModelScanFactory = std::function<std::unique_ptr<ModelLocator>(const RequestHead &head)>;

// A client request as SLP's own parse framed it, copied out of QtHttpServer's reused request
// object (docs/QT64.md, "Responses held open").
struct InboundRequest
{
    QByteArray method;
    QByteArray target;  // path and query exactly as sent
    QByteArray path;    // the target up to its '?', split once where the request is handed over
    QByteArray query;   // after the '?' (empty when none)
    HeaderList headers; // in order, repeats kept
    QByteArray body;
    QByteArray clientAddress;
    bool webSocketUpgrade = false; // the head asked for WebSocket (RequestHead's answer)
    // The model scan that saw the body arrive (ConnectionSettings::scanModel), or null.
    std::shared_ptr<ModelLocator> modelScan;

    // Sets the target and splits it into path and query, once.
    void setTarget(QByteArray raw)
    {
        target = std::move(raw);
        const qsizetype question = target.indexOf('?');
        path = question < 0 ? target : target.left(question);
        query = question < 0 ? QByteArray() : target.mid(question + 1);
    }
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
