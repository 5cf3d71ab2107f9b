// SPDX-License-Identifier: GPL-3.0-or-later
// MetricsRegistry: what it renders must read back through the shared Prometheus parser (the
// one slp-monitor uses), histograms cumulative, and removeMatching drops exactly the matches.
#include "observe/metrics.h"

#include <QTest>

#include <atomic>
#include <thread>
#include <vector>

using slp::MetricsRegistry;
using slp::PromLabels;
using slp::PromParseResult;

namespace {

PromParseResult roundTrip(const MetricsRegistry &registry)
{
    const QByteArray text = registry.render();
    PromParseResult parsed = slp::parsePromText(text);
    if (!parsed.error.isEmpty())
        qWarning("render did not parse (%s):\n%s", qPrintable(parsed.error), text.constData());
    return parsed;
}

// The sample's value, or -1 when there is none (every value here is >= 0).
double sample(const PromParseResult &p, const QString &name, const PromLabels &match = {})
{
    return slp::findPromSample(p.samples, name, match).value_or(-1);
}

int countSamples(const PromParseResult &p, const QString &name)
{
    int n = 0;
    for (const auto &s : p.samples)
        n += s.name == name ? 1 : 0;
    return n;
}

} // namespace

class TestMetrics : public QObject
{
    Q_OBJECT

private slots:
    void countersAndGaugesRoundTrip();
    void labelValuesEscaped();
    void helpTextEscaped();
    void histogramBucketsCumulative();
    void histogramBoundaryAndOverflow();
    void removeAndRemoveMatching();
    void valueLookup();
    void declaredFamiliesWithoutSeries();
    void slpFamiliesHaveHelpAndType();
    void concurrentUpdatesFromWorkerThreads();
};

void TestMetrics::countersAndGaugesRoundTrip()
{
    MetricsRegistry r;
    r.declare("t_requests_total", MetricsRegistry::Type::Counter, "Requests.");
    r.declare("t_open", MetricsRegistry::Type::Gauge, "Open things.");
    r.add("t_requests_total", {{"model_id", "a"}, {"code", "200"}});
    r.add("t_requests_total", {{"model_id", "a"}, {"code", "200"}}, 2);
    r.add("t_requests_total", {{"model_id", "b"}, {"code", "502"}});
    r.set("t_open", {}, 7);
    r.set("t_open", {}, 3); // set replaces

    const PromParseResult p = roundTrip(r);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    QCOMPARE(sample(p, "t_requests_total", {{"model_id", "a"}, {"code", "200"}}), 3.0);
    QCOMPARE(sample(p, "t_requests_total", {{"model_id", "b"}}), 1.0);
    QCOMPARE(sample(p, "t_open"), 3.0);
    QCOMPARE(p.families.value("t_requests_total").type, QStringLiteral("counter"));
    QCOMPARE(p.families.value("t_open").type, QStringLiteral("gauge"));
    QCOMPARE(p.families.value("t_open").help, QStringLiteral("Open things."));

    // Labels keep the order they were given in.
    for (const auto &s : p.samples) {
        if (s.name == QLatin1String("t_requests_total")) {
            QCOMPARE(s.labels.size(), 2);
            QCOMPARE(s.labels.at(0).first, QStringLiteral("model_id"));
            QCOMPARE(s.labels.at(1).first, QStringLiteral("code"));
        }
    }
    QCOMPARE(countSamples(p, "t_requests_total"), 2);
}

void TestMetrics::labelValuesEscaped()
{
    MetricsRegistry r;
    r.declare("t_info", MetricsRegistry::Type::Gauge, "Info.");
    const QString nasty = QStringLiteral("we\"ird\\name\nline two ü");
    r.set("t_info", {{"model_id", "x"}, {"upstream_model", nasty}}, 1);
    const QByteArray text = r.render();
    QVERIFY2(!text.contains("name\nline"), text); // a raw newline would split the sample
    const PromParseResult p = roundTrip(r);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    QCOMPARE(sample(p, "t_info", {{"upstream_model", nasty}}), 1.0);
}

