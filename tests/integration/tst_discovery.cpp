// SPDX-License-Identifier: GPL-3.0-or-later
// Model-name discovery against the real `slp` and mock vLLM upstreams (docs/DECISIONS.md
// "Discovery", "Metrics", GET /v1/models ?debug; docs/DECISIONS.md on discovery and pinning). Probe
// timings are shrunk through the config's discovery block so every case settles in well under a
// second.
#include "prometheustext.h"
#include "testsupport.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

using namespace slp::test;

namespace {

constexpr int kSettleMs = 8000; // generous: a loaded 2-core machine, probes every <= 400 ms

const QByteArray kChatBody =
    R"({"model":"MODEL","messages":[{"role":"user","content":"hi \"there\""}],"temperature":0.5})";

QByteArray chatBody(const QString &model)
{
    QByteArray b = kChatBody;
    return b.replace("MODEL", model.toUtf8());
}

QString discoveryBlock(int probeTimeoutMs = 500)
{
    return QStringLiteral("discovery:\n"
                          "  backoff_initial: 100ms\n"
                          "  backoff_max: 400ms\n"
                          "  recheck: 300ms\n"
                          "  probe_timeout: %1ms\n")
        .arg(probeTimeoutMs);
}

// One backend "alpha" at url.
QString oneBackend(const QString &url, int probeTimeoutMs = 500)
{
    return QStringLiteral("listen: \"127.0.0.1:0\"\n") + discoveryBlock(probeTimeoutMs) +
           QStringLiteral("backends:\n  - name: alpha\n    url: %1\n").arg(url);
}

// A line of slp's stderr, exactly `text` (a leading RFC 3339 timestamp is allowed).
QRegularExpression exactLine(const QString &text)
{
    return QRegularExpression(QStringLiteral("^(?:\\d{4}-\\d\\d-\\d\\dT\\S+\\s+)?") +
                              QRegularExpression::escape(text) + QLatin1Char('$'));
}

QRegularExpression containing(const QString &text)
{
    return QRegularExpression(QRegularExpression::escape(text));
}

QJsonObject debugEntry(SlpDaemon &slp, const QString &id)
{
    const HttpResult r = httpRequest("GET", slp.url() + "/v1/models?debug");
    if (r.status != 200)
        return {};
    const QJsonArray data = QJsonDocument::fromJson(r.body).object().value("data").toArray();
    for (const QJsonValue &v : data)
        if (v.toObject().value("id").toString() == id)
            return v.toObject();
    return {};
}

QString discoveryOf(SlpDaemon &slp, const QString &id)
{
    return debugEntry(slp, id).value("discovery").toString();
}

// Where most tests start: a mock serving "Name-1" and an slp with route `alpha` in front of
// it, discovered. Empty when ready, else what went wrong.
QString startDiscovered(MockUpstream &mock, SlpDaemon &slp)
{
    if (!mock.start({"Name-1"}))
        return mock.errorString();
    if (!slp.start(oneBackend(mock.url())))
        return slp.errorString();
    if (!QTest::qWaitFor([&] { return discoveryOf(slp, "alpha") == "discovered"; }, kSettleMs))
        return QStringLiteral("alpha was not discovered:\n") + slp.stderrText();
    return {};
}

slp::PromParseResult scrape(SlpDaemon &slp)
{
    const HttpResult r = httpRequest("GET", slp.url() + "/metrics");
    slp::PromParseResult p = slp::parsePromText(r.body);
    if (r.status != 200)
        p.error = QStringLiteral("GET /metrics: status %1").arg(r.status);
    return p;
}

// The first matching sample's value, or -1 when there is none.
double metric(SlpDaemon &slp, const QString &name, const slp::PromLabels &match)
{
    return slp::findPromSample(scrape(slp).samples, name, match).value_or(-1);
}

int countSeries(SlpDaemon &slp, const QString &name, const slp::PromLabels &match)
{
    int n = 0;
    for (const slp::PromSample &s : scrape(slp).samples) {
        bool all = s.name == name;
        for (const auto &pair : match)
            all = all && s.labels.contains(pair);
        n += all ? 1 : 0;
    }
    return n;
}

qint64 lastSeq(MockUpstream &mock)
{
    qint64 seq = 0;
    for (const QJsonValue &v : mock.requests())
        seq = std::max<qint64>(seq, v.toObject().value("seq").toInteger());
    return seq;
}

