// SPDX-License-Identifier: GPL-3.0-or-later
#include "report.h"

#include "load.h"
#include "multipart.h"
#include "sizes.h"
#include "table.h"

#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace slp::bench {

namespace {

QByteArray smallBody()
{
    // About 300 bytes, like a short chat turn.
    return R"({"model":"static","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France? Please answer in one short sentence, without any additional commentary or formatting."}],"max_tokens":64,"temperature":0.2,"stream":false})";
}

// gnuplot's input (bench/plot-sizes.gp): index 0 request sizes, index 1 response sizes; per
// row the size in bytes, its label, then per way its p50 and its added p50 (ms).
bool writePlotData(const QString &path, const QList<Way> &ways, QStringList requests,
                   QStringList responses)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        std::fprintf(stderr, "slp_bench: cannot write %s\n", qPrintable(path));
        return false;
    }
    QString empty = QStringLiteral("0 \"-\"");
    QStringList names;
    for (const Way &w : ways) {
        empty += QStringLiteral(" NaN NaN");
        names << w.name;
    }
    for (QStringList *block : {&requests, &responses})
        if (block->isEmpty())
            block->append(empty);
    const QString text = "# ways: " + names.join(' ') + "\n# request bodies\n" +
                         requests.join('\n') + "\n\n\n# response bodies\n" + responses.join('\n') +
                         "\n";
    f.write(text.toUtf8());
    return true;
}

} // namespace

