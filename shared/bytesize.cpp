// SPDX-License-Identifier: GPL-3.0-or-later
#include "bytesize.h"

#include <limits>

namespace slp {

namespace {

struct Unit
{
    const char16_t *name;
    qint64 factor;
};

// Binary units first: formatByteSize prefers them, and the parser takes any of these.
constexpr Unit kUnits[] = {
    {u"TiB", 1ll << 40}, {u"GiB", 1ll << 30},      {u"MiB", 1ll << 20},
    {u"KiB", 1ll << 10}, {u"TB", 1000000000000ll}, {u"GB", 1000000000ll},
    {u"MB", 1000000ll},  {u"KB", 1000ll},          {u"B", 1},
};

} // namespace

std::optional<qint64> parseByteSize(QStringView text, QString *error)
{
    const auto fail = [&](const QString &why) -> std::optional<qint64> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    const QStringView s = text.trimmed();
    if (s.isEmpty())
        return fail(QStringLiteral("empty size"));

    qsizetype i = 0;
    qint64 value = 0;
    while (i < s.size() && s[i] >= QLatin1Char('0') && s[i] <= QLatin1Char('9')) {
        const int digit = s[i].unicode() - '0';
        if (value > (std::numeric_limits<qint64>::max() - digit) / 10)
            return fail(QStringLiteral("size \"%1\" is too large").arg(s.toString()));
        value = value * 10 + digit;
        ++i;
    }
    if (i == 0) {
        if (s[0] == QLatin1Char('-'))
            return fail(QStringLiteral("size \"%1\" is negative").arg(s.toString()));
        return fail(QStringLiteral("size \"%1\" does not start with a number").arg(s.toString()));
    }
    if (i < s.size() && s[i] == QLatin1Char('.'))
        return fail(QStringLiteral("size \"%1\" is not a whole number").arg(s.toString()));

    const QStringView unit = s.mid(i).trimmed();
    if (unit.isEmpty())
        return value;
    for (const Unit &u : kUnits) {
        if (unit == QStringView(u.name)) {
            if (value > std::numeric_limits<qint64>::max() / u.factor)
                return fail(QStringLiteral("size \"%1\" is too large").arg(s.toString()));
            return value * u.factor;
        }
    }
    return fail(QStringLiteral("unknown unit \"%1\" in size \"%2\" (use B, KiB, MiB, GiB, TiB, "
                               "KB, MB, GB or TB)")
                    .arg(unit.toString(), s.toString()));
}

QString formatByteSize(qint64 bytes)
{
    if (bytes == 0)
        return QStringLiteral("0");
    for (const Unit &u : kUnits) {
        // Only the binary units: "1000" stays bytes rather than becoming "1KB".
        if (u.factor < 1024 || !QStringView(u.name).contains(u'i'))
            continue;
        if (bytes % u.factor == 0)
            return QString::number(bytes / u.factor) + QString::fromUtf16(u.name);
    }
    return QString::number(bytes);
}

} // namespace slp
