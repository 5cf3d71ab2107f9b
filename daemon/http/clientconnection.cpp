// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/clientconnection.h"

#include "net/sockethandover.h"

#include <QTcpSocket>

namespace slp {

FramedRequest FramedRequest::fromHead(const RequestHead &head, const QHostAddress &peer)
{
    FramedRequest framed;
    InboundRequest &r = framed.request;
    r.method = head.method;
    r.setTarget(head.target);
    r.headers = head.headers;
    r.clientAddress = clientAddress(peer);
    r.webSocketUpgrade = head.webSocketUpgrade;
    // After an upgrade request the connection is a tunnel or nothing: an answer closes it.
    framed.response.keepAlive = head.keepAlive && !head.webSocketUpgrade;
    framed.response.versionMinor = head.versionMinor;
    framed.response.headRequest = head.method == "HEAD";
    return framed;
}

QByteArray FramedRequest::clientAddress(const QHostAddress &peer)
{
    bool mapped = false;
    const quint32 v4 = peer.toIPv4Address(&mapped);
    return (mapped ? QHostAddress(v4) : peer).toString().toLatin1();
}

ClientConnection::ClientConnection(QTcpSocket *socket, const ConnectionSettings &settings)
    : QObject(socket), m_socket(socket), m_settings(settings), m_responses(socket),
      m_framer(settings.head), m_body(*settings.bodies, this, [this] { onMemoryGranted(); })
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
    m_headerTimer.start(m_settings.headerTimeout);
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
    if (m_stage == Stage::Rejected || m_responses.isClosing()) {
        m_socket->readAll(); // nothing more is read from a connection being closed
        return;
    }
    if (m_stage == Stage::WaitingForMemory || m_stage == Stage::Upgrading)
        return hideUnread();
    if (m_stage != Stage::Head && m_stage != Stage::Body)
        return; // Dispatching (Qt's turn) or Tunneled
    // QtHttpServer's reader ran after ours on the last read and found nothing: it left an
    // empty transaction open, which would keep every byte read from now on for a rollback.
    if (m_socket->isTransactionStarted())
        m_socket->commitTransaction();
    while ((m_stage == Stage::Head || m_stage == Stage::Body) && m_socket->bytesAvailable() > 0)
        if (!(m_stage == Stage::Head ? readHead() : readBody()))
            return;
#ifdef SLP_MEASURE_WITHOUT_QT_HOP
    if (m_stage == Stage::Dispatching && m_settings.handlerWithoutQt)
        dispatch(*m_settings.handlerWithoutQt);
#endif
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
            m_headerTimer.start(m_settings.headerTimeout); // from the head's first byte
        return true;
    }
    return headDone(available, headBytes);
}

bool ClientConnection::headDone(qint64 available, qsizetype headBytes)
{
    m_headerTimer.stop();
    const RequestHead &head = m_framer.head();
    m_request = FramedRequest::fromHead(head, m_socket->peerAddress());
    // QtHttpServer ignores Expect: clients such as curl would wait a second before the body.
    // Queued as a response: it must never land inside an earlier one still being written.
    if (head.expectContinue && (head.chunked || head.contentLength > 0) && available == headBytes)
        openWriter({})->writeContinue();
    // The body's deadline runs from the end of the head, not from each read: a trickle
    // cannot hold the connection forever.
    m_bodyTimer.start(m_settings.idleTimeout);
    if (!m_framer.wantsBodyBytes()) {
        passThroughQt();
        return true;
    }
    m_stage = Stage::Body;
    if (m_settings.scanModel)
        m_request.request.modelScan = m_settings.scanModel(head);
    return m_framer.isChunked() || reserved(m_body.reserve(m_framer.bodyRemaining()));
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
        if (!reserved(m_body.reserveChunked(m_framer.decodedBytes(), bytes.size())))
            return false;
        qsizetype used = 0;
        verdict = m_framer.feedBody(bytes, &used);
        if (verdict == RequestFramer::Verdict::Rejected) {
            rejectWith(m_framer.errorStatus(), m_framer.errorMessage());
            return false;
        }
        m_socket->skip(used);
    }
    if (m_request.request.modelScan)
        m_request.request.modelScan->arrived(m_framer.bodySoFar());
    if (verdict == RequestFramer::Verdict::BodyComplete)
        passThroughQt();
    return true;
}

void ClientConnection::passThroughQt()
{
    // The Qt hop. QtHttpServer stays SLP's front, and it dispatches every request, but never
    // reads one: SLP took the head and the body off the socket itself and puts back a head of
    // its own, which Qt parses at once (its reader runs right after this one, on the same
    // read) and dispatches to dispatch(). docs/QT64.md, "SLP reads, Qt dispatches"; what the
    // hop costs per request is measured in docs/DECISIONS.md, "QtHttpServer stays the front".
    static const QByteArray kDispatch = QByteArrayLiteral("GET / HTTP/1.1\r\nHost: slp\r\n\r\n");
    m_request.request.body = m_framer.takeBody();
    m_stage = Stage::Dispatching;
#ifdef SLP_MEASURE_WITHOUT_QT_HOP
    if (m_settings.handlerWithoutQt)
        return; // onReadyRead() dispatches it once the read loop stops
#endif
    for (auto it = kDispatch.crbegin(); it != kDispatch.crend(); ++it)
        m_socket->ungetChar(*it);
}

