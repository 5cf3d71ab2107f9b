// SPDX-License-Identifier: GPL-3.0-or-later
#include "wire/http1.h"

#include <QTest>

using namespace slp;

class TestWireHttp1 : public QObject
{
    Q_OBJECT
private slots:
    void tokens_data()
    {
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<QByteArray>("token");
        QTest::addColumn<bool>("found");
        QTest::newRow("alone") << QByteArray("Upgrade") << QByteArray("upgrade") << true;
        QTest::newRow("listed") << QByteArray("keep-alive, Upgrade") << QByteArray("upgrade")
                                << true;
        QTest::newRow("spaces") << QByteArray(" keep-alive ,\tupgrade ") << QByteArray("upgrade")
                                << true;
        QTest::newRow("empty elements")
            << QByteArray(",,upgrade,") << QByteArray("upgrade") << true;
        QTest::newRow("prefix only") << QByteArray("upgraded") << QByteArray("upgrade") << false;
        QTest::newRow("inside") << QByteArray("x-upgrade, close") << QByteArray("upgrade") << false;
        QTest::newRow("empty") << QByteArray() << QByteArray("upgrade") << false;
    }
    void tokens()
    {
        QFETCH(QByteArray, value);
        QFETCH(QByteArray, token);
        QFETCH(bool, found);
        QCOMPARE(hasToken(value, token), found);
    }

    void webSocketUpgrade()
    {
        const HeaderList asks{
            {"Host", "x"}, {"Connection", "keep-alive, Upgrade"}, {"upgrade", "WebSocket"}};
        QVERIFY(asksWebSocketUpgrade(asks));
        // The Connection list may be split over two fields.
        QVERIFY(asksWebSocketUpgrade(
            {{"Connection", "keep-alive"}, {"Connection", "upgrade"}, {"Upgrade", "websocket"}}));
        QVERIFY(!asksWebSocketUpgrade({{"Upgrade", "websocket"}}));
        QVERIFY(!asksWebSocketUpgrade({{"Connection", "upgrade"}, {"Upgrade", "h2c"}}));
    }

    void caseInsensitive()
    {
        QVERIFY(equalsNoCase("Content-Length", "content-length"));
        QVERIFY(!equalsNoCase("content-length", "content-lengt"));
        QCOMPARE(headerValue({{"A", "1"}, {"x-ID", "2"}}, "X-Id"), QByteArray("2"));
    }
};

QTEST_APPLESS_MAIN(TestWireHttp1)
#include "tst_wire_http1.moc"
