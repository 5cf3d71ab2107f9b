// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/upstreamtransport.h"

#include <QByteArray>
#include <QString>

namespace slp {

// What the qnam transport checks on each side of QNetworkAccessManager, because QNAM 6.4 lets
// through what the socket transport refuses (docs/DECISIONS.md, "What qnam cannot fence").

// The target QNAM would put on the wire for `request`: the URL built as QnamTransport builds it,
// encoded as Qt 6.4's QHttpNetworkRequest::uri() encodes it (fragment dropped, path segments
// normalised, "/" for an empty path). Empty when QUrl refuses the URL.
QByteArray qnamWireTarget(const UpstreamRequest &request);

// Whether QNAM sends the client's target as the client sent it: equal once %XX of unreserved
// characters (RFC 3986 2.3) are decoded on both sides, the only rewrite that means the same.
bool qnamSendsTargetUnchanged(const UpstreamRequest &request);

// Why a response head QNAM reports must not be relayed, or empty when it may be: an interim
// 1xx taken for the answer, no fields at all (what QNAM leaves of a head with more than 100),
// more than 100 fields, Content-Length together with Transfer-Encoding, a head over
// ResponseParser's 64 KiB, a CR, LF or NUL in the reason phrase, or a control byte other than
// HTAB in a header value (as the socket transport's parser). `headers` as QNAM gives them,
// repeated Set-Cookie values split apart again.
QString qnamHeadFault(int status, const QByteArray &reason, const HeaderList &headers);

} // namespace slp
