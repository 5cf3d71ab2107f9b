// SPDX-License-Identifier: GPL-3.0-or-later
// A route's `headers:`: ${NAME} taken from the environment the compile is given (never the
// process's), every name and value rule with its error and line, editions never inheriting a
// backend's, and no message or dump line ever holding a value.
#include "configcheck.h"

#include <QtTest>

using namespace slp;
using slp::test::dump;

namespace {

const QByteArray kSecret = "sk-very-secret-0123";

QProcessEnvironment environment()
{
    QProcessEnvironment env;
    env.insert(QStringLiteral("VLLM_KEY"), QString::fromLatin1(kSecret));
    env.insert(QStringLiteral("EMPTY"), QString());
    env.insert(QStringLiteral("NEWLINE"), QStringLiteral("a\nb"));
    return env;
}

ConfigResult compile(const QByteArray &yaml)
{
    return compileConfig(yaml, QStringLiteral("slp.yaml"), environment());
}

// The errors, for a failure message (empty when it compiled).
QString errorsOf(const ConfigResult &r)
{
    const auto *errors = std::get_if<QList<ConfigError>>(&r);
    return errors ? dump(*errors) : QString();
}

QByteArray backendWith(const QByteArray &headers)
{
    return "backends:\n  - name: a\n    url: http://a:8000\n    headers:\n" + headers;
}

} // namespace

class TestConfigHeaders : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void expandsAndKeepsOrder();
    void editionsHaveTheirOwn();
    void dumpNamesNeverValues();
    void refuses_data();
    void refuses();
    void withoutAnEnvironmentNothingIsSet();
};

void TestConfigHeaders::expandsAndKeepsOrder()
{
    const ConfigResult r = compile(backendWith("      Authorization: Bearer ${VLLM_KEY}\n"
                                               "      X-Vllm-Priority: 10\n"
                                               "      X-Cost: \"$$5 and $ 6 and ${VLLM_KEY}$\"\n"));
    const auto *config = std::get_if<Config>(&r);
    QVERIFY2(config, qPrintable(errorsOf(r)));
    const auto &headers = config->routes.at(0).headers;
    QCOMPARE(headers.size(), 3);
    QCOMPARE(headers.at(0).first, QByteArray("Authorization"));
    QCOMPARE(headers.at(0).second, "Bearer " + kSecret);
    QCOMPARE(headers.at(1), qMakePair(QByteArray("X-Vllm-Priority"), QByteArray("10")));
    QCOMPARE(headers.at(2).second, "$5 and $ 6 and " + kSecret + "$");
}

void TestConfigHeaders::editionsHaveTheirOwn()
{
    const ConfigResult r = compile(backendWith("      Authorization: Bearer ${VLLM_KEY}\n") +
                                   "editions:\n  - suffix: -copy\n    url: http://copy:8100\n"
                                   "  - suffix: -same\n    url: \"{{.URL}}\"\n    headers:\n"
                                   "      Authorization: Bearer ${VLLM_KEY}\n");
    const auto *config = std::get_if<Config>(&r);
    QVERIFY2(config, qPrintable(errorsOf(r)));
    QCOMPARE(config->routes.size(), 3);
    QVERIFY(config->routes.at(1).headers.isEmpty()); // another server: not the backend's key
    QCOMPARE(config->routes.at(2).headers, config->routes.at(0).headers);
}

void TestConfigHeaders::dumpNamesNeverValues()
{
    const ConfigResult r = compile(backendWith("      Authorization: Bearer ${VLLM_KEY}\n"
                                               "      X-Vllm-Priority: 10\n"));
    const QStringList lines = routeDump(std::get<Config>(r));
    QCOMPARE(lines.size(), 1);
    QVERIFY2(lines.at(0).endsWith(QStringLiteral(" headers=Authorization,X-Vllm-Priority")),
             qPrintable(lines.at(0)));
    QVERIFY(!lines.at(0).contains(QString::fromLatin1(kSecret)));
    QVERIFY(!lines.at(0).contains(QStringLiteral("Bearer")));
}

