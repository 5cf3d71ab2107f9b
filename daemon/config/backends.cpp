// SPDX-License-Identifier: GPL-3.0-or-later
// backends[]: one route per entry.
#include "config/compiler.h"
#include "config/diagnostics.h"

namespace slp::configc {

namespace {

void readName(YamlReader &in, const Field &f, const QString &path, BackendEntry &e)
{
    const auto name = in.readString(f, path);
    if (!name)
        return;
    e.column = f.mark().column + 1;
    if (name->isEmpty()) {
        in.error(f.mark(), QStringLiteral("%1 is empty").arg(path),
                 QStringLiteral("give the model id clients send"));
    } else if (hasSpaceOrControl(*name)) {
        in.error(f.mark(), QStringLiteral("%1 %2 contains whitespace").arg(path, goQuote(*name)),
                 QStringLiteral("model ids are matched exactly; remove the spaces"));
    } else {
        e.backend.name = *name;
        e.backend.nameOk = true;
    }
}

void readUrl(YamlReader &in, const Field &f, const QString &path, BackendEntry &e)
{
    if (const auto origin = in.readOrigin(f, path)) {
        e.backend.origin = *origin;
        e.backend.urlOk = true;
    }
}

void readPin(YamlReader &in, const Field &f, const QString &path, BackendEntry &e)
{
    const auto pin = in.readString(f, path);
    if (!pin)
        return;
    if (pin->trimmed().isEmpty())
        in.error(f.mark(), QStringLiteral("%1 is empty").arg(path),
                 QStringLiteral("remove model: to discover the name, or give the "
                                "upstream's model name"));
    else
        e.backend.pin = *pin;
}

// In this order in the "known keys" hint.
const Key<BackendEntry> kBackendKeys[] = {
    {"name", nullptr, readName, "add \"name: ID\": the model id clients send"},
    {"url", nullptr, readUrl, "add \"url: http://host:port\" (the origin only)"},
    {"timeout", "60s", routeTimeoutKey<BackendEntry>},
    {"model", nullptr, readPin},
    {"retry", "false", routeBoolKey<&Route::retry, BackendEntry>},
    {"aggregate", "false", routeBoolKey<&Route::aggregate, BackendEntry>},
    {"stream_idle_timeout", "0s", routeZeroOrMoreKey<&Route::streamIdleTimeout, BackendEntry>},
    {"sse_keepalive", "0s", routeZeroOrMoreKey<&Route::sseKeepalive, BackendEntry>},
    {"context_length", nullptr, routeContextLengthKey<BackendEntry>},
    {"headers", nullptr, routeHeadersKey<BackendEntry>},
};

} // namespace

std::span<const Key<BackendEntry>> backendKeys()
{
    return kBackendKeys;
}

void Compiler::readBackends(const Field &f)
{
    const QString noBackends = QStringLiteral("no backends: SLP would serve nothing");
    const QString addHint = QStringLiteral("add a backends: list with at least one entry, e.g. "
                                           "\"- name: my-model\" and \"url: http://host:8000\"");
    if (!f.present || f.value.IsNull()) {
        m_in.error(f.present ? f.mark() : YAML::Mark::null_mark(), noBackends, addHint);
        return;
    }
    if (!f.value.IsSequence()) {
        m_in.error(f.mark(), QStringLiteral("backends must be a list, not %1").arg(kindOf(f.value)),
                   QStringLiteral("write each backend as a list item starting with \"- name:\""));
        return;
    }
    if (f.value.size() == 0) {
        m_in.error(f.mark(), noBackends, addHint);
        return;
    }
    int index = 0;
    for (const YAML::Node &node : f.value)
        readBackend(node, index++);
}

void Compiler::readBackend(const YAML::Node &node, int index)
{
    const QString path = QStringLiteral("backends[%1]").arg(index);
    BackendEntry e;
    e.route.line = node.Mark().line + 1;
    e.column = node.Mark().column + 1;
    if (!node.IsMap()) {
        applyDefaults(m_in, backendKeys(), e);
        m_in.error(node.Mark(),
                   QStringLiteral("%1 must be a mapping, not %2").arg(path, kindOf(node)),
                   QStringLiteral("write each backend as \"- name: ...\" with url: etc. below it"));
    } else {
        const auto keys = m_in.fields(node, path, keyNames(backendKeys()));
        readKeys(m_in, backendKeys(), keys, path, node.Mark(), e);
    }

    Backend &b = e.backend;
    Route &r = e.route;
    b.line = r.line;
    b.nameColumn = e.column;
    r.id = b.name;
    r.backendName = b.name;
    r.origin = b.origin;
    r.url = QUrl(b.origin);
    if (b.pin) {
        r.nameSource = NameSource::Pinned;
        r.pinnedModel = *b.pin;
    } else {
        r.nameSource = NameSource::Discover;
    }
    m_backends.append(b);
    m_config.routes.append(r);
    m_routeColumns.append(e.column);
}

} // namespace slp::configc
