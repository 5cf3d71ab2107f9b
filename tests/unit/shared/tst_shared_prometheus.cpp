// SPDX-License-Identifier: GPL-3.0-or-later
#include "prometheustext.h"

#include <QtTest>

#include <cmath>
#include <limits>

using namespace slp;

class TestPrometheusText : public QObject
{
    Q_OBJECT

private slots:
    void formatValue_data();
    void formatValue();
    void escaping();
    void sampleLine();
    void roundTrip();
    void valueRoundTrip();
    void parseFull();
    void parseValues_data();
    void parseValues();
    void malformed_data();
    void malformed();
    void find();
};

void TestPrometheusText::formatValue_data()
{
    QTest::addColumn<double>("value");
    QTest::addColumn<QByteArray>("text");
    const double inf = std::numeric_limits<double>::infinity();
    QTest::newRow("0") << 0.0 << QByteArray("0");
    QTest::newRow("1") << 1.0 << QByteArray("1");
    QTest::newRow("-1") << -1.0 << QByteArray("-1");
    QTest::newRow("0.25") << 0.25 << QByteArray("0.25");
    QTest::newRow("0.1") << 0.1 << QByteArray("0.1");
    QTest::newRow("1.5") << 1.5 << QByteArray("1.5");
    QTest::newRow("12345") << 12345.0 << QByteArray("12345");
    QTest::newRow("999999") << 999999.0 << QByteArray("999999");
    QTest::newRow("1e6") << 1e6 << QByteArray("1e+06");
    QTest::newRow("1234567") << 1234567.0 << QByteArray("1.234567e+06");
    QTest::newRow("0.0001") << 0.0001 << QByteArray("0.0001");
    QTest::newRow("0.00001") << 0.00001 << QByteArray("1e-05");
    QTest::newRow("1.5e-7") << 1.5e-7 << QByteArray("1.5e-07");
    QTest::newRow("1e100") << 1e100 << QByteArray("1e+100");
    QTest::newRow("-2.5e-300") << -2.5e-300 << QByteArray("-2.5e-300");
    QTest::newRow("+Inf") << inf << QByteArray("+Inf");
    QTest::newRow("-Inf") << -inf << QByteArray("-Inf");
    QTest::newRow("NaN") << std::nan("") << QByteArray("NaN");
}

void TestPrometheusText::formatValue()
{
    QFETCH(double, value);
    QFETCH(QByteArray, text);
    QCOMPARE(formatPromValue(value), text);
}

void TestPrometheusText::escaping()
{
    QCOMPARE(escapePromLabelValue(u"plain"_qs), u"plain"_qs);
    QCOMPARE(escapePromLabelValue(u"a\\b\"c\nd"_qs), u"a\\\\b\\\"c\\nd"_qs);
    QCOMPARE(escapePromLabelValue(u"tab\tstays"_qs), u"tab\tstays"_qs);
    QCOMPARE(escapePromHelp(u"a\\b\"c\nd"_qs), u"a\\\\b\"c\\nd"_qs);
}

void TestPrometheusText::sampleLine()
{
    QCOMPARE(promSampleLine("up", {}, 1), QByteArray("up 1\n"));
    QCOMPARE(promSampleLine("slp_requests_total",
                            {{u"model_id"_qs, u"m"_qs}, {u"code"_qs, u"200"_qs}}, 3),
             QByteArray("slp_requests_total{model_id=\"m\",code=\"200\"} 3\n"));
    QCOMPARE(promSampleLine("x", {{u"l"_qs, u"q\"\\\n"_qs}}, 0.5),
             QByteArray("x{l=\"q\\\"\\\\\\n\"} 0.5\n"));
    QCOMPARE(promHelpLine("x", u"Line one\nback\\slash"_qs),
             QByteArray("# HELP x Line one\\nback\\\\slash\n"));
    QCOMPARE(promTypeLine("x", "counter"), QByteArray("# TYPE x counter\n"));
}

