// SPDX-License-Identifier: GPL-3.0-or-later
#include "jsontext.h"

#include <QStringDecoder>
#include <QVarLengthArray>

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
        return is("model") ? KeyKind::Model : KeyKind::Other;
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

// Decodes an already validated key body (between the quotes) that contains escapes. Only the
// few ASCII keys we look for matter, so anything long or non-ASCII is simply "Other".
KeyKind classifyEscapedKey(const char *s, qsizetype n)
{
    char buf[16];
    qsizetype len = 0;
    for (qsizetype i = 0; i < n;) {
        char c = s[i];
        if (c == '\\') {
            const char e = s[i + 1];
            if (e == 'u') {
                int v = 0;
                for (int k = 0; k < 4; ++k)
                    v = v * 16 + hexValue(s[i + 2 + k]);
                if (v >= 0x80)
                    return KeyKind::Other;
                c = char(v);
                i += 6;
            } else {
                switch (e) {
                case 'b':
                    c = '\b';
                    break;
                case 'f':
                    c = '\f';
                    break;
                case 'n':
                    c = '\n';
                    break;
                case 'r':
                    c = '\r';
                    break;
                case 't':
                    c = '\t';
                    break;
                default:
                    c = e;
                    break; // '"', '\\', '/'
                }
                i += 2;
            }
        } else {
            if (uchar(c) >= 0x80)
                return KeyKind::Other;
            ++i;
        }
        if (len == qsizetype(sizeof buf))
            return KeyKind::Other;
        buf[len++] = c;
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
        if (i >= n)
            break;
        const char e = s[i + 1];
        switch (e) {
        case 'u': {
            int v = 0;
            for (int k = 0; k < 4; ++k)
                v = v * 16 + hexValue(s[i + 2 + k]);
            out += QChar(char16_t(v));
            i += 6;
            continue;
        }
        case 'b':
            out += QLatin1Char('\b');
            break;
        case 'f':
            out += QLatin1Char('\f');
            break;
        case 'n':
            out += QLatin1Char('\n');
            break;
        case 'r':
            out += QLatin1Char('\r');
            break;
        case 't':
            out += QLatin1Char('\t');
            break;
        default:
            out += QLatin1Char(e);
            break;
        }
        i += 2;
    }
    return out;
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
    for (int k = 2; k < len; ++k) {
        if ((u[pos + k] & 0xC0) != 0x80)
            return 0;
    }
    return len;
}

} // namespace slp::jsontext
