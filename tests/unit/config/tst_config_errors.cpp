// SPDX-License-Identifier: GPL-3.0-or-later
#include "configcheck.h"

#include <QTest>

using slp::Config;
using slp::ConfigError;

using namespace slp::test;

class TestConfigErrors : public QObject
{
    Q_OBJECT

private slots:
    void rejects_data();
    void rejects();
};

void TestConfigErrors::rejects_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<int>("line"); // the (only) error's line; 0 = unknown
    QTest::addColumn<QString>("what");
    QTest::addColumn<QString>("hint");

    // Document shape
    QTest::newRow("malformed yaml")
        << QByteArray("backends: [a\nlisten: x\n") << 2 << "YAML syntax error"
        << "indentation";
    QTest::newRow("empty document") << QByteArray("# nothing\n") << 0 << "the config is empty"
                                    << "backends:";
    QTest::newRow("not a mapping (list)") << QByteArray("- a\n- b\n") << 1 << "must be a mapping"
                                          << "backends:";
    QTest::newRow("not a mapping (scalar)") << QByteArray("\nhello\n") << 2 << "must be a mapping"
                                            << "backends:";
    QTest::newRow("two documents") << kOkBackends + "---\nlisten: \":1\"\n"
                                   << 5 << "more than one"
                                   << "---";

    // Unknown and duplicate keys
    QTest::newRow("unknown top key") << kOkBackends + "lisen: \":80\"\n"
                                     << 4 << "unknown key \"lisen\""
                                     << "did you mean \"listen\"";
    QTest::newRow("unknown backend key")
        << QByteArray("backends:\n  - name: a\n    url: http://a\n    timout: 5s\n") << 4
        << "unknown key \"backends[0].timout\""
        << "did you mean \"timeout\"";
    QTest::newRow("unknown edition key")
        << kOkBackends + "editions:\n  - suffix: -e\n    url: http://e\n    applyto: [a]\n"
        << 7 << "unknown key \"editions[0].applyto\""
        << "did you mean \"apply_to\"";
    QTest::newRow("unknown discovery key") << kOkBackends + "discovery:\n  rechek: 1m\n"
                                           << 5 << "unknown key \"discovery.rechek\""
                                           << "did you mean \"recheck\"";
    QTest::newRow("unknown key no guess") << kOkBackends + "frobnicate: 1\n"
                                          << 4 << "unknown key \"frobnicate\""
                                          << "known keys: listen";
    QTest::newRow("duplicate key") << kOkBackends + "listen: \":1\"\nlisten: \":2\"\n"
                                   << 5 << "duplicate key \"listen\""
                                   << "once";

    // Backends list
    QTest::newRow("no backends key")
        << QByteArray("listen: \":80\"\n") << 0 << "no backends: SLP would serve nothing"
        << "backends:";
    QTest::newRow("empty backends") << QByteArray("listen: \":80\"\nbackends: []\n") << 2
                                    << "no backends: SLP would serve nothing"
                                    << "backends:";
    QTest::newRow("null backends")
        << QByteArray("backends:\n") << 1 << "no backends: SLP would serve nothing"
        << "backends:";
    QTest::newRow("backends not a list")
        << QByteArray("backends:\n  name: a\n") << 2 << "backends must be a list"
        << "- name:";
    QTest::newRow("backend not a mapping")
        << QByteArray("backends:\n  - a\n") << 2 << "backends[0] must be a mapping"
        << "name:";

    // Backend fields
    QTest::newRow("missing name") << QByteArray("backends:\n  - url: http://a\n") << 2
                                  << "backends[0] has no name"
                                  << "name: ID";
    QTest::newRow("empty name") << QByteArray("backends:\n  - name: \"\"\n    url: http://a\n") << 2
                                << "backends[0].name is empty"
                                << "model id";
    QTest::newRow("null name") << QByteArray("backends:\n  - name:\n    url: http://a\n") << 2
                               << "backends[0].name is empty"
                               << "give a value";
    QTest::newRow("name with space")
        << QByteArray("backends:\n  - name: \"my model\"\n    url: http://a\n") << 2
        << "contains whitespace"
        << "remove the spaces";
    QTest::newRow("name is a list") << QByteArray("backends:\n  - name: [a]\n    url: http://a\n")
                                    << 2 << "backends[0].name must be a string"
                                    << "single value";
    QTest::newRow("missing url") << QByteArray("backends:\n  - name: a\n") << 2
                                 << "backends[0] has no url"
                                 << "origin";
    QTest::newRow("empty pin") << kOkBackends + "    model: \"\"\n"
                               << 4 << "backends[0].model is empty"
                               << "remove model:";

    // URLs
    const auto withUrl = [](const char *url) {
        return QByteArray("backends:\n  - name: a\n    url: ") + url + "\n";
    };
    QTest::newRow("url ftp") << withUrl("ftp://a:21") << 3
                             << "must start with http://, https:// or unix:/"
                             << "http://host:8000";
    QTest::newRow("url no scheme")
        << withUrl("vllm.lan:8000") << 3 << "must start with http://, https:// or unix:/"
        << "origin only";
    QTest::newRow("url empty") << withUrl("\"\"") << 3 << "the URL is empty"
                               << "origin only";
    QTest::newRow("url no host") << withUrl("http://") << 3 << "no host"
                                 << "origin only";
    QTest::newRow("url userinfo") << withUrl("http://user:pw@a:8000") << 3 << "user info"
                                  << "credentials";
    QTest::newRow("unix relative") << withUrl("unix:run/vllm.sock") << 3 << "not absolute"
                                   << "unix:/run/vllm/vllm.sock";
    QTest::newRow("unix host form") << withUrl("unix:///run/vllm.sock") << 3 << "not \"//host\""
                                    << "absolute path";
    QTest::newRow("unix query") << withUrl("unix:/run/vllm.sock?x=1") << 3 << "query or fragment"
                                << "absolute path";
    QTest::newRow("unix fragment")
        << withUrl("\"unix:/run/vllm.sock#a\"") << 3 << "query or fragment"
        << "absolute path";
    QTest::newRow("unix directory") << withUrl("unix:/run/vllm/") << 3 << "names a directory"
                                    << "absolute path";
    QTest::newRow("unix too long")
        << withUrl(("unix:/" + QByteArray(107, 'a')).constData()) << 3 << "longer than 107 bytes"
        << "absolute path";
    QTest::newRow("unix empty") << withUrl("\"unix:\"") << 3 << "not absolute"
                                << "absolute path";
    QTest::newRow("unix under qnam")
        << QByteArray(
               "upstream_transport: qnam\nbackends:\n  - name: a\n    url: unix:/run/v.sock\n")
        << 3 << "backend \"a\": url \"unix:/run/v.sock\" needs upstream_transport: socket"
        << "remove \"upstream_transport: qnam\"";
    QTest::newRow("url query") << withUrl("http://a:8000/?x=1") << 3 << "query or fragment"
                               << "forwarded verbatim";
    QTest::newRow("url fragment") << withUrl("http://a:8000#frag") << 3 << "query or fragment"
                                  << "forwarded verbatim";
    QTest::newRow("url path")
        << withUrl("http://a:8000/v1") << 3 << "has a path (\"/v1\")"
        << "the request path is forwarded verbatim; give the origin only, e.g. http://host:8000";
    QTest::newRow("url bad port") << withUrl("http://a:99999") << 3 << "not a valid URL"
                                  << "origin only";
    QTest::newRow("url space") << withUrl("\"http://a b\"") << 3 << "whitespace"
                               << "origin only";
    QTest::newRow("url list") << withUrl("[http://a]") << 3 << "must be a string"
                              << "single value";

    // Durations
    QTest::newRow("timeout unknown unit") << kOkBackends + "    timeout: 5x\n"
                                          << 4 << "backends[0].timeout: \"5x\" is not a duration"
                                          << "Go duration syntax";
    QTest::newRow("timeout no unit") << kOkBackends + "    timeout: 60\n"
                                     << 4 << "missing unit"
                                     << "add a unit, e.g. 60s";
    QTest::newRow("timeout list") << kOkBackends + "    timeout: [1]\n"
                                  << 4 << "backends[0].timeout must be a duration, not a list"
                                  << "Go duration syntax";
    QTest::newRow("timeout zero") << kOkBackends + "    timeout: 0s\n"
                                  << 4 << "must be positive"
                                  << "positive duration";
    QTest::newRow("timeout negative") << kOkBackends + "    timeout: -5s\n"
                                      << 4 << "must be positive"
                                      << "positive duration";
    QTest::newRow("header_timeout bad") << kOkBackends + "header_timeout: 30 s\n"
                                        << 4 << "header_timeout: \"30 s\" is not a duration"
                                        << "Go duration syntax";
    QTest::newRow("shutdown_grace negative") << kOkBackends + "shutdown_grace: -1s\n"
                                             << 4 << "must be zero or more"
                                             << "positive";
    QTest::newRow("discovery bad")
        << kOkBackends + "discovery:\n  backoff_initial: 1d\n"
        << 5 << "discovery.backoff_initial: \"1d\" is not a duration: unknown unit \"d\""
        << "Go duration syntax";
    QTest::newRow("backoff_max below initial")
        << kOkBackends + "discovery:\n  backoff_initial: 10s\n  backoff_max: 5s\n"
        << 6 << "backoff_max (5s) is less than discovery.backoff_initial (10s)"
        << "at least";
    QTest::newRow("discovery not a mapping") << kOkBackends + "discovery: 5m\n"
                                             << 4 << "discovery must be a mapping"
                                             << "recheck";

    // Booleans
    QTest::newRow("retry quoted yes") << kOkBackends + "    retry: \"yes\"\n"
                                      << 4 << "backends[0].retry: \"yes\" is not a boolean"
                                      << "use true or false";
    QTest::newRow("retry plain yes") << kOkBackends + "    retry: yes\n"
                                     << 4 << "is not a boolean"
                                     << "use true or false";
    QTest::newRow("retry quoted true") << kOkBackends + "    retry: \"true\"\n"
                                       << 4 << "is not a boolean"
                                       << "without quotes";
    QTest::newRow("aggregate number") << kOkBackends + "    aggregate: 1\n"
                                      << 4 << "is not a boolean"
                                      << "use true or false";
    QTest::newRow("log_requests list") << kOkBackends + "log_requests: [true]\n"
                                       << 4 << "log_requests must be true or false"
                                       << "true or false";

    // Sizes and numbers
    QTest::newRow("bad size") << kOkBackends + "max_body_bytes: 64M\n"
                              << 4 << "max_body_bytes: \"64M\" is not a size"
                              << "64MiB";
    QTest::newRow("bad buffered size") << kOkBackends + "max_buffered_body_bytes: lots\n"
                                       << 4 << "max_buffered_body_bytes: \"lots\" is not a size"
                                       << "64MiB";
    QTest::newRow("zero size") << kOkBackends + "max_header_bytes: 0\n"
                               << 4 << "more than 0 bytes"
                               << "KiB";
    QTest::newRow("max_connections text") << kOkBackends + "max_connections: many\n"
                                          << 4 << "not a whole number"
                                          << "without quotes";
    QTest::newRow("max_connections quoted") << kOkBackends + "max_connections: \"100\"\n"
                                            << 4 << "must be a whole number"
                                            << "without quotes";
    QTest::newRow("max_connections zero") << kOkBackends + "max_connections: 0\n"
                                          << 4 << "out of range"
                                          << "positive";
    QTest::newRow("max_upstream_connections 5") << kOkBackends + "max_upstream_connections: 5\n"
                                                << 4 << "out of range (6 to"
                                                << "at least 6";
    QTest::newRow("upstream_transport typo") << kOkBackends + "upstream_transport: sockt\n"
                                             << 4 << "unknown transport \"sockt\""
                                             << "did you mean \"socket\"";
    QTest::newRow("upstream_transport other") << kOkBackends + "upstream_transport: curl\n"
                                              << 4 << "unknown transport"
                                              << "qnam or socket";
    QTest::newRow("workers zero") << kOkBackends + "workers: 0\n"
                                  << 4 << "workers: 0 is out of range (1 to 64)"
                                  << "number of cores";
    QTest::newRow("workers too many") << kOkBackends + "workers: 1000\n"
                                      << 4 << "out of range (1 to 64)"
                                      << "number of cores";
    QTest::newRow("workers not a number") << kOkBackends + "workers: auto\n"
                                          << 4 << "workers: \"auto\" is not a whole number"
                                          << "write a number";

    // listen
    QTest::newRow("listen port only") << kOkBackends + "listen: 8080\n"
                                      << 4 << "missing port"
                                      << "\":8080\"";
    QTest::newRow("listen unclosed") << kOkBackends + "listen: \"[::1\"\n"
                                     << 4 << "listen: missing \"]\""
                                     << "[::1]:8080";
    QTest::newRow("listen bad port") << kOkBackends + "listen: \":http\"\n"
                                     << 4 << "invalid port"
                                     << "127.0.0.1:8080";
    QTest::newRow("listen empty host port") << kOkBackends + "listen: \"host:\"\n"
                                            << 4 << "missing port"
                                            << "\":8080\"";

    // Editions
    const QByteArray ed = kOkBackends + "editions:\n  - suffix: -e\n"; // edition entry at line 5
    QTest::newRow("editions not a list") << kOkBackends + "editions: {suffix: -e}\n"
                                         << 4 << "editions must be a list"
                                         << "- suffix:";
    QTest::newRow("edition not a mapping") << kOkBackends + "editions:\n  - -e\n"
                                           << 5 << "editions[0] must be a mapping"
                                           << "suffix:";
    QTest::newRow("edition missing suffix") << kOkBackends + "editions:\n  - url: http://e\n"
                                            << 5 << "editions[0] has no suffix"
                                            << "suffix:";
    QTest::newRow("edition empty suffix")
        << kOkBackends + "editions:\n  - suffix: \"\"\n    url: http://e\n"
        << 5 << "suffix is empty"
        << "-edited";
    QTest::newRow("edition missing url") << ed << 5 << "editions[0] has no url"
                                         << "{{.Name}}";
    QTest::newRow("edition retry true")
        << ed + "    url: http://e\n    retry: true\n"
        << 7
        << "editions[0]: retry: true on an edition is not allowed: a retry re-runs the edition's "
           "filter"
        << "remove retry:";
    QTest::newRow("edition retry bad type") << ed + "    url: http://e\n    retry: \"no\"\n"
                                            << 7 << "is not a boolean"
                                            << "without quotes";
    QTest::newRow("edition timeout bad") << ed + "    url: http://e\n    timeout: 5\n"
                                         << 7 << "editions[0].timeout"
                                         << "add a unit";
    QTest::newRow("apply_to unknown")
        << ed + "    url: http://e\n    apply_to:\n      - a\n      - b\n"
        << 9 << "editions[0].apply_to[1]: unknown backend \"b\""
        << "known backends: a";
    QTest::newRow("apply_to typo") << ed + "    url: http://e\n    apply_to: [aa]\n"
                                   << 7 << "unknown backend \"aa\""
                                   << "did you mean \"a\"";
    QTest::newRow("apply_to scalar") << ed + "    url: http://e\n    apply_to: a\n"
                                     << 7 << "apply_to must be a list"
                                     << "[\"*\"]";
    QTest::newRow("apply_to empty") << ed + "    url: http://e\n    apply_to: []\n"
                                    << 7 << "applies to no backend"
                                    << "remove the edition";
    QTest::newRow("apply_to twice") << ed + "    url: http://e\n    apply_to: [a, a]\n"
                                    << 7 << "backend \"a\" is listed twice"
                                    << "once";

    // Templates
    QTest::newRow("url unknown field") << ed + "    url: http://{{.Foo}}\n"
                                       << 6 << "unknown field .Foo"
                                       << ".Name, .URL";
    QTest::newRow("url uses .Model") << ed + "    url: http://{{.Model}}\n"
                                     << 6 << "unknown field .Model"
                                     << ".Model is only available in an edition's model:";
    QTest::newRow("url bad syntax") << ed + "    url: http://{{Name}}\n"
                                    << 6 << "unsupported action"
                                    << "{{.Field}}";
    QTest::newRow("url unterminated") << ed + "    url: http://{{.Name\n"
                                      << 6 << "unclosed action"
                                      << "{{.Field}}";
    QTest::newRow("url renders no scheme") << ed + "    url: \"{{.Name}}:8100\"\n"
                                           << 6 << "template renders \"a:8100\" for backend \"a\""
                                           << "http://host:8000";
    QTest::newRow("url renders scheme twice") << ed + "    url: \"http://{{.URL}}\"\n"
                                              << 6 << "has \"://\" twice"
                                              << "{{.URL}} already";
    QTest::newRow("url field typo") << ed + "    url: http://{{.Nam}}\n"
                                    << 6 << "unknown field .Nam"
                                    << "did you mean {{.Name}}?";
    QTest::newRow("suffix with space")
        << kOkBackends + "editions:\n  - suffix: \" x\"\n    url: http://e\n"
        << 5 << "contains whitespace"
        << "remove the spaces";
    QTest::newRow("url renders a path") << ed + "    url: \"{{.URL}}/{{.Name}}\"\n"
                                        << 6 << "renders \"http://a:8000/a\""
                                        << "forwarded verbatim";
    QTest::newRow("url empty template") << ed + "    url: \"\"\n"
                                        << 6 << "url is empty"
                                        << "URL template";
    QTest::newRow("model unknown field") << ed + "    url: http://e\n    model: \"{{.Foo}}\"\n"
                                         << 7 << "unknown field .Foo"
                                         << ".Name, .URL, .Model";
    QTest::newRow("model empty") << ed + "    url: http://e\n    model: \"\"\n"
                                 << 7 << "editions[0].model is empty"
                                 << "remove model:";

    // Duplicates after expansion (the later definition is reported, naming the earlier)
    QTest::newRow("duplicate backend")
        << kOkBackends + "  - name: a\n    url: http://b\n"
        << 4 << "duplicate model id \"a\" (line 4; first defined at line 2)"
        << "own name";
    QTest::newRow("edition collides with backend")
        << kOkBackends +
               "  - name: a-e\n    url: http://b\neditions:\n  - suffix: -e\n    url: http://e\n"
        << 7 << "duplicate model id \"a-e\" (line 7; first defined at line 4)"
        << "narrow apply_to";
    QTest::newRow("two editions same suffix")
        << ed + "    url: http://e\n  - suffix: -e\n    url: http://f\n"
        << 7 << "duplicate model id \"a-e\" (line 7; first defined at line 5 by an edition)"
        << "change the suffix";
}

void TestConfigErrors::rejects()
{
    QFETCH(QByteArray, yaml);
    QFETCH(int, line);
    QFETCH(QString, what);
    QFETCH(QString, hint);
    const auto errors = compileErrors(yaml);
    QVERIFY2(errors.size() == 1,
             qPrintable(QStringLiteral("expected exactly one error, got:\n") + dump(errors)));
    const ConfigError &e = errors.first();
    QVERIFY2(e.what.contains(what), qPrintable(e.toString()));
    QVERIFY2(e.hint.contains(hint), qPrintable(e.toString()));
    QCOMPARE(e.line, line);
    if (line > 0)
        QVERIFY2(e.column > 0, qPrintable(e.toString()));
    QCOMPARE(e.file, QStringLiteral("slp.yaml"));
}

QTEST_APPLESS_MAIN(TestConfigErrors)
#include "tst_config_errors.moc"
