// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>

namespace slp {

// "slpq" + 24 lowercase hex (12 random bytes): the shape gllm uses with its "gdqz" prefix, so
// one expression, (gdqz|slpq)[0-9a-f]{24}, finds either in any log.
QByteArray newRequestId();

} // namespace slp
