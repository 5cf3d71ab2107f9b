// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPair>

#include <functional>

namespace slp {

// The HTTP/1.1 vocabulary both edges speak (the client side in http/, the upstream side in
// upstream/): pure, no sockets.

// Header fields in order as received or to be written, repeats kept apart.
using HeaderList = QList<QPair<QByteArray, QByteArray>>;

// First value of `name`, case-insensitive; empty when absent.
QByteArray headerValue(const HeaderList &headers, QByteArrayView name);

// ASCII case-insensitive equality: header names and tokens.
bool equalsNoCase(QByteArrayView a, QByteArrayView b);
// `headers` with every field named like one of `replacements` (any case) removed and
// `replacements` appended: a route's configured headers over the client's.
void replaceHeaders(HeaderList &headers, const HeaderList &replacements);
// `value` without the optional whitespace (SP, HTAB) RFC 9110 allows around a field value
// and a list element.
QByteArrayView trimOws(QByteArrayView value);
// Calls `each` with every element of the comma-separated list `value` (Connection,
// Transfer-Encoding, Upgrade), trimmed of optional whitespace, empty elements skipped; stops
// early when `each` returns false.
void forEachToken(QByteArrayView value, const std::function<bool(QByteArrayView)> &each);
// Whether the list `value` holds `token`, compared without case.
bool hasToken(QByteArrayView value, QByteArrayView token);
// Whether any `name` field of `headers` holds `token` (a list may be split across fields).
bool anyHeaderHasToken(const HeaderList &headers, QByteArrayView name, QByteArrayView token);
// A request asking to switch to WebSocket: `Upgrade: websocket` and `Connection: upgrade`
// (RFC 6455 4.1); the method and version are the caller's to check.
bool asksWebSocketUpgrade(const HeaderList &headers);
// What SLP tunnels: a GET without a body that asks for WebSocket. Everything else with an
// Upgrade header is an ordinary request (the header is hop-by-hop and goes no further).
bool isWebSocketUpgradeRequest(QByteArrayView method, const HeaderList &headers, qint64 bodyBytes);

// 1xx, 204 and 304 never carry a body (RFC 9110 section 6.4.1), whatever their head says.
bool statusHasNoBody(int status);

// The standard reason phrase of `status` ("Status" for codes SLP never writes itself).
QByteArray reasonPhrase(int status);

} // namespace slp
