// SPDX-License-Identifier: GPL-3.0-or-later
// compileConfig on arbitrary YAML: never crash, hang or leak; an error list is never empty
// and every error names a line within the text (or 0 = unknown); a compiled config has
// consistent limits and a start-up dump line for every route. yaml-cpp itself is not
// instrumented: a crash inside it still shows, its coverage does not guide.
#include "config/config.h"

#include <cstdio>
#include <cstdlib>

using namespace slp;

namespace {
[[noreturn]] void fail(const char *what, const QByteArray &yaml)
{
    std::fprintf(stderr, "fuzz_config: %s\n  yaml:\n%s\n", what, yaml.left(2000).constData());
    std::abort();
}
} // namespace

// yaml-cpp 0.7 loops forever when a ',' starts a token in block context: a line starting with
// ',' (fuzz/findings/fuzz_config-yaml-cpp-hang) or one after an anchor ("&a ,a"). slp bounds
// that with a deadline around the parse (daemon/main.cpp, Daemon::reload); here any ',' outside
// a flow collection is skipped, so the fuzzer keeps looking for new bugs instead.
static bool knownYamlCppHang(const QByteArray &yaml)
{
    int depth = 0;
    char quote = 0;
    for (const char c : yaml)
        if (quote)
            quote = c == quote ? 0 : quote;
        else if (c == '"' || c == '\'')
            quote = c;
        else if (c == '[' || c == '{')
            ++depth;
        else if ((c == ']' || c == '}') && depth > 0)
            --depth;
        else if (c == '\n')
            quote = 0;
        else if (c == ',' && depth == 0)
            return true;
    return false;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    // Deep YAML nesting recurses inside yaml-cpp (its own limit is far above what a config
    // needs); 16 KiB is plenty for any real config.
    if (size > 16 * 1024)
        return 0;
    const QByteArray yaml(reinterpret_cast<const char *>(data), qsizetype(size));
    if (knownYamlCppHang(yaml))
        return 0;
    const ConfigResult result = compileConfig(yaml, QStringLiteral("fuzz.yaml"));
    if (const auto *errors = std::get_if<QList<ConfigError>>(&result)) {
        if (errors->isEmpty())
            fail("failed without an error", yaml);
        const int lines = int(yaml.count('\n')) + 2;
        for (const ConfigError &e : *errors) {
            if (e.what.isEmpty())
                fail("an error without a message", yaml);
            if (e.line < 0 || e.line > lines)
                fail("an error line outside the text", yaml);
            (void)e.toString();
        }
        return 0;
    }
    const Config &config = std::get<Config>(result);
    if (config.maxBodyBytes <= 0 || config.maxHeaderBytes <= 0 || config.maxConnections <= 0)
        fail("a non-positive limit compiled", yaml);
    if (config.headerTimeout.count() <= 0 || config.idleTimeout.count() <= 0)
        fail("a non-positive timeout compiled", yaml);
    if (config.shutdownGrace.count() < 0)
        fail("a negative shutdown_grace compiled", yaml);
    for (int i = 0; i < config.routes.size(); ++i) {
        const Route &r = config.routes.at(i);
        if (r.id.isEmpty() || r.timeout.count() <= 0)
            fail("a route without an id or timeout", yaml);
        if (!r.url.isValid() ||
            (r.url.scheme() != QLatin1String("http") && r.url.scheme() != QLatin1String("https")))
            fail("a route with a non-http(s) URL", yaml);
        if (r.followsRoute >= config.routes.size())
            fail("followsRoute out of range", yaml);
        if (routeDumpLine(config, i, 40).isEmpty())
            fail("empty dump line", yaml);
    }
    return 0;
}
