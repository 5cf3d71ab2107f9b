// SPDX-License-Identifier: GPL-3.0-or-later
// SseAggregator on arbitrary SSE bytes: never crash, and the same outcome (state, result,
// error object, reason) whether the stream arrives in one piece or split at fuzz-chosen
// points (mid-line, mid-CRLF, mid-UTF-8). A Done result is always a JSON object; an
// UpstreamError always carries {"error": {...}}. A small output limit exercises the bounds.
#include "aggregate/sseaggregator.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>
#include <cstdlib>

using namespace slp;

namespace {
[[noreturn]] void fail(const char *what, QByteArrayView sse)
{
    std::fprintf(stderr, "fuzz_sse_aggregator: %s\n  stream (%lld bytes): %s\n", what,
                 static_cast<long long>(sse.size()),
                 sse.toByteArray().left(600).toPercentEncoding().constData());
    std::abort();
}

struct Outcome
{
    SseAggregator::State state;
    QByteArray result;
    QByteArray error;
    QString reason;
};

Outcome run(SseAggregator::Kind kind, qint64 limit, QByteArrayView sse, QByteArrayView splits)
{
    SseAggregator agg(kind, limit);
    qsizetype pos = 0;
    qsizetype k = 0;
    while (pos < sse.size()) {
        qsizetype step =
            splits.isEmpty() ? sse.size() : (uchar(splits[k++ % splits.size()]) % 31) + 1;
        step = std::min(step, sse.size() - pos);
        agg.feed(sse.sliced(pos, step));
        pos += step;
    }
    agg.finishInput();
    return {agg.state(), agg.result(), agg.errorJson(), agg.malformedReason()};
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4 || size > 64 * 1024)
        return 0;
    // Byte 0: kind and limit; bytes 1..3: split pattern; the rest is the stream.
    const auto kind = (data[0] & 1) ? SseAggregator::Kind::Completion : SseAggregator::Kind::Chat;
    const qint64 limit = (data[0] & 2) ? 256 : 64 * 1024;
    const QByteArrayView splits(reinterpret_cast<const char *>(data + 1), 3);
    const QByteArrayView sse(reinterpret_cast<const char *>(data + 4), qsizetype(size - 4));

    const Outcome whole = run(kind, limit, sse, {});
    const Outcome split = run(kind, limit, sse, splits);
    if (whole.state != split.state)
        fail("state depends on how the stream was split", sse);
    if (whole.result != split.result || whole.error != split.error)
        fail("result depends on how the stream was split", sse);
    switch (whole.state) {
    case SseAggregator::State::Streaming:
        fail("still Streaming after finishInput", sse);
    case SseAggregator::State::Done: {
        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(whole.result, &err);
        if (err.error != QJsonParseError::NoError || !doc.isObject())
            fail("Done but the result is not a JSON object", sse);
        break;
    }
    case SseAggregator::State::UpstreamError: {
        const QJsonDocument doc = QJsonDocument::fromJson(whole.error);
        if (!doc.isObject() || !doc.object().value(QLatin1String("error")).isObject())
            fail("UpstreamError without an error object", sse);
        break;
    }
    case SseAggregator::State::Malformed:
        if (whole.reason.isEmpty())
            fail("Malformed without a reason", sse);
        break;
    }
    return 0;
}
