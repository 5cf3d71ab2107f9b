#include "sink.h"

#include <QSocketNotifier>

#include <algorithm>
#include <cerrno>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace slp::bench {

Sink::Sink() = default;
Sink::~Sink() = default;

bool Sink::listen(const Endpoint &ep)
{
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(m_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (m_fd < 0 ||
        ::bind(m_fd, reinterpret_cast<const sockaddr *>(&ep.addr), sizeof ep.addr) != 0 ||
        ::listen(m_fd, 4096) != 0)
        return false;
    m_acceptN = std::make_unique<QSocketNotifier>(m_fd, QSocketNotifier::Read);
    QObject::connect(m_acceptN.get(), &QSocketNotifier::activated, m_acceptN.get(),
                     [this] { onAccept(); });
    return true;
}

void Sink::onAccept()
{
    for (;;) {
        const int fd = ::accept4(m_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        auto peer = std::make_shared<Peer>();
        peer->fd = fd;
        peer->n = std::make_unique<QSocketNotifier>(fd, QSocketNotifier::Read);
        QObject::connect(peer->n.get(), &QSocketNotifier::activated, peer->n.get(),
                         [this, peer] { onRead(peer); });
        m_peers.push_back(peer);
    }
}

void Sink::drop(const std::shared_ptr<Peer> &peer)
{
    peer->n->setEnabled(false);
    peer->n.release()->deleteLater();
    ::close(peer->fd);
    m_peers.erase(std::remove(m_peers.begin(), m_peers.end(), peer), m_peers.end());
}

void Sink::reply(int fd, const QByteArray &bytes)
{
    // Tiny answers into an empty socket buffer: one send is enough.
    [[maybe_unused]] const ssize_t n =
        ::send(fd, bytes.constData(), size_t(bytes.size()), MSG_NOSIGNAL);
}

void Sink::onRead(const std::shared_ptr<Peer> &peer)
{
    static char buf[256 * 1024];
    for (;;) {
        const ssize_t n = ::recv(peer->fd, buf, sizeof buf, 0);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            drop(peer);
            return;
        }
        const char *p = buf;
        const char *end = buf + n;
        while (p < end) {
            if (peer->remaining < 0) {
                peer->head.append(p, end - p);
                p = end;
                const qsizetype e = peer->head.indexOf("\r\n\r\n");
                if (e < 0)
                    break;
                const QByteArray rest = peer->head.mid(e + 4);
                const QByteArray h = peer->head.left(e).toLower();
                peer->head.clear();
                const qsizetype cl = h.indexOf("\ncontent-length:");
                if (cl < 0) {
                    reply(peer->fd, "HTTP/1.1 411 Length Required\r\nContent-Length: "
                                    "0\r\nConnection: close\r\n\r\n");
                    drop(peer);
                    return;
                }
                const qsizetype eol = h.indexOf('\r', cl + 1);
                peer->remaining = h.mid(cl + 16, eol - cl - 16).trimmed().toLongLong();
                if (h.contains("\nexpect: 100-continue"))
                    reply(peer->fd, "HTTP/1.1 100 Continue\r\n\r\n");
                if (!rest.isEmpty()) {
                    // Re-feed what followed the head through the same loop.
                    m_scratch = rest;
                    p = m_scratch.constData();
                    end = p + m_scratch.size();
                }
            }
            const qint64 take = std::min<qint64>(peer->remaining, end - p);
            p += take;
            peer->remaining -= take;
            if (peer->remaining == 0) {
                peer->remaining = -1;
                reply(peer->fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                "Content-Length: 2\r\n\r\n{}");
            }
        }
    }
}

} // namespace slp::bench
