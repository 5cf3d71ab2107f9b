// SPDX-License-Identifier: GPL-3.0-or-later
// MultipartScanner: the "model" part of a multipart/form-data body (RFC 7578, RFC 2046): the
// boundary rules, delimiters, preamble and epilogue, every refusal with its message, and a
// rename that changes the model's value bytes and nothing else, also after a 25 MB file part.
#include "body/multipartscanner.h"
#include "joinededits.h"

#include <QElapsedTimer>
#include <QtTest>

using namespace slp;
using slp::test::spliceMultipartModel;
using V = MultipartScan::Verdict;

namespace {
const QByteArray boundary = "----formdata-undici-0123456789";

QByteArray field(const QByteArray &name, const QByteArray &value)
{
    return "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" +
           value + "\r\n";
}

QByteArray file(const QByteArray &name, const QByteArray &content)
{
    return "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name +
           "\"; filename=\"a.wav\"\r\nContent-Type: audio/wav\r\n\r\n" + content + "\r\n";
}

QByteArray closing()
{
    return "--" + boundary + "--\r\n";
}
} // namespace

class TestMultipartScanner : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void boundaryRules_data();
    void boundaryRules();
    void accepts_data();
    void accepts();
    void refuses_data();
    void refuses();
    void renameKeepsEveryOtherByte();
    void renameRefusesTheDelimiter();
    void modelAfterA25MegabyteFile();
    void everyPrefixIsRefused();
};

void TestMultipartScanner::boundaryRules_data()
{
    QTest::addColumn<QByteArray>("boundary");
    QTest::addColumn<QString>("error"); // a fragment of the message; empty: usable
    QTest::newRow("one char") << QByteArray("a") << QString();
    QTest::newRow("70 chars") << QByteArray(70, 'x') << QString();
    QTest::newRow("every bchar") << QByteArray("09azAZ'()+_,-./:=? x") << QString();
    QTest::newRow("empty") << QByteArray() << QStringLiteral("needs a boundary parameter");
    QTest::newRow("71 chars") << QByteArray(71, 'x')
                              << QStringLiteral("is 71 characters: at most 70 allowed");
    QTest::newRow("semicolon") << QByteArray("a;b") << QStringLiteral("(byte 0x3b)");
    QTest::newRow("non-ASCII") << QByteArray("a\xc3\xa9") << QStringLiteral("(byte 0xc3)");
    QTest::newRow("ends in a space") << QByteArray("ab ") << QStringLiteral("ends in a space");
}

void TestMultipartScanner::boundaryRules()
{
    QFETCH(QByteArray, boundary);
    QFETCH(QString, error);
    const QString got = boundaryError(boundary);
    if (error.isEmpty())
        QVERIFY2(got.isEmpty(), qPrintable(got));
    else
        QVERIFY2(got.contains(error), qPrintable(got));
}

void TestMultipartScanner::accepts_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("model");
    QTest::newRow("model only") << field("model", "whisper-1") + closing()
                                << QByteArray("whisper-1");
    QTest::newRow("file first (the openai client's order)")
        << file("file", "RIFF....WAVE") + field("model", "whisper") + closing()
        << QByteArray("whisper");
    QTest::newRow("preamble and epilogue")
        << "This is a preamble.\r\n" + field("model", "m") + closing() + "epilogue\r\n"
        << QByteArray("m");
    QTest::newRow("no CRLF after the closing delimiter")
        << field("model", "m") + "--" + boundary + "--" << QByteArray("m");
    QTest::newRow("header names any case, bare name, other params")
        << "--" + boundary +
               "\r\ncontent-DISPOSITION:form-data;name=model ; x=\"y;z\"\r\nContent-Type: "
               "text/plain; charset=utf-8\r\n\r\nm\r\n" +
               closing()
        << QByteArray("m");
    QTest::newRow("value with CR, LF and dashes")
        << field("model", "a\r\nb\r\n--x-") + closing() << QByteArray("a\r\nb\r\n--x-");
    QTest::newRow("UTF-8 value") << field("model", "mod\xc3\xa8le-\xe2\x9c\x93") + closing()
                                 << QByteArray("mod\xc3\xa8le-\xe2\x9c\x93");
    QTest::newRow("256 bytes") << field("model", QByteArray(256, 'm')) + closing()
                               << QByteArray(256, 'm');
    QTest::newRow("a part with no header lines")
        << "--" + boundary + "\r\n\r\nanonymous\r\n" + field("model", "m") + closing()
        << QByteArray("m");
    QTest::newRow("model-ish names are other fields")
        << field("models", "a") + field("Model", "b") + field("model", "c") + closing()
        << QByteArray("c");
    QTest::newRow("encodings and charsets on other parts, ASCII on the model")
        << "--" + boundary +
               "\r\nContent-Disposition: form-data; name=\"f\"\r\nContent-Transfer-Encoding: "
               "base64\r\nContent-Type: text/plain; charset=latin1\r\n\r\nx\r\n--" +
               boundary +
               "\r\nContent-Disposition: form-data; name=model\r\nContent-Type: text/plain; "
               "charset=US-ASCII\r\n\r\nm\r\n" +
               closing()
        << QByteArray("m");
    QTest::newRow("boundary text inside a file, not after CRLF")
        << file("file", "x--" + boundary + "y") + field("model", "m") + closing()
        << QByteArray("m");
}

