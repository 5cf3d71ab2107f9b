// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QHostAddress>
#include <QString>

#include <optional>

namespace slp {

// `listen:` forms: ":8080" (all interfaces, dual-stack), "127.0.0.1:8080", "[::1]:8080",
// "localhost:8080". Port 0 is allowed (the OS picks; tests use it).
struct ListenAddress
{
    QHostAddress host; // QHostAddress::Any for ":PORT"
    quint16 port = 0;
    QString text; // as written
};

std::optional<ListenAddress> parseListenAddress(const QString &text, QString *error = nullptr);

} // namespace slp
