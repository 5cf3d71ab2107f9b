// SPDX-License-Identifier: GPL-3.0-or-later
// What both transports do to every upstream head before the core sees it
// (upstream/upstreamhead.h), and the qnam fence's rule for control bytes, which matches the
// socket transport's parser (tst_response_parser controlBytesInStatusLineOrHeaderValue).
#include "upstream/qnam/qnamfence.h"
#include "upstream/upstreamhead.h"

#include <QtTest>

using slp::HeaderList;
using slp::UpstreamHead;

class TestUpstreamHead : public QObject
{
    Q_OBJECT

private slots:
    void requestIdFault_data();
    void requestIdFault();
    void unfitIdsDropped();
    void fenceRefusesEveryControlByte_data();
    void fenceRefusesEveryControlByte();
};

void TestUpstreamHead::requestIdFault_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<bool>("fit");
    QTest::newRow("uuid") << QByteArray("0f8fad5b-d9cb-469f-a165-70867728950e") << true;
    QTest::newRow("128 bytes") << QByteArray(128, 'a') << true;
    QTest::newRow("129 bytes") << QByteArray(129, 'a') << false;
    QTest::newRow("empty") << QByteArray() << false;
    QTest::newRow("space") << QByteArray("a b") << false;
    QTest::newRow("ESC") << QByteArray("a\x1b[31m") << false;
    QTest::newRow("DEL") << QByteArray("a\x7f") << false;
    QTest::newRow("UTF-8") << QByteArray("caf\xc3\xa9") << false;
}

void TestUpstreamHead::requestIdFault()
{
    QFETCH(QByteArray, value);
    QFETCH(bool, fit);
    QCOMPARE(slp::upstreamRequestIdFault(value).isEmpty(), fit);
}

void TestUpstreamHead::unfitIdsDropped()
{
    UpstreamHead head;
    head.status = 200;
    head.headers = {{"Content-Type", "text/plain"},
                    {"x-request-id", QByteArray(500, 'r')},
                    {"X-Other", "kept"},
                    {"X-Request-ID", "up-1"}};
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression("sent X-Request-Id \"r+\" \\(over 128"));
    slp::dropUnfitRequestIds(head, QStringLiteral("http://127.0.0.1:9"));
    QCOMPARE(head.headers,
             (HeaderList{
                 {"Content-Type", "text/plain"}, {"X-Other", "kept"}, {"X-Request-ID", "up-1"}}));
}

void TestUpstreamHead::fenceRefusesEveryControlByte_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<bool>("refused");
    QTest::newRow("plain") << QByteArray("a b") << false;
    QTest::newRow("HTAB") << QByteArray("a\tb") << false;
    QTest::newRow("obs-text") << QByteArray("caf\xc3\xa9") << false;
    QTest::newRow("ESC") << QByteArray("a\x1b[31m") << true;
    QTest::newRow("BEL") << QByteArray("a\x07") << true;
    QTest::newRow("DEL") << QByteArray("a\x7f") << true;
    QTest::newRow("NUL") << QByteArray("a\0b", 3) << true;
}

void TestUpstreamHead::fenceRefusesEveryControlByte()
{
    QFETCH(QByteArray, value);
    QFETCH(bool, refused);
    const QString fault =
        slp::qnamHeadFault(200, "OK", {{"Content-Length", "0"}, {"X-Request-Id", value}});
    QCOMPARE(!fault.isEmpty(), refused);
}

QTEST_GUILESS_MAIN(TestUpstreamHead)
#include "tst_upstream_head.moc"
