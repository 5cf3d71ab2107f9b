// SPDX-License-Identifier: GPL-3.0-or-later
#include "observe/logging.h"

#include <cstdio>

Q_LOGGING_CATEGORY(lcServer, "slp.server", QtInfoMsg)
Q_LOGGING_CATEGORY(lcProxy, "slp.proxy", QtInfoMsg)
Q_LOGGING_CATEGORY(lcDiscovery, "slp.discovery", QtInfoMsg)
Q_LOGGING_CATEGORY(lcConfig, "slp.config", QtInfoMsg)

namespace slp {

namespace {
void writeLine(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    QByteArray line;
    const bool ours = context.category && qstrncmp(context.category, "slp.", 4) == 0;
    if (!ours)
        line = "qt: ";
    // A message must stay one line: a stray newline would split one event into two.
    QString text = message;
    text.replace(QLatin1Char('\n'), QLatin1String("\\n"));
    line += text.toUtf8();
    line += '\n';
    std::fwrite(line.constData(), 1, size_t(line.size()), stderr);
    std::fflush(stderr);
    if (type == QtFatalMsg)
        std::abort();
}
} // namespace

void installLogHandler()
{
    qInstallMessageHandler(writeLine);
}

QString quoteForLog(const QByteArray &untrusted, int maxBytes)
{
    QByteArray cut = untrusted.left(maxBytes);
    QString out;
    out.reserve(cut.size() + 2);
    out += QLatin1Char('"');
    for (const char c : cut) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += QLatin1Char('\\');
            out += QLatin1Char(c);
        } else if (u < 0x20 || u >= 0x7f) {
            out += QStringLiteral("\\x%1").arg(u, 2, 16, QLatin1Char('0'));
        } else {
            out += QLatin1Char(c);
        }
    }
    out += QLatin1Char('"');
    return out;
}

} // namespace slp
