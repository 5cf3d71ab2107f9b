// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "config/config.h"
#include "discovery/discoverystate.h"
#include "discovery/modellist.h"
#include "discovery/modellistparser.h"
#include "upstream/upstreamtransport.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

namespace slp {

class MetricsRegistry;
class ModelProbe;
class UpstreamTransport;

// Learns one unpinned backend's model name in the background: probes GET URL/v1/models (a
// ModelProbe through the discovery transport) on a QTimer back-off, never on the request path,
// and reports what it learned; it never writes into a route table. Zero or several models
// never guess.
class DiscoverySupervisor : public QObject
{
    Q_OBJECT
public:
    // `transport` outlives the supervisor (the daemon owns both).
    DiscoverySupervisor(const Route &route, qsizetype routeIndex, const DiscoverySettings &settings,
                        UpstreamTransport &transport, MetricsRegistry &metrics,
                        QObject *parent = nullptr);
    ~DiscoverySupervisor() override;

    void start();
    qsizetype routeIndex() const { return m_index; }
    // After a reload kept this backend unchanged: its route is now at `routeIndex`.
    void rebind(qsizetype routeIndex) { m_index = routeIndex; }
    const DiscoveryState &state() const { return m_state; }
    const DiscoverySettings &settings() const { return m_settings; }

Q_SIGNALS:
    // A probe settled: state() holds what is known now. `nameChanged` when the upstream name
    // changed (first discovery included).
    void reported(qsizetype routeIndex, bool nameChanged);

private:
    void probe();
    void onProbeFinished();
    void onParsed(const ModelList &list);
    void reportAmbiguous(const QStringList &ids, qsizetype count);
    void adopt(const QString &name);
    // The backend's entry for the name, as the catalog shows it.
    void keepFields(const ModelList &list);
    void settle(ProbeResult result, const QString &detail);

    DiscoveryState m_state;
    qsizetype m_index;
    QString m_id;
    QString m_url;
    DiscoverySettings m_settings;
    UpstreamTransport &m_transport;
    UpstreamRequest m_probeRequest; // GET /v1/models, built once
    MetricsRegistry &m_metrics;
    DiscoverySchedule m_schedule;
    QTimer m_nextProbe;
    QPointer<ModelProbe> m_probe; // child, while one runs
    qint64 m_bodyBytesRead = 0;   // of the last probe, for the memory trim after it
    ModelListParser m_parser;
    bool m_nameChanged = false; // since the last report
    bool m_trimmedSaid = false; // an oversized entry was logged (until one fits again)
};

} // namespace slp
