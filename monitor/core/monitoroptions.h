// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>
#include <QSslCertificate>
#include <QString>
#include <QStringList>
#include <QUrl>

#include <chrono>
#include <optional>

class QSettings;

namespace slp::monitor {

// The settings the user can change, persisted with QSettings ("SLP"/"slp-monitor").
struct MonitorSettings
{
    QUrl url{QStringLiteral("http://127.0.0.1:8080")};
    std::chrono::milliseconds interval{10000};
    bool notifications = true;
    // PEM file of extra CA certificates to trust for an https:// URL (a private CA such as
    // Caddy's `tls internal`), on top of the system's. Empty: the system's only.
    QString caFile;

    static MonitorSettings load(const QSettings &settings); // bad stored values fall back
    void save(QSettings &settings) const;
    bool operator==(const MonitorSettings &other) const = default;
};

// Checks what a user typed (command line or settings dialog); nullopt with a reason if bad.
std::optional<QUrl> parseBaseUrl(const QString &text, QString *error);
std::optional<std::chrono::milliseconds> parseInterval(const QString &text, QString *error);
QString formatInterval(std::chrono::milliseconds interval); // Go syntax, "10s"
// The certificates of a PEM file: at least one, or nullopt with a reason.
std::optional<QList<QSslCertificate>> loadCaFile(const QString &path, QString *error);

// `slp-monitor` arguments. Strict as `slp`'s: a stray word or an unknown flag is a usage error
// (exit 2) so no script comes to depend on lenient parsing.
struct MonitorCommandLine
{
    enum class Action
    {
        Run,
        Once,
        Version,
        Help,
        UsageError
    };
    Action action = Action::UsageError;
    std::optional<QUrl> url;                           // --url: this run only, not saved
    std::optional<std::chrono::milliseconds> interval; // --interval: this run only
    // --ca-file: this run only, absolute; an existing readable file (its certificates are
    // read with loadCaFile once a QCoreApplication exists).
    std::optional<QString> caFile;
    QString error;
};

MonitorCommandLine parseMonitorCommandLine(const QStringList &arguments); // without argv[0]

// The saved settings with this run's --url, --interval and --ca-file on top (not saved).
MonitorSettings withCommandLine(MonitorSettings saved, const MonitorCommandLine &commandLine);
QString monitorUsageText();

} // namespace slp::monitor
