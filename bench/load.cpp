// SPDX-License-Identifier: GPL-3.0-or-later
#include "load.h"

#include "connection.h"

#include <QEventLoop>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace slp::bench {

QByteArray requestHead(const Endpoint &ep, qint64 bodySize, const QByteArray &extra)
{
    return "POST /v1/chat/completions HTTP/1.1\r\nHost: " + ep.hostPort +
           "\r\nContent-Type: application/json\r\nContent-Length: " + QByteArray::number(bodySize) +
           "\r\n" + extra + "\r\n";
}

double percentile(std::vector<qint64> v, double p)
{
    if (v.empty())
        return std::nan("");
    std::sort(v.begin(), v.end());
    const size_t rank = size_t(std::ceil(p / 100.0 * double(v.size())));
    return double(v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)]);
}

void LoadStats::add(const LoadStats &o)
{
    ok += o.ok;
    bad += o.bad;
    latNs.insert(latNs.end(), o.latNs.begin(), o.latNs.end());
    secs += o.secs;
    cpu += o.cpu;
    selfCpu += o.selfCpu;
    peakRssKb = std::max(peakRssKb, o.peakRssKb);
}

LoadStats runLoad(const LoadSpec &spec, const ProcSet &proc)
{
    LoadStats st;
    QEventLoop loop;
    std::vector<std::unique_ptr<Conn>> conns;
    bool measuring = spec.warmupMs <= 0;
    bool stopping = false;
    int inflight = 0;
    qint64 measureStart = 0;
    double cpu0 = 0;
    double self0 = 0;

    auto startMeasure = [&] {
        measuring = true;
        measureStart = nowNs();
        cpu0 = proc.isEmpty() ? 0 : proc.cpuSeconds();
        self0 = selfCpuSeconds();
        proc.resetPeak();
    };
    auto stop = [&] {
        if (stopping)
            return;
        stopping = true;
        st.secs = double(nowNs() - measureStart) / 1e9;
        st.cpu = proc.isEmpty() ? 0 : proc.cpuSeconds() - cpu0;
        st.selfCpu = selfCpuSeconds() - self0;
        st.peakRssKb = proc.isEmpty() ? 0 : proc.statusKb("VmHWM:");
        if (inflight == 0)
            loop.quit();
    };

    if (measuring)
        startMeasure();
    else
        QTimer::singleShot(spec.warmupMs, &loop, startMeasure);
    if (spec.maxRequests <= 0)
        QTimer::singleShot(std::max(0, spec.warmupMs) + spec.durationMs, &loop, stop);
    // Safety net: a wedged proxy must not hang the benchmark.
    QTimer::singleShot(std::max(0, spec.warmupMs) + spec.durationMs + 120000, &loop, [&] {
        std::fprintf(stderr, "slp_bench: load timed out with %d requests in flight\n", inflight);
        stop();
        loop.quit();
    });

    for (int i = 0; i < spec.conc; ++i) {
        auto c = std::make_unique<Conn>(spec.ep, false);
        c->onDone = [&](Conn &conn) {
            --inflight;
            if (measuring && !stopping) {
                if (conn.failed || conn.status != 200) {
                    if (st.bad < 3 && qEnvironmentVariableIsSet("SLP_BENCH_DEBUG"))
                        std::fprintf(stderr, "failure: status %d failed %d\n", conn.status,
                                     int(conn.failed));
                    ++st.bad;
                } else {
                    ++st.ok;
                    st.latNs.push_back(conn.endNs - conn.startNs);
                }
                if (spec.maxRequests > 0 && st.ok + st.bad >= spec.maxRequests)
                    stop();
            }
            if (stopping) {
                if (inflight == 0)
                    loop.quit();
                return;
            }
            ++inflight;
            if (conn.failed) // not at once: a refused connect would recurse
                QTimer::singleShot(1, &loop,
                                   [&conn, &spec] { conn.request(spec.head, spec.body); });
            else
                conn.request(spec.head, spec.body);
        };
        conns.push_back(std::move(c));
    }
    for (auto &c : conns) {
        ++inflight;
        c->request(spec.head, spec.body);
    }
    loop.exec();
    return st;
}