void TestPrometheusText::roundTrip()
{
    const QString odd = QString::fromUtf8("we\"ird\\ \n m\xC3\xBC{},=");
    const double inf = std::numeric_limits<double>::infinity();
    QByteArray text;
    text += promHelpLine("slp_requests_total", u"Requests by model and status.\nSecond line"_qs);
    text += promTypeLine("slp_requests_total", "counter");
    text += promSampleLine("slp_requests_total",
                           {{u"model_id"_qs, u"a"_qs}, {u"code"_qs, u"200"_qs}}, 12);
    text +=
        promSampleLine("slp_requests_total", {{u"model_id"_qs, odd}, {u"code"_qs, u"404"_qs}}, 1);
    text += promHelpLine("slp_upstream_latency_seconds", u"Time to response head."_qs);
    text += promTypeLine("slp_upstream_latency_seconds", "histogram");
    text += promSampleLine("slp_upstream_latency_seconds_bucket",
                           {{u"model_id"_qs, u"a"_qs}, {u"le"_qs, u"0.25"_qs}}, 3);
    text += promSampleLine("slp_upstream_latency_seconds_bucket",
                           {{u"model_id"_qs, u"a"_qs}, {u"le"_qs, u"+Inf"_qs}}, 4);
    text +=
        promSampleLine("slp_upstream_latency_seconds_sum", {{u"model_id"_qs, u"a"_qs}}, 1.2345e-3);
    text += promSampleLine("slp_upstream_latency_seconds_count", {{u"model_id"_qs, u"a"_qs}}, 4);
    text += promSampleLine("g", {}, -inf);
    text += promSampleLine("h", {}, std::nan(""));

    const PromParseResult r = parsePromText(text);
    QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
    QCOMPARE(r.errorLine, 0);
    QCOMPARE(r.samples.size(), 8);
    QCOMPARE(r.samples[1].labels.value(0).second, odd);
    QCOMPARE(r.samples[1].labels.value(1), qMakePair(u"code"_qs, u"404"_qs));
    QCOMPARE(r.samples[4].name, u"slp_upstream_latency_seconds_sum"_qs);
    QCOMPARE(r.samples[4].value, 1.2345e-3);
    QCOMPARE(r.samples[3].labels.value(1).second, u"+Inf"_qs);
    QCOMPARE(r.samples[6].value, -inf);
    QVERIFY(std::isnan(r.samples[7].value));
    QVERIFY(!r.samples[0].timestampMs);

    QCOMPARE(r.families.size(), 2);
    const PromFamily f = r.families.value(u"slp_requests_total"_qs);
    QCOMPARE(f.name, u"slp_requests_total"_qs);
    QCOMPARE(f.help, u"Requests by model and status.\nSecond line"_qs);
    QCOMPARE(f.type, u"counter"_qs);
    QCOMPARE(r.families.value(u"slp_upstream_latency_seconds"_qs).type, u"histogram"_qs);

    // Writing what was read gives the same text back (samples part).
    QByteArray again;
    for (const PromSample &s : r.samples)
        again += promSampleLine(s.name.toUtf8(), s.labels, s.value);
    QByteArray samplesOnly;
    for (const QByteArray &line : text.split('\n'))
        if (!line.isEmpty() && !line.startsWith('#'))
            samplesOnly += line + '\n';
    QCOMPARE(again, samplesOnly);
}

void TestPrometheusText::valueRoundTrip()
{
    // The shortest form must read back to the very same double.
    const double values[] = {
        0.1,  1.0 / 3, 2.0 / 3 * 1e10, 123456.789, 5e-324,     1.7976931348623157e308,
        -0.0, 42,      1e21,           1e-5,       9.999999e5, 1e6 + 1};
    for (const double v : values) {
        const QByteArray line = promSampleLine("v", {}, v);
        const PromParseResult r = parsePromText(line);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.samples.size(), 1);
        QVERIFY2(r.samples[0].value == v && std::signbit(r.samples[0].value) == std::signbit(v),
                 line.constData());
    }
}

