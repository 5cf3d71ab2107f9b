// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace slp::monitor {

// A model name from a backend is shown as the literal text it is, on every face: its control
// characters made visible, never acted on (a terminal, a tooltip, a notification daemon), and
// never taken for markup.

// The longest name shown; SLP itself refuses longer ones from discovery.
constexpr int kMaxShownNameChars = 256;

// `untrusted` with every control character (C0, DEL, C1) written as \xNN or \uNNNN, cut to
// kMaxShownNameChars with an ellipsis.
QString displayText(const QString &untrusted);

// For a freedesktop notification body, which servers read as markup: & < > escaped.
QString markupEscaped(const QString &text);

// For Qt's tooltip and tray balloon, which guess between plain and rich text (Qt::AutoText)
// from the first line: text Qt would take for rich becomes escaped rich text that shows every
// character literally; text Qt shows as plain is kept.
QString autoTextLiteral(const QString &text);

} // namespace slp::monitor
