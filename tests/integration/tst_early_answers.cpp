// SPDX-License-Identifier: GPL-3.0-or-later
// An answer slp sends before it has read the whole request (413 on the head, 413 or 400 in
// the middle of a chunked body) must reach a client that writes its whole body before it
// reads, as most HTTP client libraries do. Closing with unread bytes makes the kernel reset
// the connection, and such a client then sees ECONNRESET instead of the answer; slp lingers
// (reads and drops the rest, bounded) so the answer arrives every time.
#include "blockingclient.h"
#include "clientedge.h"
#include "testsupport.h"

#include <QElapsedTimer>
#include <QtTest>

#include <sys/socket.h>
#include <unistd.h>

using namespace slp::test;

namespace {

constexpr qsizetype kBodyBytes = 4 * 1024 * 1024; // 64 times the limit in clientEdgeConfig

QByteArray lengthFramed()
{
    return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           "Content-Type: application/json\r\nContent-Length: " +
           QByteArray::number(kBodyBytes) + "\r\n\r\n" + QByteArray(kBodyBytes, 'a');
}

QByteArray chunked(const QByteArray &firstChunkSize)
{
    QByteArray request = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    request += firstChunkSize + "\r\n" + QByteArray(kBodyBytes, 'a') + "\r\n0\r\n\r\n";
    return request;
}

} // namespace

class TestEarlyAnswers : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void answeredBeforeTheBody_data();
    void answeredBeforeTheBody();
    void lingerEndsForASilentClient();
    void servesAfterwards();

private:
    MockUpstream m_mock;
    SlpDaemon m_slp;
};

void TestEarlyAnswers::initTestCase()
{
    QVERIFY2(m_slp.startWith(m_mock, clientEdgeConfig), qPrintable(m_slp.errorString()));
}

void TestEarlyAnswers::answeredBeforeTheBody_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("tries");
    QTest::addColumn<QByteArray>("expected");
    // The issue's case: an over-limit Content-Length, no Expect, 50 times.
    QTest::newRow("content-length over max_body_bytes")
        << lengthFramed() << 50 << QByteArray("HTTP/1.1 413 ");
    QTest::newRow("chunked body over max_body_bytes")
        << chunked(QByteArray::number(kBodyBytes, 16)) << 10 << QByteArray("HTTP/1.1 413 ");
    QTest::newRow("chunk size not hex") << chunked("zz") << 10 << QByteArray("HTTP/1.1 400 ");
}

void TestEarlyAnswers::answeredBeforeTheBody()
{
    QFETCH(QByteArray, request);
    QFETCH(int, tries);
    QFETCH(QByteArray, expected);
    int answered = 0;
    QStringList failures;
    for (int i = 0; i < tries; ++i) {
        const BlockingAnswer out = sendThenRead(m_slp.host(), m_slp.port(), request);
        if (out.statusLine.startsWith(expected))
            ++answered;
        else
            failures << out.describe();
    }
    qInfo("%d of %d tries got '%s'", answered, tries, expected.trimmed().constData());
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1String("; "))));
}

void TestEarlyAnswers::lingerEndsForASilentClient()
{
    // A client that sends part of an over-limit body, reads the 413 and its FIN, then goes
    // silent without closing: the linger gives up after its quiet time (2 s) and slp closes
    // the connection (its slp_client_connections gauge falls back to the /metrics request's
    // own connection alone). Bounded at 8 s.
    const int fd = blockingConnect(m_slp.host(), m_slp.port());
    QVERIFY(fd >= 0);
    int error = 0;
    QVERIFY(blockingSendAll(fd, lengthFramed().left(200 * 1024), &error));
    QByteArray got;
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0)
        got.append(buf, n);
    QVERIFY2(got.startsWith("HTTP/1.1 413 "), got.left(80).constData());
    QCOMPARE(n, ssize_t(0)); // the answer, then a FIN: not a reset, not the 10 s bound
    QElapsedTimer clock;
    clock.start();
    QCOMPARE(m_slp.settledClientConnections([](int open) { return open == 1; }, 8000), 1);
    ::close(fd);
    qInfo("the linger closed %lld ms after the answer", qint64(clock.elapsed()));
}

void TestEarlyAnswers::servesAfterwards()
{
    const HttpResult r = httpRequest("POST", m_slp.url() + QStringLiteral("/v1/chat/completions"),
                                     R"({"model":"good","messages":[]})");
    QCOMPARE(r.status, 200);
}

QTEST_GUILESS_MAIN(TestEarlyAnswers)
#include "tst_early_answers.moc"
