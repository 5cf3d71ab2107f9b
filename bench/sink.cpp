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

// The filler of sized answers: one buffer, sent from for every size (no copy per answer).
const QByteArray &filler(qint64 size)
{
    static QByteArray bytes;
    if (bytes.size() < size)
        bytes = QByteArray(size, 'A');
    return bytes;
}

// 200 with a JSON body of exactly `size` bytes ({} below 10 bytes).
QList<QByteArray> answer(qint64 size)
{
    if (size < 10)
        return {"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"};
    const QByteArray head =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
        QByteArray::number(size) + "\r\n\r\n{\"x\":\"";
    return {head, QByteArray::fromRawData(filler(size).constData(), size - 8), "\"}"};
}

} // namespace

struct Sink::Peer
{
    int fd = -1;
    std::unique_ptr<QSocketNotifier> n;
    std::unique_ptr<QSocketNotifier> w; // while an answer does not fit the socket
    wire::Parser parser{wire::Parser::Kind::Request};
    bool answer = false;    // a request ended
    bool refuse = false;    // a request without a length
    qint64 answerBytes = 0; // X-Sink-Response-Bytes of the request: its answer's body size
    QList<QByteArray> out;  // answer bytes the socket has not taken yet
    qsizetype outOffset = 0;
};

namespace {
// Sends what the socket takes; false on an error (what it did not take stays in `out`).
bool flushOut(Sink::Peer *p)
{
    while (!p->out.isEmpty()) {
        const QByteArray &front = p->out.first();
        const ssize_t n = ::send(p->fd, front.constData() + p->outOffset,
                                 size_t(front.size() - p->outOffset), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK;
        p->outOffset += n;
        if (p->outOffset == front.size()) {
            p->out.removeFirst();
            p->outOffset = 0;
        }
    }
    return true;
}
} // namespace

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
            p->answerBytes = h.header("x-sink-response-bytes").toLongLong();
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
    if (peer->w) {
        peer->w->setEnabled(false);
        peer->w.release()->deleteLater();
    }
    ::close(peer->fd);
    peer->fd = -1;
    m_peers.erase(std::remove(m_peers.begin(), m_peers.end(), peer), m_peers.end());
}

void Sink::sendAnswer(const std::shared_ptr<Peer> &peer)
{
    peer->out += answer(peer->answerBytes);
    if (!flushOut(peer.get())) {
        drop(peer);
        return;
    }
    if (peer->out.isEmpty() || peer->w)
        return;
    // The rest goes as the socket drains (a client reads one answer before its next request).
    peer->w = std::make_unique<QSocketNotifier>(peer->fd, QSocketNotifier::Write);
    Peer *p = peer.get();
    QObject::connect(p->w.get(), &QSocketNotifier::activated, p->w.get(), [p] {
        const bool ok = flushOut(p);
        if (ok && !p->out.isEmpty())
            return;
        if (!ok)
            ::shutdown(p->fd, SHUT_RDWR); // the read side sees the error and drops the peer
        p->w->setEnabled(false);
        p->w.release()->deleteLater();
    });
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
                sendAnswer(peer);
            else if (used == 0)
                break; // cannot happen (feed takes all unless a request ended): never spin
        }
    }
}

} // namespace slp::bench
