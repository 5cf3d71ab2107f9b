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
        if (c.category() != QChar::Other_Control) {
            out += c;
        } else if (c.unicode() < 0x100) {
            out += QStringLiteral("\\x%1").arg(c.unicode(), 2, 16, QLatin1Char('0'));
        } else {
            out += QStringLiteral("\\u%1").arg(c.unicode(), 4, 16, QLatin1Char('0'));
        }
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
    if (!text.contains(QLatin1Char('<')) && !text.contains(QLatin1Char('&'))) {
        return text; // plain to Qt's guess, shown as it is
    }
    QString html = text.toHtmlEscaped();
    html.replace(QLatin1Char('\n'), QLatin1String("<br>"));
    return QStringLiteral("<qt>") + html + QStringLiteral("</qt>");
}

} // namespace slp::monitor