void TestPrometheusText::parseFull()
{
    const QByteArray text = "# A free comment\n"
                            "#\n"
                            "\n"
                            "   # indented comment\n"
                            "# HELP   spaced   help with  spaces \n"
                            "# TYPE spaced gauge\n"
                            "spaced 1 1700000000000\n"
                            "  indented{a=\"1\",} 2\n"
                            "tabs\t{ a = \"x\" , b=\"y\" }\t3\t-5\n"
                            "colon:name 4\r\n"
                            "only_help_family 5\n"
                            "# HELP only_help_family Just help.\n"
                            "empty_labels{} 6\n"
                            "last 7";
    const PromParseResult r = parsePromText(text);
    QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
    QCOMPARE(r.samples.size(), 7);
    QCOMPARE(r.samples[0].name, u"spaced"_qs);
    QCOMPARE(r.samples[0].timestampMs, std::optional<qint64>(1700000000000));
    QCOMPARE(r.samples[1].labels, PromLabels({{u"a"_qs, u"1"_qs}}));
    QCOMPARE(r.samples[2].labels, PromLabels({{u"a"_qs, u"x"_qs}, {u"b"_qs, u"y"_qs}}));
    QCOMPARE(r.samples[2].timestampMs, std::optional<qint64>(-5));
    QCOMPARE(r.samples[3].name, u"colon:name"_qs);
    QCOMPARE(r.samples[5].labels.size(), 0);
    QCOMPARE(r.samples[6].value, 7.0);
    QCOMPARE(r.families.value(u"spaced"_qs).help, u"help with  spaces "_qs);
    QCOMPARE(r.families.value(u"spaced"_qs).type, u"gauge"_qs);
    QCOMPARE(r.families.value(u"only_help_family"_qs).type, u"untyped"_qs);
}

void TestPrometheusText::parseValues_data()
{
    QTest::addColumn<QByteArray>("token");
    QTest::addColumn<double>("value");
    const double inf = std::numeric_limits<double>::infinity();
    QTest::newRow("int") << QByteArray("42") << 42.0;
    QTest::newRow("neg") << QByteArray("-3") << -3.0;
    QTest::newRow("plus") << QByteArray("+3") << 3.0;
    QTest::newRow("frac") << QByteArray("0.125") << 0.125;
    QTest::newRow("lead dot") << QByteArray(".5") << 0.5;
    QTest::newRow("exp") << QByteArray("1.5e3") << 1500.0;
    QTest::newRow("exp upper signed") << QByteArray("2E-2") << 0.02;
    QTest::newRow("exp plus") << QByteArray("1e+06") << 1e6;
    QTest::newRow("+Inf") << QByteArray("+Inf") << inf;
    QTest::newRow("-Inf") << QByteArray("-Inf") << -inf;
    QTest::newRow("Inf") << QByteArray("Inf") << inf;
    QTest::newRow("inf lower") << QByteArray("+inf") << inf;
}

void TestPrometheusText::parseValues()
{
    QFETCH(QByteArray, token);
    QFETCH(double, value);
    const PromParseResult r = parsePromText("m " + token + "\n");
    QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
    QCOMPARE(r.samples.value(0).value, value);
    const PromParseResult nan = parsePromText("m NaN\n");
    QVERIFY(std::isnan(nan.samples.value(0).value));
}

