// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

namespace slp {

// How a TCP peer ended a connection, as the kernel says it.
enum class PeerEnd
{
    Open,    // still established
    Closed,  // a FIN came (CLOSE_WAIT)
    Reset,   // an RST came: the socket went straight to CLOSE
    Unknown, // no descriptor, or a state that says neither
};

// The tcp_info state (tcpi_state) of a socket that has not sent its own FIN, as a PeerEnd.
PeerEnd peerEndOf(int tcpState);

// A second descriptor (dup) of a connection's socket, closed with the connection. Qt 6.4 reads
// ECONNRESET as a plain EOF (RemoteHostClosedError) and closes its own descriptor before it
// reports it; this one keeps the socket open, so TCP_INFO can still tell an RST from a FIN.
class SocketShadow
{
public:
    SocketShadow() = default;
    ~SocketShadow();
    SocketShadow(const SocketShadow &) = delete;
    SocketShadow &operator=(const SocketShadow &) = delete;

    // Shadows `fd` (closing any earlier shadow); nothing when fd < 0 or dup fails.
    void watch(long long fd);
    void close();
    bool isOpen() const { return m_fd >= 0; }
    PeerEnd peerEnd() const;

private:
    int m_fd = -1;
};

} // namespace slp
