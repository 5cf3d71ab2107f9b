// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/qnam/qnamtransport.h"

#include "upstream/qnam/qnamcall.h"
#include "upstream/qnam/qnamfence.h"
#include "upstream/socket/socketupgrade.h"
#include "upstream/upstreamhead.h"

#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QNetworkRequest>

#include <algorithm>

namespace slp {

namespace {
constexpr int kQnamConnectionsPerHost = 6; // fixed inside Qt 6.4's HTTP/1.1 connection pool
} // namespace

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
