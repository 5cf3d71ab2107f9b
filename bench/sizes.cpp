// SPDX-License-Identifier: GPL-3.0-or-later
#include "sizes.h"

#include "load.h"

#include <cmath>

namespace slp::bench {

namespace {

struct Size
{
    const char *label;
    qint64 bytes;
    int count;      // requests per way per round (a full run)
    int quickCount; // ... in a --quick run
};

const QList<Size> kSizes{
    {"1 KB", 1000, 200, 20},  {"64 KB", 64000, 100, 10}, {"256 KB", 256000, 60, 6},
    {"1 MB", 1000000, 30, 4}, {"8 MB", 8000000, 8, 2},   {"22 MB", 22000000, 5, 1},
};

// The targets of issue 26: at 256 KB within twice nginx's added p50, at 22 MB at most +5 ms.
void judge(const Way &way, const QString &what, const Size &sz, double added, double nginxAdded,
           qint64 failed, QList<Check> &checks)
{
    if (!way.slp)
        return;
    const QString name = QStringLiteral("%1 %2 added p50").arg(what, sz.label);
    if (sz.bytes == 256000) {
        const double bound = 2 * std::max(nginxAdded, 0.0);
        checks.append({way.name, name, "<= 2x nginx (+" + fmt(bound, 2) + " ms)",
                       fmtAdded(added, 2) + " ms", failed == 0 && added <= bound});
    } else if (sz.bytes == 22000000) {
        checks.append(
            {way.name, name, "<= +5 ms", fmtAdded(added, 2) + " ms", failed == 0 && added <= 5.0});
    }
}

} // namespace

QJsonObject runSizes(const QList<Way> &ways, const Options &opt, bool responses, QList<Line> &lines,
                     QList<Check> &checks, QStringList &plot)
{
    const int nWays = int(ways.size());
    const QString what = responses ? QStringLiteral("resp") : QStringLiteral("req");
    lines.append({responses ? QStringLiteral("3. response bodies by size (c=1, 1 KB request; the "
                                             "sink answers N bytes)")
                            : QStringLiteral("2. request bodies by size (c=1; the sink reads and "
                                             "discards them, answers {})"),
                  {},
                  {}});
    QJsonObject json;
    Line failedLine{QStringLiteral("%1 failed requests (all sizes)").arg(what), {}, {}};
    QList<qint64> failed(nWays, 0);
    for (const Size &sz : kSizes) {
        const QByteArray body = largeBody(responses ? 1000 : sz.bytes);
        const QByteArray extra =
            responses ? "X-Sink-Response-Bytes: " + QByteArray::number(sz.bytes) + "\r\n"
                      : QByteArray();
        QList<LoadStats> per(nWays);
        for (int r = 0; r < opt.rounds; ++r) {
            for (int wi : order(nWays, r)) {
                const Way &w = ways[wi];
                progress(
                    QStringLiteral("%1 %2 round %3 %4").arg(what, sz.label).arg(r + 1).arg(w.name));
                LoadSpec spec;
                spec.ep = w.sink;
                spec.head = requestHead(w.sink, body.size(), extra);
                spec.body = body;
                spec.conc = 1;
                spec.durationMs = 600000;
                spec.maxRequests = 1;
                runLoad(spec, ProcSet()); // warm the connection
                spec.maxRequests = opt.quick ? sz.quickCount : sz.count;
                per[wi].add(runLoad(spec, w.proc));
            }
        }
        const double d50 = per[0].p50us() / 1e3;
        const double nginxAdded = per[1].p50us() / 1e3 - d50;
        Line l{QStringLiteral("%1 %2 latency p50 (ms)").arg(what, sz.label), {}, {}};
        Line a{QStringLiteral("%1 %2 added p50 (ms)").arg(what, sz.label), {}, {}};
        Line x{QStringLiteral("%1 %2 added vs nginx's").arg(what, sz.label), {}, {}};
        Line c{QStringLiteral("%1 %2 proxy CPU per request (ms)").arg(what, sz.label), {}, {}};
        Line m{QStringLiteral("%1 %2 proxy peak RSS (MB)").arg(what, sz.label), {}, {}};
        if (sz.bytes == 256000)
            a.target = QStringLiteral("<= 2x nginx");
        if (sz.bytes == 22000000)
            a.target = QStringLiteral("<= +5");
        QString row = QStringLiteral("%1 \"%2\"").arg(sz.bytes).arg(sz.label);
        QJsonObject js;
        for (int i = 0; i < nWays; ++i) {
            const LoadStats &s = per[i];
            const bool proxy = !ways[i].proc.isEmpty();
            const double p50 = s.p50us() / 1e3;
            const double added = p50 - d50;
            failed[i] += s.bad;
            l.cells << fmt(p50, 2);
            a.cells << (i == 0 ? QStringLiteral("-") : fmtAdded(added, 2));
            x.cells << (!ways[i].slp || nginxAdded <= 0 ? QStringLiteral("-")
                                                        : fmt(added / nginxAdded, 1) + "x");
            c.cells << (proxy ? fmt(s.cpuUsPerReq() / 1e3, 2) : QStringLiteral("-"));
            m.cells << (proxy ? fmt(double(s.peakRssKb) / 1024, 1) : QStringLiteral("-"));
            row +=
                QStringLiteral(" %1 %2").arg(p50, 0, 'f', 4).arg(i == 0 ? 0.0 : added, 0, 'f', 4);
            js[ways[i].name] = QJsonObject{
                {"requests", s.ok},
                {"failed", s.bad},
                {"p50_ms", p50},
                {"p99_ms", s.p99us() / 1e3},
                {"added_p50_ms", i == 0 ? QJsonValue() : added},
                {"proxy_cpu_ms_per_req", proxy ? s.cpuUsPerReq() / 1e3 : QJsonValue()},
                {"proxy_peak_rss_kb", proxy ? s.peakRssKb : QJsonValue()},
            };
            judge(ways[i], what, sz, added, nginxAdded, s.bad, checks);
        }
        lines << l << a << x << c;
        if (!responses && sz.bytes >= 1000000)
            lines << m;
        plot << row;
        json[QString::fromLatin1(sz.label)] = js;
    }
    for (qint64 f : failed)
        failedLine.cells << QString::number(f);
    lines << failedLine;
    return json;
}

} // namespace slp::bench
