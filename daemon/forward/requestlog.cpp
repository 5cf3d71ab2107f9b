// SPDX-License-Identifier: GPL-3.0-or-later
#include "forward/requestlog.h"

#include "forward/exchangecontext.h"
#include "forward/forwardplan.h"
#include "goduration.h"
#include "observe/logging.h"

namespace slp {

namespace {
constexpr int kMaxUrlBytes = 512; // a target longer than this is cut in the log

// Latencies as Go prints a rounded Duration: "1.482s" (ms above a second), "12.345ms".
QString formatLatency(qint64 ns)
{
    const qint64 unit = ns >= 1'000'000'000 ? 1'000'000 : 1000;
    return formatGoDuration(Nanoseconds((ns + unit / 2) / unit * unit));
}

// quoteForLog without the quotes: for values that read better bare (ids, paths).
QString bareForLog(const QByteArray &value, int maxBytes = 128)
{
    return quoteForLog(value, maxBytes).mid(1).chopped(1);
}
} // namespace

void RequestLog::write(QtMsgType type, const QString &what) const
{
    QString line =
        QLatin1Char('[') + QString::fromLatin1(m_plan.requestId) + QStringLiteral("] ") + what;
    if (!m_upstreamId.isEmpty())
        line += QStringLiteral(" upstream=") + bareForLog(m_upstreamId);
    line += QStringLiteral(" model=") + quoteForLog(m_plan.route->modelId.toUtf8());
    if (!m_plan.clientRequestId.isEmpty())
        line += QStringLiteral(" client=") + quoteForLog(m_plan.clientRequestId);
    if (!m_plan.traceId.isEmpty())
        line += QStringLiteral(" trace=") + QString::fromLatin1(m_plan.traceId); // 32 hex, checked
    if (type == QtInfoMsg)
        qCInfo(lcProxy).noquote() << line;
    else
        qCWarning(lcProxy).noquote() << line;
}

QString RequestLog::methodAndUrl() const
{
    return QString::fromLatin1(m_plan.request.method) + QLatin1Char(' ') +
           quoteForLog(m_plan.route->origin.toUtf8() + m_plan.request.target, kMaxUrlBytes);
}

void RequestLog::attemptFailed(int attempt, bool timedOut, const QString &peer,
                               const QString &detail) const
{
    const QString head = QStringLiteral("Attempt %1/%2 for model %3 failed: ")
                             .arg(attempt)
                             .arg(m_plan.route->maxAttempts)
                             .arg(bareForLog(m_plan.route->modelId.toUtf8()));
    if (timedOut) {
        write(QtWarningMsg, head + QStringLiteral("timed out after ") + m_plan.route->timeoutText +
                                QStringLiteral(": ") + methodAndUrl() + peer +
                                QStringLiteral(": no response headers"));
    } else {
        write(QtWarningMsg, head + methodAndUrl() + peer + QStringLiteral(": ") + detail);
    }
}

void RequestLog::brokeOff(qint64 bytesDown, const QString &peer, const QString &detail) const
{
    write(QtWarningMsg,
          QStringLiteral("upstream response for model %1 broke off after %2 B: %3%4: %5")
              .arg(bareForLog(m_plan.route->modelId.toUtf8()), QString::number(bytesDown),
                   methodAndUrl(), peer, detail));
}

void RequestLog::aggregateFailed(const QString &reason) const
{
    write(QtWarningMsg,
          QStringLiteral("aggregate for model %1 failed: %2: %3")
              .arg(bareForLog(m_plan.route->modelId.toUtf8()), reason, methodAndUrl()));
}

void RequestLog::streamIdle(qint64 upstreamBytes) const
{
    write(QtWarningMsg, QStringLiteral("stream idle for %1 after %2 bytes: %3")
                            .arg(m_plan.route->streamIdleTimeoutText,
                                 QString::number(upstreamBytes), methodAndUrl()));
}

void RequestLog::refused(const QString &detail) const
{
    write(QtWarningMsg,
          QStringLiteral("%1 for model %2 refused: %3")
              .arg(methodAndUrl(), bareForLog(m_plan.route->modelId.toUtf8()), detail));
}

void RequestLog::completed(int status, qint64 latencyNs, qint64 bytesDown) const
{
    if (!m_context.logRequests)
        return;
    const QString as = m_plan.renamedTo.isEmpty()
                           ? QString()
                           : QStringLiteral(" as ") + quoteForLog(m_plan.renamedTo.toUtf8());
    // One multi-arg call: a '%2F' in the target must not be taken for a placeholder.
    write(QtInfoMsg,
          QStringLiteral("%1 %2: %3%4 -> %5 %6 in %7 (%8 B up, %9 B down)")
              .arg(QString::fromLatin1(m_plan.request.method),
                   bareForLog(m_plan.request.target, kMaxUrlBytes),
                   bareForLog(m_plan.route->modelId.toUtf8()), as, m_plan.route->origin,
                   QString::number(status), formatLatency(latencyNs),
                   QString::number(m_plan.request.body.size()), QString::number(bytesDown)));
}

void RequestLog::tunnelClosed(qint64 bytesUp, qint64 bytesDown, qint64 openMs, const QString &how,
                              bool clean) const
{
    if (clean && !m_context.logRequests)
        return;
    write(clean ? QtInfoMsg : QtWarningMsg,
          QStringLiteral("tunnel for model %1 %2 after %3 (%4 B up, %5 B down)")
              .arg(bareForLog(m_plan.route->modelId.toUtf8()), how,
                   formatLatency(openMs * 1'000'000), QString::number(bytesUp),
                   QString::number(bytesDown)));
}

void RequestLog::clientGone() const
{
    if (m_context.logRequests) {
        write(QtInfoMsg, QStringLiteral("client went away; upstream request for model %1 aborted")
                             .arg(bareForLog(m_plan.route->modelId.toUtf8())));
    }
}

} // namespace slp
