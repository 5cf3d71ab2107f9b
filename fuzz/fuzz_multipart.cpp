// SPDX-License-Identifier: GPL-3.0-or-later
// The multipart scanner on arbitrary bytes. Input: a boundary line ("...\n"), then the body
// (no newline, or an unusable boundary: the whole input is the body of boundary "b"). Checks:
// no crash; an accepted model is its span's bytes, 1..256 of valid UTF-8; the rename changes
// those bytes and nothing else, and the renamed body scans to the new model; a body cut
// anywhere before the end of its closing delimiter is refused; the resumable scanner fed in
// reads answers what the one-shot scan answers.
#include "body/multipartscanner.h"
#include "joinededits.h"

#include <QByteArray>
#include <QString>

#include <cstdio>
#include <cstdlib>

using namespace slp;
using slp::test::spliceMultipartModel;

namespace {

[[noreturn]] void fail(const char *what, const QByteArray &boundary, const QByteArray &body,
                       const MultipartScan &scan)
{
    std::fprintf(
        stderr, "fuzz_multipart: %s\n  boundary: %s\n  body (%lld bytes): %s\n  ours: %d %s\n",
        what, boundary.toPercentEncoding().constData(), static_cast<long long>(body.size()),
        body.left(400).toPercentEncoding().constData(), int(scan.verdict), qPrintable(scan.error));
    std::abort();
}

void checkAccepted(const QByteArray &boundary, const QByteArray &body, const MultipartScan &scan)
{
    const qsizetype size = scan.valueEnd - scan.valueBegin;
    if (scan.valueBegin < 0 || scan.valueEnd > body.size() || size < 1 || size > maxModelBytes)
        fail("model span out of range", boundary, body, scan);
    if (scan.closeEnd < scan.valueEnd || scan.closeEnd > body.size())
        fail("closing delimiter out of range", boundary, body, scan);
    const QByteArray value = body.mid(scan.valueBegin, size);
    if (QString::fromUtf8(value) != scan.model || scan.model.toUtf8() != value)
        fail("model is not its span's bytes as UTF-8", boundary, body, scan);
    if (!scan.error.isEmpty())
        fail("an accepted body has an error message", boundary, body, scan);

    const QString renamed = QStringLiteral("renamed \"x\"\r\n\u00e9");
    const QByteArray out = spliceMultipartModel(body, scan, boundary, renamed);
    const QByteArray utf8 = renamed.toUtf8();
    if (out.left(scan.valueBegin) != body.left(scan.valueBegin) ||
        out.mid(scan.valueBegin, utf8.size()) != utf8 ||
        out.mid(scan.valueBegin + utf8.size()) != body.mid(scan.valueEnd))
        fail("rename touched bytes outside the model's value", boundary, body, scan);
    const MultipartScan again = scanMultipart(out, boundary);
    if (again.verdict != MultipartScan::Verdict::Ok || again.model != renamed ||
        again.valueBegin != scan.valueBegin || again.closeEnd != scan.closeEnd + utf8.size() - size)
        fail("the renamed body does not scan to the new model", boundary, body, scan);
}

void checkPrefixesRefused(const QByteArray &boundary, const QByteArray &body,
                          const MultipartScan &scan)
{
    // Every cut would be quadratic: the cuts next to each landmark, and one spread over the rest.
    const qsizetype marks[] = {0,
                               1,
                               scan.valueBegin,
                               scan.valueEnd,
                               scan.valueEnd + 1,
                               scan.closeEnd / 2,
                               scan.closeEnd - boundary.size() - 2,
                               scan.closeEnd - 2,
                               scan.closeEnd - 1};
    for (const qsizetype cut : marks) {
        if (cut < 0 || cut >= scan.closeEnd)
            continue;
        const MultipartScan part = scanMultipart(body.left(cut), boundary);
        if (part.verdict != MultipartScan::Verdict::Malformed || part.error.isEmpty())
            fail("a truncated body was not refused as malformed", boundary, body, scan);
    }
}

bool sameScan(const MultipartScan &a, const MultipartScan &b)
{
    return a.verdict == b.verdict && a.error == b.error && a.model == b.model &&
           a.valueBegin == b.valueBegin && a.valueEnd == b.valueEnd && a.closeEnd == b.closeEnd;
}

// Cut once at 16 points spread over the body and at two the input picks, and one byte at a
// time for short bodies; each read from a buffer of its own, as a grown buffer moves.
void checkSplits(const QByteArray &boundary, const QByteArray &body, const MultipartScan &scan)
{
    const auto fedIn = [&](std::initializer_list<qsizetype> cuts) {
        MultipartBodyScanner scanner(boundary);
        for (qsizetype cut : cuts) {
            const QByteArray soFar = body.left(cut);
            scanner.feed(soFar);
        }
        return scanner.finish(body);
    };
    const qsizetype n = body.size();
    const qsizetype picked = n > 0 ? qsizetype(uchar(body.back())) * n / 256 : 0;
    for (qsizetype i = 0; i <= 16; ++i)
        if (!sameScan(fedIn({i * n / 16}), scan))
            fail("a scan fed in two reads differs from the one-shot scan", boundary, body, scan);
    if (!sameScan(fedIn({picked / 3, picked}), scan))
        fail("a scan fed in reads the input picked differs from the one-shot scan", boundary, body,
             scan);
    if (n <= 512) {
        MultipartBodyScanner scanner(boundary);
        for (qsizetype k = 0; k <= n; ++k)
            scanner.feed(QByteArrayView(body.constData(), k));
        if (!sameScan(scanner.finish(body), scan))
            fail("a scan fed a byte at a time differs from the one-shot scan", boundary, body,
                 scan);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    const QByteArray input(reinterpret_cast<const char *>(data), qsizetype(size));
    QByteArray boundary = "b";
    QByteArray body = input;
    const qsizetype newline = input.indexOf('\n');
    if (newline >= 0) {
        const QByteArray line = input.left(newline);
        if (boundaryError(line).isEmpty()) {
            boundary = line;
            body = input.mid(newline + 1);
        }
    }
    if (!boundaryError(boundary).isEmpty())
        std::abort();
    const MultipartScan scan = scanMultipart(body, boundary);
    checkSplits(boundary, body, scan);
    if (scan.verdict != MultipartScan::Verdict::Ok) {
        if (scan.error.isEmpty() || !scan.model.isEmpty())
            fail("a refusal without its message, or with a model", boundary, body, scan);
        if (!spliceMultipartModel(body, scan, boundary, QStringLiteral("x")).isEmpty())
            fail("a refused body was renamed", boundary, body, scan);
        return 0;
    }
    checkAccepted(boundary, body, scan);
    checkPrefixesRefused(boundary, body, scan);
    return 0;
}
