// SPDX-License-Identifier: GPL-3.0-or-later
// What SLP answers itself, over a real socket (docs/HTTP.md: GET /v1/models and
// ?debug, /v1/models/ID, /healthz, /metrics): from the route table, never touching a backend,
// never naming a backend's host.
#include "prometheustext.h"
#include "testsupport.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

using namespace slp::test;

namespace {

QJsonArray dataOf(const HttpResult &r)
{
    return QJsonDocument::fromJson(r.body).object().value("data").toArray();
}

QStringList idsOf(const HttpResult &r)
{
    QStringList ids;
    for (const QJsonValue &v : dataOf(r))
        ids << v.toObject().value("id").toString();
    return ids;
}

QJsonObject entry(const HttpResult &r, const QString &id)
{
    for (const QJsonValue &v : dataOf(r))
        if (v.toObject().value("id").toString() == id)
            return v.toObject();
    return {};
}

// The catalog's shape changed with issue 37: an entry is SLP's own (these four keys) only
// where no backend said anything of the model and no context_length is configured. A
// discovered vLLM-like backend's entry also relays what it sent (max_model_len here; root
// and parent dropped) and adds context_length; an edition shows its backend's; a configured
// context_length wins.
const QStringList kPlainKeys{"created", "id", "object", "owned_by"};

// What each route's plain entry says: learned from the live backend or SLP's own, and its
// context_length (0: none).
struct Expected
{
    bool learned;
    qint64 context;
};
const QHash<QString, Expected> kExpected{
    {"live", {true, 32768}},        {"down", {false, 0}},         {"pinned", {false, 8192}},
    {"live-edited", {true, 32768}}, {"down-edited", {false, 0}},  {"pinned-edited", {false, 8192}},
    {"live-wrap", {true, 16384}},   {"down-wrap", {false, 16384}}};

// Every key of a plain entry, and what the backend (or SLP) owns it as.
void checkPlain(const QJsonObject &o)
{
    const QString id = o.value("id").toString();
    const Expected want = kExpected.value(id);
    QStringList wantKeys = kPlainKeys;
    if (want.learned)
        wantKeys << "max_model_len";
    if (want.context > 0)
        wantKeys << "context_length";
    wantKeys.sort();
    QStringList keys = o.keys();
    keys.sort();
    QCOMPARE(keys, wantKeys);
    QCOMPARE(o.value("object").toString(), QStringLiteral("model"));
    QCOMPARE(o.value("owned_by").toString(),
             want.learned ? QStringLiteral("vllm") : QStringLiteral("slp"));
    if (want.learned)
        QCOMPARE(o.value("max_model_len").toInteger(), 32768);
    if (want.context > 0)
        QCOMPARE(o.value("context_length").toInteger(), want.context);
}

} // namespace

class TestCatalog : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();

    void healthz();
    void plainCatalog();
    void debugVariants_data();
    void debugVariants();
    void debugStates();
    void neverAUrlOrHost();
    void singleModel();
    void llamaCppPathsAnswerTheSame();
    void backendFieldsFollowed();
    void oversizedEntryTrimmedAndSaidOnce();
    void onlyGet();
    void metricsParseable();
    void answersWhileEveryBackendIsDown();

private:
    MockUpstream m_mock; // the one live backend ("live")
    SlpDaemon m_slp;
    DeadPort m_dead;
    QString m_deadUrl; // a port where nothing listens
    QStringList m_order;
};

