// SPDX-License-Identifier: GPL-3.0-or-later
// The top-level keys and discovery's.
#include "config/compiler.h"
#include "config/diagnostics.h"

#include <limits>

namespace slp::configc {

namespace {

void readListen(YamlReader &in, const Field &f, const QString &path, Config &c)
{
    const auto text = in.readString(f, path);
    if (!text)
        return;
    QString why;
    if (const auto addr = parseListenAddress(*text, &why))
        c.listen = *addr;
    else
        in.error(f.mark(), QStringLiteral("listen: %1").arg(why),
                 QStringLiteral("write \":8080\" (quoted) for all interfaces, "
                                "\"127.0.0.1:8080\" or \"[::1]:8080\" for one, "
                                "\"unix:/run/slp/slp.sock\" for a Unix socket"));
}

void readListenMode(YamlReader &in, const Field &f, const QString &path, Config &c)
{
    // Octal as chmod writes it; a plain YAML 0660 is read as that text, not as a number.
    const auto text = in.readString(f, path);
    if (!text)
        return;
    bool ok = !text->isEmpty() && text->size() <= 4;
    for (const QChar ch : *text)
        ok = ok && ch >= QLatin1Char('0') && ch <= QLatin1Char('7');
    if (ok) {
        c.listenMode = text->toInt(nullptr, 8);
        return;
    }
    in.error(f.mark(), QStringLiteral("%1: \"%2\" is not an octal file mode").arg(path, *text),
             QStringLiteral("write it as chmod does, e.g. 0660 (owner and group read and write)"));
}

void readTransport(YamlReader &in, const Field &f, const QString &path, Config &c)
{
    const auto v = in.readString(f, path);
    if (!v)
        return;
    const QList<QString> known = {QStringLiteral("qnam"), QStringLiteral("socket")};
    if (known.contains(*v)) {
        c.upstreamTransport = *v;
        return;
    }
    const QString guess = closest(*v, known);
    in.error(f.mark(), QStringLiteral("upstream_transport: unknown transport \"%1\"").arg(*v),
             guess.isEmpty()
                 ? QStringLiteral("use qnam or socket")
                 : QStringLiteral("did you mean \"%1\"? use qnam or socket").arg(guess));
}

void readMaxConnections(YamlReader &in, const Field &f, const QString &path, Config &c)
{
    if (const auto v = in.readInt(f, path, 1, std::numeric_limits<int>::max(),
                                  QStringLiteral("use a positive number, e.g. 10000")))
        c.maxConnections = int(*v);
}

void readMaxUpstreamConnections(YamlReader &in, const Field &f, const QString &path, Config &c)
{
    // Below 6 would reintroduce the per-host queueing the contract forbids.
    if (const auto v = in.readInt(f, path, 6, std::numeric_limits<int>::max(),
                                  QStringLiteral("use at least 6, e.g. 1024")))
        c.maxUpstreamConnections = int(*v);
}

void readWorkers(YamlReader &in, const Field &f, const QString &path, Config &c)
{
    // Each worker is one more event loop on the port; beyond the core count they only
    // contend, and 64 bounds a typo such as 1000.
    if (const auto v =
            in.readInt(f, path, 1, kMaxWorkers,
                       QStringLiteral("use 1 to %1, e.g. the number of cores").arg(kMaxWorkers)))
        c.workers = int(*v);
}

void readMaxBufferedBodyBytes(YamlReader &in, const Field &f, const QString &path, Config &c)
{
    // "auto" is the default: the machine's memory decides, at start-up.
    if (f.value.IsScalar() && f.value.Scalar() == "auto") {
        c.maxBufferedBodyBytes = 0;
        return;
    }
    if (const auto v = in.readSize(f, path))
        c.maxBufferedBodyBytes = *v;
}

// In this order in the "known keys" hint.
const Key<Config> kTopKeys[] = {
    {"listen", ":8080", readListen},
    {"listen_mode", "0660", readListenMode},
    {"watch_config", "false", boolKey<&Config::watchConfig>},
    {"log_requests", "false", boolKey<&Config::logRequests>},
    {"max_body_bytes", "64MiB", sizeKey<&Config::maxBodyBytes>},
    {"max_buffered_body_bytes", "auto", readMaxBufferedBodyBytes},
    {"max_header_bytes", "64KiB", sizeKey<&Config::maxHeaderBytes>},
    {"header_timeout", "30s", durationKey<&Config::headerTimeout>},
    {"idle_timeout", "120s", durationKey<&Config::idleTimeout>},
    {"max_connections", "10000", readMaxConnections},
    // 0 is meaningful: cut in-flight requests at once.
    {"shutdown_grace", "10s", zeroOrMoreKey<&Config::shutdownGrace>},
    {"upstream_transport", "socket", readTransport},
    {"max_upstream_connections", "1024", readMaxUpstreamConnections},
    {"workers", "1", readWorkers},
    // Sections, read on their own (Compiler::run).
    {"discovery", nullptr, nullptr},
    {"backends", nullptr, nullptr},
    {"editions", nullptr, nullptr},
};

const Key<DiscoverySettings> kDiscoveryKeys[] = {
    {"backoff_initial", "1s", durationKey<&DiscoverySettings::backoffInitial>},
    {"backoff_max", "30s", durationKey<&DiscoverySettings::backoffMax>},
    {"recheck", "5m", durationKey<&DiscoverySettings::recheck>},
    {"probe_timeout", "5s", durationKey<&DiscoverySettings::probeTimeout>},
};

} // namespace

std::span<const Key<Config>> topLevelKeys()
{
    return kTopKeys;
}

std::span<const Key<DiscoverySettings>> discoveryKeys()
{
    return kDiscoveryKeys;
}

Field defaultField(const char *text)
{
    Field f;
    f.value = YAML::Node(std::string(text));
    f.value.SetTag("?"); // a plain scalar, as if written unquoted
    f.present = true;
    return f;
}

void Compiler::readTopLevel(const QHash<QString, Field> &top)
{
    readKeys(m_in, topLevelKeys(), top, QString(), YAML::Mark::null_mark(), m_config);
}

void Compiler::readDiscovery(const Field &f)
{
    DiscoverySettings &d = m_config.discovery;
    const QList<QString> known = keyNames(discoveryKeys());
    applyDefaults(m_in, discoveryKeys(), d);
    if (!f.present || f.value.IsNull())
        return;
    if (!f.value.IsMap()) {
        m_in.error(f.mark(),
                   QStringLiteral("discovery must be a mapping, not %1").arg(kindOf(f.value)),
                   QStringLiteral("known keys: %1").arg(quoteList(known)));
        return;
    }
    const auto keys = m_in.fields(f.value, QStringLiteral("discovery"), known);
    const QList<QString> failed =
        readKeys(m_in, discoveryKeys(), keys, QStringLiteral("discovery"), f.mark(), d);
    if (!failed.contains(QStringLiteral("backoff_initial")) && d.backoffMax < d.backoffInitial) {
        const Field k = keys.contains(QStringLiteral("backoff_max"))
                            ? keys.value(QStringLiteral("backoff_max"))
                            : keys.value(QStringLiteral("backoff_initial"));
        m_in.error(k.mark(),
                   QStringLiteral("discovery.backoff_max (%1) is less than "
                                  "discovery.backoff_initial (%2)")
                       .arg(formatGoDuration(d.backoffMax), formatGoDuration(d.backoffInitial)),
                   QStringLiteral("make backoff_max at least backoff_initial"));
    }
}

} // namespace slp::configc
