// SPDX-License-Identifier: GPL-3.0-or-later
// `listen: unix:PATH` and `--listen unix:PATH` against the real `slp` (docs/OPERATE.md, "Run it
// under systemd"): the socket gets listen_mode; curl --unix-socket and Caddy's `reverse_proxy
// unix//PATH` are served (with workers: 2 too); X-Forwarded-For carries no address for a
// Unix-socket peer (a client's own list passes unchanged); a socket file left by a dead
// process is replaced, a live one or a non-socket file refuses the start and is left alone;
// the socket file goes at exit.
#include "testsupport.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTcpServer>
#include <QtTest>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

using namespace slp::test;

namespace {

const QRegularExpression kListening(QStringLiteral("listening on unix:"));

QString pinned(const QString &name, const QString &url)
{
    return QStringLiteral("  - name: %1\n    url: %2\n    model: %1-up\n").arg(name, url);
}

// A Unix socket file with nobody behind it: bound, then closed without unlinking.
bool leaveStaleSocket(const QString &path)
{
    sockaddr_un address = {};
    address.sun_family = AF_UNIX;
    const QByteArray name = QFile::encodeName(path);
    memcpy(address.sun_path, name.constData(), size_t(name.size()));
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    const bool ok =
        fd >= 0 && ::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof(address)) == 0;
    if (fd >= 0)
        ::close(fd);
    return ok;
}

struct Curl
{
    int status = 0;
    QByteArray body;
    QString error;
};

} // namespace

class TestUnixSocket : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void servesCurlWithMode_data();
    void servesCurlWithMode();
    void staleSocketIsReplaced();
    void liveSocketOrOtherFileRefuses();
    void caddyInFront();

private:
    // Starts slp on `yaml` (written to m_dir/NAME.yaml) plus `extra` arguments; true once it
    // logs that it listens.
    bool startSlp(ChildProcess &slp, const QString &name, const QString &yaml,
                  const QStringList &extra = {});
    Curl curl(const QStringList &args);

    QTemporaryDir m_dir;
    MockUpstream m_mock;
    QString m_curl;
};

void TestUnixSocket::initTestCase()
{
    m_curl = QStandardPaths::findExecutable("curl");
    if (m_curl.isEmpty())
        QSKIP("curl is not installed");
    QVERIFY(m_dir.isValid());
    QVERIFY2(m_mock.start(), qPrintable(m_mock.errorString()));
}

bool TestUnixSocket::startSlp(ChildProcess &slp, const QString &name, const QString &yaml,
                              const QStringList &extra)
{
    const QString config = m_dir.filePath(name + ".yaml");
    QFile f(config);
    if (!f.open(QIODevice::WriteOnly))
        return false;
    f.write(SlpDaemon::withTestTransport(yaml).toUtf8());
    f.close();
    if (!slp.start(SlpDaemon::binary(), QStringList{"--config", config} + extra))
        return false;
    return slp.waitForLine(kListening, 15000, ChildProcess::Channel::StdErr).hasMatch();
}

Curl TestUnixSocket::curl(const QStringList &args)
{
    const CommandResult c = runCommand(
        m_curl, QStringList{"-sS", "--max-time", "10", "-w", "\n%{http_code}"} + args, 15000);
    Curl out;
    const qsizetype nl = c.stdOut.lastIndexOf('\n');
    out.status = c.stdOut.mid(nl + 1).toInt();
    out.body = c.stdOut.left(std::max<qsizetype>(nl, 0));
    out.error = QString::fromUtf8(c.stdErr);
    return out;
}

void TestUnixSocket::servesCurlWithMode_data()
{
    QTest::addColumn<int>("workers");
    QTest::addColumn<bool>("fromCommandLine");
    QTest::newRow("listen: unix:, 1 worker") << 1 << false;
    QTest::newRow("--listen unix:, 2 workers") << 2 << true;
}

void TestUnixSocket::servesCurlWithMode()
{
    QFETCH(int, workers);
    QFETCH(bool, fromCommandLine);
    const QString path = m_dir.filePath(QStringLiteral("slp-%1.sock").arg(workers));
    const QString listen = "unix:" + path;
    ChildProcess slp;
    QString yaml = QStringLiteral("workers: %1\nlisten_mode: \"0640\"\n").arg(workers);
    if (!fromCommandLine)
        yaml += QStringLiteral("listen: \"%1\"\n").arg(listen);
    QVERIFY2(startSlp(slp, QStringLiteral("mode%1").arg(workers),
                      yaml + "backends:\n" + pinned("alpha", m_mock.url()),
                      fromCommandLine ? QStringList{"--listen", listen} : QStringList{}),
             qPrintable(slp.allOutput()));
    QVERIFY(
        slp.waitForLine(QRegularExpression("listening on " + QRegularExpression::escape(listen) +
                                           " \\(mode 0640\\)"),
                        1000)
            .hasMatch());
    struct stat st = {};
    QCOMPARE(::stat(QFile::encodeName(path).constData(), &st), 0);
    QVERIFY(S_ISSOCK(st.st_mode));
    QCOMPARE(int(st.st_mode & 07777), 0640);

    const Curl health = curl({"--unix-socket", path, "http://localhost/healthz"});
    QVERIFY2(health.status == 200, qPrintable(health.error));
    const qint64 before = m_mock.requests().isEmpty()
                              ? 0
                              : m_mock.requests().last().toObject().value("seq").toInteger();
    const QByteArray body = R"({"model":"alpha","messages":[{"role":"user","content":"hi"}]})";
    for (int i = 0; i < 10; ++i) {
        const Curl chat =
            curl({"--unix-socket", path, "-H", "Content-Type: application/json", "--data-binary",
                  QString::fromUtf8(body), "http://localhost/v1/chat/completions"});
        QVERIFY2(chat.status == 200, qPrintable(chat.error + chat.body));
    }
    // A peer on a Unix socket has no address: none is appended to X-Forwarded-For, and a
    // client's own list passes as it came.
    QVERIFY(curl({"--unix-socket", path, "-H", "Content-Type: application/json", "-H",
                  "X-Forwarded-For: 192.0.2.7", "--data-binary", QString::fromUtf8(body),
                  "http://localhost/v1/chat/completions"})
                .status == 200);
    const QJsonArray seen = m_mock.waitForRequests(11, 5000, before);
    QCOMPARE(seen.size(), 11);
    QCOMPARE(MockUpstream::header(seen.first().toObject(), "X-Forwarded-For"), QByteArray());
    QCOMPARE(MockUpstream::header(seen.last().toObject(), "X-Forwarded-For"),
             QByteArray("192.0.2.7"));

    QCOMPARE(slp.stop(), 0);
    QVERIFY2(!QFileInfo::exists(path), "the socket file stays after a clean exit");
}

