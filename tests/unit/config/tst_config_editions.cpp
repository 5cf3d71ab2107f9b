// SPDX-License-Identifier: GPL-3.0-or-later
// Editions: how they expand into routes (order, model templates, URL templates, what they
// never inherit from their backend).
#include "configcheck.h"

#include <QTest>

using namespace std::chrono_literals;
using slp::Config;
using slp::ConfigError;
using slp::NameSource;

using namespace slp::test;

class TestConfigEditions : public QObject
{
    Q_OBJECT

private slots:
    void routeOrder();
    void unixSocketTemplates();
    void editionModelPassthrough();
    void editionModelPinnedLiteral();
    void editionModelPinnedViaBackend();
    void editionModelFollowsBackend();
    void editionTemplateSpacing();
    void editionUrlUsesOrigin();
    void editionAggregateNotInherited();
    void editionRetryFalseAllowed();
};

void TestConfigEditions::routeOrder()
{
    // Editions in config order; each edition's routes in backend order, whatever apply_to says.
    const Config c = compileOk(R"(
backends:
  - {name: a, url: "http://a"}
  - {name: b, url: "http://b"}
  - {name: c, url: "http://c"}
editions:
  - suffix: -x
    url: http://x-{{.Name}}
    apply_to: [c, a]
  - suffix: -y
    url: http://y
  - suffix: -z
    url: http://z
    apply_to: [b]
)");
    QCOMPARE(ids(c), QStringList({"a", "b", "c", "a-x", "c-x", "a-y", "b-y", "c-y", "b-z"}));
    QCOMPARE(c.routes[4].origin, QStringLiteral("http://x-c"));
    QCOMPARE(c.routes[4].backendName, QStringLiteral("c"));
    QCOMPARE(c.routes[5].origin, QStringLiteral("http://y"));
}

// An edition may put its routes on Unix sockets (or take a backend's socket as it is); a
// rendered path that is not absolute is the usual template error.
void TestConfigEditions::unixSocketTemplates()
{
    const Config c = compileOk(R"(
backends:
  - {name: a, url: "unix:/run/a.sock"}
  - {name: b, url: "http://b:8000"}
editions:
  - suffix: -fast
    url: unix:/run/fast/{{.Name}}.sock
  - suffix: -same
    url: "{{.URL}}"
    apply_to: [a]
)");
    QCOMPARE(ids(c), QStringList({"a", "b", "a-fast", "b-fast", "a-same"}));
    QCOMPARE(c.routes[0].origin, QStringLiteral("unix:/run/a.sock"));
    QCOMPARE(c.routes[2].origin, QStringLiteral("unix:/run/fast/a.sock"));
    QCOMPARE(c.routes[3].origin, QStringLiteral("unix:/run/fast/b.sock"));
    QCOMPARE(c.routes[4].origin, QStringLiteral("unix:/run/a.sock"));

    const auto errors = compileErrors(R"(
backends:
  - {name: a, url: "http://a"}
editions:
  - suffix: -e
    url: unix:run/{{.Name}}.sock
)");
    QCOMPARE(errors.size(), 1);
    QVERIFY2(errors[0].what.contains(
                 QStringLiteral("renders \"unix:run/a.sock\" for backend \"a\": the socket path is "
                                "not absolute")),
             qPrintable(dump(errors)));
}

void TestConfigEditions::editionModelPassthrough()
{
    const Config c = compileOk(R"(
backends:
  - {name: a, url: "http://a", model: Pinned-A}
editions:
  - {suffix: -e, url: "http://e"}
)");
    QCOMPARE(c.routes[1].nameSource, NameSource::Passthrough);
    QVERIFY(c.routes[1].pinnedModel.isEmpty());
    QCOMPARE(c.routes[1].timeoutText, QStringLiteral("60s"));
    QCOMPARE(c.routes[1].timeout, 60s);
}

