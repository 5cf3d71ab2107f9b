// SPDX-License-Identifier: GPL-3.0-or-later
// What the catalog keeps of a backend's entry for its model (learnedFields), from the
// `/v1/models` answers of the servers SLP fronts (data/, recorded shapes): every field but the
// ones that name the backend's model, the context window each gives, the 8 KiB bound, and
// what a hostile entry can and cannot do to SLP's answer.
#include "debugcatalog.h"
#include "discovery/modellist.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QtTest>

using namespace slp;

namespace {

QByteArray recorded(const QString &name)
{
    QFile f(QFINDTESTDATA(QStringLiteral("data/%1.json").arg(name)));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("no data/%s.json", qPrintable(name));
    return f.readAll();
}

QStringList keysOf(const QJsonObject &o)
{
    QStringList keys = o.keys();
    keys.sort();
    return keys;
}

// The entry as SLP writes it for a route `id` with `fields` learned.
QJsonObject written(const QString &id, const QJsonObject &fields,
                    std::optional<qint64> configured = std::nullopt, bool debug = false)
{
    CatalogEntry e;
    e.id = id;
    e.fields = fields;
    e.contextLength = configured ? configured : contextLengthOf(fields);
    e.discovery = QStringLiteral("discovered");
    e.timeout = QStringLiteral("1m0s");
    const QByteArray json = catalogEntryToJson(e, 1700000000, debug);
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError)
        qWarning("not JSON: %s", json.constData());
    return doc.object();
}

} // namespace

class TestModelEntries : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void eachServerKeepsWhatItShould_data();
    void eachServerKeepsWhatItShould();
    void contextLengthOrder_data();
    void contextLengthOrder();
    void configuredContextWins();
    void oversizedEntryKeepsTheContextFields();
    void controlCharactersAreEscaped();
    void idAndObjectStaySlps();
    void severalModelsKeepNoEntry();
    void numbersKeepTheirValue();
};

void TestModelEntries::eachServerKeepsWhatItShould_data()
{
    QTest::addColumn<QString>("server");
    QTest::addColumn<QString>("id");
    QTest::addColumn<QStringList>("keys"); // of the learned fields
    QTest::addColumn<qint64>("context");   // 0: none
    QTest::addColumn<QString>("ownedBy");
    QTest::newRow("vLLM") << "vllm"
                          << "Qwen/Qwen3-8B"
                          << QStringList{"created", "max_model_len", "owned_by", "permission"}
                          << qint64(32768) << "vllm";
    QTest::newRow("llama.cpp") << "llamacpp"
                               << "Qwen3-8B-Q4_K_M.gguf"
                               << QStringList{"created", "meta", "owned_by"} << qint64(16384)
                               << "llamacpp";
    QTest::newRow("llama.cpp router")
        << "llamacpp-router"
        << "qwen3-8b" << QStringList{"created", "in_cache", "owned_by", "path", "status"}
        << qint64(0) << "llamacpp";
    QTest::newRow("SGLang") << "sglang"
                            << "Qwen/Qwen3-8B"
                            << QStringList{"created", "max_model_len", "owned_by"} << qint64(40960)
                            << "sglang";
    QTest::newRow("LM Studio") << "lmstudio"
                               << "qwen3-8b" << QStringList{"owned_by"} << qint64(0)
                               << "organization_owner";
    QTest::newRow("Ollama") << "ollama"
                            << "qwen3:8b" << QStringList{"created", "owned_by"} << qint64(0)
                            << "library";
}

void TestModelEntries::eachServerKeepsWhatItShould()
{
    QFETCH(QString, server);
    QFETCH(QString, id);
    QFETCH(QStringList, keys);
    QFETCH(qint64, context);
    QFETCH(QString, ownedBy);
    const ModelList list = parseModelList(recorded(server));
    QVERIFY2(list.ok, qPrintable(list.error));
    QCOMPARE(list.ids, QStringList{id});
    QCOMPARE(keysOf(list.fields), keys); // id, object, root, parent dropped; the rest kept
    QVERIFY(!list.fieldsTrimmed);
    QCOMPARE(contextLengthOf(list.fields).value_or(0), context);

    // The entry clients get: SLP's id, the backend's owner, its fields, context_length.
    const QJsonObject o = written(QStringLiteral("my-model"), list.fields);
    QCOMPARE(o.value("id").toString(), QStringLiteral("my-model"));
    QCOMPARE(o.value("object").toString(), QStringLiteral("model"));
    QCOMPARE(o.value("owned_by").toString(), ownedBy);
    QVERIFY(o.value("created").isDouble());
    QVERIFY(!o.contains("root"));
    QVERIFY(!o.contains("parent"));
    QCOMPARE(o.value("context_length").toInteger(), context);
    QCOMPARE(o.contains("context_length"), context > 0);
    for (const QString &key : keys)
        QCOMPARE(o.value(key), list.fields.value(key)); // relayed as the backend sent it
}

