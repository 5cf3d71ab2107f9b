// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/clientconnection.h"

#include "http/inboundhandoff.h"

#include "net/sockethandover.h"

#include <QTcpSocket>

namespace slp {

namespace {

// A dispatched request's body memory, held until its response is done (a Qt child of the
// response's writer): then the budget gets its bytes back, and a large body's freed pages go
// back to the system.
class HeldBody : public QObject
{
public:
    HeldBody(std::vector<std::unique_ptr<BodyBudget::Lease>> leases, qint64 bytes, QObject *parent)
        : QObject(parent), m_leases(std::move(leases)), m_bytes(bytes)
    {}
    ~HeldBody() override
    {
        if (m_bytes >= BodyBudget::kLargeBody)
            BodyBudget::returnFreedMemorySoon();
    }

private:
    std::vector<std::unique_ptr<BodyBudget::Lease>> m_leases;
    qint64 m_bytes;
};

} // namespace

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

ClientConnection::~ClientConnection()
{
    budget().cancel(this);
    // A large body cut short (the client left mid-upload, or it was refused) frees its pages
    // here, not through a HeldBody: they go back to the system the same way.
    if (m_reserved >= BodyBudget::kLargeBody || m_largeBodyRefused)
        BodyBudget::returnFreedMemorySoon();
}

BodyBudget &ClientConnection::budget() const
{
    return m_limits.bodyBudget ? *m_limits.bodyBudget : BodyBudget::process();
}

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
    if (m_tunneled)
        return;
    if (m_waitingForBudget || (m_upgradeAsked && !m_awaitingDispatch)) {
        hideUnread();
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
    m_upgradeAsked = m_framer.head().webSocketUpgrade;
    answerExpect(available, headBytes);
    // The body's deadline runs from the end of the head, not from each read: a trickle
    // cannot hold the connection forever.
    m_bodyTimer.start(m_limits.idleTimeout);
    if (!m_framer.wantsBodyBytes()) {
        m_modelScan.reset();
        handToFront();
        return true;
    }
    m_modelScan = m_limits.scanModel ? m_limits.scanModel(m_framer.head()) : nullptr;
    return m_framer.isChunked() || reserveBody(m_framer.bodyRemaining());
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
        if (!reserveChunkedRoom(bytes.size()))
            return false;
        qsizetype used = 0;
        verdict = m_framer.feedBody(bytes, &used);
        if (verdict == RequestFramer::Verdict::Rejected) {
            rejectWith(m_framer.errorStatus(), m_framer.errorMessage());
            return false;
        }
        m_socket->skip(used);
    }
    if (m_modelScan)
        m_modelScan->arrived(m_framer.bodySoFar());
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

bool ClientConnection::reserveBody(qint64 bytes)
{
    const qint64 limit = budget().limit();
    if (m_reserved + bytes > limit) {
        // It could never fit, however long it waited.
        const qint64 size = m_framer.isChunked() ? m_framer.decodedBytes() : bytes;
        rejectWith(413, QByteArray(m_framer.isChunked() ? "chunked request body grew past "
                                                        : "request body of ") +
                            QByteArray::number(size) +
                            " bytes is larger than "
                            "max_buffered_body_bytes (" +
                            QByteArray::number(limit) + " bytes)");
        return false;
    }
    auto lease = budget().tryAcquire(
        bytes, this, [this](std::unique_ptr<BodyBudget::Lease> l) { resumeWith(std::move(l)); });
    if (!lease) {
        waitForBudget();
        return false;
    }
    m_reserved += lease->bytes();
    m_leases.push_back(std::move(lease));
    return true;
}

bool ClientConnection::reserveChunkedRoom(qint64 incoming)
{
    // A chunked body's size is unknown until its end: it holds room for what it decoded so
    // far and what this read may add, and asks for more by doubling, as its buffer grows,
    // never past the budget's limit.
    const qint64 needed = m_framer.decodedBytes() + incoming;
    if (needed <= m_reserved)
        return true;
    const qint64 room = budget().limit() - m_reserved;
    const qint64 step = std::max({needed - m_reserved, m_reserved, qint64(64 * 1024)});
    return reserveBody(needed - m_reserved > room ? needed - m_reserved : std::min(step, room));
}

void ClientConnection::waitForBudget()
{
    // The connection stops reading: Qt takes at most kPausedReadBuffer more from the kernel,
    // and TCP holds the client back. The body timer still runs (a 408 at its end).
    m_waitingForBudget = true;
    m_socket->setReadBufferSize(kPausedReadBuffer);
    hideUnread();
}

void ClientConnection::hideUnread()
{
    // Read inside a transaction of SLP's own, the bytes stay in the socket's buffer but
    // QtHttpServer's reader, which finds a transaction open, reads nothing past them.
    if (!m_socket->isTransactionStarted())
        m_socket->startTransaction();
    m_socket->skip(m_socket->bytesAvailable());
}

void ClientConnection::resumeWith(std::unique_ptr<BodyBudget::Lease> lease)
{
    if (!m_waitingForBudget || !m_socket)
        return; // refused meanwhile: the lease goes back
    m_reserved += lease->bytes();
    m_leases.push_back(std::move(lease));
    stopWaitingForBudget();
    Q_EMIT m_socket->readyRead(); // the held bytes, for SLP's reader and then Qt's
}

void ClientConnection::stopWaitingForBudget()
{
    if (!m_waitingForBudget)
        return;
    m_waitingForBudget = false;
    budget().cancel(this);
    if (!m_socket)
        return;
    if (m_socket->isTransactionStarted())
        m_socket->rollbackTransaction();
    m_socket->setReadBufferSize(0);
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
    if (!m_leases.empty()) // a Qt child of the writer, released with it
        new HeldBody(std::exchange(m_leases, {}), body.size(), writer);
    m_reserved = 0;
    InboundRequest request = handoff.takeRequest();
    request.modelScan = std::move(m_modelScan);
    m_responses.dispatch(std::move(request), writer, handler);
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

int ClientConnection::takeForTunnel(QByteArray *early)
{
    if (!m_socket || m_socket->state() != QAbstractSocket::ConnectedState || m_tunneled)
        return -1;
    if (m_socket->isTransactionStarted())
        m_socket->rollbackTransaction();
    QByteArray unread = m_socket->readAll();
    // Nothing acts on the socket any more: not QtHttpServer's reader, nor its delete on
    // disconnect, nor the response queue, nor this connection. `destroyed` stays connected:
    // the listener gives the connection's place back when the tunnel deletes the socket.
    const int fd = takeDescriptor(m_socket);
    if (fd < 0)
        return -1;
    *early = std::move(unread);
    m_tunneled = true;
    m_headerTimer.stop();
    m_idleTimer.stop();
    m_bodyTimer.stop();
    return fd;
}

void ClientConnection::beginShutdown()
{
    if (m_tunneled)
        return; // a tunnel is closed by its own end, or when the shutdown grace is over
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
    stopWaitingForBudget();
    m_largeBodyRefused = m_reserved >= BodyBudget::kLargeBody;
    m_leases.clear();
    m_reserved = 0;
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
    rejectWith(408, m_waitingForBudget
                        ? "request body not read in time: it waited for max_buffered_body_bytes"
                        : "request body not received in time");
}

void ClientConnection::armIdleTimer()
{
    if (m_tunneled)
        return;
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
