// SPDX-License-Identifier: GPL-3.0-or-later
#include "bodyscanner.h"
#include "bytesplice.h"

#include <QList>

#include <algorithm>

// The body edits: only the bytes of the model value (and, for aggregate routes, the stream
// flag) change; every other byte stays as the client sent it.

namespace slp {

namespace {
void appendUtf8(QByteArray &out, char32_t cp)
{
    if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
    }
    out += char(0x80 | (cp & 0x3F));
}

void appendUEscape(QByteArray &out, char16_t u)
{
    static const char hex[] = "0123456789abcdef";
    const char buf[6] = {
        '\\', 'u', hex[(u >> 12) & 0xF], hex[(u >> 8) & 0xF], hex[(u >> 4) & 0xF], hex[u & 0xF]};
    out.append(buf, 6);
}
} // namespace

QByteArray jsonStringLiteral(const QString &value)
{
    QByteArray out;
    out.reserve(value.size() + 2);
    out += '"';
    const char16_t *s = reinterpret_cast<const char16_t *>(value.constData());
    const qsizetype n = value.size();
    for (qsizetype i = 0; i < n; ++i) {
        const char16_t u = s[i];
        if (u < 0x80) {
            switch (u) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (u < 0x20)
                    appendUEscape(out, u);
                else
                    out += char(u);
            }
        } else if (QChar::isHighSurrogate(u) && i + 1 < n && QChar::isLowSurrogate(s[i + 1])) {
            appendUtf8(out, QChar::surrogateToUcs4(u, s[i + 1]));
            ++i;
        } else if (QChar::isSurrogate(u)) {
            // A lone surrogate has no UTF-8 form; the escape keeps it exactly (a decoder
            // such as QJsonDocument gives back the same code unit).
            appendUEscape(out, u);
        } else {
            appendUtf8(out, u);
        }
    }
    out += '"';
    return out;
}

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
