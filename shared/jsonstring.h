// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QJsonValue>
#include <QString>

namespace slp {

// The one JSON writer of both programs (request bodies, error answers, the catalog). A
// string's literal includes its quotes, with '"', '\\' and every control character escaped
// (C0 as \n, \t, ... or \u00XX; DEL and C1 as \u00XX, so no terminal acts on them) and
// everything else as UTF-8. A lone surrogate (never in a real id)
// becomes \uXXXX, so the output stays valid UTF-8 and decodes to the same code unit.
QByteArray jsonStringLiteral(const QString &value);
void appendJsonString(QByteArray &out, const QString &value);
// Any parsed value (what a backend sent, kept as QJsonDocument parsed it), written with the
// string rules above: a backend's text is never spliced into SLP's output as text.
void appendJsonValue(QByteArray &out, const QJsonValue &value);

} // namespace slp
