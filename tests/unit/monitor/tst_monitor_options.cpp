// SPDX-License-Identifier: GPL-3.0-or-later
// slp-monitor's command line, settings, the words it prints and its table model.
#include "monitoroptions.h"
#include "routetablemodel.h"
#include "statustext.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace slp::monitor;
using namespace std::chrono_literals;

namespace {

StatusSnapshot recorded(const QString &moment)
{
    const auto read = [](const QString &name) {
        QFile f(QFINDTESTDATA(QStringLiteral("data/") + name));
        if (!f.open(QIODevice::ReadOnly))
            qFatal("missing fixture %s", qPrintable(name));
        return f.readAll();
    };
    PollResult p;
    p.baseUrl = QUrl(QStringLiteral("http://127.0.0.1:8080"));
    p.finishedAt = QDateTime(QDate(2026, 1, 2), QTime(3, 4, 5), Qt::UTC);
    p.catalogBody = read(QStringLiteral("catalog-%1.json").arg(moment));
    p.metricsBody = read(QStringLiteral("metrics-%1.txt").arg(moment));
    return readSnapshot(p);
}

} // namespace

class TestMonitorOptions : public QObject
{
    Q_OBJECT

private slots:
    void commandLine_data();
    void commandLine();
    void usageErrors_data();
    void usageErrors();
    void settingsRoundTrip();
    void settingsBadValuesFallBack();
    void commandLineOverridesSaved();
    void caFile();
    void onceReport();
    void onceUnreachable();
    void mapping();
    void tooltip();
    void tableModel();
    void tableModelUpdatesInPlace();
};

void TestMonitorOptions::commandLine_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("action");
    QTest::addColumn<QString>("url");
    QTest::addColumn<qint64>("intervalMs");
    using A = MonitorCommandLine::Action;
    QTest::newRow("none") << QStringList{} << int(A::Run) << "" << qint64(-1);
    QTest::newRow("url") << QStringList{"--url", "http://10.0.0.5:9000"} << int(A::Run)
                         << "http://10.0.0.5:9000" << qint64(-1);
    QTest::newRow("url=, trailing slash")
        << QStringList{"--url=https://slp.lan/"} << int(A::Run) << "https://slp.lan" << qint64(-1);
    QTest::newRow("interval") << QStringList{"--interval", "1m30s"} << int(A::Run) << ""
                              << qint64(90000);
    QTest::newRow("interval=") << QStringList{"--interval=250ms"} << int(A::Run) << ""
                               << qint64(250);
    QTest::newRow("once") << QStringList{"--once", "--url", "http://h:1"} << int(A::Once)
                          << "http://h:1" << qint64(-1);
    QTest::newRow("help wins") << QStringList{"--once", "-h"} << int(A::Help) << "" << qint64(-1);
    QTest::newRow("version") << QStringList{"--version"} << int(A::Version) << "" << qint64(-1);
}

void TestMonitorOptions::commandLine()
{
    QFETCH(QStringList, args);
    QFETCH(int, action);
    QFETCH(QString, url);
    QFETCH(qint64, intervalMs);
    const MonitorCommandLine cl = parseMonitorCommandLine(args);
    QVERIFY2(cl.error.isEmpty(), qPrintable(cl.error));
    QCOMPARE(int(cl.action), action);
    QCOMPARE(cl.url ? cl.url->toString() : QString(), url);
    QCOMPARE(cl.interval ? qint64(cl.interval->count()) : qint64(-1), intervalMs);
}

