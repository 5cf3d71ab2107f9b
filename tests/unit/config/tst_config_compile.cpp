// SPDX-License-Identifier: GPL-3.0-or-later
#include "configcheck.h"

#include <QTemporaryDir>
#include <QTest>

using namespace std::chrono_literals;
using slp::Config;
using slp::ConfigError;
using slp::NameSource;

using namespace slp::test;

class TestConfigCompile : public QObject
{
    Q_OBJECT

private slots:
    void designNoteExample();
    void designNoteExampleFile();
    void slpExampleFile();
    void defaults();
    void topLevelValues();
    void backendFields();
    void originNormalisation_data();
    void originNormalisation();
    void nullSectionsAreAbsent();
    void routeDumpLines();
    void errorToString();
    void loadConfigFile();
};

namespace {

const QByteArray kDesignNote = R"(listen: ":8080"
log_requests: false      # true logs every forwarded request, not just failures

backends:
  - name: mistral-7b
    url: http://gllm.c2-talos:8000        # origin only; SLP forwards the request path verbatim
    timeout: 60s
  - name: mistral-small
    url: http://vllm.c2-talos:8000
    timeout: 60s
  - name: llama-70b
    url: http://gllm-2.c2-talos:8000
    timeout: 120s

editions:
  - suffix: -edited
    url: http://copydesk-{{.Name}}.c2-talos:8100   # template over backend fields: .Name, .URL
    timeout: 300s
    retry: false
    apply_to: ["*"]        # or a subset: [mistral-7b, llama-70b]
)";

void checkDesignNote(const Config &c)
{
    QCOMPARE(ids(c), QStringList({"mistral-7b", "mistral-small", "llama-70b", "mistral-7b-edited",
                                  "mistral-small-edited", "llama-70b-edited"}));
    const QStringList origins = {"http://gllm.c2-talos:8000",
                                 "http://vllm.c2-talos:8000",
                                 "http://gllm-2.c2-talos:8000",
                                 "http://copydesk-mistral-7b.c2-talos:8100",
                                 "http://copydesk-mistral-small.c2-talos:8100",
                                 "http://copydesk-llama-70b.c2-talos:8100"};
    for (int i = 0; i < 6; ++i) {
        QCOMPARE(c.routes[i].origin, origins[i]);
        QCOMPARE(c.routes[i].url, QUrl(origins[i]));
        QCOMPARE(c.routes[i].isEdition, i >= 3);
        QCOMPARE(c.routes[i].backendName, c.routes[i % 3].id);
        QCOMPARE(c.routes[i].nameSource, i < 3 ? NameSource::Discover : NameSource::Passthrough);
        QVERIFY(!c.routes[i].retry);
        QVERIFY(!c.routes[i].aggregate);
    }
    QCOMPARE(c.routes[0].timeout, 60s);
    QCOMPARE(c.routes[2].timeout, 120s);
    QCOMPARE(c.routes[2].timeoutText, QStringLiteral("120s"));
    QCOMPARE(slp::formatGoDuration(c.routes[2].timeout), QStringLiteral("2m0s"));
    QCOMPARE(c.routes[3].timeout, 300s);
    QCOMPARE(slp::formatGoDuration(c.routes[3].timeout), QStringLiteral("5m0s"));
    QCOMPARE(c.routes[0].line, 5);
    QCOMPARE(c.routes[1].line, 8);
    QCOMPARE(c.routes[2].line, 11);
    QCOMPARE(c.routes[3].line, 16);
    QCOMPARE(c.routes[5].line, 16);
    QCOMPARE(c.listen.port, quint16(8080));
    QVERIFY(!c.logRequests);
}

QString exampleFile(const char *name)
{
    return QFINDTESTDATA(QStringLiteral("../../../resources/examples/") + QLatin1String(name));
}

} // namespace

void TestConfigCompile::designNoteExample()
{
    checkDesignNote(compileOk(kDesignNote));
}

void TestConfigCompile::designNoteExampleFile()
{
    const QString path = exampleFile("design-note.yaml");
    QVERIFY2(!path.isEmpty(), "resources/examples/design-note.yaml not found");
    const auto result = slp::loadConfigFile(path);
    QVERIFY(std::holds_alternative<Config>(result));
    checkDesignNote(std::get<Config>(result));
}

