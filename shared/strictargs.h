// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

namespace slp {

// The command-line rules `slp` and `slp-monitor` share (see CommandLine for why): every
// word must be a known flag, so a stray `help`, `status` or a misspelt flag is a usage error
// and never starts anything. `--flag value` and `--flag=value` both work; `-h` is `--help`.
struct ArgSpec
{
    QString name; // without dashes: "config"
    bool takesValue = false;
    QString valueHint; // for "--config needs a file name"
};

struct StrictArgs
{
    QHash<QString, QString> values; // flags that take a value
    QStringList switches;           // flags without one, in order
    QString error;                  // empty when the whole line was understood

    bool has(const QString &name) const { return values.contains(name) || switches.contains(name); }
};

StrictArgs parseStrictArgs(const QStringList &arguments, const QList<ArgSpec> &spec,
                           const QString &program);

} // namespace slp