// Sends a chat request for `model` through slp and returns the body `mock` received for it.
// (The mock may answer 404 for a name it does not serve: what matters is what it was sent.)
QByteArray forwardedBody(SlpDaemon &slp, MockUpstream &mock, const QString &model,
                         int *status = nullptr)
{
    const qint64 since = lastSeq(mock);
    const HttpResult r = httpRequest("POST", slp.url() + "/v1/chat/completions", chatBody(model),
                                     {{"Content-Type", "application/json"}});
    if (status)
        *status = r.status;
    QJsonObject found;
    (void)QTest::qWaitFor(
        [&] {
            for (const QJsonValue &v : mock.requests(since)) {
                if (v.toObject().value("target").toString() == "/v1/chat/completions") {
                    found = v.toObject();
                    return true;
                }
            }
            return false;
        },
        5000);
    return found.isEmpty() ? QByteArray("<nothing reached the mock>") : MockUpstream::body(found);
}

} // namespace

class TestDiscovery : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();

    void singleModelDiscovered();
    void backendDownAtStartThenUp();
    void renameFollowed();
    void twoModelsKeepLastNameThenRecover();
    void ambiguousBeforeAnyName();
    void zeroModelsIsAmbiguous();
    void unparseableCatalogAndHttpErrorKeepName();
    void pinnedAndEditionsNeverProbed();
    void editionFollowsBackendName();
    void slowProbeNeverDelaysRequests();
    void probeCountsByResult();
};

void TestDiscovery::initTestCase()
{
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY2(!MockUpstream::binary().isEmpty(), "set SLP_MOCK_BIN");
}

void TestDiscovery::singleModelDiscovered()
{
    MockUpstream mock;
    QVERIFY2(mock.start({"Upstream-A-1"}), qPrintable(mock.errorString()));
    SlpDaemon slp;
    QVERIFY2(slp.start(oneBackend(mock.url())), qPrintable(slp.errorString()));
    QVERIFY2(
        slp.waitForLog(exactLine(QStringLiteral("alpha -> %1 (discovering)").arg(mock.url())), 3000)
            .hasMatch(),
        qPrintable(slp.stderrText()));

    QVERIFY2(QTest::qWaitFor([&] { return discoveryOf(slp, "alpha") == "discovered"; }, kSettleMs),
             qPrintable(slp.stderrText()));
    const QJsonObject e = debugEntry(slp, "alpha");
    QCOMPARE(e.value("upstream_model").toString(), QStringLiteral("Upstream-A-1"));
    QCOMPARE(e.value("last_probe").toString(), QStringLiteral("ok"));
    const QString at = e.value("last_probe_at").toString();
    QVERIFY2(
        QRegularExpression("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$").match(at).hasMatch(),
        qPrintable(at));
    const QDateTime when = QDateTime::fromString(at, Qt::ISODate);
    QVERIFY(when.isValid());
    QVERIFY2(qAbs(when.secsTo(QDateTime::currentDateTimeUtc())) < 60, qPrintable(at));
    QVERIFY2(slp.waitForLog(containing("discovery: alpha: backend serves \"Upstream-A-1\""), 3000)
                 .hasMatch(),
             qPrintable(slp.stderrText()));

    // Probes say who they are, with the project version (CMake's, through SLP_VERSION).
    QStringList agents;
    for (const QJsonValue &v : mock.requests()) {
        for (const QJsonValue &h : v.toObject().value("headers").toArray())
            if (h.toArray().at(0).toString().compare("User-Agent", Qt::CaseInsensitive) == 0)
                agents << h.toArray().at(1).toString();
    }
    QVERIFY(!agents.isEmpty());
    for (const QString &agent : std::as_const(agents))
        QCOMPARE(agent, QStringLiteral("slp-discovery/" SLP_VERSION));

    // The upstream gets its own name; every other byte of the body is as the client sent it.
    int status = 0;
    const QByteArray got = forwardedBody(slp, mock, "alpha", &status);
    QCOMPARE(got, chatBody("Upstream-A-1"));
    QCOMPARE(status, 200);

    // The first discovery is logged, not counted as a change.
    QCOMPARE(metric(slp, "slp_upstream_model_changes_total", {{"model_id", "alpha"}}) > 0, false);
    QCOMPARE(metric(slp, "slp_upstream_model_info",
                    {{"model_id", "alpha"}, {"upstream_model", "Upstream-A-1"}}),
             1.0);
    QCOMPARE(metric(slp, "slp_upstream_model_ambiguous", {{"model_id", "alpha"}}), 0.0);
}

