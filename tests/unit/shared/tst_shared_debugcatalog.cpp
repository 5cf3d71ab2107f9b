// SPDX-License-Identifier: GPL-3.0-or-later
#include "debugcatalog.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTimeZone>
#include <QtTest>

using namespace slp;

namespace {

Catalog sampleCatalog()
{
    Catalog c;
    c.created = 1717200000;
    CatalogEntry pinned;
    pinned.id = u"mistral-small-4"_qs;
    pinned.upstreamModel = u"Some-Upstream-Name"_qs;
    pinned.discovery = u"pinned"_qs;
    pinned.timeout = u"1m0s"_qs;
    pinned.retry = true;
    CatalogEntry discovered;
    discovered.id = u"qwen"_qs;
    discovered.upstreamModel = u"Qwen/Qwen3-32B"_qs;
    discovered.discovery = u"discovered"_qs;
    discovered.lastProbe = u"ok"_qs;
    discovered.lastProbeAt = QDateTime(QDate(2024, 6, 1), QTime(12, 34, 56), Qt::UTC);
    discovered.timeout = u"2m0s"_qs;
    discovered.aggregate = true;
    discovered.streamIdleTimeout = u"1s"_qs;
    discovered.sseKeepalive = u"400ms"_qs;
    CatalogEntry pending;
    pending.id = u"qwen-edited"_qs;
    pending.discovery = u"pending"_qs;
    pending.lastProbe = u"error"_qs;
    pending.lastProbeAt = QDateTime(QDate(2024, 6, 1), QTime(12, 0, 0), Qt::UTC);
    pending.timeout = u"5m0s"_qs;
    c.entries = {pinned, discovered, pending};
    return c;
}

void compareEntries(const CatalogEntry &a, const CatalogEntry &b)
{
    QCOMPARE(a.id, b.id);
    QCOMPARE(a.upstreamModel, b.upstreamModel);
    QCOMPARE(a.discovery, b.discovery);
    QCOMPARE(a.lastProbe, b.lastProbe);
    QCOMPARE(a.lastProbeAt, b.lastProbeAt);
    QCOMPARE(a.timeout, b.timeout);
    QCOMPARE(a.retry, b.retry);
    QCOMPARE(a.aggregate, b.aggregate);
    QCOMPARE(a.streamIdleTimeout, b.streamIdleTimeout);
    QCOMPARE(a.sseKeepalive, b.sseKeepalive);
}

QStringList keysInOrder(const QByteArray &entryJson)
{
    // The order as written: QJsonObject would sort them.
    QStringList keys;
    static const QRegularExpression key(QStringLiteral("\"([a-z_]+)\":"));
    auto it = key.globalMatch(QString::fromUtf8(entryJson));
    while (it.hasNext())
        keys << it.next().captured(1);
    return keys;
}

} // namespace

class TestDebugCatalog : public QObject
{
    Q_OBJECT

private slots:
    void plainForm();
    void debugForm();
    void keyOrder();
    void omission();
    void roundTripDebug();
    void roundTripPlain();
    void emptyCatalog();
    void oddIds_data();
    void oddIds();
    void rejects_data();
    void rejects();
    void lastProbeAtParsing();
    void routeHealth();
    void routeHealthRejects_data();
    void routeHealthRejects();
    void debugRequestedTable_data();
    void debugRequestedTable();
};

void TestDebugCatalog::plainForm()
{
    const QByteArray json = catalogToJson(sampleCatalog(), false);
    const QJsonDocument doc = QJsonDocument::fromJson(json);
    QVERIFY(doc.isObject());
    QCOMPARE(doc.object().value("object").toString(), u"list"_qs);
    const QJsonArray data = doc.object().value("data").toArray();
    QCOMPARE(data.size(), 3);
    for (const QJsonValue &v : data) {
        const QJsonObject o = v.toObject();
        QCOMPARE(o.keys(), QStringList({u"created"_qs, u"id"_qs, u"object"_qs, u"owned_by"_qs}));
        QCOMPARE(o.value("object").toString(), u"model"_qs);
        QCOMPARE(o.value("owned_by").toString(), u"slp"_qs);
        QCOMPARE(o.value("created").toInteger(), 1717200000);
    }
    QCOMPARE(data.at(0).toObject().value("id").toString(), u"mistral-small-4"_qs);
    QVERIFY(!json.contains("http"));
}

