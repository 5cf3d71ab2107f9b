// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "config/yamlreader.h"

#include <span>

// The config's keys, each declared once: its name, its default as the docs write it, and the
// reader that checks it and stores it. One table per section (top level, discovery, a backend,
// an edition); the same table gives the "known keys" hint and, through configKeys(), the list
// the docs are tested against. Internal to the config compiler.
namespace slp::configc {

template<class Target> struct Key
{
    const char *name;
    // The default as documented ("64MiB", "30s"), read like a value from the config before
    // the config's own; nullptr for a required key, an optional one whose absence means
    // something (a backend's model:, an edition's apply_to) or a section read on its own.
    const char *defaultText;
    // Checks the value and stores it in `out`; nullptr for a section read on its own.
    void (*read)(YamlReader &in, const Field &f, const QString &path, Target &out);
    // A required key: the hint when it is missing.
    const char *missingHint = nullptr;
};

template<class Target> QList<QString> keyNames(std::span<const Key<Target>> keys)
{
    QList<QString> names;
    for (const Key<Target> &k : keys)
        names.append(QString::fromLatin1(k.name));
    return names;
}

// The default text as a plain YAML scalar, so the reader treats it like the config's own.
Field defaultField(const char *text);

// Stores every key's default in `out`, through the key's own reader.
template<class Target>
void applyDefaults(YamlReader &in, std::span<const Key<Target>> keys, Target &out)
{
    for (const Key<Target> &k : keys)
        if (k.read && k.defaultText)
            k.read(in, defaultField(k.defaultText), QLatin1String(k.name), out);
}

// Reads every key of `keys` with a reader into `out`: first the defaults, then what the
// mapping gives (a missing required key is an error at `entry`). `path` is the mapping's own
// ("backends[2]"; empty at the top level). Returns the names of the keys that failed.
template<class Target>
QList<QString> readKeys(YamlReader &in, std::span<const Key<Target>> keys,
                        const QHash<QString, Field> &fields, const QString &path,
                        const YAML::Mark &entry, Target &out)
{
    applyDefaults(in, keys, out);
    const QString prefix = path.isEmpty() ? QString() : path + QLatin1Char('.');
    QList<QString> failed;
    for (const Key<Target> &k : keys) {
        if (!k.read)
            continue;
        const QString name = QString::fromLatin1(k.name);
        const Field f = fields.value(name);
        if (!f.present) {
            if (k.missingHint)
                in.error(entry, QStringLiteral("%1 has no %2").arg(path, name),
                         QString::fromUtf8(k.missingHint));
            continue;
        }
        const qsizetype before = in.errorCount();
        k.read(in, f, prefix + name, out);
        if (in.errorCount() != before)
            failed.append(name);
    }
    return failed;
}

// Readers for the common kinds, by pointer to the member they fill.
template<class> struct MemberOf;
template<class C, class V> struct MemberOf<V C::*>
{
    using Class = C;
};
template<auto M> using ClassOf = typename MemberOf<decltype(M)>::Class;

template<auto M> void boolKey(YamlReader &in, const Field &f, const QString &path, ClassOf<M> &out)
{
    if (const auto v = in.readBool(f, path))
        out.*M = *v;
}

template<auto M> void sizeKey(YamlReader &in, const Field &f, const QString &path, ClassOf<M> &out)
{
    if (const auto v = in.readSize(f, path))
        out.*M = *v;
}

// A duration that must be positive; see zeroOrMoreKey for those where 0 means something.
template<auto M>
void durationKey(YamlReader &in, const Field &f, const QString &path, ClassOf<M> &out)
{
    if (const auto v = in.readDuration(f, path, false))
        out.*M = *v;
}

template<auto M>
void zeroOrMoreKey(YamlReader &in, const Field &f, const QString &path, ClassOf<M> &out)
{
    if (const auto v = in.readDuration(f, path, true))
        out.*M = *v;
}

// Per-route keys, shared by backends and editions: `Entry` is what a section reads into and
// has the route being built as `route`.
template<auto M, class Entry>
void routeBoolKey(YamlReader &in, const Field &f, const QString &path, Entry &out)
{
    if (const auto v = in.readBool(f, path))
        out.route.*M = *v;
}

// A per-route duration where 0s means off.
template<auto M, class Entry>
void routeZeroOrMoreKey(YamlReader &in, const Field &f, const QString &path, Entry &out)
{
    if (const auto v = in.readDuration(f, path, true))
        out.route.*M = *v;
}

// The largest context_length accepted: far above any model's, small enough for every client.
inline constexpr qint64 kMaxContextLength = 1'000'000'000;

template<class Entry>
void routeContextLengthKey(YamlReader &in, const Field &f, const QString &path, Entry &out)
{
    if (const auto v = in.readInt(f, path, 1, kMaxContextLength,
                                  QStringLiteral("the model's context window in tokens, "
                                                 "e.g. 32768")))
        out.route.contextLength = *v;
}

template<class Entry>
void routeTimeoutKey(YamlReader &in, const Field &f, const QString &path, Entry &out)
{
    QString written;
    if (const auto t = in.readDuration(f, path, false, &written)) {
        out.route.timeout = *t;
        out.route.timeoutText = written;
    }
}

// A route's headers: (routeheaders.cpp): names checked, values with ${NAME} expanded from the
// compile's environment; nullopt (reported) when one cannot be sent.
std::optional<QList<QPair<QByteArray, QByteArray>>> readRouteHeaders(YamlReader &in, const Field &f,
                                                                     const QString &path);

template<class Entry>
void routeHeadersKey(YamlReader &in, const Field &f, const QString &path, Entry &out)
{
    if (auto headers = readRouteHeaders(in, f, path))
        out.route.headers = std::move(*headers);
}

std::span<const Key<Config>> topLevelKeys();
std::span<const Key<DiscoverySettings>> discoveryKeys();

} // namespace slp::configc