void TestModelEntries::contextLengthOrder_data()
{
    QTest::addColumn<QByteArray>("fields");
    QTest::addColumn<qint64>("context"); // 0: none
    QTest::newRow("own context_length first")
        << QByteArray(R"({"context_length":8192,"max_model_len":32768,"meta":{"n_ctx":4096}})")
        << qint64(8192);
    QTest::newRow("max_model_len before meta.n_ctx")
        << QByteArray(R"({"max_model_len":32768,"meta":{"n_ctx":4096}})") << qint64(32768);
    QTest::newRow("meta.n_ctx") << QByteArray(R"({"meta":{"n_ctx":4096}})") << qint64(4096);
    QTest::newRow("none") << QByteArray(R"({"owned_by":"x"})") << qint64(0);
    QTest::newRow("own one never replaced")
        << QByteArray(R"({"context_length":"32k","max_model_len":32768})") << qint64(0);
    QTest::newRow("not positive") << QByteArray(R"({"max_model_len":0})") << qint64(0);
    QTest::newRow("not whole") << QByteArray(R"({"max_model_len":1.5})") << qint64(0);
    QTest::newRow("a string") << QByteArray(R"({"max_model_len":"32768"})") << qint64(0);
    QTest::newRow("whole in a float")
        << QByteArray(R"({"max_model_len":32768.0})") << qint64(32768);
}

void TestModelEntries::contextLengthOrder()
{
    QFETCH(QByteArray, fields);
    QFETCH(qint64, context);
    const QJsonObject o = QJsonDocument::fromJson(fields).object();
    QCOMPARE(contextLengthOf(o).value_or(0), context);
    // A backend's own context_length that is no count is relayed as it is, never overwritten.
    const QJsonObject w = written(QStringLiteral("m"), o);
    if (o.contains("context_length") && context == 0)
        QCOMPARE(w.value("context_length"), o.value("context_length"));
}

void TestModelEntries::configuredContextWins()
{
    const QJsonObject fields =
        QJsonDocument::fromJson(R"({"context_length":"32k","max_model_len":32768})").object();
    const QJsonObject o = written(QStringLiteral("m"), fields, 131072);
    QCOMPARE(o.value("context_length").toInteger(), 131072);
    QCOMPARE(o.value("max_model_len").toInteger(), 32768);
}

void TestModelEntries::oversizedEntryKeepsTheContextFields()
{
    QJsonObject entry = QJsonDocument::fromJson(recorded(QStringLiteral("vllm")))
                            .object()
                            .value("data")
                            .toArray()
                            .first()
                            .toObject();
    entry.insert("meta", QJsonObject{{"n_ctx", 8192}, {"n_vocab", 151936}});
    QJsonArray permissions;
    for (int i = 0; i < 100; ++i)
        permissions.append(entry.value("permission").toArray().first());
    entry.insert("permission", permissions);
    bool trimmed = false;
    qsizetype bytes = 0;
    const QJsonObject kept = learnedFields(entry, &trimmed, &bytes);
    QVERIFY(trimmed);
    QVERIFY2(bytes > kMaxLearnedEntryBytes, qPrintable(QString::number(bytes)));
    QCOMPARE(keysOf(kept), (QStringList{"created", "max_model_len", "meta", "owned_by"}));
    QCOMPARE(kept.value("meta").toObject(), (QJsonObject{{"n_ctx", 8192}}));
    QCOMPARE(contextLengthOf(kept).value_or(0), 32768);

    // Just under the bound, all of it is kept.
    entry.insert("permission", QJsonArray{});
    const QJsonObject all = learnedFields(entry, &trimmed, &bytes);
    QVERIFY(!trimmed);
    QVERIFY(all.contains("permission"));

    // What the probe's parser reports of a whole answer that is over the bound.
    QJsonObject list{{"object", "list"}, {"data", QJsonArray{entry}}};
    entry.insert("permission", permissions);
    list.insert("data", QJsonArray{entry});
    const ModelList parsed = parseModelList(QJsonDocument(list).toJson());
    QVERIFY(parsed.ok);
    QVERIFY(parsed.fieldsTrimmed);
    QVERIFY(!parsed.fields.contains("permission"));
}

