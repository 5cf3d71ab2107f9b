// SPDX-License-Identifier: GPL-3.0-or-later
// max_buffered_body_bytes: request bodies held in memory at once, every connection together.
// A body that does not fit waits (its connection stops reading) and is let in, in arrival
// order, as earlier bodies' responses end; one larger than the whole budget gets a 413
// naming the key; one that waits past its body deadline gets a 408 saying why. The mock
// upstream holds each answer for X-Mock-Delay-Ms, and with it the body's memory.
#include "blockingclient.h"
#include "prometheustext.h"
#include "testsupport.h"

#include <QElapsedTimer>
#include <QtTest>

#include <future>

using namespace slp::test;

namespace {

constexpr qint64 kMiB = 1024 * 1024;

QString budgetConfig(const QString &upstreamUrl)
{
    return QStringLiteral(R"(max_body_bytes: 16MiB
max_buffered_body_bytes: 2MiB
idle_timeout: 3s
backends:
  - name: good
    url: %1
    model: good-upstream
    timeout: 20s
)")
        .arg(upstreamUrl);
}

// A chat request whose body is `bytes` long, answered after `delayMs`.
QByteArray chat(qint64 bytes, int delayMs, const QByteArray &tag)
{
    const QByteArray head = R"({"model":"good","messages":[{"role":"user","content":")";
    const QByteArray tail = R"("}]})";
    const QByteArray body =
        head + tag + QByteArray(bytes - head.size() - tag.size() - tail.size(), 'a') + tail;
    return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
           "Content-Type: application/json\r\nX-Mock-Delay-Ms: " +
           QByteArray::number(delayMs) + "\r\nContent-Length: " + QByteArray::number(body.size()) +
           "\r\n\r\n" + body;
}

struct Timed
{
    BlockingAnswer answer;
    qint64 doneMs = 0; // since the test's clock started
};

} // namespace

class TestBodyBudget : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void waitingBodiesGoInArrivalOrder();
    void bodyLargerThanTheBudgetIs413();
    void waitPastTheBodyDeadlineIs408();

private:
    std::future<Timed> sendLater(const QByteArray &request, const QElapsedTimer &clock);
    double metric(const QString &name);

    MockUpstream m_mock;
    SlpDaemon m_slp;
};

void TestBodyBudget::initTestCase()
{
    QVERIFY2(m_slp.startWith(m_mock, budgetConfig), qPrintable(m_slp.errorString()));
}

std::future<Timed> TestBodyBudget::sendLater(const QByteArray &request, const QElapsedTimer &clock)
{
    const QString host = m_slp.host();
    const quint16 port = m_slp.port();
    return std::async(std::launch::async, [host, port, request, &clock] {
        Timed t;
        t.answer = sendThenRead(host, port, request, 20);
        t.doneMs = clock.elapsed();
        return t;
    });
}

double TestBodyBudget::metric(const QString &name)
{
    const HttpResult r = httpRequest("GET", m_slp.url() + QStringLiteral("/metrics"));
    const auto v = slp::findPromSample(slp::parsePromText(r.body).samples, name);
    return v ? *v : -1;
}

void TestBodyBudget::waitingBodiesGoInArrivalOrder()
{
    // A (2 MiB) fills the budget for 1.5 s; B (2 MiB) and then C (1 MiB) wait. When A's
    // answer is done, B goes first although C is smaller, and C only once B is done.
    const double pausedBefore = metric(QStringLiteral("slp_body_reads_paused_total"));
    QElapsedTimer clock;
    clock.start();
    auto a = sendLater(chat(2 * kMiB, 1500, "A"), clock);
    QTRY_COMPARE_WITH_TIMEOUT(metric(QStringLiteral("slp_buffered_body_bytes")), double(2 * kMiB),
                              5000);
    auto b = sendLater(chat(2 * kMiB, 800, "B"), clock);
    QTRY_COMPARE_WITH_TIMEOUT(metric(QStringLiteral("slp_body_reads_paused_total")),
                              pausedBefore + 1, 5000);
    auto c = sendLater(chat(1 * kMiB, 300, "C"), clock);
    QTRY_COMPARE_WITH_TIMEOUT(metric(QStringLiteral("slp_body_reads_paused_total")),
                              pausedBefore + 2, 5000);
    const Timed ta = a.get(), tb = b.get(), tc = c.get();
    for (const Timed *t : {&ta, &tb, &tc})
        QVERIFY2(t->answer.statusLine == "HTTP/1.1 200 OK", qPrintable(t->answer.describe()));
    qInfo("answers done at A %lld ms, B %lld ms, C %lld ms", ta.doneMs, tb.doneMs, tc.doneMs);
    QVERIFY(tb.doneMs >= ta.doneMs);
    QVERIFY2(tc.doneMs >= tb.doneMs, "C overtook B in the line");
    QTRY_COMPARE_WITH_TIMEOUT(metric(QStringLiteral("slp_buffered_body_bytes")), 0.0, 5000);
}

void TestBodyBudget::bodyLargerThanTheBudgetIs413()
{
    const BlockingAnswer r = sendThenRead(m_slp.host(), m_slp.port(), chat(3 * kMiB, 0, "big"));
    QVERIFY2(r.statusLine.startsWith("HTTP/1.1 413 "), qPrintable(r.describe()));
    QVERIFY2(r.raw.contains("max_buffered_body_bytes"), r.raw.constData());
}

void TestBodyBudget::waitPastTheBodyDeadlineIs408()
{
    // A holds the whole budget for 5 s; B's body deadline (idle_timeout, 3 s) passes while it
    // waits: 408, and the reason says it waited for memory.
    QElapsedTimer clock;
    clock.start();
    auto a = sendLater(chat(2 * kMiB, 5000, "A"), clock);
    QTRY_COMPARE_WITH_TIMEOUT(metric(QStringLiteral("slp_buffered_body_bytes")), double(2 * kMiB),
                              5000);
    const BlockingAnswer b = sendThenRead(m_slp.host(), m_slp.port(), chat(kMiB, 0, "B"));
    QVERIFY2(b.statusLine.startsWith("HTTP/1.1 408 "), qPrintable(b.describe()));
    QVERIFY2(b.raw.contains("waited for max_buffered_body_bytes"), b.raw.constData());
    QVERIFY2(a.get().answer.statusLine == "HTTP/1.1 200 OK", "A was served");
}

QTEST_GUILESS_MAIN(TestBodyBudget)
#include "tst_body_budget.moc"
