// SPDX-License-Identifier: GPL-3.0-or-later
// How errors are reported as a whole: several at once, each at its line and column, once
// per cause, with the file name and a hint. (One error per input: tst_config_errors.)
#include "configcheck.h"

#include <QTest>

using slp::ConfigError;

using namespace slp::test;

class TestConfigErrorReports : public QObject
{
    Q_OBJECT

private slots:
    void threeErrorsOnThreeLines();
    void malformedYamlIsOneError();
    void duplicateIdReportsBothLines();
    void templateErrorColumn();
    void editionUrlErrorOncePerEdition();
    void editionErrorsDoNotHideUrlErrors();
    void brokenBackendDoesNotCascade();
    void unknownKeySuggestion();
    void errorsCarryFileName();
};

void TestConfigErrorReports::threeErrorsOnThreeLines()
{
    const QByteArray yaml = "listen: \":8080\"\n"         // 1
                            "header_timeout: 30x\n"       // 2: bad duration
                            "backends:\n"                 // 3
                            "  - name: a\n"               // 4
                            "    url: http://a:8000/v1\n" // 5: path
                            "    retry: \"yes\"\n"        // 6: not a boolean
                            "  - name: b\n"               // 7
                            "    url: http://b:8000\n";   // 8
    const auto errors = compileErrors(yaml);
    QVERIFY2(errors.size() == 3, qPrintable(dump(errors)));
    QCOMPARE(errors[0].line, 2);
    QVERIFY(errors[0].what.contains(QStringLiteral("header_timeout")));
    QCOMPARE(errors[1].line, 5);
    QVERIFY(errors[1].what.contains(QStringLiteral("path")));
    QCOMPARE(errors[2].line, 6);
    QVERIFY(errors[2].what.contains(QStringLiteral("boolean")));
    for (const ConfigError &e : errors)
        QVERIFY2(!e.hint.isEmpty(), qPrintable(e.toString()));
}

void TestConfigErrorReports::malformedYamlIsOneError()
{
    const auto errors = compileErrors("backends:\n  - name: a\n   url: http://a\n  bad: [\n");
    QCOMPARE(errors.size(), 1);
    QVERIFY(errors[0].what.startsWith(QStringLiteral("YAML syntax error")));
    QVERIFY(errors[0].line >= 2);
}

void TestConfigErrorReports::duplicateIdReportsBothLines()
{
    const auto errors = compileErrors("backends:\n"
                                      "  - name: x\n"
                                      "    url: http://a\n"
                                      "  - name: y\n"
                                      "    url: http://b\n"
                                      "  - name: x\n"
                                      "    url: http://c\n");
    QCOMPARE(errors.size(), 1);
    QCOMPARE(errors[0].line, 6);
    QCOMPARE(errors[0].column, 11); // the name's value
    QVERIFY(errors[0].what.contains(QStringLiteral("line 6")));
    QVERIFY(errors[0].what.contains(QStringLiteral("line 2")));
}

void TestConfigErrorReports::templateErrorColumn()
{
    // Column points at the "{{" of the bad action, inside quotes or not.
    auto errors =
        compileErrors(kOkBackends + "editions:\n  - suffix: -e\n    url: http://x{{.Foo}}\n");
    QCOMPARE(errors.size(), 1);
    QCOMPARE(errors[0].line, 6);
    QCOMPARE(errors[0].column, 18);
    errors =
        compileErrors(kOkBackends + "editions:\n  - suffix: -e\n    url: \"http://x{{.Foo}}\"\n");
    QCOMPARE(errors.size(), 1);
    QCOMPARE(errors[0].column, 19);
}

void TestConfigErrorReports::editionUrlErrorOncePerEdition()
{
    // Three backends fail the same template: one error, not three.
    const auto errors = compileErrors("backends:\n"
                                      "  - {name: a, url: \"http://a\"}\n"
                                      "  - {name: b, url: \"http://b\"}\n"
                                      "  - {name: c, url: \"http://c\"}\n"
                                      "editions:\n"
                                      "  - suffix: -e\n"
                                      "    url: \"{{.URL}}/e\"\n");
    QVERIFY2(errors.size() == 1, qPrintable(dump(errors)));
    QCOMPARE(errors[0].line, 7);
    QVERIFY(errors[0].what.contains(QStringLiteral("for backend \"a\"")));
    QVERIFY(errors[0].what.contains(QStringLiteral("and 2 more backends")));
}

void TestConfigErrorReports::editionErrorsDoNotHideUrlErrors()
{
    // A bad model template does not stop the URL template from being checked too.
    const auto errors = compileErrors(kOkBackends + "editions:\n"
                                                    "  - suffix: -e\n"
                                                    "    url: \"{{.URL}}/e\"\n"
                                                    "    model: \"{{.Foo}}\"\n");
    QVERIFY2(errors.size() == 2, qPrintable(dump(errors)));
    QCOMPARE(errors[0].line, 6);
    QCOMPARE(errors[1].line, 7);
}

void TestConfigErrorReports::brokenBackendDoesNotCascade()
{
    // The backend's bad URL is reported once; its edition routes are not re-reported.
    const auto errors = compileErrors("backends:\n"
                                      "  - name: a\n"
                                      "    url: http://a/v1\n"
                                      "editions:\n"
                                      "  - suffix: -e\n"
                                      "    url: \"{{.URL}}\"\n");
    QVERIFY2(errors.size() == 1, qPrintable(dump(errors)));
    QCOMPARE(errors[0].line, 3);
}

void TestConfigErrorReports::unknownKeySuggestion()
{
    const auto errors = compileErrors(
        "backends:\n  - name: a\n    url: http://a\n    timout: 5s\n    Retry: true\n");
    QCOMPARE(errors.size(), 2);
    QCOMPARE(errors[0].line, 4);
    QVERIFY(errors[0].hint.startsWith(QStringLiteral("did you mean \"timeout\"?")));
    QVERIFY(errors[0].hint.contains(
        QStringLiteral("known keys: name, url, timeout, model, retry, aggregate")));
    QCOMPARE(errors[1].line, 5);
    QVERIFY(errors[1].hint.startsWith(QStringLiteral("did you mean \"retry\"?")));
}

void TestConfigErrorReports::errorsCarryFileName()
{
    const auto result =
        slp::compileConfig("listen: nope\nbackends: []\n", QStringLiteral("/etc/slp/slp.yaml"));
    QVERIFY(std::holds_alternative<QList<ConfigError>>(result));
    const auto &errors = std::get<QList<ConfigError>>(result);
    QCOMPARE(errors.size(), 2);
    QVERIFY2(errors[0].toString().startsWith(QStringLiteral("/etc/slp/slp.yaml:1:9: listen: ")),
             qPrintable(errors[0].toString()));
    QVERIFY2(errors[1].toString().startsWith(QStringLiteral("/etc/slp/slp.yaml:2:11: no backends")),
             qPrintable(errors[1].toString()));
    QVERIFY(errors[1].toString().contains(QStringLiteral(" (hint: ")));
}

QTEST_APPLESS_MAIN(TestConfigErrorReports)
#include "tst_config_error_reports.moc"
