// SPDX-License-Identifier: GPL-3.0-or-later
// SSE detection by the media type itself (wire/mediatype.h): what gets keep-alive comments
// and what an aggregating route reassembles.
#include "wire/mediatype.h"

#include <QtTest>

class TestWireMediaType : public QObject
{
    Q_OBJECT

private slots:
    void eventStream_data();
    void eventStream();
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

QTEST_APPLESS_MAIN(TestWireMediaType)
#include "tst_wire_mediatype.moc"
