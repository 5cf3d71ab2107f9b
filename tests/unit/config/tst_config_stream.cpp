// SPDX-License-Identifier: GPL-3.0-or-later
// The per-route stream keys, stream_idle_timeout and sse_keepalive: Go durations on backends
// and editions, 0s (off) by default, never inherited by an edition, negative refused.
#include "configcheck.h"

#include <QTest>

using namespace std::chrono_literals;
using slp::Config;
using slp::ConfigError;

using namespace slp::test;

class TestConfigStream : public QObject
{
    Q_OBJECT

private slots:
    void defaultsAreOff();
    void backendValues();
    void editionsNeverInherit();
    void zeroIsOff();
    void rejects_data();
    void rejects();
    void knownKeysHint();
    void dumpLineShowsThemWhenSet();
};

namespace {

std::variant<Config, QList<ConfigError>> compile(const QByteArray &yaml)
{
    return slp::compileConfig(yaml, QStringLiteral("slp.yaml"));
}

} // namespace

void TestConfigStream::defaultsAreOff()
{
    const Config c = compileOk(kOkBackends + "editions:\n  - {suffix: -e, url: \"http://e\"}\n");
    QCOMPARE(c.routes.size(), 2);
    for (const slp::Route &r : c.routes) {
        QCOMPARE(r.streamIdleTimeout, 0ns);
        QCOMPARE(r.sseKeepalive, 0ns);
    }
    const slp::Route plain;
    QCOMPARE(plain.streamIdleTimeout, 0ns);
    QCOMPARE(plain.sseKeepalive, 0ns);
}

void TestConfigStream::backendValues()
{
    const Config c = compileOk(kOkBackends + "    stream_idle_timeout: 1.5s\n"
                                             "    sse_keepalive: 400ms\n"
                                             "  - name: b\n"
                                             "    url: http://b\n"
                                             "    stream_idle_timeout: 2m\n");
    QCOMPARE(c.routes.size(), 2);
    QCOMPARE(c.routes[0].streamIdleTimeout, 1500ms);
    QCOMPARE(c.routes[0].sseKeepalive, 400ms);
    QCOMPARE(c.routes[1].streamIdleTimeout, 2min);
    QCOMPARE(c.routes[1].sseKeepalive, 0ns);
}

void TestConfigStream::editionsNeverInherit()
{
    const Config c = compileOk(R"(
backends:
  - {name: a, url: "http://a", stream_idle_timeout: 5s, sse_keepalive: 1s}
  - {name: b, url: "http://b"}
editions:
  - {suffix: -e, url: "http://e"}
  - {suffix: -f, url: "http://f", stream_idle_timeout: 30s, sse_keepalive: 15s}
)");
    QCOMPARE(c.routes.size(), 6);
    QCOMPARE(c.routes[0].streamIdleTimeout, 5s);
    QCOMPARE(c.routes[0].sseKeepalive, 1s);
    QCOMPARE(c.routes[2].id, QStringLiteral("a-e"));
    QCOMPARE(c.routes[2].streamIdleTimeout, 0ns); // not the backend's 5s
    QCOMPARE(c.routes[2].sseKeepalive, 0ns);
    for (int i : {4, 5}) {
        QCOMPARE(c.routes[i].streamIdleTimeout, 30s);
        QCOMPARE(c.routes[i].sseKeepalive, 15s);
    }
}

void TestConfigStream::zeroIsOff()
{
    const Config c =
        compileOk(kOkBackends + "    stream_idle_timeout: 0s\n    sse_keepalive: 0ms\n");
    QCOMPARE(c.routes[0].streamIdleTimeout, 0ns);
    QCOMPARE(c.routes[0].sseKeepalive, 0ns);
}

