// SPDX-License-Identifier: GPL-3.0-or-later
// SSE detection by the media type itself (wire/mediatype.h): what gets keep-alive comments
// and what an aggregating route reassembles; and the parameters of Content-Type and
// Content-Disposition (a multipart body's boundary, a part's name).
#include "wire/mediatype.h"

#include <QtTest>

class TestWireMediaType : public QObject
{
    Q_OBJECT

private slots:
    void eventStream_data();
    void eventStream();
    void parameters_data();
    void parameters();
};

void TestWireMediaType::eventStream_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<bool>("expected");
    QTest::newRow("plain") << QByteArray("text/event-stream") << true;
    QTest::newRow("upper case") << QByteArray("Text/Event-Stream") << true;
    QTest::newRow("charset") << QByteArray("text/event-stream; charset=utf-8") << true;
    QTest::newRow("no space") << QByteArray("text/event-stream;charset=utf-8") << true;
    QTest::newRow("space before ;") << QByteArray("text/event-stream ;a=b") << true;
    QTest::newRow("surrounding ws") << QByteArray(" \ttext/event-stream\t ") << true;
    QTest::newRow("longer subtype") << QByteArray("text/event-streaming") << false;
    QTest::newRow("suffix") << QByteArray("text/event-stream-x; a=b") << false;
    QTest::newRow("plus suffix") << QByteArray("text/event-stream+json") << false;
    QTest::newRow("comma list") << QByteArray("text/event-stream, text/plain") << false;
    QTest::newRow("other type") << QByteArray("application/json") << false;
    QTest::newRow("prefix only") << QByteArray("text/event-strea") << false;
    QTest::newRow("in a parameter") << QByteArray("text/plain; x=text/event-stream") << false;
    QTest::newRow("empty") << QByteArray() << false;
    QTest::newRow("only params") << QByteArray(";text/event-stream") << false;
}

void TestWireMediaType::eventStream()
{
    QFETCH(QByteArray, value);
    QFETCH(bool, expected);
    QCOMPARE(slp::isEventStream(value), expected);
}

void TestWireMediaType::parameters_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<QByteArray>("token");
    QTest::addColumn<QByteArray>("boundary"); // the "boundary" (or else "name") parameter
    QTest::newRow("bare boundary") << QByteArray("multipart/form-data; boundary=abc-123") << true
                                   << QByteArray("multipart/form-data") << QByteArray("abc-123");
    QTest::newRow("quoted boundary")
        << QByteArray("Multipart/Form-Data;BOUNDARY=\"a b:c=d?\"") << true
        << QByteArray("multipart/form-data") << QByteArray("a b:c=d?");
    QTest::newRow("escapes undone") << QByteArray("form-data; name=\"a\\\"b\\\\\"") << true
                                    << QByteArray("form-data") << QByteArray("a\"b\\");
    QTest::newRow("other params first, OWS")
        << QByteArray("multipart/form-data ;\tcharset=utf-8 ; boundary=x ;") << true
        << QByteArray("multipart/form-data") << QByteArray("x");
    QTest::newRow("no parameters") << QByteArray("multipart/form-data") << true
                                   << QByteArray("multipart/form-data") << QByteArray();
    QTest::newRow("unclosed quote") << QByteArray("multipart/form-data; boundary=\"abc") << false
                                    << QByteArray("multipart/form-data") << QByteArray();
    QTest::newRow("no value") << QByteArray("multipart/form-data; boundary") << false
                              << QByteArray("multipart/form-data") << QByteArray();
    QTest::newRow("unquoted separator") << QByteArray("multipart/form-data; boundary=a/b") << false
                                        << QByteArray("multipart/form-data") << QByteArray("a");
    QTest::newRow("empty") << QByteArray() << false << QByteArray() << QByteArray();
}

void TestWireMediaType::parameters()
{
    QFETCH(QByteArray, value);
    QFETCH(bool, valid);
    QFETCH(QByteArray, token);
    QFETCH(QByteArray, boundary);
    const slp::HeaderParameters p = slp::parseHeaderParameters(value);
    QCOMPARE(p.valid, valid);
    QCOMPARE(p.token, token);
    QCOMPARE(p.has("boundary") ? p.value("boundary") : p.value("name"), boundary);
    QVERIFY(slp::isMediaType(value, token) || token.isEmpty());
}

QTEST_APPLESS_MAIN(TestWireMediaType)
#include "tst_wire_mediatype.moc"