void TestConfigCompile::slpExampleFile()
{
    const QString path = exampleFile("slp.yaml");
    QVERIFY2(!path.isEmpty(), "resources/examples/slp.yaml not found");
    const auto result = slp::loadConfigFile(path);
    if (const auto *errors = std::get_if<QList<ConfigError>>(&result)) {
        for (const ConfigError &e : *errors)
            qWarning().noquote() << e.toString();
        QFAIL("slp.yaml does not compile");
    }
    const Config &c = std::get<Config>(result);
    // The example shows the defaults; they must agree with the compiled-in ones.
    const Config d = compileOk("backends: [{name: a, url: http://a}]");
    QCOMPARE(c.listen.host, d.listen.host);
    QCOMPARE(c.listen.port, d.listen.port);
    QCOMPARE(c.logRequests, d.logRequests);
    QCOMPARE(c.maxBodyBytes, d.maxBodyBytes);
    QCOMPARE(c.maxHeaderBytes, d.maxHeaderBytes);
    QCOMPARE(c.headerTimeout, d.headerTimeout);
    QCOMPARE(c.idleTimeout, d.idleTimeout);
    QCOMPARE(c.maxConnections, d.maxConnections);
    QCOMPARE(c.shutdownGrace, d.shutdownGrace);
    QCOMPARE(c.upstreamTransport, d.upstreamTransport);
    QCOMPARE(c.maxUpstreamConnections, d.maxUpstreamConnections);
    QCOMPARE(c.workers, d.workers);
    QCOMPARE(c.discovery.backoffInitial, d.discovery.backoffInitial);
    QCOMPARE(c.discovery.backoffMax, d.discovery.backoffMax);
    QCOMPARE(c.discovery.recheck, d.discovery.recheck);
    QCOMPARE(ids(c), QStringList({"mistral-small-4", "llama-70b", "mistral-small-4-edited",
                                  "llama-70b-edited"}));
    QCOMPARE(c.routes[1].nameSource, NameSource::Pinned);
    QCOMPARE(c.routes[1].timeoutText, QStringLiteral("2m"));
}

void TestConfigCompile::defaults()
{
    const Config c = compileOk("backends:\n  - name: a\n    url: http://a:1\n");
    QCOMPARE(c.listen.text, QStringLiteral(":8080"));
    QCOMPARE(c.listen.host, QHostAddress(QHostAddress::Any));
    QCOMPARE(c.listen.port, quint16(8080));
    QCOMPARE(c.logRequests, false);
    QCOMPARE(c.maxBodyBytes, qint64(64) << 20);
    QCOMPARE(c.maxHeaderBytes, qint64(64) << 10);
    QCOMPARE(c.headerTimeout, 30s);
    QCOMPARE(c.idleTimeout, 120s);
    QCOMPARE(c.maxConnections, 10000);
    QCOMPARE(c.shutdownGrace, 10s);
    QCOMPARE(c.upstreamTransport, QStringLiteral("socket"));
    QCOMPARE(c.maxUpstreamConnections, 1024);
    QCOMPARE(c.workers, 1);
    QCOMPARE(c.discovery.backoffInitial, 1s);
    QCOMPARE(c.discovery.backoffMax, 30s);
    QCOMPARE(c.discovery.recheck, 5min);
    QCOMPARE(c.routes.size(), 1);
    const slp::Route &r = c.routes[0];
    QCOMPARE(r.timeout, 60s);
    QCOMPARE(r.timeoutText, QStringLiteral("60s"));
    QCOMPARE(slp::formatGoDuration(r.timeout), QStringLiteral("1m0s"));
    QVERIFY(!r.retry);
    QVERIFY(!r.aggregate);
    QCOMPARE(r.nameSource, NameSource::Discover);
    QVERIFY(r.pinnedModel.isEmpty());
    QCOMPARE(r.followsRoute, -1);
    QVERIFY(!r.modelTemplate.has_value());
    QCOMPARE(r.line, 2);
}

