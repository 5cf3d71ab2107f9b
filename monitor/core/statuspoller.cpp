// SPDX-License-Identifier: GPL-3.0-or-later
#include "statuspoller.h"

#include <QLoggingCategory>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSslConfiguration>

#include <algorithm>

Q_LOGGING_CATEGORY(lcPoller, "slp.monitor.poller")

namespace slp::monitor {

using namespace std::chrono;

StatusPoller::StatusPoller(QObject *parent)
    : QObject(parent), m_network(new QNetworkAccessManager(this))
{
    // A desktop's http_proxy must not sit between the monitor and a daemon on localhost.
    m_network->setProxy(QNetworkProxy::NoProxy);
    m_next.setSingleShot(true);
    m_deadline.setSingleShot(true);
    connect(&m_next, &QTimer::timeout, this, &StatusPoller::pollNow);
    connect(&m_deadline, &QTimer::timeout, this, &StatusPoller::onDeadline);
}

StatusPoller::~StatusPoller()
{
    m_running = false;
    abortPoll();
}

milliseconds StatusPoller::defaultTimeout(milliseconds interval)
{
    return std::clamp(interval, milliseconds(1000), milliseconds(5000));
}

void StatusPoller::setBaseUrl(const QUrl &url)
{
    if (url == m_baseUrl)
        return;
    m_baseUrl = url;
    if (isPolling()) {
        // Its answer would describe the old URL.
        abortPoll();
        if (m_running)
            pollNow();
    }
}

void StatusPoller::setInterval(milliseconds interval)
{
    m_interval = interval;
    if (m_next.isActive())
        m_next.start(m_interval);
}

void StatusPoller::setTimeout(milliseconds timeout)
{
    m_timeout = timeout;
}

void StatusPoller::setCaCertificates(const QList<QSslCertificate> &certificates)
{
    m_caCertificates = certificates;
}

void StatusPoller::start()
{
    m_running = true;
    pollNow();
}

void StatusPoller::stop()
{
    m_running = false;
    m_next.stop();
    abortPoll();
}

void StatusPoller::pollNow()
{
    if (isPolling())
        return;
    m_next.stop();
    m_result = PollResult{};
    m_result.baseUrl = m_baseUrl;
    m_timedOut = false;
    m_catalogReply = get(QStringLiteral("/v1/models?debug"));
    m_metricsReply = get(QStringLiteral("/metrics"));
    m_deadline.start(m_timeout);
}

QNetworkReply *StatusPoller::get(const QString &pathAndQuery)
{
    QString base = m_baseUrl.toString(QUrl::StripTrailingSlash);
    QNetworkRequest request(QUrl(base + pathAndQuery));
    request.setAttribute(QNetworkRequest::CacheLoadControlAttribute,
                         QNetworkRequest::AlwaysNetwork);
    request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    if (!m_caCertificates.isEmpty()) {
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.addCaCertificates(m_caCertificates);
        request.setSslConfiguration(tls);
    }
    QNetworkReply *reply = m_network->get(request); // owned by us: deleteLater when finished
    connect(reply, &QNetworkReply::finished, this, [this, reply] { onReplyFinished(reply); });
    return reply;
}

void StatusPoller::onReplyFinished(QNetworkReply *reply)
{
    reply->deleteLater();
    const bool isCatalog = reply == m_catalogReply;
    if (!isCatalog && reply != m_metricsReply)
        return; // a dropped poll's reply

    QString error;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (m_timedOut)
        error = QStringLiteral("no answer within %1 ms").arg(m_timeout.count());
    else if (reply->error() != QNetworkReply::NoError && status == 0)
        error = reply->errorString();
    else if (status != 200)
        error = QStringLiteral("HTTP %1 from %2").arg(status).arg(reply->url().toString());
    const QByteArray body = error.isEmpty() ? reply->readAll() : QByteArray();
    if (isCatalog) {
        m_result.catalogBody = body;
        m_result.catalogError = error;
        m_catalogReply = nullptr;
    } else {
        m_result.metricsBody = body;
        m_result.metricsError = error;
        m_metricsReply = nullptr;
    }
    if (isPolling())
        return;

    m_deadline.stop();
    m_result.finishedAt = QDateTime::currentDateTimeUtc();
    if (m_running)
        m_next.start(m_interval);
    const PollResult result = std::move(m_result);
    m_result = PollResult{};
    emit pollFinished(result);
}

void StatusPoller::onDeadline()
{
    qCDebug(lcPoller) << "poll timed out after" << m_timeout.count() << "ms";
    m_timedOut = true;
    // abort() finishes each reply synchronously; onReplyFinished reports the timeout.
    if (m_catalogReply)
        m_catalogReply->abort();
    if (m_metricsReply)
        m_metricsReply->abort();
}

void StatusPoller::abortPoll()
{
    m_deadline.stop();
    // Forget the replies first so their finished() is ignored as a dropped poll's.
    QNetworkReply *catalog = m_catalogReply;
    QNetworkReply *metrics = m_metricsReply;
    m_catalogReply = nullptr;
    m_metricsReply = nullptr;
    if (catalog)
        catalog->abort();
    if (metrics)
        metrics->abort();
}

} // namespace slp::monitor
