// SPDX-License-Identifier: GPL-3.0-or-later
// slp under systemd's protocols, against the real binary (docs/OPERATE.md, "Run it under systemd"):
// Type=notify through a fake $NOTIFY_SOCKET (READY=1 only once the port accepts, STATUS= kept
// current, RELOADING=1 then READY=1 around a good and a refused reload, STOPPING=1 at
// drain); the watchdog (WATCHDOG=1 only while every event loop turns: a worker thread wedged
// with ptrace stops the pings, thawed they resume); socket activation with
// `systemd-socket-activate` (slp serves on the passed socket, says `listen:` is ignored, and
// a connection made before slp ran is served, by every worker).
#include "notifysocket.h"
#include "testsupport.h"
#include "threadfreezer.h"

#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

#include <csignal>

using namespace slp::test;

namespace {

QString pinned(const QString &name, const QString &url)
{
    return QStringLiteral("  - name: %1\n    url: %2\n    model: %1-up\n").arg(name, url);
}

QByteArray chatBody(const QString &model)
{
    return QStringLiteral(R"({"model":"%1","messages":[{"role":"user","content":"hi"}]})")
        .arg(model)
        .toUtf8();
}

int chatStatus(const QString &base, const QString &model)
{
    return httpRequest("POST", base + "/v1/chat/completions", chatBody(model),
                       {{"Content-Type", "application/json"}})
        .status;
}

QString messagesText(const FakeNotifySocket &notify)
{
    QStringList out;
    for (const FakeNotifySocket::Message &m : notify.messages())
        out << QStringLiteral("[%1 ms] %2").arg(m.atMs).arg(QString::fromUtf8(m.text));
    return out.join(QLatin1Char('\n'));
}

} // namespace

class TestSystemd : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void readyOnlyOnceServing();
    void reloadsAreAnnounced();
    void stoppingAtDrain();
    void drainAnswersARequestSentAsItBegins();
    void watchdogStopsWhenAWorkerIsWedged();
    void socketActivation();
    void socketActivation_data();

private:
    MockUpstream m_mock;
};

void TestSystemd::initTestCase()
{
    QVERIFY2(m_mock.start(), qPrintable(m_mock.errorString()));
}

void TestSystemd::readyOnlyOnceServing()
{
    FakeNotifySocket notify;
    QVERIFY(notify.isValid());
    SlpDaemon slp;
    QVERIFY2(slp.start("backends:\n" + pinned("alpha", m_mock.url()) +
                           pinned("beta", "http://127.0.0.1:1"),
                       {}, notify.environment()),
             qPrintable(slp.errorString()));
    const qsizetype ready = notify.waitFor("READY=1", 5000);
    QVERIFY2(ready >= 0, qPrintable(messagesText(notify)));
    // READY=1 is the first message, and carries the summary; the port is serving by then.
    QCOMPARE(ready, 0);
    QCOMPARE(notify.messages().at(ready).value("STATUS"),
             QByteArray("serving 2 routes; 0 ambiguous; 0 failing; 0 stalled"));
    QCOMPARE(httpRequest("GET", slp.url() + "/healthz").status, 200);
    QCOMPARE(chatStatus(slp.url(), "alpha"), 200);
    // STATUS= is kept current: beta's backend refuses, so beta is counted as failing.
    QCOMPARE(chatStatus(slp.url(), "beta"), 502);
    QTRY_VERIFY2_WITH_TIMEOUT(notify.messages().last().value("STATUS") ==
                                  "serving 2 routes; 0 ambiguous; 1 failing; 0 stalled",
                              qPrintable(messagesText(notify)), 12000);
    QCOMPARE(slp.stop(), 0);
}