void TestPrometheusText::malformed_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("reason");
    QTest::newRow("no value") << QByteArray("ok 1\nbad\n") << 2 << u"missing value"_qs;
    QTest::newRow("bad value") << QByteArray("ok 1\n\nm abc\n") << 3 << u"invalid value"_qs;
    QTest::newRow("bad number") << QByteArray("m 1.2.3") << 1 << u"invalid value"_qs;
    QTest::newRow("bad name") << QByteArray("1m 1") << 1 << u"invalid metric name"_qs;
    QTest::newRow("unterminated labels")
        << QByteArray("m{a=\"x\" 1") << 1 << u"expected ',' or '}'"_qs;
    QTest::newRow("unterminated value")
        << QByteArray("# c\nm{a=\"x} 1") << 2 << u"unterminated label value"_qs;
    QTest::newRow("unquoted label") << QByteArray("m{a=x} 1") << 1 << u"expected '\"'"_qs;
    QTest::newRow("no equals") << QByteArray("m{a} 1") << 1 << u"expected '='"_qs;
    QTest::newRow("bad label name") << QByteArray("m{1a=\"x\"} 1") << 1 << u"invalid label name"_qs;
    QTest::newRow("colon in label") << QByteArray("m{a:b=\"x\"} 1") << 1 << u"expected '='"_qs;
    QTest::newRow("bad escape") << QByteArray("m{a=\"\\t\"} 1") << 1
                                << u"invalid escape sequence"_qs;
    QTest::newRow("duplicate label")
        << QByteArray("m{a=\"1\",a=\"2\"} 1") << 1 << u"duplicate label a"_qs;
    QTest::newRow("bad timestamp") << QByteArray("m 1 1.5") << 1 << u"invalid timestamp"_qs;
    QTest::newRow("extra field") << QByteArray("m 1 2 3") << 1 << u"after timestamp"_qs;
    QTest::newRow("bad type") << QByteArray("# TYPE m countr\n") << 1 << u"unknown metric type"_qs;
    QTest::newRow("type missing") << QByteArray("# TYPE m\n") << 1 << u"unknown metric type"_qs;
    QTest::newRow("type twice") << QByteArray("# TYPE m gauge\n# TYPE m counter\n") << 2
                                << u"second TYPE"_qs;
    QTest::newRow("help twice") << QByteArray("# HELP m a\n# HELP m b\n") << 2 << u"second HELP"_qs;
    QTest::newRow("help no name") << QByteArray("# HELP\n") << 1 << u"invalid metric name"_qs;
    QTest::newRow("help bad escape")
        << QByteArray("# HELP m a\\tb\n") << 1 << u"invalid escape sequence"_qs;
    QTest::newRow("overflow") << QByteArray("m 1e999") << 1 << u"invalid value"_qs;
}

void TestPrometheusText::malformed()
{
    QFETCH(QByteArray, text);
    QFETCH(int, line);
    QFETCH(QString, reason);
    const PromParseResult r = parsePromText(text);
    QCOMPARE(r.errorLine, line);
    QVERIFY2(r.error.startsWith(QStringLiteral("line %1: ").arg(line)), qPrintable(r.error));
    QVERIFY2(r.error.contains(reason), qPrintable(r.error));
}

void TestPrometheusText::find()
{
    const QByteArray text = "slp_requests_total{model_id=\"a\",code=\"200\"} 5\n"
                            "slp_requests_total{model_id=\"a\",code=\"404\"} 2\n"
                            "slp_requests_total{model_id=\"b\",code=\"200\"} 7\n"
                            "slp_upstream_model_ambiguous{model_id=\"a\"} 0\n";
    const PromParseResult r = parsePromText(text);
    QVERIFY(r.error.isEmpty());
    QCOMPARE(findPromSample(r.samples, u"slp_requests_total"_qs), std::optional<double>(5));
    QCOMPARE(findPromSample(r.samples, u"slp_requests_total"_qs, {{u"code"_qs, u"404"_qs}}),
             std::optional<double>(2));
    QCOMPARE(findPromSample(r.samples, u"slp_requests_total"_qs,
                            {{u"code"_qs, u"200"_qs}, {u"model_id"_qs, u"b"_qs}}),
             std::optional<double>(7));
    QCOMPARE(findPromSample(r.samples, u"slp_requests_total"_qs, {{u"model_id"_qs, u"c"_qs}}),
             std::nullopt);
    QCOMPARE(findPromSample(r.samples, u"nope"_qs), std::nullopt);
    QCOMPARE(
        findPromSample(r.samples, u"slp_upstream_model_ambiguous"_qs, {{u"model_id"_qs, u"a"_qs}}),
        std::optional<double>(0));
}

QTEST_APPLESS_MAIN(TestPrometheusText)
#include "tst_shared_prometheus.moc"
