// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/texttemplate.h"

#include <QTest>

using slp::TextTemplate;

class TestTextTemplate : public QObject
{
    Q_OBJECT

private slots:
    void renders_data();
    void renders();
    void errors_data();
    void errors();
    void uses();
    void source();
};

namespace {

const QList<QString> kFields = {QStringLiteral("Name"), QStringLiteral("URL")};
const QHash<QString, QString> kValues = {
    {QStringLiteral("Name"), QStringLiteral("mistral-7b")},
    {QStringLiteral("URL"), QStringLiteral("http://gllm:8000")}};

} // namespace

void TestTextTemplate::renders_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("plain") << "http://host:8100"
                           << "http://host:8100";
    QTest::newRow("empty") << ""
                           << "";
    QTest::newRow("field") << "http://copydesk-{{.Name}}.c2-talos:8100"
                           << "http://copydesk-mistral-7b.c2-talos:8100";
    QTest::newRow("spaces inside") << "x{{ .Name }}y"
                                   << "xmistral-7by";
    QTest::newRow("tabs inside") << "{{\t.URL\t}}"
                                 << "http://gllm:8000";
    QTest::newRow("twice adjacent") << "{{.Name}}{{.Name}}"
                                    << "mistral-7bmistral-7b";
    QTest::newRow("two fields") << "{{.URL}}/{{.Name}}"
                                << "http://gllm:8000/mistral-7b";
    QTest::newRow("single braces literal") << "a{b}c{.Name}"
                                           << "a{b}c{.Name}";
    QTest::newRow("stray close literal") << "a}}b"
                                         << "a}}b";
    QTest::newRow("brace after action") << "{{.Name}}}"
                                        << "mistral-7b}";
    QTest::newRow("single open brace before action") << "{ {{.Name}}"
                                                     << "{ mistral-7b";
}

void TestTextTemplate::renders()
{
    QFETCH(QString, text);
    QFETCH(QString, expected);
    QString error;
    const auto tpl = TextTemplate::parse(text, kFields, &error);
    QVERIFY2(tpl.has_value(), qPrintable(error));
    QCOMPARE(tpl->render(kValues), expected);
}

void TestTextTemplate::errors_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("reason");
    QTest::newRow("unknown field") << "http://{{.Foo}}:1" << 7 << "unknown field .Foo";
    QTest::newRow("wrong case") << "{{.name}}" << 0 << "unknown field .name";
    QTest::newRow("Model not allowed") << "x{{.Model}}" << 1 << "unknown field .Model";
    QTest::newRow("no dot") << "{{Name}}" << 0 << "unsupported action";
    QTest::newRow("dot only") << "{{.}}" << 0 << "unsupported action";
    QTest::newRow("chained") << "{{.Name.X}}" << 0 << "unsupported action";
    QTest::newRow("pipeline") << "{{.Name | printf}}" << 0 << "unsupported action";
    QTest::newRow("string literal") << "{{\"{{\"}}" << 0 << "unsupported action";
    QTest::newRow("empty action") << "ab{{ }}" << 2 << "empty action";
    QTest::newRow("unterminated") << "http://{{.Name" << 7 << "unclosed action";
    QTest::newRow("unterminated at end") << "abc{{" << 3 << "unclosed action";
    QTest::newRow("second unterminated") << "{{.Name}}-{{.URL" << 10 << "unclosed action";
    QTest::newRow("trim marker") << "{{- .Name}}" << 0 << "trim markers";
    QTest::newRow("comment") << "{{/* c */}}" << 0 << "unsupported action";
}

void TestTextTemplate::errors()
{
    QFETCH(QString, text);
    QFETCH(int, column);
    QFETCH(QString, reason);
    QString error;
    int errorColumn = -1;
    QVERIFY(!TextTemplate::parse(text, kFields, &error, &errorColumn).has_value());
    QVERIFY2(error.contains(reason), qPrintable(error));
    QCOMPARE(errorColumn, column);
}

void TestTextTemplate::uses()
{
    const QList<QString> all = {QStringLiteral("Name"), QStringLiteral("URL"),
                                QStringLiteral("Model")};
    const auto tpl = TextTemplate::parse(QStringLiteral("{{.Model}}-{{ .Name }}"), all);
    QVERIFY(tpl);
    QVERIFY(tpl->uses(QStringLiteral("Model")));
    QVERIFY(tpl->uses(QStringLiteral("Name")));
    QVERIFY(!tpl->uses(QStringLiteral("URL")));
    QCOMPARE(tpl->render({{QStringLiteral("Model"), QStringLiteral("M")},
                          {QStringLiteral("Name"), QStringLiteral("n")}}),
             QStringLiteral("M-n"));
    // A literal ".Model" outside braces is text, not a use.
    const auto literal = TextTemplate::parse(QStringLiteral(".Model"), all);
    QVERIFY(literal);
    QVERIFY(!literal->uses(QStringLiteral("Model")));
}

void TestTextTemplate::source()
{
    const auto tpl = TextTemplate::parse(QStringLiteral("a{{ .Name }}"), kFields);
    QVERIFY(tpl);
    QCOMPARE(tpl->source(), QStringLiteral("a{{ .Name }}"));
}

QTEST_APPLESS_MAIN(TestTextTemplate)
#include "tst_config_template.moc"
