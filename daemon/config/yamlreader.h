// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "config/config.h"

#include <QHash>
#include <QProcessEnvironment>

#include <yaml-cpp/yaml.h>

#include <optional>

// Typed reads of YAML values (strings, booleans, durations, sizes, whole numbers, upstream
// origins), each reporting what is wrong where (file, line, column) with a hint, into one
// error list. Internal to the config compiler.
namespace slp::configc {

// One `key: value` pair, keeping the key so a null value (whose mark points past it) can
// still be located.
struct Field
{
    YAML::Node key;
    YAML::Node value;
    bool present = false;

    YAML::Mark mark() const
    {
        if (!present)
            return YAML::Mark::null_mark();
        return value.IsNull() ? key.Mark() : value.Mark();
    }
};

// "nothing", "\"text\"", "a list", "a mapping": what was found instead.
QString kindOf(const YAML::Node &node);

// Validates an upstream URL and returns its origin: "scheme://host[:port]", or "unix:/PATH"
// (an absolute path, no query; the socket need not exist yet).
std::optional<QString> originOf(const QString &text, QString *why, QString *hint);

class YamlReader
{
public:
    YamlReader(const QByteArray &source, const QString &fileName,
               const QProcessEnvironment &environment)
        : m_source(source), m_file(fileName), m_environment(environment)
    {}

    void error(const YAML::Mark &mark, const QString &what, const QString &hint,
               int columnOffset = 0);
    QList<ConfigError> &errors() { return m_errors; }
    qsizetype errorCount() const { return m_errors.size(); }

    // The pairs of a mapping by key; unknown (with a "did you mean"), duplicate and
    // non-scalar keys are reported and left out.
    QHash<QString, Field> fields(const YAML::Node &map, const QString &path,
                                 const QList<QString> &known);

    std::optional<QString> readString(const Field &f, const QString &path);
    std::optional<bool> readBool(const Field &f, const QString &path);
    // `written` gets the text as written, for messages that quote the config.
    std::optional<Nanoseconds> readDuration(const Field &f, const QString &path, bool allowZero,
                                            QString *written = nullptr);
    std::optional<qint64> readSize(const Field &f, const QString &path);
    std::optional<qint64> readInt(const Field &f, const QString &path, qint64 min, qint64 max,
                                  const QString &rangeHint);
    std::optional<QString> readOrigin(const Field &f, const QString &path);

    // 1 when the scalar at `value` starts with a quote, so template columns land on the text.
    int valueColumnOffset(const YAML::Node &value) const;

    const QByteArray &source() const { return m_source; }
    // The variables a `${NAME}` in a header value reads: given to the compile, never looked up.
    const QProcessEnvironment &environment() const { return m_environment; }

private:
    QByteArray m_source;
    QString m_file;
    QProcessEnvironment m_environment;
    QList<ConfigError> m_errors;
};

} // namespace slp::configc