void TestCatalog::initTestCase()
{
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY2(m_mock.start({"Live-Upstream-1"}), qPrintable(m_mock.errorString()));
    QVERIFY(m_dead.port() > 0);
    m_deadUrl = m_dead.url();
    const QString yaml = QStringLiteral("listen: \"127.0.0.1:0\"\n"
                                        "discovery:\n"
                                        "  backoff_initial: 100ms\n"
                                        "  backoff_max: 400ms\n"
                                        "  recheck: 300ms\n"
                                        "  probe_timeout: 500ms\n"
                                        "backends:\n"
                                        "  - name: live\n"
                                        "    url: %1\n"
                                        "  - name: down\n"
                                        "    url: %2\n"
                                        "    timeout: 2m\n"
                                        "    retry: true\n"
                                        "  - name: pinned\n"
                                        "    url: %2\n"
                                        "    model: Pinned-Upstream\n"
                                        "    timeout: 90s\n"
                                        "    aggregate: true\n"
                                        "    context_length: 8192\n"
                                        "editions:\n"
                                        "  - suffix: -edited\n"
                                        "    url: %2\n"
                                        "    timeout: 300s\n"
                                        "    aggregate: true\n"
                                        "  - suffix: -wrap\n"
                                        "    url: %2\n"
                                        "    model: \"{{.Model}}\"\n"
                                        "    context_length: 16384\n"
                                        "    apply_to: [live, down]\n")
                             .arg(m_mock.url(), m_deadUrl);
    m_order = QStringList{"live",        "down",          "pinned",    "live-edited",
                          "down-edited", "pinned-edited", "live-wrap", "down-wrap"};
    QVERIFY2(m_slp.start(yaml), qPrintable(m_slp.errorString()));
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                     const HttpResult r = httpRequest("GET", m_slp.url() + "/v1/models?debug");
                     return entry(r, "live").value("discovery") == "discovered" &&
                            entry(r, "down").value("last_probe") == "error";
                 },
                 8000),
             qPrintable(m_slp.stderrText()));
}

void TestCatalog::cleanupTestCase()
{
    QCOMPARE(m_slp.stop(), 0);
    m_mock.stop();
}

void TestCatalog::healthz()
{
    const HttpResult r = httpRequest("GET", m_slp.url() + "/healthz");
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body.trimmed(), QByteArray("ok"));
    QVERIFY(r.header("x-request-id").startsWith("slpq"));
}

void TestCatalog::plainCatalog()
{
    const HttpResult r = httpRequest("GET", m_slp.url() + "/v1/models");
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, 200);
    QVERIFY(r.header("content-type").startsWith("application/json"));
    const QJsonDocument doc = QJsonDocument::fromJson(r.body);
    QVERIFY2(doc.isObject(), r.body.constData());
    QCOMPARE(doc.object().value("object").toString(), QStringLiteral("list"));
    QCOMPARE(idsOf(r), m_order); // backends in config order, then editions in backend order
    qint64 created = -1;
    for (const QJsonValue &v : dataOf(r)) {
        const QJsonObject o = v.toObject();
        checkPlain(o);
        QVERIFY(o.value("created").isDouble());
        QVERIFY(o.value("created").toInteger() > 1600000000);
        if (kExpected.value(o.value("id").toString()).learned)
            continue; // the backend's own
        if (created < 0)
            created = o.value("created").toInteger();
        QCOMPARE(o.value("created").toInteger(), created);
    }
}

void TestCatalog::debugVariants_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<bool>("debug");
    QTest::newRow("?debug") << "?debug" << true;
    QTest::newRow("?debug=") << "?debug=" << true;
    QTest::newRow("?debug=1") << "?debug=1" << true;
    QTest::newRow("?debug=yes") << "?debug=yes" << true;
    QTest::newRow("?debug=true") << "?debug=true" << true;
    QTest::newRow("?x=1&debug") << "?x=1&debug" << true;
    QTest::newRow("?debug=0") << "?debug=0" << false;
    QTest::newRow("?debug=false") << "?debug=false" << false;
    QTest::newRow("no query") << "" << false;
    QTest::newRow("?other=1") << "?other=1" << false;
    QTest::newRow("?debugging") << "?debugging" << false;
}

void TestCatalog::debugVariants()
{
    QFETCH(QString, query);
    QFETCH(bool, debug);
    const HttpResult r = httpRequest("GET", m_slp.url() + "/v1/models" + query);
    QCOMPARE(r.status, 200);
    QCOMPARE(idsOf(r), m_order);
    for (const QJsonValue &v : dataOf(r)) {
        const QJsonObject o = v.toObject();
        if (!debug) {
            checkPlain(o);
            continue;
        }
        for (const char *k :
             {"id", "object", "created", "owned_by", "discovery", "timeout", "retry", "aggregate"})
            QVERIFY2(o.contains(QLatin1String(k)), k);
        QVERIFY(o.value("retry").isBool());
        QVERIFY(o.value("aggregate").isBool());
        QVERIFY(o.value("timeout").isString());
    }
}

