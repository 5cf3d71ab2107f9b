// SPDX-License-Identifier: GPL-3.0-or-later
#include "configcheck.h"

#include <QDebug>

namespace slp::test {

Config compileOk(const QByteArray &yaml, const QString &fileName)
{
    const auto result = slp::compileConfig(yaml, fileName);
    if (const auto *errors = std::get_if<QList<ConfigError>>(&result)) {
        for (const ConfigError &e : *errors)
            qWarning().noquote() << e.toString();
        return Config{};
    }
    return std::get<Config>(result);
}

QList<ConfigError> compileErrors(const QByteArray &yaml, const QString &fileName)
{
    const auto result = slp::compileConfig(yaml, fileName);
    if (const auto *errors = std::get_if<QList<ConfigError>>(&result))
        return *errors;
    return {};
}

QString dump(const QList<ConfigError> &errors)
{
    QStringList lines;
    for (const ConfigError &e : errors)
        lines << e.toString();
    return lines.join(QLatin1Char('\n'));
}

QStringList ids(const Config &config)
{
    QStringList out;
    for (const Route &r : config.routes)
        out << r.id;
    return out;
}

} // namespace slp::test