void TestDebugCatalog::debugForm()
{
    const QByteArray json = catalogToJson(sampleCatalog(), true);
    const QJsonArray data = QJsonDocument::fromJson(json).object().value("data").toArray();
    QCOMPARE(data.size(), 3);
    const QJsonObject pinned = data.at(0).toObject();
    QCOMPARE(pinned.value("upstream_model").toString(), u"Some-Upstream-Name"_qs);
    QCOMPARE(pinned.value("discovery").toString(), u"pinned"_qs);
    QCOMPARE(pinned.value("timeout").toString(), u"1m0s"_qs);
    QCOMPARE(pinned.value("retry").toBool(), true);
    QCOMPARE(pinned.value("aggregate").toBool(), false);
    QCOMPARE(pinned.value("stream_idle_timeout").toString(), u"0s"_qs); // off
    QCOMPARE(pinned.value("sse_keepalive").toString(), u"0s"_qs);
    const QJsonObject discovered = data.at(1).toObject();
    QCOMPARE(discovered.value("last_probe").toString(), u"ok"_qs);
    QCOMPARE(discovered.value("last_probe_at").toString(), u"2024-06-01T12:34:56Z"_qs);
    QCOMPARE(discovered.value("aggregate").toBool(), true);
    QCOMPARE(discovered.value("stream_idle_timeout").toString(), u"1s"_qs);
    QCOMPARE(discovered.value("sse_keepalive").toString(), u"400ms"_qs);
    QVERIFY(!json.contains("http"));
    QVERIFY(!json.contains("url"));
}

void TestDebugCatalog::keyOrder()
{
    const QByteArray json = catalogToJson(sampleCatalog(), true);
    const QList<QByteArray> lines = json.split('\n');
    // {"object":"list","data":[ / entry / entry / entry / ]}
    QCOMPARE(lines.size(), 6);
    QCOMPARE(keysInOrder(lines[2]),
             QStringList({u"id"_qs, u"object"_qs, u"created"_qs, u"owned_by"_qs,
                          u"upstream_model"_qs, u"discovery"_qs, u"last_probe"_qs,
                          u"last_probe_at"_qs, u"timeout"_qs, u"retry"_qs, u"aggregate"_qs,
                          u"stream_idle_timeout"_qs, u"sse_keepalive"_qs}));
    QCOMPARE(lines[2], QByteArray(R"({"id":"qwen","object":"model","created":1717200000,)"
                                  R"("owned_by":"slp","upstream_model":"Qwen/Qwen3-32B",)"
                                  R"("discovery":"discovered","last_probe":"ok",)"
                                  R"("last_probe_at":"2024-06-01T12:34:56Z","timeout":"2m0s",)"
                                  R"("retry":false,"aggregate":true,)"
                                  R"("stream_idle_timeout":"1s","sse_keepalive":"400ms"},)"));
    const QByteArray plain = catalogToJson(sampleCatalog(), false);
    QCOMPARE(plain.split('\n').at(1),
             QByteArray(R"({"id":"mistral-small-4","object":"model","created":1717200000,)"
                        R"("owned_by":"slp"},)"));
}