void TestDiscovery::backendDownAtStartThenUp()
{
    DeadPort dead; // held until the mock takes it over
    const quint16 port = dead.port();
    QVERIFY(port > 0);
    const QString url = dead.url();

    SlpDaemon slp;
    QVERIFY2(slp.start(oneBackend(url)), qPrintable(slp.errorString()));
    // Probes fail, SLP serves regardless, the route forwards its id unchanged.
    QVERIFY2(
        QTest::qWaitFor([&] { return debugEntry(slp, "alpha").value("last_probe") == "error"; },
                        kSettleMs),
        qPrintable(slp.stderrText()));
    QJsonObject e = debugEntry(slp, "alpha");
    QCOMPARE(e.value("discovery").toString(), QStringLiteral("pending"));
    QVERIFY(!e.contains("upstream_model"));
    QVERIFY(slp.waitForLog(containing("discovery: alpha: probe GET"), 2000).hasMatch());
    QCOMPARE(httpRequest("GET", slp.url() + "/healthz").status, 200);

    // The backend comes up on that very port: discovered without a restart.
    dead.release();
    MockUpstream late;
    QVERIFY2(late.start({"Late-Model-7"}, {"--listen", QStringLiteral("127.0.0.1:%1").arg(port)}),
             qPrintable(late.errorString()));
    QCOMPARE(late.port(), port);
    QVERIFY2(QTest::qWaitFor([&] { return discoveryOf(slp, "alpha") == "discovered"; }, kSettleMs),
             qPrintable(slp.stderrText()));
    e = debugEntry(slp, "alpha");
    QCOMPARE(e.value("upstream_model").toString(), QStringLiteral("Late-Model-7"));
    QCOMPARE(e.value("last_probe").toString(), QStringLiteral("ok"));
    QCOMPARE(forwardedBody(slp, late, "alpha"), chatBody("Late-Model-7"));
    QVERIFY(slp.process().isRunning());
}

void TestDiscovery::renameFollowed()
{
    MockUpstream mock;
    SlpDaemon slp;
    const QString notReady = startDiscovered(mock, slp);
    QVERIFY2(notReady.isEmpty(), qPrintable(notReady));
    QCOMPARE(forwardedBody(slp, mock, "alpha"), chatBody("Name-1"));

    const auto mark = slp.mark();
    QVERIFY(mock.setModels({"Name-2"}));
    QVERIFY2(QTest::qWaitFor(
                 [&] { return debugEntry(slp, "alpha").value("upstream_model") == "Name-2"; },
                 kSettleMs),
             qPrintable(slp.stderrText()));
    QVERIFY2(
        slp.waitForLog(containing("changed from \"Name-1\" to \"Name-2\""), 2000, mark).hasMatch(),
        qPrintable(slp.stderrText()));
    QCOMPARE(forwardedBody(slp, mock, "alpha"), chatBody("Name-2"));
    QCOMPARE(discoveryOf(slp, "alpha"), QStringLiteral("discovered"));

    QCOMPARE(metric(slp, "slp_upstream_model_changes_total", {{"model_id", "alpha"}}), 1.0);
    // model_info carries the live mapping: the new label set, the old one gone.
    QCOMPARE(metric(slp, "slp_upstream_model_info",
                    {{"model_id", "alpha"}, {"upstream_model", "Name-2"}}),
             1.0);
    QCOMPARE(countSeries(slp, "slp_upstream_model_info", {{"upstream_model", "Name-1"}}), 0);
    QCOMPARE(countSeries(slp, "slp_upstream_model_info", {{"model_id", "alpha"}}), 1);

    // Stable name: rechecks do not count changes.
    const int probes = mock.modelProbes();
    QTRY_VERIFY_WITH_TIMEOUT(mock.modelProbes() >= probes + 2, kSettleMs);
    QCOMPARE(metric(slp, "slp_upstream_model_changes_total", {{"model_id", "alpha"}}), 1.0);
}