void TestCatalog::debugStates()
{
    const HttpResult r = httpRequest("GET", m_slp.url() + "/v1/models?debug");
    QCOMPARE(r.status, 200);

    QJsonObject e = entry(r, "live");
    QCOMPARE(e.value("discovery").toString(), QStringLiteral("discovered"));
    QCOMPARE(e.value("upstream_model").toString(), QStringLiteral("Live-Upstream-1"));
    QCOMPARE(e.value("last_probe").toString(), QStringLiteral("ok"));
    QVERIFY(QRegularExpression("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$")
                .match(e.value("last_probe_at").toString())
                .hasMatch());
    QCOMPARE(e.value("timeout").toString(), QStringLiteral("1m0s"));
    QCOMPARE(e.value("retry").toBool(), false);
    QCOMPARE(e.value("aggregate").toBool(), false);

    e = entry(r, "down");
    QCOMPARE(e.value("discovery").toString(), QStringLiteral("pending"));
    QVERIFY(!e.contains("upstream_model"));
    QCOMPARE(e.value("last_probe").toString(), QStringLiteral("error"));
    QVERIFY(e.contains("last_probe_at"));
    QCOMPARE(e.value("timeout").toString(), QStringLiteral("2m0s"));
    QCOMPARE(e.value("retry").toBool(), true);

    e = entry(r, "pinned");
    QCOMPARE(e.value("discovery").toString(), QStringLiteral("pinned"));
    QCOMPARE(e.value("upstream_model").toString(), QStringLiteral("Pinned-Upstream"));
    QVERIFY(!e.contains("last_probe"));
    QVERIFY(!e.contains("last_probe_at"));
    QCOMPARE(e.value("timeout").toString(), QStringLiteral("1m30s"));
    QCOMPARE(e.value("aggregate").toBool(), true);

    for (const char *id : {"live-edited", "down-edited", "pinned-edited"}) {
        e = entry(r, QLatin1String(id));
        QCOMPARE(e.value("discovery").toString(), QStringLiteral("passthrough"));
        QVERIFY2(!e.contains("upstream_model"), id);
        QVERIFY2(!e.contains("last_probe"), id);
        QCOMPARE(e.value("timeout").toString(), QStringLiteral("5m0s"));
        QCOMPARE(e.value("aggregate").toBool(), true);
        QCOMPARE(e.value("retry").toBool(), false);
    }

    // Editions following a backend's .Model show the backend's state.
    e = entry(r, "live-wrap");
    QCOMPARE(e.value("discovery").toString(), QStringLiteral("discovered"));
    QCOMPARE(e.value("upstream_model").toString(), QStringLiteral("Live-Upstream-1"));
    QCOMPARE(e.value("last_probe").toString(), QStringLiteral("ok"));
    QCOMPARE(e.value("aggregate").toBool(), false); // never inherited
    e = entry(r, "down-wrap");
    QCOMPARE(e.value("discovery").toString(), QStringLiteral("pending"));
    QVERIFY(!e.contains("upstream_model"));
    QCOMPARE(e.value("last_probe").toString(), QStringLiteral("error"));
    QCOMPARE(e.value("retry").toBool(), false);
}

void TestCatalog::neverAUrlOrHost()
{
    const QString liveHostPort = m_mock.url().mid(QStringLiteral("http://").size());
    const QString deadHostPort = m_deadUrl.mid(QStringLiteral("http://").size());
    for (const char *query : {"", "?debug", "?debug=1"}) {
        const HttpResult r = httpRequest("GET", m_slp.url() + "/v1/models" + QLatin1String(query));
        QCOMPARE(r.status, 200);
        QVERIFY2(!r.body.contains(liveHostPort.toUtf8()), r.body.constData());
        QVERIFY2(!r.body.contains(deadHostPort.toUtf8()), r.body.constData());
        QVERIFY2(!r.body.contains("127.0.0.1"), r.body.constData());
        QVERIFY2(!r.body.contains("http:"), r.body.constData());
        QVERIFY2(!r.body.contains("\"url\""), r.body.constData());
    }
    const HttpResult one = httpRequest("GET", m_slp.url() + "/v1/models/live");
    QVERIFY(!one.body.contains("127.0.0.1"));
}

