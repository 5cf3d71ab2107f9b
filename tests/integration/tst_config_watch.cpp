// SPDX-License-Identifier: GPL-3.0-or-later
// `watch_config: true` and `--watch-config` against the real `slp` (docs/CONFIG.md): a config
// replaced by an atomic rename (as editors and QSaveFile save) reloads as SIGHUP does; a
// partial write is refused with the reload errors while the old table keeps serving, and its
// completion reloads; a burst of writes is one reload (debounced); the same bytes written
// again, or another file in the directory, reload nothing; without the key nothing reloads.
#include "testsupport.h"

#include <QtTest>

using namespace slp::test;

namespace {

QString pinned(const QString &name, const QString &url)
{
    return QStringLiteral("  - name: %1\n    url: %2\n    model: %1-up\n").arg(name, url);
}

int chatStatus(SlpDaemon &slp, const QString &model)
{
    return httpRequest(
               "POST", slp.url() + "/v1/chat/completions",
               QStringLiteral(R"({"model":"%1","messages":[{"role":"user","content":"hi"}]})")
                   .arg(model)
                   .toUtf8(),
               {{"Content-Type", "application/json"}})
        .status;
}

// Runs the event loop for a fixed window: for checks that nothing happens.
void quietWindow(int ms)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms)
        pumpEvents(50);
}

const QRegularExpression kReloaded(QStringLiteral("^reload: \\d+ routes from"));

} // namespace

class TestConfigWatch : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void atomicRenameReloads();
    void partialWriteFailsClosed();
    void burstIsOneReload();
    void unchangedBytesOrOtherFilesDoNothing();
    void offByDefault();

private:
    QString config(const QStringList &names,
                   const QString &head = QStringLiteral("watch_config: true\n"));
    MockUpstream m_mock;
};

void TestConfigWatch::initTestCase()
{
    QVERIFY2(m_mock.start(), qPrintable(m_mock.errorString()));
}

QString TestConfigWatch::config(const QStringList &names, const QString &head)
{
    QString yaml = head + "backends:\n";
    for (const QString &name : names)
        yaml += pinned(name, m_mock.url());
    return yaml;
}

void TestConfigWatch::atomicRenameReloads()
{
    SlpDaemon slp;
    QVERIFY2(slp.start(config({"alpha"})), qPrintable(slp.errorString()));
    QVERIFY(slp.waitForLog(QRegularExpression("watching .* for changes"), 2000).hasMatch());
    QCOMPARE(chatStatus(slp, "beta"), 404);
    const ChildProcess::Mark from = slp.mark();
    QVERIFY(slp.writeConfig(config({"alpha", "beta"}))); // QSaveFile: a new file renamed over
    QVERIFY2(
        slp.waitForLog(QRegularExpression("slp.yaml changed: reloading"), 5000, from).hasMatch(),
        qPrintable(slp.stderrText()));
    QVERIFY2(slp.waitForLog(QRegularExpression("^reload: 2 routes from"), 10000, from).hasMatch(),
             qPrintable(slp.stderrText()));
    QCOMPARE(chatStatus(slp, "beta"), 200);
    // The watch follows the new file: a second rename reloads too.
    const ChildProcess::Mark again = slp.mark();
    QVERIFY(slp.writeConfig(config({"gamma"})));
    QVERIFY2(slp.waitForLog(QRegularExpression("^reload: 1 routes from"), 10000, again).hasMatch(),
             qPrintable(slp.stderrText()));
    QCOMPARE(chatStatus(slp, "gamma"), 200);
    QCOMPARE(slp.stop(), 0);
}

void TestConfigWatch::partialWriteFailsClosed()
{
    SlpDaemon slp;
    // --watch-config turns it on for a config that does not.
    QVERIFY2(slp.start(config({"alpha"}, {}), {"--watch-config"}), qPrintable(slp.errorString()));
    const QString full = SlpDaemon::withTestTransport(config({"alpha", "beta"}, {}));
    const qsizetype cut = full.indexOf("    url:", full.indexOf("name: beta")) + 5; // "    u"
    QFile f(slp.configPath());
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate)); // in place, as `>` does
    f.write(full.left(cut).toUtf8());
    f.flush();
    const ChildProcess::Mark from = slp.mark();
    QVERIFY2(slp.waitForLog(QRegularExpression("still serving the previous config"), 10000, from)
                 .hasMatch(),
             qPrintable(slp.stderrText()));
    QCOMPARE(slp.countLog(kReloaded, from), 0);
    QCOMPARE(chatStatus(slp, "alpha"), 200);
    QCOMPARE(chatStatus(slp, "beta"), 404);
    // The rest arrives: the complete file reloads.
    f.write(full.mid(cut).toUtf8());
    f.close();
    QVERIFY2(slp.waitForLog(QRegularExpression("^reload: 2 routes from"), 10000, from).hasMatch(),
             qPrintable(slp.stderrText()));
    QCOMPARE(chatStatus(slp, "beta"), 200);
    QCOMPARE(slp.stop(), 0);
}

void TestConfigWatch::burstIsOneReload()
{
    SlpDaemon slp;
    QVERIFY2(slp.start(config({"alpha"})), qPrintable(slp.errorString()));
    const ChildProcess::Mark from = slp.mark();
    // Five saves well within the debounce interval: one reload, of the last.
    for (const char *name : {"b1", "b2", "b3", "b4", "b5"})
        QVERIFY(slp.writeConfig(config({"alpha", name})));
    QVERIFY2(slp.waitForLog(kReloaded, 10000, from).hasMatch(), qPrintable(slp.stderrText()));
    quietWindow(1000);
    QCOMPARE(slp.countLog(kReloaded, from), 1);
    QCOMPARE(chatStatus(slp, "b5"), 200);
    QCOMPARE(chatStatus(slp, "b4"), 404);
    QCOMPARE(slp.stop(), 0);
}

void TestConfigWatch::unchangedBytesOrOtherFilesDoNothing()
{
    SlpDaemon slp;
    QVERIFY2(slp.start(config({"alpha"})), qPrintable(slp.errorString()));
    const ChildProcess::Mark from = slp.mark();
    QVERIFY(slp.writeConfig(config({"alpha"}))); // the same bytes, a new inode
    QFile other(slp.directory() + "/other.txt");
    QVERIFY(other.open(QIODevice::WriteOnly));
    other.write("unrelated\n");
    other.close();
    quietWindow(1500);
    QCOMPARE(slp.countLog(QRegularExpression("changed: reloading"), from), 0);
    QCOMPARE(slp.countLog(kReloaded, from), 0);
    QCOMPARE(slp.stop(), 0);
}

void TestConfigWatch::offByDefault()
{
    SlpDaemon slp;
    QVERIFY2(slp.start(config({"alpha"}, {})), qPrintable(slp.errorString()));
    const ChildProcess::Mark from = slp.mark();
    QVERIFY(slp.writeConfig(config({"alpha", "beta"}, {})));
    quietWindow(1500);
    QCOMPARE(slp.countLog(kReloaded, from), 0);
    QCOMPARE(chatStatus(slp, "beta"), 404);
    QCOMPARE(slp.stop(), 0);
}

QTEST_GUILESS_MAIN(TestConfigWatch)
#include "tst_config_watch.moc"
