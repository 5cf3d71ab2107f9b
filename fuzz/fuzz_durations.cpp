// SPDX-License-Identifier: GPL-3.0-or-later
// parseGoDuration / formatGoDuration and parseListenAddress on arbitrary text: never crash
// (UBSan watches the overflow arithmetic); a parsed duration formats to text that parses back
// to the same value; a parsed listen address keeps its text and gives a port in range.
#include "config/listenaddress.h"
#include "goduration.h"

#include <cstdio>
#include <cstdlib>

using namespace slp;

namespace {
[[noreturn]] void fail(const char *what, const QString &text)
{
    std::fprintf(stderr, "fuzz_durations: %s\n  text: %s\n", what, qPrintable(text));
    std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    const QString text = QString::fromUtf8(reinterpret_cast<const char *>(data), qsizetype(size));

    QString error;
    const std::optional<Nanoseconds> d = parseGoDuration(text, &error);
    if (!d) {
        if (error.isEmpty())
            fail("duration refused without a reason", text);
    } else {
        const QString formatted = formatGoDuration(*d);
        const std::optional<Nanoseconds> again = parseGoDuration(formatted);
        if (!again || *again != *d)
            fail("formatGoDuration does not parse back to the same value", text);
    }

    QString listenError;
    const std::optional<ListenAddress> addr = parseListenAddress(text, &listenError);
    if (!addr) {
        if (listenError.isEmpty())
            fail("listen address refused without a reason", text);
    } else {
        if (addr->text != text || addr->host.isNull())
            fail("listen address lost its text or host", text);
    }
    return 0;
}
