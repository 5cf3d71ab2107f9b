// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/config.h"

#include "config/compiler.h"
#include "config/diagnostics.h"

#include <QFile>

#include <algorithm>

namespace slp {

namespace configc {

ConfigResult Compiler::run()
{
    if (const std::optional<YAML::Node> root = loadRoot()) {
        try {
            readSections(*root);
        } catch (const YAML::Exception &e) {
            // Not expected (we never call as<>()), but a config error beats a crash.
            m_in.error(e.mark,
                       QStringLiteral("cannot read YAML: %1").arg(QString::fromStdString(e.msg)),
                       QStringLiteral("check the YAML syntax"));
        }
    }
    if (m_in.errors().isEmpty())
        return m_config;
    QList<ConfigError> &errors = m_in.errors();
    std::stable_sort(errors.begin(), errors.end(), [](const ConfigError &a, const ConfigError &b) {
        return std::pair(a.line, a.column) < std::pair(b.line, b.column);
    });
    return errors;
}

std::optional<YAML::Node> Compiler::loadRoot()
{
    std::vector<YAML::Node> docs;
    try {
        docs = YAML::LoadAll(m_in.source().toStdString());
    } catch (const YAML::ParserException &e) {
        m_in.error(
            e.mark, QStringLiteral("YAML syntax error: %1").arg(QString::fromStdString(e.msg)),
            QStringLiteral("check the indentation, quotes and brackets on or just before this "
                           "line"));
        return std::nullopt;
    } catch (const YAML::Exception &e) {
        m_in.error(e.mark,
                   QStringLiteral("cannot read YAML: %1").arg(QString::fromStdString(e.msg)),
                   QStringLiteral("check the YAML syntax"));
        return std::nullopt;
    }
    if (docs.empty() || docs.front().IsNull()) {
        m_in.error(YAML::Mark::null_mark(), QStringLiteral("the config is empty"),
                   QStringLiteral("add a backends: list with at least one name and url"));
        return std::nullopt;
    }
    if (docs.size() > 1) {
        m_in.error(docs[1].Mark(), QStringLiteral("more than one YAML document in the config"),
                   QStringLiteral("keep one document: remove the \"---\" separator"));
        return std::nullopt;
    }
    if (!docs.front().IsMap()) {
        m_in.error(docs.front().Mark(),
                   QStringLiteral("the config must be a mapping of keys (listen:, backends:, ...), "
                                  "not %1")
                       .arg(kindOf(docs.front())),
                   QStringLiteral("start with \"backends:\" at the beginning of a line"));
        return std::nullopt;
    }
    return docs.front();
}

void Compiler::readSections(const YAML::Node &root)
{
    const auto top = m_in.fields(root, QString(), keyNames(topLevelKeys()));
    readTopLevel(top);
    readDiscovery(top.value(QStringLiteral("discovery")));
    readBackends(top.value(QStringLiteral("backends")));
    readEditions(top.value(QStringLiteral("editions")));
    checkDuplicateIds();
    checkUnixUnderQnam();
}

// Qt 6.4's QNetworkAccessManager cannot dial a Unix socket (local-socket URLs came to
// QNetworkRequest in a later Qt): such a route under qnam is refused, never half-served.
void Compiler::checkUnixUnderQnam()
{
    if (m_config.upstreamTransport != u"qnam")
        return;
    for (int i = 0; i < m_config.routes.size(); ++i) {
        const Route &r = m_config.routes[i];
        if (!r.origin.startsWith(QLatin1String("unix:")))
            continue;
        YAML::Mark mark;
        mark.line = r.line - 1;
        mark.column = m_routeColumns[i] - 1;
        m_in.error(mark,
                   QStringLiteral("backend \"%1\": url \"%2\" needs upstream_transport: socket "
                                  "(upstream_transport: qnam cannot reach a Unix socket)")
                       .arg(r.id, r.origin),
                   QStringLiteral("remove \"upstream_transport: qnam\" (socket is the default), "
                                  "or give this backend an http:// url"));
    }
}

void Compiler::checkDuplicateIds()
{
    QHash<QString, int> first;
    for (int i = 0; i < m_config.routes.size(); ++i) {
        const Route &r = m_config.routes[i];
        if (r.id.isEmpty())
            continue; // a missing name, already reported
        const auto it = first.constFind(r.id);
        if (it == first.constEnd()) {
            first.insert(r.id, i);
            continue;
        }
        const Route &earlier = m_config.routes[*it];
        YAML::Mark mark;
        mark.line = r.line - 1;
        mark.column = m_routeColumns[i] - 1;
        const QString hint =
            (r.isEdition || earlier.isEdition)
                ? QStringLiteral("ids must be unique after editions expand: rename a backend, "
                                 "change the suffix, or narrow apply_to")
                : QStringLiteral("give each backend its own name");
        m_in.error(mark,
                   QStringLiteral("duplicate model id \"%1\" (line %2; first defined at line %3%4)")
                       .arg(r.id)
                       .arg(r.line)
                       .arg(earlier.line)
                       .arg(earlier.isEdition ? QStringLiteral(" by an edition") : QString()),
                   hint);
    }
}

} // namespace configc

ConfigResult compileConfig(const QByteArray &yaml, const QString &fileName,
                           const QProcessEnvironment &environment)
{
    return configc::Compiler(yaml, fileName, environment).run();
}

ConfigResult loadConfigFile(const QString &path, const QProcessEnvironment &environment)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        ConfigError e;
        e.file = path;
        e.what = QStringLiteral("cannot read the config: %1").arg(file.errorString());
        e.hint = QStringLiteral("check the path given to --config and its permissions");
        return QList<ConfigError>{e};
    }
    return compileConfig(file.readAll(), path, environment);
}

