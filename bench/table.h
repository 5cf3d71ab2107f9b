// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace slp::bench {

// One line of the printed table: a label, one cell per way, the target it is held to. A line
// without cells is a section title.
struct Line
{
    QString label;
    QStringList cells;
    QString target;
};

// One target of the issue, judged for one slp instance.
struct Check
{
    QString way;
    QString name;
    QString target;
    QString value;
    bool met = false;
};

QString fmt(double v, int prec = 0);
QString fmtAdded(double v, int prec = 0); // with its sign: +1.5, -0.2
// The ways' order in round `round`: rotated each round so none always runs first.
QList<int> order(int nWays, int round);
void progress(const QString &s); // one line on stderr
// A chat request of exactly `size` bytes carrying one big base64-like string (an image).
QByteArray largeBody(qint64 size);

} // namespace slp::bench
