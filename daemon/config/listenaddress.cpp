// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/listenaddress.h"

namespace slp {

namespace {

// "unix:/PATH": the socket file's path, which sun_path bounds (108 bytes with its NUL).
QString parseUnix(const QString &text, ListenAddress *addr)
{
    addr->unixPath = text.mid(5);
    addr->text = text;
    if (addr->unixPath.isEmpty())
        return QStringLiteral("missing path in \"%1\" (unix:/run/slp/slp.sock)").arg(text);
    if (addr->unixPath.toLocal8Bit().size() > 107)
        return QStringLiteral("socket path \"%1\" is longer than 107 bytes").arg(addr->unixPath);
    return {};
}

// "HOST:PORT", ":PORT" or "[V6]:PORT" into its two parts.
QString splitHostPort(const QString &text, QString *host, QString *port)
{
    if (text.startsWith(QLatin1Char('['))) {
        const qsizetype close = text.indexOf(QLatin1Char(']'));
        if (close < 0)
            return QStringLiteral("missing \"]\" in address \"%1\"").arg(text);
        if (close + 1 >= text.size() || text[close + 1] != QLatin1Char(':'))
            return QStringLiteral("missing port in address \"%1\"").arg(text);
        *host = text.mid(1, close - 1);
        *port = text.mid(close + 2);
        if (!host->contains(QLatin1Char(':')))
            return QStringLiteral("\"%1\" in brackets is not an IPv6 address").arg(*host);
    } else {
        const qsizetype colon = text.lastIndexOf(QLatin1Char(':'));
        if (colon < 0)
            return QStringLiteral("missing port in address \"%1\"").arg(text);
        *host = text.left(colon);
        *port = text.mid(colon + 1);
        if (host->contains(QLatin1Char(':')))
            return QStringLiteral("too many colons in address \"%1\" (IPv6 needs brackets)")
                .arg(text);
    }
    if (port->isEmpty())
        return QStringLiteral("missing port in address \"%1\"").arg(text);
    return {};
}

QString parsePort(const QString &text, quint16 *port)
{
    bool digitsOnly = text.size() <= 5;
    for (const QChar c : text)
        digitsOnly = digitsOnly && c >= QLatin1Char('0') && c <= QLatin1Char('9');
    const uint value = digitsOnly ? text.toUInt() : 70000;
    if (value > 65535)
        return QStringLiteral("invalid port \"%1\" (0 to 65535)").arg(text);
    *port = quint16(value);
    return {};
}

// An IP literal, "localhost", or empty (every interface): never a name looked up, so loading
// the config never touches the network.
QString parseHost(const QString &text, bool bracketed, QHostAddress *host)
{
    if (text.isEmpty()) {
        *host = QHostAddress(QHostAddress::Any);
    } else if (text.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0) {
        *host = QHostAddress(QHostAddress::LocalHost);
    } else {
        if (!host->setAddress(text))
            return QStringLiteral("\"%1\" is not an IP address (use an IP literal, "
                                  "localhost, or leave it empty for all interfaces)")
                .arg(text);
        // IPv6 scope ids or IPv4 written inside brackets would be surprising: refuse them.
        if (bracketed != (host->protocol() == QAbstractSocket::IPv6Protocol))
            return QStringLiteral("\"%1\" is not a valid host for this form").arg(text);
    }
    return {};
}

} // namespace

std::optional<ListenAddress> parseListenAddress(const QString &text, QString *error)
{
    ListenAddress addr;
    QString why;
    if (text.startsWith(QLatin1String("unix:"))) {
        why = parseUnix(text, &addr);
    } else {
        QString host;
        QString port;
        addr.text = text;
        why = splitHostPort(text, &host, &port);
        if (why.isEmpty())
            why = parsePort(port, &addr.port);
        if (why.isEmpty())
            why = parseHost(host, text.startsWith(QLatin1Char('[')), &addr.host);
    }
    if (why.isEmpty())
        return addr;
    if (error)
        *error = why;
    return std::nullopt;
}

} // namespace slp
