// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/qnam/qnamcall.h"

#include "upstream/qnam/qnamfence.h"
#include "upstream/qnam/qnamtransport.h"
#include "upstream/upstreamhead.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>

#include <cstring>

namespace slp {

namespace {
constexpr qint64 kReplyReadBuffer = 256 * 1024; // QNAM stops reading the socket past this
// Until the head says how the body ends (QnamCall::onMetaData): large enough that a
// close-delimited body that arrives whole with its close is read to the end before the
// bound is lifted, small enough to hold a fast upstream back from the first byte.
constexpr qint64 kReplyReadBufferBeforeHead = 4 * 1024 * 1024;
constexpr int kMaxUnsentRedials = 3; // re-sends of a request that never left SLP

UpstreamCall::Failure classify(QNetworkReply::NetworkError error, bool headArrived)
{
    switch (error) {
    case QNetworkReply::NoError:
        return UpstreamCall::Failure::None;
    case QNetworkReply::ConnectionRefusedError:
        return UpstreamCall::Failure::Refused;
    case QNetworkReply::RemoteHostClosedError:
        return headArrived ? UpstreamCall::Failure::BrokenBody : UpstreamCall::Failure::Closed;
    case QNetworkReply::HostNotFoundError:
        return UpstreamCall::Failure::NameLookup;
    case QNetworkReply::OperationCanceledError:
        return UpstreamCall::Failure::Aborted;
    case QNetworkReply::ContentReSendError:
        // A reused connection closed before the answer (see OneShotBody).
        return headArrived ? UpstreamCall::Failure::BrokenBody : UpstreamCall::Failure::Closed;
    case QNetworkReply::ProtocolFailure:
    case QNetworkReply::ProtocolUnknownError:
    case QNetworkReply::ProtocolInvalidOperationError:
        return headArrived ? UpstreamCall::Failure::BrokenBody : UpstreamCall::Failure::Protocol;
    default:
        break;
    }
    // Errors from 201 up mirror an HTTP status the upstream sent: a complete, relayed answer.
    if (headArrived && int(error) >= int(QNetworkReply::ContentAccessDenied))
        return UpstreamCall::Failure::None;
    return headArrived ? UpstreamCall::Failure::BrokenBody : UpstreamCall::Failure::Other;
}

// The reply's head as SLP relays it: repeated fields apart again, the length when given.
UpstreamHead headOf(QNetworkReply &reply, int status, bool *chunked)
{
    UpstreamHead head;
    head.status = status;
    head.reason = reply.attribute(QNetworkRequest::HttpReasonPhraseAttribute).toByteArray();
    const auto pairs = reply.rawHeaderPairs();
    head.headers.reserve(pairs.size());
    for (const auto &[name, value] : pairs) {
        // QNAM joins repeated Set-Cookie headers with '\n'; split them apart again.
        if (value.contains('\n'))
            for (const QByteArray &part : value.split('\n'))
                head.headers.append({name, part});
        else
            head.headers.append({name, value});
        if (equalsNoCase(name, "content-length")) {
            bool ok = false;
            const qint64 length = value.trimmed().toLongLong(&ok);
            head.contentLength = ok ? length : -1;
        } else if (equalsNoCase(name, "transfer-encoding")) {
            *chunked = hasToken(value, "chunked");
        }
    }
    return head;
}
} // namespace

// The request body as a sequential device QNAM cannot rewind. Qt 6.4 silently re-sends a
// request when a reused connection closes before the answer; for a POST that means a second
// generation on the GPU. Without a way back to the start of the body, QNAM reports
// ContentReSendError instead, and SLP's own retry rule (retry: true, once) decides.
class OneShotBody : public QIODevice
{
public:
    explicit OneShotBody(ByteChain body, QObject *parent)
        : QIODevice(parent), m_body(std::move(body))
    {
        open(QIODevice::ReadOnly);
    }
    bool isSequential() const override { return true; }
    bool reset() override { return m_pos == 0; }
    qint64 bytesAvailable() const override
    {
        return m_body.size() - m_pos + QIODevice::bytesAvailable();
    }
    bool atEnd() const override { return m_pos >= m_body.size() && QIODevice::atEnd(); }
    // Nothing of the body left SLP: QNAM never put this request on a socket.
    bool untouched() const { return m_pos == 0 && !m_body.isEmpty(); }

protected:
    // Reads across the chain's pieces: the body is never joined into one copy.
    qint64 readData(char *data, qint64 maxSize) override
    {
        qint64 n = 0;
        const QList<QByteArray> &pieces = m_body.pieces();
        while (n < maxSize && m_piece < pieces.size()) {
            const QByteArray &piece = pieces.at(m_piece);
            const qint64 take = std::min<qint64>(maxSize - n, piece.size() - m_inPiece);
            std::memcpy(data + n, piece.constData() + m_inPiece, size_t(take));
            n += take;
            m_inPiece += take;
            if (m_inPiece == piece.size()) {
                ++m_piece;
                m_inPiece = 0;
            }
        }
        m_pos += n;
        return n;
    }
    qint64 writeData(const char *, qint64) override { return -1; }

private:
    ByteChain m_body;
    qint64 m_pos = 0;
    qsizetype m_piece = 0;   // the piece being read
    qsizetype m_inPiece = 0; // bytes of it read
};

QnamCall::QnamCall(QnamTransport *transport, QString origin, UpstreamRequest request,
                   Observer &observer)
    : UpstreamCall(observer), m_transport(transport), m_origin(std::move(origin)),
      m_request(std::move(request))
{
    send();
}

QnamCall::~QnamCall()
{
    dropReply();
    detachManager();
}

qint64 QnamCall::bytesAvailable() const
{
    return m_reply ? m_reply->bytesAvailable() : 0;
}

bool QnamCall::isRunning() const
{
    return m_reply && m_reply->isRunning();
}

QByteArray QnamCall::read(qint64 maxBytes)
{
    return m_reply ? m_reply->read(maxBytes) : QByteArray();
}

void QnamCall::abort()
{
    if (m_reply && m_reply->isRunning()) {
        m_aborted = true;
        retireManager();
        m_reply->abort(); // emits finished() synchronously
    }
}

void QnamCall::send()
{
    m_manager = m_transport->acquire(m_origin);
    m_counted = true;
    auto *body = new OneShotBody(m_request.body, nullptr); // owned by the reply (below)
    QNetworkReply *reply =
        m_manager->sendCustomRequest(m_transport->prepare(m_request), m_request.method, body);
    body->setParent(reply);
    m_body = body;
    m_reply = reply;
    reply->setReadBufferSize(kReplyReadBufferBeforeHead);
    // Qt 6.4 starts a request that has a body from a queued call and only then wires the
    // reply to its HTTP thread: the size set above never reaches that thread, and a slow
    // client would make SLP buffer the whole response. Set it again right after that start
    // (queued calls run in order; a reply deleted before then drops the call).
    QMetaObject::invokeMethod(
        reply, [reply] { reply->setReadBufferSize(kReplyReadBufferBeforeHead); },
        Qt::QueuedConnection);
    connect(reply, &QNetworkReply::metaDataChanged, this, &QnamCall::onMetaData);
    connect(reply, &QNetworkReply::readyRead, this, [this] { notifyReadable(); });
    connect(reply, &QNetworkReply::finished, this, &QnamCall::onFinished);
}

void QnamCall::dropReply()
{
    if (m_reply) {
        m_reply->disconnect(this);
        if (m_reply->isRunning()) {
            retireManager();
            m_reply->abort();
        }
        m_reply->deleteLater();
    }
    m_reply = nullptr;
}

void QnamCall::retireManager()
{
    if (m_manager && m_transport)
        m_transport->retire(m_origin, m_manager);
}

void QnamCall::onMetaData()
{
    if (m_headArrived || !m_fenced.isEmpty())
        return;
    const QVariant status = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (!status.isValid())
        return;
    m_headArrived = true;
    bool chunked = false;
    UpstreamHead head = headOf(*m_reply, status.toInt(), &chunked);
    // What SLP can see of QNAM's faults: such a head is never relayed, and its connection
    // is closed (the rest of the response, or the real answer after a 1xx, must not reach
    // the next request on it).
    const QString fault = qnamHeadFault(head.status, head.reason, head.headers);
    if (!fault.isEmpty()) {
        m_headArrived = false;
        return fence(QStringLiteral("malformed response head: ") + fault);
    }
    m_closeDelimited = head.contentLength < 0 && !chunked;
    // Backpressure: past kReplyReadBuffer unread, QNAM stops reading the socket, so a slow
    // client holds the upstream back instead of SLP buffering the whole body. Not for a
    // body that ends at the close: with its buffer full, Qt 6.4 still notices the close
    // once the tail fits in the socket's own buffer, reports the body finished and drops
    // that tail, a clean short 200 (3 of 36 under load). Such a body is read unbounded;
    // LLM servers frame theirs with a length or chunks, and `socket` bounds every kind.
    m_reply->setReadBufferSize(m_closeDelimited ? 0 : kReplyReadBuffer);
    dropUnfitRequestIds(head, m_origin);
    notifyHead(head);
}

void QnamCall::fence(const QString &why)
{
    m_fenced = why;
    QPointer<QObject> alive(this);
    if (m_reply && m_reply->isRunning()) {
        retireManager();
        m_reply->abort(); // emits finished() synchronously
    }
    if (alive && !m_fenceReported)
        onFinished();
}

void QnamCall::onFinished()
{
    if (reportFence() || takeLateHead() || resendUnsent())
        return;
    classifyEnd();
    releaseSlot();
    notifyFinished();
}

bool QnamCall::reportFence()
{
    if (m_fenced.isEmpty())
        return false;
    if (!m_fenceReported) {
        m_fenceReported = true;
        m_failure = Failure::Protocol;
        m_errorDetail = m_fenced;
        releaseSlot();
        notifyFinished();
    }
    return true;
}

bool QnamCall::takeLateHead()
{
    if (m_headArrived || m_reply->error() != QNetworkReply::NoError)
        return false;
    onMetaData(); // a head with no separate metaDataChanged (tiny responses)
    if (!m_fenced.isEmpty())
        return true; // fence() finished the call
    if (!m_headArrived) {
        fence(QStringLiteral("a response with no status"));
        return true;
    }
    return false;
}

bool QnamCall::resendUnsent()
{
    // When one connection of a QNAM fails, Qt 6.4 fails every request still queued inside
    // that QNAM with the same error, though none of them was ever written (the soak saw 3%
    // of requests lost to a neighbour's reset). A request whose body never left SLP cannot
    // have reached the upstream: it goes out again, a bounded number of times.
    const Failure failure =
        m_aborted ? Failure::Aborted : classify(m_reply->error(), m_headArrived);
    if (failure != Failure::Closed || !m_body || !m_body->untouched() || !m_transport ||
        m_redials >= kMaxUnsentRedials)
        return false;
    ++m_redials;
    dropReply();
    detachManager();
    send();
    return true;
}

void QnamCall::classifyEnd()
{
    const QNetworkReply::NetworkError error = m_reply->error();
    m_failure = m_aborted ? Failure::Aborted : classify(error, m_headArrived);
    // A body without length ends when the upstream closes: that close is its end, though
    // QNAM reports it as an error (ContentReSendError once it may not re-send the POST).
    if (m_closeDelimited && m_failure == Failure::BrokenBody &&
        (error == QNetworkReply::RemoteHostClosedError ||
         error == QNetworkReply::ContentReSendError))
        m_failure = Failure::None;
    if (m_failure != Failure::None) {
        // ContentReSendError says only "Unknown error": it means the connection closed.
        m_errorDetail = error == QNetworkReply::ContentReSendError
                            ? QStringLiteral("connection closed by the upstream")
                            : m_reply->errorString();
    }
}

void QnamCall::releaseSlot()
{
    if (m_counted && m_manager && m_transport)
        m_transport->release(m_origin, m_manager);
    m_counted = false;
}

void QnamCall::detachManager()
{
    // Until the reply is gone its manager must live: the reply is the manager's child, and a
    // finished reply still holds body bytes a slow client has not taken yet.
    releaseSlot();
    if (m_manager && m_transport)
        m_transport->detach(m_origin, m_manager);
    m_manager = nullptr;
}

} // namespace slp