StreamStats runStreams(const Endpoint &ep, int n, int expectedEvents, int intervalMs, int rampMs,
                       const ProcSet &proc, const ProcSet &upstream)
{
    const QByteArray body =
        R"({"model":"mock","stream":true,"messages":[{"role":"user","content":"Hello"}]})";
    const QByteArray head = requestHead(ep, body.size(),
                                        "X-Mock-Events: " + QByteArray::number(expectedEvents - 3) +
                                            "\r\nX-Mock-Reasoning-Events: 0"
                                            "\r\nX-Mock-Event-Interval-Ms: " +
                                            QByteArray::number(intervalMs) + "\r\n");
    const qint64 stallNs = qint64(intervalMs + 100) * 1000000;

    StreamStats st;
    st.streams = n;
    QEventLoop loop;
    std::vector<std::unique_ptr<Conn>> conns;
    int opened = 0;
    int done = 0;
    const qint64 t0 = nowNs();
    proc.resetPeak();
    const double cpu0 = proc.isEmpty() ? 0 : proc.cpuSeconds();
    const double self0 = selfCpuSeconds();
    const double up0 = upstream.isEmpty() ? 0 : upstream.cpuSeconds();
    qint64 rssMax = 0;

    auto finishAll = [&] {
        st.secs = double(nowNs() - t0) / 1e9;
        st.cpu = proc.isEmpty() ? 0 : proc.cpuSeconds() - cpu0;
        st.selfCpu = selfCpuSeconds() - self0;
        st.upstreamCpu = upstream.isEmpty() ? 0 : upstream.cpuSeconds() - up0;
        st.peakRssKb = std::max(rssMax, proc.isEmpty() ? 0 : proc.statusKb("VmHWM:"));
        loop.quit();
    };

    for (int i = 0; i < n; ++i) {
        auto c = std::make_unique<Conn>(ep, true);
        c->onDone = [&](Conn &conn) {
            ++done;
            const auto &ev = conn.eventNs;
            st.events += qint64(ev.size());
            const bool complete =
                !conn.failed && conn.status == 200 && int(ev.size()) >= expectedEvents;
            if (!ev.empty())
                st.ttfeNs.push_back(ev.front() - conn.startNs);
            bool stall = false;
            for (size_t k = 1; k < ev.size(); ++k) {
                const qint64 gap = ev[k] - ev[k - 1];
                st.gapNs.push_back(gap);
                st.maxGapNs = std::max(st.maxGapNs, gap);
                stall = stall || gap > stallNs;
            }
            if (complete) {
                ++st.completed;
                st.stalled += stall ? 1 : 0;
            } else {
                ++st.failed;
            }
            conn.closeSocket();
            if (done == n)
                finishAll();
        };
        conns.push_back(std::move(c));
    }

    // Open the streams spread over rampMs so accept queues are not flooded at once.
    QTimer ramp;
    ramp.setTimerType(Qt::PreciseTimer);
    const int perTick = std::max(1, int(std::ceil(double(n) / std::max(1, rampMs))));
    QObject::connect(&ramp, &QTimer::timeout, &loop, [&] {
        for (int k = 0; k < perTick && opened < n; ++k) {
            Conn &c = *conns[size_t(opened++)];
            c.request(head, body);
        }
        if (opened == n)
            ramp.stop();
    });
    ramp.start(1);

    QTimer sampler;
    QObject::connect(&sampler, &QTimer::timeout, &loop,
                     [&] { rssMax = std::max(rssMax, proc.statusKb("VmRSS:")); });
    if (!proc.isEmpty())
        sampler.start(250);

    const int deadline = rampMs + expectedEvents * intervalMs + 30000;
    QTimer::singleShot(deadline, &loop, [&] {
        std::fprintf(stderr, "slp_bench: %d of %d streams unfinished at the deadline\n", n - done,
                     n);
        st.failed += n - done;
        for (auto &c : conns)
            c->onDone = nullptr;
        finishAll();
    });
    loop.exec();
    return st;
}

} // namespace slp::bench