void TestDebugCatalog::omission()
{
    const QByteArray json = catalogToJson(sampleCatalog(), true);
    const QJsonArray data = QJsonDocument::fromJson(json).object().value("data").toArray();
    // pinned: never probed -> no last_probe / last_probe_at
    QVERIFY(!data.at(0).toObject().contains("last_probe"));
    QVERIFY(!data.at(0).toObject().contains("last_probe_at"));
    // pending: upstream unknown -> no upstream_model; probed (error) -> both probe fields
    const QJsonObject pending = data.at(2).toObject();
    QVERIFY(!pending.contains("upstream_model"));
    QCOMPARE(pending.value("last_probe").toString(), u"error"_qs);
    QCOMPARE(pending.value("last_probe_at").toString(), u"2024-06-01T12:00:00Z"_qs);
    // The always-present debug fields
    for (const QJsonValue &v : data)
        for (const char *k :
             {"discovery", "timeout", "retry", "aggregate", "stream_idle_timeout", "sse_keepalive"})
            QVERIFY2(v.toObject().contains(k), k);
    // A local-time QDateTime is written in UTC, seconds only.
    Catalog c;
    CatalogEntry e;
    e.id = u"x"_qs;
    e.lastProbe = u"ok"_qs;
    e.lastProbeAt = QDateTime(QDate(2024, 1, 2), QTime(3, 4, 5, 678), QTimeZone(3600));
    c.entries = {e};
    QVERIFY(catalogToJson(c, true).contains(R"("last_probe_at":"2024-01-02T02:04:05Z")"));
}

void TestDebugCatalog::roundTripDebug()
{
    const Catalog c = sampleCatalog();
    QString error;
    const auto back = catalogFromJson(catalogToJson(c, true), &error);
    QVERIFY2(back, qPrintable(error));
    QCOMPARE(back->created, c.created);
    QCOMPARE(back->entries.size(), c.entries.size());
    for (int i = 0; i < c.entries.size(); ++i)
        compareEntries(back->entries[i], c.entries[i]);
    QCOMPARE(back->entries[1].lastProbeAt.timeSpec(), Qt::UTC);
}

void TestDebugCatalog::roundTripPlain()
{
    QString error;
    const auto back = catalogFromJson(catalogToJson(sampleCatalog(), false), &error);
    QVERIFY2(back, qPrintable(error));
    QCOMPARE(back->created, 1717200000);
    QCOMPARE(back->entries.size(), 3);
    CatalogEntry expected;
    expected.id = u"qwen"_qs;
    compareEntries(back->entries[1], expected); // only the id survives the plain form
}

void TestDebugCatalog::emptyCatalog()
{
    const QByteArray json = catalogToJson(Catalog{}, true);
    QCOMPARE(json, QByteArray("{\"object\":\"list\",\"data\":[]}\n"));
    const auto back = catalogFromJson(json);
    QVERIFY(back);
    QVERIFY(back->entries.isEmpty());
}

void TestDebugCatalog::oddIds_data()
{
    QTest::addColumn<QString>("id");
    QTest::newRow("quote") << u"a\"b"_qs;
    QTest::newRow("backslash") << u"a\\b"_qs;
    QTest::newRow("slash") << u"org/model:tag"_qs;
    QTest::newRow("controls") << u"a\nb\tc\rd"_qs + QChar(0) + QChar(0x1f);
    QTest::newRow("unicode") << QString::fromUtf8("m\xC3\xBC-\xE4\xB8\xAD-\xF0\x9F\x98\x80");
    QTest::newRow("json-looking") << u"\"},{\"id\":\"evil"_qs;
    QTest::newRow("empty") << QString();
    QTest::newRow("DEL and U+2028") << QString(QChar(0x7f)) + QChar(0x2028);
}

