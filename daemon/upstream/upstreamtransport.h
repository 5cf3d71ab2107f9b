// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "wire/bytechain.h"
#include "wire/http1.h"
#include "wire/responseparser.h"

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
    ByteChain body;     // as it goes out: the client's bytes, shared, with SLP's edits
};

// One request in flight to one upstream. The seam between routing and the wire (KDE
// Connect's pattern): the core never sees QNetworkAccessManager, so a cheaper transport can
// replace it without touching routing.
//
// A call reports to the Observer it was started with (Envoy's newStream(decoder, callbacks)):
// the head, body bytes ready to read, and its end, in that order, each from the event loop.
// Who may delete what, when:
// - the core owns the call (start() hands it over) and may abort() it at any time, also
//   from inside a callback; abort() may report finished synchronously;
// - inside a callback the observer must not delete the call: it drops it with
//   deleteLater() (or detaches first and deletes it outside the callback);
// - the call never touches its observer after detachObserver(), nor itself after a callback
//   that may have ended it (transports hold a guard across each callback).
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
                    // detail is the client's message
        Other,
    };

    // How a call ended, as its observer is told: also when start() could not begin it, when
    // there is no call left to ask.
    struct End
    {
        Failure failure = Failure::None;
        QString detail; // for the log only: "connection refused", ...; never sent to a client
        QString peer;   // for the log only: the resolved "address:port", when known
        bool headArrived = false;

        // Failures worth one re-dial with retry: true (nothing reached the upstream's model).
        bool isConnectionLevelFailure() const
        {
            return !headArrived && (failure == Failure::Refused || failure == Failure::Closed ||
                                    failure == Failure::NameLookup);
        }
    };

    class Observer
    {
    public:
        virtual void upstreamHead(const UpstreamHead &head) = 0;
        // Body bytes wait in the call (bytesAvailable()).
        virtual void upstreamReadable() = 0;
        // Exactly once per started call. From inside start() when the call could not begin:
        // start() then returns null.
        virtual void upstreamFinished(const End &end) = 0;

    protected:
        ~Observer() = default;
    };

    explicit UpstreamCall(Observer &observer) : m_observer(&observer) {}
    ~UpstreamCall() override = default;

    virtual qint64 bytesAvailable() const = 0;
    virtual bool isRunning() const = 0;
    virtual QByteArray read(qint64 maxBytes) = 0;
    // Stops the exchange at once and closes its connection; the observer's upstreamFinished
    // may be called synchronously from inside abort().
    virtual void abort() = 0;

    // No callback reaches the observer any more.
    void detachObserver() { m_observer = nullptr; }
    // Lets a call that has every byte finish its bookkeeping (its connection goes back to the
    // pool), then deletes it.
    static void finishDetached(std::unique_ptr<UpstreamCall> call);

    bool headArrived() const { return m_headArrived; }
    Failure failure() const { return m_failure; }
    // For the log only: "connection refused", "Connection closed", ... never sent to a client.
    QString errorDetail() const { return m_errorDetail; }
    // For the log only: the resolved "address:port" the request went to, when the transport
    // knows it (the socket transport does once connected; QNAM never says).
    QString peerForLog() const { return m_peer; }
    End end() const { return End{m_failure, m_errorDetail, m_peer, m_headArrived}; }

protected:
    // For transports: each hands the event to the observer, if one is attached. The call
    // may be deleted (deleteLater only) or aborted inside: guard before touching members.
    void notifyHead(const UpstreamHead &head);
    void notifyReadable();
    void notifyFinished();

    bool m_headArrived = false;
    Failure m_failure = Failure::None;
    QString m_errorDetail;
    QString m_peer;

private:
    Observer *m_observer;
    bool m_deleteWhenFinished = false;
};

// A WebSocket upgrade in flight to one upstream, on a connection of its own: after a 101 the
// connection is the tunnel's, so it is never a pooled one. It reports to the Observer it was
// started with exactly one of: the 101 (then takeConnection() hands over the descriptor), any
// other answer, whole (bounded), to relay as an ordinary response, or its failure; each from
// the event loop, or the failure from inside upgrade() when it cannot begin (which then
// returns null). The observer never deletes the call inside a callback; deleting it at any
// other time aborts it, with no callback after.
class UpgradeCall : public QObject
{
    Q_OBJECT
public:
    class Observer
    {
    public:
        virtual void upgradeSwitched(const UpstreamHead &head) = 0;
        virtual void upgradeAnswered(const UpstreamHead &head, const QByteArray &body) = 0;
        virtual void upgradeFailed(const UpstreamCall::End &end) = 0;

    protected:
        ~Observer() = default;
    };

    // After upgradeSwitched(): the connection's descriptor (now the caller's) and the bytes
    // that followed the 101 head, once.
    virtual int takeConnection(QByteArray *early) = 0;
    // For the log: the resolved "address:port" once connected.
    virtual QString peerForLog() const = 0;
};

class UpstreamTransport
{
public:
    virtual ~UpstreamTransport() = default;
    // Starts the request at once (no queueing behind a connection cap), reporting to
    // `observer`. A request that fails before it can begin (a connection refused at once, a
    // request the transport cannot carry) is reported through observer.upstreamFinished()
    // from inside start(), which then returns null: no half-started call to wait on.
    virtual std::unique_ptr<UpstreamCall> start(const UpstreamRequest &request,
                                                UpstreamCall::Observer &observer) = 0;
    // Sends a WebSocket upgrade request (its Connection and Upgrade headers set by the core)
    // on a new connection, reporting to `observer`; null when it failed at once (reported).
    virtual std::unique_ptr<UpgradeCall> upgrade(const UpstreamRequest &request,
                                                 UpgradeCall::Observer &observer) = 0;
};

} // namespace slp
