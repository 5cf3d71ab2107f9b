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
    const qint64 available = m_socket->bytesAvailable();
    if (available <= 0)
        return;
    // QtHttpServer 6.4 reads inside a QIODevice transaction that stays open until a request is
    // complete: with no transaction open, the unread bytes start a new request; with one open,
    // they are new bytes of the request under way.
    const bool continuing = m_socket->isTransactionStarted();
    if (!continuing) {
        m_framer.reset();
        m_continueSent = false;
    }
    QByteArray body; // the bytes of this read that belong to the current request's body
    if (m_framer.inHead()) {
        if (!readHead(available, &body))
            return;
    } else if (continuing && m_framer.wantsBodyBytes()) {
        body = m_socket->peek(available);
    }
    if (!body.isEmpty() && m_framer.feedBody(body) == RequestFramer::Verdict::Rejected)
        rejectWith(m_framer.errorStatus(), m_framer.errorMessage());
}

bool ClientConnection::readHead(qint64 available, QByteArray *body)
{
    // Only the head is parsed from here: at most its limit is copied, however much the read
    // holds.
    qsizetype headBytes = 0;
    const auto verdict = m_framer.feedHead(
        m_socket->peek(std::min<qint64>(available, m_framer.headRoom())), &headBytes);
    if (verdict == RequestFramer::Verdict::Rejected) {
        rejectWith(m_framer.errorStatus(), m_framer.errorMessage());
        return false;
    }
    if (verdict == RequestFramer::Verdict::NeedMore) {
        if (!m_headerTimer.isActive())
            m_headerTimer.start(m_limits.headerTimeout); // from the head's first byte
        return false;
    }
    m_headerTimer.stop();
    if (m_framer.wantsBodyBytes()) {
        // Every body byte of this read, however the read was split from the head.
        *body = m_socket->peek(available).mid(headBytes);
    }
    answerExpect(available, headBytes);
    // The body's deadline runs from the end of the head, not from each read: a trickle
    // cannot hold the connection forever.
    m_bodyTimer.start(m_limits.idleTimeout);
    return true;
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
    InboundHandoff handoff(takeHead(), dispatchedBody,
                           m_socket ? m_socket->peerAddress() : QHostAddress());
    if (handoff.isRefused()) {
        rejectWith(handoff.refusalStatus(), handoff.refusalMessage());
        return;
    }
    ResponseWriter *writer = openWriter(handoff.responseContext());
    m_responses.dispatch(handoff.takeRequest(), writer, handler);
}

RequestHead ClientConnection::takeHead()
{
    if (m_framer.inHead())
        return {};
    m_bodyTimer.stop();
    RequestHead head = m_framer.takeHead();
    m_framer.reset();
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
