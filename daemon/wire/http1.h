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

// The standard reason phrase of `status` ("Status" for codes SLP never writes itself).
QByteArray reasonPhrase(int status);

} // namespace slp