void TestMonitorOptions::usageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("stray word") << QStringList{"status"} << "unexpected argument \"status\"";
    QTest::newRow("help as a word") << QStringList{"help"} << "did you mean --help?";
    QTest::newRow("unknown flag") << QStringList{"--urll", "x"} << "unknown flag --urll";
    QTest::newRow("qt's own flag") << QStringList{"-platform", "xcb"} << "unknown flag -platform";
    QTest::newRow("url missing") << QStringList{"--url"} << "--url needs a URL";
    QTest::newRow("url not http") << QStringList{"--url", "ftp://h"} << "not an http(s) URL";
    QTest::newRow("url with path") << QStringList{"--url", "http://h:1/v1"} << "origin only";
    QTest::newRow("url without scheme")
        << QStringList{"--url", "127.0.0.1:8080"} << "not an http(s) URL";
    QTest::newRow("interval no unit") << QStringList{"--interval", "10"} << "--interval:";
    QTest::newRow("interval too small") << QStringList{"--interval", "10ms"} << "minimum";
    QTest::newRow("interval negative") << QStringList{"--interval=-1s"} << "minimum";
    QTest::newRow("value on a switch") << QStringList{"--once=yes"} << "takes no value";
    QTest::newRow("ca-file missing") << QStringList{"--ca-file"} << "--ca-file needs a PEM file";
    QTest::newRow("ca-file absent") << QStringList{"--ca-file", "/nonexistent/ca.pem"}
                                    << "--ca-file: /nonexistent/ca.pem: no such";
    QTest::newRow("ca-file a directory")
        << QStringList{"--ca-file", QFINDTESTDATA("data")} << "no such readable file";
}

void TestMonitorOptions::usageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const MonitorCommandLine cl = parseMonitorCommandLine(args);
    QCOMPARE(cl.action, MonitorCommandLine::Action::UsageError);
    QVERIFY2(cl.error.contains(message), qPrintable(cl.error));
}

void TestMonitorOptions::settingsRoundTrip()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("m.conf"));
    {
        QSettings store(path, QSettings::IniFormat);
        QCOMPARE(MonitorSettings::load(store), MonitorSettings{}); // defaults
        MonitorSettings s;
        s.url = QUrl(QStringLiteral("http://gpu-box:8081"));
        s.interval = 2500ms;
        s.notifications = false;
        s.caFile = QStringLiteral("/etc/ssl/private-ca.pem");
        s.save(store);
    }
    QSettings store(path, QSettings::IniFormat);
    QCOMPARE(store.value("interval").toString(), QStringLiteral("2.5s")); // as a human writes it
    const MonitorSettings back = MonitorSettings::load(store);
    QCOMPARE(back.url, QUrl(QStringLiteral("http://gpu-box:8081")));
    QCOMPARE(back.interval, 2500ms);
    QCOMPARE(back.notifications, false);
    QCOMPARE(back.caFile, QStringLiteral("/etc/ssl/private-ca.pem"));
}

void TestMonitorOptions::caFile()
{
    const QString pem = QFINDTESTDATA("data/private-ca.pem");
    QVERIFY(!pem.isEmpty());
    MonitorCommandLine cl = parseMonitorCommandLine({"--once", "--ca-file", pem});
    QVERIFY2(cl.error.isEmpty(), qPrintable(cl.error));
    QCOMPARE(cl.action, MonitorCommandLine::Action::Once);
    QCOMPARE(cl.caFile, std::optional<QString>(QFileInfo(pem).absoluteFilePath()));
    QVERIFY(!parseMonitorCommandLine({}).caFile);
    // A relative path is made absolute: the settings dialog may save it later.
    const QString relative = QDir::current().relativeFilePath(pem);
    cl = parseMonitorCommandLine({QStringLiteral("--ca-file=") + relative});
    QVERIFY2(cl.error.isEmpty(), qPrintable(cl.error));
    QVERIFY(cl.caFile && QFileInfo(*cl.caFile).isAbsolute());

    QString why;
    const auto certificates = loadCaFile(pem, &why);
    QVERIFY2(certificates, qPrintable(why));
    QCOMPARE(certificates->size(), 1);
    QCOMPARE(certificates->first().subjectInfo(QSslCertificate::CommonName),
             QStringList{QStringLiteral("SLP monitor test CA")});

    QTemporaryDir dir;
    const QString junk = dir.filePath(QStringLiteral("junk.pem"));
    QFile f(junk);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("not a certificate\n");
    f.close();
    QVERIFY(!loadCaFile(junk, &why));
    QVERIFY2(why.contains(QLatin1String("no PEM certificate")), qPrintable(why));
    QVERIFY(!loadCaFile(dir.filePath(QStringLiteral("absent.pem")), &why));
    QVERIFY2(why.contains(QLatin1String("no such readable file")), qPrintable(why));
}