void TestSystemd::reloadsAreAnnounced()
{
    FakeNotifySocket notify;
    SlpDaemon slp;
    QVERIFY2(slp.start("backends:\n" + pinned("alpha", m_mock.url()), {}, notify.environment()),
             qPrintable(slp.errorString()));
    QVERIFY(notify.waitFor("READY=1", 5000) >= 0);

    // A good reload: RELOADING=1, then READY=1 with the new summary.
    qsizetype from = notify.messages().size();
    QVERIFY(slp.writeConfig("backends:\n" + pinned("alpha", m_mock.url()) +
                            pinned("gamma", m_mock.url())));
    QVERIFY(slp.reload());
    qsizetype reloading = notify.waitFor("RELOADING=1", 8000, from);
    QVERIFY2(reloading >= 0, qPrintable(messagesText(notify)));
    QVERIFY(!notify.messages().at(reloading).value("MONOTONIC_USEC").isEmpty());
    qsizetype ready = notify.waitFor("READY=1", 8000, reloading);
    QVERIFY2(ready > reloading, qPrintable(messagesText(notify)));
    QCOMPARE(notify.messages().at(ready).value("STATUS"),
             QByteArray("serving 2 routes; 0 ambiguous; 0 failing; 0 stalled"));

    // A refused reload: READY=1 all the same (the old table serves), STATUS= names the failure.
    from = notify.messages().size();
    QVERIFY(slp.writeConfig("backends:\n  - name: broken\n    url: not-a-url\n"));
    QVERIFY(slp.reload());
    reloading = notify.waitFor("RELOADING=1", 8000, from);
    ready = notify.waitFor("READY=1", 8000, std::max<qsizetype>(reloading, 0));
    QVERIFY2(reloading >= 0 && ready > reloading, qPrintable(messagesText(notify)));
    const QByteArray status = notify.messages().at(ready).value("STATUS");
    QVERIFY2(status.startsWith(
                 "serving 2 routes; 0 ambiguous; 0 failing; 0 stalled; last reload failed: ") &&
                 status.contains("1 error(s)"),
             status.constData());
    QCOMPARE(chatStatus(slp.url(), "gamma"), 200);
    QCOMPARE(slp.stop(), 0);
}

void TestSystemd::stoppingAtDrain()
{
    FakeNotifySocket notify;
    SlpDaemon slp;
    QVERIFY2(slp.start("backends:\n" + pinned("alpha", m_mock.url()), {}, notify.environment()),
             qPrintable(slp.errorString()));
    QVERIFY(notify.waitFor("READY=1", 5000) >= 0);
    QCOMPARE(notify.count("STOPPING=1"), 0);
    QCOMPARE(slp.stop(), 0);
    QVERIFY2(notify.waitFor("STOPPING=1", 2000) > 0, qPrintable(messagesText(notify)));
}

void TestSystemd::drainAnswersARequestSentAsItBegins()
{
    // A restart under load: a client has connected (accepted, nothing read yet) when SIGTERM
    // arrives and sends its request a moment later. The drain reads it before closing idle
    // connections, so the client is answered, not closed on.
    SlpDaemon slp;
    QVERIFY2(slp.start("backends:\n" + pinned("alpha", m_mock.url())),
             qPrintable(slp.errorString()));
    RawConnection early;
    QVERIFY(early.connectTo(slp.host(), slp.port()));
    QCOMPARE(httpRequest("GET", slp.url() + "/healthz").status, 200); // the first one is accepted
    const ChildProcess::Mark from = slp.mark();
    QVERIFY(slp.process().sendSignal(SIGTERM));
    QVERIFY(
        slp.waitForLog(QRegularExpression("draining in-flight requests"), 3000, from).hasMatch());
    const QByteArray body = chatBody("alpha");
    QVERIFY(early.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                       "application/json\r\nContent-Length: " +
                       QByteArray::number(body.size()) + "\r\n\r\n" + body));
    const HttpResult r = early.readResponse(5000);
    QVERIFY2(r.status == 200, qPrintable(r.error + slp.stderrText()));
    QVERIFY(slp.process().waitForExit(5000));
    QCOMPARE(slp.process().exitCode(), 0);
}

void TestSystemd::watchdogStopsWhenAWorkerIsWedged()
{
    FakeNotifySocket notify;
    SlpDaemon slp;
    QMap<QString, QString> env = notify.environment();
    env.insert("WATCHDOG_USEC", "2000000"); // pings every 500 ms, while all loops turned in 1 s
    QVERIFY2(slp.start("workers: 2\nbackends:\n" + pinned("alpha", m_mock.url()), {}, env),
             qPrintable(slp.errorString()));
    QVERIFY(notify.waitFor("READY=1", 5000) >= 0);
    // Pinging while every loop turns.
    const qsizetype first = notify.waitFor("WATCHDOG=1", 3000);
    QVERIFY2(first >= 0, qPrintable(messagesText(notify)));
    QVERIFY2(notify.waitFor("WATCHDOG=1", 3000, first + 1) > first,
             qPrintable(messagesText(notify)));

    ThreadFreezer freezer;
    QString error;
    if (!freezer.freeze(slp.process().pid(), "slp-worker-1", &error))
        QSKIP(qPrintable("cannot wedge a worker thread here: " + error));
    // The stall is noticed within interval/2 (plus a tick); from then on no ping at all.
    QVERIFY2(slp.waitForLog(QRegularExpression("watchdog: slp-worker-1 has not turned"), 3000)
                 .hasMatch(),
             qPrintable(slp.stderrText()));
    const qsizetype quietFrom = notify.messages().size();
    pumpEvents(50);
    QElapsedTimer window;
    window.start();
    while (window.elapsed() < 2500)
        pumpEvents(50); // explicit window: 5 ping periods with no ping
    QCOMPARE(notify.count("WATCHDOG=1", quietFrom), 0);

    freezer.thaw();
    QVERIFY2(slp.waitForLog(QRegularExpression("watchdog: every event loop turns again"), 3000)
                 .hasMatch(),
             qPrintable(slp.stderrText()));
    QVERIFY(notify.waitFor("WATCHDOG=1", 3000, quietFrom) >= 0);
    QCOMPARE(slp.stop(), 0);
}

