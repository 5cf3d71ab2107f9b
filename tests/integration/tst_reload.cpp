// SPDX-License-Identifier: GPL-3.0-or-later
// SIGHUP reload against the real `slp` and mock vLLM upstreams (docs/OPERATE.md "Reload, drain and
// logs", "Config": SIGHUP reloads): a config that fails to compile is logged with its errors and
// the old table keeps serving; a good one replaces the table between requests (a new route answers,
// a removed one is 404); a request in flight finishes on the route it started on; requests racing
// reloads all succeed on one table or the other; discovery state survives for a backend whose name
// and url did not change (no "pending" flash, no new probe) and starts afresh for one whose url
// changed.
#include "testsupport.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <memory>
#include <vector>

using namespace slp::test;

namespace {

constexpr int kSettleMs = 8000; // bounded waits; a loaded 2-core machine settles far sooner

QByteArray chatBody(const QString &model, bool stream = false)
{
    return QStringLiteral(R"({"model":"%1",%2"messages":[{"role":"user","content":"hi"}]})")
        .arg(model, stream ? QStringLiteral(R"("stream":true,)") : QString())
        .toUtf8();
}

HttpResult chat(SlpDaemon &slp, const QString &model, const HeaderList &headers = {})
{
    HeaderList h = headers;
    h.append(qMakePair(QByteArray("Content-Type"), QByteArray("application/json")));
    return httpRequest("POST", slp.url() + "/v1/chat/completions", chatBody(model), h);
}

QStringList catalogIds(SlpDaemon &slp)
{
    QStringList ids;
    const HttpResult r = httpRequest("GET", slp.url() + "/v1/models");
    for (const QJsonValue &v : jsonObject(r.body).value("data").toArray())
        ids << v.toObject().value("id").toString();
    return ids;
}

QJsonObject debugEntry(SlpDaemon &slp, const QString &id)
{
    const HttpResult r = httpRequest("GET", slp.url() + "/v1/models?debug");
    for (const QJsonValue &v : jsonObject(r.body).value("data").toArray())
        if (v.toObject().value("id").toString() == id)
            return v.toObject();
    return {};
}

// Waits until ?debug shows `id` with discovery `state` (and upstream_model `name` when given).
QJsonObject waitForDiscovery(SlpDaemon &slp, const QString &id, const QString &state,
                             const QString &name = {})
{
    QElapsedTimer t;
    t.start();
    QJsonObject e;
    while (t.elapsed() < kSettleMs) {
        e = debugEntry(slp, id);
        if (e.value("discovery").toString() == state &&
            (name.isEmpty() || e.value("upstream_model").toString() == name))
            return e;
        pumpEvents(50);
    }
    return e;
}

// The model names of the chat requests the mock has seen (in order).
QStringList chatModels(MockUpstream &mock)
{
    QStringList names;
    for (const QJsonValue &v : mock.requests()) {
        const QJsonObject o = v.toObject();
        if (o.value("method").toString() == "POST")
            names << jsonObject(MockUpstream::body(o)).value("model").toString();
    }
    return names;
}

QRegularExpression containing(const QString &text)
{
    return QRegularExpression(QRegularExpression::escape(text));
}

// The concatenated delta contents of an SSE chat stream.
QString streamContent(const QByteArray &body)
{
    QString out;
    for (const QByteArray &data : sseData(body)) {
        const QJsonObject delta =
            jsonObject(data).value("choices").toArray().at(0).toObject().value("delta").toObject();
        out += delta.value("content").toString();
    }
    return out;
}

QString pinned(const QString &name, const QString &url, const QString &model)
{
    return QStringLiteral("  - name: %1\n    url: %2\n    model: %3\n    timeout: 10s\n")
        .arg(name, url, model);
}

const QString kHeader = QStringLiteral("shutdown_grace: 1s\n");

// Fast backoff to learn a name quickly; recheck far away, so any probe seen shortly after a
// reload comes from a supervisor that started afresh. The same block in every config: a
// schedule change restarts every supervisor by design.
const QString kDiscovery = QStringLiteral("discovery:\n"
                                          "  backoff_initial: 100ms\n"
                                          "  backoff_max: 400ms\n"
                                          "  recheck: 5m\n"
                                          "  probe_timeout: 3s\n");

} // namespace

class TestReload : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void badConfigIsLoggedAndOldTableServes();
    void goodConfigReplacesTable();
    void inFlightStreamFinishesOnItsRoute();
    void requestsRacingReloadsAllSucceed();
    void discoverySurvivesForUnchangedBackend();
    void discoveryRestartsWhenUrlChanges();

