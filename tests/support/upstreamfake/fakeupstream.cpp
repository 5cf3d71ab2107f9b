// SPDX-License-Identifier: GPL-3.0-or-later
#include "fakeupstream.h"

namespace slp::test {

QByteArray FakeCall::read(qint64 maxBytes)
{
    ++m_log->reads;
    QByteArray out = m_buffer.left(maxBytes);
    m_buffer.remove(0, out.size());
    const qint64 more = std::min<qint64>(maxBytes - out.size(), m_generate);
    if (more > 0) {
        out += QByteArray(qsizetype(more), 'x');
        m_generate -= more;
    }
    return out;
}

void FakeCall::abort()
{
    if (!m_running)
        return;
    m_log->aborted = true;
    m_running = false;
    m_failure = Failure::Aborted;
    m_errorDetail = QStringLiteral("aborted");
    notifyFinished();
}

void FakeCall::sendHead(int status, const HeaderList &headers, qint64 contentLength,
                        const QByteArray &reason)
{
    UpstreamHead head;
    head.status = status;
    head.reason = reason;
    head.headers = headers;
    head.contentLength = contentLength;
    m_headArrived = true;
    notifyHead(head);
}

void FakeCall::push(const QByteArray &bytes)
{
    m_buffer += bytes;
    notifyReadable();
}

void FakeCall::succeed()
{
    m_running = false;
    notifyFinished();
}

void FakeCall::fail(Failure failure, const QString &detail)
{
    m_running = false;
    m_failure = failure;
    m_errorDetail = detail;
    notifyFinished();
}

std::unique_ptr<UpstreamCall> FakeTransport::start(const UpstreamRequest &request,
                                                   UpstreamCall::Observer &observer)
{
    requests.append(request);
    logs.append(std::make_shared<CallLog>());
    if (failAtStart) {
        const UpstreamCall::End end = *std::exchange(failAtStart, nullptr);
        ++failedAtStart;
        calls.append(nullptr);
        observer.upstreamFinished(end); // may start again (a re-dial) from inside
        return nullptr;
    }
    auto call = std::make_unique<FakeCall>(logs.last(), observer);
    calls.append(call.get());
    return call;
}

std::unique_ptr<UpgradeCall> FakeTransport::upgrade(const UpstreamRequest &request,
                                                    UpgradeCall::Observer &observer)
{
    requests.append(request);
    observer.upgradeFailed({UpstreamCall::Failure::Other,
                            QStringLiteral("the fake transport makes no upgrades"),
                            {},
                            false});
    return nullptr;
}

} // namespace slp::test
