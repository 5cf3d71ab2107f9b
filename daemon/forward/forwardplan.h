// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "prometheustext.h"
#include "upstream/upstreamtransport.h"

#include <QElapsedTimer>
#include <QString>
#include <QUrl>

#include <chrono>
#include <memory>

namespace slp {

// What a route says about forwarding, compiled once with the route table: every exchange on
// the route holds the same one, and no request copies a field of it.
struct RouteForwarding
{
    QString modelId;   // exposed id (metrics label, logs)
    PromLabels labels; // {model_id}: built once, used by every metric update
    QString origin;    // "scheme://host[:port]", for the transport and log lines
    QUrl originUrl;
    std::chrono::milliseconds timeout{60000};
    QString timeoutText; // as written in the config, for the 502 and the log
    int maxAttempts = 1; // 2 with retry: true
    // After the response head: no upstream body byte for this long breaks the response (0: off).
    std::chrono::milliseconds streamIdleTimeout{0};
    QString streamIdleTimeoutText; // as formatGoDuration spells the route's value, for the log
    // A relayed text/event-stream silent this long gets ": keep-alive\n\n" at a boundary (0: off).
    std::chrono::milliseconds sseKeepalive{0};
    // The route's `headers:`, set over the client's on every request and tunnel.
    HeaderList setHeaders;
};

// Everything the router decided about one request before it goes upstream: the route's
// settings by reference, the request as it goes upstream (its method and target are the
// client's), and what only this request has.
struct ForwardPlan
{
    std::shared_ptr<const RouteForwarding> route;
    QByteArray requestId;       // SLP's slpq id
    QByteArray clientRequestId; // the client's own X-Request-Id, as sent (logged quoted), or empty
    QByteArray traceId;         // the 32 hex digits of a valid W3C traceparent, or empty
    QString renamedTo;          // upstream model name when the body was rewritten, else empty
    // aggregate: true and a non-streaming chat/completions request: the upstream was asked to
    // stream and the SSE is reassembled into the JSON the client asked for.
    enum class Aggregate
    {
        Off,
        Chat,
        Completion
    };
    Aggregate aggregate = Aggregate::Off;
    // The reassembled answer's bound (max_body_bytes): it is buffered like a request body.
    qint64 maxAnswerBytes = 64ll << 20;
    UpstreamRequest request;
    QElapsedTimer received; // started when the complete request reached the router (overhead)
};

} // namespace slp
