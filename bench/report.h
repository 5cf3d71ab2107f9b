// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "system.h"

#include <QList>
#include <QStringList>

namespace slp::bench {

struct Way
{
    QString name;     // direct, nginx, slp-qnam, ...
    Endpoint fast;    // small POST target (static JSON behind it)
    Endpoint mock;    // mock upstream target
    Endpoint sink;    // discarding upstream target (large bodies)
    ProcSet proc;     // the proxy's processes (empty for direct)
    bool slp = false; // an slp instance (targets apply)
    // nginx with request buffering on: measured only where bodies are (the request and
    // response size sweeps, multipart); "-" in the other scenarios' cells.
    bool bodiesOnly = false;
};

struct Options
{
    bool quick = false;
    int rounds = 3;
    int sliceMs = 2000;
    int warmupMs = 300;
    QList<int> streamCounts{100, 1000, 2000};
    int streamSeconds = 20;
    int intervalMs = 100;
    QString jsonPath;
    QString plotPath; // gnuplot data of the size sweeps (bench/plot-sizes.gp)
    QString note;
    ProcSet mock; // the mock upstream's process, for its CPU share during streams
    QStringList only{"small", "large", "stream", "aggregate", "response", "multipart"};
};

// Runs the scenarios in opt.only over every way, prints the table, writes the JSON.
int run(const QList<Way> &ways, const Options &opt);

} // namespace slp::bench
