// SPDX-License-Identifier: GPL-3.0-or-later
#include "net/unixsocket.h"

#include <QFile>

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace slp {

namespace {
QString systemError(const QString &what)
{
    return QStringLiteral("%1: %2").arg(what, QString::fromLocal8Bit(strerror(errno)));
}

bool addressOf(const QString &path, sockaddr_un *address, QString *error)
{
    const QByteArray bytes = QFile::encodeName(path);
    *address = {};
    address->sun_family = AF_UNIX;
    if (bytes.isEmpty() || bytes.size() >= qsizetype(sizeof(address->sun_path))) {
        *error = QStringLiteral("socket path \"%1\" is empty or too long").arg(path);
        return false;
    }
    std::memcpy(address->sun_path, bytes.constData(), size_t(bytes.size()));
    return true;
}

// An existing file at the path: a dead process's socket is removed; anything else refuses.
bool clearStaleSocket(const QString &path, const sockaddr_un &address, QString *error)
{
    struct stat st = {};
    if (::lstat(address.sun_path, &st) != 0)
        return true; // nothing there
    if (!S_ISSOCK(st.st_mode)) {
        *error = QStringLiteral("%1 exists and is not a socket; not replacing it").arg(path);
        return false;
    }
    const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe < 0) {
        *error = systemError(QStringLiteral("socket"));
        return false;
    }
    const bool live =
        ::connect(probe, reinterpret_cast<const sockaddr *>(&address), sizeof(address)) == 0 ||
        errno == EAGAIN; // a full accept queue is someone's, too
    ::close(probe);
    if (live) {
        *error = QStringLiteral("another process is listening on %1").arg(path);
        return false;
    }
    if (::unlink(address.sun_path) != 0 && errno != ENOENT) {
        *error = systemError(QStringLiteral("removing the stale socket %1").arg(path));
        return false;
    }
    return true;
}
} // namespace

int openUnixListenSocket(const QString &path, int mode, int backlog, QString *error,
                         SocketFileId *file)
{
    sockaddr_un address;
    if (!addressOf(path, &address, error) || !clearStaleSocket(path, address, error))
        return -1;
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *error = systemError(QStringLiteral("socket"));
        return -1;
    }
    // fchmod on a socket does not change its file: the mode is set on the path after bind.
    if (::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof(address)) != 0) {
        *error = systemError(QStringLiteral("bind %1").arg(path));
        ::close(fd);
        return -1;
    }
    if (::chmod(address.sun_path, mode_t(mode)) != 0 || ::listen(fd, backlog) != 0) {
        *error = systemError(QStringLiteral("listen on %1").arg(path));
        ::unlink(address.sun_path);
        ::close(fd);
        return -1;
    }
    struct stat st = {};
    if (::lstat(address.sun_path, &st) == 0)
        *file = {quint64(st.st_dev), quint64(st.st_ino)};
    return fd;
}

int connectUnixSocket(const QString &path, bool *refused, QString *message)
{
    *refused = false;
    sockaddr_un address;
    if (!addressOf(path, &address, message))
        return -1;
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *message = systemError(QStringLiteral("socket"));
        return -1;
    }
    if (::connect(fd, reinterpret_cast<const sockaddr *>(&address), sizeof(address)) != 0) {
        *refused = errno == ECONNREFUSED || errno == ENOENT || errno == EAGAIN;
        *message = systemError(QStringLiteral("connect to unix:") + path);
        ::close(fd);
        return -1;
    }
    return fd;
}

void removeUnixSocketFile(const QString &path, const SocketFileId &file)
{
    struct stat there = {};
    const QByteArray name = QFile::encodeName(path);
    if (file.inode != 0 && ::lstat(name.constData(), &there) == 0 &&
        quint64(there.st_ino) == file.inode && quint64(there.st_dev) == file.device)
        ::unlink(name.constData());
}

} // namespace slp
