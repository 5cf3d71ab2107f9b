// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <optional>

#include "config/keytable.h"

#include <QSet>

// The config compiler: one pass over the YAML, section by section (toplevel.cpp,
// backends.cpp, editions.cpp), every error collected. Internal; the API is config.h.
namespace slp::configc {

// A backend as read, for the editions that expand over it.
struct Backend
{
    bool nameOk = false;
    bool urlOk = false;
    QString name;
    QString origin;
    std::optional<QString> pin;
    int line = 0;
    int nameColumn = 0;
};

// What a backend entry reads into.
struct BackendEntry
{
    Backend backend;
    Route route;
    int column = 0; // of the name, for duplicate-id errors
};

// An edition entry as read, before it expands into routes.
struct Edition
{
    QString path; // "editions[N]"
    int line = 0;
    int column = 0;
    QList<QString> backendNames; // the backends read so far, for apply_to
    QString suffix;
    Field urlField;
    Field modelField;
    std::optional<TextTemplate> urlTemplate;
    std::optional<TextTemplate> modelTemplate;
    bool modelOk = true;
    bool applyOk = true;
    Route route; // the per-route keys every expanded route gets (never the backend's)
    bool applyAll = true;
    QSet<QString> applyTo;
};

std::span<const Key<BackendEntry>> backendKeys();
std::span<const Key<Edition>> editionKeys();

class Compiler
{
public:
    Compiler(const QByteArray &yaml, const QString &fileName,
             const QProcessEnvironment &environment)
        : m_in(yaml, fileName, environment)
    {}

    ConfigResult run();

private:
    // The one YAML document, a mapping; null (an error said why) otherwise.
    std::optional<YAML::Node> loadRoot();
    void readSections(const YAML::Node &root);
    void readTopLevel(const QHash<QString, Field> &top); // toplevel.cpp
    void readDiscovery(const Field &f);
    void readBackends(const Field &f); // backends.cpp
    void readBackend(const YAML::Node &node, int index);
    void readEditions(const Field &f); // editions.cpp
    void readEdition(const YAML::Node &node, int index);
    void expandEdition(const Edition &ed, bool addRoutes);
    // The edition's route for backend `backendIndex` at `origin` (`values`: the URL
    // template's), or null when its model renders empty (reported).
    std::optional<Route> editionRoute(const Edition &ed, int backendIndex, const QString &origin,
                                      QHash<QString, QString> values);
    void checkDuplicateIds();
    void checkUnixUnderQnam();

    YamlReader m_in;
    Config m_config;
    QList<Backend> m_backends;
    QList<int> m_routeColumns; // parallel to m_config.routes, for duplicate-id errors
};

} // namespace slp::configc
