// SPDX-License-Identifier: GPL-3.0-or-later
#include "monitoroptions.h"

#include "goduration.h"
#include "strictargs.h"

#include <QFileInfo>
#include <QSettings>

namespace slp::monitor {

using namespace std::chrono;

namespace {

const QString kUrlKey = QStringLiteral("url");
const QString kIntervalKey = QStringLiteral("interval");
const QString kNotificationsKey = QStringLiteral("notifications");
const QString kCaFileKey = QStringLiteral("ca_file");

// Below this the monitor would be load, not a monitor.
constexpr milliseconds kMinInterval{100};

} // namespace

std::optional<QUrl> parseBaseUrl(const QString &text, QString *error)
{
    const QUrl url(text.trimmed(), QUrl::StrictMode);
    const QString scheme = url.scheme();
    if (!url.isValid() || (scheme != QLatin1String("http") && scheme != QLatin1String("https")) ||
        url.host().isEmpty()) {
        if (error)
            *error = QStringLiteral("\"%1\" is not an http(s) URL such as http://127.0.0.1:8080")
                         .arg(text);
        return std::nullopt;
    }
    if (!url.path().isEmpty() && url.path() != QLatin1String("/")) {
        if (error)
            *error = QStringLiteral("\"%1\": give SLP's origin only; the monitor adds "
                                    "/v1/models and /metrics itself")
                         .arg(text);
        return std::nullopt;
    }
    if (url.hasQuery() || url.hasFragment()) {
        if (error)
            *error = QStringLiteral("\"%1\": a query or fragment makes no sense here").arg(text);
        return std::nullopt;
    }
    // StripTrailingSlash keeps a lone "/" (it is the root path); the origin has none.
    QUrl origin = url;
    origin.setPath(QString());
    return origin;
}

std::optional<milliseconds> parseInterval(const QString &text, QString *error)
{
    QString why;
    const std::optional<Nanoseconds> d = parseGoDuration(text.trimmed(), &why);
    if (!d) {
        if (error)
            *error = QStringLiteral("bad interval \"%1\": %2").arg(text, why);
        return std::nullopt;
    }
    const milliseconds ms = duration_cast<milliseconds>(*d);
    if (ms < kMinInterval) {
        if (error)
            *error = QStringLiteral("interval \"%1\" is below the minimum of 100ms").arg(text);
        return std::nullopt;
    }
    return ms;
}

QString formatInterval(milliseconds interval)
{
    return formatGoDuration(duration_cast<Nanoseconds>(interval));
}

std::optional<QList<QSslCertificate>> loadCaFile(const QString &path, QString *error)
{
    const QFileInfo info(path);
    QString why;
    QList<QSslCertificate> certificates;
    if (path.isEmpty()) {
        why = QStringLiteral("no file named");
    } else if (!info.isFile() || !info.isReadable()) {
        why = QStringLiteral("%1: no such readable file").arg(path);
    } else {
        // fromPath with a plain path: no wildcard reading of brackets or stars in the name.
        certificates =
            QSslCertificate::fromPath(path, QSsl::Pem, QSslCertificate::PatternSyntax::FixedString);
        if (certificates.isEmpty())
            why = QStringLiteral("%1 holds no PEM certificate").arg(path);
    }
    if (!why.isEmpty()) {
        if (error)
            *error = why;
        return std::nullopt;
    }
    return certificates;
}

MonitorSettings MonitorSettings::load(const QSettings &settings)
{
    MonitorSettings s;
    if (const auto url =
            parseBaseUrl(settings.value(kUrlKey, s.url.toString()).toString(), nullptr))
        s.url = *url;
    if (const auto interval = parseInterval(
            settings.value(kIntervalKey, formatInterval(s.interval)).toString(), nullptr))
        s.interval = *interval;
    s.notifications = settings.value(kNotificationsKey, s.notifications).toBool();
    // Kept even when unreadable now: the poll then says why the handshake fails.
    s.caFile = settings.value(kCaFileKey).toString();
    return s;
}

void MonitorSettings::save(QSettings &settings) const
{
    settings.setValue(kUrlKey, url.toString());
    settings.setValue(kIntervalKey, formatInterval(interval));
    settings.setValue(kNotificationsKey, notifications);
    settings.setValue(kCaFileKey, caFile);
}

QString monitorUsageText()
{
    return QStringLiteral(
        "usage: slp-monitor [--url URL] [--interval DURATION] [--ca-file PEM]\n"
        "       slp-monitor --once [--url URL] [--ca-file PEM]\n"
        "       slp-monitor --version | --help\n"
        "\n"
        "Tray monitor for SLP, the Simple LLM Proxy: polls /v1/models?debug and /metrics and\n"
        "shows ok / attention (pending routes, probe errors, routes slow, stalled or\n"
        "failing) / alert (an ambiguous route, or SLP unreachable), each route's traffic\n"
        "and its last failure. Without a system tray it runs as a window.\n"
        "\n"
        "  --url URL          SLP's origin (default: the saved setting, http://127.0.0.1:8080)\n"
        "  --interval D       time between polls, Go syntax (default: the saved setting, 10s)\n"
        "  --ca-file PEM      also trust the CA certificates in PEM for an https:// URL\n"
        "                     (a private CA, e.g. Caddy's tls internal root)\n"
        "  --once             poll once, print each route, its state and its totals since\n"
        "                     SLP started, then each route not ok with its last failure\n"
        "                     and request id; exit 0 ok, 1 attention (a failing route\n"
        "                     too), 2 alert\n"
        "  --version          print the version\n"
        "  -h, --help         print this help\n"
        "\n"
        "--url, --interval and --ca-file apply to this run; the Settings dialog saves them.\n");
}

MonitorCommandLine parseMonitorCommandLine(const QStringList &arguments)
{
    const StrictArgs args = parseStrictArgs(
        arguments,
        {{QStringLiteral("url"), true, QStringLiteral("a URL such as http://127.0.0.1:8080")},
         {QStringLiteral("interval"), true, QStringLiteral("a duration such as 10s")},
         {QStringLiteral("ca-file"), true, QStringLiteral("a PEM file of CA certificates")},
         {QStringLiteral("once"), false, {}},
         {QStringLiteral("version"), false, {}},
         {QStringLiteral("help"), false, {}}},
        QStringLiteral("slp-monitor"));
    MonitorCommandLine cl;
    const auto fail = [&cl](const QString &error) {
        cl.action = MonitorCommandLine::Action::UsageError;
        cl.error = error;
        return cl;
    };
    if (!args.error.isEmpty())
        return fail(args.error);
    QString why;
    if (args.values.contains(QStringLiteral("url"))) {
        cl.url = parseBaseUrl(args.values.value(QStringLiteral("url")), &why);
        if (!cl.url)
            return fail(QStringLiteral("--url: %1").arg(why));
    }
    if (args.values.contains(QStringLiteral("interval"))) {
        cl.interval = parseInterval(args.values.value(QStringLiteral("interval")), &why);
        if (!cl.interval)
            return fail(QStringLiteral("--interval: %1").arg(why));
    }
    if (args.values.contains(QStringLiteral("ca-file"))) {
        const QString path = args.values.value(QStringLiteral("ca-file"));
        // Only the file here: reading certificates loads Qt's TLS backend, which wants a
        // QCoreApplication, and the command line is parsed before one exists. main() reads
        // them once the application is up (loadCaFile) and refuses a file without any.
        const QFileInfo info(path);
        if (!info.isFile() || !info.isReadable())
            return fail(QStringLiteral("--ca-file: %1: no such readable file").arg(path));
        cl.caFile = QFileInfo(path).absoluteFilePath();
    }
    if (args.has(QStringLiteral("help")))
        cl.action = MonitorCommandLine::Action::Help;
    else if (args.has(QStringLiteral("version")))
        cl.action = MonitorCommandLine::Action::Version;
    else
        cl.action = args.has(QStringLiteral("once")) ? MonitorCommandLine::Action::Once
                                                     : MonitorCommandLine::Action::Run;
    return cl;
}

MonitorSettings withCommandLine(MonitorSettings saved, const MonitorCommandLine &commandLine)
{
    if (commandLine.url)
        saved.url = *commandLine.url;
    if (commandLine.interval)
        saved.interval = *commandLine.interval;
    if (commandLine.caFile)
        saved.caFile = *commandLine.caFile;
    return saved;
}

} // namespace slp::monitor