void TestDiscovery::twoModelsKeepLastNameThenRecover()
{
    MockUpstream mock;
    SlpDaemon slp;
    const QString notReady = startDiscovered(mock, slp);
    QVERIFY2(notReady.isEmpty(), qPrintable(notReady));

    auto mark = slp.mark();
    QVERIFY(mock.setModels({"model-a", "model-b"}));
    const QString warning = QStringLiteral(
        "discovery: WARNING: alpha: backend serves 2 models [model-a model-b], expected exactly 1; "
        "keeping last known name \"Name-1\" -- requests may be routed to a stale model");
    QVERIFY2(slp.waitForLog(exactLine(warning), kSettleMs, mark).hasMatch(),
             qPrintable(slp.stderrText()));
    QVERIFY2(
        QTest::qWaitFor(
            [&] {
                return metric(slp, "slp_upstream_model_ambiguous", {{"model_id", "alpha"}}) == 1.0;
            },
            3000),
        scrape(slp).samples.isEmpty() ? "no metrics" : "gauge not 1");
    QJsonObject e = debugEntry(slp, "alpha");
    QCOMPARE(e.value("last_probe").toString(), QStringLiteral("ambiguous"));
    QCOMPARE(e.value("upstream_model").toString(), QStringLiteral("Name-1")); // kept
    QCOMPARE(e.value("discovery").toString(), QStringLiteral("discovered"));
    QCOMPARE(forwardedBody(slp, mock, "alpha"), chatBody("Name-1"));
    // The warning repeats at every ambiguous probe (back-off schedule: 100..400 ms).
    QVERIFY2(
        QTest::qWaitFor([&] { return slp.countLog(exactLine(warning), mark) >= 3; }, kSettleMs),
        qPrintable(slp.stderrText()));
    QVERIFY(metric(slp, "slp_discovery_probes_total",
                   {{"model_id", "alpha"}, {"result", "ambiguous"}}) >= 3);
    // Still one name, no change counted.
    QVERIFY(metric(slp, "slp_upstream_model_changes_total", {{"model_id", "alpha"}}) <= 0);
    QCOMPARE(metric(slp, "slp_upstream_model_info",
                    {{"model_id", "alpha"}, {"upstream_model", "Name-1"}}),
             1.0);

    // One model again: gauge back to 0, probe ok.
    mark = slp.mark();
    QVERIFY(mock.setModels({"Name-1"}));
    QVERIFY2(
        QTest::qWaitFor(
            [&] {
                return metric(slp, "slp_upstream_model_ambiguous", {{"model_id", "alpha"}}) == 0.0;
            },
            kSettleMs),
        qPrintable(slp.stderrText()));
    e = debugEntry(slp, "alpha");
    QCOMPARE(e.value("last_probe").toString(), QStringLiteral("ok"));
    QCOMPARE(e.value("upstream_model").toString(), QStringLiteral("Name-1"));
    QVERIFY(metric(slp, "slp_upstream_model_changes_total", {{"model_id", "alpha"}}) <= 0);
    // Two more good probes, and no warning among them.
    const auto okMark = slp.mark();
    const int probes = mock.modelProbes();
    QTRY_VERIFY_WITH_TIMEOUT(mock.modelProbes() >= probes + 2, kSettleMs);
    QCOMPARE(slp.countLog(containing("discovery: WARNING"), okMark), 0);
}

void TestDiscovery::ambiguousBeforeAnyName()
{
    MockUpstream mock;
    QVERIFY2(mock.start({"one", "two"}), qPrintable(mock.errorString()));
    SlpDaemon slp;
    QVERIFY2(slp.start(oneBackend(mock.url())), qPrintable(slp.errorString()));
    const QString warning = QStringLiteral(
        "discovery: WARNING: alpha: backend serves 2 models [one two], expected exactly 1; "
        "no known name, forwarding \"alpha\" unchanged");
    QVERIFY2(slp.waitForLog(exactLine(warning), kSettleMs).hasMatch(),
             qPrintable(slp.stderrText()));
    QVERIFY2(
        QTest::qWaitFor(
            [&] {
                return metric(slp, "slp_upstream_model_ambiguous", {{"model_id", "alpha"}}) == 1.0;
            },
            3000),
        "ambiguous gauge not 1");
    const QJsonObject e = debugEntry(slp, "alpha");
    QCOMPARE(e.value("discovery").toString(), QStringLiteral("pending"));
    QCOMPARE(e.value("last_probe").toString(), QStringLiteral("ambiguous"));
    QVERIFY(!e.contains("upstream_model"));
    QCOMPARE(forwardedBody(slp, mock, "alpha"), chatBody("alpha")); // unchanged
    QCOMPARE(countSeries(slp, "slp_upstream_model_info", {{"model_id", "alpha"}}), 0);
}

