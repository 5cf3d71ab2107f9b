// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPair>

namespace slp {

// The HTTP/1.1 vocabulary both edges speak (the client side in http/, the upstream side in
// upstream/): pure, no sockets.

// Header fields in order as received or to be written, repeats kept apart.
using HeaderList = QList<QPair<QByteArray, QByteArray>>;

// First value of `name`, case-insensitive; empty when absent.
QByteArray headerValue(const HeaderList &headers, QByteArrayView name);

// 1xx, 204 and 304 never carry a body (RFC 9110 section 6.4.1), whatever their head says.
bool statusHasNoBody(int status);

// The standard reason phrase of `status` ("Status" for codes SLP never writes itself).
QByteArray reasonPhrase(int status);

} // namespace slp
