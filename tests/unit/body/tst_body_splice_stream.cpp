// SPDX-License-Identifier: GPL-3.0-or-later
// spliceStreamTrue: aggregate mode's one body edit besides the model. Every other byte must
// stay as the client sent it.
#include "body/bodyscanner.h"
#include "joinededits.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace slp;
using slp::test::spliceStreamTrue;

class TestSpliceStream : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void edits_data();
    void edits();
    void compoundStreamIsLeftAlone();
    void byteOrderMarkInModelIsKept();
};

void TestSpliceStream::edits_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("model");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("absent, no rename")
        << QByteArray(R"({ "model":"a", "messages":[] })") << QString()
        << QByteArray(R"({"stream":true, "model":"a", "messages":[] })");
    QTest::newRow("absent, rename")
        << QByteArray(R"({"model":"a","x":1})") << QStringLiteral("Up \"B\"")
        << QByteArray(R"({"stream":true,"model":"Up \"B\"","x":1})");
    QTest::newRow("false before model, rename")
        << QByteArray(R"({"stream" : false , "model":"a"})") << QStringLiteral("B")
        << QByteArray(R"({"stream" : true , "model":"B"})");
    QTest::newRow("null after model") << QByteArray(R"({"model":"a","stream":null})") << QString()
                                      << QByteArray(R"({"model":"a","stream":true})");
    QTest::newRow("number, repeated: last one edited")
        << QByteArray(R"({"stream":1,"model":"a","stream":0})") << QStringLiteral("bb")
        << QByteArray(R"({"stream":1,"model":"bb","stream":true})");
    QTest::newRow("string value") << QByteArray(R"({"model":"a","stream":"no"})") << QString()
                                  << QByteArray(R"({"model":"a","stream":true})");
}

void TestSpliceStream::edits()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, model);
    QFETCH(QByteArray, expected);
    const BodyScan scan = scanBody(body);
    QCOMPARE(scan.verdict, BodyScan::Verdict::Ok);
    const QByteArray out = spliceStreamTrue(body, scan, model);
    QCOMPARE(out, expected);
    const BodyScan again = scanBody(out);
    QCOMPARE(again.verdict, BodyScan::Verdict::Ok);
    QCOMPARE(again.stream, BodyScan::Stream::True);
    QCOMPARE(again.model, model.isEmpty() ? scan.model : model);
}

void TestSpliceStream::compoundStreamIsLeftAlone()
{
    const QByteArray body = R"({"model":"a","stream":{"x":true}})";
    const BodyScan scan = scanBody(body);
    QCOMPARE(scan.verdict, BodyScan::Verdict::Ok);
    QVERIFY(spliceStreamTrue(body, scan, QString()).isEmpty());
}

// Found by fuzzing: U+FEFF right after an escape, or first in the value, was dropped as if it
// were a byte-order mark, so the id looked up was not the id the client sent.
void TestSpliceStream::byteOrderMarkInModelIsKept()
{
    for (const QByteArray &body : {QByteArray("{\"model\":\"\xEF\xBB\xBF"
                                              "abc\"}"),
                                   QByteArray("{\"model\":\"a\\n\xEF\xBB\xBF\"}")}) {
        const BodyScan scan = scanBody(body);
        QCOMPARE(scan.verdict, BodyScan::Verdict::Ok);
        QVERIFY2(scan.model.contains(QChar(0xFEFF)), body.constData());
    }
}

QTEST_GUILESS_MAIN(TestSpliceStream)
#include "tst_body_splice_stream.moc"
