// SPDX-License-Identifier: GPL-3.0-or-later
// MultipartBodyScanner fed as a body arrives answers exactly what the one-shot scanMultipart
// answers, field by field, wherever the reads were cut: every split point of every body here
// and of the fuzz corpus (the larger files at 64 points), one byte at a time, from a buffer
// that moves; and a 4 MiB file part fed 64 KiB at a time is searched as it lands.
#include "body/multipartscanner.h"

#include <QDir>
#include <QTest>

using namespace slp;

namespace {

QString describe(const MultipartScan &s)
{
    return QStringLiteral("verdict %1 error \"%2\" model \"%3\" [%4,%5) close %6")
        .arg(int(s.verdict))
        .arg(s.error, s.model)
        .arg(s.valueBegin)
        .arg(s.valueEnd)
        .arg(s.closeEnd);
}

struct Sample
{
    QByteArray boundary;
    QByteArray body;
};

QByteArray form(const QByteArray &parts)
{
    QByteArray out = parts;
    out.replace("\n", "\r\n");
    return out;
}

QList<Sample> samples()
{
    QList<Sample> out = {
        {"b0", form("--b0\nContent-Disposition: form-data; name=\"model\"\n\nwhisper-1\n--b0--\n")},
        {"b0", form("preamble\n--b0\nContent-Disposition: form-data; name=\"file\"; "
                    "filename=\"a.wav\"\nContent-Type: audio/wav\n\nRIFF....data\n--b0\n"
                    "Content-Disposition: form-data; name=\"model\"\n\nwhisper-1\n--b0--\n"
                    "epilogue")},
        {"b0", form("--b0  \t\nContent-Disposition: form-data; name=\"model\"\n\nm\n--b0--")},
        {"b0", form("--b0\n\nno headers\n--b0\nContent-Disposition: form-data; "
                    "name=\"model\"\n\nm\n--b0--")},
        {"b0", form("--b0\nContent-Disposition: form-data; name=\"model\"\n\na\n--b0\n"
                    "Content-Disposition: form-data; name=\"model\"\n\nb\n--b0--")},
        {"b0", form("--b0\nContent-Disposition: form-data; name=\"model\"; filename=\"m\"\n\nm\n"
                    "--b0--")},
        {"b0", form("--b0\nContent-Disposition: form-data; name=\"model\"\n\n\n--b0--")},
        {"b0", form("--b0\nContent-Disposition: form-data; name=\"x\"\n\nm\n--b0--")},
        {"b0", form("--b0\nContent-Disposition: form-data; name=\"model\"\n\n\xC3\n--b0--")},
        {"b0", form("--b0\nContent-Disposition: form-data; name=\"model\"\n\nm\n--b0")},
        {"b0", form("--b0\nContent-Disposition: form-data; name=\"model\"\n\nm")},
        {"b0", form("--b0\nContent-Disposition form-data\n\nm\n--b0--")},
        {"b0", form("--b0\nContent-Disposition: form-data; name=\"model\"\nm\n--b0--")},
        {"b0", form("--b0x\n\nm\n--b0--")},
        {"b0", form("no delimiter at all")},
        {"b0", "--b"},
        {"b0", ""},
        {"b0", "--b0--"},
        {"a'()+_,-./:=? z", form("--a'()+_,-./:=? z\nContent-Disposition: form-data; "
                                 "name=model\n\nm\n--a'()+_,-./:=? z--\n")},
    };
    QDir dir(QStringLiteral(SLP_SOURCE_DIR "/fuzz/corpus/fuzz_multipart"));
    for (const QString &name : dir.entryList(QDir::Files, QDir::Name)) {
        QFile f(dir.filePath(name));
        if (!f.open(QIODevice::ReadOnly))
            continue;
        const QByteArray input = f.readAll();
        // The fuzz input's format: a boundary line, then the body (else all of it, boundary b).
        Sample sample{"b", input};
        const qsizetype newline = input.indexOf('\n');
        if (newline >= 0 && boundaryError(input.left(newline)).isEmpty())
            sample = {input.left(newline), input.mid(newline + 1)};
        out.append(sample);
    }
    return out;
}

MultipartScan fedIn(const Sample &s, const QList<qsizetype> &cuts)
{
    MultipartBodyScanner scanner(s.boundary);
    for (qsizetype cut : cuts) {
        const QByteArray soFar = s.body.left(cut); // a buffer of its own: offsets, not pointers
        scanner.feed(soFar);
    }
    const QByteArray whole = s.body;
    return scanner.finish(whole);
}

} // namespace

class TestMultipartSplit : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everySplitPoint();
    void byteAtATime();
    void filePartIsSearchedAsItLands();
};

void TestMultipartSplit::everySplitPoint()
{
    int bodies = 0, splits = 0;
    for (const Sample &s : samples()) {
        const QString expected = describe(scanMultipart(s.body, s.boundary));
        const qsizetype step = s.body.size() <= 4096 ? 1 : s.body.size() / 64;
        for (qsizetype k = 0; k <= s.body.size(); k += step, ++splits) {
            const QString got = describe(fedIn(s, {k}));
            if (got != expected)
                QFAIL(qPrintable(
                    QStringLiteral("split at %1 of %2\n  body: %3\n  one-shot: %4\n  split:    %5")
                        .arg(k)
                        .arg(s.body.size())
                        .arg(QString::fromLatin1(s.body.left(300).toPercentEncoding()), expected,
                             got)));
        }
        ++bodies;
    }
    qInfo("%d bodies, %d split points, all the same as the one-shot scan", bodies, splits);
    QVERIFY(bodies > 19);
}

void TestMultipartSplit::byteAtATime()
{
    for (const Sample &s : samples()) {
        if (s.body.size() > 4096)
            continue;
        QList<qsizetype> cuts;
        for (qsizetype k = 0; k <= s.body.size(); ++k)
            cuts.append(k);
        QCOMPARE(describe(fedIn(s, cuts)), describe(scanMultipart(s.body, s.boundary)));
    }
}

void TestMultipartSplit::filePartIsSearchedAsItLands()
{
    const QByteArray body = form("--b0\nContent-Disposition: form-data; name=\"file\"; "
                                 "filename=\"a.wav\"\n\n") +
                            QByteArray(4 * 1024 * 1024, '\x7f') +
                            form("\n--b0\nContent-Disposition: form-data; name=\"model\"\n\n"
                                 "whisper-1\n--b0--\n");
    MultipartBodyScanner scanner("b0");
    for (qsizetype have = 65536; have < body.size(); have += 65536) {
        scanner.feed(QByteArrayView(body.constData(), have));
        QVERIFY2(scanner.progress() >= have - 8,
                 qPrintable(QStringLiteral("%1 of %2").arg(scanner.progress()).arg(have)));
    }
    const MultipartScan scan = scanner.finish(body);
    QCOMPARE(scan.model, QStringLiteral("whisper-1"));
    QCOMPARE(describe(scan), describe(scanMultipart(body, "b0")));
}

QTEST_GUILESS_MAIN(TestMultipartSplit)
#include "tst_multipart_split.moc"
