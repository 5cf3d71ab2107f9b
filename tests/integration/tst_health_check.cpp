// SPDX-License-Identifier: GPL-3.0-or-later
// `slp --health-check` against the real binary (docs/OPERATE.md "The command line"): exit 0 on
// a running slp found where its config's listen: says (":PORT" asked on 127.0.0.1, a Unix
// socket at its path), exit 1 with one line saying why otherwise: refused, timed out (within
// its bound), another status, a config error.
#include "testsupport.h"

#include <QFile>
#include <QTcpServer>
#include <QtTest>

using namespace slp::test;

namespace {

const QString kBackends = QStringLiteral("backends:\n"
                                         "  - name: alpha\n"
                                         "    url: http://127.0.0.1:9\n"
                                         "    model: Pinned\n");

QString writeFile(const QTemporaryDir &dir, const QString &name, const QString &text)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(text.toUtf8());
    return path;
}

CommandResult healthCheck(const QStringList &args)
{
    return runCommand(SlpDaemon::binary(), QStringList{"--health-check"} + args, 15000);
}

// The one line a failed check writes, whatever it says.
QString failureLine(const CommandResult &r)
{
    const QStringList lines =
        QString::fromUtf8(r.stdErr).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    return lines.size() == 1 && r.stdOut.isEmpty() ? lines.first() : QString();
}

} // namespace

class TestHealthCheck : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void healthyWhereTheConfigListens();
    void refusedWhenNothingListens();
    void configErrorIsNamed();
    void unixSocket();
    void otherStatus();
    void timesOutWithinItsBound();

private:
    QTemporaryDir m_dir;
};

void TestHealthCheck::initTestCase()
{
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY(m_dir.isValid());
}

void TestHealthCheck::healthyWhereTheConfigListens()
{
    // ":PORT" binds every interface; the check asks 127.0.0.1:PORT. A port nobody had, let
    // go just before slp binds it.
    DeadPort held;
    const quint16 port = held.port();
    held.release();
    SlpDaemon slp;
    QVERIFY2(
        slp.start(QStringLiteral("listen: \":%1\"\n").arg(port) + kBackends, {}, {}, 15000, false),
        qPrintable(slp.errorString()));

    const CommandResult r = healthCheck({"--config", slp.configPath()});
    QVERIFY(!r.timedOut);
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.stdOut.startsWith(QStringLiteral("slp: healthy: 127.0.0.1:%1 answered /healthz "
                                                "with status 200")
                                     .arg(port)
                                     .toUtf8()),
             r.stdOut.constData());
    QVERIFY2(r.stdErr.isEmpty(), r.stdErr.constData());

    // --listen alone needs no config.
    const CommandResult direct =
        healthCheck({"--listen", QStringLiteral("127.0.0.1:%1").arg(port)});
    QCOMPARE(direct.exitCode, 0);
    QCOMPARE(slp.stop(), 0);
}

void TestHealthCheck::refusedWhenNothingListens()
{
    const DeadPort nobody;
    const QString config =
        writeFile(m_dir, "refused.yaml",
                  QStringLiteral("listen: \"127.0.0.1:%1\"\n").arg(nobody.port()) + kBackends);
    for (const QStringList &args :
         {QStringList{"--config", config},
          QStringList{"--listen", QStringLiteral("127.0.0.1:%1").arg(nobody.port())}}) {
        const CommandResult r = healthCheck(args);
        QVERIFY(!r.timedOut);
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(failureLine(r), QStringLiteral("slp: health check failed: 127.0.0.1:%1: "
                                                "connection refused")
                                     .arg(nobody.port()));
        QVERIFY2(r.elapsedMs < 2000, qPrintable(QString::number(r.elapsedMs)));
    }
}

void TestHealthCheck::configErrorIsNamed()
{
    const QString bad = writeFile(
        m_dir, "bad.yaml", QStringLiteral("listen: \":8080\"\nlisten_mod: 0600\n") + kBackends);
    const CommandResult r = healthCheck({"--config", bad});
    QVERIFY(!r.timedOut);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(failureLine(r).startsWith(
                 QStringLiteral("slp: health check failed: config error: %1:2:1: unknown key "
                                "\"listen_mod\"")
                     .arg(bad)),
             r.stdErr.constData());

    // Several errors: one is named, the rest counted.
    const QString worse =
        writeFile(m_dir, "worse.yaml", QStringLiteral("listen: \":8080\"\nlisten_mod: 0600\n"));
    const CommandResult two = healthCheck({"--config", worse});
    QCOMPARE(two.exitCode, 1);
    QVERIFY2(failureLine(two).endsWith(QLatin1String("(and 1 more: slp --check)")),
             two.stdErr.constData());

    const QString missing = m_dir.filePath("missing.yaml");
    const CommandResult none = healthCheck({"--config", missing});
    QCOMPARE(none.exitCode, 1);
    QVERIFY2(failureLine(none).contains(QLatin1String("config error: ")) &&
                 failureLine(none).contains(missing),
             none.stdErr.constData());
}

void TestHealthCheck::unixSocket()
{
    const QString socket = m_dir.filePath("slp.sock");
    const QString config =
        writeFile(m_dir, "unix.yaml", QStringLiteral("listen: unix:%1\n").arg(socket) + kBackends);
    ChildProcess slp;
    QVERIFY(slp.start(SlpDaemon::binary(), {"--config", config}));
    QVERIFY2(slp.waitForLine(QRegularExpression("listening on unix:"), 15000,
                             ChildProcess::Channel::StdErr)
                 .hasMatch(),
             qPrintable(slp.allOutput()));

    const CommandResult r = healthCheck({"--config", config});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.stdOut.startsWith(QStringLiteral("slp: healthy: unix:%1 ").arg(socket).toUtf8()),
             r.stdOut.constData());

    QCOMPARE(slp.stop(), 0); // the socket file goes with it
    const CommandResult gone = healthCheck({"--config", config});
    QCOMPARE(gone.exitCode, 1);
    QVERIFY2(failureLine(gone).contains(QLatin1String("refused")), gone.stdErr.constData());
}

void TestHealthCheck::otherStatus()
{
    // The mock upstream answers 404 to a path it does not serve, /healthz among them.
    MockUpstream mock;
    QVERIFY2(mock.start(), qPrintable(mock.errorString()));
    const QString address = mock.url().mid(QStringLiteral("http://").size());
    const CommandResult r = healthCheck({"--listen", address});
    QCOMPARE(r.exitCode, 1);
    QCOMPARE(failureLine(r),
             QStringLiteral("slp: health check failed: %1: status 404").arg(address));
}

void TestHealthCheck::timesOutWithinItsBound()
{
    // Listening, never answering: the kernel completes the connection, nobody reads.
    QTcpServer silent;
    QVERIFY(silent.listen(QHostAddress::LocalHost, 0));
    const CommandResult r =
        healthCheck({"--listen", QStringLiteral("127.0.0.1:%1").arg(silent.serverPort())});
    QVERIFY(!r.timedOut);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(failureLine(r).endsWith(QLatin1String("timed out: no answer within 3000 ms")),
             r.stdErr.constData());
    QVERIFY2(r.elapsedMs >= 2900 && r.elapsedMs < 8000, qPrintable(QString::number(r.elapsedMs)));
}

QTEST_GUILESS_MAIN(TestHealthCheck)
#include "tst_health_check.moc"
