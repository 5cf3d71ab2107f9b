// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QLoggingCategory>
#include <QString>

// One logging category per subsystem (Cutelyst's pattern); all of them go to stderr as plain
// lines, flushed per line, because journald adds the timestamps.
Q_DECLARE_LOGGING_CATEGORY(lcServer)
Q_DECLARE_LOGGING_CATEGORY(lcProxy)
Q_DECLARE_LOGGING_CATEGORY(lcDiscovery)
Q_DECLARE_LOGGING_CATEGORY(lcConfig)

namespace slp {

// Installs the stderr handler: one event per line, no decoration for slp.* categories, a
// "qt: " prefix for Qt's own messages so they are never mistaken for ours.
void installLogHandler();

// Quotes an untrusted string for a log line: at most `maxBytes` bytes, control characters,
// quotes and backslashes escaped, so a client cannot forge or break log lines.
QString quoteForLog(const QByteArray &untrusted, int maxBytes = 128);

} // namespace slp
