// SPDX-License-Identifier: GPL-3.0-or-later
#include "sink.h"

#include "wire/parser.h"

#include <QSocketNotifier>

#include <algorithm>
#include <cerrno>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>

namespace slp::bench {

namespace {

void reply(int fd, QByteArrayView bytes)
{
    // Tiny answers into an empty socket buffer: one send is enough.
    [[maybe_unused]] const ssize_t n = ::send(fd, bytes.data(), size_t(bytes.size()), MSG_NOSIGNAL);
}

} // namespace

struct Sink::Peer
{
    int fd = -1;
    std::unique_ptr<QSocketNotifier> n;
    wire::Parser parser{wire::Parser::Kind::Request};
    bool answer = false; // a request ended
    bool refuse = false; // a request without a length
};

Sink::Sink() = default;

Sink::~Sink()
{
    for (const auto &peer : m_peers)
        ::close(peer->fd);
    if (m_fd >= 0)
        ::close(m_fd);
}

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
        Peer *p = peer.get();
        p->parser.onHead = [p](const wire::Head &h) {
            if (!h.chunked && h.contentLength < 0) {
                p->refuse = true;
                return;
            }
            if (h.header("expect").trimmed().toLower() == "100-continue")
                reply(p->fd, "HTTP/1.1 100 Continue\r\n\r\n");
        };
        p->parser.onMessage = [p] { p->answer = true; };
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
    peer->fd = -1;
    m_peers.erase(std::remove(m_peers.begin(), m_peers.end(), peer), m_peers.end());
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
        QByteArrayView in(buf, n);
        while (!in.isEmpty()) {
            const qsizetype used = peer->parser.feed(in); // stops after each request
            in = in.sliced(used);
            if (peer->refuse) {
                reply(peer->fd, "HTTP/1.1 411 Length Required\r\nContent-Length: 0\r\n"
                                "Connection: close\r\n\r\n");
                drop(peer);
                return;
            }
            if (peer->parser.failed()) {
                drop(peer);
                return;
            }
            if (std::exchange(peer->answer, false))
                reply(peer->fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                "Content-Length: 2\r\n\r\n{}");
            else if (used == 0)
                break; // cannot happen (feed takes all unless a request ended): never spin
        }
    }
}

} // namespace slp::bench
