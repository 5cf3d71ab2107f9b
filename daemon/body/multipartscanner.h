// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

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
    };
    Verdict verdict = Verdict::Malformed;
    QString error; // the 400's message: what is wrong and, for Malformed, at which byte

    QString model;             // the value, decoded (Ok only)
    qsizetype valueBegin = -1; // the value's bytes: [valueBegin, valueEnd)
    qsizetype valueEnd = -1;
    qsizetype closeEnd = -1; // one past the closing "--boundary--" (Ok only)
};

inline constexpr qsizetype maxModelBytes = 256;
inline constexpr qsizetype maxBoundaryBytes = 70; // RFC 2046 section 5.1.1

// Why `boundary` is not a usable RFC 2046 boundary (1..70 bchars, not ending in a space), or
// an empty string when it is.
QString boundaryError(QByteArrayView boundary);

// Scans `body` delimited by `boundary` (boundaryError(boundary) must be empty).
MultipartScan scanMultipart(const QByteArray &body, QByteArrayView boundary);

// Whether `value` cannot be a part's content in a body delimited by `boundary`: it would
// hold the delimiter (CRLF "--" boundary), counting the CRLF the content follows.
bool multipartValueError(const QString &value, QByteArrayView boundary);

// `body` with the model part's value bytes replaced by `newModel` in UTF-8; every other byte
// unchanged. Empty when scan is not Ok or the new value would contain the delimiter (CRLF
// "--" boundary) and so end the part early.
QByteArray spliceMultipartModel(const QByteArray &body, const MultipartScan &scan,
                                QByteArrayView boundary, const QString &newModel);

} // namespace slp
