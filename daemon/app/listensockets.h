// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "config/config.h"
#include "net/unixsocket.h"

#include <QList>
#include <QString>

namespace slp {

// The listening sockets every worker adopts a duplicate of: the ones systemd passed (socket
// activation, `slp.socket`), which win over `listen:`, or the Unix socket `listen: unix:PATH`
// names. None for a TCP `listen:`: each worker then binds the address itself.
class ListenSockets
{
public:
    ListenSockets() = default;
    ~ListenSockets();
    ListenSockets(const ListenSockets &) = delete;
    ListenSockets &operator=(const ListenSockets &) = delete;

    // false with `error` set: a passed descriptor that is not a listening stream socket, or a
    // Unix socket that cannot be made.
    bool acquire(const Config &config, int backlog, QString *error);
    const QList<int> &descriptors() const { return m_fds; }
    bool passedBySystemd() const { return m_passed; }
    // What each descriptor listens on: "127.0.0.1:8080", "[::1]:8080", "unix:/run/slp/slp.sock".
    QStringList addresses() const;
    // Once every worker holds its duplicates; the Unix socket file stays until destruction.
    void closeDescriptors();

private:
    QList<int> m_fds;
    bool m_passed = false;
    QString m_unixPath; // made by slp: removed at exit
    SocketFileId m_unixFile;
};

} // namespace slp
