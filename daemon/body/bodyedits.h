// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "body/bodyscanner.h"
#include "body/multipartscanner.h"
#include "wire/bytechain.h"

#include <QList>
#include <QString>

namespace slp {

// The body edits, as edits: the forward applies them with ByteChain::edited (the client's
// bytes shared, no renamed copy).

// The model value replaced by jsonStringLiteral(newModel). Requires scan.verdict == Ok.
QList<ByteEdit> jsonModelEdits(const BodyScan &scan, const QString &newModel);

// "stream" set to true (the scalar replaced, or `"stream":true,` after the top-level '{')
// and, when `newModel` is not empty, the model renamed. Empty when the body cannot be edited
// so (not Ok, or a compound "stream" value).
QList<ByteEdit> jsonStreamTrueEdits(const BodyScan &scan, const QString &newModel);

// The model part's value replaced by `newModel` in UTF-8. Empty when the scan is not Ok or
// the new value would hold the delimiter (multipartValueError).
QList<ByteEdit> multipartModelEdits(const MultipartScan &scan, QByteArrayView boundary,
                                    const QString &newModel);

} // namespace slp
