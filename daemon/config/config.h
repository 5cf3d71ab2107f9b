// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "config/listenaddress.h"
#include "config/texttemplate.h"
#include "goduration.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QProcessEnvironment>
#include <QString>
#include <QUrl>

#include <optional>
#include <variant>

namespace slp {

// Where a route's upstream model name comes from.
enum class NameSource
{
    Pinned,         // fixed at load: a backend's `model:`, or an edition template resolved at load
    Discover,       // an unpinned backend: probed in the background, exposed id until known
    Passthrough,    // an edition without `model:`: forwards its exposed id unchanged
    FollowsBackend, // an edition whose `model:` uses .Model of a discovered backend
};

struct Route
{
    QString id;          // exposed model id
    QString backendName; // the backend this route is (or derives from)
    bool isEdition = false;
    QString origin; // normalized "scheme://host[:port]" with no trailing slash
    QUrl url;       // same, as a QUrl
    Nanoseconds timeout{};
    QString timeoutText; // as written in the config ("60s" when defaulted), for 502s and logs
    bool retry = false;
    bool aggregate = false;
    // After the response head: no body byte for this long ends the response as broken.
    Nanoseconds streamIdleTimeout{0}; // 0 = off
    // A silent text/event-stream gets ": keep-alive\n\n" this often, at event boundaries.
    Nanoseconds sseKeepalive{0}; // 0 = off
    // The model's context window in tokens, as the catalog shows it (`context_length:`); an
    // edition without its own takes its backend's. Unset: what discovery learns, if anything.
    std::optional<qint64> contextLength;
    // Request headers set on every request to the route, its discovery probes and tunnels
    // (`headers:`), values with ${NAME} expanded; each replaces the client's of the same name.
    // The dump and --check name them; nothing ever prints a value.
    QList<QPair<QByteArray, QByteArray>> headers;
    NameSource nameSource = NameSource::Discover;
    QString pinnedModel;   // NameSource::Pinned
    int followsRoute = -1; // NameSource::FollowsBackend: index of the backend route
    std::optional<TextTemplate> modelTemplate; // NameSource::FollowsBackend
    int line = 0;                              // YAML line of the backend / edition entry (1-based)
};

struct DiscoverySettings
{
    Nanoseconds backoffInitial = std::chrono::seconds(1);
    Nanoseconds backoffMax = std::chrono::seconds(30);
    Nanoseconds recheck = std::chrono::minutes(5);
    Nanoseconds probeTimeout = std::chrono::seconds(5); // one probe's whole budget
};

inline constexpr int kMaxWorkers = 64;

struct Config
{
    ListenAddress listen;     // default ":8080"
    int listenMode = 0660;    // file mode of a `listen: unix:PATH` socket
    bool watchConfig = false; // reload when the config file changes, as SIGHUP does
    bool logRequests = false;
    qint64 maxBodyBytes = 64ll << 20;
    // Request body bytes held in memory at once, every connection together; 0: automatic
    // (1 GiB, or a quarter of the machine's memory where that is less).
    qint64 maxBufferedBodyBytes = 0;
    qint64 maxHeaderBytes = 64ll << 10;
    Nanoseconds headerTimeout = std::chrono::seconds(30);
    Nanoseconds idleTimeout = std::chrono::seconds(120);
    int maxConnections = 10000;
    Nanoseconds shutdownGrace = std::chrono::seconds(10);
    // socket | qnam. Not qnam by default: QNAM 6.4 can hand one client's answer to another
    // (docs/DECISIONS.md, "Upstream transports").
    QString upstreamTransport = QStringLiteral("socket");
    int maxUpstreamConnections = 1024; // per backend origin; beyond this requests wait
    int workers = 1;                   // event-loop threads sharing the listen port (SO_REUSEPORT)
    DiscoverySettings discovery;
    QList<Route> routes; // backends in config order, then each edition's routes in backend order
};

struct ConfigError
{
    QString file;
    int line = 0;   // 1-based; 0 = unknown
    int column = 0; // 1-based; 0 = unknown
    QString what;   // e.g. "backends[2].timeout: \"5x\" is not a duration: unknown unit \"x\""
    QString hint;   // e.g. "use Go duration syntax such as 300ms, 30s, 2m, 1h30m"
    // "FILE:LINE:COL: WHAT (hint: HINT)"
    QString toString() const;
};

using ConfigResult = std::variant<Config, QList<ConfigError>>;

// Pure: YAML text in, a compiled config or every error found out. `fileName` only labels
// errors; `environment` holds the variables a header value's ${NAME} reads (none by
// default). Never touches the network, the file system or the process environment.
ConfigResult compileConfig(const QByteArray &yaml, const QString &fileName,
                           const QProcessEnvironment &environment = QProcessEnvironment());

// Reads the file, then compileConfig with `environment` (slp passes its own, read at each
// load). A missing or unreadable file is one ConfigError.
ConfigResult
loadConfigFile(const QString &path,
               const QProcessEnvironment &environment = QProcessEnvironment::systemEnvironment());

// One key the config accepts, as declared in the compiler's key tables (for docs and tests).
struct ConfigKey
{
    QString section;     // "" (top level), "discovery", "backends" or "editions"
    QString name;        // e.g. "timeout"
    QString defaultText; // as documented, e.g. "60s"; empty when required or a section
    bool required = false;
};

// Every key, section by section, in the order of the "known keys" hints.
QList<ConfigKey> configKeys();

// The start-up dump line for route `index` (docs/OPERATE.md, "The command line"), names padded to
// `width`: "NAME -> URL as \"MODEL\"", "NAME -> URL (discovering)", "(passthrough)", "(follows
// BACKEND)", then " stream_idle_timeout=1s", " sse_keepalive=400ms" and " headers=NAME,NAME" (the
// names only) for the keys a route sets.
QString routeDumpLine(const Config &config, int index, int width);
// Every route's dump line, names padded to the longest (the start-up dump and `slp --check`).
QStringList routeDump(const Config &config);

} // namespace slp
