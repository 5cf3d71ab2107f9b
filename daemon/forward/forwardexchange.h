// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "forward/requestlog.h"
#include "prometheustext.h"
#include "upstream/upstreamtransport.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <chrono>
#include <memory>

namespace slp {

class ExchangeCounter;
class MetricsRegistry;
class ResponseWriter;
class SseAggregator;
class StreamWatch;

// Everything the router decided about one request before it goes upstream.
struct ForwardPlan
{
    QByteArray requestId;   // SLP's slpq id
    QString clientIdForLog; // ` client="..."` suffix for log lines, or empty
    QString modelId;        // exposed id (metrics label, logs)
    QString renamedTo;      // upstream model name when the body was rewritten, else empty
    QString origin;         // upstream origin, for log lines
    QByteArray method;
    QByteArray target; // path and query as the client sent them
    std::chrono::milliseconds timeout{60000};
    QString timeoutText;                  // as written in the config, for the 502 and the log
    int maxAttempts = 1;                  // 2 with retry: true
    ExchangeCounter *exchanges = nullptr; // the daemon's, when it drains on exchanges
    // After the response head: no upstream body byte for this long breaks the response (0: off).
    std::chrono::milliseconds streamIdleTimeout{0};
    QString streamIdleTimeoutText; // as formatGoDuration spells the route's value, for the log
    // A relayed text/event-stream silent this long gets ": keep-alive\n\n" at a boundary (0: off).
    std::chrono::milliseconds sseKeepalive{0};
    bool logRequests = false;
    // aggregate: true and a non-streaming chat/completions request: the upstream was asked to
    // stream and the SSE is reassembled into the JSON the client asked for.
    enum class Aggregate
    {
        Off,
        Chat,
        Completion
    };
    Aggregate aggregate = Aggregate::Off;
    UpstreamRequest request;
    QElapsedTimer received; // started when the complete request reached the router (overhead)
};

// One client request forwarded to one upstream: the time-to-first-byte timer, the single
// re-dial, and the relay of the response into the client's ResponseWriter with backpressure.
// Owned by its writer (Qt child), so a client that leaves takes the upstream request with it.
class ForwardExchange : public QObject
{
    Q_OBJECT
public:
    ForwardExchange(ForwardPlan plan, UpstreamTransport &transport, MetricsRegistry &metrics,
                    ResponseWriter *writer);
    ~ForwardExchange() override;

    void start();

private:
    void launch();
    void onHead(const UpstreamHead &head);
    void onFinished();
    void onTimeout();
    void onClientGone();
    void startWatch(bool keepalive);
    void stopWatch();
    void onStalled();
    void onKeepaliveDue();
    void relay();
    void complete();
    void failBeforeHead();
    void logCompletion();
    void aggregateAvailable();
    void finishAggregate();
    void answerAggregateFailure(const QByteArray &body, const QString &logReason);
    void breakOff(const QString &detail);
    void countRequest(int status);
    void observeOverhead(const QElapsedTimer &sinceHead);
    QString upstreamPeerForLog() const; // " (127.0.0.1:8000)", or empty

    ForwardPlan m_plan;
    RequestLog m_log{m_plan};
    const PromLabels m_routeLabels; // {model_id}: built once, used by every metric update
    UpstreamTransport &m_transport;
    MetricsRegistry &m_metrics;
    QPointer<ResponseWriter> m_writer;
    std::unique_ptr<UpstreamCall> m_call;
    QTimer m_ttfbTimer;
    QElapsedTimer m_sinceStart; // this attempt
    int m_attempt = 0;
    bool m_timedOut = false;
    bool m_clientGone = false;
    bool m_upstreamDone = false;
    bool m_done = false;
    bool m_bodyless = false; // the upstream's status carries no body
    int m_status = 0;
    qint64 m_latencyNs = 0;
    qint64 m_handOverNs = 0;      // complete request -> handed to the transport (first attempt)
    qint64 m_bytesDown = 0;       // upstream body bytes relayed (keep-alive comments excluded)
    qint64 m_upstreamBytes = 0;   // upstream body bytes read, relayed or aggregated
    qint64 m_expectedLength = -1; // the upstream's Content-Length, when it gave one
    QByteArray m_upstreamRequestId;
    std::unique_ptr<SseAggregator> m_aggregator; // set while reassembling a stream
    HeaderList m_aggregateHeaders;               // the upstream's head, held until the end
    StreamWatch *m_watch = nullptr;              // child; only when the route sets a stream timer
};

} // namespace slp
