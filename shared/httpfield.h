// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArrayView>

// The HTTP field-name rules every part of SLP applies the same way: the client's head, the
// headers it forwards, and the headers a route sets (config `headers:`).
namespace slp {

// RFC 9110 5.6.2: a tchar, the characters of a method, a field name or a parameter name.
bool isTokenChar(char c);

// A non-empty run of tchars.
bool isToken(QByteArrayView text);

// RFC 9110 7.6.1's connection-specific fields, plus the legacy names Go's ReverseProxy also
// drops (Keep-Alive, Proxy-Connection): they describe one hop and are never forwarded.
bool isHopByHopHeader(QByteArrayView name);

} // namespace slp