void TestConfigCompile::topLevelValues()
{
    const Config c = compileOk(R"(
listen: 127.0.0.1:0
log_requests: true
max_body_bytes: 1048576
max_buffered_body_bytes: 256MiB
max_header_bytes: 8KiB
header_timeout: 1.5s
idle_timeout: 90s
max_connections: 5
shutdown_grace: 0s
upstream_transport: qnam
max_upstream_connections: 6
workers: 2
discovery:
  backoff_initial: 300ms
  backoff_max: 2s
  recheck: 1h30m
backends:
  - name: a
    url: http://a
)");
    QCOMPARE(c.listen.host, QHostAddress(QStringLiteral("127.0.0.1")));
    QCOMPARE(c.listen.port, quint16(0));
    QVERIFY(c.logRequests);
    QCOMPARE(c.maxBodyBytes, qint64(1048576));
    QCOMPARE(c.maxBufferedBodyBytes, qint64(256) << 20);
    QCOMPARE(c.maxHeaderBytes, qint64(8192));
    // "auto", the default, is 0 here: the machine's memory decides at start-up.
    QCOMPARE(compileOk("max_buffered_body_bytes: auto\nbackends:\n  - name: a\n    url: http://a\n")
                 .maxBufferedBodyBytes,
             qint64(0));
    QCOMPARE(c.headerTimeout, 1500ms);
    QCOMPARE(slp::formatGoDuration(c.idleTimeout), QStringLiteral("1m30s"));
    QCOMPARE(c.maxConnections, 5);
    QCOMPARE(c.shutdownGrace, 0s);
    QCOMPARE(c.upstreamTransport, QStringLiteral("qnam"));
    QCOMPARE(c.maxUpstreamConnections, 6);
    QCOMPARE(c.workers, 2);
    QCOMPARE(slp::formatGoDuration(c.discovery.backoffInitial), QStringLiteral("300ms"));
    QCOMPARE(c.discovery.backoffMax, 2s);
    QCOMPARE(slp::formatGoDuration(c.discovery.recheck), QStringLiteral("1h30m0s"));
}

void TestConfigCompile::backendFields()
{
    const Config c = compileOk(R"(
backends:
  - name: llama-70b
    url: http://gllm-2.c2-talos:8000
    model: Llama-3.3-70B-Instruct-AWQ
    timeout: 2m
    retry: true
    aggregate: true
  - name: b
    url: https://b.example/
    timeout: 90s
    retry: false
    aggregate: False
)");
    QCOMPARE(c.routes.size(), 2);
    QCOMPARE(c.routes[0].nameSource, NameSource::Pinned);
    QCOMPARE(c.routes[0].pinnedModel, QStringLiteral("Llama-3.3-70B-Instruct-AWQ"));
    QCOMPARE(c.routes[0].timeout, 120s);
    QCOMPARE(c.routes[0].timeoutText, QStringLiteral("2m"));
    QVERIFY(c.routes[0].retry);
    QVERIFY(c.routes[0].aggregate);
    QCOMPARE(c.routes[1].nameSource, NameSource::Discover);
    QCOMPARE(c.routes[1].origin, QStringLiteral("https://b.example"));
    QCOMPARE(c.routes[1].timeoutText, QStringLiteral("90s"));
    QCOMPARE(slp::formatGoDuration(c.routes[1].timeout), QStringLiteral("1m30s"));
    QVERIFY(!c.routes[1].retry);
    QVERIFY(!c.routes[1].aggregate);
}

void TestConfigCompile::originNormalisation_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("origin");
    QTest::newRow("plain") << "http://host:8000"
                           << "http://host:8000";
    QTest::newRow("trailing slash") << "http://host:8000/"
                                    << "http://host:8000";
    QTest::newRow("no port") << "http://host"
                             << "http://host";
    QTest::newRow("default port kept") << "http://host:80"
                                       << "http://host:80";
    QTest::newRow("case") << "HTTP://Host.LAN:8000"
                          << "http://host.lan:8000";
    QTest::newRow("https") << "https://h:8443"
                           << "https://h:8443";
    QTest::newRow("ipv4") << "http://10.0.0.5:8000"
                          << "http://10.0.0.5:8000";
    QTest::newRow("ipv6") << "http://[::1]:8000"
                          << "http://[::1]:8000";
    // A Unix socket: the path as written; the file need not exist yet.
    QTest::newRow("unix") << "unix:/run/vllm/vllm.sock"
                          << "unix:/run/vllm/vllm.sock";
    QTest::newRow("unix scheme case") << "UNIX:/run/Model.sock"
                                      << "unix:/run/Model.sock";
}