private:
    bool reloadWith(SlpDaemon &slp, const QString &yaml, const QString &expectLine);
    QString log(SlpDaemon &slp) { return slp.stderrText().right(4000); }

    MockUpstream m_a; // any model
    MockUpstream m_b; // any model
    MockUpstream m_d1;
    MockUpstream m_d2;
};

void TestReload::initTestCase()
{
    QVERIFY2(!MockUpstream::binary().isEmpty(), "set SLP_MOCK_BIN");
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY2(m_a.start({}, {"--id-prefix", "aaaa"}), qPrintable(m_a.errorString()));
    QVERIFY2(m_b.start({}, {"--id-prefix", "bbbb"}), qPrintable(m_b.errorString()));
    QVERIFY2(m_d1.start({"disc-upstream"}), qPrintable(m_d1.errorString()));
    QVERIFY2(m_d2.start({"disc-other"}), qPrintable(m_d2.errorString()));
}

void TestReload::cleanupTestCase()
{
    m_a.stop();
    m_b.stop();
    m_d1.stop();
    m_d2.stop();
}

void TestReload::init()
{
    for (MockUpstream *m : {&m_a, &m_b, &m_d1, &m_d2})
        QVERIFY(m->reset());
    QVERIFY(m_d1.setModels({"disc-upstream"}));
    QVERIFY(m_d2.setModels({"disc-other"}));
    QVERIFY(m_d2.setModelsStatus({}));
}

// Rewrites the config, sends SIGHUP and waits for a log line containing expectLine.
bool TestReload::reloadWith(SlpDaemon &slp, const QString &yaml, const QString &expectLine)
{
    const ChildProcess::Mark from = slp.mark();
    if (!slp.writeConfig(yaml) || !slp.reload())
        return false;
    return slp.waitForLog(containing(expectLine), kSettleMs, from).hasMatch();
}

void TestReload::badConfigIsLoggedAndOldTableServes()
{
    SlpDaemon slp;
    QVERIFY2(slp.start(kHeader + "backends:\n" + pinned("alpha", m_a.url(), "alpha-up")),
             qPrintable(slp.errorString()));
    QCOMPARE(chat(slp, "alpha").status, 200);

    // Two errors: an unknown key and a URL with a path.
    const QString bad = kHeader + QStringLiteral("bogus_key: 1\n"
                                                 "backends:\n"
                                                 "  - name: beta\n"
                                                 "    url: http://127.0.0.1:1/v1\n");
    const ChildProcess::Mark from = slp.mark();
    QVERIFY(slp.writeConfig(bad));
    QVERIFY(slp.reload());
    QVERIFY2(
        slp.waitForLog(containing("error(s); still serving the previous config"), kSettleMs, from)
            .hasMatch(),
        qPrintable(log(slp)));
    // Each error on its own line, with the file and its line number.
    const QRegularExpression errorLine(QStringLiteral("reload: .*slp\\.yaml:\\d+"));
    QVERIFY2(slp.waitForLog(errorLine, kSettleMs, from).hasMatch(), qPrintable(log(slp)));
    QTRY_VERIFY2_WITH_TIMEOUT(slp.countLog(errorLine, from) >= 2, qPrintable(log(slp)), kSettleMs);
    QVERIFY2(slp.countLog(containing("bogus_key"), from) >= 1, qPrintable(log(slp)));

    // Still the old table, and still running.
    QVERIFY(slp.process().isRunning());
    QCOMPARE(catalogIds(slp), QStringList{"alpha"});
    const HttpResult r = chat(slp, "alpha");
    QCOMPARE(r.status, 200);
    QCOMPARE(jsonObject(r.body).value("model").toString(), QStringLiteral("alpha-up"));
    QCOMPARE(chat(slp, "beta").status, 404);
    QCOMPARE(slp.stop(), 0);
}

