// SPDX-License-Identifier: GPL-3.0-or-later
// ByteChain: edits applied in any order give the same bytes as a copy would, the client's
// bytes stay in the client's block (slices, no copy), bad edits leave the bytes alone, and
// from() walks across pieces.
#include "wire/bytechain.h"

#include <QTest>

using namespace slp;

class TestByteChain : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void wholeIsOnePieceShared();
    void editsInAnyOrder();
    void slicesShareTheBlock();
    void badEditsLeaveBytesAlone();
    void fromWalksAcrossPieces();
    void sliceOutlivesTheOriginal();
    void rawDataIsCopied();
};

void TestByteChain::wholeIsOnePieceShared()
{
    const QByteArray body("{\"model\":\"m\"}");
    const ByteChain chain(body);
    QCOMPARE(chain.pieces().size(), 1);
    QCOMPARE(chain.pieces().front().constData(), body.constData());
    QCOMPARE(chain.size(), body.size());
    QVERIFY(ByteChain(QByteArray()).isEmpty());
    QCOMPARE(ByteChain(QByteArray()).pieces().size(), 0);
}

void TestByteChain::editsInAnyOrder()
{
    const QByteArray body("0123456789");
    const QByteArray expected("0AB23-6789X");
    const ByteChain forward = ByteChain::edited(body, {{1, 1, "AB"}, {4, 2, "-"}, {10, 0, "X"}});
    const ByteChain backward = ByteChain::edited(body, {{10, 0, "X"}, {4, 2, "-"}, {1, 1, "AB"}});
    QCOMPARE(forward.joined(), expected);
    QCOMPARE(backward.joined(), expected);
    QCOMPARE(forward.size(), expected.size());
    QCOMPARE(ByteChain::edited(body, {{0, 10, "all"}}).joined(), QByteArray("all"));
    QCOMPARE(ByteChain::edited(body, {{0, 0, "<"}}).joined(), QByteArray("<0123456789"));
}

void TestByteChain::slicesShareTheBlock()
{
    const QByteArray body(1 << 20, 'x');
    const ByteChain chain = ByteChain::edited(body, {{1000, 10, "\"new\""}});
    QCOMPARE(chain.pieces().size(), 3);
    QCOMPARE(chain.pieces().at(0).constData(), body.constData());
    QCOMPARE(chain.pieces().at(0).size(), 1000);
    QCOMPARE(chain.pieces().at(2).constData(), body.constData() + 1010);
    QCOMPARE(chain.pieces().at(2).size(), body.size() - 1010);
    QVERIFY(!body.isDetached()); // referenced by the slices
}

void TestByteChain::badEditsLeaveBytesAlone()
{
    const QByteArray body("0123456789");
    for (const QList<ByteEdit> &edits :
         {QList<ByteEdit>{{8, 5, "x"}}, QList<ByteEdit>{{-1, 1, "x"}},
          QList<ByteEdit>{{2, 3, "x"}, {4, 1, "y"}}, QList<ByteEdit>{{2, -1, "x"}}}) {
        const ByteChain chain = ByteChain::edited(body, edits);
        QCOMPARE(chain.joined(), body);
    }
    QCOMPARE(sharedSlice(body, -5, 100), body);
    QCOMPARE(sharedSlice(body, 7, 3), QByteArray());
}

void TestByteChain::fromWalksAcrossPieces()
{
    const ByteChain chain = ByteChain::edited("abcdefgh", {{3, 2, "XYZ"}}); // abc XYZ fgh
    for (qsizetype i = 0; i <= chain.size(); ++i)
        QCOMPARE(chain.from(i).joined(), chain.joined().mid(i));
    QVERIFY(chain.from(chain.size() + 5).isEmpty());
}

void TestByteChain::sliceOutlivesTheOriginal()
{
    ByteChain chain;
    {
        QByteArray body(4096, 'a');
        body[4000] = 'z';
        chain = ByteChain::edited(body, {{10, 1, "b"}});
    } // the body's own reference is gone: the slices keep the block
    QCOMPARE(chain.size(), 4096);
    QCOMPARE(chain.joined().at(4000), 'z');
    QCOMPARE(chain.joined().at(10), 'b');
}

void TestByteChain::rawDataIsCopied()
{
    QByteArray storage(100, 'r');
    const QByteArray raw = QByteArray::fromRawData(storage.constData(), storage.size());
    const QByteArray slice = sharedSlice(raw, 10, 20);
    QVERIFY(slice.constData() != storage.constData() + 10); // raw data is someone else's
    storage.fill('X');
    QCOMPARE(slice, QByteArray(10, 'r'));
}

QTEST_GUILESS_MAIN(TestByteChain)
#include "tst_byte_chain.moc"
