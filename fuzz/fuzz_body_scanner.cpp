// SPDX-License-Identifier: GPL-3.0-or-later
// Differential fuzzing of the one-pass body scanner against QJsonDocument: the same verdict
// class (JSON or not, object or not), the same model (present / string / its value), the same
// stream flag and logprobs flag, a span that decodes to the model, and a splice that changes
// nothing else; and the resumable scan fed in reads gives the same answer as the one-shot scan.
// The documented differences (bodyscanner.h's closing comment; the JSON oracle in
// tests/support/json, shared with tst_body_scanner) are the only disagreements allowed.
#include "body/bodyscanner.h"
#include "joinededits.h"
#include "jsonoracle.h"
#include "jsonstring.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <cstdio>
#include <cstdlib>
#include <optional>

using namespace slp;
using namespace slp::test;

namespace {

[[noreturn]] void fail(const char *what, const QByteArray &body, const BodyScan &ours)
{
    std::fprintf(stderr, "fuzz_body_scanner: %s\n  body (%lld bytes): %s\n  ours: %d %s\n", what,
                 static_cast<long long>(body.size()),
                 body.left(400).toPercentEncoding().constData(), int(ours.verdict),
                 qPrintable(ours.error));
    std::abort();
}

// Duplicate top-level keys: QJsonObject keeps one, so a body with a repeated stream/logprobs key
// can legitimately disagree on those flags ("the last one counts" in the scanner, Qt's choice
// is not specified). Such bodies are checked for verdicts only.
bool hasRepeatedTopLevelFlagKey(const QByteArray &body)
{
    int count = 0;
    for (const char *k : {"\"stream\"", "\"logprobs\"", "\"top_logprobs\"", "\"echo\"",
                          "\"prompt_logprobs\"", "\\u"})
        count += int(body.count(k));
    return count > 1;
}

bool sameScan(const BodyScan &a, const BodyScan &b)
{
    return a.verdict == b.verdict && a.error == b.error && a.model == b.model &&
           a.valueBegin == b.valueBegin && a.valueEnd == b.valueEnd && a.stream == b.stream &&
           a.streamBegin == b.streamBegin && a.streamEnd == b.streamEnd &&
           a.objectOpen == b.objectOpen && a.wantsLogprobs == b.wantsLogprobs;
}

// The resumable scan, fed the body as reads would bring it, must answer what the one-shot
// scan answers: cut once at 16 points spread over the body and at a point the input picks,
// in two reads cut where the input picks, and one byte at a time for short bodies.
void checkSplits(const QByteArray &body, const BodyScan &oneShot)
{
    const auto fedIn = [&](std::initializer_list<qsizetype> cuts) {
        JsonBodyScanner scanner;
        for (qsizetype cut : cuts) {
            const QByteArray soFar = body.left(cut); // a buffer of its own, as a grown one
            scanner.feed(soFar);
        }
        return scanner.finish(body);
    };
    const qsizetype n = body.size();
    const qsizetype picked = n > 0 ? qsizetype(uchar(body.front())) * n / 256 : 0;
    for (qsizetype i = 0; i <= 16; ++i)
        if (!sameScan(fedIn({i * n / 16}), oneShot))
            fail("a scan fed in two reads differs from the one-shot scan", body, oneShot);
    if (!sameScan(fedIn({picked}), oneShot) || !sameScan(fedIn({picked / 2, picked}), oneShot))
        fail("a scan fed in reads the input picked differs from the one-shot scan", body, oneShot);
    if (n <= 256) {
        JsonBodyScanner scanner;
        for (qsizetype k = 0; k <= n; ++k)
            scanner.feed(QByteArrayView(body.constData(), k));
        if (!sameScan(scanner.finish(body), oneShot))
            fail("a scan fed a byte at a time differs from the one-shot scan", body, oneShot);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    const QByteArray body(reinterpret_cast<const char *>(data), qsizetype(size));
    const BodyScan ours = scanBody(body);
    checkSplits(body, ours);
    const QtVerdict qt = qtVerdict(body);
    const bool oursValid = ours.verdict != BodyScan::Verdict::NotJson;

    // Spans are always inside the body.
    if (ours.verdict == BodyScan::Verdict::Ok &&
        (ours.valueBegin < 0 || ours.valueEnd > body.size() || ours.valueBegin >= ours.valueEnd))
        fail("model span outside the body", body, ours);
    if (ours.streamBegin >= 0 &&
        (ours.streamEnd > body.size() || ours.streamBegin >= ours.streamEnd))
        fail("stream span outside the body", body, ours);

    if (oursValid != qt.valid) {
        if (knownDifference(body, ours, qt))
            return 0;
        fail(oursValid ? "valid for us, invalid for QJsonDocument"
                       : "invalid for us, valid for QJsonDocument",
             body, ours);
    }
    if (!oursValid)
        return 0;
    if ((ours.verdict != BodyScan::Verdict::NotObject) != qt.isObject)
        fail("object-or-not differs", body, ours);
    if (!qt.isObject)
        return 0;
    const QJsonObject &o = qt.object;
    const bool repeatedFlags = hasRepeatedTopLevelFlagKey(body);
    if (!repeatedFlags && ours.stream != expectedStream(o))
        fail("stream differs", body, ours);
    if (!repeatedFlags && ours.wantsLogprobs != expectedLogprobs(o))
        fail("wantsLogprobs differs", body, ours);

    const bool hasModel = o.contains(QLatin1String("model"));
    const QJsonValue mv = o.value(QLatin1String("model"));
    switch (ours.verdict) {
    case BodyScan::Verdict::ModelMissing:
        if (hasModel)
            fail("ModelMissing but QJsonObject has a model", body, ours);
        return 0;
    case BodyScan::Verdict::ModelNotString:
        // With a duplicate the scanner says ModelDuplicate; a single non-string model here.
        if (!hasModel || mv.isString())
            fail("ModelNotString disagrees", body, ours);
        return 0;
    case BodyScan::Verdict::ModelDuplicate:
        if (!hasModel)
            fail("ModelDuplicate but no model", body, ours);
        return 0;
    case BodyScan::Verdict::ModelAmbiguous: {
        // Refused where Go's decoder would read another key: a case variant of "model".
        bool lookalike = false;
        for (const QString &key : o.keys())
            lookalike =
                lookalike || (key != QLatin1String("model") &&
                              key.compare(QLatin1String("model"), Qt::CaseInsensitive) == 0);
        if (!lookalike)
            fail("ModelAmbiguous without a case variant of \"model\"", body, ours);
        return 0;
    }
    default:
        break;
    }
    // Known difference: QJsonDocument decodes with QString::fromUtf8, which drops a U+FEFF at
    // the start of a string (it takes it for a byte-order mark); the scanner keeps every
    // character the client sent. Compare without U+FEFF.
    const auto withoutBom = [](QString text) { return text.remove(QChar(0xFEFF)); };
    if (!mv.isString() || withoutBom(mv.toString()) != withoutBom(ours.model))
        fail("model value differs", body, ours);
    const QByteArray span = body.mid(ours.valueBegin, ours.valueEnd - ours.valueBegin);
    const std::optional<QString> qtSpan = qtDecodeLiteral(span);
    if (!qtSpan || withoutBom(*qtSpan) != withoutBom(ours.model))
        fail("model span does not decode to the model", body, ours);

    // The splice changes only the span and keeps the document otherwise identical.
    const QString newModel = QStringLiteral("renamed \"x\"\n\\ \u00e9");
    const QByteArray lit = jsonStringLiteral(newModel);
    const QByteArray out = spliceModel(body, ours, newModel);
    if (out.left(ours.valueBegin) != body.left(ours.valueBegin) ||
        out.mid(ours.valueBegin + lit.size()) != body.mid(ours.valueEnd) ||
        out.mid(ours.valueBegin, lit.size()) != lit)
        fail("splice touched bytes outside the span", body, ours);
    const BodyScan re = scanBody(out);
    if (re.verdict != BodyScan::Verdict::Ok || re.model != newModel ||
        re.valueBegin != ours.valueBegin)
        fail("rescan of the spliced body differs", body, ours);
    QJsonParseError err;
    QJsonObject after = QJsonDocument::fromJson(out, &err).object();
    if (err.error != QJsonParseError::NoError || after.value(QLatin1String("model")) != newModel)
        fail("spliced body lost the new model", body, ours);
    QJsonObject before = o;
    before.remove(QLatin1String("model"));
    after.remove(QLatin1String("model"));
    if (before != after)
        fail("spliced body differs outside the model", body, ours);

    // The aggregate-mode splice: stream becomes true, nothing else but the model changes.
    const QByteArray streamed = spliceStreamTrue(body, ours, QString());
    if (!streamed.isEmpty()) {
        const BodyScan rs = scanBody(streamed);
        if (rs.verdict != BodyScan::Verdict::Ok || rs.stream != BodyScan::Stream::True ||
            rs.model != ours.model)
            fail("spliceStreamTrue result wrong", body, ours);
    }
    return 0;
}
