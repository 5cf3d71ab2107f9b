// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArrayView>
#include <QString>

namespace slp {

// What a request's model id must be, wherever SLP reads it (a JSON "model", a multipart
// "model" part, a WebSocket upgrade's ?model=): not empty, at most maxModelBytes bytes, valid
// UTF-8. Nothing else: an id that no route serves is the lookup's 404.
inline constexpr qsizetype maxModelBytes = 256;

enum class ModelIdFault
{
    None,
    Empty,
    TooLong,
    NotUtf8,
};

// The first rule `utf8` breaks; `badByte` gets the offset of the first byte that is not
// UTF-8 (NotUtf8 only).
ModelIdFault modelIdFault(QByteArrayView utf8, qsizetype *badByte = nullptr);

// The 400's message when `utf8` breaks a rule, naming the id as `what` does ("the multipart
// \"model\" part", "the model query parameter"); empty when it breaks none. `fault` gets the
// rule.
QString modelIdError(QByteArrayView utf8, const QString &what, ModelIdFault *fault = nullptr);

} // namespace slp
