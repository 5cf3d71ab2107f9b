// SPDX-License-Identifier: GPL-3.0-or-later
#include "connection.h"

#include <QSocketNotifier>

#include <cerrno>
#include <cstring>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace slp::bench {

Conn::Conn(const Endpoint &ep, bool recordEvents) : m_ep(ep), m_recordEvents(recordEvents)
{
    m_parser.setKeepHeaders(false); // the status and the framing are all a load needs
    m_parser.onHead = [this](const wire::Head &h) {
        if (!h.interim())
            status = h.status;
    };
    m_parser.onBody = [this](QByteArrayView piece) {
        bodyBytes += piece.size();
        scanEvents(piece.data(), size_t(piece.size()), m_readNs);
    };
    m_parser.onMessage = [this] { m_responseEnded = true; };
}

Conn::~Conn()
{
    closeSocket();
}

void Conn::request(const QByteArray &head, const QByteArray &body)
{
    status = 0;
    failed = false;
    bodyBytes = 0;
    eventNs.clear();
    m_parser.reset();
    m_responseEnded = false;
    m_lastNl = false;
    m_out.clear();
    if (body.size() <= 64 * 1024) {
        m_out << head + body; // one write, one segment: like any real client
    } else {
        m_out << head;
        m_out << body; // shared, not copied
    }
    m_outOffset = 0;
    m_active = true;
    startNs = nowNs();
    if (m_fd < 0 && !openSocket()) {
        fail();
        return;
    }
    if (m_connected)
        flush();
}

void Conn::closeSocket()
{
    if (m_readN) {
        m_readN->setEnabled(false);
        m_readN.release()->deleteLater();
    }
    if (m_writeN) {
        m_writeN->setEnabled(false);
        m_writeN.release()->deleteLater();
    }
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
    m_connected = false;
}

bool Conn::openSocket()
{
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (m_fd < 0)
        return false;
    const int one = 1;
    ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const int rc =
        ::connect(m_fd, reinterpret_cast<const sockaddr *>(&m_ep.addr), sizeof m_ep.addr);
    if (rc < 0 && errno != EINPROGRESS) {
        ::close(m_fd);
        m_fd = -1;
        return false;
    }
    m_connected = rc == 0;
    m_readN = std::make_unique<QSocketNotifier>(m_fd, QSocketNotifier::Read);
    QObject::connect(m_readN.get(), &QSocketNotifier::activated, m_readN.get(),
                     [this] { onReadable(); });
    m_writeN = std::make_unique<QSocketNotifier>(m_fd, QSocketNotifier::Write);
    m_writeN->setEnabled(!m_connected);
    QObject::connect(m_writeN.get(), &QSocketNotifier::activated, m_writeN.get(),
                     [this] { onWritable(); });
    return true;
}

void Conn::onWritable()
{
    if (!m_connected) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(m_fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
            fail();
            return;
        }
        m_connected = true;
    }
    flush();
}

void Conn::flush()
{
    while (!m_out.isEmpty()) {
        const QByteArray &piece = m_out.first();
        const ssize_t n = ::send(m_fd, piece.constData() + m_outOffset,
                                 size_t(piece.size() - m_outOffset), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                m_writeN->setEnabled(true);
                return;
            }
            if (errno == EINTR)
                continue;
            fail();
            return;
        }
        m_outOffset += n;
        if (m_outOffset == piece.size()) {
            m_out.removeFirst();
            m_outOffset = 0;
        }
    }
    if (m_writeN)
        m_writeN->setEnabled(false);
}

void Conn::onReadable()
{
    static char buf[256 * 1024];
    for (;;) {
        const ssize_t n = ::recv(m_fd, buf, sizeof buf, 0);
        if (n > 0) {
            if (!m_active)
                continue; // unsolicited bytes on an idle connection: ignore
            m_readNs = nowNs();
            m_parser.feed(QByteArrayView(buf, n)); // what follows the response is ignored
            if (m_responseEnded) {
                finish(m_readNs);
                return; // the callback may have reused or closed this connection
            }
            if (m_parser.failed()) {
                fail();
                return;
            }
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0 && errno == EINTR)
            continue;
        // EOF or error.
        if (m_active) {
            m_parser.finish(); // ends a close-delimited body
            if (m_responseEnded) {
                closeSocket();
                finish(nowNs());
            } else {
                fail();
            }
            return;
        }
        closeSocket(); // the server closed an idle keep-alive connection
        return;
    }
}

void Conn::finish(qint64 t)
{
    endNs = t;
    m_active = false;
    if (!m_parser.head().keepAlive)
        closeSocket();
    if (onDone)
        onDone(*this);
}

void Conn::fail()
{
    failed = true;
    closeSocket();
    const bool wasActive = m_active;
    m_active = false;
    endNs = nowNs();
    if (wasActive && onDone)
        onDone(*this);
}

void Conn::scanEvents(const char *p, size_t n, qint64 t)
{
    if (!m_recordEvents)
        return;
    const char *end = p + n;
    while (p < end) {
        if (m_lastNl) {
            m_lastNl = false;
            if (*p == '\n') {
                eventNs.push_back(t);
                ++p;
                continue;
            }
        }
        const void *nl = std::memchr(p, '\n', size_t(end - p));
        if (!nl)
            return;
        p = static_cast<const char *>(nl) + 1;
        if (p < end && *p == '\n') {
            eventNs.push_back(t);
            ++p;
        } else if (p == end) {
            m_lastNl = true;
        }
    }
}

} // namespace slp::bench
