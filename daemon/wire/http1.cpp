// SPDX-License-Identifier: GPL-3.0-or-later
#include "wire/http1.h"

#include <algorithm>

namespace slp {

QByteArray headerValue(const HeaderList &headers, QByteArrayView name)
{
    for (const auto &[n, v] : headers)
        if (equalsNoCase(n, name))
            return v;
    return {};
}

bool equalsNoCase(QByteArrayView a, QByteArrayView b)
{
    return a.compare(b, Qt::CaseInsensitive) == 0;
}

void replaceHeaders(HeaderList &headers, const HeaderList &replacements)
{
    if (replacements.isEmpty())
        return;
    headers.removeIf([&replacements](const QPair<QByteArray, QByteArray> &field) {
        return std::any_of(replacements.cbegin(), replacements.cend(),
                           [&field](const auto &r) { return equalsNoCase(r.first, field.first); });
    });
    headers.append(replacements);
}

QByteArrayView trimOws(QByteArrayView value)
{
    while (!value.isEmpty() && (value.front() == ' ' || value.front() == '\t'))
        value = value.sliced(1);
    while (!value.isEmpty() && (value.back() == ' ' || value.back() == '\t'))
        value.chop(1);
    return value;
}

void forEachToken(QByteArrayView value, const std::function<bool(QByteArrayView)> &each)
{
    while (!value.isEmpty()) {
        qsizetype comma = value.indexOf(',');
        if (comma < 0)
            comma = value.size();
        const QByteArrayView token = trimOws(value.first(comma));
        if (!token.isEmpty() && !each(token))
            return;
        value = value.sliced(std::min(comma + 1, value.size()));
    }
}

bool hasToken(QByteArrayView value, QByteArrayView token)
{
    bool found = false;
    forEachToken(value, [&](QByteArrayView t) {
        found = equalsNoCase(t, token);
        return !found;
    });
    return found;
}

bool anyHeaderHasToken(const HeaderList &headers, QByteArrayView name, QByteArrayView token)
{
    for (const auto &[n, v] : headers)
        if (equalsNoCase(n, name) && hasToken(v, token))
            return true;
    return false;
}

bool asksWebSocketUpgrade(const HeaderList &headers)
{
    return anyHeaderHasToken(headers, "upgrade", "websocket") &&
           anyHeaderHasToken(headers, "connection", "upgrade");
}

bool isWebSocketUpgradeRequest(QByteArrayView method, const HeaderList &headers, qint64 bodyBytes)
{
    return method == "GET" && bodyBytes <= 0 && asksWebSocketUpgrade(headers);
}

bool statusHasNoBody(int status)
{
    return (status >= 100 && status < 200) || status == 204 || status == 304;
}

QByteArray reasonPhrase(int status)
{
    switch (status) {
    case 100:
        return "Continue";
    case 200:
        return "OK";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 411:
        return "Length Required";
    case 413:
        return "Content Too Large";
    case 414:
        return "URI Too Long";
    case 417:
        return "Expectation Failed";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Status";
    }
}

} // namespace slp
