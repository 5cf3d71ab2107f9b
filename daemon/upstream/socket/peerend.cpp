// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/socket/peerend.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace slp {

PeerEnd peerEndOf(int tcpState)
{
    switch (tcpState) {
    case TCP_ESTABLISHED:
        return PeerEnd::Open;
    case TCP_CLOSE_WAIT:
        return PeerEnd::Closed;
    case TCP_CLOSE:
        // Only an RST (or a timeout's abort) closes a connection that never sent its FIN.
        return PeerEnd::Reset;
    default:
        return PeerEnd::Unknown;
    }
}

SocketShadow::~SocketShadow()
{
    close();
}

void SocketShadow::watch(long long fd)
{
    close();
    if (fd >= 0)
        m_fd = ::fcntl(int(fd), F_DUPFD_CLOEXEC, 0); // -1 on failure: no shadow, no harm
}

void SocketShadow::close()
{
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
    }
}

PeerEnd SocketShadow::peerEnd() const
{
    if (m_fd < 0)
        return PeerEnd::Unknown;
    tcp_info info{};
    socklen_t size = sizeof info;
    if (::getsockopt(m_fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0)
        return PeerEnd::Unknown;
    return peerEndOf(info.tcpi_state);
}

} // namespace slp
