// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "prometheustext.h"

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QMutex>
#include <QString>

namespace slp {

// A small in-process Prometheus registry: counters, gauges and histograms keyed by ordered
// label sets, rendered in the text format. Every worker thread updates the one registry, so
// each call takes a lock (uncontended it costs tens of nanoseconds; a request makes a few).
class MetricsRegistry
{
public:
    enum class Type
    {
        Counter,
        Gauge,
        Histogram
    };

    void declare(const QString &name, Type type, const QString &help, QList<double> buckets = {});

    void add(const QString &name, const PromLabels &labels, double delta = 1);
    void set(const QString &name, const PromLabels &labels, double value);
    void remove(const QString &name, const PromLabels &labels);
    // Removes every series of `name` whose labels contain `match`.
    void removeMatching(const QString &name, const PromLabels &match);
    void observe(const QString &name, const PromLabels &labels, double value);

    double value(const QString &name, const PromLabels &labels) const;

    QByteArray render() const;

private:
    struct Series
    {
        PromLabels labels;
        double value = 0;            // counter / gauge
        QList<quint64> bucketCounts; // histogram, cumulative at render time
        double sum = 0;
        quint64 count = 0;
    };
    struct Family
    {
        Type type = Type::Counter;
        QString help;
        QList<double> buckets;
        QMap<QString, Series> series; // key: rendered label set, so output order is stable
    };
    Series &seriesFor(Family &family, const PromLabels &labels);
    static QString keyOf(const PromLabels &labels);

    mutable QMutex m_mutex;
    QMap<QString, Family> m_families;
};

// The metric names the contract fixes, declared once.
namespace metric {
inline const QString requestsTotal = QStringLiteral("slp_requests_total");
inline const QString upstreamLatency = QStringLiteral("slp_upstream_latency_seconds");
inline const QString discoveryProbes = QStringLiteral("slp_discovery_probes_total");
inline const QString modelChanges = QStringLiteral("slp_upstream_model_changes_total");
inline const QString modelInfo = QStringLiteral("slp_upstream_model_info");
inline const QString modelAmbiguous = QStringLiteral("slp_upstream_model_ambiguous");
inline const QString upstreamAttempts = QStringLiteral("slp_upstream_attempt_failures_total");
inline const QString clientConnections = QStringLiteral("slp_client_connections");
inline const QString inflightRequests = QStringLiteral("slp_inflight_requests");
inline const QString acceptedConnections = QStringLiteral("slp_accepted_connections_total");
inline const QString consecutiveFailures = QStringLiteral("slp_upstream_consecutive_failures");
inline const QString overhead = QStringLiteral("slp_overhead_seconds");
inline const QString routeInflight = QStringLiteral("slp_route_inflight_requests");
inline const QString streamIdleTimeouts = QStringLiteral("slp_stream_idle_timeouts_total");
inline const QString sseKeepalives = QStringLiteral("slp_sse_keepalives_total");
inline const QString responsesBroken = QStringLiteral("slp_responses_broken_total");
inline const QString routeState = QStringLiteral("slp_route_state");
inline const QString bufferedBodyBytes = QStringLiteral("slp_buffered_body_bytes");
inline const QString bodyReadsPaused = QStringLiteral("slp_body_reads_paused_total");
inline const QString openTunnels = QStringLiteral("slp_open_tunnels");
inline const QString tunnelBytes = QStringLiteral("slp_tunnel_bytes_total");

// Requests whose model is missing or not routed: never the client's string as a label.
inline const QString unknownModel = QStringLiteral("unknown");
// {model_id}: the label set of every per-route series.
PromLabels modelLabels(const QString &modelId);
// {model_id, code}: slp_requests_total's.
PromLabels requestLabels(const QString &modelId, int status);
} // namespace metric

// Declares every SLP series family with its help text.
void declareSlpMetrics(MetricsRegistry &registry);

} // namespace slp
