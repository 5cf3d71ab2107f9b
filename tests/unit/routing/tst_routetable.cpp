// SPDX-License-Identifier: GPL-3.0-or-later
// RouteTable: which name each route sends upstream, how ?debug labels it, and the catalog
// built from it (docs/HTTP.md, GET /v1/models; docs/DECISIONS.md on discovery and
// pinning).
#include "routing/routetable.h"

#include <QTest>

using slp::Catalog;
using slp::CatalogEntry;
using slp::Config;
using slp::NameSource;
using slp::RouteTable;

namespace {

// Routes, in order:
//   0 disc          Discover
//   1 pin           Pinned "Pinned-Upstream"
//   2 disc2         Discover
//   3 disc-ed       Passthrough     (edition -ed, no model:)
//   4 pin-ed        Passthrough
//   5 disc-fx       FollowsBackend  (edition -fx, model: "{{.Model}}")
//   6 pin-fx        Pinned          ("{{.Model}}" of a pinned backend resolves at load)
//   7 disc-named    Pinned          (model: "{{.Name}}-wrapped" resolves at load)
const QByteArray kYaml = R"(listen: "127.0.0.1:0"
backends:
  - name: disc
    url: http://127.0.0.1:9001
  - name: pin
    url: http://127.0.0.1:9002
    model: Pinned-Upstream
    timeout: 2m
    retry: true
  - name: disc2
    url: http://127.0.0.1:9003
    timeout: 90s
    aggregate: true
editions:
  - suffix: -ed
    url: http://copydesk-{{.Name}}.lan:8100
    timeout: 300s
    apply_to: [disc, pin]
  - suffix: -fx
    url: http://127.0.0.1:9100
    model: "{{.Model}}"
    apply_to: [disc, pin]
  - suffix: -named
    url: http://127.0.0.1:9200
    model: "{{.Name}}-wrapped"
    apply_to: [disc]
)";

Config compile(const QByteArray &yaml)
{
    auto result = slp::compileConfig(yaml, QStringLiteral("routes.yaml"));
    if (auto *errors = std::get_if<QList<slp::ConfigError>>(&result)) {
        QStringList lines;
        for (const auto &e : *errors)
            lines << e.toString();
        qFatal("config did not compile: %s", qPrintable(lines.join('\n')));
    }
    return std::get<Config>(std::move(result));
}

} // namespace

class TestRouteTable : public QObject
{
    Q_OBJECT

private slots:
    void routeOrderAndNameSources();
    void findById();
    void upstreamModelPerSource();
    void discoveryLabelPerSource();
    void editionFollowsPendingThenDiscoveredBackend();
    void catalogPendingRoutes();
    void catalogAfterDiscovery();
    void catalogTimeoutsAndFlags();
    void catalogStreamKeys();
    void catalogNeverCarriesOrigins();
    void catalogCarriesLearnedFields();
    void renameKeepsTheNewFields();
};

void TestRouteTable::routeOrderAndNameSources()
{
    const RouteTable t(compile(kYaml));
    QCOMPARE(t.size(), 8);
    const QStringList expected{"disc",   "pin",     "disc2",  "disc-ed",
                               "pin-ed", "disc-fx", "pin-fx", "disc-named"};
    QStringList ids;
    for (qsizetype i = 0; i < t.size(); ++i)
        ids << t.route(i).id;
    QCOMPARE(ids, expected);
    QCOMPARE(t.route(0).nameSource, NameSource::Discover);
    QCOMPARE(t.route(1).nameSource, NameSource::Pinned);
    QCOMPARE(t.route(2).nameSource, NameSource::Discover);
    QCOMPARE(t.route(3).nameSource, NameSource::Passthrough);
    QCOMPARE(t.route(4).nameSource, NameSource::Passthrough);
    QCOMPARE(t.route(5).nameSource, NameSource::FollowsBackend);
    QCOMPARE(t.route(5).followsRoute, 0);
    QCOMPARE(t.route(6).nameSource, NameSource::Pinned);
    QCOMPARE(t.route(6).pinnedModel, QStringLiteral("Pinned-Upstream"));
    QCOMPARE(t.route(7).nameSource, NameSource::Pinned);
    QCOMPARE(t.route(7).pinnedModel, QStringLiteral("disc-wrapped"));
    QCOMPARE(t.route(3).origin, QStringLiteral("http://copydesk-disc.lan:8100"));
}

