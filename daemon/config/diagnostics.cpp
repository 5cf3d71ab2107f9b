// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/diagnostics.h"

#include "config/config.h"

#include <algorithm>
#include <limits>

namespace slp {

namespace configc {

namespace {

int editDistance(const QString &a, const QString &b)
{
    QList<int> prev(b.size() + 1);
    QList<int> cur(b.size() + 1);
    for (qsizetype j = 0; j <= b.size(); ++j)
        prev[j] = int(j);
    for (qsizetype i = 1; i <= a.size(); ++i) {
        cur[0] = int(i);
        for (qsizetype j = 1; j <= b.size(); ++j) {
            const int subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

} // namespace

QString closest(const QString &word, const QList<QString> &candidates)
{
    QString best;
    int bestDistance = std::numeric_limits<int>::max();
    for (const QString &c : candidates) {
        const int d = c.compare(word, Qt::CaseInsensitive) == 0
                          ? 0
                          : editDistance(word.toLower(), c.toLower());
        if (d < bestDistance) {
            bestDistance = d;
            best = c;
        }
    }
    const int limit = std::max<qsizetype>(1, std::min<qsizetype>(3, word.size() / 3));
    return bestDistance <= limit ? best : QString();
}

QString quoteList(const QList<QString> &items)
{
    return items.join(QStringLiteral(", "));
}

QString goQuote(const QString &s)
{
    QString out = QStringLiteral("\"");
    for (const QChar c : s) {
        if (c == QLatin1Char('"') || c == QLatin1Char('\\'))
            out += QLatin1Char('\\');
        out += c;
    }
    return out + QLatin1Char('"');
}

bool hasSpaceOrControl(const QString &s)
{
    return std::any_of(
        s.begin(), s.end(),
        [](QChar c) { return c.isSpace() || c.category() == QChar::Other_Control; });
}

QString unknownKeyHint(const QString &name, const QList<QString> &known)
{
    const QString guess = closest(name, known);
    QString hint = QStringLiteral("known keys: %1").arg(quoteList(known));
    if (!guess.isEmpty())
        hint = QStringLiteral("did you mean \"%1\"? %2").arg(guess, hint);
    return hint;
}

} // namespace configc

QString ConfigError::toString() const
{
    QString where = file;
    if (line > 0) {
        where += (where.isEmpty() ? QStringLiteral("line ") : QStringLiteral(":")) +
                 QString::number(line);
        if (column > 0)
            where += QLatin1Char(':') + QString::number(column);
    }
    QString out = where.isEmpty() ? what : where + QStringLiteral(": ") + what;
    if (!hint.isEmpty())
        out += QStringLiteral(" (hint: %1)").arg(hint);
    return out;
}

} // namespace slp
