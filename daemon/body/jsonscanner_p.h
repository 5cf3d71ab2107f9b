// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// The JSON body scanner's state, private to body/ (jsonscanner.cpp walks the structure and
// scans the tokens; bodyscanner.cpp starts, finishes and answers).

#include "bodyscanner.h"
#include "jsontext.h"

#include <QByteArrayView>
#include <QVarLengthArray>

namespace slp::jsonscan {

// What a top-level value was, as far as the keys the scan records care.
enum class ValueKind
{
    Compound, // an object or an array
    String,
    True,
    False,
    Null,
    Number
};

// The top-level facts gathered on the way. "Last one wins" for repeated stream/logprobs keys,
// as in the Python servers behind us, while a repeated "model" is an error of its own.
struct TopLevelFacts
{
    bool isObject = false;
    qsizetype objectOpen = -1;
    int modelCount = 0;
    bool modelLookalike = false; // a top-level "Model", "MODEL", ... besides or instead
    bool modelIsString = false;
    qsizetype modelBegin = -1, modelEnd = -1;
    bool modelEscapes = false;
    BodyScan::Stream stream = BodyScan::Stream::Absent;
    qsizetype streamBegin = -1, streamEnd = -1; // last top-level scalar "stream" value
    bool logprobsWanted[4] = {false, false, false, false};
};

// One walk over a body that may still be arriving. Every check that looks past the bytes
// there are either fails (the body is whole: `final`) or asks for more: the step in hand is
// undone to its checkpoint and retried when more bytes come, so the answer never depends on
// where the reads were cut. A string keeps its progress across retries, so a 60 MB string
// is read once; other tokens are short, and a long one (a run of digits or blanks) is
// retried only after the bytes pending behind it have doubled.
class Scanner
{
public:
    explicit Scanner(int maxDepth) : m_maxDepth(maxDepth) {}

    // Walks as far as `bytes` allows (every byte so far); `final`: there are no more.
    void advance(QByteArrayView bytes, bool final);
    BodyScan verdict() const;
    int walks() const { return m_walks; }
    // Bytes read for good: the step in hand's checkpoint, or as far as its string was read.
    qsizetype progress() const
    {
        if (m_string.open < m_pos)
            return m_pos;
        return m_string.end >= 0 ? m_string.end : m_string.resumeAt;
    }

private:
    enum class State
    {
        Value,
        Key,
        After,
        Done,
        Failed
    };
    enum class Step
    {
        Ok,
        Fail,
        NeedMore
    };

    Step start();
    void walk();
    Step value();
    Step openContainer(char c, jsontext::KeyKind key);
    Step scalar(char c, jsontext::KeyKind key);
    Step key();
    Step after();
    void record(jsontext::KeyKind key, ValueKind kind, qsizetype begin, qsizetype end,
                bool escapes = false);
    void restore();

    // the tokens
    Step scanString(qsizetype &pos, bool &hasEscapes);
    Step scanEscape(qsizetype &pos, qsizetype start);
    // A non-ASCII byte at pos starts a UTF-8 sequence: on Ok pos is one past it.
    Step scanUtf8(qsizetype &pos);
    Step scanNumber(qsizetype &pos);
    Step scanLiteral(qsizetype &pos, const char *lit, qsizetype len);

    void skipWs(qsizetype &pos) const
    {
        while (pos < m_n) {
            const char c = m_p[pos];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
                break;
            ++pos;
        }
    }
    Step fail(const QString &why)
    {
        m_error = why;
        return Step::Fail;
    }
    // Past the bytes there are: an error when the body is whole, else a wait for more.
    Step endOfBytes(const QString &whenWhole) { return m_final ? fail(whenWhole) : Step::NeedMore; }
    Step unexpected(qsizetype pos);

    const char *m_p = nullptr;
    qsizetype m_n = 0;
    bool m_final = false;
    bool m_started = false;
    int m_maxDepth;
    QString m_error;
    qsizetype m_pos = 0;
    State m_state = State::Value;
    // One byte per open container: '{' or '['. Depth 1 is the top-level object.
    QVarLengthArray<char, 64> m_stack;
    jsontext::KeyKind m_pendingKey = jsontext::KeyKind::Other; // key whose value comes next
    TopLevelFacts m_top;

    // The step in hand's checkpoint (a step changes the stack by one push or pop at most,
    // and the facts only when it records a top-level key).
    struct Checkpoint
    {
        qsizetype pos = 0;
        State state = State::Value;
        qsizetype depth = 0;
        char top = 0;
        jsontext::KeyKind pendingKey = jsontext::KeyKind::Other;
        bool factsSaved = false;
        TopLevelFacts facts;
    } m_checkpoint;
    qsizetype m_retryAt = 0; // retry a waiting step once this many bytes are there
    int m_walks = 0;         // times the walk ran: feeds it did not skip

    // The string a retried step meets again: how far it was read, or where it ended.
    struct StringProgress
    {
        qsizetype open = -1; // its opening quote
        qsizetype resumeAt = -1;
        qsizetype end = -1; // one past the closing quote, once seen
        bool escapes = false;
    } m_string;
};

} // namespace slp::jsonscan
