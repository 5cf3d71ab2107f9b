// SPDX-License-Identifier: GPL-3.0-or-later
#include "system.h"

#include <QDir>
#include <QFile>

#include <arpa/inet.h>
#include <ctime>
#include <sys/resource.h>
#include <unistd.h>

namespace slp::bench {

qint64 nowNs()
{
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

double selfCpuSeconds()
{
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void raiseFileLimit()
{
    // 2,000 concurrent streams need more descriptors than the usual soft limit of 1,024.
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &rl);
    }
}

std::optional<Endpoint> parseEndpoint(const QString &text)
{
    const qsizetype colon = text.lastIndexOf(':');
    if (colon <= 0)
        return std::nullopt;
    bool ok = false;
    const uint port = text.mid(colon + 1).toUInt(&ok);
    if (!ok || port == 0 || port > 65535)
        return std::nullopt;
    Endpoint ep;
    ep.hostPort = text.toLatin1();
    ep.addr.sin_family = AF_INET;
    ep.addr.sin_port = htons(static_cast<quint16>(port));
    if (::inet_pton(AF_INET, text.left(colon).toLatin1().constData(), &ep.addr.sin_addr) != 1)
        return std::nullopt;
    return ep;
}

ProcSet::ProcSet(int root)
{
    if (root <= 0)
        return;
    m_pids << root;
    // Direct children (nginx's workers), found once by scanning /proc for the parent id.
    const QStringList entries = QDir("/proc").entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &e : entries) {
        bool ok = false;
        const int pid = e.toInt(&ok);
        if (ok && pid != root && statField(pid, 4) == root)
            m_pids << pid;
    }
}

double ProcSet::cpuSeconds() const
{
    static const double tick = double(::sysconf(_SC_CLK_TCK));
    qint64 ticks = 0;
    for (int pid : m_pids)
        ticks += statField(pid, 14) + statField(pid, 15);
    return double(ticks) / tick;
}

void ProcSet::resetPeak() const
{
    // "5" resets VmHWM to the current RSS (Linux 4.0+).
    for (int pid : m_pids) {
        QFile f(QStringLiteral("/proc/%1/clear_refs").arg(pid));
        if (f.open(QIODevice::WriteOnly))
            f.write("5");
    }
}

qint64 ProcSet::statusKb(const char *key) const
{
    qint64 sum = 0;
    for (int pid : m_pids) {
        QFile f(QStringLiteral("/proc/%1/status").arg(pid));
        if (!f.open(QIODevice::ReadOnly))
            continue;
        const QList<QByteArray> lines = f.readAll().split('\n');
        for (const QByteArray &line : lines)
            if (line.startsWith(key))
                sum += line.mid(qstrlen(key)).trimmed().split(' ').value(0).toLongLong();
    }
    return sum;
}

qint64 ProcSet::statField(int pid, int n)
{
    QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray s = f.readAll();
    const qsizetype close = s.lastIndexOf(')');
    if (close < 0)
        return -1;
    const QList<QByteArray> rest = s.mid(close + 2).split(' ');
    return rest.value(n - 3).toLongLong();
}

} // namespace slp::bench
