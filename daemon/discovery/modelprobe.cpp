// SPDX-License-Identifier: GPL-3.0-or-later
#include "discovery/modelprobe.h"

#include "discovery/modellist.h"
#include "goduration.h"

namespace slp {

namespace {
QString tooLarge()
{
    return QStringLiteral("model list larger than %1 bytes: stopped reading")
        .arg(kMaxModelListBytes);
}
} // namespace

ModelProbe::ModelProbe(UpstreamTransport &transport, UpstreamRequest request,
                       std::chrono::milliseconds timeout, QObject *parent)
    : QObject(parent), m_transport(transport), m_request(std::move(request)), m_timeout(timeout)
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &ModelProbe::onTimeout);
}

ModelProbe::~ModelProbe()
{
    m_done = true;
    if (m_call) {
        m_call->detachObserver();
        m_call->abort(); // a probe cut short (a reload dropped its backend) closes its socket
    }
}

void ModelProbe::start()
{
    m_timer.start(m_timeout);
    // A call that cannot begin reports from inside start() and returns null.
    m_call = m_transport.start(m_request, *this);
}

void ModelProbe::upstreamHead(const UpstreamHead &head)
{
    m_status = head.status;
    if (head.contentLength > kMaxModelListBytes)
        stop(tooLarge()); // refused before its first byte is read
}

void ModelProbe::upstreamReadable()
{
    if (!m_stopped.isEmpty())
        return;
    while (m_call && m_call->bytesAvailable() > 0) {
        const QByteArray piece = m_call->read(kMaxModelListBytes + 1 - m_body.size());
        if (piece.isEmpty())
            break;
        m_bytesRead += piece.size();
        m_body += piece;
        if (m_body.size() > kMaxModelListBytes)
            return stop(tooLarge());
    }
}

void ModelProbe::upstreamFinished(const UpstreamCall::End &end)
{
    m_timer.stop();
    if (!m_stopped.isEmpty())
        return finish(m_stopped);
    if (!end.headArrived || end.failure != UpstreamCall::Failure::None)
        return finish(end.detail.isEmpty() ? QStringLiteral("the probe failed") : end.detail);
    upstreamReadable(); // what arrived with the end
    if (!m_stopped.isEmpty())
        return finish(m_stopped);
    if (m_status != 200)
        return finish(QStringLiteral("HTTP status %1").arg(m_status));
    finish({});
}

void ModelProbe::onTimeout()
{
    stop(QStringLiteral("no answer within %1").arg(formatGoDuration(m_timeout)));
}

void ModelProbe::stop(const QString &why)
{
    m_stopped = why;
    m_body.clear();
    if (m_call)
        m_call->abort(); // reports its end, synchronously or soon: finish() follows
    else
        finish(why);
}

void ModelProbe::finish(const QString &failure)
{
    if (m_done)
        return;
    m_done = true;
    m_timer.stop();
    m_failure = failure;
    if (!failure.isEmpty())
        m_body.clear();
    // From the event loop: the owner may delete this probe in its slot, and this may run
    // inside the call's callback or inside start().
    QMetaObject::invokeMethod(this, &ModelProbe::finished, Qt::QueuedConnection);
}

} // namespace slp
