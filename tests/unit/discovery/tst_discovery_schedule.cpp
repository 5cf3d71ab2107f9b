// SPDX-License-Identifier: GPL-3.0-or-later
// DiscoverySchedule (docs/DECISIONS.md "Discovery": backoff_initial doubling to backoff_max until a
// name is known, then recheck; ambiguous or failed probes go back on the backoff) and
// parseModelList (a backend's GET /v1/models answer).
#include "discovery/modellist.h"

#include <QTest>

using namespace std::chrono_literals;
using slp::DiscoverySchedule;
using slp::ModelList;
using slp::parseModelList;
using slp::ProbeResult;

namespace {
qint64 msOf(DiscoverySchedule::Duration d)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}
} // namespace

class TestDiscoverySchedule : public QObject
{
    Q_OBJECT

private slots:
    void errorsDoubleToMax();
    void ambiguousBacksOffLikeErrors();
    void okRechecks();
    void okResetsBackoff();
    void maxBelowInitial();
    void defaultsFromTheDesignNote();
    void parse_data();
    void parse();
};

void TestDiscoverySchedule::errorsDoubleToMax()
{
    DiscoverySchedule s(100ms, 400ms, 300ms);
    QCOMPARE(msOf(s.currentBackoff()), 100);
    QList<qint64> waits;
    for (int i = 0; i < 6; ++i)
        waits << msOf(s.next(ProbeResult::Error));
    QCOMPARE(waits, (QList<qint64>{100, 200, 400, 400, 400, 400}));
    QCOMPARE(msOf(s.currentBackoff()), 400);

    // Not a power-of-two multiple: capped at max exactly, never past it.
    DiscoverySchedule odd(300ms, 1000ms, 5min);
    waits.clear();
    for (int i = 0; i < 5; ++i)
        waits << msOf(odd.next(ProbeResult::Error));
    QCOMPARE(waits, (QList<qint64>{300, 600, 1000, 1000, 1000}));
}

void TestDiscoverySchedule::ambiguousBacksOffLikeErrors()
{
    DiscoverySchedule s(100ms, 400ms, 300ms);
    QCOMPARE(msOf(s.next(ProbeResult::Ambiguous)), 100);
    QCOMPARE(msOf(s.next(ProbeResult::Error)), 200);
    QCOMPARE(msOf(s.next(ProbeResult::Ambiguous)), 400);
    QCOMPARE(msOf(s.next(ProbeResult::Ambiguous)), 400);
}

void TestDiscoverySchedule::okRechecks()
{
    DiscoverySchedule s(100ms, 400ms, 300ms);
    QCOMPARE(msOf(s.next(ProbeResult::Ok)), 300);
    QCOMPARE(msOf(s.next(ProbeResult::Ok)), 300);
    QCOMPARE(msOf(s.next(ProbeResult::Ok)), 300);
}

void TestDiscoverySchedule::okResetsBackoff()
{
    DiscoverySchedule s(100ms, 400ms, 300ms);
    s.next(ProbeResult::Error);
    s.next(ProbeResult::Error);
    s.next(ProbeResult::Error);
    QCOMPARE(msOf(s.currentBackoff()), 400);
    QCOMPARE(msOf(s.next(ProbeResult::Ok)), 300);
    QCOMPARE(msOf(s.currentBackoff()), 100);
    // A failure after a good probe starts the back-off afresh.
    QCOMPARE(msOf(s.next(ProbeResult::Ambiguous)), 100);
    QCOMPARE(msOf(s.next(ProbeResult::Error)), 200);
    QCOMPARE(msOf(s.next(ProbeResult::Ok)), 300);
    QCOMPARE(msOf(s.next(ProbeResult::Error)), 100);
}

void TestDiscoverySchedule::maxBelowInitial()
{
    DiscoverySchedule s(500ms, 100ms, 1s);
    QCOMPARE(msOf(s.next(ProbeResult::Error)), 500);
    QCOMPARE(msOf(s.next(ProbeResult::Error)), 500);
}

void TestDiscoverySchedule::defaultsFromTheDesignNote()
{
    // "retried indefinitely (1s backing off to 30s)", then "a five-minute check".
    DiscoverySchedule s(1s, 30s, 5min);
    QList<qint64> waits;
    for (int i = 0; i < 7; ++i)
        waits << msOf(s.next(ProbeResult::Error));
    QCOMPARE(waits, (QList<qint64>{1000, 2000, 4000, 8000, 16000, 30000, 30000}));
    QCOMPARE(msOf(s.next(ProbeResult::Ok)), 300000);
}

