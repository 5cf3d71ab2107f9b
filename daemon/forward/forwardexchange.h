// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "forward/exchangerecord.h"
#include "forward/forwardplan.h"
#include "upstream/upstreamtransport.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <memory>

namespace slp {

class AggregateAnswer;
struct ExchangeContext;
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
//   written. end() is the one place an exchange ends; its ExchangeRecord records it.
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

    // `context`: the worker's, which outlives the exchange.
    ForwardExchange(ForwardPlan plan, const ExchangeContext &context, ResponseWriter *writer);
    ~ForwardExchange() override;

    void start();
    Phase phase() const { return m_phase; }

private:
    void enter(Phase next);
    // The one place an exchange ends: the record counts it, logs it, tells the route.
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

    ForwardPlan m_plan;
    const RouteForwarding &m_route{*m_plan.route};
    const ExchangeContext &m_context;
    ExchangeRecord m_record;
    QPointer<ResponseWriter> m_writer;
    std::unique_ptr<UpstreamCall> m_call; // null when start() failed at once (see launch())
    QTimer m_ttfbTimer;
    QElapsedTimer m_sinceStart; // this attempt
    Phase m_phase = Phase::WaitingForHead;
    int m_attempt = 0;
    bool m_timedOut = false;         // this attempt ran out of time to first byte
    bool m_upstreamFinished = false; // the upstream's body ended (finished, or its length in)
    qint64 m_handOverNs = 0;         // complete request -> handed to the transport (first attempt)
    qint64 m_bytesDown = 0;          // upstream body bytes relayed (keep-alive comments excluded)
    qint64 m_upstreamBytes = 0;      // upstream body bytes read, relayed or aggregated
    qint64 m_expectedLength = -1;    // the upstream's Content-Length (0 for a bodyless answer)
    std::unique_ptr<AggregateAnswer> m_aggregate; // while Aggregating
    StreamWatch *m_watch = nullptr;               // child; only when the route sets a stream timer
};

} // namespace slp