void TestDiscovery::zeroModelsIsAmbiguous()
{
    MockUpstream mock;
    SlpDaemon slp;
    const QString notReady = startDiscovered(mock, slp);
    QVERIFY2(notReady.isEmpty(), qPrintable(notReady));
    const auto mark = slp.mark();
    QVERIFY(mock.setModels({})); // serves no model (and the mock then accepts any)
    const QString warning = QStringLiteral(
        "discovery: WARNING: alpha: backend serves 0 models [], expected exactly 1; "
        "keeping last known name \"Name-1\" -- requests may be routed to a stale model");
    QVERIFY2(slp.waitForLog(exactLine(warning), kSettleMs, mark).hasMatch(),
             qPrintable(slp.stderrText()));
    QVERIFY(QTest::qWaitFor(
        [&] {
            return metric(slp, "slp_upstream_model_ambiguous", {{"model_id", "alpha"}}) == 1.0;
        },
        3000));
    QCOMPARE(debugEntry(slp, "alpha").value("last_probe").toString(), QStringLiteral("ambiguous"));
    int status = 0;
    QCOMPARE(forwardedBody(slp, mock, "alpha", &status), chatBody("Name-1"));
    QCOMPARE(status, 200);
}

void TestDiscovery::unparseableCatalogAndHttpErrorKeepName()
{
    MockUpstream mock;
    SlpDaemon slp;
    const QString notReady = startDiscovered(mock, slp);
    QVERIFY2(notReady.isEmpty(), qPrintable(notReady));

    // 200 with a body that is not a model list.
    auto mark = slp.mark();
    QVERIFY(mock.setModelsStatus({{"status", 200}, {"raw", "not json"}}));
    QVERIFY2(
        QTest::qWaitFor([&] { return debugEntry(slp, "alpha").value("last_probe") == "error"; },
                        kSettleMs),
        qPrintable(slp.stderrText()));
    QJsonObject e = debugEntry(slp, "alpha");
    QCOMPARE(e.value("upstream_model").toString(), QStringLiteral("Name-1"));
    QCOMPARE(e.value("discovery").toString(), QStringLiteral("discovered"));
    QVERIFY2(slp.waitForLog(containing("discovery: alpha: probe GET"), 2000, mark).hasMatch(),
             qPrintable(slp.stderrText()));
    QVERIFY(slp.countLog(containing("keeping \"Name-1\""), mark) >= 1);
    QCOMPARE(forwardedBody(slp, mock, "alpha"), chatBody("Name-1"));
    QCOMPARE(metric(slp, "slp_upstream_model_ambiguous", {{"model_id", "alpha"}}), 0.0);

    // Back to normal, then HTTP 503 on /v1/models.
    QVERIFY(mock.setModelsStatus({}));
    QVERIFY(QTest::qWaitFor([&] { return debugEntry(slp, "alpha").value("last_probe") == "ok"; },
                            kSettleMs));
    mark = slp.mark();
    QVERIFY(mock.setModelsStatus({{"status", 503}}));
    QVERIFY2(
        QTest::qWaitFor([&] { return debugEntry(slp, "alpha").value("last_probe") == "error"; },
                        kSettleMs),
        qPrintable(slp.stderrText()));
    QVERIFY2(slp.waitForLog(containing("503"), 2000, mark).hasMatch(),
             qPrintable(slp.stderrText()));
    e = debugEntry(slp, "alpha");
    QCOMPARE(e.value("upstream_model").toString(), QStringLiteral("Name-1"));
    QCOMPARE(forwardedBody(slp, mock, "alpha"), chatBody("Name-1"));
    QVERIFY(metric(slp, "slp_discovery_probes_total",
                   {{"model_id", "alpha"}, {"result", "error"}}) >= 2);
    QVERIFY(metric(slp, "slp_upstream_model_changes_total", {{"model_id", "alpha"}}) <= 0);
}

