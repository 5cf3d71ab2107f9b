// SPDX-License-Identifier: GPL-3.0-or-later
#include "message.h"

namespace slp::wire {

QByteArray headerValue(const HeaderList &headers, QByteArrayView name)
{
    for (const auto &h : headers)
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    return {};
}

QList<QByteArray> headerValues(const HeaderList &headers, QByteArrayView name)
{
    QList<QByteArray> out;
    for (const auto &h : headers)
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            out << h.second;
    return out;
}

bool hasHeader(const HeaderList &headers, QByteArrayView name)
{
    for (const auto &h : headers)
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return true;
    return false;
}

QByteArray Head::path() const
{
    const qsizetype q = target.indexOf('?');
    return q < 0 ? target : target.left(q);
}

QByteArray Head::query() const
{
    const qsizetype q = target.indexOf('?');
    return q < 0 ? QByteArray() : target.mid(q + 1);
}

namespace {

QByteArray withHeaders(QByteArray startLine, const HeaderList &headers)
{
    QByteArray out = std::move(startLine);
    for (const auto &h : headers)
        out += h.first + ": " + h.second + "\r\n";
    out += "\r\n";
    return out;
}

} // namespace

QByteArray requestHead(QByteArrayView method, QByteArrayView target, const HeaderList &headers,
                       QByteArrayView version)
{
    return withHeaders(method.toByteArray() + ' ' + target.toByteArray() + ' ' +
                           version.toByteArray() + "\r\n",
                       headers);
}

QByteArray responseHead(int status, QByteArrayView reason, const HeaderList &headers,
                        QByteArrayView version)
{
    return withHeaders(version.toByteArray() + ' ' + QByteArray::number(status) + ' ' +
                           reason.toByteArray() + "\r\n",
                       headers);
}

QByteArray chunk(QByteArrayView data)
{
    return QByteArray::number(data.size(), 16) + "\r\n" + data.toByteArray() + "\r\n";
}

} // namespace slp::wire