void TestRouteTable::findById()
{
    const RouteTable t(compile(kYaml));
    QCOMPARE(t.find("disc"), 0);
    QCOMPARE(t.find("pin-fx"), 6);
    QCOMPARE(t.find("Disc"), -1); // exact match only
    QCOMPARE(t.find("disc "), -1);
    QCOMPARE(t.find(""), -1);
    QCOMPARE(t.find("disc2-ed"), -1); // -ed applies to disc and pin only
}

void TestRouteTable::upstreamModelPerSource()
{
    RouteTable t(compile(kYaml));
    QCOMPARE(t.upstreamModel(0), QString()); // pending: forward unchanged
    QCOMPARE(t.upstreamModel(1), QStringLiteral("Pinned-Upstream"));
    QCOMPARE(t.upstreamModel(3), QString()); // passthrough
    QCOMPARE(t.upstreamModel(4), QString());
    QCOMPARE(t.upstreamModel(6), QStringLiteral("Pinned-Upstream"));
    QCOMPARE(t.upstreamModel(7), QStringLiteral("disc-wrapped"));

    t.discovery(0).name = QStringLiteral("Disc-Upstream-1");
    QCOMPARE(t.upstreamModel(0), QStringLiteral("Disc-Upstream-1"));
    QCOMPARE(t.upstreamModel(2), QString()); // another backend's name is its own
    QCOMPARE(t.upstreamModel(3), QString()); // a passthrough edition never follows
    QCOMPARE(t.upstreamModel(7), QStringLiteral("disc-wrapped"));
}

void TestRouteTable::discoveryLabelPerSource()
{
    RouteTable t(compile(kYaml));
    const QStringList before{"pending",     "pinned",  "pending", "passthrough",
                             "passthrough", "pending", "pinned",  "pinned"};
    for (qsizetype i = 0; i < t.size(); ++i)
        QCOMPARE(t.discoveryLabel(i), before.at(i));

    // A probe that ran but found no single name keeps the route pending.
    t.discovery(0).lastProbe = QStringLiteral("ambiguous");
    t.discovery(0).ambiguous = true;
    QCOMPARE(t.discoveryLabel(0), QStringLiteral("pending"));

    t.discovery(0).name = QStringLiteral("N");
    QCOMPARE(t.discoveryLabel(0), QStringLiteral("discovered"));
    QCOMPARE(t.discoveryLabel(5), QStringLiteral("discovered")); // follows its backend
    QCOMPARE(t.discoveryLabel(2), QStringLiteral("pending"));
    QCOMPARE(t.discoveryLabel(3), QStringLiteral("passthrough"));
}

void TestRouteTable::editionFollowsPendingThenDiscoveredBackend()
{
    RouteTable t(compile(kYaml));
    const qsizetype fx = t.find("disc-fx");
    QVERIFY(fx >= 0);
    // Pending backend: .Model is the backend's exposed id.
    QCOMPARE(t.discoveryLabel(fx), QStringLiteral("pending"));
    QCOMPARE(t.upstreamModel(fx), QStringLiteral("disc"));

    t.discovery(0).name = QStringLiteral("Disc-Upstream-1");
    QCOMPARE(t.discoveryLabel(fx), QStringLiteral("discovered"));
    QCOMPARE(t.upstreamModel(fx), QStringLiteral("Disc-Upstream-1"));

    t.discovery(0).name = QStringLiteral("Disc-Upstream-2"); // a rename under a running SLP
    QCOMPARE(t.upstreamModel(fx), QStringLiteral("Disc-Upstream-2"));

    // A template around .Model re-renders too.
    const QByteArray yaml = R"(backends:
  - name: b
    url: http://127.0.0.1:9001
editions:
  - suffix: -w
    url: http://127.0.0.1:9100
    model: "wrap:{{.Model}}@{{.Name}}"
)";
    RouteTable w(compile(yaml));
    QCOMPARE(w.route(1).nameSource, NameSource::FollowsBackend);
    QCOMPARE(w.upstreamModel(1), QStringLiteral("wrap:b@b"));
    w.discovery(0).name = QStringLiteral("Real");
    QCOMPARE(w.upstreamModel(1), QStringLiteral("wrap:Real@b"));
}

