// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/upstreamtransport.h"

#include <QByteArray>
#include <QString>

namespace slp {

// The longest upstream X-Request-Id a client gets to see.
constexpr qsizetype kMaxUpstreamRequestIdBytes = 128;

// Why an upstream's X-Request-Id value is not handed to a client (empty, over
// kMaxUpstreamRequestIdBytes, or a byte that is not visible ASCII), or empty when it may be.
QString upstreamRequestIdFault(const QByteArray &value);

// One rule on both transports, applied to every head before it is relayed: an unfit
// X-Request-Id is removed and logged escaped for `origin`, so the client gets SLP's own id.
// (A control byte other than HTAB never gets this far: either transport refuses such a head.)
void dropUnfitRequestIds(UpstreamHead &head, const QString &origin);

} // namespace slp
