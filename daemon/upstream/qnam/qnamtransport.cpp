// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/qnam/qnamtransport.h"

#include "upstream/qnam/qnamfence.h"
#include "upstream/socket/socketupgrade.h"
#include "upstream/upstreamhead.h"

#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QNetworkRequest>

#include <algorithm>
#include <cstring>

namespace slp {

namespace {
constexpr int kQnamConnectionsPerHost = 6;      // fixed inside Qt 6.4's HTTP/1.1 connection pool
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

class QnamCall : public UpstreamCall
{
public:
    QnamCall(QnamTransport *transport, QString origin, UpstreamRequest request, Observer &observer)
        : UpstreamCall(observer), m_transport(transport), m_origin(std::move(origin)),
          m_request(std::move(request))
    {
        send();
    }

    ~QnamCall() override
    {
        dropReply();
        detachManager();
    }

    qint64 bytesAvailable() const override { return m_reply ? m_reply->bytesAvailable() : 0; }
    bool isRunning() const override { return m_reply && m_reply->isRunning(); }
    QByteArray read(qint64 maxBytes) override
    {
        return m_reply ? m_reply->read(maxBytes) : QByteArray();
    }
    void abort() override
    {
        if (m_reply && m_reply->isRunning()) {
            m_aborted = true;
            retireManager();
            m_reply->abort(); // emits finished() synchronously
        }
    }

private:
    void send()
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

    void dropReply()
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

    void retireManager()
    {
        if (m_manager && m_transport)
            m_transport->retire(m_origin, m_manager);
    }

    void onMetaData()
    {
        if (m_headArrived || !m_fenced.isEmpty())
            return;
        const QVariant status = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
        if (!status.isValid())
            return;
        m_headArrived = true;
        UpstreamHead head;
        bool chunked = false;
        head.status = status.toInt();
        head.reason = m_reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toByteArray();
        const auto pairs = m_reply->rawHeaderPairs();
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
                chunked = value.toLower().contains("chunked");
            }
        }
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

    // Refuses the response: aborts the reply and retires its QNAM, so the connection closes.
    void fence(const QString &why)
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

    void onFinished()
    {
        if (!m_fenced.isEmpty()) {
            if (m_fenceReported)
                return;
            m_fenceReported = true;
            m_failure = Failure::Protocol;
            m_errorDetail = m_fenced;
            releaseSlot();
            notifyFinished();
            return;
        }
        if (!m_headArrived && m_reply->error() == QNetworkReply::NoError) {
            onMetaData(); // a head with no separate metaDataChanged (tiny responses)
            if (!m_fenced.isEmpty())
                return; // fence() finished the call
            if (!m_headArrived)
                return fence(QStringLiteral("a response with no status"));
        }
        m_failure = m_aborted ? Failure::Aborted : classify(m_reply->error(), m_headArrived);
        // When one connection of a QNAM fails, Qt 6.4 fails every request still queued inside
        // that QNAM with the same error, though none of them was ever written (the soak saw 3%
        // of requests lost to a neighbour's reset). A request whose body never left SLP cannot
        // have reached the upstream: it goes out again, a bounded number of times.
        if (m_failure == Failure::Closed && m_body && m_body->untouched() && m_transport &&
            m_redials < kMaxUnsentRedials) {
            ++m_redials;
            dropReply();
            detachManager();
            send();
            return;
        }
        // A body without length ends when the upstream closes: that close is its end, though
        // QNAM reports it as an error (ContentReSendError once it may not re-send the POST).
        if (m_closeDelimited && m_failure == Failure::BrokenBody &&
            (m_reply->error() == QNetworkReply::RemoteHostClosedError ||
             m_reply->error() == QNetworkReply::ContentReSendError))
            m_failure = Failure::None;
        if (m_failure != Failure::None) {
            // ContentReSendError says only "Unknown error": it means the connection closed.
            m_errorDetail = m_reply->error() == QNetworkReply::ContentReSendError
                                ? QStringLiteral("connection closed by the upstream")
                                : m_reply->errorString();
        }
        releaseSlot();
        notifyFinished();
    }

    // The exchange is over: its connection can serve another request.
    void releaseSlot()
    {
        if (m_counted && m_manager && m_transport)
            m_transport->release(m_origin, m_manager);
        m_counted = false;
    }

    // The reply is gone too. Until then its manager must live: the reply is the manager's
    // child, and a finished reply still holds body bytes a slow client has not taken yet.
    void detachManager()
    {
        releaseSlot();
        if (m_manager && m_transport)
            m_transport->detach(m_origin, m_manager);
        m_manager = nullptr;
    }