void TestConfigEditions::editionModelPinnedLiteral()
{
    const Config c = compileOk(R"(
backends:
  - {name: a, url: "http://a:1"}
editions:
  - suffix: -e
    url: http://e
    model: "{{.Name}}@{{.URL}}-json"
)");
    QCOMPARE(c.routes[1].nameSource, NameSource::Pinned);
    QCOMPARE(c.routes[1].pinnedModel, QStringLiteral("a@http://a:1-json"));
    QCOMPARE(c.routes[1].followsRoute, -1);
}

void TestConfigEditions::editionModelPinnedViaBackend()
{
    const Config c = compileOk(R"(
backends:
  - {name: a, url: "http://a", model: Llama-3.3-70B}
editions:
  - suffix: -e
    url: http://e
    model: "{{.Model}}"
)");
    QCOMPARE(c.routes[1].nameSource, NameSource::Pinned);
    QCOMPARE(c.routes[1].pinnedModel, QStringLiteral("Llama-3.3-70B"));
}

void TestConfigEditions::editionModelFollowsBackend()
{
    const Config c = compileOk(R"(
backends:
  - {name: p, url: "http://p", model: P-Model}
  - {name: d, url: "http://d"}
editions:
  - suffix: -e
    url: http://e-{{.Name}}
    model: "wrap/{{.Model}}"
)");
    QCOMPARE(ids(c), QStringList({"p", "d", "p-e", "d-e"}));
    QCOMPARE(c.routes[2].nameSource, NameSource::Pinned);
    QCOMPARE(c.routes[2].pinnedModel, QStringLiteral("wrap/P-Model"));
    const slp::Route &r = c.routes[3];
    QCOMPARE(r.nameSource, NameSource::FollowsBackend);
    QCOMPARE(r.followsRoute, 1);
    QVERIFY(r.modelTemplate.has_value());
    QVERIFY(r.modelTemplate->uses(QStringLiteral("Model")));
    QCOMPARE(r.modelTemplate->render({{QStringLiteral("Model"), QStringLiteral("Found")}}),
             QStringLiteral("wrap/Found"));
}

void TestConfigEditions::editionTemplateSpacing()
{
    const Config c = compileOk(R"(
backends:
  - {name: a, url: "http://a"}
editions:
  - suffix: -e
    url: "http://{{ .Name }}{{.Name}}.lan:1"
)");
    QCOMPARE(c.routes[1].origin, QStringLiteral("http://aa.lan:1"));
}

void TestConfigEditions::editionUrlUsesOrigin()
{
    // .URL is the backend's origin string, normalised (no trailing slash).
    const Config c = compileOk(R"(
backends:
  - {name: a, url: "HTTP://Gllm:8000/"}
editions:
  - suffix: -same
    url: "{{.URL}}"
)");
    QCOMPARE(c.routes[1].origin, QStringLiteral("http://gllm:8000"));
}

void TestConfigEditions::editionAggregateNotInherited()
{
    const Config c = compileOk(R"(
backends:
  - {name: a, url: "http://a", aggregate: true, retry: true, timeout: 5s}
  - {name: b, url: "http://b"}
editions:
  - {suffix: -e, url: "http://e", timeout: 300s}
  - {suffix: -f, url: "http://f", aggregate: true}
)");
    QCOMPARE(ids(c), QStringList({"a", "b", "a-e", "b-e", "a-f", "b-f"}));
    QVERIFY(c.routes[0].aggregate);
    QVERIFY(!c.routes[2].aggregate);
    QVERIFY(!c.routes[2].retry);
    QCOMPARE(c.routes[2].timeoutText, QStringLiteral("300s"));
    QVERIFY(c.routes[4].aggregate);
    QVERIFY(c.routes[5].aggregate);
}

void TestConfigEditions::editionRetryFalseAllowed()
{
    const Config c = compileOk(R"(
backends: [{name: a, url: "http://a"}]
editions: [{suffix: -e, url: "http://e", retry: false}]
)");
    QCOMPARE(c.routes.size(), 2);
}

QTEST_APPLESS_MAIN(TestConfigEditions)
#include "tst_config_editions.moc"