namespace {

QString routeDumpName(const Config &config, const Route &r, QString line)
{
    switch (r.nameSource) {
    case NameSource::Pinned:
        return line + QStringLiteral(" as ") + configc::goQuote(r.pinnedModel);
    case NameSource::Discover:
        return line + QStringLiteral(" (discovering)");
    case NameSource::Passthrough:
        return line + QStringLiteral(" (passthrough)");
    case NameSource::FollowsBackend: {
        const bool valid = r.followsRoute >= 0 && r.followsRoute < config.routes.size();
        return line + QStringLiteral(" (follows %1)")
                          .arg(valid ? config.routes.at(r.followsRoute).id : r.backendName);
    }
    }
    return line;
}

} // namespace

QString routeDumpLine(const Config &config, int index, int width)
{
    const Route &r = config.routes.at(index);
    QString line =
        routeDumpName(config, r, r.id.leftJustified(width) + QStringLiteral(" -> ") + r.origin);
    // Only when set: the dump line is the contract's `NAME -> URL ...`, timers are extra.
    if (r.streamIdleTimeout.count() > 0)
        line += QStringLiteral(" stream_idle_timeout=") + formatGoDuration(r.streamIdleTimeout);
    if (r.sseKeepalive.count() > 0)
        line += QStringLiteral(" sse_keepalive=") + formatGoDuration(r.sseKeepalive);
    QStringList names; // never a value: these are often keys
    for (const auto &header : r.headers)
        names << QString::fromLatin1(header.first);
    if (!names.isEmpty())
        line += QStringLiteral(" headers=") + names.join(QLatin1Char(','));
    return line;
}

QStringList routeDump(const Config &config)
{
    int width = 0;
    for (const Route &r : config.routes)
        width = std::max(width, int(r.id.size()));
    QStringList lines;
    for (qsizetype i = 0; i < config.routes.size(); ++i)
        lines << routeDumpLine(config, int(i), width);
    return lines;
}

namespace {

template<class Target>
void appendKeys(QList<ConfigKey> &out, std::span<const configc::Key<Target>> keys,
                const QString &section)
{
    for (const configc::Key<Target> &k : keys) {
        ConfigKey key;
        key.section = section;
        key.name = QString::fromLatin1(k.name);
        key.defaultText = k.defaultText ? QString::fromLatin1(k.defaultText) : QString();
        key.required = k.missingHint != nullptr;
        out.append(key);
    }
}

} // namespace

QList<ConfigKey> configKeys()
{
    QList<ConfigKey> out;
    appendKeys(out, configc::topLevelKeys(), QString());
    appendKeys(out, configc::discoveryKeys(), QStringLiteral("discovery"));
    appendKeys(out, configc::backendKeys(), QStringLiteral("backends"));
    appendKeys(out, configc::editionKeys(), QStringLiteral("editions"));
    return out;
}

} // namespace slp
