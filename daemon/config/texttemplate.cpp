// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/texttemplate.h"

namespace slp {

namespace {

bool isIdentChar(QChar c)
{
    return c.isLetterOrNumber() || c == QLatin1Char('_');
}

QString fieldList(const QList<QString> &fields)
{
    QStringList names;
    for (const QString &f : fields)
        names << QLatin1Char('.') + f;
    return names.join(QStringLiteral(", "));
}

} // namespace

std::optional<TextTemplate> TextTemplate::parse(const QString &text,
                                                const QList<QString> &allowedFields, QString *error,
                                                int *errorColumn)
{
    const auto fail = [&](int column, const QString &why) -> std::optional<TextTemplate> {
        if (error)
            *error = why;
        if (errorColumn)
            *errorColumn = column;
        return std::nullopt;
    };

    TextTemplate tpl;
    tpl.m_source = text;
    QString literal;
    qsizetype pos = 0;
    // As in Go: "{{" always opens an action; "}}" outside an action is plain text.
    while (pos < text.size()) {
        const qsizetype open = text.indexOf(QLatin1String("{{"), pos);
        if (open < 0) {
            literal += QStringView(text).mid(pos);
            break;
        }
        literal += QStringView(text).mid(pos, open - pos);
        const qsizetype close = text.indexOf(QLatin1String("}}"), open + 2);
        if (close < 0)
            return fail(int(open), QStringLiteral("unclosed action: \"{{\" without \"}}\""));

        const QString inner = text.mid(open + 2, close - open - 2);
        const QString action = inner.trimmed();
        const QString shown = text.mid(open, close + 2 - open);
        if (action.isEmpty())
            return fail(int(open), QStringLiteral("empty action %1").arg(shown));
        // Go's trim markers need a space after/before the dash; they buy nothing in a URL.
        if (inner.startsWith(QLatin1Char('-')) || inner.endsWith(QLatin1Char('-')))
            return fail(int(open),
                        QStringLiteral("trim markers are not supported in %1").arg(shown));
        bool simpleField = action.size() > 1 && action[0] == QLatin1Char('.');
        for (qsizetype i = 1; simpleField && i < action.size(); ++i)
            simpleField = isIdentChar(action[i]);
        if (!simpleField)
            return fail(int(open), QStringLiteral("unsupported action %1: only a field such as "
                                                  "{{.%2}} is allowed")
                                       .arg(shown, allowedFields.value(0, QStringLiteral("Name"))));
        const QString field = action.mid(1);
        if (!allowedFields.contains(field))
            return fail(int(open), QStringLiteral("unknown field .%1 in %2 (available: %3)")
                                       .arg(field, shown, fieldList(allowedFields)));

        if (!literal.isEmpty()) {
            tpl.m_pieces.append(Piece{false, literal});
            literal.clear();
        }
        tpl.m_pieces.append(Piece{true, field});
        pos = close + 2;
    }
    if (!literal.isEmpty())
        tpl.m_pieces.append(Piece{false, literal});
    return tpl;
}

QString TextTemplate::render(const QHash<QString, QString> &fields) const
{
    QString out;
    for (const Piece &p : m_pieces)
        out += p.isField ? fields.value(p.text) : p.text;
    return out;
}

bool TextTemplate::uses(const QString &field) const
{
    for (const Piece &p : m_pieces)
        if (p.isField && p.text == field)
            return true;
    return false;
}

} // namespace slp