void TestConfigCompile::originNormalisation()
{
    QFETCH(QString, url);
    QFETCH(QString, origin);
    const Config c = compileOk("backends:\n  - name: a\n    url: \"" + url.toUtf8() + "\"\n");
    QCOMPARE(c.routes.size(), 1);
    QCOMPARE(c.routes[0].origin, origin);
    QCOMPARE(c.routes[0].url, QUrl(origin));
}

void TestConfigCompile::nullSectionsAreAbsent()
{
    // An "editions:" or "discovery:" with everything below commented out means "none".
    const Config c = compileOk("discovery:\n#  recheck: 1m\nbackends:\n  - {name: a, url: "
                               "\"http://a\"}\neditions:\n#  - suffix: -x\n");
    QCOMPARE(c.routes.size(), 1);
    QCOMPARE(c.discovery.recheck, 5min);
}

void TestConfigCompile::routeDumpLines()
{
    const Config c = compileOk(R"(
backends:
  - name: llama-70b
    url: http://gllm-2.c2-talos:8000
    model: Llama-3.3-70B-Instruct-AWQ
  - name: mistral-small-4
    url: http://vllm.c2-talos:8000
editions:
  - {suffix: -edited, url: "http://copydesk-{{.Name}}:8100"}
  - {suffix: -json, url: "http://json:1", model: "{{.Model}}", apply_to: [mistral-small-4]}
)");
    QCOMPARE(slp::routeDumpLine(c, 0, 15),
             QStringLiteral("llama-70b       -> http://gllm-2.c2-talos:8000 as "
                            "\"Llama-3.3-70B-Instruct-AWQ\""));
    QCOMPARE(slp::routeDumpLine(c, 1, 15),
             QStringLiteral("mistral-small-4 -> http://vllm.c2-talos:8000 (discovering)"));
    QCOMPARE(slp::routeDumpLine(c, 2, 0),
             QStringLiteral("llama-70b-edited -> http://copydesk-llama-70b:8100 (passthrough)"));
    QCOMPARE(slp::routeDumpLine(c, 4, 20),
             QStringLiteral("mistral-small-4-json -> http://json:1 (follows mistral-small-4)"));
}

void TestConfigCompile::errorToString()
{
    ConfigError e{QStringLiteral("slp.yaml"), 3, 7, QStringLiteral("bad"),
                  QStringLiteral("fix it")};
    QCOMPARE(e.toString(), QStringLiteral("slp.yaml:3:7: bad (hint: fix it)"));
    e.column = 0;
    QCOMPARE(e.toString(), QStringLiteral("slp.yaml:3: bad (hint: fix it)"));
    e.line = 0;
    e.hint.clear();
    QCOMPARE(e.toString(), QStringLiteral("slp.yaml: bad"));
    e.file.clear();
    QCOMPARE(e.toString(), QStringLiteral("bad"));
    e.line = 2;
    QCOMPARE(e.toString(), QStringLiteral("line 2: bad"));
}

void TestConfigCompile::loadConfigFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString missing = dir.filePath(QStringLiteral("nope.yaml"));
    const auto r1 = slp::loadConfigFile(missing);
    QVERIFY(std::holds_alternative<QList<ConfigError>>(r1));
    const auto &errors = std::get<QList<ConfigError>>(r1);
    QCOMPARE(errors.size(), 1);
    QCOMPARE(errors[0].file, missing);
    QVERIFY(errors[0].toString().startsWith(missing + QStringLiteral(": cannot read")));

    const QString bad = dir.filePath(QStringLiteral("bad.yaml"));
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("backends:\n  - name: a\n    url: ftp://a\n");
    f.close();
    const auto r2 = slp::loadConfigFile(bad);
    QVERIFY(std::holds_alternative<QList<ConfigError>>(r2));
    const auto &e2 = std::get<QList<ConfigError>>(r2);
    QCOMPARE(e2.size(), 1);
    QCOMPARE(e2[0].file, bad);
    QCOMPARE(e2[0].line, 3);
    QVERIFY(e2[0].toString().startsWith(bad + QStringLiteral(":3:10: ")));
}

QTEST_APPLESS_MAIN(TestConfigCompile)
#include "tst_config_compile.moc"
