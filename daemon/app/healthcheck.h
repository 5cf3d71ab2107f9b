// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "app/healthtarget.h"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <chrono>

class QIODevice;

namespace slp {

// `slp --health-check`: one GET /healthz to a running slp, on TCP or a Unix socket, answered
// within `bound` or given up. What a container's HEALTHCHECK runs, so the image needs no curl.
class HealthCheck : public QObject
{
    Q_OBJECT
public:
    static constexpr std::chrono::milliseconds kDefaultBound{3000};

    HealthCheck(const HealthTarget &target, std::chrono::milliseconds bound,
                QObject *parent = nullptr);
    void start();

Q_SIGNALS:
    // Once. healthy: a 200. `message` says what was seen: "status 200 in 2 ms", "connection
    // refused", "timed out: no answer within 3000 ms", "status 503".
    void finished(bool healthy, const QString &message);

private:
    void connectTcp();
    void connectUnix();
    void onConnected();
    void onReadyRead();
    void finish(bool healthy, const QString &message);

    HealthTarget m_target;
    std::chrono::milliseconds m_bound;
    QIODevice *m_socket = nullptr; // Qt child
    QTimer m_deadline;
    QElapsedTimer m_elapsed;
    QByteArray m_received;
    bool m_done = false;
};

} // namespace slp
