// SPDX-License-Identifier: GPL-3.0-or-later
#include "table.h"

#include <cmath>
#include <cstdio>

namespace slp::bench {

QString fmt(double v, int prec)
{
    if (std::isnan(v))
        return QStringLiteral("-");
    return QString::number(v, 'f', prec);
}

QString fmtAdded(double v, int prec)
{
    if (std::isnan(v))
        return QStringLiteral("-");
    return (v >= 0 ? QStringLiteral("+") : QString()) + QString::number(v, 'f', prec);
}

// Rotates the order of the ways each round so none always runs first (or right after another).
QList<int> order(int nWays, int round)
{
    QList<int> o;
    for (int i = 0; i < nWays; ++i)
        o << (i + round) % nWays;
    return o;
}

void progress(const QString &s)
{
    std::fprintf(stderr, "  %s\n", qPrintable(s));
    std::fflush(stderr);
}

QByteArray largeBody(qint64 size)
{
    // A chat request carrying one big base64-like string (an image or a long history).
    const QByteArray pre = R"({"model":"sink","messages":[{"role":"user","content":")";
    const QByteArray post = R"("}],"max_tokens":16})";
    QByteArray b;
    b.reserve(size);
    b += pre;
    const QByteArray alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const qint64 fill = size - pre.size() - post.size();
    for (qint64 i = 0; i < fill; ++i)
        b += alphabet[i % alphabet.size()];
    b += post;
    return b;
}

} // namespace slp::bench