void TestConfigHeaders::refuses_data()
{
    QTest::addColumn<QByteArray>("headers");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("message");
    QTest::newRow("unset variable")
        << QByteArray("      Authorization: Bearer ${NOT_SET}\n") << 5
        << QStringLiteral("backends[0].headers.Authorization: ${NOT_SET} is not set in SLP's "
                          "environment");
    QTest::newRow("empty variable") << QByteArray("      Authorization: Bearer ${EMPTY}\n") << 5
                                    << QStringLiteral("${EMPTY} is set but empty");
    QTest::newRow("unclosed") << QByteArray("      Authorization: Bearer ${VLLM_KEY\n") << 5
                              << QStringLiteral("\"${\" has no closing \"}\"");
    QTest::newRow("bad variable name") << QByteArray("      X-Key: ${1KEY}\n") << 5
                                       << QStringLiteral("${1KEY} is not a variable name");
    QTest::newRow("newline from the environment")
        << QByteArray("      X-Key: ${NEWLINE}\n") << 5
        << QStringLiteral("the value, with ${NEWLINE} expanded, holds a control character");
    QTest::newRow("empty value") << QByteArray("      X-Key: \"\"\n") << 5
                                 << QStringLiteral("X-Key: the value is empty");
    QTest::newRow("no value") << QByteArray("      X-Key:\n") << 5
                              << QStringLiteral("X-Key is empty");
    QTest::newRow("trailing space")
        << QByteArray("      X-Key: \"v \"\n") << 5 << QStringLiteral("ends with whitespace");
    QTest::newRow("non-ASCII") << QByteArray("      X-Key: caf\xc3\xa9\n") << 5
                               << QStringLiteral("non-ASCII");
    QTest::newRow("a list value") << QByteArray("      X-Key: [a, b]\n") << 5
                                  << QStringLiteral("X-Key must be a string, not a list");
    QTest::newRow("space in name")
        << QByteArray("      X Key: v\n") << 5 << QStringLiteral("\"X Key\" is not a header name");
    QTest::newRow("Host") << QByteArray("      Host: example\n") << 5
                          << QStringLiteral("SLP cannot set Host");
    QTest::newRow("Content-Length") << QByteArray("      content-length: 3\n") << 5
                                    << QStringLiteral("SLP cannot set content-length");
    QTest::newRow("hop-by-hop") << QByteArray("      Connection: close\n") << 5
                                << QStringLiteral("is hop-by-hop");
    QTest::newRow("Proxy-Authorization")
        << QByteArray("      Proxy-Authorization: x\n") << 5 << QStringLiteral("is hop-by-hop");
    QTest::newRow("Content-Type") << QByteArray("      Content-Type: text/plain\n") << 5
                                  << QStringLiteral("read the body otherwise");
    QTest::newRow("WebSocket key")
        << QByteArray("      Sec-WebSocket-Key: x\n") << 5 << QStringLiteral("WebSocket handshake");
    QTest::newRow("twice, any case")
        << QByteArray("      Authorization: a\n      authorization: b\n") << 6
        << QStringLiteral("authorization is given twice");
    QTest::newRow("a list of headers") << QByteArray("      - Authorization: a\n") << 5
                                       << QStringLiteral("must be a mapping of header names");
}

void TestConfigHeaders::refuses()
{
    QFETCH(QByteArray, headers);
    QFETCH(int, line);
    QFETCH(QString, message);
    const ConfigResult r = compile(backendWith(headers));
    const auto *errors = std::get_if<QList<ConfigError>>(&r);
    QVERIFY(errors);
    QCOMPARE(errors->size(), 1);
    const ConfigError &e = errors->first();
    QVERIFY2(e.what.contains(message), qPrintable(e.toString()));
    QCOMPARE(e.line, line);
    // Never the value: not the key from the environment, not a literal one.
    QVERIFY2(!e.toString().contains(QString::fromLatin1(kSecret)), qPrintable(e.toString()));
    QVERIFY2(!e.what.contains(QStringLiteral("Bearer")), qPrintable(e.toString()));
}

// compileConfig is pure: the process's own environment is not read unless it is passed.
void TestConfigHeaders::withoutAnEnvironmentNothingIsSet()
{
    qputenv("SLP_TEST_HEADER_KEY", "from-the-process");
    const QList<ConfigError> errors =
        test::compileErrors(backendWith("      X-Key: ${SLP_TEST_HEADER_KEY}\n"));
    QCOMPARE(errors.size(), 1);
    QVERIFY2(errors.first().what.contains(QStringLiteral("is not set")), qPrintable(dump(errors)));
    QCOMPARE(errors.first().column, 14); // the "${" of the value
}

QTEST_GUILESS_MAIN(TestConfigHeaders)
#include "tst_config_headers.moc"
