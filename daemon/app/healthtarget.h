// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "config/listenaddress.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QHostAddress>
#include <QString>

#include <optional>

namespace slp {

// Where `slp --health-check` knocks for an slp bound to `listen:`, from the same machine (or
// the same container): a wildcard bind is reached on the loopback of its family, a Unix socket
// at its path, any other address as written. Pure, so every form is unit-tested.
struct HealthTarget
{
    QHostAddress host;
    quint16 port = 0;
    QString unixPath; // non-empty for a Unix socket; host and port unused then

    bool isUnix() const { return !unixPath.isEmpty(); }
    QString text() const; // "127.0.0.1:8080", "[::1]:8080", "unix:/run/slp/slp.sock"
    // GET /healthz, closing after the answer.
    QByteArray request() const;
};

// nullopt with `error` set for an address nothing can be asked at (port 0: the OS picks one).
std::optional<HealthTarget> healthTargetFor(const ListenAddress &listen, QString *error);

// The status code of the status line `received` starts with ("HTTP/1.1 200 OK\r\n"): 0 while
// the line is incomplete, -1 when the bytes are not an HTTP/1.x status line.
int responseStatus(QByteArrayView received);

} // namespace slp
