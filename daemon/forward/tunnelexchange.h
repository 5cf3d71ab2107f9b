// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "forward/exchangerecord.h"
#include "forward/forwardplan.h"
#include "net/socketrelay.h"
#include "upstream/upstreamtransport.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <memory>

namespace slp {

struct ExchangeContext;
class ResponseWriter;

// One WebSocket upgrade forwarded to one upstream, then the tunnel it becomes:
//   Dialing --101--> Open (the upstream's 101 head to the client, then a SocketRelay both ways)
//   Dialing --another answer--> relayed as an ordinary response, Done
//   Dialing --failure, or no head within the route's timeout--> 502, Done
//   Open --either side ends, idle, or shutdown grace over--> Done (the close log line)
// The upgrade is counted when its answer is known (slp_requests_total{code="101"} for a
// tunnel) by its ExchangeRecord, as a forwarded request is; an open tunnel counts in
// slp_open_tunnels and keeps a drain waiting, as a request in flight does. Owned by its
// writer (Qt child) while dialing; once open, by the client's socket, which it deletes when
// the tunnel ends.
class TunnelExchange : public QObject, private UpgradeCall::Observer
{
    Q_OBJECT
public:
    // The size of each direction's buffer: as much as a relay holds for a slow client.
    static constexpr qint64 kBufferBytes = 256 * 1024;

    // `context`: the worker's, which outlives the exchange.
    TunnelExchange(ForwardPlan plan, const ExchangeContext &context, ResponseWriter *writer);
    ~TunnelExchange() override;

    void start();

private:
    // UpgradeCall::Observer: the call's one answer.
    void upgradeSwitched(const UpstreamHead &head) override;
    void upgradeAnswered(const UpstreamHead &head, const QByteArray &body) override;
    void upgradeFailed(const UpstreamCall::End &end) override;
    void onTimeout();
    void onClientGone();
    void onRelayEnded(SocketRelay::End end);
    // What any answer to the upgrade does (the record's head bookkeeping): `headers` for the
    // client, with SLP's request id added when the upstream sent none.
    HeaderList noteHead(const UpstreamHead &head, HeaderList headers);

    ForwardPlan m_plan;
    const RouteForwarding &m_route{*m_plan.route};
    const ExchangeContext &m_context;
    ExchangeRecord m_record;
    QPointer<ResponseWriter> m_writer;
    std::unique_ptr<UpgradeCall> m_call; // until it answered
    QTimer m_timeout;
    QElapsedTimer m_since;          // from the request to the 101, then the tunnel's open time
    SocketRelay *m_relay = nullptr; // child, while open
    QPointer<QObject> m_clientSocket;
    bool m_timedOut = false;
    qint64 m_switchHeadBytes = 0; // written first by the relay, not the tunnel's traffic
};

} // namespace slp
