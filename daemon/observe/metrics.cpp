// SPDX-License-Identifier: GPL-3.0-or-later
#include "observe/metrics.h"

#include <cmath>
#include <limits>

namespace slp {

void MetricsRegistry::declare(const QString &name, Type type, const QString &help,
                              QList<double> buckets)
{
    const QMutexLocker lock(&m_mutex);
    Family &family = m_families[name];
    family.type = type;
    family.help = help;
    family.buckets = std::move(buckets);
}

QString MetricsRegistry::keyOf(const PromLabels &labels)
{
    QString key;
    for (const auto &[name, value] : labels) {
        key += name;
        key += QLatin1Char('\x1f');
        key += value;
        key += QLatin1Char('\x1e');
    }
    return key;
}

MetricsRegistry::Series &MetricsRegistry::seriesFor(Family &family, const PromLabels &labels)
{
    const QString key = keyOf(labels);
    auto it = family.series.find(key);
    if (it == family.series.end()) {
        Series series;
        series.labels = labels;
        if (family.type == Type::Histogram)
            series.bucketCounts = QList<quint64>(family.buckets.size(), 0);
        it = family.series.insert(key, series);
    }
    return *it;
}

void MetricsRegistry::add(const QString &name, const PromLabels &labels, double delta)
{
    const QMutexLocker lock(&m_mutex);
    Q_ASSERT(m_families.contains(name));
    seriesFor(m_families[name], labels).value += delta;
}

void MetricsRegistry::set(const QString &name, const PromLabels &labels, double value)
{
    const QMutexLocker lock(&m_mutex);
    Q_ASSERT(m_families.contains(name));
    seriesFor(m_families[name], labels).value = value;
}

void MetricsRegistry::remove(const QString &name, const PromLabels &labels)
{
    const QMutexLocker lock(&m_mutex);
    auto it = m_families.find(name);
    if (it != m_families.end())
        it->series.remove(keyOf(labels));
}

void MetricsRegistry::removeMatching(const QString &name, const PromLabels &match)
{
    const QMutexLocker lock(&m_mutex);
    auto it = m_families.find(name);
    if (it == m_families.end())
        return;
    for (auto s = it->series.begin(); s != it->series.end();) {
        bool all = true;
        for (const auto &pair : match)
            all = all && s->labels.contains(pair);
        s = all ? it->series.erase(s) : std::next(s);
    }
}

void MetricsRegistry::observe(const QString &name, const PromLabels &labels, double value)
{
    const QMutexLocker lock(&m_mutex);
    Q_ASSERT(m_families.contains(name));
    Family &family = m_families[name];
    Series &series = seriesFor(family, labels);
    for (qsizetype i = 0; i < family.buckets.size(); ++i) {
        if (value <= family.buckets[i]) {
            ++series.bucketCounts[i];
            break; // made cumulative when rendered
        }
    }
    series.sum += value;
    ++series.count;
}

double MetricsRegistry::value(const QString &name, const PromLabels &labels) const
{
    const QMutexLocker lock(&m_mutex);
    const auto family = m_families.constFind(name);
    if (family == m_families.cend())
        return 0;
    const auto series = family->series.constFind(keyOf(labels));
    if (series == family->series.cend())
        return 0;
    return family->type == Type::Histogram ? double(series->count) : series->value;
}

QByteArray MetricsRegistry::render() const
{
    const QMutexLocker lock(&m_mutex);
    QByteArray out;
    out.reserve(4096);
    for (auto it = m_families.cbegin(); it != m_families.cend(); ++it) {
        const QByteArray name = it.key().toUtf8();
        const Family &family = *it;
        const char *type = family.type == Type::Counter ? "counter"
                           : family.type == Type::Gauge ? "gauge"
                                                        : "histogram";
        out += promHelpLine(name, family.help);
        out += promTypeLine(name, type);
        for (const Series &series : family.series) {
            if (family.type != Type::Histogram) {
                out += promSampleLine(name, series.labels, series.value);
                continue;
            }
            quint64 cumulative = 0;
            for (qsizetype i = 0; i < family.buckets.size(); ++i) {
                cumulative += series.bucketCounts[i];
                PromLabels labels = series.labels;
                labels.append({QStringLiteral("le"),
                               QString::fromLatin1(formatPromValue(family.buckets[i]))});
                out += promSampleLine(name + "_bucket", labels, double(cumulative));
            }
            PromLabels inf = series.labels;
            inf.append({QStringLiteral("le"), QStringLiteral("+Inf")});
            out += promSampleLine(name + "_bucket", inf, double(series.count));
            out += promSampleLine(name + "_sum", series.labels, series.sum);
            out += promSampleLine(name + "_count", series.labels, double(series.count));
        }
    }
    return out;
}

namespace {

// What requests and backends do: counts, times, discovery.
void declareRequestMetrics(MetricsRegistry &registry)
{
    using T = MetricsRegistry::Type;
    using T = MetricsRegistry::Type;
    registry.declare(metric::requestsTotal, T::Counter,
                     QStringLiteral("Requests answered, by exposed model id and HTTP status."));
    registry.declare(metric::upstreamLatency, T::Histogram,
                     QStringLiteral("Time from sending a request upstream to its response head."),
                     {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300});
    registry.declare(
        metric::discoveryProbes, T::Counter,
        QStringLiteral("Model-name discovery probes, by result (ok/ambiguous/error)."));
    registry.declare(metric::modelChanges, T::Counter,
                     QStringLiteral("Times a discovered upstream model name changed."));
    registry.declare(
        metric::modelInfo, T::Gauge,
        QStringLiteral("The upstream model name each route currently sends (always 1)."));
    registry.declare(metric::modelAmbiguous, T::Gauge,
                     QStringLiteral("1 while a backend serves zero or several models."));
    registry.declare(
        metric::upstreamAttempts, T::Counter,
        QStringLiteral("Upstream attempts that failed before a response head, by reason."));
}

// The client side and SLP's own share: connections, in-flight requests, overhead.
void declareConnectionMetrics(MetricsRegistry &registry)
{
    using T = MetricsRegistry::Type;
    registry.declare(metric::clientConnections, T::Gauge,
                     QStringLiteral("Open client connections."));
    registry.declare(metric::inflightRequests, T::Gauge,
                     QStringLiteral("Requests being forwarded right now."));
    registry.declare(metric::acceptedConnections, T::Counter,
                     QStringLiteral("Client connections accepted, by worker thread (the kernel "
                                    "spreads them with SO_REUSEPORT)."));
    registry.declare(metric::consecutiveFailures, T::Gauge,
                     QStringLiteral("SLP's failed upstream attempts for the route in a row "
                                    "(refused, reset, timed out, protocol error); 0 once a "
                                    "response head arrives."));
    registry.declare(
        metric::overhead, T::Histogram,
        QStringLiteral("Time SLP itself spends on a forwarded request: complete "
                       "request to upstream hand-over, plus upstream head to client "
                       "head written."),
        {1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 1e-1});
}

// Per route: in flight, stream timers, broken responses, state, bodies, tunnels.
void declareRouteMetrics(MetricsRegistry &registry)
{
    using T = MetricsRegistry::Type;
    registry.declare(metric::routeInflight, T::Gauge,
                     QStringLiteral("Requests being forwarded right now, by route."));
    registry.declare(metric::streamIdleTimeouts, T::Counter,
                     QStringLiteral("Responses cut because the upstream sent no body byte for "
                                    "the route's stream_idle_timeout."));
    registry.declare(metric::sseKeepalives, T::Counter,
                     QStringLiteral("Keep-alive comments written into silent event streams "
                                    "(the route's sse_keepalive)."));
    registry.declare(metric::responsesBroken, T::Counter,
                     QStringLiteral("Responses whose head reached the client and whose body did "
                                    "not end cleanly, by reason: idle_timeout, upstream_closed, "
                                    "upstream_reset, client_gone."));
    registry.declare(
        metric::routeState, T::Gauge,
        QStringLiteral("A route's passive state from SLP's own outcomes: 1 for the "
                       "current one of ok, slow, failing, stalled, 0 for the others."));
    registry.declare(metric::bufferedBodyBytes, T::Gauge,
                     QStringLiteral("Request body bytes held in memory now, against "
                                    "max_buffered_body_bytes."));
    registry.declare(metric::bodyReadsPaused, T::Counter,
                     QStringLiteral("Request bodies whose reading waited for "
                                    "max_buffered_body_bytes."));
    registry.declare(metric::openTunnels, T::Gauge,
                     QStringLiteral("WebSocket tunnels open now, by route."));
    registry.declare(metric::tunnelBytes, T::Counter,
                     QStringLiteral("Bytes carried by closed WebSocket tunnels, by route and "
                                    "direction (up: client to upstream; down: upstream to "
                                    "client)."));
}

} // namespace

void declareSlpMetrics(MetricsRegistry &registry)
{
    declareRequestMetrics(registry);
    declareConnectionMetrics(registry);
    declareRouteMetrics(registry);
}

PromLabels metric::modelLabels(const QString &modelId)
{
    return {{QStringLiteral("model_id"), modelId}};
}

PromLabels metric::requestLabels(const QString &modelId, int status)
{
    return {{QStringLiteral("model_id"), modelId},
            {QStringLiteral("code"), QString::number(status)}};
}

} // namespace slp
