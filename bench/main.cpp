// SPDX-License-Identifier: GPL-3.0-or-later
// slp_bench: the load generator of SLP's three-way benchmark.
//
// One Qt event loop drives raw non-blocking sockets (QSocketNotifier, no QTcpSocket: the
// generator shares the machine's two cores with the proxy it measures, so it stays lean).
// The same load goes, interleaved, direct to the upstream, through nginx and through every
// slp instance given; the program prints a table with the targets and writes JSON.
// bench/run.sh starts the upstreams and proxies and calls this; see bench/README.md.
//
// Files: system (clock, /proc), connection (the HTTP client connection), sink (the discarding
// upstream), load (closed-loop load and streams), report (the scenarios and the table). HTTP
// is parsed by slp_test_wire (tests/support/wire), the library the tests use.

#include "report.h"
#include "sink.h"

#include <QCommandLineParser>
#include <QCoreApplication>

#include <csignal>
#include <cstdio>
#include <cstdlib>

using namespace slp::bench;

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName("slp_bench");
    raiseFileLimit();
    std::signal(SIGPIPE, SIG_IGN);

    QCommandLineParser p;
    p.setApplicationDescription(
        "SLP's three-way benchmark load generator (see bench/README.md; bench/run.sh drives it).");
    p.addHelpOption();
    p.addOptions({
        {"direct-fast", "Static-JSON upstream, direct.", "host:port"},
        {"direct-mock", "Mock upstream, direct.", "host:port"},
        {"nginx-fast", "nginx proxying to the static upstream.", "host:port"},
        {"nginx-mock", "nginx proxying to the mock upstream.", "host:port"},
        {"direct-sink", "Discarding upstream (large bodies), direct.", "host:port"},
        {"nginx-sink", "nginx proxying to the discarding upstream.", "host:port"},
        {"nginx-buffered-sink",
         "nginx proxying to the discarding upstream with request buffering on (optional: an "
         "nginx-buf column in the body scenarios).",
         "host:port"},
        {"sink", "Run only the discarding upstream on HOST:PORT (until killed).", "host:port"},
        {"only",
         "Comma-separated scenarios: small,large,stream,aggregate,response,multipart (default "
         "all); large and response are the request and response body size sweeps, multipart "
         "uploads with the model part after a 1 MB and a 25 MB file part.",
         "list"},
        {"nginx-pid", "nginx master pid (workers found as its children).", "pid"},
        {"mock-pid", "The mock upstream's pid (its CPU is reported for streams).", "pid"},
        {"slp", "An slp instance: NAME=host:port:pid (repeatable).", "spec"},
        {"quick", "Smoke run: one round, short slices, fewer and shorter streams."},
        {"streams", "Comma-separated stream counts (default 100,1000,2000).", "list"},
        {"stream-seconds", "Seconds per stream at 10 events/s (default 20).", "s"},
        {"rounds", "Interleaved rounds per scenario (default 3).", "n"},
        {"slice-ms", "Measured time per load slice (default 2000).", "ms"},
        {"json", "Write the results here.", "file"},
        {"plot-data", "Write the size sweeps as gnuplot data here.", "file"},
        {"note", "Free text stored in the JSON.", "text"},
    });
    p.process(app);

    Options opt;
    if (p.isSet("quick")) {
        opt.quick = true;
        opt.rounds = 1;
        opt.sliceMs = 300;
        opt.warmupMs = 100;
        opt.streamCounts = {100, 500};
        opt.streamSeconds = 2;
    }
    if (p.isSet("streams")) {
        opt.streamCounts.clear();
        for (const QString &s : p.value("streams").split(',', Qt::SkipEmptyParts))
            opt.streamCounts << s.toInt();
    }
    if (p.isSet("stream-seconds"))
        opt.streamSeconds = std::max(1, p.value("stream-seconds").toInt());
    if (p.isSet("rounds"))
        opt.rounds = std::max(1, p.value("rounds").toInt());
    if (p.isSet("slice-ms"))
        opt.sliceMs = std::max(100, p.value("slice-ms").toInt());
    opt.jsonPath = p.value("json");
    opt.plotPath = p.value("plot-data");
    opt.note = p.value("note");
    opt.mock = ProcSet(p.value("mock-pid").toInt());
    if (p.isSet("only"))
        opt.only = p.value("only").split(',', Qt::SkipEmptyParts);

    if (p.isSet("sink")) {
        const auto ep = parseEndpoint(p.value("sink"));
        Sink sink;
        if (!ep || !sink.listen(*ep)) {
            std::fprintf(stderr, "slp_bench: cannot listen on %s\n", qPrintable(p.value("sink")));
            return 1;
        }
        return app.exec();
    }

    auto need = [&](const char *name) -> Endpoint {
        const auto ep = parseEndpoint(p.value(name));
        if (!ep) {
            std::fprintf(stderr, "slp_bench: --%s HOST:PORT (IPv4) is required\n", name);
            std::exit(2);
        }
        return *ep;
    };
    QList<Way> ways;
    ways.append({"direct", need("direct-fast"), need("direct-mock"), need("direct-sink"), ProcSet(),
                 false});
    ways.append({"nginx", need("nginx-fast"), need("nginx-mock"), need("nginx-sink"),
                 ProcSet(p.value("nginx-pid").toInt()), false});
    if (p.isSet("nginx-buffered-sink")) {
        const Endpoint buffered = need("nginx-buffered-sink");
        ways.append({"nginx-buf", buffered, buffered, buffered,
                     ProcSet(p.value("nginx-pid").toInt()), false, true});
    }
    for (const QString &spec : p.values("slp")) {
        const qsizetype eq = spec.indexOf('=');
        const qsizetype lastColon = spec.lastIndexOf(':');
        const auto ep = parseEndpoint(spec.mid(eq + 1, lastColon - eq - 1));
        const int pid = spec.mid(lastColon + 1).toInt();
        if (eq <= 0 || !ep || pid <= 0) {
            std::fprintf(stderr, "slp_bench: --slp NAME=HOST:PORT:PID, got %s\n", qPrintable(spec));
            return 2;
        }
        ways.append({spec.left(eq), *ep, *ep, *ep, ProcSet(pid), true});
    }
    if (ways.size() < 3) {
        std::fprintf(stderr, "slp_bench: at least one --slp is required\n");
        return 2;
    }
    return run(ways, opt);
}
