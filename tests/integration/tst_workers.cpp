// SPDX-License-Identifier: GPL-3.0-or-later
// `workers: N` through the real slp: N event-loop threads, each with its own SO_REUSEPORT
// listener, front, router and upstream pools, sharing one port. The kernel spreads new
// connections over them; what one thread learns or loads (discovery, SIGHUP) must hold on
// every thread; the metrics stay one set; a drain finishes streams on every thread; and a
// second slp on the same port is refused, as it is without workers, instead of silently
// joining the port group and taking half the traffic.
#include "testsupport.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QtTest>

#include <csignal>
#include <memory>
#include <vector>

using namespace slp::test;

namespace {

constexpr int kSettleMs = 8000;
// Fresh connections per check: with two workers the chance that the kernel's hash sends all
// of them to one thread is 2^-31.
constexpr int kConnections = 32;

const QString kDiscovery = QStringLiteral("discovery:\n"
                                          "  backoff_initial: 100ms\n"
                                          "  backoff_max: 200ms\n"
                                          "  recheck: 200ms\n"
                                          "  probe_timeout: 2s\n");

QByteArray chatBody(const QString &model, bool stream = false)
{
    return QStringLiteral(R"({"model":"%1",%2"messages":[{"role":"user","content":"hi"}]})")
        .arg(model, stream ? QStringLiteral(R"("stream":true,)") : QString())
        .toUtf8();
}

// One request on a connection of its own (httpRequest sends Connection: close).
HttpResult chat(SlpDaemon &slp, const QString &model)
{
    return httpRequest("POST", slp.url() + "/v1/chat/completions", chatBody(model),
                       {{"Content-Type", "application/json"}});
}

// The value of one sample line of /metrics (`name{labels} value`), or -1.
double metric(SlpDaemon &slp, const QString &sample)
{
    const HttpResult r = httpRequest("GET", slp.url() + "/metrics");
    for (const QByteArray &line : r.body.split('\n'))
        if (line.startsWith(sample.toUtf8() + ' '))
            return line.mid(sample.size() + 1).toDouble();
    return -1;
}

QString upstreamName(SlpDaemon &slp, const QString &id)
{
    const HttpResult r = httpRequest("GET", slp.url() + "/v1/models?debug");
    for (const QJsonValue &v : jsonObject(r.body).value("data").toArray())
        if (v.toObject().value("id").toString() == id)
            return v.toObject().value("upstream_model").toString();
    return {};
}

QStringList threadNames(qint64 pid)
{
    QStringList names;
    const QDir tasks(QStringLiteral("/proc/%1/task").arg(pid));
    for (const QString &tid : tasks.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile comm(tasks.filePath(tid + QStringLiteral("/comm")));
        if (comm.open(QIODevice::ReadOnly))
            names << QString::fromUtf8(comm.readAll().trimmed());
    }
    return names;
}

QRegularExpression containing(const QString &text)
{
    return QRegularExpression(QRegularExpression::escape(text));
}

QString pinned(const QString &name, const QString &url, const QString &model)
{
    return QStringLiteral("  - name: %1\n    url: %2\n    model: %3\n    timeout: 10s\n")
        .arg(name, url, model);
}

} // namespace

class TestWorkers : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void connectionsSpreadOverWorkers_data();
    void connectionsSpreadOverWorkers();
    void discoveredNameReachesEveryWorker();
    void reloadReachesEveryWorker();
    void drainFinishesStreamsOnEveryWorker();
    void secondInstanceCannotJoinThePort();

private:
    QString log(SlpDaemon &slp) { return slp.stderrText().right(4000); }

    MockUpstream m_any;  // serves any model
    MockUpstream m_disc; // serves one model, which the tests change
};

void TestWorkers::initTestCase()
{
    QVERIFY2(!MockUpstream::binary().isEmpty(), "set SLP_MOCK_BIN");
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY2(m_any.start(), qPrintable(m_any.errorString()));
    QVERIFY2(m_disc.start({"disc-a"}), qPrintable(m_disc.errorString()));
}

void TestWorkers::cleanupTestCase()
{
    m_any.stop();
    m_disc.stop();
}

void TestWorkers::init()
{
    QVERIFY(m_any.reset());
    QVERIFY(m_disc.reset());
    QVERIFY(m_disc.setModels({"disc-a"}));
}

void TestWorkers::connectionsSpreadOverWorkers_data()
{
    QTest::addColumn<QString>("transport");
    QTest::newRow("qnam") << QStringLiteral("qnam");
    QTest::newRow("socket") << QStringLiteral("socket");
}