void TestSystemd::socketActivation_data()
{
    QTest::addColumn<int>("workers");
    QTest::newRow("1 worker") << 1;
    QTest::newRow("2 workers") << 2;
}

void TestSystemd::socketActivation()
{
    QFETCH(int, workers);
    const QString activate = QStandardPaths::findExecutable("systemd-socket-activate");
    if (activate.isEmpty())
        QSKIP("systemd-socket-activate (package systemd) is not installed");
    quint16 port = 0;
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        port = probe.serverPort();
    }
    QTemporaryDir dir;
    const QString config = dir.filePath("slp.yaml");
    QFile f(config);
    QVERIFY(f.open(QIODevice::WriteOnly));
    // listen: names another port: the passed socket wins.
    f.write(SlpDaemon::withTestTransport(QStringLiteral("listen: \"127.0.0.1:1\"\nworkers: %1\n"
                                                        "backends:\n")
                                             .arg(workers) +
                                         pinned("alpha", m_mock.url()))
                .toUtf8());
    f.close();
    // systemd-socket-activate binds the port and runs slp only once a connection arrives:
    // that first connection was made before slp existed, and must be served.
    ChildProcess slp;
    QVERIFY(slp.start(activate, {"-l", QStringLiteral("127.0.0.1:%1").arg(port),
                                 SlpDaemon::binary(), "--config", config}));
    QElapsedTimer t;
    t.start();
    auto early = std::make_unique<QTcpSocket>();
    while (t.elapsed() < 5000) {
        early->connectToHost(QHostAddress::LocalHost, port);
        if (early->waitForConnected(200))
            break;
        early->abort();
        pumpEvents(20);
    }
    QCOMPARE(early->state(), QAbstractSocket::ConnectedState);
    const QByteArray body = chatBody("alpha");
    early->write("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                 "application/json\r\nConnection: close\r\nContent-Length: " +
                 QByteArray::number(body.size()) + "\r\n\r\n" + body);
    QByteArray answer;
    t.restart();
    while (t.elapsed() < 10000 && early->state() == QAbstractSocket::ConnectedState) {
        early->waitForReadyRead(100);
        answer += early->readAll();
    }
    answer += early->readAll();
    QVERIFY2(answer.startsWith("HTTP/1.1 200"), qPrintable(answer + "\n" + slp.allOutput()));

    QVERIFY(slp.waitForLine(QRegularExpression("socket activation: systemd passed 1 listening "
                                               "socket\\(s\\); listen: 127.0.0.1:1 is ignored"),
                            2000)
                .hasMatch());
    QVERIFY(slp.waitForLine(QRegularExpression(QStringLiteral("listening on 127.0.0.1:%1 "
                                                              "\\(passed by systemd\\)")
                                                   .arg(port)),
                            2000)
                .hasMatch());
    // More requests, on fresh connections, all served; how the workers shared them is printed
    // (every worker polls the one socket: whichever accepts first takes the connection).
    const QString base = QStringLiteral("http://127.0.0.1:%1").arg(port);
    for (int i = 0; i < 40; ++i)
        QCOMPARE(chatStatus(base, "alpha"), 200);
    const QByteArray metrics = httpRequest("GET", base + "/metrics").body;
    QStringList accepted;
    for (const QByteArray &line : metrics.split('\n'))
        if (line.startsWith("slp_accepted_connections_total{"))
            accepted << QString::fromUtf8(line);
    qInfo().noquote() << "accepts per worker:" << accepted.join("; ");
    QVERIFY(!accepted.isEmpty());
    QCOMPARE(slp.stop(), 0);
}

QTEST_GUILESS_MAIN(TestSystemd)
#include "tst_systemd.moc"