void TestModelEntries::controlCharactersAreEscaped()
{
    const QByteArray body =
        "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"owned_by\":\"evil\\u001b[2J\","
        "\"note\":\"bell\\u0007 del\\u007f csi\\u009b end\"}]}";
    const ModelList list = parseModelList(body);
    QVERIFY(list.ok);
    CatalogEntry e;
    e.id = QStringLiteral("m");
    e.fields = list.fields;
    const QByteArray json = catalogEntryToJson(e, 1700000000);
    for (const char c : json)
        QVERIFY2(uchar(c) >= 0x20 && uchar(c) != 0x7f, json.constData()); // no raw control
    QVERIFY2(!json.contains("\xc2\x9b"), json.constData());               // nor a raw C1
    QVERIFY2(json.contains("\\u001b[2J"), json.constData());
    QVERIFY2(json.contains("\\u0007"), json.constData());
    QVERIFY2(json.contains("\\u007f"), json.constData());
    QVERIFY2(json.contains("\\u009b"), json.constData());
    // Escaped, not lost: a client reads back what the backend sent.
    QCOMPARE(QJsonDocument::fromJson(json).object().value("note").toString(),
             list.fields.value("note").toString());
}

void TestModelEntries::idAndObjectStaySlps()
{
    // Whatever the fields hold (learnedFields drops them; a field kept some other way would
    // not be written either), the entry's id and object are SLP's, and there is one entry.
    QJsonObject fields{{"id", "other"},          {"object", "evil"},     {"owned_by", 7},
                       {"created", "yesterday"}, {"timeout", "forever"}, {"extra", true}};
    const QJsonObject plain = written(QStringLiteral("m"), fields);
    QCOMPARE(plain.value("id").toString(), QStringLiteral("m"));
    QCOMPARE(plain.value("object").toString(), QStringLiteral("model"));
    QCOMPARE(plain.value("owned_by").toString(), QStringLiteral("slp"));    // not a string: SLP's
    QCOMPARE(plain.value("created").toInteger(), 1700000000);               // not a number: SLP's
    QCOMPARE(plain.value("timeout").toString(), QStringLiteral("forever")); // plain: relayed
    QVERIFY(plain.value("extra").toBool());
    // ?debug's own fields are never shadowed by a backend's of the same name.
    const QJsonObject debug = written(QStringLiteral("m"), fields, std::nullopt, true);
    QCOMPARE(debug.value("timeout").toString(), QStringLiteral("1m0s"));
    QCOMPARE(debug.value("discovery").toString(), QStringLiteral("discovered"));

    Catalog catalog;
    catalog.created = 1700000000;
    CatalogEntry e;
    e.id = QStringLiteral("m");
    e.fields = fields;
    catalog.entries = {e};
    const QJsonArray data =
        QJsonDocument::fromJson(catalogToJson(catalog, false)).object().value("data").toArray();
    QCOMPARE(data.size(), 1);
}

void TestModelEntries::severalModelsKeepNoEntry()
{
    const ModelList list = parseModelList(
        R"({"object":"list","data":[{"id":"a","max_model_len":1},{"id":"b","max_model_len":2}]})");
    QVERIFY(list.ok);
    QCOMPARE(list.count, 2);
    QVERIFY(list.fields.isEmpty()); // ambiguous: the last good entry stays with the last name
}

void TestModelEntries::numbersKeepTheirValue()
{
    const ModelList list = parseModelList(
        R"({"data":[{"id":"m","created":1700000000,"big":9007199254740993,"ratio":0.1,)"
        R"("neg":-3,"exp":1e21,"nested":[1,{"k":null}],"flag":false}]})");
    QVERIFY(list.ok);
    CatalogEntry e;
    e.id = QStringLiteral("m");
    e.fields = list.fields;
    const QByteArray json = catalogEntryToJson(e, 1);
    QVERIFY2(json.contains("\"created\":1700000000"), json.constData());
    QVERIFY2(json.contains("\"big\":9007199254740993"), json.constData()); // kept exact
    QVERIFY2(json.contains("\"ratio\":0.1"), json.constData());
    QVERIFY2(json.contains("\"neg\":-3"), json.constData());
    QVERIFY2(json.contains("\"nested\":[1,{\"k\":null}]"), json.constData());
    QVERIFY2(json.contains("\"flag\":false"), json.constData());
    QVERIFY(!QJsonDocument::fromJson(json).isNull());
}

QTEST_GUILESS_MAIN(TestModelEntries)
#include "tst_model_entries.moc"