void TestDiscovery::pinnedAndEditionsNeverProbed()
{
    MockUpstream disc;
    QVERIFY2(disc.start({"Disc-1"}), qPrintable(disc.errorString()));
    MockUpstream other; // used only by a pinned backend and by editions
    QVERIFY2(other.start({}), qPrintable(other.errorString()));
    const QString yaml = QStringLiteral("listen: \"127.0.0.1:0\"\n") + discoveryBlock() +
                         QStringLiteral("backends:\n"
                                        "  - name: disc\n"
                                        "    url: %1\n"
                                        "  - name: pin\n"
                                        "    url: %2\n"
                                        "    model: Pinned-1\n"
                                        "editions:\n"
                                        "  - suffix: -ed\n"
                                        "    url: %2\n"
                                        "  - suffix: -fx\n"
                                        "    url: %2\n"
                                        "    model: \"{{.Model}}\"\n")
                             .arg(disc.url(), other.url());
    SlpDaemon slp;
    QVERIFY2(slp.start(yaml), qPrintable(slp.errorString()));

    // The start-up dump, one line per route (padding before -> allowed).
    const QString o = QRegularExpression::escape(other.url());
    const QString d = QRegularExpression::escape(disc.url());
    for (const QString &re : {
             QStringLiteral("disc\\s+-> %1 \\(discovering\\)$").arg(d),
             QStringLiteral("pin\\s+-> %1 as \"Pinned-1\"$").arg(o),
             QStringLiteral("disc-ed\\s+-> %1 \\(passthrough\\)$").arg(o),
             QStringLiteral("pin-ed\\s+-> %1 \\(passthrough\\)$").arg(o),
             QStringLiteral("disc-fx\\s+-> %1 \\(follows disc\\)$").arg(o),
             QStringLiteral("pin-fx\\s+-> %1 as \"Pinned-1\"$").arg(o),
         }) {
        QVERIFY2(slp.waitForLog(QRegularExpression(QStringLiteral("^(?:\\S+\\s+)?") + re), 2000)
                     .hasMatch(),
                 qPrintable(re + "\n" + slp.stderrText()));
    }

    QVERIFY2(QTest::qWaitFor([&] { return discoveryOf(slp, "disc") == "discovered"; }, kSettleMs),
             qPrintable(slp.stderrText()));
    // Discovery runs (recheck every 300 ms) and never probes the other mock.
    QTRY_VERIFY_WITH_TIMEOUT(disc.modelProbes() >= 3, kSettleMs);
    QCOMPARE(other.modelProbes(), 0);

    const QStringList ids{"disc", "pin", "disc-ed", "pin-ed", "disc-fx", "pin-fx"};
    const QStringList states{"discovered",  "pinned",     "passthrough",
                             "passthrough", "discovered", "pinned"};
    for (qsizetype i = 0; i < ids.size(); ++i)
        QCOMPARE(discoveryOf(slp, ids[i]), states[i]);
    QVERIFY(!debugEntry(slp, "pin").contains("last_probe"));
    QVERIFY(!debugEntry(slp, "pin-ed").contains("last_probe"));

    // model_info for every route with a known name; none for passthrough editions.
    const QList<QPair<QString, QString>> known{
        {"disc", "Disc-1"}, {"pin", "Pinned-1"}, {"disc-fx", "Disc-1"}, {"pin-fx", "Pinned-1"}};
    for (const auto &[id, name] : known)
        QCOMPARE(
            metric(slp, "slp_upstream_model_info", {{"model_id", id}, {"upstream_model", name}}),
            1.0);
    QCOMPARE(countSeries(slp, "slp_upstream_model_info", {{"model_id", "disc-ed"}}), 0);
    QCOMPARE(countSeries(slp, "slp_upstream_model_info", {{"model_id", "pin-ed"}}), 0);
    // No probe series and no ambiguity gauge for routes that are never probed.
    QCOMPARE(countSeries(slp, "slp_discovery_probes_total", {{"model_id", "pin"}}), 0);
    QCOMPARE(countSeries(slp, "slp_discovery_probes_total", {{"model_id", "disc-fx"}}), 0);

    // Requests on those routes reach `other` as POSTs, never as probes.
    QCOMPARE(forwardedBody(slp, other, "pin"), chatBody("Pinned-1"));
    QCOMPARE(forwardedBody(slp, other, "pin-ed"), chatBody("pin-ed"));
    QCOMPARE(other.modelProbes(), 0);
}

