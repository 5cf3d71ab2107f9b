// SPDX-License-Identifier: GPL-3.0-or-later
#include "forward/requestlog.h"

#include "forward/forwardplan.h"
#include "goduration.h"
#include "observe/logging.h"

namespace slp {

namespace {
// Latencies as Go prints a rounded Duration: "1.482s" (ms above a second), "12.345ms".
QString formatLatency(qint64 ns)
{
    const qint64 unit = ns >= 1'000'000'000 ? 1'000'000 : 1000;
    return formatGoDuration(Nanoseconds((ns + unit / 2) / unit * unit));
}

QString bareForLog(const QByteArray &value)
{
    return quoteForLog(value).mid(1).chopped(1);
}
} // namespace

QString RequestLog::upstreamUrl() const
{
    return m_plan.route->origin + QString::fromLatin1(m_plan.request.target);
}

QString RequestLog::clientForLog() const
{
    return m_plan.clientRequestId.isEmpty()
               ? QString()
               : QStringLiteral(" client=") + quoteForLog(m_plan.clientRequestId);
}

QString RequestLog::id() const
{
    return QString::fromLatin1(m_plan.requestId);
}

void RequestLog::attemptFailed(int attempt, bool timedOut, const QString &peer,
                               const QString &detail) const
{
    const QString prefix = QStringLiteral("[%1] Attempt %2/%3 for model %4 failed: ")
                               .arg(id())
                               .arg(attempt)
                               .arg(m_plan.route->maxAttempts)
                               .arg(m_plan.route->modelId);
    const QString target =
        QStringLiteral("%1 \"%2\"%3")
            .arg(QString::fromLatin1(m_plan.request.method), upstreamUrl(), peer);
    if (timedOut) {
        qCWarning(lcProxy).noquote() << prefix + QStringLiteral("timed out after ") +
                                            m_plan.route->timeoutText + QStringLiteral(": ") +
                                            target + QStringLiteral(": no response headers") +
                                            clientForLog();
    } else {
        qCWarning(lcProxy).noquote()
            << prefix + target + QStringLiteral(": ") + detail + clientForLog();
    }
}

void RequestLog::brokeOff(qint64 bytesDown, const QString &peer, const QString &detail) const
{
    qCWarning(lcProxy).noquote()
        << QStringLiteral(
               "[%1] upstream response for model %2 broke off after %3 B: %4 \"%5\"%6: %7%8")
               .arg(id(), m_plan.route->modelId)
               .arg(bytesDown)
               .arg(QString::fromLatin1(m_plan.request.method), upstreamUrl(), peer, detail,
                    clientForLog());
}

void RequestLog::aggregateFailed(const QString &reason, const QByteArray &upstreamId) const
{
    qCWarning(lcProxy).noquote()
        << QStringLiteral("[%1] aggregate for model %2 failed: %3: %4 \"%5\" upstream=%6%7")
               .arg(id(), m_plan.route->modelId, reason, QString::fromLatin1(m_plan.request.method),
                    upstreamUrl(), bareForLog(upstreamId), clientForLog());
}

void RequestLog::streamIdle(qint64 upstreamBytes) const
{
    qCWarning(lcProxy).noquote() << QStringLiteral(
                                        "[%1] stream idle for %2 after %3 bytes: %4 \"%5\"%6")
                                        .arg(id(), m_plan.route->streamIdleTimeoutText)
                                        .arg(upstreamBytes)
                                        .arg(QString::fromLatin1(m_plan.request.method),
                                             upstreamUrl(), clientForLog());
}

void RequestLog::refused(const QString &detail) const
{
    qCWarning(lcProxy).noquote() << QStringLiteral("[%1] %2 \"%3\" for model %4 refused: %5%6")
                                        .arg(id(), QString::fromLatin1(m_plan.request.method),
                                             upstreamUrl(), m_plan.route->modelId, detail,
                                             clientForLog());
}

void RequestLog::completed(int status, qint64 latencyNs, qint64 bytesDown,
                           const QByteArray &upstreamId) const
{
    if (!m_plan.logRequests) {
        return;
    }
    const QString as =
        m_plan.renamedTo.isEmpty() ? QString() : QStringLiteral(" as \"%1\"").arg(m_plan.renamedTo);
    const QString upstream =
        upstreamId.isEmpty() ? QString() : QStringLiteral(" upstream=") + bareForLog(upstreamId);
    qCInfo(lcProxy).noquote() << QStringLiteral(
                                     "[%1] %2 %3: %4%5 -> %6 %7 in %8 (%9 B up, %10 B down)%11%12")
                                     .arg(id(), QString::fromLatin1(m_plan.request.method),
                                          QString::fromLatin1(m_plan.request.target),
                                          m_plan.route->modelId, as, m_plan.route->origin)
                                     .arg(status)
                                     .arg(formatLatency(latencyNs))
                                     .arg(m_plan.request.body.size())
                                     .arg(bytesDown)
                                     .arg(upstream, clientForLog());
}

void RequestLog::clientGone() const
{
    if (m_plan.logRequests) {
        qCInfo(lcProxy).noquote()
            << QStringLiteral("[%1] client went away; upstream request for model %2 aborted%3")
                   .arg(id(), m_plan.route->modelId, clientForLog());
    }
}

} // namespace slp
