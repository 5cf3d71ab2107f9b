// SPDX-License-Identifier: GPL-3.0-or-later
// parsePromText on arbitrary text (what slp-monitor reads from a /metrics it does not control):
// never crash; an error names a line within the text; and every parsed sample written back
// with promSampleLine parses to the same name, labels and value (the daemon's writer and the
// monitor's reader agree).
#include "prometheustext.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace slp;

namespace {
[[noreturn]] void fail(const char *what, const QByteArray &text)
{
    std::fprintf(stderr, "fuzz_prom_text: %s\n  text (%lld bytes): %s\n", what,
                 static_cast<long long>(text.size()),
                 text.left(600).toPercentEncoding().constData());
    std::abort();
}

bool sameValue(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || a == b;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    const QByteArray text(reinterpret_cast<const char *>(data), qsizetype(size));
    const PromParseResult r = parsePromText(text);
    if (!r.error.isEmpty()) {
        if (r.errorLine <= 0 || r.errorLine > text.count('\n') + 1)
            fail("error line outside the text", text);
    }
    for (const PromSample &s : r.samples) {
        const QByteArray line = promSampleLine(s.name.toUtf8(), s.labels, s.value);
        const PromParseResult back = parsePromText(line);
        if (!back.error.isEmpty() || back.samples.size() != 1)
            fail("a parsed sample does not survive writing back", text);
        const PromSample &b = back.samples.first();
        if (b.name != s.name || b.labels != s.labels || !sameValue(b.value, s.value))
            fail("a sample written back parses differently", text);
    }
    return 0;
}
