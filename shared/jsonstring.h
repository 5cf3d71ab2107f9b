// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QString>

namespace slp {

// The one JSON string writer of both programs (request bodies, error answers, the catalog):
// the literal for `value` including quotes, with '"', '\\' and control characters escaped (as
// \n, \t, ..., or \u00XX) and everything else as UTF-8. A lone surrogate (never in a real id)
// becomes \uXXXX, so the output stays valid UTF-8 and decodes to the same code unit.
QByteArray jsonStringLiteral(const QString &value);
void appendJsonString(QByteArray &out, const QString &value);

} // namespace slp
