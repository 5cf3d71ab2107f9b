// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "httpfield.h"
#include "wire/http1.h"

#include <QByteArray>
#include <QByteArrayView>

namespace slp {

// SLP's own strict reading of a client's request head. QtHttpServer 6.4 parses leniently and
// enforces no limits (docs/QT64.md), so every connection's bytes are read here first: this
// decides 400/413/414/431/505 before QtHttpServer buffers anything, and keeps what Qt drops
// (the raw target, the HTTP version, repeated headers in order).
struct RequestHeadLimits
{
    qint64 maxHeaderBytes = 64 * 1024;
    qint64 maxBodyBytes = 64ll << 20;
};

struct RequestHead
{
    enum class State
    {
        Incomplete,
        Complete,
        Rejected
    };
    State state = State::Incomplete;

    // Rejected: the status to answer (400, 413, 414, 431, 501, 505) and why.
    int errorStatus = 0;
    QByteArray errorMessage;

    qsizetype headLength = 0; // bytes up to and including the blank line
    QByteArray method;
    QByteArray target;         // exactly as sent: path and query verbatim
    int versionMinor = 1;      // HTTP/1.x
    HeaderList headers;        // in order, repeats kept, values trimmed
    qint64 contentLength = -1; // -1 when absent
    bool chunked = false;
    bool expectContinue = false;
    // A bodyless GET asking for WebSocket (isWebSocketUpgradeRequest), asked once by the
    // parser for the connection, the handoff and the router.
    bool webSocketUpgrade = false;
    bool keepAlive = true; // after this request, by version, Connection and framing
    qint64 bodyBytes = -1; // set by the framer: the body's length once it is known
};

// Reads the head at the start of `data` (the client's unconsumed bytes). Incomplete until the
// blank line has arrived; Rejected as soon as the bytes seen so far break a rule.
RequestHead parseRequestHead(QByteArrayView data, const RequestHeadLimits &limits);

} // namespace slp