void TestDebugCatalog::oddIds()
{
    QFETCH(QString, id);
    Catalog c;
    CatalogEntry e;
    e.id = id;
    e.upstreamModel = id + u"-up"_qs;
    e.discovery = u"discovered"_qs;
    e.timeout = u"60s"_qs;
    c.entries = {e};
    for (const bool debug : {false, true}) {
        const QByteArray json = catalogToJson(c, debug);
        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(json, &err);
        QVERIFY2(err.error == QJsonParseError::NoError, qPrintable(err.errorString()));
        const QJsonArray data = doc.object().value("data").toArray();
        QCOMPARE(data.size(), 1);
        QCOMPARE(data.at(0).toObject().value("id").toString(), id);
        for (const char ch : json) // control characters never appear raw (only our '\n's)
            QVERIFY(uchar(ch) >= 0x20 || ch == '\n');
        const auto back = catalogFromJson(json);
        QVERIFY(back);
        QCOMPARE(back->entries.value(0).id, id);
        if (debug)
            QCOMPARE(back->entries.value(0).upstreamModel, e.upstreamModel);
    }
}

void TestDebugCatalog::rejects_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("reason");
    QTest::newRow("not json") << QByteArray("nope") << u"not JSON"_qs;
    QTest::newRow("array") << QByteArray("[]") << u"not a JSON object"_qs;
    QTest::newRow("error object") << QByteArray(R"({"error":{"message":"x"}})") << u"\"object\""_qs;
    QTest::newRow("data missing") << QByteArray(R"({"object":"list"})") << u"\"data\""_qs;
    QTest::newRow("entry not object")
        << QByteArray(R"({"object":"list","data":[1]})") << u"data[0] is not an object"_qs;
    QTest::newRow("id missing") << QByteArray(R"({"object":"list","data":[{"object":"model"}]})")
                                << u"data[0].id"_qs;
    QTest::newRow("id number") << QByteArray(R"({"object":"list","data":[{"id":1}]})")
                               << u"data[0].id"_qs;
    QTest::newRow("retry string")
        << QByteArray(R"({"object":"list","data":[{"id":"a"},{"id":"b","retry":"yes"}]})")
        << u"data[1].retry is not a boolean"_qs;
    QTest::newRow("discovery number")
        << QByteArray(R"({"object":"list","data":[{"id":"a","discovery":3}]})")
        << u"data[0].discovery is not a string"_qs;
    QTest::newRow("bad time")
        << QByteArray(R"({"object":"list","data":[{"id":"a","last_probe_at":"yesterday"}]})")
        << u"last_probe_at"_qs;
    QTest::newRow("created string")
        << QByteArray(R"({"object":"list","data":[{"id":"a","created":"now"}]})") << u"created"_qs;
}

void TestDebugCatalog::rejects()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, reason);
    QString error;
    QVERIFY(!catalogFromJson(json, &error));
    QVERIFY2(error.contains(reason), qPrintable(error));
    QVERIFY(!catalogFromJson(json)); // a null error pointer is fine
}

void TestDebugCatalog::lastProbeAtParsing()
{
    // Other writers may use fractional seconds or an offset; both read back as UTC.
    const auto c = catalogFromJson(
        R"({"object":"list","data":[{"id":"a","last_probe_at":"2024-06-01T14:34:56.5+02:00"},)"
        R"({"id":"b","unknown_field":[1,2],"last_probe_at":"2024-06-01T12:34:56Z"}]})");
    QVERIFY(c);
    QCOMPARE(c->entries[0].lastProbeAt,
             QDateTime(QDate(2024, 6, 1), QTime(12, 34, 56, 500), Qt::UTC));
    QCOMPARE(c->entries[1].lastProbeAt, QDateTime(QDate(2024, 6, 1), QTime(12, 34, 56), Qt::UTC));
}

void TestDebugCatalog::debugRequestedTable_data()
{
    QTest::addColumn<bool>("present");
    QTest::addColumn<QString>("value");
    QTest::addColumn<bool>("debug");
    QTest::newRow("absent") << false << QString() << false;
    QTest::newRow("absent with value") << false << u"1"_qs << false;
    QTest::newRow("?debug") << true << QString() << true;
    QTest::newRow("?debug=") << true << u""_qs << true;
    QTest::newRow("1") << true << u"1"_qs << true;
    QTest::newRow("yes") << true << u"yes"_qs << true;
    QTest::newRow("true") << true << u"true"_qs << true;
    QTest::newRow("on") << true << u"on"_qs << true;
    QTest::newRow("0") << true << u"0"_qs << false;
    QTest::newRow("false") << true << u"false"_qs << false;
    QTest::newRow("FALSE") << true << u"FALSE"_qs << false;
    QTest::newRow("False") << true << u"False"_qs << false;
    QTest::newRow("00") << true << u"00"_qs << true;
    QTest::newRow("no") << true << u"no"_qs << true;
    QTest::newRow("falsey") << true << u"falsey"_qs << true;
}

