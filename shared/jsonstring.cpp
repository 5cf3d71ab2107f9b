// SPDX-License-Identifier: GPL-3.0-or-later
#include "jsonstring.h"

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

void appendJsonString(QByteArray &out, const QString &value)
{
    out.reserve(out.size() + value.size() + 2);
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
}

QByteArray jsonStringLiteral(const QString &value)
{
    QByteArray out;
    appendJsonString(out, value);
    return out;
}

} // namespace slp
