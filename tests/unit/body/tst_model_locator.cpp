// SPDX-License-Identifier: GPL-3.0-or-later
// ModelLocation: the scanner a request gets by its Content-Type, the status and message of each
// refusal, and a rename that goes through the scanner the body was read with.
#include "body/modellocator.h"

#include <QtTest>

using namespace slp;

namespace {
HeaderList withType(const QByteArray &type)
{
    HeaderList headers{{"Host", "x"}};
    if (!type.isNull())
        headers.append({"Content-Type", type});
    return headers;
}

const QByteArray form =
    "--b0\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\n"
    "\r\n\x89PNG\r\n--b0\r\nContent-Disposition: form-data; name=\"model\"\r\n"
    "\r\nimg\r\n--b0--\r\n";
} // namespace

class TestModelLocator : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void picksTheScanner_data();
    void picksTheScanner();
    void renamesThroughTheSameScanner();
    void refusesWhatParsersReadTwoWays();
};

void TestModelLocator::picksTheScanner_data()
{
    QTest::addColumn<QByteArray>("contentType");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("found"); // the model, or a fragment of the error
    const QByteArray json = R"({"model":"m"})";
    QTest::newRow("JSON") << QByteArray("application/json") << json << 0 << "m";
    QTest::newRow("no Content-Type: JSON") << QByteArray() << json << 0 << "m";
    QTest::newRow("unknown type: JSON") << QByteArray("text/plain") << json << 0 << "m";
    QTest::newRow("JSON path unchanged")
        << QByteArray("application/json") << form << 400 << "request body is not valid JSON";
    QTest::newRow("multipart") << QByteArray("multipart/form-data; boundary=b0") << form << 0
                               << "img";
    QTest::newRow("multipart, quoted, any case")
        << QByteArray("Multipart/Form-Data; Boundary=\"b0\"") << form << 0 << "img";
    QTest::newRow("urlencoded") << QByteArray("application/x-www-form-urlencoded")
                                << QByteArray("model=m") << 415
                                << "application/x-www-form-urlencoded bodies are not routed";
    QTest::newRow("urlencoded label on JSON (curl -d)")
        << QByteArray("application/x-www-form-urlencoded") << json << 0 << "m";
    QTest::newRow("urlencoded label on a JSON array")
        << QByteArray("application/x-www-form-urlencoded") << QByteArray("[1]") << 415
        << "application/x-www-form-urlencoded bodies are not routed";
    QTest::newRow("urlencoded label, JSON without model")
        << QByteArray("application/x-www-form-urlencoded") << QByteArray("{}") << 400
        << "request body has no \"model\" field";
    QTest::newRow("no boundary") << QByteArray("multipart/form-data") << form << 400
                                 << "multipart/form-data needs a boundary parameter";
    QTest::newRow("boundary of 71")
        << QByteArray("multipart/form-data; boundary=" + QByteArray(71, 'b')) << form << 400
        << "multipart boundary is 71 characters: at most 70 allowed";
    QTest::newRow("two boundaries") << QByteArray("multipart/form-data; boundary=b0; boundary=b1")
                                    << form << 400 << "names its boundary more than once";
    QTest::newRow("unclosed quote") << QByteArray("multipart/form-data; boundary=\"b0") << form
                                    << 400 << "Content-Type parameters are malformed";
    QTest::newRow("wrong boundary") << QByteArray("multipart/form-data; boundary=b1") << form << 400
                                    << "no opening delimiter \"--b1\"";
}

void TestModelLocator::picksTheScanner()
{
    QFETCH(QByteArray, contentType);
    QFETCH(QByteArray, body);
    QFETCH(int, status);
    QFETCH(QString, found);
    const ModelLocation where = ModelLocation::locate(withType(contentType), body);
    QCOMPARE(where.status(), status);
    if (status == 0)
        QCOMPARE(where.model(), found);
    else
        QVERIFY2(where.error().contains(found), qPrintable(where.error()));
}

void TestModelLocator::renamesThroughTheSameScanner()
{
    const ModelLocation json = ModelLocation::locate(withType({}), R"({"model":"m","n":1})");
    QCOMPARE(json.kind(), ModelLocation::Kind::Json);
    const QByteArray jsonBody = R"({"model":"m","n":1})";
    const ByteChain renamed =
        ByteChain::edited(jsonBody, json.renameEdits(QStringLiteral("up \"x\"")));
    QCOMPARE(renamed.joined(), QByteArray(R"({"model":"up \"x\"","n":1})"));
    // The client's bytes are shared, not copied: before and after the value are its block.
    QCOMPARE(renamed.pieces().size(), 3);
    QCOMPARE(renamed.pieces().at(0).constData(), jsonBody.constData());
    QCOMPARE(renamed.pieces().at(2).constData(), jsonBody.constData() + jsonBody.indexOf(",\"n\""));

    const ModelLocation multi =
        ModelLocation::locate(withType("multipart/form-data; boundary=b0"), form);
    QCOMPARE(multi.kind(), ModelLocation::Kind::Multipart);
    QVERIFY(multi.renameError(QStringLiteral("gpt-image \"1\"")).isEmpty());
    QCOMPARE(ByteChain::edited(form, multi.renameEdits(QStringLiteral("gpt-image \"1\""))).joined(),
             QByteArray(form).replace("\r\nimg\r\n", "\r\ngpt-image \"1\"\r\n"));
    QVERIFY(multi.renameError(QStringLiteral("--b0")).contains(QStringLiteral("boundary")));
    QVERIFY(json.renameError(QStringLiteral("--b0")).isEmpty());
}

void TestModelLocator::refusesWhatParsersReadTwoWays()
{
    const QByteArray json = R"({"model":"m"})";
    HeaderList twice = withType("application/json");
    twice.append(
        qMakePair(QByteArray("content-type"), QByteArray("multipart/form-data; boundary=b0")));
    ModelLocation where = ModelLocation::locate(twice, json);
    QCOMPARE(where.status(), 400);
    QVERIFY2(where.error().contains(QStringLiteral("Content-Type is given more than once")),
             qPrintable(where.error()));
    QVERIFY(where.model().isEmpty());

    where =
        ModelLocation::locate(withType("multipart/form-data; boundary=b0; charset=latin1"), form);
    QCOMPARE(where.status(), 400);
    QVERIFY2(where.error().contains(QStringLiteral("charset=latin1")), qPrintable(where.error()));
    QCOMPARE(
        ModelLocation::locate(withType("multipart/form-data; boundary=b0; charset=UTF-8"), form)
            .model(),
        QStringLiteral("img"));

    where = ModelLocation::locate(withType({}), R"({"model":"m\ud800"})");
    QCOMPARE(where.status(), 400);
    QVERIFY2(where.error().contains(QStringLiteral("lone surrogate")), qPrintable(where.error()));
    QCOMPARE(ModelLocation::locate(withType({}), R"({"model":"m\ud83d\ude00"})").model(),
             QStringLiteral("m\U0001F600"));

    where = ModelLocation::locate(withType({}), R"({"Model":"a","model":"m"})");
    QCOMPARE(where.status(), 400);
    QVERIFY2(where.error().contains(QStringLiteral("ambiguous")), qPrintable(where.error()));
}

QTEST_GUILESS_MAIN(TestModelLocator)
#include "tst_model_locator.moc"
