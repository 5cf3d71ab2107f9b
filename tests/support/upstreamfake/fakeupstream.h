// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/upstreamtransport.h"

#include <QList>
#include <QPointer>

#include <memory>
#include <optional>

namespace slp::test {

// What outlives a FakeCall (its exchange owns and deletes the call).
struct CallLog
{
    int reads = 0;
    bool aborted = false;
    bool deleted = false;
};

// One upstream request, driven by the test: it sends the head, pushes body bytes and ends
// the call, each reported to its observer as a real transport would.
class FakeCall : public UpstreamCall
{
    Q_OBJECT
public:
    FakeCall(std::shared_ptr<CallLog> log, Observer &observer)
        : UpstreamCall(observer), m_log(std::move(log))
    {}
    ~FakeCall() override { m_log->deleted = true; }

    qint64 bytesAvailable() const override { return m_buffer.size() + m_generate; }
    bool isRunning() const override { return m_running; }
    QByteArray read(qint64 maxBytes) override;
    void abort() override; // reports finished synchronously, as the seam allows

    void sendHead(int status, const HeaderList &headers, qint64 contentLength = -1,
                  const QByteArray &reason = {});
    void push(const QByteArray &bytes);
    // `n` bytes of 'x' produced on demand, for backpressure.
    void generate(qint64 n) { m_generate += n; }
    qint64 generatedLeft() const { return m_generate; }
    void poke() { notifyReadable(); }
    void succeed();
    void fail(Failure failure, const QString &detail);

private:
    std::shared_ptr<CallLog> m_log;
    QByteArray m_buffer;
    qint64 m_generate = 0;
    bool m_running = true;
};

// Records every request it is given and hands out a FakeCall for each, or fails the next
// start() at once (as a transport that cannot even begin does) after failNextStart().
class FakeTransport : public UpstreamTransport
{
public:
    std::unique_ptr<UpstreamCall> start(const UpstreamRequest &request,
                                        UpstreamCall::Observer &observer) override;
    // Upgrades are tested against real sockets (tst_realtime): here one fails at once.
    std::unique_ptr<UpgradeCall> upgrade(const UpstreamRequest &request,
                                         UpgradeCall::Observer &observer) override;

    int started() const { return int(calls.size()); }
    FakeCall *call(int i) const { return calls.value(i); }
    CallLog &log(int i) const { return *logs.at(i); }

    QList<UpstreamRequest> requests;
    QList<QPointer<FakeCall>> calls;
    QList<std::shared_ptr<CallLog>> logs;
    // Used once: the next start() reports `end` from inside and returns null (its calls
    // entry is then null too). Held by pointer: GCC's -O2 with the sanitizers takes an
    // optional End for maybe-uninitialized (-Werror).
    void failNextStart(const UpstreamCall::End &end)
    {
        failAtStart = std::make_unique<UpstreamCall::End>(end);
    }
    std::unique_ptr<UpstreamCall::End> failAtStart;
    int failedAtStart = 0;
};

} // namespace slp::test
