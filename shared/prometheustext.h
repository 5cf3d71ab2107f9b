// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QString>

#include <optional>

namespace slp {

// The Prometheus text exposition format (version 0.0.4): the daemon writes it, the monitor
// reads it, and both sides are tested against each other through this one file.

using PromLabels = QList<QPair<QString, QString>>; // ordered as written

// Escapes a label value per the format (backslash, double quote, newline).
QString escapePromLabelValue(const QString &value);

// Formats a sample value as Prometheus does ("1", "0.25", "+Inf", "NaN").
QByteArray formatPromValue(double value);

// One sample line: name{l1="v1",l2="v2"} value
QByteArray promSampleLine(const QByteArray &name, const PromLabels &labels, double value);
// (The line ends with '\n', as do promHelpLine and promTypeLine: append them as they are.)

// Escapes HELP text per the format (backslash and newline only).
QString escapePromHelp(const QString &help);

// "# HELP name text\n" and "# TYPE name type\n".
QByteArray promHelpLine(const QByteArray &name, const QString &help);
QByteArray promTypeLine(const QByteArray &name, const QByteArray &type);

struct PromSample
{
    QString name; // full sample name, e.g. slp_upstream_latency_seconds_bucket
    PromLabels labels;
    double value = 0;
    std::optional<qint64> timestampMs; // the optional trailing timestamp (ms since the epoch)
};

struct PromFamily
{
    QString name;
    QString help;
    QString type; // counter, gauge, histogram, summary, untyped
};

struct PromParseResult
{
    QList<PromSample> samples;
    QMap<QString, PromFamily> families;
    QString error; // empty when the whole text parsed; else "line N: reason"
    int errorLine = 0;
};

// Parses the whole text; stops at the first malformed line and reports it.
PromParseResult parsePromText(const QByteArray &text);

// Convenience for readers: the value of the first sample named `name` whose labels include
// every pair in `match`.
std::optional<double> findPromSample(const QList<PromSample> &samples, const QString &name,
                                     const PromLabels &match = {});

} // namespace slp