void TestMultipartScanner::accepts()
{
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, model);
    const MultipartScan scan = scanMultipart(body, boundary);
    QCOMPARE(scan.verdict, V::Ok);
    QVERIFY2(scan.error.isEmpty(), qPrintable(scan.error));
    QCOMPARE(scan.model, QString::fromUtf8(model));
    QCOMPARE(body.mid(scan.valueBegin, scan.valueEnd - scan.valueBegin), model);
    QVERIFY(scan.closeEnd > scan.valueEnd && scan.closeEnd <= body.size());
    QCOMPARE(body.mid(scan.closeEnd - boundary.size() - 4, boundary.size() + 4),
             "--" + boundary + "--");
}

void TestMultipartScanner::refuses_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("verdict");
    QTest::addColumn<QString>("message");
    const QByteArray model = field("model", "m");
    QTest::newRow("empty body")
        << QByteArray() << int(V::Malformed)
        << QString::fromLatin1("multipart body has no opening delimiter \"--" + boundary + "\"");
    QTest::newRow("no delimiter at all")
        << QByteArray("model=m") << int(V::Malformed) << QStringLiteral("no opening delimiter");
    QTest::newRow("no closing delimiter")
        << model << int(V::Malformed)
        << QString::fromLatin1("multipart body has no closing delimiter \"--" + boundary + "--\"");
    QTest::newRow("closing delimiter cut short")
        << model + "--" + boundary + "-" << int(V::Malformed)
        << QStringLiteral("is followed by neither CRLF nor \"--\"");
    QTest::newRow("delimiter followed by garbage")
        << model + "--" + boundary + "x\r\n" + closing() << int(V::Malformed)
        << QStringLiteral("is followed by neither CRLF nor \"--\"");
    QTest::newRow("model part split by the boundary")
        << "--" + boundary + "\r\nContent-Disposition: form-data; name=\"mo\r\n--" + boundary +
               "\r\ndel\"\r\n\r\nm\r\n" + closing()
        << int(V::Malformed) << QStringLiteral("has a truncated header");
    QTest::newRow("model value split by the boundary")
        << "--" + boundary + "\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhi\r\n--" +
               boundary + "\r\nsper\r\n" + closing()
        << int(V::Malformed) << QStringLiteral("has a truncated header");
    QTest::newRow("truncated part header")
        << "--" + boundary + "\r\nContent-Disposition: form-data; name=\"model\"\r\n--" + boundary +
               "--\r\n"
        << int(V::Malformed)
        << QStringLiteral("multipart part at byte %1 has a truncated header: no blank line "
                          "before the next delimiter")
               .arg(boundary.size() + 4);
    QTest::newRow("header line without a colon")
        << "--" + boundary + "\r\nContent-Disposition form-data\r\n\r\nm\r\n" + closing()
        << int(V::Malformed) << QStringLiteral("is not \"Name: value\"");
    QTest::newRow("no model part")
        << field("prompt", "hi") + file("file", "x") + closing() << int(V::ModelMissing)
        << QStringLiteral("multipart body has no \"model\" part: SLP routes each request by its "
                          "model; add a form field named model (docs/HTTP.md)");
    QTest::newRow("no parts") << "--" + boundary + "--\r\n"
                              << int(V::ModelMissing) << QStringLiteral("no \"model\" part");
    QTest::newRow("model twice") << model + field("model", "m") + closing()
                                 << int(V::ModelDuplicate) << QStringLiteral("more than one");
    QTest::newRow("model is a file")
        << file("model", "m") + closing() << int(V::ModelFile) << QStringLiteral("has a filename");
    QTest::newRow("empty model") << field("model", "") + closing() << int(V::ModelEmpty)
                                 << QStringLiteral("the multipart \"model\" part is empty");
    QTest::newRow("257 bytes") << field("model", QByteArray(257, 'm')) + closing()
                               << int(V::ModelTooLong)
                               << QStringLiteral("is 257 bytes: at most 256 allowed");
    QTest::newRow("not UTF-8") << field("model", "a\xff") + closing() << int(V::ModelNotUtf8)
                               << QStringLiteral("not valid UTF-8");
    QTest::newRow("overlong UTF-8") << field("model", "\xc0\xaf") + closing()
                                    << int(V::ModelNotUtf8) << QStringLiteral("not valid UTF-8");
    const auto part = [](const QByteArray &headers) {
        return "--" + boundary + "\r\n" + headers + "\r\n\r\nm\r\n";
    };
    const QString ambiguous = QStringLiteral("parsers would read another model than SLP");
    QTest::newRow("two Content-Disposition headers")
        << part("Content-Disposition: form-data; name=\"model\"\r\nContent-Disposition: "
                "form-data; name=\"x\"") +
               closing()
        << int(V::Ambiguous) << "has more than one Content-Disposition header: " + ambiguous;
    QTest::newRow("two Content-Disposition headers on another part")
        << part("content-disposition: form-data; name=\"x\"\r\nContent-Disposition: "
                "form-data; name=\"model\"") +
               model + closing()
        << int(V::Ambiguous) << QStringLiteral("more than one Content-Disposition");
    QTest::newRow("name*") << part("Content-Disposition: form-data; name*=UTF-8''model") + closing()
                           << int(V::Ambiguous) << QStringLiteral("name*=");
    QTest::newRow("name twice")
        << part("Content-Disposition: form-data; name=\"x\"; name=\"model\"") + closing()
        << int(V::Ambiguous) << QStringLiteral("parameter twice");
    // Go's ParseMediaType drops every parameter of a disposition that repeats one.
    QTest::newRow("filename twice on the model part")
        << part("Content-Disposition: form-data; name=model; filename=a; filename=b") + closing()
        << int(V::Ambiguous) << QStringLiteral("parameter twice");
    // python-multipart reads "name=model" after a parameter SLP cannot parse; Go reads none.
    QTest::newRow("disposition SLP cannot parse")
        << part("Content-Disposition: form-data; x; name=\"model\"") + model + closing()
        << int(V::Ambiguous) << QStringLiteral("cannot parse");
    // Go splits header lines on a bare LF: this part has two dispositions there.
    QTest::newRow("bare LF in a header line")
        << part("Content-Disposition: form-data; name=\"x\"\nContent-Disposition: form-data; "
                "name=\"model\"") +
               closing()
        << int(V::Ambiguous) << QStringLiteral("bare CR or LF");
    QTest::newRow("bare CR in a header line")
        << part("Content-Disposition: form-data; name=\"model\"\rX: y") + closing()
        << int(V::Ambiguous) << QStringLiteral("bare CR or LF");
    // RFC 2046 allows it; python-multipart reads a delimiter followed by it as content.
    QTest::newRow("transport padding after a delimiter")
        << "--" + boundary + " \t\r\nContent-Disposition: form-data; name=model\r\n\r\nm\r\n" +
               closing()
        << int(V::Ambiguous) << QStringLiteral("transport padding");
    // Go takes a preamble line that opens with the boundary after a bare LF as the first
    // delimiter (its newline then LF): it reads the model "other" where SLP reads "m".
    QTest::newRow("boundary after a bare LF in the preamble")
        << "x\n--" + boundary + "\nContent-Disposition: form-data; name=model\n\nother\n--" +
               boundary + "--\r\n" + field("model", "m") + closing()
        << int(V::Ambiguous) << QStringLiteral("bare LF");
    QTest::newRow("escaped name") << part("Content-Disposition: form-data; name=\"mod\\el\"") +
                                         closing()
                                  << int(V::Ambiguous) << QStringLiteral("backslash escape");
    QTest::newRow("model not form-data")
        << part("Content-Disposition: attachment; name=\"model\"") + model + closing()
        << int(V::Ambiguous) << QStringLiteral("is not form-data");
    QTest::newRow("model with a transfer encoding")
        << part("Content-Disposition: form-data; name=model\r\nContent-Transfer-Encoding: "
                "quoted-printable") +
               closing()
        << int(V::Ambiguous) << QStringLiteral("Content-Transfer-Encoding");
    QTest::newRow("model in latin-1")
        << part("Content-Disposition: form-data; name=model\r\nContent-Type: text/plain; "
                "charset=iso-8859-1") +
               closing()
        << int(V::Ambiguous) << QStringLiteral("charset other than UTF-8");
    QTest::newRow("LF delimiters only") << QByteArray(model + closing()).replace("\r\n", "\n")
                                        << int(V::Malformed) << QStringLiteral("neither CRLF nor");
}

