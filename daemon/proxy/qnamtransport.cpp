#include "proxy/qnamtransport.h"

#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QNetworkRequest>

namespace slp {

namespace {
constexpr int kQnamConnectionsPerHost = 6; // fixed inside Qt 6.4's HTTP/1.1 connection pool
constexpr qint64 kReplyReadBuffer = 256 * 1024; // QNAM stops reading the socket past this

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
    case QNetworkReply::ProtocolFailure:
    case QNetworkReply::ProtocolUnknownError:
    case QNetworkReply::ProtocolInvalidOperationError:
        return headArrived ? UpstreamCall::Failure::BrokenBody : UpstreamCall::Failure::Protocol;
    default:
        break;
    }
    // Errors from 201 up mirror an HTTP status the upstream sent: a complete, relayed answer.
    if (headArrived && int(error) >= int(QNetworkReply::ContentAccessDenied)) {
        return UpstreamCall::Failure::None;
    }
    return headArrived ? UpstreamCall::Failure::BrokenBody : UpstreamCall::Failure::Other;
}
} // namespace

class QnamCall : public UpstreamCall
{
public:
    QnamCall(QnamTransport *transport, QString origin, QNetworkAccessManager *manager,
             QNetworkReply *reply)
        : m_transport(transport)
        , m_origin(std::move(origin))
        , m_manager(manager)
        , m_reply(reply)
    {
        reply->setReadBufferSize(kReplyReadBuffer);
        connect(reply, &QNetworkReply::metaDataChanged, this, &QnamCall::onMetaData);
        connect(reply, &QNetworkReply::readyRead, this, &UpstreamCall::readyRead);
        connect(reply, &QNetworkReply::finished, this, &QnamCall::onFinished);
    }

    ~QnamCall() override
    {
        if (m_reply) {
            m_reply->disconnect(this);
            if (m_reply->isRunning()) {
                m_reply->abort();
            }
            m_reply->deleteLater();
        }
        releaseSlot();
    }

    qint64 bytesAvailable() const override { return m_reply ? m_reply->bytesAvailable() : 0; }
    QByteArray read(qint64 maxBytes) override
    {
        return m_reply ? m_reply->read(maxBytes) : QByteArray();
    }
    void abort() override
    {
        if (m_reply && m_reply->isRunning()) {
            m_aborted = true;
            m_reply->abort(); // emits finished() synchronously
        }
    }

private:
    void onMetaData()
    {
        if (m_headArrived) {
            return;
        }
        const QVariant status = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
        if (!status.isValid()) {
            return;
        }
        m_headArrived = true;
        UpstreamHead head;
        head.status = status.toInt();
        head.reason = m_reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toByteArray();
        const auto pairs = m_reply->rawHeaderPairs();
        head.headers.reserve(pairs.size());
        for (const auto &[name, value] : pairs) {
            // QNAM joins repeated Set-Cookie headers with '\n'; split them apart again.
            if (value.contains('\n')) {
                for (const QByteArray &part : value.split('\n')) {
                    head.headers.append({name, part});
                }
            } else {
                head.headers.append({name, value});
            }
            if (name.compare("content-length", Qt::CaseInsensitive) == 0) {
                bool ok = false;
                const qint64 length = value.trimmed().toLongLong(&ok);
                head.contentLength = ok ? length : -1;
            }
        }
        Q_EMIT headReceived(head);
    }

    void onFinished()
    {
        if (!m_headArrived && m_reply->error() == QNetworkReply::NoError) {
            onMetaData(); // a head with no separate metaDataChanged (tiny responses)
        }
        m_failure = m_aborted ? Failure::Aborted : classify(m_reply->error(), m_headArrived);
        if (m_failure != Failure::None) {
            m_errorDetail = m_reply->errorString();
        }
        releaseSlot();
        Q_EMIT finished();
    }

    void releaseSlot()
    {
        if (m_manager && m_transport) {
            m_transport->release(m_origin, m_manager);
        }
        m_manager = nullptr;
    }

    QPointer<QnamTransport> m_transport;
    QString m_origin;
    QNetworkAccessManager *m_manager;
    QPointer<QNetworkReply> m_reply;
    bool m_aborted = false;
};