void TestDebugCatalog::debugRequestedTable()
{
    QFETCH(bool, present);
    QFETCH(QString, value);
    QFETCH(bool, debug);
    QCOMPARE(debugRequested(present, value), debug);
}

void TestDebugCatalog::routeHealth()
{
    Catalog c;
    CatalogEntry e;
    e.id = u"qwen"_qs;
    e.discovery = u"discovered"_qs;
    e.state = u"stalled"_qs;
    e.lastFailure = RouteFailure{QDateTime(QDate(2026, 12, 5), QTime(1, 2, 3), Qt::UTC),
                                 u"stream idle 30s after 1834 bytes"_qs, u"slpq0123"_qs};
    c.entries = {e};
    const QByteArray json = catalogToJson(c, true);
    QVERIFY(json.contains(R"("state":"stalled","last_failure":{"at":"2026-12-05T01:02:03Z",)"
                          R"("what":"stream idle 30s after 1834 bytes","request_id":"slpq0123"})"));
    QVERIFY(!catalogToJson(c, false).contains("state"));
    QString error;
    const auto back = catalogFromJson(json, &error);
    QVERIFY2(back, qPrintable(error));
    QCOMPARE(back->entries.at(0).state, e.state);
    QVERIFY(back->entries.at(0).lastFailure);
    QCOMPARE(back->entries.at(0).lastFailure->at, e.lastFailure->at);
    QCOMPARE(back->entries.at(0).lastFailure->what, e.lastFailure->what);
    QCOMPARE(back->entries.at(0).lastFailure->requestId, e.lastFailure->requestId);
    // Omitted when unknown; null reads as none.
    e.state.clear();
    e.lastFailure.reset();
    c.entries = {e};
    QVERIFY(!catalogToJson(c, true).contains("state"));
    QVERIFY(!catalogToJson(c, true).contains("last_failure"));
    const auto nulled =
        catalogFromJson(R"({"object":"list","data":[{"id":"a","last_failure":null}]})");
    QVERIFY(nulled);
    QVERIFY(!nulled->entries.at(0).lastFailure);
}

void TestDebugCatalog::routeHealthRejects_data()
{
    QTest::addColumn<QByteArray>("entry");
    QTest::addColumn<QString>("message");
    QTest::newRow("state not a string") << QByteArray(R"("state":1)") << u"data[0].state"_qs;
    QTest::newRow("failure not an object")
        << QByteArray(R"("last_failure":"x")") << u"data[0].last_failure is not an object"_qs;
    QTest::newRow("failure without id")
        << QByteArray(R"("last_failure":{"at":"2026-12-05T01:02:03Z","what":"x"})")
        << u"needs the strings at, what and request_id"_qs;
    QTest::newRow("failure with a bad time")
        << QByteArray(R"("last_failure":{"at":"yesterday","what":"x","request_id":"y"})")
        << u"data[0].last_failure.at is not an RFC 3339 time: yesterday"_qs;
}

void TestDebugCatalog::routeHealthRejects()
{
    QFETCH(QByteArray, entry);
    QFETCH(QString, message);
    QString error;
    QVERIFY(!catalogFromJson(R"({"object":"list","data":[{"id":"a",)" + entry + "}]}", &error));
    QVERIFY2(error.contains(message), qPrintable(error));
}

QTEST_APPLESS_MAIN(TestDebugCatalog)
#include "tst_shared_debugcatalog.moc"
