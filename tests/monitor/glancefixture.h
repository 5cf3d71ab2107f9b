// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Polls of an SLP that reports each route's passive state, built in the test: the catalog
// through the daemon's own writer (shared/debugcatalog), /metrics as the daemon writes it.
#include "debugcatalog.h"
#include "status.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QMap>
#include <QPair>
#include <QString>
#include <QUrl>

#include <optional>

namespace slp::monitor::test {

inline const QDateTime kT0 = QDateTime::fromSecsSinceEpoch(1'800'000'000, Qt::UTC);

struct FakeRoute
{
    FakeRoute(const char *routeId, const char *reportedState = "")
        : id(QString::fromUtf8(routeId)), state(QString::fromUtf8(reportedState))
    {}
    QString id;
    QString state; // the catalog's `state`; empty: omitted, as from an older SLP
    std::optional<RouteFailure> failure;
    int ok = 0;                         // slp_requests_total code 200
    int failed = 0;                     // code 502
    QMap<QString, int> broken;          // slp_responses_broken_total by reason
    QList<QPair<QString, int>> buckets; // latency le -> cumulative; +Inf repeats the last
    int consecutive = 0;                // slp_upstream_consecutive_failures
};

inline RouteFailure failureAt(qint64 seconds, const QString &what, const QString &requestId)
{
    return RouteFailure{kT0.addSecs(seconds), what, requestId};
}

inline QByteArray catalogText(const QList<FakeRoute> &routes)
{
    Catalog catalog;
    catalog.created = 1;
    for (const FakeRoute &r : routes) {
        CatalogEntry e;
        e.id = r.id;
        e.upstreamModel = r.id.toUpper();
        e.discovery = QStringLiteral("pinned");
        e.timeout = QStringLiteral("1m0s");
        e.state = r.state;
        e.lastFailure = r.failure;
        catalog.entries << e;
    }
    return catalogToJson(catalog, true);
}

inline QByteArray metricsText(const QList<FakeRoute> &routes)
{
    QByteArray out;
    const auto line = [&out](const QByteArray &name, const QByteArray &labels, double value) {
        out += name + '{' + labels + "} " + QByteArray::number(value) + '\n';
    };
    for (const FakeRoute &r : routes) {
        const QByteArray id = "model_id=\"" + r.id.toUtf8() + '"';
        line("slp_requests_total", id + ",code=\"200\"", r.ok);
        line("slp_requests_total", id + ",code=\"502\"", r.failed);
        for (auto it = r.broken.cbegin(); it != r.broken.cend(); ++it)
            line("slp_responses_broken_total", id + ",reason=\"" + it.key().toUtf8() + '"',
                 it.value());
        int total = 0;
        for (const auto &[le, n] : r.buckets) {
            line("slp_upstream_latency_seconds_bucket", id + ",le=\"" + le.toUtf8() + '"', n);
            total = n;
        }
        line("slp_upstream_latency_seconds_bucket", id + ",le=\"+Inf\"", total);
        line("slp_upstream_consecutive_failures", id, r.consecutive);
    }
    return out;
}

inline PollResult pollAt(qint64 seconds, const QList<FakeRoute> &routes)
{
    PollResult p;
    p.baseUrl = QUrl(QStringLiteral("http://127.0.0.1:8080"));
    p.finishedAt = kT0.addSecs(seconds);
    p.catalogBody = catalogText(routes);
    p.metricsBody = metricsText(routes);
    return p;
}

inline StatusSnapshot snapshotAt(qint64 seconds, const QList<FakeRoute> &routes)
{
    return readSnapshot(pollAt(seconds, routes));
}

} // namespace slp::monitor::test
