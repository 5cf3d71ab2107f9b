#pragma once

#include "config/config.h"
#include "discovery/modellist.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

class QNetworkAccessManager;
class QNetworkReply;

namespace slp {

class MetricsRegistry;
class RouteTable;

// Learns one unpinned backend's model name in the background (design note "Model names"):
// probes GET URL/v1/models on a QTimer back-off, never on the request path, and updates the
// one field of its route that discovery may touch. Zero or several models never guess.
class DiscoverySupervisor : public QObject
{
    Q_OBJECT
public:
    DiscoverySupervisor(RouteTable *table, qsizetype routeIndex, const DiscoverySettings &settings,
                        QNetworkAccessManager *network, MetricsRegistry &metrics,
                        QObject *parent = nullptr);
    ~DiscoverySupervisor() override;

    void start();
    qsizetype routeIndex() const { return m_index; }
    // After a reload kept this backend unchanged: its state moved to `table` at `routeIndex`.
    void rebind(RouteTable *table, qsizetype routeIndex);
    const DiscoverySettings &settings() const { return m_settings; }

Q_SIGNALS:
    // The route's upstream name changed (first discovery included).
    void nameChanged(qsizetype routeIndex);
    // A probe settled: the route's discovery state (name, last probe) may have changed.
    void probed(qsizetype routeIndex);

private:
    void probe();
    void onProbeFinished();
    void onProbeTimeout();
    void settle(ProbeResult result, const QString &detail);
    void scheduleNext(ProbeResult result);

    RouteTable *m_table;
    qsizetype m_index;
    QString m_id;
    QString m_url;
    DiscoverySettings m_settings;
    QPointer<QNetworkAccessManager> m_network;
    MetricsRegistry &m_metrics;
    DiscoverySchedule m_schedule;
    QTimer m_nextProbe;
    QTimer m_probeTimeout;
    QPointer<QNetworkReply> m_reply;
    bool m_timedOut = false;
};

} // namespace slp
