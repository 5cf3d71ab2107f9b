// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "wire/http1.h"

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QUrl>

#include <memory>

namespace slp {

// What the core hands a transport: already filtered headers and the final body bytes.
struct UpstreamRequest
{
    QByteArray method;
    // The route's origin, compiled once with the config: no URL is parsed per request.
    QString origin;     // "scheme://host[:port]", also the transports' pool key
    QUrl originUrl;     // the same as a QUrl
    QByteArray target;  // raw path+query as the client sent it ("/" when empty)
    HeaderList headers; // Host and framing headers are the transport's business
    QByteArray body;
};

struct UpstreamHead
{
    int status = 0;
    QByteArray reason;
    HeaderList headers;        // as received, hop-by-hop included; the core filters
    qint64 contentLength = -1; // -1: none given (the core frames the body itself)
};

// One request in flight to one upstream. The seam between routing and the wire (KDE
// Connect's pattern): the core never sees QNetworkAccessManager, so a cheaper transport can
// replace it without touching routing.
class UpstreamCall : public QObject
{
    Q_OBJECT
public:
    enum class Failure
    {
        None,
        Refused,    // connect refused
        Closed,     // closed or reset before a response head
        NameLookup, // host not found
        Protocol,   // malformed or oversized response head, garbage
        BrokenBody, // the connection died after the head, before the body's end
        ResetBody,  // ... and the upstream reset it (an RST), where the transport can tell
        Aborted,    // we aborted (timeout or client gone)
        Unsendable, // the transport cannot send the request as the client sent it: a 400,
                    // errorDetail() is the client's message
        Other,
    };

    using QObject::QObject;
    ~UpstreamCall() override = default;

    virtual qint64 bytesAvailable() const = 0;
    virtual bool isRunning() const = 0;
    virtual QByteArray read(qint64 maxBytes) = 0;
    // Stops the exchange at once and closes its connection; finished() may be emitted
    // synchronously from inside abort().
    virtual void abort() = 0;

    bool headArrived() const { return m_headArrived; }
    Failure failure() const { return m_failure; }
    // For the log only: "connection refused", "Connection closed", ... never sent to a client.
    QString errorDetail() const { return m_errorDetail; }
    // For the log only: the resolved "address:port" the request went to, when the transport
    // knows it (the socket transport does once connected; QNAM never says).
    QString peerForLog() const { return m_peer; }

    // Failures worth one re-dial with retry: true (nothing reached the upstream's model).
    bool isConnectionLevelFailure() const
    {
        return !m_headArrived && (m_failure == Failure::Refused || m_failure == Failure::Closed ||
                                  m_failure == Failure::NameLookup);
    }

Q_SIGNALS:
    void headReceived(const slp::UpstreamHead &head);
    void readyRead();
    void finished();

protected:
    bool m_headArrived = false;
    Failure m_failure = Failure::None;
    QString m_errorDetail;
    QString m_peer;
};

class UpstreamTransport
{
public:
    virtual ~UpstreamTransport() = default;
    // Starts the request at once (no queueing behind a connection cap).
    virtual std::unique_ptr<UpstreamCall> start(const UpstreamRequest &request) = 0;
};

} // namespace slp
