// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// The daemon's body edits (body/bodyedits.h) joined into one array, for the tests and fuzz
// targets that compare whole bodies. The daemon itself never joins them: it forwards a
// ByteChain of the client's bytes around the new value.

#include "body/bodyedits.h"

namespace slp::test {

// `body` with the model value replaced by jsonStringLiteral(newModel); requires an Ok scan.
inline QByteArray spliceModel(const QByteArray &body, const BodyScan &scan, const QString &newModel)
{
    return ByteChain::edited(body, jsonModelEdits(scan, newModel)).joined();
}

// `body` with the top-level "stream" set to true (and the model renamed when `newModel` is
// not empty); empty when the edits cannot be made (a compound "stream" value).
inline QByteArray spliceStreamTrue(const QByteArray &body, const BodyScan &scan,
                                   const QString &newModel)
{
    const QList<ByteEdit> edits = jsonStreamTrueEdits(scan, newModel);
    return edits.isEmpty() ? QByteArray() : ByteChain::edited(body, edits).joined();
}

// `body` with the multipart model part's value replaced by `newModel`; empty when the scan is
// not Ok or the value would hold the delimiter.
inline QByteArray spliceMultipartModel(const QByteArray &body, const MultipartScan &scan,
                                       QByteArrayView boundary, const QString &newModel)
{
    const QList<ByteEdit> edits = multipartModelEdits(scan, boundary, newModel);
    return edits.isEmpty() ? QByteArray() : ByteChain::edited(body, edits).joined();
}

} // namespace slp::test
