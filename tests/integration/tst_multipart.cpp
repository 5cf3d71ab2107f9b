// SPDX-License-Identifier: GPL-3.0-or-later
// multipart/form-data through the real slp: the `openai` npm client's audio.transcriptions
// and images.edit, curl -F with a 25 MB file before the model (also chunked), and bad bodies.
// The mock upstream reports the SHA-256 of the body it got; it must be the client's own bytes
// with only the model value renamed. Every refusal is a 4xx that never reaches the backend.
#include "testsupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace slp::test;

namespace {
const QString whisperUpstream = QStringLiteral("Systran/faster-whisper-small");
const QString imageUpstream = QStringLiteral("gpt-image-1-local");

QByteArray modelPart(const QByteArray &value)
{
    return "Content-Disposition: form-data; name=\"model\"\r\n\r\n" + value + "\r\n";
}

// The client's bytes with the one model value renamed: a plain replace, independent of slp's
// scanner. Empty when the model part is not there exactly once.
QByteArray renamedByHand(const QByteArray &sent, const QByteArray &from, const QString &to)
{
    if (sent.count(modelPart(from)) != 1)
        return {};
    return QByteArray(sent).replace(modelPart(from), modelPart(to.toUtf8()));
}

QJsonObject partNamed(const QJsonObject &mock, const QString &name)
{
    for (const QJsonValue &p : mock.value(QStringLiteral("parts")).toArray())
        if (p.toObject().value(QStringLiteral("name")).toString() == name)
            return p.toObject();
    return {};
}
} // namespace

class TestMultipart : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void openaiClient();
    void curlBigFileBeforeModel_data();
    void curlBigFileBeforeModel();
    void badBodiesNeverReachTheBackend_data();
    void badBodiesNeverReachTheBackend();

private:
    int postsSeenByMock();
    void checkArrivedRenamed(const QJsonObject &step, const QByteArray &alias,
                             const QString &upstream);

    MockUpstream m_mock;
    SlpDaemon m_slp;
    QTemporaryDir m_dir;
};