void TestMultipartScanner::refuses()
{
    QFETCH(QByteArray, body);
    QFETCH(int, verdict);
    QFETCH(QString, message);
    const MultipartScan scan = scanMultipart(body, boundary);
    QCOMPARE(int(scan.verdict), verdict);
    QVERIFY2(scan.error.contains(message), qPrintable(scan.error));
    QVERIFY(scan.model.isEmpty());
    QCOMPARE(spliceMultipartModel(body, scan, boundary, QStringLiteral("x")), QByteArray());
}

void TestMultipartScanner::renameKeepsEveryOtherByte()
{
    const QByteArray preamble = "preamble \x01\xff\r\n";
    const QByteArray head = preamble + file("file", QByteArray("\0\r\n-\xff", 5)) + "--" +
                            boundary + "\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\n";
    const QByteArray tail = "\r\n" + field("language", "en") + closing() + "epi\r\nlogue";
    const QByteArray body = head + "whisper" + tail;
    const MultipartScan scan = scanMultipart(body, boundary);
    QCOMPARE(scan.verdict, V::Ok);
    QCOMPARE(scan.valueBegin, head.size());
    const QString upstream = QStringLiteral("Systran/faster-whisper-large-v3 \u00e9");
    const QByteArray out = spliceMultipartModel(body, scan, boundary, upstream);
    QCOMPARE(out, head + upstream.toUtf8() + tail);
    const MultipartScan again = scanMultipart(out, boundary);
    QCOMPARE(again.verdict, V::Ok);
    QCOMPARE(again.model, upstream);
}

