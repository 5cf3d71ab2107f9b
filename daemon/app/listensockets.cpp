// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/listensockets.h"

#include <QFile>
#include <QHostAddress>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

namespace slp {

namespace {
QString addressOf(int fd)
{
    sockaddr_storage storage = {};
    socklen_t length = sizeof(storage);
    auto *address = reinterpret_cast<sockaddr *>(&storage);
    if (::getsockname(fd, address, &length) != 0)
        return QStringLiteral("fd %1").arg(fd);
    if (address->sa_family == AF_UNIX) {
        const auto *un = reinterpret_cast<const sockaddr_un *>(address);
        return QStringLiteral("unix:") + QFile::decodeName(un->sun_path);
    }
    QHostAddress host(address);
    bool mapped = false;
    const quint32 v4 = host.toIPv4Address(&mapped);
    const quint16 port = ntohs(address->sa_family == AF_INET6
                                   ? reinterpret_cast<const sockaddr_in6 *>(address)->sin6_port
                                   : reinterpret_cast<const sockaddr_in *>(address)->sin_port);
    if (mapped)
        host = QHostAddress(v4);
    const QString text = host.protocol() == QAbstractSocket::IPv6Protocol
                             ? QLatin1Char('[') + host.toString() + QLatin1Char(']')
                             : host.toString();
    return text + QLatin1Char(':') + QString::number(port);
}
} // namespace

ListenSockets::~ListenSockets()
{
    closeDescriptors();
    if (!m_unixPath.isEmpty())
        removeUnixSocketFile(m_unixPath, m_unixFile);
}

bool ListenSockets::acquire(const Config &config, int backlog, QString *error)
{
    // Unsets $LISTEN_FDS: a reload's child `slp --check` must not think it got them.
    const int passed = sd_listen_fds(1);
    for (int i = 0; i < passed; ++i) {
        const int fd = SD_LISTEN_FDS_START + i;
        if (sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) <= 0) {
            *error = QStringLiteral("systemd passed descriptor %1, which is not a listening "
                                    "stream socket (slp.socket needs ListenStream=)")
                         .arg(fd);
            return false;
        }
        ::fcntl(fd, F_SETFD, FD_CLOEXEC); // never inherited by a child process
        m_fds.append(fd);
    }
    m_passed = passed > 0;
    if (m_passed || !config.listen.isUnix())
        return true;
    const int fd = openUnixListenSocket(config.listen.unixPath, config.listenMode, backlog, error,
                                        &m_unixFile);
    if (fd < 0) {
        *error = QStringLiteral("cannot listen on %1: %2").arg(config.listen.text, *error);
        return false;
    }
    m_fds.append(fd);
    m_unixPath = config.listen.unixPath;
    return true;
}

QStringList ListenSockets::addresses() const
{
    QStringList out;
    for (const int fd : m_fds)
        out << addressOf(fd);
    if (out.isEmpty() && !m_unixPath.isEmpty())
        out << QStringLiteral("unix:") + m_unixPath;
    return out;
}

void ListenSockets::closeDescriptors()
{
    for (const int fd : std::exchange(m_fds, {}))
        ::close(fd);
}

} // namespace slp
