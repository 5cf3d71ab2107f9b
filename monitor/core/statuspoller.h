// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "status.h"

#include <QNetworkReply>
#include <QObject>
#include <QPointer>
#include <QSslCertificate>
#include <QTimer>
#include <QUrl>

#include <chrono>

class QNetworkAccessManager;

namespace slp::monitor {

// The connector: polls GET /v1/models?debug and GET /metrics of one SLP and hands back the
// raw bodies. Qt Core + Network only, so the tray, the window and `--once` share it.
//
// Polls never overlap: the next one is scheduled `interval` after the previous one finished,
// and each poll is cut after `timeout` (a hung daemon must not freeze the icon in "ok").
class StatusPoller : public QObject
{
    Q_OBJECT

public:
    explicit StatusPoller(QObject *parent = nullptr);
    ~StatusPoller() override;

    void setBaseUrl(const QUrl &url); // http://host:port; an in-flight poll is dropped
    QUrl baseUrl() const { return m_baseUrl; }
    void setInterval(std::chrono::milliseconds interval);
    std::chrono::milliseconds interval() const { return m_interval; }
    void setTimeout(std::chrono::milliseconds timeout);
    // Trusted for https:// besides the system's CAs (the next poll on).
    void setCaCertificates(const QList<QSslCertificate> &certificates);
    std::chrono::milliseconds timeout() const { return m_timeout; }

    void start();   // poll now, then every interval
    void stop();    // no more polls; an in-flight one is dropped
    void pollNow(); // a poll now unless one is running (its result is as fresh)
    bool isPolling() const { return m_catalogReply || m_metricsReply; }

    // The default timeout for an interval: long enough for a busy daemon, never longer than
    // the interval (bounded below so a 200ms interval still gets a fair chance).
    static std::chrono::milliseconds defaultTimeout(std::chrono::milliseconds interval);

signals:
    void pollFinished(const slp::monitor::PollResult &result);

private:
    QNetworkReply *get(const QString &pathAndQuery);
    void onReplyFinished(QNetworkReply *reply);
    void onDeadline();
    void abortPoll();

    QNetworkAccessManager *m_network; // child
    QUrl m_baseUrl;
    std::chrono::milliseconds m_interval{10000};
    std::chrono::milliseconds m_timeout{5000};
    QList<QSslCertificate> m_caCertificates;
    QTimer m_next;     // the gap between polls
    QTimer m_deadline; // the per-poll timeout
    bool m_running = false;
    bool m_timedOut = false;
    QPointer<QNetworkReply> m_catalogReply;
    QPointer<QNetworkReply> m_metricsReply;
    PollResult m_result;
};

} // namespace slp::monitor