void TestMultipartScanner::renameRefusesTheDelimiter()
{
    const QByteArray body = field("model", "m") + closing();
    const MultipartScan scan = scanMultipart(body, boundary);
    QCOMPARE(scan.verdict, V::Ok);
    for (const QString &bad : {QStringLiteral("--") + QString::fromLatin1(boundary),
                               QStringLiteral("x\r\n--") + QString::fromLatin1(boundary) + "y"}) {
        QVERIFY(multipartValueError(bad, boundary));
        QCOMPARE(spliceMultipartModel(body, scan, boundary, bad), QByteArray());
    }
    // A value that only ends like the delimiter's start is safe: its CR is its first byte.
    const QString fine = QStringLiteral("a\r\n-") + QString::fromLatin1(boundary.left(5));
    QVERIFY(!multipartValueError(fine, boundary));
    const QByteArray out = spliceMultipartModel(body, scan, boundary, fine);
    QCOMPARE(scanMultipart(out, boundary).model, fine);
}

// The openai npm client sends the file first: the model part comes after 25 MB. The delimiter
// search is memmem, so this is one linear pass (the throughput is printed, never asserted).
void TestMultipartScanner::modelAfterA25MegabyteFile()
{
    QByteArray audio(25 << 20, '\0');
    for (qsizetype i = 0; i < audio.size(); ++i)
        audio[i] = char((i * 7919) >> 3); // CR, LF and '-' bytes all through it
    const QByteArray head = file("file", audio) + "--" + boundary +
                            "\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\n";
    const QByteArray tail = "\r\n" + closing();
    const QByteArray body = head + "whisper" + tail;
    QElapsedTimer timer;
    timer.start();
    const MultipartScan scan = scanMultipart(body, boundary);
    const qint64 ns = std::max<qint64>(1, timer.nsecsElapsed());
    QCOMPARE(scan.verdict, V::Ok);
    QCOMPARE(scan.model, QStringLiteral("whisper"));
    QCOMPARE(scan.valueBegin, head.size());
    qInfo("scanned %lld bytes in %.2f ms (%.0f MB/s)", static_cast<long long>(body.size()),
          double(ns) / 1e6, double(body.size()) / double(ns) * 1e3);
    const QByteArray out = spliceMultipartModel(body, scan, boundary, QStringLiteral("large-v3"));
    QCOMPARE(out.size(), body.size() + 1);
    QVERIFY(out.startsWith(head));
    QVERIFY(out.endsWith("large-v3" + tail));
}

// A body cut anywhere before the end of its closing delimiter is refused: a request split by
// a bug on the way is never routed as if whole.
void TestMultipartScanner::everyPrefixIsRefused()
{
    const QByteArray body = "pre\r\n" + file("file", "RIFF\r\n--xx") + field("model", "m") +
                            field("n", "1") + closing() + "epilogue";
    const MultipartScan whole = scanMultipart(body, boundary);
    QCOMPARE(whole.verdict, V::Ok);
    for (qsizetype cut = 0; cut < whole.closeEnd; ++cut) {
        const MultipartScan part = scanMultipart(body.left(cut), boundary);
        QVERIFY2(part.verdict == V::Malformed, qPrintable(QString::number(cut)));
    }
    for (qsizetype cut = whole.closeEnd; cut <= body.size(); ++cut)
        QCOMPARE(scanMultipart(body.left(cut), boundary).verdict, V::Ok);
}

QTEST_GUILESS_MAIN(TestMultipartScanner)
#include "tst_multipart_scanner.moc"
