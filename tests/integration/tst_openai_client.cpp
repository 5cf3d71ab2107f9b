// SPDX-License-Identifier: GPL-3.0-or-later
// The real `openai` npm client against the real slp: list models, chat, streamed chat (also
// through an sse_keepalive route whose comments fill a silence: the stream parses and its
// content is unchanged), embeddings, and errors surfacing with their messages (maxRetries: 0,
// as a 502 would otherwise be retried twice by the client).
#include "prometheustext.h"
#include "testsupport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace slp::test;

class TestOpenAiClient : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void everyCallThroughTheClient();

private:
    void checkEntries(const QJsonObject &step);

    MockUpstream m_mock;
    SlpDaemon m_slp;
    DeadPort m_deadPort; // held for the whole suite: connections to it are refused
    quint16 m_closedPort = 0;
};

// What the client parsed of each entry: the discovered backend's fields and context_length
// (the mock is vLLM-shaped: max_model_len 32768), the pinned route's configured window, the
// edition's taken from its backend, nothing for a route nothing is known of.
void TestOpenAiClient::checkEntries(const QJsonObject &step)
{
    QVERIFY2(step.value(QStringLiteral("ok")).toBool(), QJsonDocument(step).toJson().constData());
    const QJsonObject entries = step.value(QStringLiteral("value")).toObject();
    for (const QString &id : {QStringLiteral("disc"), QStringLiteral("disc-ed")}) {
        const QJsonObject e = entries.value(id).toObject();
        QCOMPARE(e.value(QStringLiteral("id")).toString(), id);
        QCOMPARE(e.value(QStringLiteral("owned_by")).toString(), QStringLiteral("vllm"));
        QCOMPARE(e.value(QStringLiteral("max_model_len")).toInteger(), 32768);
        QCOMPARE(e.value(QStringLiteral("context_length")).toInteger(), 32768);
        QVERIFY(!e.contains(QStringLiteral("root")));
    }
    const QJsonObject pinned = entries.value(QStringLiteral("qwen")).toObject();
    QCOMPARE(pinned.value(QStringLiteral("context_length")).toInteger(), 8192);
    QCOMPARE(pinned.value(QStringLiteral("owned_by")).toString(), QStringLiteral("slp"));
    QVERIFY(!pinned.contains(QStringLiteral("max_model_len")));
    QVERIFY(!entries.value(QStringLiteral("down"))
                 .toObject()
                 .contains(QStringLiteral("context_length")));
}

void TestOpenAiClient::initTestCase()
{
    if (const QString why = nodeSkipReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    const QString missing = nodePackageMissing(QStringLiteral("openai"));
    QVERIFY2(missing.isEmpty(), qPrintable(missing));
    QVERIFY2(m_mock.start({QStringLiteral("Qwen3-8B-AWQ")}), qPrintable(m_mock.errorString()));
    m_closedPort = m_deadPort.port();
    const QString config = QStringLiteral(R"(
discovery:
  backoff_initial: 100ms
  backoff_max: 400ms
backends:
  - name: qwen
    url: %1
    model: Qwen3-8B-AWQ
    context_length: 8192
  - name: down
    url: http://127.0.0.1:%2
  - name: qwen-keep
    url: %1
    model: Qwen3-8B-AWQ
    sse_keepalive: 200ms
  - name: disc
    url: %1
editions:
  - suffix: -ed
    url: %1
    apply_to: [disc]
)")
                               .arg(m_mock.url())
                               .arg(m_closedPort);
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
    // The clients below read what discovery learned of `disc`.
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                     return httpRequest("GET", m_slp.url() + "/v1/models/disc?debug")
                         .body.contains("\"discovery\":\"discovered\"");
                 },
                 10000),
             qPrintable(m_slp.stderrText()));
}