void TestDiscoverySchedule::parse_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QStringList>("ids");

    QTest::newRow("vLLM single")
        << QByteArray(
               R"({"object":"list","data":[{"id":"Mistral-Small-4-119B-2603-NVFP4","object":"model","created":1,"owned_by":"vllm","root":"/models/x","max_model_len":32768}]})")
        << true << QStringList{"Mistral-Small-4-119B-2603-NVFP4"};
    QTest::newRow("two, order kept")
        << QByteArray(R"({"data":[{"id":"b"},{"id":"a"}]})") << true << QStringList{"b", "a"};
    QTest::newRow("zero") << QByteArray(R"({"object":"list","data":[]})") << true << QStringList{};
    QTest::newRow("whitespace and unicode")
        << QByteArray(" \n{ \"data\" : [ { \"id\" : \"mod\\u00e8le-\\\"q\\\"\" } ] }\n") << true
        << QStringList{QStringLiteral("mod\u00e8le-\"q\"")};
    QTest::newRow("duplicates are two entries")
        << QByteArray(R"({"data":[{"id":"a"},{"id":"a"}]})") << true << QStringList{"a", "a"};
    QTest::newRow("not json") << QByteArray("not json") << false << QStringList{};
    QTest::newRow("empty body") << QByteArray() << false << QStringList{};
    QTest::newRow("html error page")
        << QByteArray("<html><body>502</body></html>") << false << QStringList{};
    QTest::newRow("truncated") << QByteArray(R"({"data":[{"id":"a"})") << false << QStringList{};
    QTest::newRow("top-level array") << QByteArray(R"([{"id":"a"}])") << false << QStringList{};
    QTest::newRow("no data") << QByteArray(R"({"object":"list"})") << false << QStringList{};
    QTest::newRow("data not an array")
        << QByteArray(R"({"data":{"id":"a"}})") << false << QStringList{};
    QTest::newRow("entry without id")
        << QByteArray(R"({"data":[{"id":"a"},{"name":"b"}]})") << false << QStringList{};
    QTest::newRow("numeric id") << QByteArray(R"({"data":[{"id":7}]})") << false << QStringList{};
    QTest::newRow("empty id") << QByteArray(R"({"data":[{"id":""}]})") << false << QStringList{};
    QTest::newRow("entry not an object")
        << QByteArray(R"({"data":["a"]})") << false << QStringList{};
    // A name SLP would log and send with every request: control characters or over 256 bytes
    // make the probe an error, never a rename.
    QTest::newRow("ESC CR BEL in an id")
        << QByteArray(R"({"data":[{"id":"red\u001b[31mRED\r\u0007"}]})") << false << QStringList{};
    QTest::newRow("C1 control in an id")
        << QByteArray(R"({"data":[{"id":"a\u0085b"}]})") << false << QStringList{};
    QTest::newRow("DEL in one of several ids")
        << QByteArray(R"({"data":[{"id":"a"},{"id":"b\u007f"}]})") << false << QStringList{};
    QTest::newRow("id of 256 bytes")
        << QByteArray(R"({"data":[{"id":")" + QByteArray(256, 'x') + R"("}]})") << true
        << QStringList{QString(256, QLatin1Char('x'))};
    QTest::newRow("id of 257 bytes")
        << QByteArray(R"({"data":[{"id":")" + QByteArray(257, 'x') + R"("}]})") << false
        << QStringList{};
    QTest::newRow("id of 129 two-byte characters")
        << (QByteArray(R"({"data":[{"id":")") + QString(129, QChar(0xe8)).toUtf8() + R"("}]})")
        << false << QStringList{};
    QTest::newRow("quotes and markup are a name")
        << QByteArray(R"({"data":[{"id":"a\"b\\c<b>d</b>"}]})") << true
        << QStringList{QStringLiteral("a\"b\\c<b>d</b>")};
}

void TestDiscoverySchedule::parse()
{
    QFETCH(QByteArray, json);
    QFETCH(bool, ok);
    QFETCH(QStringList, ids);
    const ModelList list = parseModelList(json);
    QCOMPARE(list.ok, ok);
    if (ok) {
        QVERIFY2(list.error.isEmpty(), qPrintable(list.error));
        QCOMPARE(list.ids, ids);
        QCOMPARE(list.count, ids.size());
    } else {
        QVERIFY2(!list.error.isEmpty(), "a rejection says why (it goes into the probe's log line)");
        for (const QChar c : list.error)
            QVERIFY2(c.category() != QChar::Other_Control, qPrintable(list.error));
        QVERIFY2(list.error.size() < 400, qPrintable(list.error));
    }
}

QTEST_APPLESS_MAIN(TestDiscoverySchedule)
#include "tst_discovery_schedule.moc"