void TestMetrics::helpTextEscaped()
{
    // HELP text escapes backslash and newline in the text format; an unescaped newline
    // would turn the rest of the help into a malformed line.
    MetricsRegistry r;
    r.declare("t_help", MetricsRegistry::Type::Counter, QStringLiteral("first\nsecond \\ back"));
    r.add("t_help", {});
    const PromParseResult p = roundTrip(r);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    QCOMPARE(p.families.value("t_help").help, QStringLiteral("first\nsecond \\ back"));
}

void TestMetrics::histogramBucketsCumulative()
{
    MetricsRegistry r;
    r.declare("t_latency_seconds", MetricsRegistry::Type::Histogram, "Latency.", {0.01, 0.1, 1});
    const PromLabels a{{"model_id", "a"}};
    for (const double v : {0.005, 0.05, 0.05, 0.5, 7.0})
        r.observe("t_latency_seconds", a, v);
    r.observe("t_latency_seconds", {{"model_id", "b"}}, 0.2);

    const PromParseResult p = roundTrip(r);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    QCOMPARE(p.families.value("t_latency_seconds").type, QStringLiteral("histogram"));
    const QString bucket = QStringLiteral("t_latency_seconds_bucket");
    QCOMPARE(sample(p, bucket, {{"model_id", "a"}, {"le", "0.01"}}), 1.0);
    QCOMPARE(sample(p, bucket, {{"model_id", "a"}, {"le", "0.1"}}), 3.0);
    QCOMPARE(sample(p, bucket, {{"model_id", "a"}, {"le", "1"}}), 4.0);
    QCOMPARE(sample(p, bucket, {{"model_id", "a"}, {"le", "+Inf"}}), 5.0);
    QCOMPARE(sample(p, "t_latency_seconds_count", a), 5.0);
    const double sum = sample(p, "t_latency_seconds_sum", a);
    QVERIFY2(qAbs(sum - 7.605) < 1e-9, QByteArray::number(sum));
    QCOMPARE(sample(p, bucket, {{"model_id", "b"}, {"le", "0.1"}}), 0.0);
    QCOMPARE(sample(p, bucket, {{"model_id", "b"}, {"le", "1"}}), 1.0);
    QCOMPARE(sample(p, bucket, {{"model_id", "b"}, {"le", "+Inf"}}), 1.0);

    // Non-decreasing in le order, for every series, and le is the last label.
    double previous = -1;
    QString series;
    for (const auto &s : p.samples) {
        if (s.name != bucket)
            continue;
        QCOMPARE(s.labels.last().first, QStringLiteral("le"));
        const QString key = s.labels.first().second;
        if (key != series) {
            series = key;
            previous = -1;
        }
        QVERIFY2(s.value >= previous, qPrintable(key));
        previous = s.value;
    }

    // Rendering twice does not accumulate (cumulative at render time only).
    QCOMPARE(r.render(), r.render());
}

void TestMetrics::histogramBoundaryAndOverflow()
{
    MetricsRegistry r;
    r.declare("t_h", MetricsRegistry::Type::Histogram, "H.", {0.5, 1});
    r.observe("t_h", {}, 0.5); // le is inclusive
    r.observe("t_h", {}, 1.0);
    r.observe("t_h", {}, 1000);
    const PromParseResult p = roundTrip(r);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    QCOMPARE(sample(p, "t_h_bucket", {{"le", "0.5"}}), 1.0);
    QCOMPARE(sample(p, "t_h_bucket", {{"le", "1"}}), 2.0);
    QCOMPARE(sample(p, "t_h_bucket", {{"le", "+Inf"}}), 3.0);
    QCOMPARE(sample(p, "t_h_count"), 3.0);
    QCOMPARE(sample(p, "t_h_sum"), 1001.5);
}

