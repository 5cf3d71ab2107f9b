// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "body/modelid.h"
#include "wire/mediatype.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

namespace slp {

// Finds the "model" form field of a multipart/form-data body (RFC 7578 on RFC 2046) in one
// pass, no parts copied: delimiters are found with memmem, so a 25 MB file part costs one
// search, never a byte-by-byte walk. The whole body is checked on the way: it must open with
// a delimiter (after an optional preamble), every part needs its header block and the body a
// closing delimiter (an epilogue after it is allowed).
//
// The model field is the part whose Content-Disposition is form-data with name="model".
struct MultipartScan
{
    enum class Verdict
    {
        Ok,
        Malformed,      // no opening or closing delimiter, a bad delimiter line, a bad header
        ModelMissing,   // no part named "model"
        ModelFile,      // the model part has a filename: a file, not a field
        ModelEmpty,     // zero bytes
        ModelTooLong,   // over maxModelBytes
        ModelNotUtf8,   // not well-formed UTF-8
        ModelDuplicate, // two parts named "model"
        Ambiguous,      // a part that mainstream parsers would read differently (error says)
    };
    Verdict verdict = Verdict::Malformed;
    QString error; // the 400's message: what is wrong and, for Malformed, at which byte

    QString model;             // the value, decoded (Ok only)
    qsizetype valueBegin = -1; // the value's bytes: [valueBegin, valueEnd)
    qsizetype valueEnd = -1;
    qsizetype closeEnd = -1; // one past the closing "--boundary--" (Ok only)
};

inline constexpr qsizetype maxBoundaryBytes = 70; // RFC 2046 section 5.1.1

// Why `boundary` is not a usable RFC 2046 boundary (1..70 bchars, not ending in a space), or
// an empty string when it is.
QString boundaryError(QByteArrayView boundary);

// Scans `body` delimited by `boundary` (boundaryError(boundary) must be empty).
MultipartScan scanMultipart(const QByteArray &body, QByteArrayView boundary);

// The same scan, fed as the body arrives (every byte so far after each read; the buffer may
// move, the scanner keeps offsets), finished once it is whole: finish() answers exactly what
// scanMultipart() answers, wherever the reads were cut. A delimiter search resumes where the
// last one stopped (less a delimiter's length), so a 25 MB file part is searched once.
class MultipartBodyScanner
{
public:
    explicit MultipartBodyScanner(QByteArrayView boundary);

    void feed(QByteArrayView soFar);
    MultipartScan finish(QByteArrayView body);
    // Bytes searched or walked for good so far: it only moves forward (for tests).
    qsizetype progress() const;

private:
    enum class Step
    {
        Ok,
        Fail,
        NeedMore
    };
    void advance(QByteArrayView bytes, bool final);
    Step walk();
    Step opening();
    // The next delimiter at or after `from`, -1 when there is none in a whole body, -2 when
    // the bytes so far have none (the search resumes from m_searchFrom).
    qsizetype search(qsizetype from);
    // What a part's header lines say, as far as the model is concerned.
    struct PartHeaders
    {
        int dispositions = 0;
        bool isModel = false;
        bool isFile = false;
        bool transferEncoded = false;    // a Content-Transfer-Encoding (some parsers decode it)
        bool otherCharset = false;       // a charset other than UTF-8 (some parsers apply it)
        const char *ambiguity = nullptr; // why parsers would read its name differently
    };
    bool part(qsizetype begin, qsizetype end);
    bool headerLine(qsizetype begin, qsizetype end, PartHeaders &h);
    // The part's headers, read: false (an ambiguity named) when parsers would disagree on it.
    bool checkPart(qsizetype begin, const PartHeaders &h);
    static void readDisposition(const HeaderParameters &d, PartHeaders &h);
    void verdict();
    bool at(qsizetype pos, QByteArrayView text) const;
    qsizetype find(qsizetype from, QByteArrayView needle, qsizetype limit) const;
    Step fail(const QString &why);
    QString quotedBoundary(const char *suffix) const;

    QByteArray m_boundary;
    QByteArray m_delimiter; // CRLF "--" boundary
    const char *m_p = nullptr;
    qsizetype m_n = 0;
    bool m_final = false;
    bool m_opened = false;       // past the opening delimiter
    bool m_ended = false;        // a verdict is known (the closing delimiter, or an error)
    qsizetype m_pos = 0;         // where the last delimiter ended
    qsizetype m_searchFrom = -1; // the pending delimiter search resumes here
    qsizetype m_retryAt = 0;
    MultipartScan m_scan;
    int m_modelParts = 0;
    bool m_modelIsFile = false;
    bool m_ambiguous = false; // the failure is an ambiguity, not malformed bytes
};

// Whether `value` cannot be a part's content in a body delimited by `boundary`: it would
// hold the delimiter (CRLF "--" boundary), counting the CRLF the content follows.
bool multipartValueError(const QString &value, QByteArrayView boundary);

} // namespace slp