void TestMonitorOptions::settingsBadValuesFallBack()
{
    QTemporaryDir dir;
    QSettings store(dir.filePath(QStringLiteral("m.conf")), QSettings::IniFormat);
    store.setValue("url", "not a url");
    store.setValue("interval", "soon");
    const MonitorSettings s = MonitorSettings::load(store);
    QCOMPARE(s.url, QUrl(QStringLiteral("http://127.0.0.1:8080")));
    QCOMPARE(s.interval, 10000ms);
}

void TestMonitorOptions::commandLineOverridesSaved()
{
    MonitorSettings saved;
    saved.url = QUrl(QStringLiteral("http://saved:1"));
    saved.interval = std::chrono::milliseconds(5000);
    saved.notifications = false;
    saved.caFile = QStringLiteral("/saved.pem");
    // Nothing on the command line: the saved settings as they are.
    QCOMPARE(withCommandLine(saved, parseMonitorCommandLine({})), saved);

    const MonitorCommandLine cl =
        parseMonitorCommandLine({QStringLiteral("--url"), QStringLiteral("http://run:2"),
                                 QStringLiteral("--interval"), QStringLiteral("2s")});
    QCOMPARE(cl.action, MonitorCommandLine::Action::Run);
    const MonitorSettings merged = withCommandLine(saved, cl);
    QCOMPARE(merged.url, QUrl(QStringLiteral("http://run:2")));
    QCOMPARE(merged.interval, std::chrono::milliseconds(2000));
    QCOMPARE(merged.caFile, saved.caFile); // not given: kept
    QCOMPARE(merged.notifications, false); // no flag for it: kept
}

void TestMonitorOptions::onceReport()
{
    const StatusSnapshot s = recorded(QStringLiteral("ambiguous"));
    const QString report = slp::monitor::onceReport(s);
    const QStringList lines = report.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 5);
    QCOMPARE(lines[0], QStringLiteral("SLP http://127.0.0.1:8080: alert: 2 ambiguous"));
    // The recording has no traffic yet: the totals since SLP started are zero.
    QCOMPARE(lines[1], QStringLiteral("  qwen3-8b         ambiguous    0 requests, 0 failed  "
                                      "Qwen/Qwen3-8B (discovered, context 32768)"));
    QCOMPARE(lines[2], QStringLiteral("  pinned-model     ok           0 requests, 0 failed  "
                                      "Some-Pinned (pinned, context 131072)"));
    QVERIFY(lines[4].startsWith(QLatin1String("  qwen3-8b-edited  ambiguous")));
    QCOMPARE(onceExitCode(s.health), 2);
    QCOMPARE(onceExitCode(recorded(QStringLiteral("attention")).health), 1);
    QCOMPARE(onceExitCode(recorded(QStringLiteral("ok")).health), 0);
    QCOMPARE(headline(recorded(QStringLiteral("ok"))), QStringLiteral("ok: 4 routes"));
    QCOMPARE(headline(recorded(QStringLiteral("attention"))),
             QStringLiteral("attention: 1 probe error"));
}

void TestMonitorOptions::onceUnreachable()
{
    PollResult p;
    p.baseUrl = QUrl(QStringLiteral("http://127.0.0.1:9"));
    p.catalogError = QStringLiteral("Connection refused");
    const StatusSnapshot s = readSnapshot(p);
    QCOMPARE(
        slp::monitor::onceReport(s),
        QStringLiteral("SLP http://127.0.0.1:9: alert: SLP unreachable (Connection refused)\n"));
    QCOMPARE(onceExitCode(s.health), 2);
}

