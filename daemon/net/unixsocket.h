// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace slp {

// Opens a listening Unix-domain stream socket at `path` with file mode `mode` (non-blocking,
// close-on-exec); -1 with `error` set. A socket file left behind by a process that died is
// replaced (a connect to it is refused); one that a live process still accepts on, or a path
// that is not a socket, is refused and left alone.
// `file` receives the socket file's identity, for removeUnixSocketFile().
struct SocketFileId
{
    quint64 device = 0;
    quint64 inode = 0;
};
int openUnixListenSocket(const QString &path, int mode, int backlog, QString *error,
                         SocketFileId *file);

// Connects a non-blocking, close-on-exec stream socket to the Unix socket at `path` (a
// Unix socket connects or fails at once). -1 on failure, with `message` saying what failed
// and `refused` set when nothing can have reached a peer: a missing file, a file nobody
// listens on, a full backlog.
int connectUnixSocket(const QString &path, bool *refused, QString *message);

// Removes the socket file at `path` if it is still the one slp made (same device and inode),
// so a newer slp's socket at that path is never taken away.
void removeUnixSocketFile(const QString &path, const SocketFileId &file);

} // namespace slp