void TestReload::goodConfigReplacesTable()
{
    SlpDaemon slp;
    QVERIFY2(slp.start(kHeader + "backends:\n" + pinned("alpha", m_a.url(), "alpha-up")),
             qPrintable(slp.errorString()));
    QCOMPARE(chat(slp, "alpha").status, 200);

    QVERIFY2(reloadWith(slp,
                        kHeader + "backends:\n" + pinned("beta", m_b.url(), "beta-up") +
                            pinned("gamma", m_a.url(), "gamma-up"),
                        "reload: 2 routes from"),
             qPrintable(log(slp)));
    // The route dump follows, one line per route.
    QVERIFY2(slp.waitForLog(QRegularExpression("beta\\s+-> .* as \"beta-up\""), 2000).hasMatch(),
             qPrintable(log(slp)));

    QCOMPARE(catalogIds(slp), (QStringList{"beta", "gamma"}));
    const qint64 bSeen = chatModels(m_b).size();
    const HttpResult beta = chat(slp, "beta");
    QCOMPARE(beta.status, 200);
    QCOMPARE(jsonObject(beta.body).value("model").toString(), QStringLiteral("beta-up"));
    QVERIFY(beta.header("X-Request-Id").startsWith("bbbb")); // mock b answered
    QCOMPARE(chatModels(m_b).size(), bSeen + 1);
    QCOMPARE(chat(slp, "gamma").status, 200);

    const HttpResult gone = chat(slp, "alpha");
    QCOMPARE(gone.status, 404);
    QCOMPARE(jsonObject(gone.body).value("error").toObject().value("code").toString(),
             QStringLiteral("model_not_found"));
    QVERIFY(gone.header("X-Request-Id").startsWith("slpq"));
    QCOMPARE(slp.stop(), 0);
}

void TestReload::inFlightStreamFinishesOnItsRoute()
{
    SlpDaemon slp;
    QVERIFY2(slp.start(kHeader + "backends:\n" + pinned("alpha", m_a.url(), "alpha-old")),
             qPrintable(slp.errorString()));

    // A slow stream: 8 content events 150 ms apart (about 1.5 s).
    RawConnection stream;
    QVERIFY(stream.connectTo(slp.host(), slp.port()));
    QVERIFY(stream.send(buildRequest("POST", slp.url() + "/v1/chat/completions",
                                     chatBody("alpha", true),
                                     {{"Content-Type", "application/json"},
                                      {"X-Mock-Events", "8"},
                                      {"X-Mock-Event-Interval-Ms", "150"}})));
    QVERIFY2(stream.waitForData("data:", 5000), qPrintable(log(slp)));

    // Mid-stream, alpha moves to another upstream under another name.
    QVERIFY2(reloadWith(slp, kHeader + "backends:\n" + pinned("alpha", m_b.url(), "alpha-new"),
                        "reload: 1 routes from"),
             qPrintable(log(slp)));
    const HttpResult fresh = chat(slp, "alpha");
    QCOMPARE(fresh.status, 200);
    QCOMPARE(jsonObject(fresh.body).value("model").toString(), QStringLiteral("alpha-new"));
    QVERIFY(fresh.header("X-Request-Id").startsWith("bbbb"));

    // The stream that started before the reload ends whole, on the old upstream and name.
    const HttpResult old = stream.readResponse(15000);
    QVERIFY2(old.ok(), qPrintable(old.error + "\n" + log(slp)));
    QCOMPARE(old.status, 200);
    QVERIFY(old.header("X-Request-Id").startsWith("aaaa"));
    QCOMPARE(sseData(old.body).last(), QByteArray("[DONE]"));
    QVERIFY2(streamContent(old.body).startsWith(QStringLiteral("Hello from alpha-old")),
             qPrintable(streamContent(old.body)));
    QCOMPARE(chatModels(m_a), QStringList{"alpha-old"});
    QCOMPARE(chatModels(m_b), QStringList{"alpha-new"});
    QCOMPARE(slp.stop(), 0);
}

void TestReload::requestsRacingReloadsAllSucceed()
{
    const QString x = kHeader + "backends:\n" + pinned("alpha", m_a.url(), "x-up");
    const QString y = kHeader + "backends:\n" + pinned("alpha", m_b.url(), "y-up");
    SlpDaemon slp;
    QVERIFY2(slp.start(x), qPrintable(slp.errorString()));

    constexpr int kRounds = 6;
    constexpr int kPerRound = 4;
    const QRegularExpression reloaded(QStringLiteral("reload: 1 routes from"));
    for (int round = 0; round < kRounds; ++round) {
        // Requests in flight (their upstream waits 150 ms before answering) while the table
        // is swapped under them.
        std::vector<std::unique_ptr<RawConnection>> conns;
        for (int i = 0; i < kPerRound; ++i) {
            auto c = std::make_unique<RawConnection>();
            QVERIFY(c->connectTo(slp.host(), slp.port()));
            QVERIFY(c->send(
                buildRequest("POST", slp.url() + "/v1/chat/completions", chatBody("alpha"),
                             {{"Content-Type", "application/json"}, {"X-Mock-Delay-Ms", "150"}})));
            conns.push_back(std::move(c));
        }
        QVERIFY(slp.writeConfig(round % 2 == 0 ? y : x));
        QVERIFY(slp.reload());
        for (auto &c : conns) {
            const HttpResult r = c->readResponse(10000);
            QVERIFY2(r.ok() && r.status == 200, qPrintable(r.error + "\n" + log(slp)));
            const QString model = jsonObject(r.body).value("model").toString();
            QVERIFY2(model == "x-up" || model == "y-up", qPrintable(model));
        }
        QElapsedTimer t;
        t.start();
        while (slp.countLog(reloaded) < round + 1 && t.elapsed() < kSettleMs)
            pumpEvents(20);
        QCOMPARE(slp.countLog(reloaded), round + 1);
    }
    // The last reload (round 5: x) is what serves now.
    const HttpResult last = chat(slp, "alpha");
    QCOMPARE(last.status, 200);
    QCOMPARE(jsonObject(last.body).value("model").toString(), QStringLiteral("x-up"));
    QCOMPARE(slp.stop(), 0);
}