void TestMetrics::removeAndRemoveMatching()
{
    MetricsRegistry r;
    r.declare("t_info", MetricsRegistry::Type::Gauge, "Info.");
    r.set("t_info", {{"model_id", "a"}, {"upstream_model", "A-1"}}, 1);
    r.set("t_info", {{"model_id", "a"}, {"upstream_model", "A-2"}}, 1);
    r.set("t_info", {{"model_id", "b"}, {"upstream_model", "B-1"}}, 1);
    r.set("t_info", {{"model_id", "ab"}, {"upstream_model", "A-1"}}, 1);

    r.removeMatching("t_info", {{"model_id", "a"}});
    PromParseResult p = roundTrip(r);
    QCOMPARE(countSamples(p, "t_info"), 2);
    QCOMPARE(sample(p, "t_info", {{"model_id", "a"}}), -1.0);
    QCOMPARE(sample(p, "t_info", {{"model_id", "ab"}}), 1.0); // exact value match, not prefix
    QCOMPARE(sample(p, "t_info", {{"model_id", "b"}}), 1.0);

    // Matching on a pair that is the second label.
    r.removeMatching("t_info", {{"upstream_model", "A-1"}});
    p = roundTrip(r);
    QCOMPARE(countSamples(p, "t_info"), 1);
    QCOMPARE(sample(p, "t_info", {{"model_id", "b"}}), 1.0);

    // Several pairs must all match.
    r.removeMatching("t_info", {{"model_id", "b"}, {"upstream_model", "other"}});
    QCOMPARE(countSamples(roundTrip(r), "t_info"), 1);

    // Empty match drops every series but keeps the family's HELP/TYPE.
    r.removeMatching("t_info", {});
    p = roundTrip(r);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    QCOMPARE(countSamples(p, "t_info"), 0);
    QVERIFY(p.families.contains("t_info"));

    // remove() takes one exact label set; unknown names are harmless.
    r.set("t_info", {{"model_id", "c"}}, 1);
    r.remove("t_info", {{"model_id", "nope"}});
    QCOMPARE(countSamples(roundTrip(r), "t_info"), 1);
    r.remove("t_info", {{"model_id", "c"}});
    QCOMPARE(countSamples(roundTrip(r), "t_info"), 0);
    r.remove("t_undeclared", {});
    r.removeMatching("t_undeclared", {});
}

void TestMetrics::valueLookup()
{
    MetricsRegistry r;
    r.declare("t_c", MetricsRegistry::Type::Counter, "C.");
    r.declare("t_h", MetricsRegistry::Type::Histogram, "H.", {1});
    r.add("t_c", {{"k", "v"}}, 4);
    r.observe("t_h", {{"k", "v"}}, 0.1);
    r.observe("t_h", {{"k", "v"}}, 0.2);
    QCOMPARE(r.value("t_c", {{"k", "v"}}), 4.0);
    QCOMPARE(r.value("t_c", {{"k", "w"}}), 0.0);
    QCOMPARE(r.value("t_h", {{"k", "v"}}), 2.0); // a histogram's value is its count
    QCOMPARE(r.value("t_missing", {}), 0.0);
}

void TestMetrics::declaredFamiliesWithoutSeries()
{
    MetricsRegistry r;
    r.declare("t_empty", MetricsRegistry::Type::Counter, "Nothing yet.");
    const QByteArray text = r.render();
    QVERIFY(text.contains("# HELP t_empty Nothing yet.\n"));
    QVERIFY(text.contains("# TYPE t_empty counter\n"));
    const PromParseResult p = roundTrip(r);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    QVERIFY(p.samples.isEmpty());
}

