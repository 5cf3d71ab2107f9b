// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QHostAddress>
#include <QString>

namespace slp {

// Opens a listening TCP socket with SO_REUSEPORT, so several event-loop threads can each hold
// one on the same address and the kernel spreads new connections across them. Returns the
// descriptor (non-blocking, close-on-exec), or -1 with `error` set. `::` for QHostAddress::Any
// is dual-stack as Qt makes it; port 0 lets the OS pick (open the rest on the port it chose).
int openSharedListenSocket(const QHostAddress &host, quint16 port, int backlog, QString *error);

// SO_REUSEPORT would also let a second slp (same user, same port) join this one's group and
// take half its traffic without a word. A plain bind first finds any socket already on the
// address, so that case fails as "address in use" like a single listener does.
bool portIsFree(const QHostAddress &host, quint16 port, QString *error);

} // namespace slp
