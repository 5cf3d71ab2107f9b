// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/listenaddress.h"

namespace slp {

std::optional<ListenAddress> parseListenAddress(const QString &text, QString *error)
{
    const auto fail = [&](const QString &why) -> std::optional<ListenAddress> {
        if (error)
            *error = why;
        return std::nullopt;
    };

    if (text.startsWith(QLatin1String("unix:"))) {
        ListenAddress addr;
        addr.unixPath = text.mid(5);
        addr.text = text;
        // sun_path holds 108 bytes with its terminating NUL.
        if (addr.unixPath.isEmpty())
            return fail(
                QStringLiteral("missing path in \"%1\" (unix:/run/slp/slp.sock)").arg(text));
        if (addr.unixPath.toLocal8Bit().size() > 107)
            return fail(
                QStringLiteral("socket path \"%1\" is longer than 107 bytes").arg(addr.unixPath));
        return addr;
    }
    QString hostPart;
    QString portPart;
    if (text.startsWith(QLatin1Char('['))) {
        const qsizetype close = text.indexOf(QLatin1Char(']'));
        if (close < 0)
            return fail(QStringLiteral("missing \"]\" in address \"%1\"").arg(text));
        if (close + 1 >= text.size() || text[close + 1] != QLatin1Char(':'))
            return fail(QStringLiteral("missing port in address \"%1\"").arg(text));
        hostPart = text.mid(1, close - 1);
        portPart = text.mid(close + 2);
        if (!hostPart.contains(QLatin1Char(':')))
            return fail(QStringLiteral("\"%1\" in brackets is not an IPv6 address").arg(hostPart));
    } else {
        const qsizetype colon = text.lastIndexOf(QLatin1Char(':'));
        if (colon < 0)
            return fail(QStringLiteral("missing port in address \"%1\"").arg(text));
        hostPart = text.left(colon);
        portPart = text.mid(colon + 1);
        if (hostPart.contains(QLatin1Char(':')))
            return fail(QStringLiteral("too many colons in address \"%1\" (IPv6 needs brackets)")
                            .arg(text));
    }

    if (portPart.isEmpty())
        return fail(QStringLiteral("missing port in address \"%1\"").arg(text));
    bool digitsOnly = portPart.size() <= 5;
    for (const QChar c : portPart)
        digitsOnly = digitsOnly && c >= QLatin1Char('0') && c <= QLatin1Char('9');
    const uint port = digitsOnly ? portPart.toUInt() : 70000;
    if (port > 65535)
        return fail(QStringLiteral("invalid port \"%1\" (0 to 65535)").arg(portPart));

    ListenAddress addr;
    addr.port = quint16(port);
    addr.text = text;
    if (hostPart.isEmpty()) {
        addr.host = QHostAddress(QHostAddress::Any);
    } else if (hostPart.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0) {
        // Resolved here rather than through DNS: loading the config never touches the network.
        addr.host = QHostAddress(QHostAddress::LocalHost);
    } else {
        QHostAddress host;
        if (!host.setAddress(hostPart))
            return fail(QStringLiteral("\"%1\" is not an IP address (use an IP literal, "
                                       "localhost, or leave it empty for all interfaces)")
                            .arg(hostPart));
        // IPv6 scope ids or IPv4 written inside brackets would be surprising: refuse them.
        if (text.startsWith(QLatin1Char('[')) != (host.protocol() == QAbstractSocket::IPv6Protocol))
            return fail(QStringLiteral("\"%1\" is not a valid host for this form").arg(hostPart));
        addr.host = host;
    }
    return addr;
}

} // namespace slp