void TestMonitorOptions::mapping()
{
    QCOMPARE(mappingText(recorded(QStringLiteral("attention")).routes),
             QStringLiteral("qwen3-8b        -> \"Qwen/Qwen3-8B\" (discovered, ok)\n"
                            "pinned-model    -> \"Some-Pinned\" (pinned, ok)\n"
                            "down-backend    -> (unknown) (pending, probe error)\n"
                            "qwen3-8b-edited -> \"Qwen/Qwen3-8B\" (discovered, ok)\n"));
}

void TestMonitorOptions::tooltip()
{
    const QStringList lines = tooltipText(recorded(QStringLiteral("ambiguous"))).split('\n');
    QCOMPARE(lines.size(), 7);
    QCOMPARE(lines[0], QStringLiteral("SLP http://127.0.0.1:8080"));
    QCOMPARE(lines[1], QStringLiteral("alert: 2 ambiguous"));
    // One poll: no rates yet.
    QCOMPARE(lines[2], QStringLiteral("4 routes \u00b7 \u2014 req/min \u00b7 \u2014 failed"));
    QCOMPARE(lines[3], QStringLiteral("qwen3-8b \u2192 Qwen/Qwen3-8B: ambiguous"));
    QCOMPARE(lines[5], QStringLiteral("down-backend \u2192 Other/Model-B: ok"));
}

void TestMonitorOptions::tableModel()
{
    RouteTableModel model;
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    model.setRoutes(recorded(QStringLiteral("attention")).routes);
    QCOMPARE(resets.size(), 1);
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.columnCount(), int(RouteTableModel::ColumnCount));
    const auto cell = [&](int row, int column) {
        return model.data(model.index(row, column)).toString();
    };
    QCOMPARE(model.headerData(RouteTableModel::Upstream, Qt::Horizontal).toString(),
             QStringLiteral("Upstream model"));
    QCOMPARE(cell(0, RouteTableModel::Id), QStringLiteral("qwen3-8b"));
    QCOMPARE(cell(0, RouteTableModel::Upstream), QStringLiteral("Qwen/Qwen3-8B"));
    QCOMPARE(cell(0, RouteTableModel::Discovery), QStringLiteral("discovered"));
    QVERIFY(cell(0, RouteTableModel::LastProbe).startsWith(QLatin1String("ok at ")));
    QCOMPARE(cell(0, RouteTableModel::Timeout), QStringLiteral("2m0s"));
    QCOMPARE(cell(0, RouteTableModel::Retry), QStringLiteral("no"));
    QCOMPARE(cell(0, RouteTableModel::Aggregate), QStringLiteral("yes"));
    QCOMPARE(cell(1, RouteTableModel::LastProbe), QStringLiteral("\u2014"));
    QCOMPARE(cell(1, RouteTableModel::Retry), QStringLiteral("yes"));
    QCOMPARE(cell(2, RouteTableModel::State), QStringLiteral("probe error"));
    QCOMPARE(model.data(model.index(2, 0), RouteTableModel::StateRole).toInt(),
             int(RouteState::ProbeError));
}

void TestMonitorOptions::tableModelUpdatesInPlace()
{
    RouteTableModel model;
    model.setRoutes(recorded(QStringLiteral("ok")).routes);
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
    model.setRoutes(recorded(QStringLiteral("ok")).routes);
    QCOMPARE(changes.size(), 0);
    model.setRoutes(recorded(QStringLiteral("ambiguous")).routes);
    QCOMPARE(resets.size(), 0); // same ids: rows stay, a selection survives
    QVERIFY(changes.size() >= 2);
    QCOMPARE(model.data(model.index(0, RouteTableModel::State)).toString(),
             QStringLiteral("ambiguous"));
    QList<RouteStatus> fewer = recorded(QStringLiteral("ok")).routes;
    fewer.removeLast();
    model.setRoutes(fewer);
    QCOMPARE(resets.size(), 1);
    QCOMPARE(model.rowCount(), 3);
}

QTEST_GUILESS_MAIN(TestMonitorOptions)
#include "tst_monitor_options.moc"
