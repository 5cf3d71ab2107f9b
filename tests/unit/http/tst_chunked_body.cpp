// SPDX-License-Identifier: GPL-3.0-or-later
// ChunkedBodyValidator: every framing it accepts and every refusal, byte by byte; the
// verdict never depends on how the bytes were split; and wire/'s hexValue it reads sizes with.

#include "http/chunkedbody.h"
#include "wire/hex.h"

#include <QtTest>

using slp::ChunkedBodyValidator;
using Result = ChunkedBodyValidator::Result;

class TestChunkedBody : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void hexDigits()
    {
        const QByteArray lower = "0123456789abcdef";
        const QByteArray upper = "0123456789ABCDEF";
        for (int b = 0; b < 256; ++b) {
            const char c = char(b);
            const qsizetype expected = lower.contains(c) ? lower.indexOf(c) : upper.indexOf(c);
            QCOMPARE(slp::hexValue(c), int(expected));
        }
    }

    void accepted_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<qint64>("dataBytes");
        QTest::newRow("one chunk") << QByteArray("5\r\nhello\r\n0\r\n\r\n") << qint64(5);
        QTest::newRow("hex either case")
            << QByteArray("A\r\n0123456789\r\na\r\n0123456789\r\n1F\r\n") + QByteArray(31, 'x') +
                   "\r\n0\r\n\r\n"
            << qint64(51);
        QTest::newRow("leading zeros") << QByteArray("0005\r\nhello\r\n000\r\n\r\n") << qint64(5);
        QTest::newRow("extension") << QByteArray("5;a=b;c\r\nhello\r\n0;z\r\n\r\n") << qint64(5);
        QTest::newRow("spaces and tabs after the size")
            << QByteArray("5 \t ;x\r\nhello\r\n3  \r\nabc\r\n0\r\n\r\n") << qint64(8);
        QTest::newRow("CR and LF inside data")
            << QByteArray("4\r\n\r\n\r\n\r\n0\r\n\r\n") << qint64(4);
        QTest::newRow("empty body") << QByteArray("0\r\n\r\n") << qint64(0);
    }

    void accepted()
    {
        QFETCH(QByteArray, body);
        QFETCH(qint64, dataBytes);
        ChunkedBodyValidator v;
        qsizetype consumed = -1;
        // What follows the body is the next request: not consumed.
        QCOMPARE(v.feed(body + "GET / HTTP/1.1\r\n", &consumed), Result::Done);
        QCOMPARE(consumed, body.size());
        QCOMPARE(v.dataBytes(), dataBytes);
        QCOMPARE(v.wireBytes(), qint64(body.size()));
        QVERIFY(v.error().isEmpty());
    }

    void refused_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QByteArray>("error");
        QTest::addColumn<qint64>("wireBytes"); // the bytes before the refused one
        QTest::newRow("no size") << QByteArray("\r\n")
                                 << QByteArray("chunk size is not hexadecimal") << qint64(0);
        QTest::newRow("0x0") << QByteArray("0x0\r\n\r\n")
                             << QByteArray("chunk size is not hexadecimal") << qint64(1);
        QTest::newRow("sign") << QByteArray("+5\r\n") << QByteArray("chunk size is not hexadecimal")
                              << qint64(0);
        QTest::newRow("16 digits") << QByteArray("1000000000000000\r\n")
                                   << QByteArray("chunk size too long") << qint64(15);
        QTest::newRow("junk after the size")
            << QByteArray("5 x\r\n") << QByteArray("junk after chunk size") << qint64(2);
        QTest::newRow("LF in an extension")
            << QByteArray("5;a\nhello") << QByteArray("bad chunk extension") << qint64(3);
        QTest::newRow("NUL in an extension") << QByteArray("5;a", 3) + QByteArray(1, '\0')
                                             << QByteArray("bad chunk extension") << qint64(3);
        QTest::newRow("bare CR after the size")
            << QByteArray("5\rhello") << QByteArray("chunk size line must end with CRLF")
            << qint64(2);
        QTest::newRow("bare LF after the size")
            << QByteArray("5\nhello") << QByteArray("chunk size is not hexadecimal") << qint64(1);
        QTest::newRow("data longer than its size")
            << QByteArray("5\r\nhelloX\r\n") << QByteArray("chunk data longer than its size")
            << qint64(8);
        QTest::newRow("data without its LF")
            << QByteArray("5\r\nhello\rX") << QByteArray("chunk data must end with CRLF")
            << qint64(9);
        QTest::newRow("trailer field")
            << QByteArray("5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n")
            << QByteArray("trailer fields are not accepted") << qint64(13);
        QTest::newRow("smuggled request as trailer")
            << QByteArray("0\r\nGET /admin HTTP/1.1\r\nHost: x\r\n\r\n")
            << QByteArray("trailer fields are not accepted") << qint64(3);
        QTest::newRow("last CRLF cut")
            << QByteArray("0\r\n\rX") << QByteArray("chunked body must end with CRLF") << qint64(4);
        QTest::newRow("size line over 4 KiB (spaces)")
            << QByteArray("5") + QByteArray(5000, ' ') + "\r\nhello\r\n0\r\n\r\n"
            << QByteArray("chunk size line longer than 4 KiB")
            << qint64(ChunkedBodyValidator::kMaxSizeLineBytes);
        QTest::newRow("extension over 4 KiB")
            << QByteArray("5;x=") + QByteArray(5000, 'a') + "\r\nhello\r\n0\r\n\r\n"
            << QByteArray("chunk size line longer than 4 KiB")
            << qint64(ChunkedBodyValidator::kMaxSizeLineBytes);
    }

    void refused()
    {
        QFETCH(QByteArray, body);
        QFETCH(QByteArray, error);
        QFETCH(qint64, wireBytes);
        ChunkedBodyValidator v;
        qsizetype consumed = -1;
        QCOMPARE(v.feed(body, &consumed), Result::Error);
        QCOMPARE(v.error(), error);
        QCOMPARE(v.wireBytes(), wireBytes);
        QCOMPARE(consumed, qsizetype(-1)); // not set on an error
        // Once refused, nothing more is read.
        QCOMPARE(v.feed("0\r\n\r\n"), Result::Error);
        QCOMPARE(v.wireBytes(), wireBytes);
    }

    void verdictIndependentOfSplits()
    {
        const QList<QByteArray> bodies = {"5\r\nhello\r\n0\r\n\r\n",
                                          "5;a=b\r\nhello\r\n3  \r\nabc\r\n0\r\n\r\n",
                                          "0x0\r\n\r\n",
                                          "5\r\nhello\r\n0\r\nX: y\r\n\r\n",
                                          "5\r\nhelloX\r\n0\r\n\r\n",
                                          "aB\r\n" + QByteArray(0xab, 'z') + "\r\n0\r\n\r\n"};
        for (const QByteArray &body : bodies) {
            ChunkedBodyValidator whole;
            const auto expected = whole.feed(body);
            for (qsizetype cut = 1; cut < body.size(); ++cut) {
                ChunkedBodyValidator split;
                auto result = split.feed(body.first(cut));
                if (result == Result::NeedMore)
                    result = split.feed(body.sliced(cut));
                QVERIFY2(result == expected,
                         (body.left(40) + " cut at " + QByteArray::number(cut)).constData());
                QCOMPARE(split.dataBytes(), whole.dataBytes());
                QCOMPARE(split.wireBytes(), whole.wireBytes());
                QCOMPARE(split.error(), whole.error());
            }
            if (expected == Result::Done)
                QCOMPARE(whole.wireBytes(), body.size());
        }
    }
};

QTEST_GUILESS_MAIN(TestChunkedBody)
#include "tst_chunked_body.moc"