void TestUnixSocket::staleSocketIsReplaced()
{
    const QString path = m_dir.filePath("stale.sock");
    QVERIFY(leaveStaleSocket(path));
    QVERIFY(QFileInfo::exists(path));
    ChildProcess slp;
    QVERIFY2(startSlp(slp, "stale",
                      QStringLiteral("listen: \"unix:%1\"\nbackends:\n").arg(path) +
                          pinned("alpha", m_mock.url())),
             qPrintable(slp.allOutput()));
    const Curl health = curl({"--unix-socket", path, "http://localhost/healthz"});
    QVERIFY2(health.status == 200, qPrintable(health.error));
    QCOMPARE(slp.stop(), 0);
}

void TestUnixSocket::liveSocketOrOtherFileRefuses()
{
    const QString path = m_dir.filePath("live.sock");
    const QString yaml = QStringLiteral("listen: \"unix:%1\"\nbackends:\n").arg(path) +
                         pinned("alpha", m_mock.url());
    ChildProcess first;
    QVERIFY2(startSlp(first, "live1", yaml), qPrintable(first.allOutput()));

    ChildProcess second;
    QVERIFY(!startSlp(second, "live2", yaml));
    QVERIFY(second.waitForExit(10000));
    QCOMPARE(second.exitCode(), 1);
    QVERIFY2(second.allOutput().contains("another process is listening on " + path),
             qPrintable(second.allOutput()));
    // The first one's socket was not taken away.
    QCOMPARE(curl({"--unix-socket", path, "http://localhost/healthz"}).status, 200);
    QCOMPARE(first.stop(), 0);

    const QString file = m_dir.filePath("not-a-socket");
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("keep me\n");
    f.close();
    ChildProcess third;
    QVERIFY(!startSlp(third, "file",
                      QStringLiteral("listen: \"unix:%1\"\nbackends:\n").arg(file) +
                          pinned("alpha", m_mock.url())));
    QVERIFY(third.waitForExit(10000));
    QCOMPARE(third.exitCode(), 1);
    QVERIFY2(third.allOutput().contains(file + " exists and is not a socket"),
             qPrintable(third.allOutput()));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), QByteArray("keep me\n"));
}

void TestUnixSocket::caddyInFront()
{
    const QString caddy = QStandardPaths::findExecutable("caddy");
    if (caddy.isEmpty())
        QSKIP("caddy is not installed: scripts/install-deps.sh installs Debian's caddy package");
    const QString path = m_dir.filePath("caddy.sock");
    ChildProcess slp;
    QVERIFY2(startSlp(slp, "caddy",
                      QStringLiteral("listen: \"unix:%1\"\nbackends:\n").arg(path) +
                          pinned("alpha", m_mock.url())),
             qPrintable(slp.allOutput()));
    quint16 port = 0;
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        port = probe.serverPort();
    }
    // Plain HTTP on loopback (tst_caddy covers TLS); the upstream is SLP's Unix socket.
    const QString home = m_dir.filePath("caddy-home");
    QDir().mkpath(home);
    const QString caddyfile = QStringLiteral("{\n\tadmin off\n\tauto_https off\n"
                                             "\tstorage file_system {\n\t\troot %1\n\t}\n}\n"
                                             "http://127.0.0.1:%2 {\n"
                                             "\treverse_proxy unix/%3 {\n"
                                             "\t\tflush_interval -1\n\t}\n}\n")
                                  .arg(home + "/storage")
                                  .arg(port)
                                  .arg(path);
    const QString file = m_dir.filePath("Caddyfile");
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(caddyfile.toUtf8());
    f.close();
    ChildProcess proxy;
    QVERIFY(proxy.start(caddy, {"run", "--config", file, "--adapter", "caddyfile"},
                        {{"HOME", home}, {"XDG_DATA_HOME", home}, {"XDG_CONFIG_HOME", home}}));
    const QString base = QStringLiteral("http://127.0.0.1:%1").arg(port);
    Curl health;
    QTRY_VERIFY_WITH_TIMEOUT(
        !proxy.isRunning() || (health = curl({base + "/healthz"})).status == 200, 20000);
    QVERIFY2(health.status == 200, qPrintable(health.error + proxy.allOutput().right(3000)));
    const Curl chat = curl({"-H", "Content-Type: application/json", "--data-binary",
                            R"({"model":"alpha","messages":[{"role":"user","content":"hi"}]})",
                            base + "/v1/chat/completions"});
    QVERIFY2(chat.status == 200, qPrintable(chat.error + chat.body));
    proxy.stop(5000);
    QCOMPARE(slp.stop(), 0);
}

QTEST_GUILESS_MAIN(TestUnixSocket)
#include "tst_unix_socket.moc"