void ClientConnection::dispatch(RequestHandler &handler)
{
    if (m_stage != Stage::Dispatching || m_responses.isClosingAfterResponse())
        return; // answered with an error, or after a request that closes: never handled
    m_bodyTimer.stop();
    m_framer.reset();
    FramedRequest framed = std::exchange(m_request, {});
    m_stage = framed.request.webSocketUpgrade ? Stage::Upgrading : Stage::Head;
    ResponseWriter *writer = openWriter(framed.response);
    m_body.handOver(writer, framed.request.body.size());
    m_responses.dispatch(std::move(framed.request), writer, handler);
    // Qt reads once per read event: a pipelined request already in the buffer would wait
    // for bytes that may never come. Another turn reads it, for SLP's reader and Qt's.
    if (m_socket && m_socket->bytesAvailable() > 0)
        QMetaObject::invokeMethod(m_socket.data(), &QIODevice::readyRead, Qt::QueuedConnection);
}

bool ClientConnection::reserved(BodyReservation::Answer answer)
{
    switch (answer) {
    case BodyReservation::Answer::Granted:
        return true;
    case BodyReservation::Answer::Waiting:
        // The connection stops reading: Qt takes at most kPausedReadBuffer more from the
        // kernel, and TCP holds the client back. The body timer still runs (a 408 at its end).
        m_stage = Stage::WaitingForMemory;
        m_socket->setReadBufferSize(kPausedReadBuffer);
        hideUnread();
        return false;
    case BodyReservation::Answer::TooLarge:
        break;
    }
    // It could never fit, however long it waited.
    const bool chunked = m_framer.isChunked();
    rejectWith(
        413, QByteArray(chunked ? "chunked request body grew past " : "request body of ") +
                 QByteArray::number(chunked ? m_framer.decodedBytes() : m_framer.bodyRemaining()) +
                 " bytes is larger than max_buffered_body_bytes (" +
                 QByteArray::number(m_body.limit()) + " bytes)");
    return false;
}

void ClientConnection::onMemoryGranted()
{
    if (m_stage != Stage::WaitingForMemory || !m_socket)
        return;
    m_stage = Stage::Body;
    readAgain();
    Q_EMIT m_socket->readyRead(); // the held bytes, for SLP's reader and then Qt's
}

void ClientConnection::hideUnread()
{
    // Read inside a transaction of SLP's own, the bytes stay in the socket's buffer but
    // QtHttpServer's reader, which finds a transaction open, reads nothing past them.
    if (!m_socket->isTransactionStarted())
        m_socket->startTransaction();
    m_socket->skip(m_socket->bytesAvailable());
}

void ClientConnection::readAgain()
{
    if (m_socket->isTransactionStarted())
        m_socket->rollbackTransaction();
    m_socket->setReadBufferSize(0);
}

ResponseWriter *ClientConnection::openWriter(const ResponseContext &context)
{
    m_idleTimer.stop();
    return m_responses.open(context);
}

int ClientConnection::takeForTunnel(QByteArray *early)
{
    if (!m_socket || m_socket->state() != QAbstractSocket::ConnectedState ||
        m_stage == Stage::Tunneled)
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
    m_stage = Stage::Tunneled;
    m_headerTimer.stop();
    m_idleTimer.stop();
    m_bodyTimer.stop();
    return fd;
}

void ClientConnection::beginShutdown()
{
    if (m_stage == Stage::Tunneled)
        return; // a tunnel is closed by its own end, or when the shutdown grace is over
    m_responses.closeAfterOwed();
    if (!m_socket || m_responses.isClosing())
        return;
    // Idle (between requests, or in a head that has not completed): nothing is owed.
    if (m_responses.isEmpty() && m_stage == Stage::Head)
        m_responses.close();
}

void ClientConnection::rejectWith(int status, const QByteArray &message)
{
    Q_EMIT requestRejected(status);
    if (m_socket && m_stage == Stage::WaitingForMemory)
        readAgain(); // the held bytes are dropped below with the rest
    m_body.release();
    m_stage = Stage::Rejected;
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
    if (m_stage == Stage::Head)
        rejectWith(408, "request head not received in time");
}

void ClientConnection::onBodyTimeout()
{
    if ((m_stage != Stage::Body && m_stage != Stage::WaitingForMemory) || m_responses.isClosing())
        return;
    rejectWith(408, m_stage == Stage::WaitingForMemory
                        ? "request body not read in time: it waited for max_buffered_body_bytes"
                        : "request body not received in time");
}

void ClientConnection::armIdleTimer()
{
    // Not while a request is still arriving: its body has its own timer.
    if (m_stage == Stage::Head && m_responses.isEmpty() && !m_responses.isClosing() &&
        !m_headerTimer.isActive())
        m_idleTimer.start(m_settings.idleTimeout);
}

void ClientConnection::onDisconnected()
{
    m_headerTimer.stop();
    m_idleTimer.stop();
    m_bodyTimer.stop();
    m_responses.abandon();
}

} // namespace slp