    QPointer<QnamTransport> m_transport;
    QString m_origin;
    UpstreamRequest m_request; // kept for a re-send of a request that never left
    QNetworkAccessManager *m_manager = nullptr;
    bool m_counted = false; // in the manager's active count
    QPointer<QNetworkReply> m_reply;
    QPointer<OneShotBody> m_body;
    int m_redials = 0;
    bool m_aborted = false;
    bool m_closeDelimited = false;
    QString m_fenced; // why the response was refused (a 502), or empty
    bool m_fenceReported = false;
};

QnamTransport::QnamTransport(int maxConnectionsPerOrigin, QObject *parent)
    : QObject(parent),
      m_maxManagersPerOrigin(std::max(1, (maxConnectionsPerOrigin + kQnamConnectionsPerHost - 1) /
                                             kQnamConnectionsPerHost))
{}

QnamTransport::~QnamTransport() = default;

QNetworkAccessManager *QnamTransport::acquire(const QString &origin)
{
    QList<Slot> &pool = m_pools[origin];
    Slot *best = nullptr;
    for (Slot &slot : pool) {
        if (slot.retired)
            continue;
        if (slot.active < kQnamConnectionsPerHost) {
            best = &slot; // the first with room keeps warm connections reused
            break;
        }
        if (!best || slot.active < best->active)
            best = &slot;
    }
    if (!best ||
        (best->active >= kQnamConnectionsPerHost && pool.size() < m_maxManagersPerOrigin)) {
        auto *manager = new QNetworkAccessManager(this);
        // Every default below would make the proxy lie about bytes or destinations.
        manager->setProxy(QNetworkProxy::NoProxy);
        manager->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
        manager->setCache(nullptr);
        manager->setStrictTransportSecurityEnabled(false);
        manager->setAutoDeleteReplies(false);
        manager->setTransferTimeout(0); // our own time-to-first-byte timer governs
        pool.append(Slot{manager});
        best = &pool.last();
    }
    ++best->active;
    ++best->holders;
    return best->manager;
}

// The slot of `manager` in `origin`'s pool, and its place there; null once it is gone.
QnamTransport::Slot *QnamTransport::slotOf(const QString &origin, QNetworkAccessManager *manager,
                                           qsizetype *index)
{
    auto it = m_pools.find(origin);
    if (it == m_pools.end())
        return nullptr;
    for (qsizetype i = 0; i < it->size(); ++i) {
        if ((*it)[i].manager == manager) {
            if (index)
                *index = i;
            return &(*it)[i];
        }
    }
    return nullptr;
}

void QnamTransport::release(const QString &origin, QNetworkAccessManager *manager)
{
    if (Slot *slot = slotOf(origin, manager))
        --slot->active;
}

void QnamTransport::detach(const QString &origin, QNetworkAccessManager *manager)
{
    qsizetype index = 0;
    Slot *slot = slotOf(origin, manager, &index);
    if (!slot)
        return;
    --slot->holders;
    if (slot->retired && slot->holders <= 0) {
        slot->manager->deleteLater(); // closes its connections; its thread ends
        m_pools[origin].removeAt(index);
    }
}

void QnamTransport::retire(const QString &origin, QNetworkAccessManager *manager)
{
    if (Slot *slot = slotOf(origin, manager))
        slot->retired = true;
}

namespace {
// QNAM keeps one value per name (any case), and setting a name again re-spells it and moves it
// last. To keep repeated fields apart, in order and spelled as the client sent them, each
// later line rides in the first one's value behind "\r\n<its own name>: ": QNAM writes
// values as they are, and SLP refused CR, LF and NUL in every inbound header already. Lines
// of other names between them end up after them (their order carries no meaning).
HeaderList withRepeatsJoined(const HeaderList &headers)
{
    HeaderList out;
    out.reserve(headers.size());
    for (const auto &[name, value] : headers) {
        auto first = std::find_if(out.begin(), out.end(), [&name = name](const auto &h) {
            return equalsNoCase(h.first, name);
        });
        if (first == out.end())
            out.append({name, value});
        else
            first->second += "\r\n" + name + ": " + value;
    }
    return out;
}
} // namespace

QNetworkRequest QnamTransport::prepare(const UpstreamRequest &request) const
{
    QNetworkRequest qreq(
        QUrl::fromEncoded(request.origin.toUtf8() + request.target, QUrl::StrictMode));
    qreq.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                      QNetworkRequest::ManualRedirectPolicy);
    qreq.setAttribute(QNetworkRequest::CookieLoadControlAttribute, QNetworkRequest::Manual);
    qreq.setAttribute(QNetworkRequest::CookieSaveControlAttribute, QNetworkRequest::Manual);
    qreq.setAttribute(QNetworkRequest::CacheLoadControlAttribute, QNetworkRequest::AlwaysNetwork);
    qreq.setAttribute(QNetworkRequest::CacheSaveControlAttribute, false);
    qreq.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    qreq.setAttribute(QNetworkRequest::HttpPipeliningAllowedAttribute, false);
    qreq.setTransferTimeout(0);

    bool hasAcceptEncoding = false;
    for (const auto &[name, value] : withRepeatsJoined(request.headers)) {
        qreq.setRawHeader(name, value);
        hasAcceptEncoding = hasAcceptEncoding || equalsNoCase(name, "accept-encoding");
    }
    // An explicit Accept-Encoding is what stops QNAM from adding gzip and then silently
    // decompressing while keeping Content-Encoding: gzip.
    if (!hasAcceptEncoding)
        qreq.setRawHeader("Accept-Encoding", "identity");

    qreq.setAttribute(QNetworkRequest::DoNotBufferUploadDataAttribute, true);
    qreq.setHeader(QNetworkRequest::ContentLengthHeader, request.body.size());
    return qreq;
}

std::unique_ptr<UpstreamCall> QnamTransport::start(const UpstreamRequest &request,
                                                   UpstreamCall::Observer &observer)
{
    // QUrl rewrites what it cannot keep (a fragment dropped, "%zz" or "50%" sent as an empty
    // target, dot segments folded): such a target gets the client's 400, never a changed one.
    if (!qnamSendsTargetUnchanged(request)) {
        UpstreamCall::End refused;
        refused.failure = UpstreamCall::Failure::Unsendable;
        refused.detail = QStringLiteral("request target cannot be sent unchanged through "
                                        "upstream_transport: qnam (use socket)");
        observer.upstreamFinished(refused);
        return nullptr;
    }
    return std::make_unique<QnamCall>(this, request.origin, request, observer);
}

std::unique_ptr<UpgradeCall> QnamTransport::upgrade(const UpstreamRequest &request,
                                                    UpgradeCall::Observer &observer)
{
    return SocketUpgrade::start(request, endpointFor(request.originUrl, request.origin), observer);
}

} // namespace slp
