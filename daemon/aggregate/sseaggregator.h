// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "aggregate/choiceassembler.h"
#include "aggregate/sseeventreader.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonValue>
#include <QString>

namespace slp {

// Reassembles an OpenAI-style SSE completion stream (vLLM, OpenAI, llama.cpp shapes) into the
// non-streaming JSON body the client asked for (aggregate: true). Pure: no sockets, no event
// loop. Feed the upstream body bytes as they arrive, in any split, then call finishInput() when
// the body ends; state() says what happened.
//
//   SseAggregator agg(SseAggregator::Kind::Chat);
//   agg.feed(bytes) ...;            // stops consuming once state() != Streaming
//   agg.finishInput();              // connection closed / body complete
//   switch (agg.state()) { Done: 200 + result(); UpstreamError: 502 + errorJson();
//                          Malformed: 502, log malformedReason(); }
//
// SSE follows the WHATWG event-stream rules: LF, CRLF or lone CR line endings, a leading BOM is
// dropped, "data:" lines of one event are joined by "\n", comments and other fields are ignored,
// an event with blank data is a keep-alive. "data: [DONE]" ends the stream; anything fed after
// it is ignored.
//
// Chat result: {"id","object":"chat.completion","created","model",...,"choices":[{"index",
// "message":{"role","content",["reasoning_content"],["tool_calls"]},"logprobs":null,
// "finish_reason",...}],["usage"]}.
// - Top-level fields: every chunk's top-level fields merged, a later non-null value winning and
//   a null only filling a key not seen yet (so the final chunk's id/model/system_fingerprint/
//   x_gllm/timings/... are carried over);
//   "object" is replaced, "choices" and "usage" are built as below.
// - "usage": the last non-null usage of any chunk; absent if no chunk carried one.
// - Per choice (by "index", output sorted): role from the first delta that has one (default
//   "assistant"); content concatenated (null when empty and there are tool calls); any other
//   string delta field (reasoning_content, reasoning, refusal, ...) concatenated and present
//   only if some chunk had it non-null; tool_calls assembled by their index (id, type, name from
//   the first chunk that has them, arguments concatenated); finish_reason the last non-null one;
//   other per-choice fields (stop_reason, ...) merged the same way; other non-null, non-string
//   delta fields: the last one.
// Completion result: the same with "object":"text_completion" and choices[].text concatenated.
//
// Errors: a JSON event with a non-null top-level "error" (or "object":"error"), or an
// `error: {...}` line (llama.cpp's server), is the upstream's in-band error -> UpstreamError. A
// data payload that is not a JSON object, a malformed chunk shape, an event or output beyond the
// limit, or the end of input before [DONE] -> Malformed.
//
// Memory stays proportional to the generated output: the raw stream is not kept, only the
// pending (incomplete) event, the assembled strings and the merged extra fields.
//
// A composition of two parts: SseEventReader (bytes to events) and ChoiceAssembler (each
// chunk's JSON into the answer); this class decides what an event means ([DONE], an error,
// a chunk) and keeps the state.
class SseAggregator
{
public:
    using Kind = AnswerKind;
    enum class State
    {
        Streaming,
        Done,
        UpstreamError,
        Malformed
    };

    // maxOutputBytes bounds the assembled output (UTF-8 bytes of the concatenated strings plus
    // the carried-over fields); one pending SSE event may additionally be up to that plus 1 MiB.
    explicit SseAggregator(Kind kind, qint64 maxOutputBytes = 256 * 1024 * 1024);

    // Raw SSE bytes in any split (mid-line, mid-UTF-8, mid-CRLF). No-op once not Streaming.
    void feed(QByteArrayView bytes);
    // The body ended. An unterminated last line/event is still processed (a final
    // "data: [DONE]" without its blank line counts); if [DONE] was not seen the state becomes
    // Malformed ("stream ended before data: [DONE]"). No-op once not Streaming.
    void finishInput();

    State state() const { return m_state; }
    // UpstreamError: {"error": <the upstream's error object>}. A non-object error value is
    // wrapped: {"error":{"message":"<string>"}} or {"error":{"message":"upstream error",
    // "detail":<value>}}. Empty otherwise.
    QByteArray errorJson() const;
    // Malformed: why, for the log (never for the client). Empty otherwise.
    QString malformedReason() const { return m_malformedReason; }
    // Malformed because the reassembled output outgrew maxOutputBytes.
    bool outputTooLarge() const { return m_outputTooLarge; }
    // Done: the reassembled non-streaming JSON body (compact). Empty otherwise.
    QByteArray result() const;

private:
    bool onEvent(const SseEventReader::Event &event);
    void checkEventLimit();
    void handleEvent(const QByteArray &data);
    void releaseIfFinished();
    void setMalformed(const QString &reason);

    State m_state = State::Streaming;
    QString m_malformedReason;
    bool m_outputTooLarge = false;
    QJsonValue m_error;
    qint64 m_eventCount = 0; // dispatched events, for error messages
    SseEventReader m_reader;
    ChoiceAssembler m_answer;
};

} // namespace slp