void TestRouteTable::catalogPendingRoutes()
{
    const RouteTable t(compile(kYaml));
    const Catalog c = t.catalog(1700000000);
    QCOMPARE(c.created, 1700000000);
    QCOMPARE(c.entries.size(), 8);
    for (qsizetype i = 0; i < c.entries.size(); ++i)
        QCOMPARE(c.entries.at(i).id, t.route(i).id);

    const CatalogEntry &disc = c.entries.at(0);
    QCOMPARE(disc.discovery, QStringLiteral("pending"));
    QVERIFY(disc.upstreamModel.isEmpty());
    QVERIFY(disc.lastProbe.isEmpty()); // no probe has run
    QVERIFY(!disc.lastProbeAt.isValid());

    const CatalogEntry &pin = c.entries.at(1);
    QCOMPARE(pin.discovery, QStringLiteral("pinned"));
    QCOMPARE(pin.upstreamModel, QStringLiteral("Pinned-Upstream"));
    QVERIFY(pin.lastProbe.isEmpty());

    const CatalogEntry &ed = c.entries.at(3);
    QCOMPARE(ed.discovery, QStringLiteral("passthrough"));
    QVERIFY(ed.upstreamModel.isEmpty());
    QVERIFY(ed.lastProbe.isEmpty());

    const CatalogEntry &fx = c.entries.at(5);
    QCOMPARE(fx.discovery, QStringLiteral("pending"));
    QVERIFY2(fx.upstreamModel.isEmpty(), qPrintable(fx.upstreamModel));

    const CatalogEntry &pinFx = c.entries.at(6);
    QCOMPARE(pinFx.discovery, QStringLiteral("pinned"));
    QCOMPARE(pinFx.upstreamModel, QStringLiteral("Pinned-Upstream"));
}

void TestRouteTable::catalogAfterDiscovery()
{
    RouteTable t(compile(kYaml));
    const QDateTime at = QDateTime(QDate(2026, 7, 27), QTime(9, 14, 2), Qt::UTC);
    t.discovery(0).name = QStringLiteral("Disc-Upstream-1");
    t.discovery(0).lastProbe = QStringLiteral("ok");
    t.discovery(0).lastProbeAt = at;
    t.discovery(2).lastProbe = QStringLiteral("error");
    t.discovery(2).lastProbeAt = at.addSecs(5);

    const Catalog c = t.catalog(0);
    const CatalogEntry &disc = c.entries.at(0);
    QCOMPARE(disc.discovery, QStringLiteral("discovered"));
    QCOMPARE(disc.upstreamModel, QStringLiteral("Disc-Upstream-1"));
    QCOMPARE(disc.lastProbe, QStringLiteral("ok"));
    QCOMPARE(disc.lastProbeAt, at);

    const CatalogEntry &disc2 = c.entries.at(2);
    QCOMPARE(disc2.discovery, QStringLiteral("pending"));
    QVERIFY(disc2.upstreamModel.isEmpty());
    QCOMPARE(disc2.lastProbe, QStringLiteral("error"));
    QCOMPARE(disc2.lastProbeAt, at.addSecs(5));

    // The following edition shows its backend's state, probe included.
    const CatalogEntry &fx = c.entries.at(5);
    QCOMPARE(fx.discovery, QStringLiteral("discovered"));
    QCOMPARE(fx.upstreamModel, QStringLiteral("Disc-Upstream-1"));
    QCOMPARE(fx.lastProbe, QStringLiteral("ok"));
    QCOMPARE(fx.lastProbeAt, at);

    // A passthrough edition of the same backend is not probed and shows no probe.
    const CatalogEntry &ed = c.entries.at(3);
    QCOMPARE(ed.discovery, QStringLiteral("passthrough"));
    QVERIFY(ed.upstreamModel.isEmpty());
    QVERIFY(ed.lastProbe.isEmpty());
    QVERIFY(!ed.lastProbeAt.isValid());
    // Nor does an edition pinned at load.
    QVERIFY(c.entries.at(7).lastProbe.isEmpty());
}

void TestRouteTable::catalogTimeoutsAndFlags()
{
    const RouteTable t(compile(kYaml));
    const Catalog c = t.catalog(0);
    QCOMPARE(c.entries.at(0).timeout, QStringLiteral("1m0s")); // default 60s
    QCOMPARE(c.entries.at(1).timeout, QStringLiteral("2m0s"));
    QCOMPARE(c.entries.at(2).timeout, QStringLiteral("1m30s"));
    QCOMPARE(c.entries.at(3).timeout, QStringLiteral("5m0s"));
    QVERIFY(!c.entries.at(0).retry);
    QVERIFY(c.entries.at(1).retry);
    QVERIFY(c.entries.at(2).aggregate);
    QVERIFY(!c.entries.at(4).retry);     // an edition never inherits retry
    QVERIFY(!c.entries.at(3).aggregate); // nor aggregate
}

