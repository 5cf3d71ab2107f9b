// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <functional>

namespace slp {

// The SSE half of SseAggregator: bytes of a text/event-stream, in any split (mid-line,
// mid-UTF-8, mid-CRLF), to events, by the WHATWG rules: LF, CRLF or lone CR line endings, a
// leading BOM dropped, the "data:" lines of one event joined by "\n", comments and other
// fields ignored. llama.cpp's server reports a failure as one `error: {...}` line: that is an
// event of its own. One pending event is bounded. Pure.
class SseEventReader
{
public:
    struct Event
    {
        bool errorLine = false; // an `error:` line; `data` is its value
        QByteArray data;
    };
    // Gets each event as it completes; false stops the reading.
    using Sink = std::function<bool(const Event &)>;

    explicit SseEventReader(qint64 maxEventBytes);

    // False once stopped: the sink said so, or the pending event outgrew the bound
    // (overLimit()).
    bool feed(QByteArrayView bytes, const Sink &sink);
    // The input ended: an unterminated last line is read. The data of an event whose blank
    // line never came is left in `pending` (empty when there is none).
    bool finish(const Sink &sink, QByteArray *pending);
    bool overLimit() const { return m_overLimit; }
    qint64 maxEventBytes() const { return m_maxEventBytes; }
    // Frees the buffers (nothing more is read).
    void release();

private:
    bool processLine(QByteArrayView line);
    bool checkPending();

    qint64 m_maxEventBytes;
    const Sink *m_sink = nullptr; // during feed() and finish()
    QByteArray m_line;            // the current, incomplete line
    QByteArray m_data;            // data lines of the current event, joined by '\n'
    bool m_hasData = false;       // the current event has at least one data line
    bool m_skipLf = false;        // the last line ended in CR: a following LF belongs to it
    bool m_atStart = true;        // no line seen yet (BOM stripping)
    bool m_overLimit = false;
    bool m_stopped = false;
};

} // namespace slp