void TestOpenAiClient::everyCallThroughTheClient()
{
    const QString script = nodeScript(QStringLiteral("openai_client.mjs"));
    const CommandResult run =
        runCommand(nodeProgram(), {script, m_slp.url() + QStringLiteral("/v1")}, 60000);
    QVERIFY2(run.started, qPrintable(run.error));
    QVERIFY2(run.exitCode == 0, run.stdErr.constData());
    const QJsonObject out = QJsonDocument::fromJson(run.stdOut).object();
    QVERIFY2(!out.isEmpty(), run.stdOut.constData());

    const QJsonObject models = out.value(QStringLiteral("models")).toObject();
    QVERIFY(models.value(QStringLiteral("ok")).toBool());
    QCOMPARE(
        models.value(QStringLiteral("value")).toVariant().toStringList(),
        QStringList({QStringLiteral("qwen"), QStringLiteral("down"), QStringLiteral("qwen-keep"),
                     QStringLiteral("disc"), QStringLiteral("disc-ed")}));
    checkEntries(out.value(QStringLiteral("entries")).toObject());
    checkEntries(out.value(QStringLiteral("retrieved")).toObject());

    const QJsonObject chat = out.value(QStringLiteral("chat")).toObject();
    QVERIFY2(chat.value(QStringLiteral("ok")).toBool(), QJsonDocument(chat).toJson().constData());
    const QJsonObject chatValue = chat.value(QStringLiteral("value")).toObject();
    // The upstream answered under its own name: the body reached it renamed.
    QCOMPARE(chatValue.value(QStringLiteral("model")).toString(), QStringLiteral("Qwen3-8B-AWQ"));
    QVERIFY(
        chatValue.value(QStringLiteral("content")).toString().contains(QStringLiteral("Hello")));
    QVERIFY(chatValue.value(QStringLiteral("usage")).isObject());

    const QJsonObject stream = out.value(QStringLiteral("stream")).toObject();
    QVERIFY2(stream.value(QStringLiteral("ok")).toBool(),
             QJsonDocument(stream).toJson().constData());
    const QJsonObject streamValue = stream.value(QStringLiteral("value")).toObject();
    QVERIFY(streamValue.value(QStringLiteral("chunks")).toInt() >= 3);
    QVERIFY(!streamValue.value(QStringLiteral("content")).toString().isEmpty());
    QVERIFY(!streamValue.value(QStringLiteral("reasoning")).toString().isEmpty());
    QCOMPARE(streamValue.value(QStringLiteral("finish")).toString(), QStringLiteral("stop"));
    QVERIFY2(streamValue.value(QStringLiteral("usage")).isObject(),
             "usage on the final chunk must reach the client");

    // Keep-alive comments are invisible to the client: the same chunks, the same text.
    const QJsonObject keepalive = out.value(QStringLiteral("keepalive")).toObject();
    const QJsonObject reference = out.value(QStringLiteral("keepaliveReference")).toObject();
    QVERIFY2(keepalive.value(QStringLiteral("ok")).toBool(),
             QJsonDocument(keepalive).toJson().constData());
    QVERIFY2(reference.value(QStringLiteral("ok")).toBool(),
             QJsonDocument(reference).toJson().constData());
    QJsonObject kept = keepalive.value(QStringLiteral("value")).toObject();
    QJsonObject plain = reference.value(QStringLiteral("value")).toObject();
    qInfo() << "through sse_keepalive:" << kept;
    QCOMPARE(kept.value(QStringLiteral("finish")).toString(), QStringLiteral("stop"));
    QVERIFY(kept.value(QStringLiteral("content")).toString().contains(QStringLiteral("Hello")));
    kept.remove(QStringLiteral("usage")); // its token counts are the only thing that may vary
    plain.remove(QStringLiteral("usage"));
    QCOMPARE(kept, plain);
    // ... and they were there: five or six in the 1.2 s silence.
    const HttpResult metrics = httpRequest("GET", m_slp.url() + "/metrics");
    const double comments =
        slp::findPromSample(slp::parsePromText(metrics.body).samples,
                            QStringLiteral("slp_sse_keepalives_total"),
                            {{QStringLiteral("model_id"), QStringLiteral("qwen-keep")}})
            .value_or(-1);
    qInfo() << "keep-alive comments written:" << comments;
    QVERIFY2(comments >= 2, QByteArray::number(comments));

    const QJsonObject embeddings = out.value(QStringLiteral("embeddings")).toObject();
    QVERIFY2(embeddings.value(QStringLiteral("ok")).toBool(),
             QJsonDocument(embeddings).toJson().constData());
    QVERIFY(
        embeddings.value(QStringLiteral("value")).toObject().value(QStringLiteral("dims")).toInt() >
        0);

    const QJsonObject unknown = out.value(QStringLiteral("unknown")).toObject();
    QVERIFY(!unknown.value(QStringLiteral("ok")).toBool());
    QCOMPARE(unknown.value(QStringLiteral("status")).toInt(), 404);
    QCOMPARE(unknown.value(QStringLiteral("code")).toString(), QStringLiteral("model_not_found"));
    QVERIFY(unknown.value(QStringLiteral("message"))
                .toString()
                .contains(QStringLiteral("no-such-model")));

    const QJsonObject down = out.value(QStringLiteral("down")).toObject();
    QVERIFY(!down.value(QStringLiteral("ok")).toBool());
    QCOMPARE(down.value(QStringLiteral("status")).toInt(), 502);
    const QString requestId = down.value(QStringLiteral("requestId")).toString();
    QVERIFY2(QRegularExpression(QStringLiteral("^slpq[0-9a-f]{24}$")).match(requestId).hasMatch(),
             qPrintable(requestId));
    // The client surfaces SLP's message as error.message, request id included.
    QVERIFY2(
        down.value(QStringLiteral("message"))
            .toString()
            .contains(QStringLiteral("upstream request failed (request id: %1)").arg(requestId)),
        qPrintable(down.value(QStringLiteral("message")).toString()));
    // maxRetries: 0 means exactly one attempt reached SLP.
    QCOMPARE(
        m_slp.countLog(QRegularExpression(QStringLiteral("Attempt 1/1 for model down failed"))), 1);
}

QTEST_GUILESS_MAIN(TestOpenAiClient)
#include "tst_openai_client.moc"
