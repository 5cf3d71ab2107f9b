// SPDX-License-Identifier: GPL-3.0-or-later
#include "strictargs.h"

namespace slp {

namespace {
const ArgSpec *findSpec(const QList<ArgSpec> &spec, const QString &name)
{
    for (const ArgSpec &s : spec)
        if (s.name == name)
            return &s;
    return nullptr;
}
} // namespace

StrictArgs parseStrictArgs(const QStringList &arguments, const QList<ArgSpec> &spec,
                           const QString &program)
{
    StrictArgs out;
    const auto fail = [&out](const QString &error) {
        out.error = error;
        return out;
    };
    for (qsizetype i = 0; i < arguments.size(); ++i) {
        const QString &word = arguments[i];
        if (word == QLatin1String("-h")) {
            out.switches.append(QStringLiteral("help"));
            continue;
        }
        if (!word.startsWith(QLatin1String("--"))) {
            if (word.startsWith(QLatin1Char('-')))
                return fail(QStringLiteral("unknown flag %1").arg(word));
            const QString hint = findSpec(spec, word)
                                     ? QStringLiteral(" (did you mean --%1?)").arg(word)
                                     : QString();
            return fail(QStringLiteral("unexpected argument \"%1\": %2 takes flags only%3")
                            .arg(word, program, hint));
        }
        const qsizetype equals = word.indexOf(QLatin1Char('='));
        const QString name = word.mid(2, equals < 0 ? -1 : equals - 2);
        const ArgSpec *s = findSpec(spec, name);
        if (!s)
            return fail(QStringLiteral("unknown flag --%1").arg(name));
        if (!s->takesValue) {
            if (equals >= 0)
                return fail(QStringLiteral("--%1 takes no value").arg(name));
            out.switches.append(name);
            continue;
        }
        QString value;
        if (equals >= 0)
            value = word.mid(equals + 1);
        else if (i + 1 < arguments.size() && !arguments[i + 1].startsWith(QLatin1String("--")))
            value = arguments[++i];
        if (value.isEmpty())
            return fail(QStringLiteral("--%1 needs %2").arg(name, s->valueHint));
        out.values.insert(name, value);
    }
    return out;
}

} // namespace slp
