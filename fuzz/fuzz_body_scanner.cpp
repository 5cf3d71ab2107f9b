// SPDX-License-Identifier: GPL-3.0-or-later
// Differential fuzzing of the one-pass body scanner against QJsonDocument: the same verdict
// class (JSON or not, object or not), the same model (present / string / its value), the same
// stream flag and logprobs flag, a span that decodes to the model, and a splice that changes
// nothing else. The documented differences (bodyscanner.cpp's header comment; the JSON oracle in
// tests/support/json, shared with tst_body_scanner) are the only disagreements allowed.
#include "body/bodyscanner.h"
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

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    const QByteArray body(reinterpret_cast<const char *>(data), qsizetype(size));
    const BodyScan ours = scanBody(body);
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