void TestRouteTable::catalogStreamKeys()
{
    // Go duration strings, "0s" when off; an edition has its own, never its backend's.
    const RouteTable t(compile(R"(
backends:
  - {name: a, url: "http://a", stream_idle_timeout: 90s, sse_keepalive: 400ms}
editions:
  - {suffix: -e, url: "http://e"}
  - {suffix: -f, url: "http://f", sse_keepalive: 15s}
)"));
    const Catalog c = t.catalog(0);
    QCOMPARE(c.entries.at(0).streamIdleTimeout, QStringLiteral("1m30s"));
    QCOMPARE(c.entries.at(0).sseKeepalive, QStringLiteral("400ms"));
    QCOMPARE(c.entries.at(1).streamIdleTimeout, QStringLiteral("0s"));
    QCOMPARE(c.entries.at(1).sseKeepalive, QStringLiteral("0s"));
    QCOMPARE(c.entries.at(2).streamIdleTimeout, QStringLiteral("0s"));
    QCOMPARE(c.entries.at(2).sseKeepalive, QStringLiteral("15s"));
    const QByteArray json = slp::catalogToJson(c, true);
    QVERIFY(json.contains(R"("stream_idle_timeout":"1m30s","sse_keepalive":"400ms"})"));
    QVERIFY(json.contains(R"("stream_idle_timeout":"0s","sse_keepalive":"0s"})"));
}

void TestRouteTable::catalogNeverCarriesOrigins()
{
    RouteTable t(compile(kYaml));
    t.discovery(0).name = QStringLiteral("Disc-Upstream-1");
    const QByteArray json = slp::catalogToJson(t.catalog(0), true);
    QVERIFY(!json.contains("127.0.0.1"));
    QVERIFY(!json.contains("copydesk"));
    QVERIFY(!json.contains("http"));
    QVERIFY(!json.contains("9001"));
}

// What discovery learned of a backend's model shows on its entry and on every edition of it
// (passthrough, following, pinned at load: each wraps the same model); a pinned backend's own
// entry has none (never probed) but its configured context_length, which its editions take.
void TestRouteTable::catalogCarriesLearnedFields()
{
    QByteArray yaml = kYaml;
    yaml.replace("    model: Pinned-Upstream\n",
                 "    model: Pinned-Upstream\n    context_length: 4096\n");
    yaml.replace("    apply_to: [disc]\n", "    apply_to: [disc]\n    context_length: 1024\n");
    RouteTable t(compile(yaml));
    t.discovery(0).name = QStringLiteral("Disc-Upstream-1");
    t.discovery(0).fields = QJsonObject{{"owned_by", "vllm"}, {"max_model_len", 32768}};
    const Catalog c = t.catalog(0);
    const auto entry = [&](const char *id) { return c.entries.at(t.find(QLatin1String(id))); };
    for (const char *id : {"disc", "disc-ed", "disc-fx"}) {
        QCOMPARE(entry(id).fields.value("max_model_len").toInteger(), 32768);
        QCOMPARE(entry(id).contextLength.value_or(0), 32768);
    }
    // An edition with a context_length of its own shows that over the backend's.
    QCOMPARE(entry("disc-named").fields.value("owned_by").toString(), QStringLiteral("vllm"));
    QCOMPARE(entry("disc-named").contextLength.value_or(0), 1024);
    QVERIFY(entry("pin").fields.isEmpty());
    QCOMPARE(entry("pin").contextLength.value_or(0), 4096);
    QCOMPARE(entry("pin-ed").contextLength.value_or(0), 4096);
    QCOMPARE(entry("pin-fx").contextLength.value_or(0), 4096);
    QVERIFY(!entry("disc2").contextLength);
}

// A backend renamed under a running SLP (a new model behind the same URL): the next probe's
// name and fields replace the old ones together.
void TestRouteTable::renameKeepsTheNewFields()
{
    RouteTable t(compile(kYaml));
    t.discovery(0).name = QStringLiteral("Qwen3-8B");
    t.discovery(0).fields = QJsonObject{{"max_model_len", 32768}};
    t.discovery(0).name = QStringLiteral("Qwen3-14B");
    t.discovery(0).fields = QJsonObject{{"max_model_len", 131072}, {"owned_by", "vllm"}};
    const CatalogEntry e = t.catalogEntry(t.find(QStringLiteral("disc-fx")));
    QCOMPARE(e.upstreamModel, QStringLiteral("Qwen3-14B"));
    QCOMPARE(e.contextLength.value_or(0), 131072);
    QCOMPARE(e.fields.value("owned_by").toString(), QStringLiteral("vllm"));
}

QTEST_APPLESS_MAIN(TestRouteTable)
#include "tst_routetable.moc"
