// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "forward/forwardplan.h"
#include "forward/outcome.h"
#include "forward/requestlog.h"
#include "upstream/upstreamtransport.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <memory>

namespace slp {

class AggregateAnswer;
class MetricsRegistry;
class ResponseWriter;
class StreamWatch;

// One client request forwarded to one upstream: the time-to-first-byte timer, the single
// re-dial, and the relay of the response into the client's ResponseWriter with backpressure
// (or, on an aggregate route, the stream handed to an AggregateAnswer).
// Owned by its writer (Qt child), so a client that leaves takes the upstream request with it.
//
// Phases, moved through by enter() only:
//   WaitingForHead --head--> Relaying | Aggregating --end()--> Done
//   WaitingForHead --failure, re-dial--> WaitingForHead
//   any --end()--> Done: the client has its answer, its cut, or has left; nothing more is
//   written. end() is the one place an exchange ends.
class ForwardExchange : public QObject, private UpstreamCall::Observer
{
    Q_OBJECT
public:
    enum class Phase
    {
        WaitingForHead, // a call is under way (attempt 1 or 2), no response head yet
        Relaying,       // the upstream's head went to the client; its body follows
        Aggregating,    // the upstream's event stream is being reassembled (nothing sent yet)
        Done,
    };

    ForwardExchange(ForwardPlan plan, UpstreamTransport &transport, MetricsRegistry &metrics,
                    ResponseWriter *writer);
    ~ForwardExchange() override;

    void start();
    Phase phase() const { return m_phase; }

private:
    void enter(Phase next);
    // The one place an exchange ends: records m_outcome (counts, last log line, route health).
    void end(Ending how);
    void launch();
    // UpstreamCall::Observer: the running call's events (never deletes the call inside one).
    void upstreamHead(const UpstreamHead &head) override { onHead(head); }
    void upstreamReadable() override;
    void upstreamFinished(const UpstreamCall::End &outcome) override { onFinished(outcome); }
    void onHead(const UpstreamHead &head);
    void relayHead(const UpstreamHead &head, const QElapsedTimer &sinceHead);
    void onFinished(const UpstreamCall::End &outcome);
    void onTimeout();
    void onClientGone();
    void startWatch(bool keepalive);
    void onStalled();
    void onKeepaliveDue();
    void pump();
    void relayBody();
    void complete();
    void failBeforeHead(const UpstreamCall::End &failed);
    void aggregateBody();
    void finishAggregate();
    void answerAggregateFailure(Ending how, const QByteArray &body);
    // `what`: the route's last_failure sentence, when not "upstream closed mid-body ...".
    void breakOff(const QString &detail, const QString &what = {});
    void stopCall();
    void observeOverhead(const QElapsedTimer &sinceHead);
    QString upstreamPeerForLog() const; // " (127.0.0.1:8000)", or empty

    ForwardPlan m_plan;
    const RouteForwarding &m_route{*m_plan.route};
    RequestLog m_log{m_plan};
    UpstreamTransport &m_transport;
    MetricsRegistry &m_metrics;
    QPointer<ResponseWriter> m_writer;
    std::unique_ptr<UpstreamCall> m_call; // null when start() failed at once (see launch())
    QTimer m_ttfbTimer;
    QElapsedTimer m_sinceStart; // this attempt
    Phase m_phase = Phase::WaitingForHead;
    Outcome m_outcome; // filled in as the exchange runs; recorded by end()
    int m_attempt = 0;
    bool m_timedOut = false;         // this attempt ran out of time to first byte
    bool m_upstreamFinished = false; // the upstream's body ended (finished, or its length in)
    int m_status = 0;
    qint64 m_latencyNs = 0;
    qint64 m_handOverNs = 0;      // complete request -> handed to the transport (first attempt)
    qint64 m_bytesDown = 0;       // upstream body bytes relayed (keep-alive comments excluded)
    qint64 m_upstreamBytes = 0;   // upstream body bytes read, relayed or aggregated
    qint64 m_expectedLength = -1; // the upstream's Content-Length (0 for a bodyless answer)
    QByteArray m_upstreamRequestId;
    std::unique_ptr<AggregateAnswer> m_aggregate; // while Aggregating
    StreamWatch *m_watch = nullptr;               // child; only when the route sets a stream timer
};

} // namespace slp
