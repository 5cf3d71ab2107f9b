// SPDX-License-Identifier: GPL-3.0-or-later
#include "jsonstring.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QLocale>
#include <QVariant>

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
                if (u < 0x20 || u == 0x7f)
                    appendUEscape(out, u);
                else
                    out += char(u);
            }
        } else if (u < 0xA0) {
            appendUEscape(out, u); // C1 controls: what a terminal would act on, never raw
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

void appendJsonValue(QByteArray &out, const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        out += "null";
        return;
    case QJsonValue::Bool:
        out += value.toBool() ? "true" : "false";
        return;
    case QJsonValue::Double: {
        // An integer the parser kept as one is written as one, exactly (a "created" of
        // 1700000000 stays 1700000000); any other number in the shortest form that reads
        // back the same.
        const QVariant number = value.toVariant();
        if (number.typeId() == QMetaType::LongLong) {
            out += QByteArray::number(number.toLongLong());
            return;
        }
        const double d = value.toDouble();
        out += qIsFinite(d) ? QByteArray::number(d, 'g', QLocale::FloatingPointShortest)
                            : QByteArrayLiteral("null");
        return;
    }
    case QJsonValue::String:
        appendJsonString(out, value.toString());
        return;
    case QJsonValue::Array: {
        out += '[';
        bool first = true;
        for (const QJsonValue &item : value.toArray()) {
            if (!std::exchange(first, false))
                out += ',';
            appendJsonValue(out, item);
        }
        out += ']';
        return;
    }
    case QJsonValue::Object: {
        out += '{';
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (it != object.begin())
                out += ',';
            appendJsonString(out, it.key());
            out += ':';
            appendJsonValue(out, it.value());
        }
        out += '}';
        return;
    }
    }
}

} // namespace slp