void TestDiscovery::editionFollowsBackendName()
{
    MockUpstream backend;
    QVERIFY2(backend.start({"Name-1"}), qPrintable(backend.errorString()));
    QVERIFY(backend.setModelsStatus({{"status", 503}})); // pending at first
    MockUpstream copydesk;
    QVERIFY2(copydesk.start({}), qPrintable(copydesk.errorString()));
    const QString yaml = QStringLiteral("listen: \"127.0.0.1:0\"\n") + discoveryBlock() +
                         QStringLiteral("backends:\n"
                                        "  - name: alpha\n"
                                        "    url: %1\n"
                                        "editions:\n"
                                        "  - suffix: -edited\n"
                                        "    url: %2\n"
                                        "    model: \"{{.Model}}\"\n")
                             .arg(backend.url(), copydesk.url());
    SlpDaemon slp;
    QVERIFY2(slp.start(yaml), qPrintable(slp.errorString()));
    QVERIFY(slp.waitForLog(QRegularExpression("alpha-edited\\s+-> \\S+ \\(follows alpha\\)$"), 2000)
                .hasMatch());

    // Backend pending: the edition shows its state and sends the backend's exposed id.
    QVERIFY2(
        QTest::qWaitFor([&] { return debugEntry(slp, "alpha").value("last_probe") == "error"; },
                        kSettleMs),
        qPrintable(slp.stderrText()));
    QJsonObject e = debugEntry(slp, "alpha-edited");
    QCOMPARE(e.value("discovery").toString(), QStringLiteral("pending"));
    QCOMPARE(e.value("last_probe").toString(), QStringLiteral("error"));
    QVERIFY(!e.contains("upstream_model"));
    QCOMPARE(forwardedBody(slp, copydesk, "alpha-edited"), chatBody("alpha"));
    QCOMPARE(countSeries(slp, "slp_upstream_model_info", {{"model_id", "alpha-edited"}}), 0);

    // Discovered: the edition follows.
    QVERIFY(backend.setModelsStatus({}));
    QVERIFY2(QTest::qWaitFor([&] { return discoveryOf(slp, "alpha-edited") == "discovered"; },
                             kSettleMs),
             qPrintable(slp.stderrText()));
    e = debugEntry(slp, "alpha-edited");
    QCOMPARE(e.value("upstream_model").toString(), QStringLiteral("Name-1"));
    QCOMPARE(e.value("last_probe").toString(), QStringLiteral("ok"));
    QVERIFY(!e.value("last_probe_at").toString().isEmpty());
    QCOMPARE(forwardedBody(slp, copydesk, "alpha-edited"), chatBody("Name-1"));
    QCOMPARE(metric(slp, "slp_upstream_model_info",
                    {{"model_id", "alpha-edited"}, {"upstream_model", "Name-1"}}),
             1.0);

    // Renamed under a running SLP: the edition follows again, its old info series gone.
    QVERIFY(backend.setModels({"Name-2"}));
    QVERIFY2(
        QTest::qWaitFor(
            [&] { return debugEntry(slp, "alpha-edited").value("upstream_model") == "Name-2"; },
            kSettleMs),
        qPrintable(slp.stderrText()));
    QCOMPARE(forwardedBody(slp, copydesk, "alpha-edited"), chatBody("Name-2"));
    QCOMPARE(metric(slp, "slp_upstream_model_info",
                    {{"model_id", "alpha-edited"}, {"upstream_model", "Name-2"}}),
             1.0);
    QCOMPARE(countSeries(slp, "slp_upstream_model_info", {{"upstream_model", "Name-1"}}), 0);
    QCOMPARE(copydesk.modelProbes(), 0);
}

