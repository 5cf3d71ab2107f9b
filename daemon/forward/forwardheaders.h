// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/upstreamtransport.h"

namespace slp {

// Header rules of the forward path (docs/HTTP.md), kept pure for unit tests.

struct InboundHeaders
{
    HeaderList forward;         // what goes upstream (the transport adds Host and framing)
    QByteArray clientRequestId; // an inbound X-Request-Id (never adopted, only logged)
    bool hasClientRequestId = false;
};

// Drops hop-by-hop headers (and those named in Connection), Host, Content-Length, Expect and
// X-Request-Id; appends the client to X-Forwarded-For; sets X-Forwarded-Proto ("http") and
// X-Forwarded-Host (the inbound Host) when absent. Everything else passes, repeats kept.
InboundHeaders prepareUpstreamHeaders(const HeaderList &inbound, const QByteArray &clientAddress);

// The upstream's response headers minus hop-by-hop and framing (Content-Length and
// Transfer-Encoding: SLP frames the body to the client itself).
HeaderList prepareClientHeaders(const HeaderList &upstream);

// The 32 hex digits of the trace id of a valid W3C traceparent (exactly one such header;
// "VERSION-TRACEID-PARENTID-FLAGS", lowercase hex, version not ff, neither id all zeros;
// version 00 exactly 55 characters, a later one may carry more after a '-'), or empty.
QByteArray traceIdOf(const HeaderList &inbound);

} // namespace slp