void TestMultipart::initTestCase()
{
    if (const QString why = nodeSkipReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    const QString missing = nodePackageMissing(QStringLiteral("openai"));
    QVERIFY2(missing.isEmpty(), qPrintable(missing));
    QVERIFY(m_dir.isValid());
    QVERIFY2(m_mock.start({whisperUpstream, imageUpstream}), qPrintable(m_mock.errorString()));
    const QString config = QStringLiteral(R"(
backends:
  - name: whisper
    url: %1
    model: %2
  - name: image
    url: %1
    model: %3
)")
                               .arg(m_mock.url(), whisperUpstream, imageUpstream);
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
}

int TestMultipart::postsSeenByMock()
{
    int n = 0;
    for (const QJsonValue &v : m_mock.requests())
        n += v.toObject().value(QStringLiteral("method")).toString() == QLatin1String("POST");
    return n;
}

void TestMultipart::checkArrivedRenamed(const QJsonObject &step, const QByteArray &alias,
                                        const QString &upstream)
{
    QVERIFY2(step.value(QStringLiteral("ok")).toBool(), QJsonDocument(step).toJson().constData());
    const QByteArray sent =
        QByteArray::fromBase64(step.value(QStringLiteral("sentB64")).toString().toLatin1());
    QVERIFY(
        step.value(QStringLiteral("contentType")).toString().contains(QStringLiteral("boundary=")));
    const QByteArray expected = renamedByHand(sent, alias, upstream);
    QVERIFY2(!expected.isEmpty(), sent.left(600).constData());
    const QJsonObject mock =
        step.value(QStringLiteral("value")).toObject().value(QStringLiteral("mock")).toObject();
    QCOMPARE(mock.value(QStringLiteral("model")).toString(), upstream);
    QCOMPARE(mock.value(QStringLiteral("bytes")).toInteger(), expected.size());
    QCOMPARE(mock.value(QStringLiteral("sha256")).toString(),
             QString::fromLatin1(sha256Hex(expected)));
}

void TestMultipart::openaiClient()
{
    const QString script = nodeScript(QStringLiteral("openai_multipart.mjs"));
    const CommandResult run = runCommand(nodeProgram(),
                                         {script, m_slp.url() + QStringLiteral("/v1"),
                                          QStringLiteral("whisper"), QStringLiteral("image")},
                                         60000);
    QVERIFY2(run.started, qPrintable(run.error));
    QVERIFY2(run.exitCode == 0, run.stdErr.constData());
    const QJsonObject out = QJsonDocument::fromJson(run.stdOut).object();
    QVERIFY2(!out.isEmpty(), run.stdOut.constData());

    const QJsonObject transcription = out.value(QStringLiteral("transcription")).toObject();
    checkArrivedRenamed(transcription, "whisper", whisperUpstream);
    const QJsonObject value = transcription.value(QStringLiteral("value")).toObject();
    QCOMPARE(value.value(QStringLiteral("text")).toString(),
             QStringLiteral("mock transcription by ") + whisperUpstream);
    // The file came first (the client's order) and arrived whole.
    const QJsonObject mock = value.value(QStringLiteral("mock")).toObject();
    const QJsonArray parts = mock.value(QStringLiteral("parts")).toArray();
    QVERIFY(parts.size() >= 2);
    QCOMPARE(parts.first().toObject().value(QStringLiteral("name")).toString(),
             QStringLiteral("file"));
    QCOMPARE(partNamed(mock, QStringLiteral("file")).value(QStringLiteral("sha256")).toString(),
             out.value(QStringLiteral("wavSha256")).toString());

    const QJsonObject edit = out.value(QStringLiteral("edit")).toObject();
    checkArrivedRenamed(edit, "image", imageUpstream);
    QCOMPARE(edit.value(QStringLiteral("value")).toObject().value(QStringLiteral("images")).toInt(),
             1);

    const QJsonObject unknown = out.value(QStringLiteral("unknown")).toObject();
    QVERIFY(!unknown.value(QStringLiteral("ok")).toBool());
    QCOMPARE(unknown.value(QStringLiteral("status")).toInt(), 404);
    QVERIFY2(unknown.value(QStringLiteral("message"))
                 .toString()
                 .contains(QStringLiteral("no-such-model")),
             qPrintable(unknown.value(QStringLiteral("message")).toString()));
}

void TestMultipart::curlBigFileBeforeModel_data()
{
    QTest::addColumn<bool>("chunked");
    QTest::newRow("Content-Length") << false;
    QTest::newRow("chunked") << true;
}

// curl -F keeps the order given: a 25 MB file, then the model, then a plain field. The file
// arrives byte for byte, and a chunked upload goes upstream with a Content-Length.
void TestMultipart::curlBigFileBeforeModel()
{
    QFETCH(bool, chunked);
    const QString path = m_dir.filePath(QStringLiteral("big.wav"));
    QByteArray audio(25 << 20, '\0');
    for (qsizetype i = 0; i < audio.size(); ++i)
        audio[i] = char((i * 2654435761u) >> 13);
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly) && file.write(audio) == audio.size());
    file.close();
    QStringList args{QStringLiteral("-sS"),
                     QStringLiteral("--max-time"),
                     QStringLiteral("60"),
                     QStringLiteral("-F"),
                     QStringLiteral("file=@") + path,
                     QStringLiteral("-F"),
                     QStringLiteral("model=whisper"),
                     QStringLiteral("-F"),
                     QStringLiteral("language=en")};
    if (chunked)
        args << QStringLiteral("-H") << QStringLiteral("Transfer-Encoding: chunked");
    args << m_slp.url() + QStringLiteral("/v1/audio/transcriptions");
    const CommandResult run = runCommand(QStringLiteral("curl"), args, 90000);
    QVERIFY2(run.exitCode == 0, run.stdErr.constData());
    const QJsonObject mock =
        QJsonDocument::fromJson(run.stdOut).object().value(QStringLiteral("slp_mock")).toObject();
    QVERIFY2(!mock.isEmpty(), run.stdOut.left(400).constData());
    QCOMPARE(mock.value(QStringLiteral("model")).toString(), whisperUpstream);
    const QJsonObject filePart = partNamed(mock, QStringLiteral("file"));
    QCOMPARE(filePart.value(QStringLiteral("sha256")).toString(),
             QString::fromLatin1(sha256Hex(audio)));
    QCOMPARE(partNamed(mock, QStringLiteral("language")).value(QStringLiteral("bytes")).toInt(), 2);
    QCOMPARE(mock.value(QStringLiteral("parts"))
                 .toArray()
                 .first()
                 .toObject()
                 .value(QStringLiteral("name"))
                 .toString(),
             QStringLiteral("file"));

    const QJsonArray seen = m_mock.requests();
    const QJsonObject last = seen.last().toObject();
    QCOMPARE(last.value(QStringLiteral("chunked")).toBool(), false);
    QCOMPARE(MockUpstream::header(last, "content-length").toLongLong(),
             last.value(QStringLiteral("body_size")).toInteger());
    QCOMPARE(last.value(QStringLiteral("body_sha256")).toString(),
             mock.value(QStringLiteral("sha256")).toString());
}

