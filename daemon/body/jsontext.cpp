// SPDX-License-Identifier: GPL-3.0-or-later
#include "jsontext.h"

#include <QStringDecoder>
#include <QVarLengthArray>

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace slp::jsontext {

namespace {
// QString::fromUtf8 drops a leading U+FEFF as a byte-order mark; inside a JSON string it is a
// character like any other, and the model id must decode exactly as the client wrote it.
QString utf8Exact(const char *s, qsizetype n)
{
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless |
                                                     QStringDecoder::Flag::ConvertInitialBom);
    return decoder.decode(QByteArrayView(s, n));
}
} // namespace

KeyKind classifyKey(const char *s, qsizetype n)
{
    auto is = [&](const char *lit) {
        const auto len = qsizetype(std::strlen(lit));
        return n == len && std::memcmp(s, lit, size_t(n)) == 0;
    };
    switch (n) {
    case 4:
        return is("echo") ? KeyKind::Echo : KeyKind::Other;
    case 5:
        if (is("model"))
            return KeyKind::Model;
        return QByteArrayView(s, n).compare("model", Qt::CaseInsensitive) == 0
                   ? KeyKind::ModelLookalike
                   : KeyKind::Other;
    case 6:
        return is("stream") ? KeyKind::Stream : KeyKind::Other;
    case 8:
        return is("logprobs") ? KeyKind::Logprobs : KeyKind::Other;
    case 12:
        return is("top_logprobs") ? KeyKind::TopLogprobs : KeyKind::Other;
    case 15:
        return is("prompt_logprobs") ? KeyKind::PromptLogprobs : KeyKind::Other;
    default:
        return KeyKind::Other;
    }
}

namespace {
// The code unit a validated escape at s[i] (its backslash) stands for; `length` gets how many
// bytes it spans. \u escapes become code units as written (surrogates are joined, or kept
// lone, by whoever reads the result).
char16_t decodeEscape(const char *s, qsizetype i, qsizetype *length)
{
    const char e = s[i + 1];
    *length = 2;
    switch (e) {
    case 'u': {
        int v = 0;
        for (int k = 0; k < 4; ++k)
            v = v * 16 + hexValue(s[i + 2 + k]);
        *length = 6;
        return char16_t(v);
    }
    case 'b':
        return u'\b';
    case 'f':
        return u'\f';
    case 'n':
        return u'\n';
    case 'r':
        return u'\r';
    case 't':
        return u'\t';
    default:
        return char16_t(uchar(e)); // '"', '\\', '/'
    }
}
} // namespace

// Decodes an already validated key body (between the quotes) that contains escapes. Only the
// few ASCII keys we look for matter, so anything long or non-ASCII is simply "Other".
KeyKind classifyEscapedKey(const char *s, qsizetype n)
{
    char buf[16];
    qsizetype len = 0;
    for (qsizetype i = 0; i < n;) {
        char16_t u = uchar(s[i]);
        qsizetype length = 1;
        if (s[i] == '\\')
            u = decodeEscape(s, i, &length);
        if (u >= 0x80 || len == qsizetype(sizeof buf))
            return KeyKind::Other;
        buf[len++] = char(u);
        i += length;
    }
    return classifyKey(buf, len);
}

QString decodeString(const char *s, qsizetype n, bool hasEscapes)
{
    if (!hasEscapes)
        return utf8Exact(s, n);
    QString out;
    out.reserve(n);
    qsizetype i = 0;
    while (i < n) {
        const char *bs = static_cast<const char *>(std::memchr(s + i, '\\', size_t(n - i)));
        const qsizetype runEnd = bs ? bs - s : n;
        if (runEnd > i)
            out += utf8Exact(s + i, runEnd - i);
        i = runEnd;
        if (i < n) {
            qsizetype length = 0;
            out += QChar(decodeEscape(s, i, &length));
            i += length;
        }
    }
    return out;
}

// The hot loop: base64 images make string bodies nearly all of a large request. Plain bytes
// (0x20..0x7f except '"' and '\\') are skipped 16 at a time; a signed compare against 0x20
// catches control characters and every byte >= 0x80 in one instruction.
qsizetype skipPlain(const char *p, qsizetype pos, qsizetype n)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (pos + 16 <= n) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + pos));
        const __m128i special =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                         _mm_cmplt_epi8(v, space));
        const int mask = _mm_movemask_epi8(special);
        if (mask != 0)
            return pos + __builtin_ctz(unsigned(mask));
        pos += 16;
    }
#else
    // SWAR: 8 bytes at a time; any flagged block falls to the byte loop below.
    constexpr quint64 ones = 0x0101010101010101ULL;
    constexpr quint64 highs = 0x8080808080808080ULL;
    auto hasZero = [](quint64 x) { return (x - ones) & ~x & highs; };
    while (pos + 8 <= n) {
        quint64 w;
        std::memcpy(&w, p + pos, 8);
        const quint64 special = (w & highs) | ((w - ones * 0x20) & ~w & highs) |
                                hasZero(w ^ (ones * '"')) | hasZero(w ^ (ones * '\\'));
        if (special != 0)
            break;
        pos += 8;
    }
#endif
    while (pos < n) {
        const uchar c = uchar(p[pos]);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
            return pos;
        ++pos;
    }
    return pos;
}

qsizetype firstInvalidUtf8(const uchar *u, qsizetype begin, qsizetype end)
{
    for (qsizetype i = begin; i < end;) {
        const qsizetype len = u[i] < 0x80 ? 1 : utf8SequenceLength(u, i, end);
        if (len == 0)
            return i;
        i += len;
    }
    return -1;
}

qsizetype utf8SequenceLength(const uchar *u, qsizetype pos, qsizetype n)
{
    const uchar c = u[pos];
    int len;
    uchar lo = 0x80, hi = 0xBF; // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        return 0;
    }
    if (pos + len > n || u[pos + 1] < lo || u[pos + 1] > hi)
        return 0;
    for (int k = 2; k < len; ++k)
        if ((u[pos + k] & 0xC0) != 0x80)
            return 0;
    return len;
}

} // namespace slp::jsontext
