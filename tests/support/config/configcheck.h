// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "config/config.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace slp::test {

// A valid backends list to append the YAML under test to (lines 1-3).
inline const QByteArray kOkBackends = "backends:\n  - name: a\n    url: http://a:8000\n";

// The compiled config; on errors, each is printed (qWarning) and an empty Config comes back,
// so the test's next comparison fails with the reason above it.
Config compileOk(const QByteArray &yaml, const QString &fileName = QStringLiteral("test.yaml"));
// The errors compiling `yaml` reports; empty when it compiles.
QList<ConfigError> compileErrors(const QByteArray &yaml,
                                 const QString &fileName = QStringLiteral("slp.yaml"));
// The errors one per line, as the daemon prints them: for failure messages.
QString dump(const QList<ConfigError> &errors);
// The route ids in table order.
QStringList ids(const Config &config);

} // namespace slp::test