int run(const QList<Way> &allWays, const Options &opt)
{
    // The scenarios without bodies run over the ways that are not bodiesOnly; their lines get
    // "-" in those columns (padSkipped) so the table stays aligned.
    QList<Way> ways;
    QList<int> skipped;
    for (int i = 0; i < allWays.size(); ++i)
        if (allWays[i].bodiesOnly)
            skipped.append(i);
        else
            ways.append(allWays[i]);
    const int nWays = int(ways.size());
    QJsonObject json;
    json["date"] = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
    json["quick"] = opt.quick;
    json["cores"] = int(::sysconf(_SC_NPROCESSORS_ONLN));
    json["note"] = opt.note;
    QJsonArray wayNames;
    for (const Way &w : allWays)
        wayNames.append(w.name);
    json["ways"] = wayNames;
    QList<Check> checks;

    QList<Line> lines;
    QStringList plotRequests;
    QStringList plotResponses;
    auto section = [&](const QString &s) { lines.append({s, {}, {}}); };
    const auto padSkipped = [&](qsizetype from) {
        for (qsizetype l = from; l < lines.size(); ++l)
            if (!lines[l].cells.isEmpty())
                for (int i : skipped)
                    lines[l].cells.insert(std::min<qsizetype>(i, lines[l].cells.size()),
                                          QStringLiteral("-"));
    };
    const qsizetype firstSmallLine = lines.size();

    if (opt.only.contains(QStringLiteral("small"))) {
        // -- 1. small POST -------------------------------------------------------------------
        const QByteArray small = smallBody();
        QJsonObject jSmall;
        const QList<int> concs{1, 16, 64};
        QMap<int, QList<LoadStats>> smallRes; // conc -> per way
        for (int c : concs) {
            QList<LoadStats> per(nWays);
            for (int r = 0; r < opt.rounds; ++r) {
                for (int wi : order(nWays, r)) {
                    const Way &w = ways[wi];
                    progress(QStringLiteral("small POST c=%1 round %2 %3")
                                 .arg(c)
                                 .arg(r + 1)
                                 .arg(w.name));
                    LoadSpec spec;
                    spec.ep = w.fast;
                    spec.head = requestHead(w.fast, small.size());
                    spec.body = small;
                    spec.conc = c;
                    spec.warmupMs = opt.warmupMs;
                    spec.durationMs = opt.sliceMs;
                    per[wi].add(runLoad(spec, w.proc));
                }
            }
            smallRes[c] = per;
        }
        {
            section(QStringLiteral("1. small POST (%1 B body, static JSON upstream)")
                        .arg(small.size()));
            const QList<LoadStats> &c1 = smallRes[1];
            const double d50 = c1[0].p50us(), d99 = c1[0].p99us();
            Line l50{QStringLiteral("c=1 latency p50 (us)"), {}, {}};
            Line l99{QStringLiteral("c=1 latency p99 (us)"), {}, {}};
            Line a50{QStringLiteral("c=1 added p50 vs direct (us)"), {}, QStringLiteral("<= +100")};
            Line a99{
                QStringLiteral("c=1 added p99 vs direct (us)"), {}, QStringLiteral("<= nginx")};
            for (int i = 0; i < nWays; ++i) {
                l50.cells << fmt(c1[i].p50us());
                l99.cells << fmt(c1[i].p99us());
                a50.cells << (i == 0 ? QStringLiteral("-") : fmtAdded(c1[i].p50us() - d50));
                a99.cells << (i == 0 ? QStringLiteral("-") : fmtAdded(c1[i].p99us() - d99));
            }
            lines << l50 << l99 << a50 << a99;
            for (int c : concs) {
                Line rps{QStringLiteral("c=%1 req/s").arg(c), {}, c == 16 ? ">= nginx/2" : ""};
                Line cpu{QStringLiteral("c=%1 proxy CPU per request (us)").arg(c), {}, {}};
                Line gen{QStringLiteral("c=%1 generator CPU per request (us)").arg(c), {}, {}};
                Line err{QStringLiteral("c=%1 failed requests").arg(c), {}, {}};
                for (int i = 0; i < nWays; ++i) {
                    const LoadStats &s = smallRes[c][i];
                    rps.cells << fmt(s.rps());
                    cpu.cells << (ways[i].proc.isEmpty() ? QStringLiteral("-")
                                                         : fmt(s.cpuUsPerReq(), 1));
                    gen.cells << fmt(s.ok > 0 ? s.selfCpu * 1e6 / double(s.ok) : std::nan(""), 1);
                    err.cells << QString::number(s.bad);
                }
                if (c == 1)
                    lines << cpu << gen << err;
                else
                    lines << rps << cpu << gen << err;
            }
            const LoadStats &n1 = c1[1];
            const LoadStats &n16 = smallRes[16][1];
            for (int i = 0; i < nWays; ++i) {
                const Way &w = ways[i];
                QJsonObject jw;
                for (int c : concs) {
                    const LoadStats &s = smallRes[c][i];
                    jw[QStringLiteral("c%1").arg(c)] = QJsonObject{
                        {"requests", s.ok},
                        {"failed", s.bad},
                        {"req_per_s", s.rps()},
                        {"p50_us", s.p50us()},
                        {"p99_us", s.p99us()},
                        {"proxy_cpu_us_per_req", w.proc.isEmpty() ? QJsonValue() : s.cpuUsPerReq()},
                        {"generator_cpu_us_per_req",
                         s.ok > 0 ? s.selfCpu * 1e6 / double(s.ok) : QJsonValue()},
                    };
                }
                jSmall[w.name] = jw;
                if (!w.slp)
                    continue;
                const double added = c1[i].p50us() - d50;
                checks.append({w.name, "added p50 at c=1", "<= +100 us", fmtAdded(added) + " us",
                               added <= 100});
                checks.append({w.name, "p99 at c=1 vs nginx", "<= " + fmt(n1.p99us()) + " us",
                               fmt(c1[i].p99us()) + " us", c1[i].p99us() <= n1.p99us()});
                const double rps = smallRes[16][i].rps();
                checks.append({w.name, "req/s at c=16", ">= " + fmt(n16.rps() / 2) + " (nginx/2)",
                               fmt(rps), rps >= n16.rps() / 2});
            }
            json["small_post"] = jSmall;
        }
    }

    padSkipped(firstSmallLine);

    if (opt.only.contains(QStringLiteral("large"))) {
        // -- 2. request bodies by size -------------------------------------------------------
        json["request_sizes"] = runSizes(allWays, opt, false, lines, checks, plotRequests);
    }

    if (opt.only.contains(QStringLiteral("response"))) {
        // -- 3. response bodies by size ------------------------------------------------------
        json["response_sizes"] = runSizes(allWays, opt, true, lines, checks, plotResponses);
    }
    const qsizetype firstStreamLine = lines.size();

    if (opt.only.contains(QStringLiteral("stream"))) {
        // -- 4. streaming --------------------------------------------------------------------
        const int expected = opt.streamSeconds * 1000 / opt.intervalMs;
        section(QStringLiteral("4. streaming (%1 events/s each for %2 s, mock upstream)")
                    .arg(1000 / opt.intervalMs)
                    .arg(opt.streamSeconds));
        QJsonObject jStream;
        for (int n : opt.streamCounts) {
            QList<StreamStats> per(nWays);
            const int rampMs = std::clamp(n, 100, 1000);
            // Fixed order, baselines first: a proxy that wedges its streams leaves the mock loaded
            // with them for the rest of the run, so direct and nginx must not come after it.
            for (int wi = 0; wi < nWays; ++wi) {
                const Way &w = ways[wi];
                progress(QStringLiteral("streams N=%1 %2").arg(n).arg(w.name));
                per[wi] = runStreams(w.mock, n, expected, opt.intervalMs, rampMs, w.proc, opt.mock);
            }
            const double dT50 = percentile(per[0].ttfeNs, 50) / 1e6;
            const double dT99 = percentile(per[0].ttfeNs, 99) / 1e6;
            const double dG99 = percentile(per[0].gapNs, 99) / 1e6;
            Line ok{QStringLiteral("N=%1 streams without stall").arg(n),
                    {},
                    n == 2000 ? QStringLiteral("all") : QString()};
            Line t50{QStringLiteral("N=%1 added TTFE p50 (ms)").arg(n), {}, {}};
            Line t99{QStringLiteral("N=%1 added TTFE p99 (ms)").arg(n), {}, {}};
            Line g99{QStringLiteral("N=%1 inter-event gap p99 (ms)").arg(n), {}, {}};
            Line ga{QStringLiteral("N=%1 added gap p99 (ms)").arg(n), {}, {}};
            Line gm{QStringLiteral("N=%1 max gap (ms)").arg(n), {}, {}};
            Line cpu{QStringLiteral("N=%1 proxy CPU per event (us)").arg(n),
                     {},
                     QStringLiteral("<= 15")};
            Line rss{QStringLiteral("N=%1 proxy peak RSS (MB)").arg(n),
                     {},
                     n == 2000 ? QStringLiteral("<= 100") : QString()};
            Line gen{QStringLiteral("N=%1 generator CPU (% of a core)").arg(n), {}, {}};
            Line up{QStringLiteral("N=%1 mock upstream CPU (% of a core)").arg(n), {}, {}};
            QJsonObject jn;
            for (int i = 0; i < nWays; ++i) {
                const StreamStats &s = per[i];
                const double tt50 = percentile(s.ttfeNs, 50) / 1e6;
                const double tt99 = percentile(s.ttfeNs, 99) / 1e6;
                const double gp99 = percentile(s.gapNs, 99) / 1e6;
                ok.cells << QStringLiteral("%1/%2").arg(s.clean()).arg(n);
                t50.cells << (i == 0 ? fmt(tt50, 2) + " abs" : fmtAdded(tt50 - dT50, 2));
                t99.cells << (i == 0 ? fmt(tt99, 2) + " abs" : fmtAdded(tt99 - dT99, 2));
                g99.cells << fmt(gp99, 1);
                ga.cells << (i == 0 ? QStringLiteral("-") : fmtAdded(gp99 - dG99, 1));
                gm.cells << fmt(double(s.maxGapNs) / 1e6, 0);
                cpu.cells << (ways[i].proc.isEmpty() ? QStringLiteral("-")
                                                     : fmt(s.cpuUsPerEvent(), 1));
                rss.cells << (ways[i].proc.isEmpty() ? QStringLiteral("-")
                                                     : fmt(double(s.peakRssKb) / 1024, 1));
                gen.cells << fmt(s.secs > 0 ? 100 * s.selfCpu / s.secs : 0, 0);
                up.cells << (opt.mock.isEmpty()
                                 ? QStringLiteral("-")
                                 : fmt(s.secs > 0 ? 100 * s.upstreamCpu / s.secs : 0, 0));
                jn[ways[i].name] = QJsonObject{
                    {"streams", n},
                    {"completed", s.completed},
                    {"stalled", s.stalled},
                    {"failed", s.failed},
                    {"without_stall", s.clean()},
                    {"events", s.events},
                    {"ttfe_p50_ms", tt50},
                    {"ttfe_p99_ms", tt99},
                    {"added_ttfe_p50_ms", i == 0 ? QJsonValue() : tt50 - dT50},
                    {"added_ttfe_p99_ms", i == 0 ? QJsonValue() : tt99 - dT99},
                    {"gap_p99_ms", gp99},
                    {"added_gap_p99_ms", i == 0 ? QJsonValue() : gp99 - dG99},
                    {"max_gap_ms", double(s.maxGapNs) / 1e6},
                    {"proxy_cpu_us_per_event",
                     ways[i].proc.isEmpty() ? QJsonValue() : s.cpuUsPerEvent()},
                    {"proxy_peak_rss_kb", ways[i].proc.isEmpty() ? QJsonValue() : s.peakRssKb},
                    {"generator_cpu_share", s.secs > 0 ? s.selfCpu / s.secs : 0},
                    {"upstream_cpu_share", s.secs > 0 ? s.upstreamCpu / s.secs : 0},
                    {"seconds", s.secs},
                };
            }
            lines << ok << t50 << t99 << g99 << ga << gm << cpu << rss << gen << up;
            jStream[QStringLiteral("N%1").arg(n)] = jn;
            if (n == opt.streamCounts.last()) {
                for (int i = 0; i < nWays; ++i) {
                    if (!ways[i].slp)
                        continue;
                    const StreamStats &s = per[i];
                    checks.append({ways[i].name, QStringLiteral("%1 streams without stall").arg(n),
                                   QStringLiteral("%1/%1").arg(n),
                                   QStringLiteral("%1/%2").arg(s.clean()).arg(n), s.clean() == n});
                    checks.append({ways[i].name, QStringLiteral("RSS at %1 streams").arg(n),
                                   "<= 100 MB", fmt(double(s.peakRssKb) / 1024, 1) + " MB",
                                   s.peakRssKb <= 100 * 1024});
                    checks.append({ways[i].name,
                                   QStringLiteral("CPU per event at %1 streams").arg(n), "<= 15 us",
                                   fmt(s.cpuUsPerEvent(), 1) + " us", s.cpuUsPerEvent() <= 15});
                }
            }
        }
        json["streaming"] = jStream;
    }

    if (opt.only.contains(QStringLiteral("aggregate"))) {
        // -- 5. aggregate --------------------------------------------------------------------
        // Non-streaming chat requests answered with 50 content pieces: pass-through (route mock)
        // against reassembly (route mock-agg: slp asks upstream for a stream and joins it).
        section(QStringLiteral(
            "5. aggregate (non-streaming, 50 pieces, c=1): pass-through vs reassembled"));
        QJsonObject jAgg;
        {
            const QByteArray pass =
                R"({"model":"mock","messages":[{"role":"user","content":"Hello"}],"stream":false})";
            const QByteArray agg =
                R"({"model":"mock-agg","messages":[{"role":"user","content":"Hello"}],"stream":false})";
            const QByteArray knobs = "X-Mock-Events: 50\r\nX-Mock-Reasoning-Events: 0\r\n";
            // Ways here: every way with the pass-through body, each slp also with the aggregate
            // one.
            struct AggWay
            {
                QString name;
                int way;
                bool aggregate;
            };
            QList<AggWay> aw;
            for (int i = 0; i < nWays; ++i) {
                aw.append({ways[i].name, i, false});
                if (ways[i].slp)
                    aw.append({ways[i].name + "+aggregate", i, true});
            }
            QList<LoadStats> per(aw.size());
            for (int r = 0; r < opt.rounds; ++r) {
                for (int k : order(int(aw.size()), r)) {
                    const Way &w = ways[aw[k].way];
                    progress(QStringLiteral("aggregate round %1 %2").arg(r + 1).arg(aw[k].name));
                    const QByteArray &body = aw[k].aggregate ? agg : pass;
                    LoadSpec spec;
                    spec.ep = w.mock;
                    spec.head = requestHead(w.mock, body.size(), knobs);
                    spec.body = body;
                    spec.conc = 1;
                    spec.warmupMs = opt.warmupMs;
                    spec.durationMs = opt.sliceMs;
                    per[k].add(runLoad(spec, w.proc));
                }
            }
            const double d50 = per[0].p50us();
            for (qsizetype k = 0; k < aw.size(); ++k) {
                const LoadStats &s = per[k];
                const bool isProxy = !ways[aw[k].way].proc.isEmpty();
                jAgg[aw[k].name] = QJsonObject{
                    {"requests", s.ok},
                    {"failed", s.bad},
                    {"p50_us", s.p50us()},
                    {"p99_us", s.p99us()},
                    {"added_p50_us", k == 0 ? QJsonValue() : s.p50us() - d50},
                    {"proxy_cpu_us_per_req", isProxy ? s.cpuUsPerReq() : QJsonValue()},
                };
            }
            // One line per slp: pass vs aggregate.
            Line hdr{QStringLiteral("(columns here: direct | nginx | per slp: pass / aggregate)"),
                     {},
                     {}};
            Line l50{QStringLiteral("p50 (us)"), {}, {}};
            Line a50{QStringLiteral("added p50 vs direct (us)"), {}, {}};
            Line cpu{QStringLiteral("proxy CPU per request (us)"), {}, {}};
            for (int i = 0; i < nWays; ++i) {
                QStringList c50, cad, ccpu;
                for (qsizetype k = 0; k < aw.size(); ++k) {
                    if (aw[k].way != i)
                        continue;
                    c50 << fmt(per[k].p50us());
                    cad << (k == 0 ? QStringLiteral("-") : fmtAdded(per[k].p50us() - d50));
                    ccpu << (ways[i].proc.isEmpty() ? QStringLiteral("-")
                                                    : fmt(per[k].cpuUsPerReq(), 1));
                }
                l50.cells << c50.join(" / ");
                a50.cells << cad.join(" / ");
                cpu.cells << ccpu.join(" / ");
            }
            lines << hdr << l50 << a50 << cpu;
        }
        json["aggregate"] = jAgg;
    }

    padSkipped(firstStreamLine);

    if (opt.only.contains(QStringLiteral("multipart"))) {
        // -- 6. multipart uploads ------------------------------------------------------------
        json["multipart"] = runMultipart(allWays, opt, lines);
    }

    // -- the table -----------------------------------------------------------------------
    const int labelW = 40;
    const int cellW = 16;
    QString out;
    out += QStringLiteral("%1").arg("", -labelW);
    for (const Way &w : allWays)
        out += QStringLiteral("%1").arg(w.name, cellW);
    out += QStringLiteral("  %1\n").arg("target");
    for (const Line &l : lines) {
        if (l.cells.isEmpty()) {
            out += "\n" + l.label + "\n";
            continue;
        }
        out += QStringLiteral("  %1").arg(l.label, -(labelW - 2));
        for (const QString &c : l.cells)
            out += QStringLiteral("%1").arg(c, cellW);
        if (!l.target.isEmpty())
            out += "  " + l.target;
        out += "\n";
    }
    out += QStringLiteral("\nTargets (issues 8 and 26)\n");
    QJsonArray jChecks;
    for (const Check &c : checks) {
        out += QStringLiteral("  %1 %2 %3 %4  %5\n")
                   .arg(c.way, -12)
                   .arg(c.name, -32)
                   .arg(c.value, 14)
                   .arg("(target " + c.target + ")", -26)
                   .arg(c.met ? "MET" : "MISSED");
        jChecks.append(QJsonObject{{"way", c.way},
                                   {"check", c.name},
                                   {"target", c.target},
                                   {"value", c.value},
                                   {"met", c.met}});
    }
    json["targets"] = jChecks;
    std::fputs(qPrintable(out), stdout);
    std::fflush(stdout);

    if (!opt.jsonPath.isEmpty()) {
        QFile f(opt.jsonPath);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            std::fprintf(stderr, "slp_bench: cannot write %s\n", qPrintable(opt.jsonPath));
            return 1;
        }
        json["table"] = out;
        f.write(QJsonDocument(json).toJson(QJsonDocument::Indented));
    }
    if (!opt.plotPath.isEmpty() &&
        !writePlotData(opt.plotPath, allWays, plotRequests, plotResponses))
        return 1;
    return 0;
}

} // namespace slp::bench
