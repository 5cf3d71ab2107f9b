// SPDX-License-Identifier: GPL-3.0-or-later
#include "bodyedits.h"
#include "jsonstring.h"

// The body edits: only the bytes of the model value (and, for aggregate routes, the stream
// flag) change; every other byte stays as the client sent it.

namespace slp {

QList<ByteEdit> jsonModelEdits(const BodyScan &scan, const QString &newModel)
{
    Q_ASSERT(scan.verdict == BodyScan::Verdict::Ok);
    if (scan.verdict != BodyScan::Verdict::Ok || scan.valueBegin >= scan.valueEnd)
        return {};
    return {{scan.valueBegin, scan.valueEnd - scan.valueBegin, jsonStringLiteral(newModel)}};
}

QList<ByteEdit> jsonStreamTrueEdits(const BodyScan &scan, const QString &newModel)
{
    if (scan.verdict != BodyScan::Verdict::Ok || scan.objectOpen < 0)
        return {};
    if (scan.stream != BodyScan::Stream::Absent && scan.streamBegin < 0)
        return {}; // a compound "stream" value: leave the request alone
    QList<ByteEdit> edits;
    if (scan.stream == BodyScan::Stream::Absent)
        edits.append({scan.objectOpen + 1, 0, QByteArrayLiteral("\"stream\":true,")});
    else
        edits.append(
            {scan.streamBegin, scan.streamEnd - scan.streamBegin, QByteArrayLiteral("true")});
    if (!newModel.isEmpty())
        edits.append(jsonModelEdits(scan, newModel));
    return edits;
}

QList<ByteEdit> multipartModelEdits(const MultipartScan &scan, QByteArrayView boundary,
                                    const QString &newModel)
{
    if (scan.verdict != MultipartScan::Verdict::Ok || multipartValueError(newModel, boundary))
        return {};
    return {{scan.valueBegin, scan.valueEnd - scan.valueBegin, newModel.toUtf8()}};
}

} // namespace slp