void TestCatalog::singleModel()
{
    for (const QString &id : m_order) {
        const HttpResult r = httpRequest("GET", m_slp.url() + "/v1/models/" + id);
        QCOMPARE(r.status, 200);
        const QJsonDocument doc = QJsonDocument::fromJson(r.body);
        QVERIFY2(doc.isObject(), r.body.constData());
        const QJsonObject o = doc.object();
        QCOMPARE(o.value("id").toString(), id);
        checkPlain(o);
        // The same entry as the list's.
        const HttpResult list = httpRequest("GET", m_slp.url() + "/v1/models");
        QCOMPARE(o, entry(list, id));
    }
    for (const char *unknown : {"nope", "LIVE", "live-", "Live-Upstream-1"}) {
        const HttpResult r =
            httpRequest("GET", m_slp.url() + "/v1/models/" + QLatin1String(unknown));
        QCOMPARE(r.status, 404);
        const QJsonObject err = QJsonDocument::fromJson(r.body).object().value("error").toObject();
        QVERIFY2(!err.isEmpty(), r.body.constData());
        QVERIFY2(err.value("message").toString().contains(QLatin1String(unknown)),
                 r.body.constData());
        QCOMPARE(err.value("code").toString(), QStringLiteral("model_not_found"));
        QVERIFY(err.contains("type"));
        QVERIFY(err.contains("param"));
    }
}

// GET /models and /models/ID, the spelling llama.cpp serves and many tools ask first, answer
// exactly as /v1/models does.
void TestCatalog::llamaCppPathsAnswerTheSame()
{
    for (const QString &query : {QString(), QStringLiteral("?debug")}) {
        const HttpResult v1 = httpRequest("GET", m_slp.url() + "/v1/models" + query);
        const HttpResult bare = httpRequest("GET", m_slp.url() + "/models" + query);
        QCOMPARE(bare.status, 200);
        QCOMPARE(dataOf(bare).size(), m_order.size());
        for (const QString &id : m_order) {
            QJsonObject a = entry(v1, id);
            QJsonObject b = entry(bare, id);
            // A probe may land between the two reads: its time is not the point here.
            a.remove("last_probe_at");
            b.remove("last_probe_at");
            QCOMPARE(b, a);
        }
    }
    const HttpResult one = httpRequest("GET", m_slp.url() + "/models/live");
    QCOMPARE(one.status, 200);
    QCOMPARE(QJsonDocument::fromJson(one.body).object(),
             entry(httpRequest("GET", m_slp.url() + "/v1/models"), "live"));
    QCOMPARE(httpRequest("GET", m_slp.url() + "/models/nope").status, 404);
    QCOMPARE(httpRequest("POST", m_slp.url() + "/models", "{}").status, 405);
}

// The backend changes what it says of its model (a restart with another --max-model-len):
// the catalog follows at the next probe, as a rename would be followed.
void TestCatalog::backendFieldsFollowed()
{
    const QByteArray changed = R"({"object":"list","data":[{"id":"Live-Upstream-1",)"
                               R"("object":"model","created":1700000000,"owned_by":"vllm",)"
                               R"("root":"Live-Upstream-1","max_model_len":65536}]})";
    QVERIFY(m_mock.setModelsStatus({{"status", 200}, {"raw", QString::fromUtf8(changed)}}));
    const bool followed = QTest::qWaitFor(
        [&] {
            const QJsonObject o = entry(httpRequest("GET", m_slp.url() + "/v1/models"), "live");
            return o.value("context_length").toInteger() == 65536;
        },
        8000);
    const QJsonObject o = entry(httpRequest("GET", m_slp.url() + "/v1/models"), "live-edited");
    QVERIFY(m_mock.setModelsStatus({}));
    QVERIFY2(followed, qPrintable(m_slp.stderrText().right(2000)));
    QCOMPARE(o.value("max_model_len").toInteger(), 65536);
    QCOMPARE(o.value("created").toInteger(), 1700000000);
    QVERIFY(QTest::qWaitFor(
        [&] {
            return entry(httpRequest("GET", m_slp.url() + "/v1/models"), "live")
                       .value("context_length")
                       .toInteger() == 32768;
        },
        8000));
}

