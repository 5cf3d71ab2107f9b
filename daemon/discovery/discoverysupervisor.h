// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "config/config.h"
#include "discovery/discoverystate.h"
#include "discovery/modellist.h"
#include "discovery/modellistparser.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

class QNetworkAccessManager;
class QNetworkReply;

namespace slp {

class MetricsRegistry;
class UnixProbe;

// Learns one unpinned backend's model name in the background: probes GET URL/v1/models (over
// QNAM, or a UnixProbe for a "unix:" backend) on a QTimer back-off, never on the request path, and
// reports what it learned; it never writes into a route table. Zero or several models never guess.
class DiscoverySupervisor : public QObject
{
    Q_OBJECT
public:
    DiscoverySupervisor(const Route &route, qsizetype routeIndex, const DiscoverySettings &settings,
                        QNetworkAccessManager *network, MetricsRegistry &metrics,
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
    void probeUnix();
    void onUnixProbeFinished();
    void onProbeHead();
    void onProbeData();
    void onProbeFinished();
    void onProbeTimeout();
    QString probeFailure(QNetworkReply *reply) const;
    void onParsed(const ModelList &list);
    void reportAmbiguous(const QStringList &ids, qsizetype count);
    void adopt(const QString &name);
    void settle(ProbeResult result, const QString &detail);

    DiscoveryState m_state;
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
    QString m_unixPath;              // a "unix:/PATH" backend's socket: probed by UnixProbe
    QPointer<UnixProbe> m_unixProbe; // child, while one runs
    QByteArray m_body;               // what the running probe read so far
    qint64 m_bodyBytesRead = 0;      // of the last probe, for the memory trim after it
    bool m_overLimit = false;        // the probe stopped reading past kMaxModelListBytes
    bool m_timedOut = false;
    ModelListParser m_parser;
    bool m_nameChanged = false; // since the last report
};

} // namespace slp
