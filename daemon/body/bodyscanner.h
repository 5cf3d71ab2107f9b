// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <memory>

namespace slp {

// One pass over a request body, no document built: finds the top-level "model" string, its
// exact byte span, a duplicate top-level "model", the top-level "stream" flag and whether any
// logprobs-family key is present (aggregate mode must pass those through). The whole body is
// validated as JSON (RFC 8259) on the way, so "not JSON" is known without a second pass.
struct BodyScan
{
    enum class Verdict
    {
        Ok,
        NotJson,   // empty, malformed, trailing garbage, invalid UTF-8 in a string, ...
        NotObject, // valid JSON whose top level is not an object
        ModelMissing,
        ModelNotString,
        ModelDuplicate, // "model" given twice at top level (keys compared after unescaping)
        // A top-level key that is "model" in another case ("Model"): Go's encoding/json
        // matches keys without case and would read that one.
        ModelAmbiguous,
    };
    Verdict verdict = Verdict::NotJson;
    QString error; // short reason for NotJson ("unexpected '}' at byte 17")

    QString model;             // decoded value of the top-level "model" (Ok only)
    qsizetype valueBegin = -1; // offset of the opening quote of the model value
    qsizetype valueEnd = -1;   // offset one past the closing quote

    // "stream": absent, true, false, or present with another type (treated as not streaming)
    enum class Stream
    {
        Absent,
        True,
        False,
        Other
    };
    Stream stream = Stream::Absent;

    // Byte span of the last top-level "stream" value when it is a scalar (true, false, null,
    // a number or a string), else -1; and the offset of the top-level '{'. Aggregate mode
    // uses them to set "stream": true, its one body edit besides the model.
    qsizetype streamBegin = -1;
    qsizetype streamEnd = -1;
    qsizetype objectOpen = -1;

    // Any top-level key of: logprobs, top_logprobs, echo, prompt_logprobs (any value but
    // false/null)
    bool wantsLogprobs = false;
};

// Scans `body`. Nesting deeper than `maxDepth` is NotJson (no recursion: an explicit stack).
BodyScan scanBody(const QByteArray &body, int maxDepth = 512);

namespace jsonscan {
class Scanner;
}

// The same scan, fed as the body arrives: feed() after every read (every byte so far, in the
// request's one buffer; the buffer may move as it grows, the scanner keeps offsets), finish()
// once the body is whole. finish() answers exactly what scanBody() answers for the whole
// body, wherever the reads were cut; most of the body is read once, as it lands, so finish()
// has little left to do. A step cut by the end of the bytes so far is retried; a string keeps
// its progress (a 60 MB string is read once), and a long number or run of blanks is retried
// only after the bytes behind it have doubled, so the work stays linear in the body.
class JsonBodyScanner
{
public:
    explicit JsonBodyScanner(int maxDepth = 512);
    ~JsonBodyScanner();
    JsonBodyScanner(JsonBodyScanner &&) noexcept;
    JsonBodyScanner &operator=(JsonBodyScanner &&) noexcept;

    void feed(QByteArrayView soFar);
    BodyScan finish(QByteArrayView body);
    // Bytes read for good so far: it only moves forward (for tests).
    qsizetype progress() const;
    // Feeds that ran the walk (the others waited for more bytes): for tests.
    int walks() const;

private:
    std::unique_ptr<jsonscan::Scanner> m_scanner;
};

// Decisions where RFC 8259 and QJsonDocument::fromJson disagree (the scanner follows the RFC;
// tst_body_scanner's differential test excludes exactly these cases):
//  - a leading UTF-8 BOM is rejected (RFC 8259 section 8.1: senders MUST NOT add one); Qt skips it;
//  - raw control characters U+0000..U+001F inside strings are rejected; Qt accepts them;
//  - unknown escapes ("\x", "\'") are rejected; Qt keeps the escaped character;
//  - numbers must have digits before and after '.' ("1.", ".5", "-.5" are rejected); Qt
//    accepts them;
//  - numbers outside double's range (1e999, 1e-999) are accepted (the RFC's grammar has no
//    range); Qt rejects them;
//  - a scalar at the top level is valid JSON (NotObject); Qt refuses any non-container;
//  - nesting is limited by maxDepth (512 by default); Qt allows 1024;
//  - lone surrogates in \u escapes are accepted (the RFC's grammar allows them) and decoded
//    as lone UTF-16 code units, exactly as Qt does.
// A repeated "stream" or logprobs-family key: the last one counts, as in the Python servers
// behind SLP.

} // namespace slp
