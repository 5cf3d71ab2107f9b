// SPDX-License-Identifier: GPL-3.0-or-later
#include "bodyscanner.h"
#include "bytesplice.h"
#include "jsonstring.h"

#include <QList>

#include <algorithm>

// The body edits: only the bytes of the model value (and, for aggregate routes, the stream
// flag) change; every other byte stays as the client sent it.

namespace slp {

QByteArray replaceSpan(const QByteArray &body, qsizetype begin, qsizetype end, QByteArrayView with)
{
    if (begin < 0 || end > body.size() || begin > end)
        return body;
    QByteArray out;
    out.reserve(body.size() - (end - begin) + with.size());
    out.append(body.constData(), begin);
    out.append(with);
    out.append(body.constData() + end, body.size() - end);
    return out;
}

QByteArray spliceModel(const QByteArray &body, const BodyScan &scan, const QString &newModel)
{
    Q_ASSERT(scan.verdict == BodyScan::Verdict::Ok);
    if (scan.verdict != BodyScan::Verdict::Ok || scan.valueBegin >= scan.valueEnd)
        return body;
    return replaceSpan(body, scan.valueBegin, scan.valueEnd, jsonStringLiteral(newModel));
}

} // namespace slp

namespace slp {

QByteArray spliceStreamTrue(const QByteArray &body, const BodyScan &scan, const QString &newModel)
{
    if (scan.verdict != BodyScan::Verdict::Ok || scan.objectOpen < 0)
        return {};
    if (scan.stream != BodyScan::Stream::Absent && scan.streamBegin < 0)
        return {}; // a compound "stream" value: leave the request alone
    // Edits in ascending offset order: (position, bytes removed, bytes inserted).
    struct Edit
    {
        qsizetype at;
        qsizetype removed;
        QByteArray inserted;
    };
    QList<Edit> edits;
    if (scan.stream == BodyScan::Stream::Absent) {
        edits.append({scan.objectOpen + 1, 0, QByteArrayLiteral("\"stream\":true,")});
    } else {
        edits.append(
            {scan.streamBegin, scan.streamEnd - scan.streamBegin, QByteArrayLiteral("true")});
    }
    if (!newModel.isEmpty()) {
        edits.append(
            {scan.valueBegin, scan.valueEnd - scan.valueBegin, jsonStringLiteral(newModel)});
    }
    std::sort(edits.begin(), edits.end(), [](const Edit &a, const Edit &b) { return a.at < b.at; });
    QByteArray out;
    out.reserve(body.size() + 64);
    qsizetype from = 0;
    for (const Edit &e : edits) {
        out.append(body.constData() + from, e.at - from);
        out.append(e.inserted);
        from = e.at + e.removed;
    }
    out.append(body.constData() + from, body.size() - from);
    return out;
}

} // namespace slp
