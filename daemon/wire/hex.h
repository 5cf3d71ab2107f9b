// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

namespace slp {

// The value of one hexadecimal digit, either case, or -1 for any other byte. Chunk sizes
// (RFC 9112 7.1), JSON \u escapes (RFC 8259 7) and percent-encoding (RFC 3986 2.1) all spell
// hex this way.
constexpr int hexValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

} // namespace slp