void TestDiscovery::slowProbeNeverDelaysRequests()
{
    MockUpstream mock;
    QVERIFY2(mock.start({}), qPrintable(mock.errorString())); // accepts any model
    QVERIFY(mock.setModelsStatus({{"delay_ms", 3000}}));
    SlpDaemon slp;
    // A long probe budget so the first probe really hangs for the mock's 3 s.
    QVERIFY2(slp.start(oneBackend(mock.url(), 10000)), qPrintable(slp.errorString()));
    QVERIFY2(QTest::qWaitFor([&] { return mock.modelProbes() >= 1; }, 5000), "no probe arrived");
    QElapsedTimer sinceProbe;
    sinceProbe.start();

    qint64 worst = 0;
    QString worstWhat;
    QElapsedTimer window;
    window.start();
    int rounds = 0;
    while (window.elapsed() < 1500) {
        const HttpResult models = httpRequest("GET", slp.url() + "/v1/models", {}, {}, 5000);
        QCOMPARE(models.status, 200);
        if (models.elapsedMs > worst) {
            worst = models.elapsedMs;
            worstWhat = "GET /v1/models";
        }
        const HttpResult debug = httpRequest("GET", slp.url() + "/v1/models?debug", {}, {}, 5000);
        QCOMPARE(debug.status, 200);
        const HttpResult chat =
            httpRequest("POST", slp.url() + "/v1/chat/completions", chatBody("alpha"),
                        {{"Content-Type", "application/json"}}, 5000);
        QCOMPARE(chat.status, 200);
        if (chat.elapsedMs > worst) {
            worst = chat.elapsedMs;
            worstWhat = "POST /v1/chat/completions";
        }
        ++rounds;
    }
    QVERIFY2(
        worst < 500,
        qPrintable(QStringLiteral("%1 took %2 ms while the probe hung").arg(worstWhat).arg(worst)));
    QVERIFY(rounds >= 3);
    // The probe was still hanging throughout (no result yet), and the route forwarded unchanged.
    if (sinceProbe.elapsed() < 2700) {
        const QJsonObject e = debugEntry(slp, "alpha");
        QVERIFY2(!e.contains("last_probe"), "the probe should still be in flight");
        QCOMPARE(e.value("discovery").toString(), QStringLiteral("pending"));
    }
    QCOMPARE(forwardedBody(slp, mock, "alpha"), chatBody("alpha"));
}

void TestDiscovery::probeCountsByResult()
{
    MockUpstream mock;
    QVERIFY2(mock.start({"Name-1"}), qPrintable(mock.errorString()));
    QVERIFY(mock.setModelsStatus({{"status", 500}}));
    SlpDaemon slp;
    QVERIFY2(slp.start(oneBackend(mock.url())), qPrintable(slp.errorString()));
    QVERIFY(QTest::qWaitFor(
        [&] {
            return metric(slp, "slp_discovery_probes_total",
                          {{"model_id", "alpha"}, {"result", "error"}}) >= 2;
        },
        kSettleMs));
    QVERIFY(mock.setModels({"x", "y"}));
    QVERIFY(mock.setModelsStatus({}));
    QVERIFY(QTest::qWaitFor(
        [&] {
            return metric(slp, "slp_discovery_probes_total",
                          {{"model_id", "alpha"}, {"result", "ambiguous"}}) >= 1;
        },
        kSettleMs));
    QVERIFY(mock.setModels({"Name-1"}));
    QVERIFY(QTest::qWaitFor(
        [&] {
            return metric(slp, "slp_discovery_probes_total",
                          {{"model_id", "alpha"}, {"result", "ok"}}) >= 2;
        },
        kSettleMs));

    // Every probe is counted once under exactly one result: the total equals what the mock saw
    // (give or take the one in flight).
    const slp::PromParseResult p = scrape(slp);
    double total = 0;
    for (const slp::PromSample &s : p.samples) {
        if (s.name == QLatin1String("slp_discovery_probes_total")) {
            QVERIFY(
                s.labels.contains(qMakePair(QStringLiteral("model_id"), QStringLiteral("alpha"))));
            const QString result = [&] {
                for (const auto &[k, v] : s.labels) {
                    if (k == QLatin1String("result"))
                        return v;
                }
                return QString();
            }();
            QVERIFY2(result == "ok" || result == "ambiguous" || result == "error",
                     qPrintable(result));
            total += s.value;
        }
    }
    const int seen = mock.modelProbes();
    QVERIFY2(total >= seen - 1 && total <= seen,
             qPrintable(QStringLiteral("counted %1, mock saw %2").arg(total).arg(seen)));
    QCOMPARE(p.families.value("slp_discovery_probes_total").type, QStringLiteral("counter"));
}

QTEST_MAIN(TestDiscovery)
#include "tst_discovery.moc"
