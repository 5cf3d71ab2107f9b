// SPDX-License-Identifier: GPL-3.0-or-later
// JsonBodyScanner fed as a body arrives answers exactly what the one-shot scanBody answers
// for the whole body, field by field, wherever the reads were cut: every split point of every
// body here and of the fuzz corpus (the larger files at 64 points), one byte at a time, and
// from a buffer that moves between reads. A long string is read once, as it lands.
#include "body/bodyscanner.h"

#include <QDir>
#include <QTest>

using namespace slp;

namespace {

QString describe(const BodyScan &s)
{
    return QStringLiteral("verdict %1 error \"%2\" model \"%3\" [%4,%5) stream %6 [%7,%8) open %9 "
                          "logprobs %10")
        .arg(int(s.verdict))
        .arg(s.error, s.model)
        .arg(s.valueBegin)
        .arg(s.valueEnd)
        .arg(int(s.stream))
        .arg(s.streamBegin)
        .arg(s.streamEnd)
        .arg(s.objectOpen)
        .arg(s.wantsLogprobs);
}

// The hand-made bodies: every token kind cut anywhere, the errors that depend on the end.
const char *const kBodies[] = {
    R"({"model":"m"})",
    R"({"model":"m","stream":true,"logprobs":1})",
    R"(  {"messages":[{"role":"user","content":"h\u00e9llo \"q\" \\ \/"}],"model":"gpt"}  )",
    R"({"model":"\ud83d\ude00 caf\u00e9","n":-12.5e+3,"stream":false,"x":[1,2.0,3e4,-0]})",
    "{\"model\":\"caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80\"}",
    R"({"a":{"b":[[],{},[{}]]},"model":"m","top_logprobs":null,"echo":false})",
    R"({"model":"m","stream":null})",
    R"({"model":"m","stream":{"include_usage":true}})",
    R"({"model":1})",
    R"({"model":"a","model":"b"})",
    R"({"mod\u0065l":"m"})",
    R"([1,2,3])",
    "123",
    "12",
    "\"str\"",
    "true",
    "",
    "   ",
    "\xEF\xBB\xBF{}",
    "\xEF\xBB",
    R"({"model":"m"} x)",
    R"({"model":"m")",
    R"({"model":"m)",
    R"({"model":"m\)",
    R"({"model":"m\u12)",
    R"({"model":"m\u12G4"})",
    R"({"model":"m\q"})",
    "{\"model\":\"\xC3\"}",
    "{\"model\":\"\xE6\x97\"}",
    "{\"model\":\"\xF0\x9F\x98",
    R"({"n":01})",
    R"({"n":1.})",
    R"({"n":1e})",
    R"({"n":-})",
    R"({"n":.5})",
    R"({"n":tru})",
    R"({"n":nul})",
    R"({"n":falsy})",
    R"({"n":1,})",
    R"({"n" 1})",
    R"({"n":1 "m":2})",
    R"({,})",
    "{\"model\":\"m\x01\"}",
    "{}",
    "{ }",
    "[ ]",
    "[[[[[[[[[[]]]]]]]]]]",
};

QList<QByteArray> corpus()
{
    QList<QByteArray> bodies;
    for (const char *b : kBodies)
        bodies.append(QByteArray(b));
    QDir dir(QStringLiteral(SLP_SOURCE_DIR "/fuzz/corpus/fuzz_body_scanner"));
    for (const QString &name : dir.entryList(QDir::Files, QDir::Name)) {
        QFile f(dir.filePath(name));
        if (f.open(QIODevice::ReadOnly))
            bodies.append(f.readAll());
    }
    return bodies;
}

// Fed the first `cuts` lengths in turn (each from a fresh copy, so the buffer moves), then
// finished on the whole body.
BodyScan fedIn(const QByteArray &body, const QList<qsizetype> &cuts, int maxDepth = 512)
{
    JsonBodyScanner scanner(maxDepth);
    for (qsizetype cut : cuts) {
        const QByteArray soFar = body.left(cut); // a buffer of its own: offsets, not pointers
        scanner.feed(soFar);
    }
    const QByteArray whole = body; // not shared with the feeds' copies
    return scanner.finish(whole);
}

} // namespace

