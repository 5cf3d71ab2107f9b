// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/upstreamtransport.h"

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QTimer>

#include <chrono>
#include <memory>

namespace slp {

// One GET /v1/models to a backend, sent through an UpstreamTransport: the same dialer and
// response parser as every forwarded request (Envoy's health checks use the router's own
// codec client), so a TLS, plain or `unix:` backend is probed the way it is served. Bounded
// as a hostile backend requires: a declared length past kMaxModelListBytes is refused before
// its first byte, a body that grows past it stops the read, and `timeout` bounds the whole
// probe. Emits finished() once, from the event loop, never from inside start().
class ModelProbe : public QObject, private UpstreamCall::Observer
{
    Q_OBJECT
public:
    ModelProbe(UpstreamTransport &transport, UpstreamRequest request,
               std::chrono::milliseconds timeout, QObject *parent = nullptr);
    ~ModelProbe() override;

    void start();

    // Once finished: why the probe gave no model list ("HTTP status 401", "no answer within
    // 5s", the transport's words), or empty when body() holds the answer.
    const QString &failure() const { return m_failure; }
    QByteArray takeBody() { return std::exchange(m_body, QByteArray()); }
    // Body bytes read, whatever the outcome (the caller trims memory after a large one).
    qint64 bytesRead() const { return m_bytesRead; }

Q_SIGNALS:
    void finished();

private:
    void upstreamHead(const UpstreamHead &head) override;
    void upstreamReadable() override;
    void upstreamFinished(const UpstreamCall::End &end) override;
    void onTimeout();
    // Stops reading: the call is aborted and reports its end (synchronously or soon).
    void stop(const QString &why);
    void finish(const QString &failure);

    UpstreamTransport &m_transport;
    UpstreamRequest m_request;
    std::chrono::milliseconds m_timeout;
    std::unique_ptr<UpstreamCall> m_call;
    QTimer m_timer;
    int m_status = 0;
    QByteArray m_body;
    qint64 m_bytesRead = 0;
    QString m_stopped; // why reading stopped early, once it did
    QString m_failure;
    bool m_done = false;
};

} // namespace slp
