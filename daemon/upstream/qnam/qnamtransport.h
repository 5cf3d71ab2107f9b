// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/upstreamtransport.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>

class QNetworkAccessManager;
class QNetworkRequest;
class QNetworkReply;

namespace slp {

// `upstream_transport: qnam`: QNetworkAccessManager, with every default that would break a
// byte-exact proxy turned off (docs/QT64.md, "Defaults wrong for a proxy"): no redirects, cookies,
// cache, proxy, HTTP/2 or silent decompression. Qt 6.4 caps each QNAM at 6 connections per host and
// queues the rest, so this keeps a pool of QNAMs per origin and spreads requests over them.
class QnamTransport : public QObject, public UpstreamTransport
{
    Q_OBJECT
public:
    // maxConnectionsPerOrigin: the concurrency one origin gets before requests share
    // connections (rounded up to a multiple of 6).
    explicit QnamTransport(int maxConnectionsPerOrigin, QObject *parent = nullptr);
    ~QnamTransport() override;

    std::unique_ptr<UpstreamCall> start(const UpstreamRequest &request,
                                        UpstreamCall::Observer &observer) override;
    // On a socket of its own (SocketUpgrade): QNAM cannot hand a connection over.
    std::unique_ptr<UpgradeCall> upgrade(const UpstreamRequest &request,
                                         UpgradeCall::Observer &observer) override;

private:
    QNetworkRequest prepare(const UpstreamRequest &request) const;
    struct Slot
    {
        QNetworkAccessManager *manager = nullptr; // owned by this (Qt parent)
        int active = 0;       // requests not finished yet (what spreads the load)
        int holders = 0;      // calls whose reply still exists (what keeps it alive)
        bool retired = false; // takes no new requests; deleted once no call holds it
    };
    QNetworkAccessManager *acquire(const QString &origin);
    void release(const QString &origin, QNetworkAccessManager *manager); // finished
    void detach(const QString &origin, QNetworkAccessManager *manager);  // reply deleted
    // An aborted reply can leave QNAM's connection mid-response, and Qt 6.4 may hand the rest of
    // that response to the next request on it: a manager that aborted anything serves no one
    // again and goes away (with its connections) once its last reply is gone.
    void retire(const QString &origin, QNetworkAccessManager *manager);
    Slot *slotOf(const QString &origin, QNetworkAccessManager *manager, qsizetype *index = nullptr);

    friend class QnamCall;
    int m_maxManagersPerOrigin;
    QHash<QString, QList<Slot>> m_pools;
};

} // namespace slp
