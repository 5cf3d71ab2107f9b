// SPDX-License-Identifier: GPL-3.0-or-later
// planReload: what a SIGHUP keeps, restarts and refuses, without a daemon. The integration
// side (the log lines, probes really kept) is tst_reload.
#include "app/reloadplan.h"

#include <QTest>

using namespace slp;

namespace {
Config compile(const QByteArray &yaml)
{
    ConfigResult result = compileConfig(yaml, QStringLiteral("test.yaml"));
    if (auto *errors = std::get_if<QList<ConfigError>>(&result))
        qFatal("config does not compile: %s", qPrintable(errors->first().toString()));
    return std::get<Config>(std::move(result));
}

const QByteArray kBase = R"(listen: "127.0.0.1:8080"
backends:
  - name: a
    url: http://a.lan:8000
  - name: b
    url: http://b.lan:8000
  - name: c
    url: http://c.lan:8000
    model: C-pinned
)";
} // namespace

class TestReloadPlan : public QObject
{
    Q_OBJECT
private slots:
    void unchangedKeepsEverySupervisor();
    void urlChangeRestartsThatOne();
    void scheduleChangeRestartsAll();
    void goneAndPinnedRoutes();
    void newBackendIsProbed();
    void restartOnlyKeysStayAsRunning();
};

void TestReloadPlan::unchangedKeepsEverySupervisor()
{
    const Config running = compile(kBase);
    const ReloadPlan plan = planReload(running, compile(kBase), {"a", "b"});
    QCOMPARE(plan.keptSupervisors.size(), 2);
    QCOMPARE(plan.keptSupervisors.value("a"), 0);
    QCOMPARE(plan.keptSupervisors.value("b"), 1);
    QVERIFY(plan.newSupervisors.isEmpty());
    QVERIFY(plan.goneRoutes.isEmpty());
    QVERIFY(plan.unprobedRoutes.isEmpty());
    QVERIFY(plan.warnings.isEmpty());
}

void TestReloadPlan::urlChangeRestartsThatOne()
{
    const Config running = compile(kBase);
    QByteArray next = kBase;
    next.replace("http://b.lan:8000", "http://b2.lan:8000");
    const ReloadPlan plan = planReload(running, compile(next), {"a", "b"});
    QCOMPARE(plan.keptSupervisors.keys(), QList<QString>{"a"});
    QCOMPARE(plan.newSupervisors, QList<qsizetype>{1});
}

void TestReloadPlan::scheduleChangeRestartsAll()
{
    const Config running = compile(kBase);
    const ReloadPlan plan =
        planReload(running, compile("discovery:\n  recheck: 1m\n" + kBase), {"a", "b"});
    QVERIFY(plan.keptSupervisors.isEmpty());
    QCOMPARE(plan.newSupervisors, (QList<qsizetype>{0, 1}));
}

void TestReloadPlan::goneAndPinnedRoutes()
{
    const Config running = compile(kBase);
    const QByteArray next = R"(listen: "127.0.0.1:8080"
backends:
  - name: b
    url: http://b.lan:8000
    model: B-pinned
  - name: c
    url: http://c.lan:8000
    model: C-pinned
)";
    const ReloadPlan plan = planReload(running, compile(next), {"a", "b"});
    QCOMPARE(plan.goneRoutes, QStringList{"a"});
    QCOMPARE(plan.unprobedRoutes, (QStringList{"a", "b"}));
    QVERIFY(plan.keptSupervisors.isEmpty());
    QVERIFY(plan.newSupervisors.isEmpty());
}

void TestReloadPlan::newBackendIsProbed()
{
    const Config running = compile(kBase);
    const ReloadPlan plan = planReload(
        running, compile(kBase + "  - name: d\n    url: http://d.lan:8000\n"), {"a", "b"});
    QCOMPARE(plan.keptSupervisors.size(), 2);
    QCOMPARE(plan.newSupervisors, QList<qsizetype>{3});
}

void TestReloadPlan::restartOnlyKeysStayAsRunning()
{
    const Config running = compile(kBase);
    QByteArray next = kBase;
    next.replace("127.0.0.1:8080", "127.0.0.1:9090");
    next = "workers: 2\nupstream_transport: qnam\nmax_connections: 5\n" + next;
    const ReloadPlan plan = planReload(running, compile(next), {});
    QCOMPARE(plan.config.listen.text, running.listen.text);
    QCOMPARE(plan.config.workers, running.workers);
    QCOMPARE(plan.config.upstreamTransport, running.upstreamTransport);
    QCOMPARE(plan.config.maxConnections, running.maxConnections);
    QCOMPARE(plan.warnings.size(), 3);
    QVERIFY(plan.warnings.first().contains("127.0.0.1:9090"));
}

QTEST_APPLESS_MAIN(TestReloadPlan)
#include "tst_reload_plan.moc"
