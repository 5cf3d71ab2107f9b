// SPDX-License-Identifier: GPL-3.0-or-later
#include "net/socketrelay.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace slp {

namespace {
// One read() at most: a WebSocket frame of audio is rarely larger.
constexpr qsizetype kReadChunk = 64 * 1024;
} // namespace

SocketRelay::SocketRelay(int clientFd, int upstreamFd, QByteArray toUpstream, QByteArray toClient,
                         qint64 bufferBytes, QObject *parent)
    : QObject(parent), m_bufferBytes(std::max<qint64>(bufferBytes, kReadChunk))
{
    setUp(m_client, clientFd);
    setUp(m_upstream, upstreamFd);
    m_up = {&m_client, &m_upstream, End::ClientFailed, End::UpstreamFailed, std::move(toUpstream)};
    m_down = {&m_upstream, &m_client, End::UpstreamFailed, End::ClientFailed, std::move(toClient)};
    connect(
        m_client.readable.get(), &QSocketNotifier::activated, this, [this] { onReadable(m_up); });
    connect(
        m_upstream.readable.get(), &QSocketNotifier::activated, this,
        [this] { onReadable(m_down); });
    connect(
        m_upstream.writable.get(), &QSocketNotifier::activated, this,
        [this] {
            if (flush(m_up))
                updateNotifiers();
        });
    connect(m_client.writable.get(), &QSocketNotifier::activated, this, [this] {
        if (flush(m_down))
            updateNotifiers();
    });
    m_idle.setSingleShot(true);
    connect(&m_idle, &QTimer::timeout, this, [this] { finish(End::Idle); });
    // What arrived before the relay goes first; then both sides are read.
    if (flush(m_up) && flush(m_down))
        updateNotifiers();
}

SocketRelay::~SocketRelay()
{
    m_finished = true; // no signal from a destructor
    for (Side *side : {&m_client, &m_upstream}) {
        side->readable.reset();
        side->writable.reset();
        if (side->fd >= 0)
            ::close(side->fd);
    }
}

void SocketRelay::setUp(Side &side, int fd)
{
    side.fd = fd;
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    side.readable = std::make_unique<QSocketNotifier>(fd, QSocketNotifier::Read);
    side.writable = std::make_unique<QSocketNotifier>(fd, QSocketNotifier::Write);
    side.writable->setEnabled(false);
}

void SocketRelay::setIdleTimeout(std::chrono::milliseconds timeout)
{
    if (timeout.count() <= 0) {
        m_idle.stop();
        m_idle.setInterval(0);
        return;
    }
    m_idle.setInterval(timeout);
    if (!m_finished)
        m_idle.start();
}

void SocketRelay::activity()
{
    if (m_idle.interval() > 0)
        m_idle.start(); // restarted by every byte either way
}

void SocketRelay::onReadable(Direction &d)
{
    if (m_finished || d.sourceEnded)
        return;
    const qint64 room = m_bufferBytes - (d.pending.size() - d.offset);
    if (room <= 0) {
        updateNotifiers(); // full: the source waits until the destination takes some
        return;
    }
    if (d.offset > 0 && d.offset == d.pending.size()) {
        d.pending.clear();
        d.offset = 0;
    }
    const qsizetype had = d.pending.size();
    const qsizetype want = qsizetype(std::min<qint64>(room, kReadChunk));
    d.pending.resize(had + want);
    const ssize_t n = ::recv(d.from->fd, d.pending.data() + had, size_t(want), 0);
    d.pending.resize(had + std::max<qsizetype>(0, qsizetype(n)));
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return;
        return finish(d.readFailure);
    }
    if (n == 0)
        d.sourceEnded = true; // its EOF: passed on once what came before it is written
    else
        activity();
    if (flush(d))
        updateNotifiers();
}

bool SocketRelay::flush(Direction &d)
{
    while (d.offset < d.pending.size()) {
        const ssize_t n = ::send(d.to->fd, d.pending.constData() + d.offset,
                                 size_t(d.pending.size() - d.offset), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            if (errno == EINTR)
                continue;
            finish(d.writeFailure);
            return false;
        }
        d.offset += n;
        d.moved += n;
        activity();
    }
    if (d.offset == d.pending.size()) {
        d.pending.clear();
        d.offset = 0;
        if (d.sourceEnded && !d.shutDown) {
            d.shutDown = true;
            ::shutdown(d.to->fd, SHUT_WR);
        }
    } else if (d.offset > m_bufferBytes) {
        d.pending.remove(0, d.offset); // keep the buffer from creeping
        d.offset = 0;
    }
    if (m_up.shutDown && m_down.shutDown) {
        finish(End::Closed);
        return false;
    }
    return true;
}

void SocketRelay::updateNotifiers()
{
    if (m_finished)
        return;
    for (Direction *d : {&m_up, &m_down}) {
        const qint64 held = d->pending.size() - d->offset;
        d->from->readable->setEnabled(!d->sourceEnded && held < m_bufferBytes);
        d->to->writable->setEnabled(held > 0);
    }
}

void SocketRelay::cut()
{
    finish(End::Cut);
}

void SocketRelay::finish(End end)
{
    if (m_finished)
        return;
    m_finished = true;
    m_idle.stop();
    for (Side *side : {&m_client, &m_upstream}) {
        side->readable->setEnabled(false);
        side->writable->setEnabled(false);
        ::close(side->fd);
        side->fd = -1;
    }
    Q_EMIT finished(end);
}

const char *SocketRelay::endName(End end)
{
    switch (end) {
    case End::Closed:
        return "closed";
    case End::ClientFailed:
        return "client reset";
    case End::UpstreamFailed:
        return "upstream reset";
    case End::Idle:
        return "idle";
    case End::Cut:
        return "cut at shutdown";
    }
    return "?";
}

} // namespace slp