void TestWorkers::connectionsSpreadOverWorkers()
{
    QFETCH(QString, transport);
    SlpDaemon slp;
    QVERIFY2(
        slp.start(QStringLiteral("workers: 2\nupstream_transport: %1\nbackends:\n").arg(transport) +
                  pinned("w", m_any.url(), "w-up")),
        qPrintable(slp.errorString()));
    QVERIFY2(slp.waitForLog(containing("2 worker threads share the port")).hasMatch(),
             qPrintable(log(slp)));
    QVERIFY2(threadNames(slp.process().pid()).contains("slp-worker-1"),
             qPrintable(threadNames(slp.process().pid()).join(' ')));

    for (int i = 0; i < kConnections; ++i) {
        const HttpResult r = chat(slp, "w");
        QVERIFY2(r.ok() && r.status == 200, qPrintable(r.error + "\n" + log(slp)));
        QCOMPARE(jsonObject(r.body).value("model").toString(), QStringLiteral("w-up"));
    }
    // Both threads took connections, and the counters of both add up in one registry.
    const double first =
        metric(slp, QStringLiteral("slp_accepted_connections_total{worker=\"0\"}"));
    const double second =
        metric(slp, QStringLiteral("slp_accepted_connections_total{worker=\"1\"}"));
    QVERIFY2(first > 0 && second > 0, qPrintable(QStringLiteral("%1 / %2").arg(first).arg(second)));
    QVERIFY2(first + second >= kConnections,
             qPrintable(QStringLiteral("%1 + %2").arg(first).arg(second)));
    QCOMPARE(metric(slp, QStringLiteral("slp_requests_total{model_id=\"w\",code=\"200\"}")),
             double(kConnections));
    // Only the /metrics request itself is open: the gauge is the sum over threads. A client's
    // close reaches its thread a moment after the client returned, so let it settle (bounded).
    QCOMPARE(slp.settledClientConnections([](int open) { return open == 1; }, 5000), 1);
    QCOMPARE(metric(slp, QStringLiteral("slp_inflight_requests")), 0.0);
    QCOMPARE(slp.stop(), 0);
}

void TestWorkers::discoveredNameReachesEveryWorker()
{
    SlpDaemon slp;
    QVERIFY2(slp.start(QStringLiteral("workers: 2\n") + kDiscovery +
                       "backends:\n  - name: d\n    url: " + m_disc.url() + "\n    timeout: 10s\n"),
             qPrintable(slp.errorString()));
    QVERIFY2(slp.waitForLog(containing("backend serves \"disc-a\""), kSettleMs).hasMatch(),
             qPrintable(log(slp)));
    // The mock answers 404 to any model but the one it serves: every 200 is a renamed request.
    for (int i = 0; i < kConnections; ++i) {
        const HttpResult r = chat(slp, "d");
        QVERIFY2(r.status == 200, qPrintable(QString::number(r.status) + " " + r.body));
        QCOMPARE(upstreamName(slp, "d"), QStringLiteral("disc-a"));
    }

    // The backend swaps its model: the next probe's name holds on every thread.
    const ChildProcess::Mark from = slp.mark();
    QVERIFY(m_disc.setModels({"disc-b"}));
    QVERIFY2(slp.waitForLog(containing("changed from \"disc-a\" to \"disc-b\""), kSettleMs, from)
                 .hasMatch(),
             qPrintable(log(slp)));
    for (int i = 0; i < kConnections; ++i) {
        const HttpResult r = chat(slp, "d");
        QVERIFY2(r.status == 200, qPrintable(QString::number(r.status) + " " + r.body));
        QCOMPARE(jsonObject(r.body).value("model").toString(), QStringLiteral("disc-b"));
        QCOMPARE(upstreamName(slp, "d"), QStringLiteral("disc-b"));
    }
    QCOMPARE(slp.stop(), 0);
}