class TestBodyScannerSplit : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everySplitPoint();
    void byteAtATime();
    void depthLimitAcrossReads();
    void longStringIsReadOnce();
    void longNumberWorkStaysLinear();
};

void TestBodyScannerSplit::everySplitPoint()
{
    int bodies = 0, splits = 0;
    for (const QByteArray &body : corpus()) {
        const QString expected = describe(scanBody(body));
        const qsizetype step = body.size() <= 4096 ? 1 : body.size() / 64;
        for (qsizetype k = 0; k <= body.size(); k += step) {
            const QString got = describe(fedIn(body, {k}));
            if (got != expected)
                QFAIL(qPrintable(QStringLiteral("split at %1 of %2\n  body: %3\n  one-shot: %4\n  "
                                                "split:    %5")
                                     .arg(k)
                                     .arg(body.size())
                                     .arg(QString::fromLatin1(body.left(300).toPercentEncoding()),
                                          expected, got)));
            ++splits;
        }
        ++bodies;
    }
    qInfo("%d bodies, %d split points, all the same as the one-shot scan", bodies, splits);
    QVERIFY(bodies > 40);
}

void TestBodyScannerSplit::byteAtATime()
{
    for (const QByteArray &body : corpus()) {
        if (body.size() > 4096)
            continue;
        QList<qsizetype> cuts;
        for (qsizetype k = 0; k <= body.size(); ++k)
            cuts.append(k);
        QCOMPARE(describe(fedIn(body, cuts)), describe(scanBody(body)));
    }
}

void TestBodyScannerSplit::depthLimitAcrossReads()
{
    const QByteArray deep = QByteArray(600, '[') + QByteArray(600, ']');
    const BodyScan oneShot = scanBody(deep, 512);
    QCOMPARE(oneShot.verdict, BodyScan::Verdict::NotJson);
    QVERIFY(oneShot.error.contains(QStringLiteral("nesting deeper than 512")));
    for (qsizetype k : {1, 511, 512, 513, 700})
        QCOMPARE(describe(fedIn(deep, {k}, 512)), describe(oneShot));
}

void TestBodyScannerSplit::longStringIsReadOnce()
{
    // An image in a string: fed 64 KiB at a time, the scan keeps up with the bytes (it never
    // falls back to the string's start), and the answer is the one-shot answer.
    QByteArray body = R"({"model":"vision","messages":[{"content":")";
    body += QByteArray(4 * 1024 * 1024, 'A');
    body += R"("}]})";
    JsonBodyScanner scanner;
    for (qsizetype have = 65536; have < body.size(); have += 65536) {
        scanner.feed(QByteArrayView(body.constData(), have));
        QVERIFY2(scanner.progress() >= have - 4,
                 qPrintable(QStringLiteral("%1 of %2").arg(scanner.progress()).arg(have)));
    }
    QCOMPARE(describe(scanner.finish(body)), describe(scanBody(body)));
}

void TestBodyScannerSplit::longNumberWorkStaysLinear()
{
    // A run of digits cannot keep progress like a string; it is retried only when the bytes
    // behind it have doubled, so 1 MiB of digits fed in 64-byte reads is retried about 15
    // times, not 16,000.
    QByteArray body = R"({"model":"m","n":)" + QByteArray(1024 * 1024, '7') + "}";
    JsonBodyScanner scanner;
    int feeds = 0;
    for (qsizetype have = 64; have < body.size(); have += 64, ++feeds)
        scanner.feed(QByteArrayView(body.constData(), have));
    QVERIFY2(scanner.walks() <= 24,
             qPrintable(QStringLiteral("%1 walks for %2 feeds").arg(scanner.walks()).arg(feeds)));
    QCOMPARE(describe(scanner.finish(body)), describe(scanBody(body)));
    // A string, by contrast, is walked on every read: its progress is kept.
    QByteArray text = R"({"model":"m","t":")" + QByteArray(64 * 1024, 'x') + R"("})";
    JsonBodyScanner strings;
    for (qsizetype have = 64; have < text.size(); have += 64)
        strings.feed(QByteArrayView(text.constData(), have));
    QVERIFY(strings.walks() > 1000);
}

QTEST_GUILESS_MAIN(TestBodyScannerSplit)
#include "tst_body_scanner_split.moc"
