// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/clientconnection.h"

#include "http/inboundhandoff.h"

#include <QTcpSocket>

namespace slp {

ClientConnection::ClientConnection(QTcpSocket *socket, const ConnectionLimits &limits)
    : QObject(socket), m_socket(socket), m_limits(limits), m_responses(socket),
      m_framer(limits.head)
{
    m_headerTimer.setSingleShot(true);
    m_idleTimer.setSingleShot(true);
    m_bodyTimer.setSingleShot(true);
    connect(&m_headerTimer, &QTimer::timeout, this, &ClientConnection::onHeaderTimeout);
    connect(&m_bodyTimer, &QTimer::timeout, this, &ClientConnection::onBodyTimeout);
    connect(&m_idleTimer, &QTimer::timeout, this, [this] {
        if (m_socket)
            m_socket->disconnectFromHost();
    });
    connect(&m_responses, &ResponseQueue::drained, this, &ClientConnection::armIdleTimer);
    // Connected before QtHttpServer's own handler (the listener attaches this first), so every
    // byte is checked here before Qt's lenient parser buffers it.
    connect(socket, &QTcpSocket::readyRead, this, &ClientConnection::onReadyRead);
    connect(socket, &QTcpSocket::disconnected, this, &ClientConnection::onDisconnected);
    // A connection that never sends a byte gets the header timeout, not the idle timeout.
    m_headerTimer.start(m_limits.headerTimeout);
}

ClientConnection::~ClientConnection() = default;

ClientConnection *ClientConnection::of(QTcpSocket *socket)
{
    return socket ? socket->findChild<ClientConnection *>(QString(), Qt::FindDirectChildrenOnly)
                  : nullptr;
}

void ClientConnection::onReadyRead()
{
    if (!m_socket)
        return;
    m_idleTimer.stop();
    if (m_rejected || m_responses.isClosing()) {
        m_socket->readAll(); // nothing more is read from a connection being closed
        return;
    }
    // QtHttpServer's reader ran after ours on the last read and found nothing: it left an
    // empty transaction open, which would keep every byte read from now on for a rollback.
    if (!m_awaitingDispatch && m_socket->isTransactionStarted())
        m_socket->commitTransaction();
    while (!m_awaitingDispatch && m_socket->bytesAvailable() > 0)
        if (!(m_framer.inHead() ? readHead() : readBody()))
            return;
}

bool ClientConnection::readHead()
{
    // Only the head is parsed from here: at most its limit is copied, however much the read
    // holds; what follows the head stays in the socket for readBody().
    const qint64 available = m_socket->bytesAvailable();
    const QByteArray bytes = m_socket->peek(std::min<qint64>(available, m_framer.headRoom()));
    qsizetype headBytes = bytes.size();
    const auto verdict = m_framer.feedHead(bytes, &headBytes);
    if (verdict == RequestFramer::Verdict::Rejected) {
        rejectWith(m_framer.errorStatus(), m_framer.errorMessage());
        return false;
    }
    m_socket->skip(headBytes);
    if (verdict == RequestFramer::Verdict::NeedMore) {
        if (!m_headerTimer.isActive())
            m_headerTimer.start(m_limits.headerTimeout); // from the head's first byte
        return true;
    }
    m_headerTimer.stop();
    answerExpect(available, headBytes);
    // The body's deadline runs from the end of the head, not from each read: a trickle
    // cannot hold the connection forever.
    m_bodyTimer.start(m_limits.idleTimeout);
    if (!m_framer.wantsBodyBytes())
        handToFront();
    return true;
}

bool ClientConnection::readBody()
{
    RequestFramer::Verdict verdict = RequestFramer::Verdict::NeedMore;
    if (!m_framer.isChunked()) {
        // Straight from Qt's read buffer into the body's one buffer.
        const qint64 n = std::min(m_socket->bytesAvailable(), m_framer.bodyRemaining());
        const qint64 got = m_socket->read(m_framer.bodyWindow(), n);
        if (got <= 0)
            return false;
        verdict = m_framer.bodyWritten(got);
    } else {
        const QByteArray bytes =
            m_socket->peek(std::min<qint64>(m_socket->bytesAvailable(), kChunkedReadBytes));
        qsizetype used = 0;
        verdict = m_framer.feedBody(bytes, &used);
        if (verdict == RequestFramer::Verdict::Rejected) {
            rejectWith(m_framer.errorStatus(), m_framer.errorMessage());
            return false;
        }
        m_socket->skip(used);
    }
    if (verdict == RequestFramer::Verdict::BodyComplete)
        handToFront();
    return true;
}

void ClientConnection::handToFront()
{
    // QtHttpServer dispatches every request, but never reads one: SLP took the head and the
    // body off the socket itself, and puts back a head of its own that Qt parses at once
    // (its reader runs right after this one, on the same read) and dispatches to
    // receive(), with no body. docs/QT64.md, "SLP reads, Qt dispatches".
    static const QByteArray kDispatch = QByteArrayLiteral("GET / HTTP/1.1\r\nHost: slp\r\n\r\n");
    m_awaitingDispatch = true;
    for (auto it = kDispatch.crbegin(); it != kDispatch.crend(); ++it)
        m_socket->ungetChar(*it);
}

void ClientConnection::answerExpect(qint64 available, qsizetype headBytes)
{
    // QtHttpServer ignores Expect: clients such as curl would wait a second before the body.
    const RequestHead &head = m_framer.head();
    const bool hasBody = head.chunked || head.contentLength > 0;
    if (head.expectContinue && hasBody && !m_continueSent && available == headBytes) {
        m_continueSent = true;
        // Queued: it must never land inside an earlier response still being written.
        openWriter({})->writeContinue();
    }
}

void ClientConnection::receive(const QByteArray &dispatchedBody, RequestHandler &handler)
{
    if (m_rejected || m_responses.isClosingAfterResponse())
        return; // answered with an error, or after a request that closes: never handled
    if (!m_awaitingDispatch || !dispatchedBody.isEmpty()) {
        // Qt dispatched bytes SLP did not hand it: its framing and SLP's disagree.
        rejectWith(400, "request framing could not be confirmed");
        return;
    }
    m_awaitingDispatch = false;
    QByteArray body = m_framer.takeBody();
    InboundHandoff handoff(takeHead(), body, m_socket ? m_socket->peerAddress() : QHostAddress());
    if (handoff.isRefused()) {
        rejectWith(handoff.refusalStatus(), handoff.refusalMessage());
        return;
    }
    ResponseWriter *writer = openWriter(handoff.responseContext());
    m_responses.dispatch(handoff.takeRequest(), writer, handler);
    // Qt reads once per read event: a pipelined request already in the buffer would wait
    // for bytes that may never come. Another turn reads it, for SLP's reader and Qt's.
    if (m_socket && m_socket->bytesAvailable() > 0)
        QMetaObject::invokeMethod(m_socket.data(), &QIODevice::readyRead, Qt::QueuedConnection);
}

RequestHead ClientConnection::takeHead()
{
    if (m_framer.inHead())
        return {};
    m_bodyTimer.stop();
    RequestHead head = m_framer.takeHead();
    m_framer.reset();
    m_continueSent = false;
    return head;
}

ResponseWriter *ClientConnection::openWriter(const ResponseContext &context)
{
    m_idleTimer.stop();
    return m_responses.open(context);
}

void ClientConnection::beginShutdown()
{
    m_responses.closeAfterOwed();
    if (!m_socket || m_responses.isClosing())
        return;
    if (m_responses.isEmpty() && m_framer.inHead()) {
        // Idle (between requests, or in a head that has not completed): nothing is owed.
        m_responses.close();
    }
}

void ClientConnection::rejectWith(int status, const QByteArray &message)
{
    Q_EMIT requestRejected(status);
    m_rejected = true;
    m_responses.lingerOnClose(); // the rest of the request may still be on its way
    m_headerTimer.stop();
    m_bodyTimer.stop();
    if (m_socket)
        m_socket->readAll();
    ResponseContext context;
    context.keepAlive = false;
    openWriter(context)->respondError(status, QString::fromLatin1(message));
}

void ClientConnection::onHeaderTimeout()
{
    if (!m_framer.inHead() || m_rejected)
        return;
    rejectWith(408, "request head not received in time");
}

void ClientConnection::onBodyTimeout()
{
    if (m_framer.inHead() || m_rejected || m_responses.isClosing())
        return;
    rejectWith(408, "request body not received in time");
}

void ClientConnection::armIdleTimer()
{
    // Not while a request is still arriving: its body has its own timer.
    if (m_responses.isEmpty() && !m_responses.isClosing() && !m_headerTimer.isActive() &&
        m_framer.inHead())
        m_idleTimer.start(m_limits.idleTimeout);
}

void ClientConnection::onDisconnected()
{
    m_headerTimer.stop();
    m_idleTimer.stop();
    m_bodyTimer.stop();
    m_responses.abandon();
}

} // namespace slp