void TestMultipart::badBodiesNeverReachTheBackend_data()
{
    QTest::addColumn<QByteArray>("contentType");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("message");
    const QByteArray good = "--xyz\r\n" + modelPart("whisper") + "--xyz--\r\n";
    QTest::newRow("no boundary") << QByteArray("multipart/form-data") << good << 400
                                 << QStringLiteral(
                                        "multipart/form-data needs a boundary parameter");
    QTest::newRow("boundary of 71")
        << QByteArray("multipart/form-data; boundary=" + QByteArray(71, 'x'))
        << QByteArray("--" + QByteArray(71, 'x') + "\r\n" + modelPart("whisper") + "--" +
                      QByteArray(71, 'x') + "--\r\n")
        << 400 << QStringLiteral("multipart boundary is 71 characters: at most 70 allowed");
    QTest::newRow("no closing delimiter")
        << QByteArray("multipart/form-data; boundary=xyz")
        << QByteArray("--xyz\r\n" + modelPart("whisper")) << 400
        << QStringLiteral("multipart body has no closing delimiter \"--xyz--\"");
    QTest::newRow("model part split by the boundary")
        << QByteArray("multipart/form-data; boundary=\"xyz\"")
        << QByteArray(
               "--xyz\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhis\r\n--xyz\r\n"
               "per\r\n--xyz--\r\n")
        << 400 << QStringLiteral("has a truncated header");
    QTest::newRow("truncated part header")
        << QByteArray("multipart/form-data; boundary=xyz")
        << QByteArray("--xyz\r\nContent-Disposition: form-data; name=\"model\"\r\n--xyz--\r\n")
        << 400 << QStringLiteral("multipart part at byte 7 has a truncated header");
    QTest::newRow("no model part")
        << QByteArray("multipart/form-data; boundary=xyz")
        << QByteArray(
               "--xyz\r\nContent-Disposition: form-data; name=\"prompt\"\r\n\r\nhi\r\n--xyz--\r\n")
        << 400 << QStringLiteral("multipart body has no \"model\" part");
    QTest::newRow("model twice") << QByteArray("multipart/form-data; boundary=xyz")
                                 << QByteArray("--xyz\r\n" + modelPart("whisper") + "--xyz\r\n" +
                                               modelPart("whisper") + "--xyz--")
                                 << 400 << QStringLiteral("more than one \"model\" part");
    QTest::newRow("unknown model") << QByteArray("multipart/form-data; boundary=xyz")
                                   << QByteArray("--xyz\r\n" + modelPart("whisper-2") + "--xyz--")
                                   << 404 << QStringLiteral("The model `whisper-2` does not exist");
    QTest::newRow("urlencoded") << QByteArray("application/x-www-form-urlencoded")
                                << QByteArray("model=whisper&x=1") << 415
                                << QStringLiteral(
                                       "application/x-www-form-urlencoded bodies are not routed");
}

void TestMultipart::badBodiesNeverReachTheBackend()
{
    QFETCH(QByteArray, contentType);
    QFETCH(QByteArray, body);
    QFETCH(int, status);
    QFETCH(QString, message);
    const int before = postsSeenByMock();
    const HttpResult r = httpRequest("POST", m_slp.url() + "/v1/audio/transcriptions", body,
                                     {{"Content-Type", contentType}});
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.status, status);
    const QJsonObject error =
        QJsonDocument::fromJson(r.body).object().value(QStringLiteral("error")).toObject();
    QVERIFY2(error.value(QStringLiteral("message")).toString().contains(message),
             r.body.constData());
    QCOMPARE(error.value(QStringLiteral("param")).toString(), QStringLiteral("model"));
    // A good request after it is the proof the mock has seen all there was to see.
    const QByteArray good = "--q\r\n" + modelPart("whisper") + "--q--\r\n";
    const HttpResult ok = httpRequest("POST", m_slp.url() + "/v1/audio/transcriptions", good,
                                      {{"Content-Type", "multipart/form-data; boundary=q"}});
    QCOMPARE(ok.status, 200);
    QCOMPARE(postsSeenByMock(), before + 1);
}

QTEST_GUILESS_MAIN(TestMultipart)
#include "tst_multipart.moc"