void TestReload::discoverySurvivesForUnchangedBackend()
{
    const QString disc = QStringLiteral("  - name: disc\n    url: %1\n").arg(m_d1.url());
    SlpDaemon slp;
    QVERIFY2(slp.start(kHeader + kDiscovery + "backends:\n" + disc), qPrintable(slp.errorString()));
    const QJsonObject before = waitForDiscovery(slp, "disc", "discovered", "disc-upstream");
    QVERIFY2(before.value("discovery").toString() == "discovered",
             qPrintable(QJsonDocument(before).toJson() + log(slp)));
    const int probes = m_d1.modelProbes();
    QVERIFY(probes >= 1);

    // Add a route; disc keeps its name and url.
    QVERIFY2(reloadWith(slp,
                        kHeader + kDiscovery + "backends:\n" + disc +
                            pinned("extra", m_a.url(), "extra-up"),
                        "reload: 2 routes from"),
             qPrintable(log(slp)));
    // Right after the reload, before any new probe could run: still discovered.
    const QJsonObject after = debugEntry(slp, "disc");
    QCOMPARE(after.value("discovery").toString(), QStringLiteral("discovered"));
    QCOMPARE(after.value("upstream_model").toString(), QStringLiteral("disc-upstream"));
    QCOMPARE(after.value("last_probe").toString(), QStringLiteral("ok"));
    QCOMPARE(after.value("last_probe_at").toString(), before.value("last_probe_at").toString());
    // ... and requests are renamed at once.
    QCOMPARE(chat(slp, "disc").status, 200);
    QCOMPARE(chatModels(m_d1), QStringList{"disc-upstream"});
    QCOMPARE(chat(slp, "extra").status, 200);
    // No supervisor started afresh (it would probe at once): the next probe is recheck (5m) away.
    pumpEvents(kQuietWindowMs);
    QCOMPARE(m_d1.modelProbes(), probes);
    QCOMPARE(debugEntry(slp, "disc").value("discovery").toString(), QStringLiteral("discovered"));
    QCOMPARE(slp.stop(), 0);
}

void TestReload::discoveryRestartsWhenUrlChanges()
{
    SlpDaemon slp;
    QVERIFY2(slp.start(kHeader + kDiscovery +
                       QStringLiteral("backends:\n  - name: disc\n    url: %1\n").arg(m_d1.url())),
             qPrintable(slp.errorString()));
    QCOMPARE(waitForDiscovery(slp, "disc", "discovered", "disc-upstream")
                 .value("upstream_model")
                 .toString(),
             QStringLiteral("disc-upstream"));

    // The new upstream takes a second to answer its probe, so the fresh state is visible.
    QVERIFY(m_d2.setModelsStatus({{"delay_ms", 1000}}));
    QVERIFY2(
        reloadWith(slp,
                   kHeader + kDiscovery +
                       QStringLiteral("backends:\n  - name: disc\n    url: %1\n").arg(m_d2.url()),
                   "reload: 1 routes from"),
        qPrintable(log(slp)));
    const QJsonObject fresh = debugEntry(slp, "disc");
    QCOMPARE(fresh.value("discovery").toString(), QStringLiteral("pending"));
    QVERIFY2(!fresh.contains("upstream_model"), qPrintable(QJsonDocument(fresh).toJson()));

    const QJsonObject learned = waitForDiscovery(slp, "disc", "discovered", "disc-other");
    QVERIFY2(learned.value("upstream_model").toString() == "disc-other",
             qPrintable(QJsonDocument(learned).toJson() + log(slp)));
    QVERIFY(m_d2.modelProbes() >= 1);
    QCOMPARE(chat(slp, "disc").status, 200);
    QCOMPARE(chatModels(m_d2), QStringList{"disc-other"});
    QCOMPARE(chatModels(m_d1), QStringList{});
    QCOMPARE(slp.stop(), 0);
}

QTEST_GUILESS_MAIN(TestReload)
#include "tst_reload.moc"
