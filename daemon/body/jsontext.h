// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "wire/hex.h"

#include <QString>

// JSON text helpers of the body scanner (internal to body/): key classification and string
// decoding over bytes the scanner has already validated.

namespace slp::jsontext {

enum class KeyKind : quint8
{
    Other,
    Model,
    ModelLookalike, // "model" in another case ("Model", "MODEL"): Go's encoding/json takes it
    Stream,
    Logprobs,
    TopLogprobs,
    Echo,
    PromptLogprobs
};

inline bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

// The first byte at or after `pos` that is not plain string text (a quote, a backslash, a
// control character or a byte >= 0x80), or `n`: the scanner's hot loop.
qsizetype skipPlain(const char *p, qsizetype pos, qsizetype n);

// Length of the UTF-8 sequence at `pos` (lead byte >= 0x80) per Unicode table 3-7, or 0 when
// it is invalid: overlong forms, encoded surrogates, anything above U+10FFFF, cut short.
qsizetype utf8SequenceLength(const uchar *u, qsizetype pos, qsizetype n);

// The first byte of `bytes` [begin, end) that does not start a well-formed UTF-8 sequence,
// or -1 when all of it is well-formed: the check a model id gets wherever it came from.
qsizetype firstInvalidUtf8(const uchar *u, qsizetype begin, qsizetype end);

// Which top-level key the scanner cares about `s` (n bytes, no escapes) is.
KeyKind classifyKey(const char *s, qsizetype n);
// The same for a key with escapes (decoded first).
KeyKind classifyEscapedKey(const char *s, qsizetype n);
// Decodes a validated string body (between the quotes) to UTF-16. \u escapes become code
// units as written, so surrogate pairs join and lone surrogates stay, as in QJsonDocument.
QString decodeString(const char *s, qsizetype n, bool hasEscapes);

} // namespace slp::jsontext