void TestMetrics::slpFamiliesHaveHelpAndType()
{
    MetricsRegistry r;
    slp::declareSlpMetrics(r);
    r.add(slp::metric::requestsTotal, {{"model_id", "unknown"}, {"code", "404"}});
    r.observe(slp::metric::upstreamLatency, {{"model_id", "m"}}, 0.3);
    r.add(slp::metric::discoveryProbes, {{"model_id", "m"}, {"result", "ok"}});
    r.add(slp::metric::modelChanges, {{"model_id", "m"}});
    r.set(slp::metric::modelInfo, {{"model_id", "m"}, {"upstream_model", "M-1"}}, 1);
    r.set(slp::metric::modelAmbiguous, {{"model_id", "m"}}, 0);
    const PromParseResult p = roundTrip(r);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    const QList<QPair<QString, QString>> expected{
        {"slp_requests_total", "counter"},
        {"slp_upstream_latency_seconds", "histogram"},
        {"slp_discovery_probes_total", "counter"},
        {"slp_upstream_model_changes_total", "counter"},
        {"slp_upstream_model_info", "gauge"},
        {"slp_upstream_model_ambiguous", "gauge"},
        {"slp_upstream_attempt_failures_total", "counter"},
        {"slp_client_connections", "gauge"},
        {"slp_inflight_requests", "gauge"},
        {"slp_upstream_consecutive_failures", "gauge"},
        {"slp_overhead_seconds", "histogram"},
        {"slp_route_inflight_requests", "gauge"},
        {"slp_stream_idle_timeouts_total", "counter"},
        {"slp_sse_keepalives_total", "counter"},
    };
    for (const auto &[name, type] : expected) {
        QVERIFY2(p.families.contains(name), qPrintable(name));
        QCOMPARE(p.families.value(name).type, type);
        QVERIFY2(!p.families.value(name).help.isEmpty(), qPrintable(name));
    }
    QCOMPARE(sample(p, "slp_upstream_latency_seconds_bucket", {{"le", "0.5"}}), 1.0);
    QCOMPARE(sample(p, "slp_upstream_latency_seconds_bucket", {{"le", "0.25"}}), 0.0);
    QCOMPARE(sample(p, "slp_upstream_model_info", {{"upstream_model", "M-1"}}), 1.0);

    // The overhead histogram spans 10 us to 100 ms.
    r.observe(slp::metric::overhead, {}, 3e-5);
    const PromParseResult q = roundTrip(r);
    QCOMPARE(sample(q, "slp_overhead_seconds_bucket", {{"le", "1e-05"}}), 0.0);
    QCOMPARE(sample(q, "slp_overhead_seconds_bucket", {{"le", "5e-05"}}), 1.0);
    QCOMPARE(sample(q, "slp_overhead_seconds_bucket", {{"le", "0.1"}}), 1.0);
}

// `workers: N` has N threads updating the one registry while /metrics renders it: no update
// may be lost and no render may see a torn map (without the lock this crashes or loses counts).
void TestMetrics::concurrentUpdatesFromWorkerThreads()
{
    MetricsRegistry registry;
    slp::declareSlpMetrics(registry);
    constexpr int kThreads = 4;
    constexpr int kPerThread = 20000;
    std::vector<std::thread> threads;
    std::atomic_int renders{0};
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&registry, t] {
            const PromLabels mine = {{QStringLiteral("model_id"), QStringLiteral("m%1").arg(t)},
                                     {QStringLiteral("code"), QStringLiteral("200")}};
            const PromLabels shared = {{QStringLiteral("model_id"), QStringLiteral("all")},
                                       {QStringLiteral("code"), QStringLiteral("200")}};
            for (int i = 0; i < kPerThread; ++i) {
                registry.add(slp::metric::requestsTotal, mine);
                registry.add(slp::metric::requestsTotal, shared);
                registry.add(slp::metric::inflightRequests, {}, 1);
                registry.observe(slp::metric::upstreamLatency,
                                 {{QStringLiteral("model_id"), QStringLiteral("all")}}, 0.001);
                registry.add(slp::metric::inflightRequests, {}, -1);
            }
        });
    }
    threads.emplace_back([&registry, &renders] {
        for (int i = 0; i < 200; ++i)
            if (slp::parsePromText(registry.render()).error.isEmpty())
                ++renders;
    });
    for (std::thread &thread : threads)
        thread.join();

    QCOMPARE(renders.load(), 200);
    const PromParseResult p = roundTrip(registry);
    for (int t = 0; t < kThreads; ++t) {
        QCOMPARE(sample(p, "slp_requests_total",
                        {{"model_id", QStringLiteral("m%1").arg(t)}, {"code", "200"}}),
                 double(kPerThread));
    }
    QCOMPARE(sample(p, "slp_requests_total", {{"model_id", "all"}, {"code", "200"}}),
             double(kThreads * kPerThread));
    QCOMPARE(sample(p, "slp_upstream_latency_seconds_count", {{"model_id", "all"}}),
             double(kThreads * kPerThread));
    QCOMPARE(sample(p, "slp_inflight_requests"), 0.0);
}

QTEST_APPLESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
