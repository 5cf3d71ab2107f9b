#include "connection.h"

#include <QSocketNotifier>

#include <cerrno>
#include <cstring>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace slp::bench {

Conn::Conn(const Endpoint &ep, bool recordEvents) : m_ep(ep), m_recordEvents(recordEvents)
{}

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
    m_state = State::Head;
    m_in.clear();
    m_lastNl = false;
    m_crlfSeen = 0;
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
            const qint64 t = nowNs();
            feed(buf, size_t(n), t);
            if (m_state == State::Done) {
                finish(t);
                return; // the callback may have reused or closed this connection
            }
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0 && errno == EINTR)
            continue;
        // EOF or error.
        if (m_active && m_state == State::UntilClose) {
            m_state = State::Done;
            closeSocket();
            finish(nowNs());
            return;
        }
        if (m_active) {
            fail();
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
    if (m_closeAfter)
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

void Conn::parseHead(const QByteArray &head)
{
    const QList<QByteArray> lines = head.split('\n');
    status = lines.value(0).split(' ').value(1).toInt();
    qint64 length = -1;
    bool chunked = false;
    m_closeAfter = false;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray &line = lines[i];
        const qsizetype colon = line.indexOf(':');
        if (colon < 0)
            continue;
        const QByteArray name = line.left(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed().toLower();
        if (name == "content-length")
            length = value.toLongLong();
        else if (name == "transfer-encoding")
            chunked = value.contains("chunked");
        else if (name == "connection")
            m_closeAfter = value.contains("close");
    }
    if (status >= 100 && status < 200) {
        m_state = State::Head; // interim response: the real head follows
    } else if (chunked) {
        m_state = State::ChunkSize;
    } else if (length >= 0) {
        m_remaining = length;
        m_state = length == 0 ? State::Done : State::Length;
    } else {
        m_state = State::UntilClose;
        m_closeAfter = true;
    }
}

void Conn::feed(const char *p, size_t n, qint64 t)
{
    m_in.append(p, qsizetype(n));
    qsizetype pos = 0;
    while (m_state != State::Done) {
        if (m_state == State::Head) {
            const qsizetype end = m_in.indexOf("\r\n\r\n", pos);
            if (end < 0)
                break;
            parseHead(m_in.mid(pos, end - pos));
            pos = end + 4;
            continue;
        }
        if (m_state == State::ChunkSize || m_state == State::Trailer) {
            const qsizetype eol = m_in.indexOf("\r\n", pos);
            if (eol < 0)
                break;
            const QByteArray line = m_in.mid(pos, eol - pos);
            pos = eol + 2;
            if (m_state == State::Trailer) {
                if (line.isEmpty())
                    m_state = State::Done;
                continue;
            }
            bool ok = false;
            m_remaining = line.split(';').value(0).trimmed().toLongLong(&ok, 16);
            if (!ok) {
                failed = true;
                m_closeAfter = true;
                m_state = State::Done;
                break;
            }
            m_state = m_remaining == 0 ? State::Trailer : State::ChunkData;
            continue;
        }
        const qsizetype avail = m_in.size() - pos;
        if (avail <= 0)
            break;
        const char *d = m_in.constData() + pos;
        if (m_state == State::ChunkCrlf) {
            const qsizetype take = std::min<qsizetype>(avail, 2 - m_crlfSeen);
            pos += take;
            m_crlfSeen += int(take);
            if (m_crlfSeen == 2) {
                m_crlfSeen = 0;
                m_state = State::ChunkSize;
            }
            continue;
        }
        const qsizetype take =
            m_state == State::UntilClose ? avail : std::min<qsizetype>(avail, m_remaining);
        scanEvents(d, size_t(take), t);
        bodyBytes += take;
        pos += take;
        if (m_state != State::UntilClose) {
            m_remaining -= take;
            if (m_remaining == 0)
                m_state = m_state == State::Length ? State::Done : State::ChunkCrlf;
        }
    }
    if (m_state == State::Done)
        m_in.clear();
    else
        m_in.remove(0, pos);
}

} // namespace slp::bench
