// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>
#include <QString>

// Wording shared by every section's errors: "did you mean" guesses over the known names, and
// how names and lists are quoted. Internal to the config compiler.
namespace slp::configc {

// The closest candidate for a typo ("timout" -> "timeout"), or empty when nothing is close.
QString closest(const QString &word, const QList<QString> &candidates);

// "a, b, c"
QString quoteList(const QList<QString> &items);

// Go's %q, near enough for names in errors and log lines.
QString goQuote(const QString &s);

bool hasSpaceOrControl(const QString &s);

// The hint for a key not in `known`: "did you mean "X"? known keys: ..." or just the list.
QString unknownKeyHint(const QString &name, const QList<QString> &known);

} // namespace slp::configc
