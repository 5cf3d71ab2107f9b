// SPDX-License-Identifier: GPL-3.0-or-later
// writeDirect on real 127.0.0.1 sockets: a body larger than the kernel takes at once arrives
// whole and in order, the part Qt keeps shares the caller's buffer (no second copy) yet is
// unaffected when the caller changes or drops its own, and raw data is copied, not borrowed;
// a ByteChain (a renamed body: slices of the client's block around a new value) goes out in
// order, in gather writes, with what Qt keeps still shared.
#include "net/directwrite.h"

#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

#include <memory>

namespace {

QByteArray pattern(qsizetype size)
{
    QByteArray out(size, Qt::Uninitialized);
    for (qsizetype i = 0; i < size; ++i)
        out[i] = char('a' + (i * 7 + i / 4093) % 26);
    return out;
}

} // namespace

class TestDirectWrite : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void largeBodyArrivesWholeAndSharesItsTail();
    void callerChangingItsBufferDoesNotReachTheWire();
    void rawDataIsCopiedNotBorrowed();
    void chainArrivesInOrderAndStaysShared();
    void chainAfterQtHoldsBytesQueuesBehindThem();

private:
    // Reads everything the client sends until `size` bytes arrived (bounded).
    QByteArray readAll(qsizetype size);

    QTcpServer m_server;
    std::unique_ptr<QTcpSocket> m_client;
    QTcpSocket *m_peer = nullptr;
};

void TestDirectWrite::init()
{
    QVERIFY(m_server.listen(QHostAddress::LocalHost, 0));
    m_client = std::make_unique<QTcpSocket>();
    m_client->connectToHost(QHostAddress::LocalHost, m_server.serverPort());
    QVERIFY(m_client->waitForConnected(5000));
    QVERIFY(m_server.waitForNewConnection(5000));
    m_peer = m_server.nextPendingConnection();
    QVERIFY(m_peer);
}

void TestDirectWrite::cleanup()
{
    m_client.reset();
    m_server.close();
}

QByteArray TestDirectWrite::readAll(qsizetype size)
{
    QByteArray got;
    (void)QTest::qWaitFor(
        [&] {
            got += m_peer->readAll();
            return got.size() >= size;
        },
        10000);
    return got;
}

void TestDirectWrite::largeBodyArrivesWholeAndSharesItsTail()
{
    const QByteArray body = pattern(16 * 1024 * 1024); // more than loopback's buffers take
    const qint64 direct = slp::writeDirect(m_client.get(), body);
    QVERIFY2(direct > 0 && direct < body.size(), qPrintable(QString::number(direct)));
    QCOMPARE(m_client->bytesToWrite(), body.size() - direct); // Qt holds the rest
    QVERIFY(!body.isDetached()); // ... in the caller's own block, shared
    QCOMPARE(readAll(body.size()), body);
}

void TestDirectWrite::callerChangingItsBufferDoesNotReachTheWire()
{
    QByteArray body = pattern(16 * 1024 * 1024);
    const QByteArray expected = body;
    const qint64 direct = slp::writeDirect(m_client.get(), body);
    QVERIFY(direct < body.size());
    body.fill('X'); // detaches: Qt's reference keeps the bytes as they were written
    body.clear();
    QCOMPARE(readAll(expected.size()), expected);
}

void TestDirectWrite::rawDataIsCopiedNotBorrowed()
{
    auto storage = std::make_unique<QByteArray>(pattern(16 * 1024 * 1024));
    const QByteArray expected(storage->constData(), storage->size()); // a copy of its own
    const QByteArray raw = QByteArray::fromRawData(storage->constData(), storage->size());
    const qint64 direct = slp::writeDirect(m_client.get(), raw);
    QVERIFY(direct < raw.size());
    storage->fill('X'); // the raw bytes' owner reuses them at once
    QCOMPARE(readAll(expected.size()), expected);
}

void TestDirectWrite::chainArrivesInOrderAndStaysShared()
{
    const QByteArray body = pattern(24 * 1024 * 1024);
    const qsizetype at = 9 * 1024 * 1024;
    const slp::ByteChain chain =
        slp::ByteChain::edited(body, {{at, 5, QByteArrayLiteral("\"renamed-model\"")}});
    slp::ByteChain request(QByteArrayLiteral("POST / HTTP/1.1\r\n\r\n"));
    request.append(chain);
    const qint64 direct = slp::writeDirect(m_client.get(), request);
    QVERIFY2(direct > 0 && direct < request.size(), qPrintable(QString::number(direct)));
    QCOMPARE(m_client->bytesToWrite(), request.size() - direct);
    QVERIFY(!body.isDetached()); // the slices Qt holds are the caller's block
    QCOMPARE(readAll(request.size()), request.joined());
}

void TestDirectWrite::chainAfterQtHoldsBytesQueuesBehindThem()
{
    const QByteArray first = pattern(16 * 1024 * 1024);
    const qint64 direct = slp::writeDirect(m_client.get(), first);
    QVERIFY(direct < first.size()); // Qt holds the rest: the chain must not jump the queue
    slp::ByteChain second(QByteArrayLiteral("head;"));
    second.append(pattern(100 * 1024));
    QCOMPARE(slp::writeDirect(m_client.get(), second), 0);
    QCOMPARE(readAll(first.size() + second.size()), first + second.joined());
}

QTEST_GUILESS_MAIN(TestDirectWrite)
#include "tst_direct_write.moc"
