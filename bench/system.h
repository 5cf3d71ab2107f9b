// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include <netinet/in.h>
#include <optional>

namespace slp::bench {

qint64 nowNs(); // CLOCK_MONOTONIC
double selfCpuSeconds();
void raiseFileLimit();

// Where to send: an IPv4 loopback endpoint.
struct Endpoint
{
    QByteArray hostPort; // for the Host header
    sockaddr_in addr{};
};

std::optional<Endpoint> parseEndpoint(const QString &text);

// A proxy's processes, read from /proc: CPU (utime+stime of the process and its children,
// e.g. nginx's workers) and memory (VmRSS now, VmHWM since the last reset).
class ProcSet
{
public:
    ProcSet() = default;
    explicit ProcSet(int root);

    bool isEmpty() const { return m_pids.isEmpty(); }
    const QList<int> &pids() const { return m_pids; }
    double cpuSeconds() const;
    void resetPeak() const;
    qint64 statusKb(const char *key) const;

private:
    static qint64 statField(int pid, int n); // field n (1-based, as in proc(5)) of /proc/PID/stat

    QList<int> m_pids;
};

} // namespace slp::bench