void TestConfigStream::rejects_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("what");
    QTest::addColumn<QString>("hint");
    const QByteArray ed =
        kOkBackends + "editions:\n  - suffix: -e\n    url: http://e\n"; // entry: line 5
    QTest::newRow("idle negative")
        << kOkBackends + "    stream_idle_timeout: -1s\n"
        << 4 << "backends[0].stream_idle_timeout: -1s must be zero or more"
        << "positive duration";
    QTest::newRow("keepalive negative") << kOkBackends + "    sse_keepalive: -400ms\n"
                                        << 4 << "backends[0].sse_keepalive: -400ms must be zero"
                                        << "positive duration";
    QTest::newRow("idle no unit")
        << kOkBackends + "    stream_idle_timeout: 30\n"
        << 4 << "backends[0].stream_idle_timeout: \"30\" is not a duration: missing unit"
        << "add a unit, e.g. 30s";
    QTest::newRow("keepalive bad unit")
        << kOkBackends + "    sse_keepalive: 5x\n"
        << 4 << "backends[0].sse_keepalive: \"5x\" is not a duration"
        << "Go duration syntax";
    QTest::newRow("idle list") << kOkBackends + "    stream_idle_timeout: [1s]\n"
                               << 4 << "stream_idle_timeout must be a duration, not a list"
                               << "Go duration syntax";
    QTest::newRow("edition idle negative")
        << ed + "    stream_idle_timeout: -5s\n"
        << 7 << "editions[0].stream_idle_timeout: -5s must be zero or more"
        << "positive duration";
    QTest::newRow("edition keepalive bad")
        << ed + "    sse_keepalive: often\n"
        << 7 << "editions[0].sse_keepalive: \"often\" is not a duration"
        << "Go duration syntax";
    QTest::newRow("top-level is not a key") << kOkBackends + "stream_idle_timeout: 1s\n"
                                            << 4 << "unknown key \"stream_idle_timeout\""
                                            << "known keys: listen";
}

void TestConfigStream::rejects()
{
    QFETCH(QByteArray, yaml);
    QFETCH(int, line);
    QFETCH(QString, what);
    QFETCH(QString, hint);
    const auto result = compile(yaml);
    QVERIFY(std::holds_alternative<QList<ConfigError>>(result));
    const auto &errors = std::get<QList<ConfigError>>(result);
    QCOMPARE(errors.size(), 1);
    const ConfigError &e = errors.first();
    QVERIFY2(e.what.contains(what), qPrintable(e.toString()));
    QVERIFY2(e.hint.contains(hint), qPrintable(e.toString()));
    QCOMPARE(e.file, QStringLiteral("slp.yaml"));
    QCOMPARE(e.line, line);
    QVERIFY2(e.column > 0, qPrintable(e.toString()));
}

void TestConfigStream::knownKeysHint()
{
    const auto result = compile(kOkBackends + "    sse_keepalve: 1s\n");
    const auto &errors = std::get<QList<ConfigError>>(result);
    QCOMPARE(errors.size(), 1);
    QCOMPARE(errors[0].hint,
             QStringLiteral("did you mean \"sse_keepalive\"? known keys: name, url, "
                            "timeout, model, retry, aggregate, "
                            "stream_idle_timeout, sse_keepalive, context_length, headers"));
    const auto edResult =
        compile(kOkBackends + "editions:\n  - {suffix: -e, url: \"http://e\", stream_idle: 1s}\n");
    const auto &edErrors = std::get<QList<ConfigError>>(edResult);
    QCOMPARE(edErrors.size(), 1);
    QVERIFY2(
        edErrors[0].hint.endsWith(QStringLiteral(
            "aggregate, stream_idle_timeout, sse_keepalive, context_length, headers, apply_to")),
        qPrintable(edErrors[0].hint));
}

void TestConfigStream::dumpLineShowsThemWhenSet()
{
    const Config c = compileOk(R"(
backends:
  - {name: a, url: "http://a", model: A, stream_idle_timeout: 1s, sse_keepalive: 400ms}
  - {name: b, url: "http://b", sse_keepalive: 90s}
  - {name: c, url: "http://c"}
)");
    QCOMPARE(slp::routeDumpLine(c, 0, 1),
             QStringLiteral("a -> http://a as \"A\" stream_idle_timeout=1s sse_keepalive=400ms"));
    QCOMPARE(slp::routeDumpLine(c, 1, 1),
             QStringLiteral("b -> http://b (discovering) sse_keepalive=1m30s"));
    QCOMPARE(slp::routeDumpLine(c, 2, 1), QStringLiteral("c -> http://c (discovering)"));
}

QTEST_APPLESS_MAIN(TestConfigStream)
#include "tst_config_stream.moc"