void TestWorkers::reloadReachesEveryWorker()
{
    SlpDaemon slp;
    QVERIFY2(
        slp.start(QStringLiteral("workers: 2\nbackends:\n") + pinned("old", m_any.url(), "old-up")),
        qPrintable(slp.errorString()));
    QCOMPARE(chat(slp, "old").status, 200);

    // The new file also asks for 3 workers: that needs a restart, and is said so.
    const ChildProcess::Mark from = slp.mark();
    QVERIFY(slp.writeConfig(QStringLiteral("workers: 3\nbackends:\n") +
                            pinned("new", m_any.url(), "new-up")));
    QVERIFY(slp.reload());
    QVERIFY2(slp.waitForLog(containing("reload: 1 routes from"), kSettleMs, from).hasMatch(),
             qPrintable(log(slp)));
    QVERIFY2(slp.countLog(containing("workers and max_connections change on restart only"), from) ==
                 1,
             qPrintable(log(slp)));
    // The log line is written once every thread has the new table: no request after it may
    // meet the old one, whichever thread it lands on.
    for (int i = 0; i < kConnections; ++i) {
        const HttpResult fresh = chat(slp, "new");
        QVERIFY2(fresh.status == 200, qPrintable(QString::number(fresh.status) + " " + fresh.body));
        QCOMPARE(jsonObject(fresh.body).value("model").toString(), QStringLiteral("new-up"));
        QCOMPARE(chat(slp, "old").status, 404);
    }
    QCOMPARE(metric(slp, QStringLiteral("slp_accepted_connections_total{worker=\"2\"}")), -1.0);
    QCOMPARE(slp.stop(), 0);
}

void TestWorkers::drainFinishesStreamsOnEveryWorker()
{
    SlpDaemon slp;
    QVERIFY2(slp.start(QStringLiteral("workers: 2\nshutdown_grace: 10s\nbackends:\n") +
                       pinned("s", m_any.url(), "s-up")),
             qPrintable(slp.errorString()));
    // Slow streams on connections of their own (about 1.2 s each), so both threads hold some.
    std::vector<std::unique_ptr<RawConnection>> streams;
    for (int i = 0; i < 12; ++i) {
        auto c = std::make_unique<RawConnection>();
        QVERIFY(c->connectTo(slp.host(), slp.port()));
        QVERIFY(
            c->send(buildRequest("POST", slp.url() + "/v1/chat/completions", chatBody("s", true),
                                 {{"Content-Type", "application/json"},
                                  {"X-Mock-Events", "8"},
                                  {"X-Mock-Event-Interval-Ms", "150"}})));
        streams.push_back(std::move(c));
    }
    for (auto &c : streams)
        QVERIFY2(c->waitForData("data:", 5000), qPrintable(log(slp)));
    QVERIFY(metric(slp, QStringLiteral("slp_accepted_connections_total{worker=\"0\"}")) > 0);
    QVERIFY(metric(slp, QStringLiteral("slp_accepted_connections_total{worker=\"1\"}")) > 0);

    QVERIFY(slp.process().sendSignal(SIGTERM));
    for (auto &c : streams) {
        const HttpResult r = c->readResponse(15000);
        QVERIFY2(r.ok() && r.status == 200, qPrintable(r.error + "\n" + log(slp)));
        QCOMPARE(sseData(r.body).last(), QByteArray("[DONE]"));
        QVERIFY(c->waitForClosed(5000)); // answered with Connection: close, or closed after
    }
    QVERIFY(slp.process().waitForExit(8000));
    QCOMPARE(slp.process().exitCode(), 0);
    QVERIFY2(slp.stderrText().contains("drained; exiting"), qPrintable(log(slp)));
}

void TestWorkers::secondInstanceCannotJoinThePort()
{
    SlpDaemon first;
    QVERIFY2(
        first.start(QStringLiteral("workers: 2\nbackends:\n") + pinned("w", m_any.url(), "w-up")),
        qPrintable(first.errorString()));
    const QString address = QStringLiteral("127.0.0.1:%1").arg(first.port());

    for (const int workers : {2, 1}) {
        SlpDaemon second;
        QVERIFY(!second.start(
            QStringLiteral("workers: %1\nlisten: \"%2\"\nbackends:\n").arg(workers).arg(address) +
                pinned("w", m_any.url(), "w-up"),
            {}, {}, 10000, false));
        QVERIFY(second.process().waitForExit(5000));
        QCOMPARE(second.process().exitCode(), 1);
        QVERIFY2(second.stderrText().contains("cannot listen on " + address),
                 qPrintable(second.stderrText()));
        QVERIFY2(second.stderrText().contains("already in use"), qPrintable(second.stderrText()));
    }
    // Every connection still reaches the first slp.
    for (int i = 0; i < kConnections; ++i)
        QCOMPARE(chat(first, "w").status, 200);
    QCOMPARE(metric(first, QStringLiteral("slp_requests_total{model_id=\"w\",code=\"200\"}")),
             double(kConnections));
    QCOMPARE(first.stop(), 0);
}

QTEST_GUILESS_MAIN(TestWorkers)
#include "tst_workers.moc"
