// SPDX-License-Identifier: GPL-3.0-or-later
#include "plaintext.h"

namespace slp::monitor {

QString displayText(const QString &untrusted)
{
    QString out;
    out.reserve(untrusted.size());
    for (const QChar c : untrusted) {
        if (out.size() >= kMaxShownNameChars) {
            out += QChar(0x2026);
            break;
        }
        if (c.category() != QChar::Other_Control)
            out += c;
        else if (c.unicode() < 0x100)
            out += QStringLiteral("\\x%1").arg(c.unicode(), 2, 16, QLatin1Char('0'));
        else
            out += QStringLiteral("\\u%1").arg(c.unicode(), 4, 16, QLatin1Char('0'));
    }
    return out;
}

QString markupEscaped(const QString &text)
{
    QString out = text;
    out.replace(QLatin1Char('&'), QLatin1String("&amp;"));
    out.replace(QLatin1Char('<'), QLatin1String("&lt;"));
    out.replace(QLatin1Char('>'), QLatin1String("&gt;"));
    return out;
}

QString autoTextLiteral(const QString &text)
{
    // Qt::mightBeRichText looks at the first line only: a '<' or "&lt;" there makes the text
    // rich. Anything else is shown as it is, so it stays as it is (also where the text is not
    // guessed at all, as in a StatusNotifierItem's tooltip title).
    const QStringView firstLine = QStringView(text).left(text.indexOf(QLatin1Char('\n')));
    if (!firstLine.contains(QLatin1Char('<')) && !firstLine.contains(QLatin1String("&lt;")))
        return text;
    QString html = text.toHtmlEscaped();
    html.replace(QLatin1Char('\n'), QLatin1String("<br>"));
    return QStringLiteral("<qt>") + html + QStringLiteral("</qt>");
}

} // namespace slp::monitor