QnamTransport::QnamTransport(int maxConnectionsPerOrigin, QObject *parent)
    : QObject(parent)
    , m_maxManagersPerOrigin(
          std::max(1, (maxConnectionsPerOrigin + kQnamConnectionsPerHost - 1) /
                          kQnamConnectionsPerHost))
{
}

QnamTransport::~QnamTransport() = default;

int QnamTransport::managerCount() const
{
    int n = 0;
    for (const auto &pool : m_pools) {
        n += int(pool.size());
    }
    return n;
}

QNetworkAccessManager *QnamTransport::acquire(const QString &origin)
{
    QList<Slot> &pool = m_pools[origin];
    Slot *best = nullptr;
    for (Slot &slot : pool) {
        if (slot.active < kQnamConnectionsPerHost) {
            best = &slot; // the first with room keeps warm connections reused
            break;
        }
        if (!best || slot.active < best->active) {
            best = &slot;
        }
    }
    if (!best || (best->active >= kQnamConnectionsPerHost && pool.size() < m_maxManagersPerOrigin)) {
        auto *manager = new QNetworkAccessManager(this);
        // Every default below would make the proxy lie about bytes or destinations.
        manager->setProxy(QNetworkProxy::NoProxy);
        manager->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
        manager->setCache(nullptr);
        manager->setStrictTransportSecurityEnabled(false);
        manager->setAutoDeleteReplies(false);
        manager->setTransferTimeout(0); // our own time-to-first-byte timer governs
        pool.append(Slot{manager, 0});
        best = &pool.last();
    }
    ++best->active;
    return best->manager;
}

void QnamTransport::release(const QString &origin, QNetworkAccessManager *manager)
{
    auto it = m_pools.find(origin);
    if (it == m_pools.end()) {
        return;
    }
    for (Slot &slot : *it) {
        if (slot.manager == manager) {
            --slot.active;
            return;
        }
    }
}

std::unique_ptr<UpstreamCall> QnamTransport::start(const UpstreamRequest &request)
{
    const QString origin = request.url.scheme() + QLatin1String("://") +
                           request.url.host() + QLatin1Char(':') +
                           QString::number(request.url.port());
    QNetworkAccessManager *manager = acquire(origin);

    QNetworkRequest qreq(request.url);
    qreq.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                      QNetworkRequest::ManualRedirectPolicy);
    qreq.setAttribute(QNetworkRequest::CookieLoadControlAttribute, QNetworkRequest::Manual);
    qreq.setAttribute(QNetworkRequest::CookieSaveControlAttribute, QNetworkRequest::Manual);
    qreq.setAttribute(QNetworkRequest::CacheLoadControlAttribute,
                      QNetworkRequest::AlwaysNetwork);
    qreq.setAttribute(QNetworkRequest::CacheSaveControlAttribute, false);
    qreq.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    qreq.setAttribute(QNetworkRequest::HttpPipeliningAllowedAttribute, false);
    qreq.setTransferTimeout(0);

    bool hasAcceptEncoding = false;
    for (const auto &[name, value] : request.headers) {
        // QNAM keeps one value per name: repeated request headers are joined as RFC 9110
        // allows for list-valued fields (Cookie with "; ").
        const QByteArray existing = qreq.rawHeader(name);
        if (existing.isEmpty()) {
            qreq.setRawHeader(name, value);
        } else {
            const bool cookie = name.compare("cookie", Qt::CaseInsensitive) == 0;
            qreq.setRawHeader(name, existing + (cookie ? "; " : ", ") + value);
        }
        hasAcceptEncoding =
            hasAcceptEncoding || name.compare("accept-encoding", Qt::CaseInsensitive) == 0;
    }
    // An explicit Accept-Encoding is what stops QNAM from adding gzip and then silently
    // decompressing while keeping Content-Encoding: gzip.
    if (!hasAcceptEncoding) {
        qreq.setRawHeader("Accept-Encoding", "identity");
    }

    QNetworkReply *reply = manager->sendCustomRequest(qreq, request.method, request.body);
    return std::make_unique<QnamCall>(this, origin, manager, reply);
}

} // namespace slp
