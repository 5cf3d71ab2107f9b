// SPDX-License-Identifier: GPL-3.0-or-later
#include "wire/mediatype.h"

#include "httpfield.h"
#include "wire/http1.h"

namespace slp {

namespace {
bool isOws(char c)
{
    return c == ' ' || c == '\t';
}

// A token or a quoted-string at `pos`; false when neither is there or the quote is unclosed.
// `escaped` is set when a quoted-string held a backslash escape.
bool readValue(QByteArrayView v, qsizetype &pos, QByteArray &out, bool &escaped)
{
    const qsizetype n = v.size();
    if (pos < n && v[pos] == '"') {
        for (++pos; pos < n; ++pos) {
            const char c = v[pos];
            if (c == '"') {
                ++pos;
                return true;
            }
            if (c == '\\' && pos + 1 < n) {
                ++pos;
                escaped = true;
            }
            out += v[pos];
        }
        return false;
    }
    const qsizetype start = pos;
    while (pos < n && isTokenChar(v[pos]))
        ++pos;
    out = v.sliced(start, pos - start).toByteArray();
    return pos > start;
}
} // namespace

bool isEventStream(QByteArrayView contentType)
{
    return isMediaType(contentType, "text/event-stream");
}

bool isMediaType(QByteArrayView contentType, QByteArrayView type)
{
    const QByteArrayView value = trimOws(contentType);
    const qsizetype end = value.indexOf(';');
    return equalsNoCase(trimOws(end < 0 ? value : value.first(end)), type);
}

HeaderParameters parseHeaderParameters(QByteArrayView value)
{
    HeaderParameters out;
    const qsizetype n = value.size();
    qsizetype pos = 0;
    while (pos < n && isOws(value[pos]))
        ++pos;
    const qsizetype start = pos;
    while (pos < n && value[pos] != ';')
        ++pos;
    out.token = value.sliced(start, pos - start).trimmed().toByteArray().toLower();
    for (;;) {
        while (pos < n && isOws(value[pos]))
            ++pos;
        if (pos >= n)
            break;
        if (value[pos] != ';')
            return out;
        ++pos;
        while (pos < n && isOws(value[pos]))
            ++pos;
        if (pos >= n)
            break; // a trailing ";" is allowed (RFC 9110 5.6.6: empty list elements)
        const qsizetype nameStart = pos;
        while (pos < n && isTokenChar(value[pos]))
            ++pos;
        if (pos == nameStart || pos >= n || value[pos] != '=')
            return out;
        const QByteArray name = value.sliced(nameStart, pos - nameStart).toByteArray().toLower();
        ++pos;
        QByteArray parameter;
        bool escaped = false;
        if (!readValue(value, pos, parameter, escaped))
            return out;
        out.parameters.append({name, parameter});
        if (escaped)
            out.escaped.append(name);
    }
    out.valid = !out.token.isEmpty();
    return out;
}

bool HeaderParameters::has(QByteArrayView name) const
{
    return count(name) > 0;
}

QByteArray HeaderParameters::value(QByteArrayView name) const
{
    for (const auto &p : parameters)
        if (p.first == name)
            return p.second;
    return {};
}

int HeaderParameters::count(QByteArrayView name) const
{
    int found = 0;
    for (const auto &p : parameters)
        found += p.first == name ? 1 : 0;
    return found;
}

} // namespace slp
