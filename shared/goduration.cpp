// SPDX-License-Identifier: GPL-3.0-or-later
#include "goduration.h"

#include <cstdint>

namespace slp {

namespace {

constexpr std::uint64_t kMaxMagnitude = std::uint64_t(1) << 63; // |math.MinInt64|

QString quoted(QStringView s)
{
    return QLatin1Char('"') + s.toString() + QLatin1Char('"');
}

bool isDigit(QChar c)
{
    return c >= QLatin1Char('0') && c <= QLatin1Char('9');
}

std::optional<std::uint64_t> unitNanos(QStringView unit)
{
    if (unit == u"ns")
        return 1;
    // Go accepts both the micro sign (U+00B5) and the Greek mu (U+03BC).
    if (unit == u"us" || unit == u"\u00b5s" || unit == u"\u03bcs")
        return 1000;
    if (unit == u"ms")
        return 1000000;
    if (unit == u"s")
        return 1000000000;
    if (unit == u"m")
        return 60ull * 1000000000;
    if (unit == u"h")
        return 3600ull * 1000000000;
    return std::nullopt;
}

// Formats the fraction of v / 10^prec, omitting trailing zeros (Go's fmtFrac). Prepends to
// `out` as Go writes its buffer backwards; returns v / 10^prec.
std::uint64_t prependFraction(QString &out, std::uint64_t v, int prec)
{
    bool print = false;
    for (int i = 0; i < prec; ++i) {
        const auto digit = v % 10;
        print = print || digit != 0;
        if (print)
            out.prepend(QLatin1Char(char('0' + digit)));
        v /= 10;
    }
    if (print)
        out.prepend(QLatin1Char('.'));
    return v;
}

void prependInt(QString &out, std::uint64_t v)
{
    out.prepend(QString::number(v));
}

// One term's parse failure, as Go's time.ParseDuration words it.
enum class TermError
{
    None,
    Invalid,
    OutOfRange,
    MissingUnit,
    UnknownUnit,
};

// The integer digits at the front of `s`, taken; false when they overflow.
bool takeInteger(QStringView &s, std::uint64_t &v, bool &any)
{
    qsizetype i = 0;
    for (; i < s.size() && isDigit(s[i]); ++i) {
        if (v > kMaxMagnitude / 10)
            return false;
        v = v * 10 + std::uint64_t(s[i].unicode() - '0');
        if (v > kMaxMagnitude)
            return false;
    }
    any = i > 0;
    s = s.mid(i);
    return true;
}

// The fraction after a '.', taken: digits beyond what fits are ignored, as Go does.
void takeFraction(QStringView &s, std::uint64_t &f, double &scale, bool &any)
{
    if (s.isEmpty() || s[0] != QLatin1Char('.'))
        return;
    s = s.mid(1);
    bool overflow = false;
    qsizetype j = 0;
    for (; j < s.size() && isDigit(s[j]); ++j) {
        if (overflow || f > (kMaxMagnitude - 1) / 10) {
            overflow = true;
            continue;
        }
        const std::uint64_t y = f * 10 + std::uint64_t(s[j].unicode() - '0');
        if (y > kMaxMagnitude) {
            overflow = true;
            continue;
        }
        f = y;
        scale *= 10;
    }
    any = j > 0;
    s = s.mid(j);
}

// One "1.5h"-like term at the front of `s`, taken; its nanoseconds in `nanos`, and in `unit`
// the unit's text (for the message of an unknown one).
TermError takeTerm(QStringView &s, std::uint64_t &nanos, QStringView &unit)
{
    if (!(s[0] == QLatin1Char('.') || isDigit(s[0])))
        return TermError::Invalid;
    std::uint64_t v = 0;
    std::uint64_t f = 0;
    double scale = 1;
    bool pre = false;
    bool post = false;
    if (!takeInteger(s, v, pre))
        return TermError::OutOfRange;
    takeFraction(s, f, scale, post);
    if (!pre && !post)
        return TermError::Invalid;
    qsizetype u = 0;
    while (u < s.size() && !(s[u] == QLatin1Char('.') || isDigit(s[u])))
        ++u;
    if (u == 0)
        return TermError::MissingUnit;
    unit = s.first(u);
    s = s.mid(u);
    const auto perUnit = unitNanos(unit);
    if (!perUnit)
        return TermError::UnknownUnit;
    if (v > kMaxMagnitude / *perUnit)
        return TermError::OutOfRange;
    v *= *perUnit;
    // float64 as in Go, to stay nanosecond-accurate for fractions of hours.
    if (f > 0)
        v += std::uint64_t(double(f) * (double(*perUnit) / scale));
    nanos = v;
    return v > kMaxMagnitude ? TermError::OutOfRange : TermError::None;
}

QString termMessage(TermError error, QStringView orig, QStringView unit)
{
    switch (error) {
    case TermError::OutOfRange:
        return QStringLiteral("invalid duration %1 (out of range)").arg(quoted(orig));
    case TermError::MissingUnit:
        return QStringLiteral("missing unit in duration %1").arg(quoted(orig));
    case TermError::UnknownUnit:
        return QStringLiteral("unknown unit %1 in duration %2").arg(quoted(unit), quoted(orig));
    default:
        return QStringLiteral("invalid duration %1").arg(quoted(orig));
    }
}

} // namespace

std::optional<Nanoseconds> parseGoDuration(QStringView text, QString *error)
{
    // Mirrors Go's time.ParseDuration: [-+]?([0-9]*(\.[0-9]*)?[a-z]+)+
    const auto fail = [&](TermError why, QStringView unit = {}) -> std::optional<Nanoseconds> {
        if (error)
            *error = termMessage(why, text, unit);
        return std::nullopt;
    };
    QStringView s = text;
    bool neg = false;
    if (!s.isEmpty() && (s[0] == QLatin1Char('-') || s[0] == QLatin1Char('+'))) {
        neg = s[0] == QLatin1Char('-');
        s = s.mid(1);
    }
    if (s == u"0")
        return Nanoseconds(0);
    if (s.isEmpty())
        return fail(TermError::Invalid);
    std::uint64_t d = 0;
    while (!s.isEmpty()) {
        std::uint64_t nanos = 0;
        QStringView unit;
        if (const TermError e = takeTerm(s, nanos, unit); e != TermError::None)
            return fail(e, unit);
        d += nanos;
        if (d > kMaxMagnitude)
            return fail(TermError::OutOfRange);
    }
    if (neg)
        return Nanoseconds(std::int64_t(0 - d)); // two's complement: 1<<63 becomes MinInt64
    if (d > kMaxMagnitude - 1)
        return fail(TermError::OutOfRange);
    return Nanoseconds(std::int64_t(d));
}

QString formatGoDuration(Nanoseconds duration)
{
    // Go's Duration.String(), built right to left like Go's buffer.
    const std::int64_t d = duration.count();
    const bool neg = d < 0;
    std::uint64_t u = std::uint64_t(d);
    if (neg)
        u = 0 - u;

    QString out;
    if (u < 1000000000ull) {
        int prec = 0;
        out = QStringLiteral("s");
        if (u == 0)
            return QStringLiteral("0s");
        if (u < 1000ull) {
            prec = 0;
            out.prepend(QLatin1Char('n'));
        } else if (u < 1000000ull) {
            prec = 3;
            out.prepend(QChar(0x00b5)); // Go prints the micro sign
        } else {
            prec = 6;
            out.prepend(QLatin1Char('m'));
        }
        u = prependFraction(out, u, prec);
        prependInt(out, u);
    } else {
        out = QStringLiteral("s");
        u = prependFraction(out, u, 9);
        prependInt(out, u % 60);
        u /= 60;
        if (u > 0) {
            out.prepend(QLatin1Char('m'));
            prependInt(out, u % 60);
            u /= 60;
            if (u > 0) {
                out.prepend(QLatin1Char('h'));
                prependInt(out, u);
            }
        }
    }
    if (neg)
        out.prepend(QLatin1Char('-'));
    return out;
}

} // namespace slp