// A backend whose entry is over 8 KiB (a hostile one, or a verbose one): the catalog keeps its
// context fields, owned_by and created, and the log says so once however many probes see it.
void TestCatalog::oversizedEntryTrimmedAndSaidOnce()
{
    QByteArray big = R"({"object":"list","data":[{"id":"Live-Upstream-1","object":"model",)"
                     R"("created":1700000000,"owned_by":"vllm","max_model_len":32768,)"
                     R"("junk":")" +
                     QByteArray(9000, 'x') + R"("}]})";
    const auto mark = m_slp.mark();
    QVERIFY(m_mock.setModelsStatus({{"status", 200}, {"raw", QString::fromUtf8(big)}}));
    const QRegularExpression said(QStringLiteral(
        "discovery: live: the backend's entry for \"Live-Upstream-1\" is \\d+ bytes, over 8192"));
    QVERIFY2(m_slp.waitForLog(said, 8000, mark).hasMatch(), qPrintable(m_slp.stderrText()));
    const int probesBefore = m_mock.modelProbes();
    QVERIFY(QTest::qWaitFor([&] { return m_mock.modelProbes() >= probesBefore + 3; }, 8000));
    const QJsonObject o = entry(httpRequest("GET", m_slp.url() + "/v1/models"), "live");
    QVERIFY(m_mock.setModelsStatus({}));
    QCOMPARE(m_slp.countLog(said, mark), 1);
    QVERIFY(!o.contains("junk"));
    QCOMPARE(o.value("context_length").toInteger(), 32768);
    QCOMPARE(o.value("owned_by").toString(), QStringLiteral("vllm"));
    QVERIFY(QTest::qWaitFor(
        [&] {
            return !entry(httpRequest("GET", m_slp.url() + "/v1/models"), "live")
                        .contains("junk") &&
                   entry(httpRequest("GET", m_slp.url() + "/v1/models"), "live")
                       .contains("max_model_len");
        },
        8000));
}

void TestCatalog::onlyGet()
{
    for (const QByteArray method : {"POST", "PUT", "DELETE", "PATCH"}) {
        const HttpResult r = httpRequest(method, m_slp.url() + "/v1/models", R"({"model":"live"})",
                                         {{"Content-Type", "application/json"}});
        QCOMPARE(r.status, 405);
        const QJsonObject err = QJsonDocument::fromJson(r.body).object().value("error").toObject();
        QVERIFY2(err.contains("message"), r.body.constData());
    }
    // The catalog is answered locally: the live backend saw no request from any of this.
    for (const QJsonValue &v : m_mock.requests()) {
        const QString target = v.toObject().value("target").toString();
        QVERIFY2(target == QLatin1String("/v1/models"), qPrintable(target));
        QCOMPARE(v.toObject().value("method").toString(), QStringLiteral("GET"));
    }
}

void TestCatalog::metricsParseable()
{
    // Make sure every family has at least one series to show.
    QCOMPARE(httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                         R"({"model":"live","messages":[]})")
                 .status,
             200);
    QCOMPARE(
        httpRequest("POST", m_slp.url() + "/v1/chat/completions", R"({"model":"nope"})").status,
        404);

    const HttpResult r = httpRequest("GET", m_slp.url() + "/metrics");
    QCOMPARE(r.status, 200);
    QVERIFY2(r.header("content-type").startsWith("text/plain"), r.header("content-type"));
    const slp::PromParseResult p = slp::parsePromText(r.body);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error + "\n" + QString::fromUtf8(r.body)));

    const QList<QPair<QString, QString>> families{
        {"slp_requests_total", "counter"},         {"slp_upstream_latency_seconds", "histogram"},
        {"slp_discovery_probes_total", "counter"}, {"slp_upstream_model_changes_total", "counter"},
        {"slp_upstream_model_info", "gauge"},      {"slp_upstream_model_ambiguous", "gauge"},
    };
    for (const auto &[name, type] : families) {
        QVERIFY2(r.body.contains("# HELP " + name.toUtf8() + ' '), qPrintable(name));
        QVERIFY2(r.body.contains("# TYPE " + name.toUtf8() + ' ' + type.toUtf8() + '\n'),
                 qPrintable(name));
        QCOMPARE(p.families.value(name).type, type);
    }
    const auto value = [&](const QString &name, const slp::PromLabels &match) {
        return slp::findPromSample(p.samples, name, match).value_or(-1);
    };
    QVERIFY(value("slp_requests_total", {{"model_id", "live"}, {"code", "200"}}) >= 1);
    QVERIFY(value("slp_requests_total", {{"model_id", "unknown"}, {"code", "404"}}) >= 1);
    QCOMPARE(value("slp_requests_total", {{"model_id", "nope"}}),
             -1.0); // never the client's string
    QVERIFY(value("slp_upstream_latency_seconds_count", {{"model_id", "live"}}) >= 1);
    QVERIFY(value("slp_discovery_probes_total", {{"model_id", "live"}, {"result", "ok"}}) >= 1);
    QVERIFY(value("slp_discovery_probes_total", {{"model_id", "down"}, {"result", "error"}}) >= 1);
    QCOMPARE(value("slp_upstream_model_info",
                   {{"model_id", "live"}, {"upstream_model", "Live-Upstream-1"}}),
             1.0);
    QCOMPARE(value("slp_upstream_model_info",
                   {{"model_id", "pinned"}, {"upstream_model", "Pinned-Upstream"}}),
             1.0);
    QCOMPARE(value("slp_upstream_model_info", {{"model_id", "down"}}), -1.0); // no name known
    QCOMPARE(value("slp_upstream_model_ambiguous", {{"model_id", "live"}}), 0.0);
    QCOMPARE(value("slp_upstream_model_ambiguous", {{"model_id", "down"}}), 0.0);
}

