// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>

namespace slp::wire {

// Header lines as they were on the wire: in order, repeats kept, names as spelled.
using HeaderList = QList<QPair<QByteArray, QByteArray>>;

QByteArray headerValue(const HeaderList &headers, QByteArrayView name); // first; case-insensitive
QList<QByteArray> headerValues(const HeaderList &headers, QByteArrayView name);
bool hasHeader(const HeaderList &headers, QByteArrayView name);

// One parsed message head, request or response.
struct Head
{
    QByteArray method;  // requests
    QByteArray target;  // requests: the request target as sent
    int status = 0;     // responses
    QByteArray reason;  // responses
    QByteArray version; // "HTTP/1.1"
    HeaderList headers; // values without surrounding whitespace
    bool chunked = false;
    qint64 contentLength = -1; // -1: no Content-Length (or chunked)
    bool keepAlive = false;    // the connection may carry another message after this one
    bool upgrade = false;      // a protocol switch (the bytes after it are not HTTP)

    QByteArray header(QByteArrayView name) const { return headerValue(headers, name); }
    QList<QByteArray> values(QByteArrayView name) const { return headerValues(headers, name); }
    bool has(QByteArrayView name) const { return hasHeader(headers, name); }
    // 1xx other than 101: the final head of the same response follows.
    bool interim() const { return status >= 100 && status < 200 && status != 101; }
    QByteArray path() const;  // target without the query
    QByteArray query() const; // after '?', empty if none
};

// Serializers: heads end with the blank line; header lines are written as given.
QByteArray requestHead(QByteArrayView method, QByteArrayView target, const HeaderList &headers,
                       QByteArrayView version = "HTTP/1.1");
QByteArray responseHead(int status, QByteArrayView reason, const HeaderList &headers,
                        QByteArrayView version = "HTTP/1.1");
QByteArray chunk(QByteArrayView data); // one chunk of a chunked body; never the last one
inline constexpr QByteArrayView LastChunk = "0\r\n\r\n";

} // namespace slp::wire
