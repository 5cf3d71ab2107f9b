// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QHostAddress>
#include <QString>

#include <optional>

namespace slp {

// `listen:` forms: ":8080" (all interfaces, dual-stack), "127.0.0.1:8080", "[::1]:8080",
// "localhost:8080". Port 0 is allowed (the OS picks; tests use it). "unix:/run/slp/slp.sock":
// a Unix-domain stream socket at that path (absolute or relative to the working directory).
struct ListenAddress
{
    QHostAddress host; // QHostAddress::Any for ":PORT"
    quint16 port = 0;
    QString unixPath; // non-empty for "unix:PATH"; host and port unused then
    QString text;     // as written
    bool isUnix() const { return !unixPath.isEmpty(); }
};

std::optional<ListenAddress> parseListenAddress(const QString &text, QString *error = nullptr);

} // namespace slp