void TestCatalog::answersWhileEveryBackendIsDown()
{
    const DeadPort deadA;
    const DeadPort deadB;
    const quint16 a = deadA.port();
    const quint16 b = deadB.port();
    QVERIFY(a > 0 && b > 0);
    const QString yaml = QStringLiteral("discovery:\n"
                                        "  backoff_initial: 100ms\n"
                                        "  backoff_max: 400ms\n"
                                        "  recheck: 300ms\n"
                                        "  probe_timeout: 500ms\n"
                                        "backends:\n"
                                        "  - name: one\n"
                                        "    url: http://127.0.0.1:%1\n"
                                        "  - name: two\n"
                                        "    url: http://127.0.0.1:%2\n"
                                        "    model: Two-Pinned\n"
                                        "editions:\n"
                                        "  - suffix: -ed\n"
                                        "    url: http://127.0.0.1:%2\n")
                             .arg(a)
                             .arg(b);
    SlpDaemon slp;
    QVERIFY2(slp.start(yaml), qPrintable(slp.errorString()));
    QVERIFY(QTest::qWaitFor(
        [&] {
            return entry(httpRequest("GET", slp.url() + "/v1/models?debug"), "one")
                       .value("last_probe") == "error";
        },
        8000));
    for (int i = 0; i < 3; ++i) {
        HttpResult r = httpRequest("GET", slp.url() + "/v1/models", {}, {}, 5000);
        QCOMPARE(r.status, 200);
        QCOMPARE(idsOf(r), (QStringList{"one", "two", "one-ed", "two-ed"}));
        QVERIFY2(r.elapsedMs < 1000, qPrintable(QString::number(r.elapsedMs)));
        r = httpRequest("GET", slp.url() + "/v1/models?debug", {}, {}, 5000);
        QCOMPARE(r.status, 200);
        QCOMPARE(entry(r, "one").value("discovery").toString(), QStringLiteral("pending"));
        QCOMPARE(entry(r, "two").value("discovery").toString(), QStringLiteral("pinned"));
        QCOMPARE(httpRequest("GET", slp.url() + "/healthz").status, 200);
        QCOMPARE(httpRequest("GET", slp.url() + "/v1/models/two").status, 200);
        const HttpResult m = httpRequest("GET", slp.url() + "/metrics");
        QCOMPARE(m.status, 200);
        QVERIFY(slp::parsePromText(m.body).error.isEmpty());
        pumpEvents(150);
    }
    // A request to a dead backend is a 502, and the catalog still answers afterwards.
    QCOMPARE(httpRequest("POST", slp.url() + "/v1/chat/completions", R"({"model":"one"})").status,
             502);
    QCOMPARE(httpRequest("GET", slp.url() + "/v1/models").status, 200);
    QCOMPARE(slp.stop(), 0);
}

QTEST_MAIN(TestCatalog)
#include "tst_catalog.moc"
