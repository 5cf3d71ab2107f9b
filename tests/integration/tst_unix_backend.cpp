// SPDX-License-Identifier: GPL-3.0-or-later
// Backends on Unix sockets (`url: unix:/PATH`, docs/CONFIG.md) against the real `slp`: discovery
// over the socket renames the model, a plain answer and a stream are relayed with
// "Host: localhost", a missing socket file and one nobody listens on are the usual 502 with the
// path in slp's log, `retry: true` re-dials once after a connection closed before any answer,
// the route's timeout cuts a silent backend, and discovery's probe errors (missing file, silence,
// a list past 4 MiB) name the path as the TCP probe's do. Under `upstream_transport: qnam` (the
// .qnam twin) such a config is refused, naming the key and the line: Qt 6.4's QNAM cannot dial one.
#include "testsupport.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QProcess>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace slp::test;

namespace {

// A listening Unix socket at `path`, or -1. `backlog` 0 is fine for a scripted server.
int listenUnix(const QString &path)
{
    sockaddr_un address = {};
    address.sun_family = AF_UNIX;
    const QByteArray name = QFile::encodeName(path);
    std::memcpy(address.sun_path, name.constData(), size_t(name.size()));
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof(address)) != 0 ||
        ::listen(fd, 16) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// A scripted upstream on a Unix socket: the first `closeFirst` connections are closed
// without an answer; later ones get a fixed 200, unless `silent`, when nothing is ever sent.
class ScriptedUnixServer : public QObject
{
public:
    bool listen(const QString &path)
    {
        const int fd = listenUnix(path);
        if (fd < 0 || !m_server.setSocketDescriptor(fd))
            return false;
        connect(&m_server, &QTcpServer::newConnection, this, [this] { accept(); });
        return true;
    }
    int closeFirst = 0;
    bool silent = false;
    int accepted = 0;

private:
    void accept()
    {
        while (QTcpSocket *socket = m_server.nextPendingConnection()) {
            socket->setParent(this);
            if (accepted++ < closeFirst) {
                socket->abort();
                continue;
            }
            if (silent)
                continue;
            connect(socket, &QTcpSocket::readyRead, socket, [socket] {
                if (!socket->readAll().contains("\r\n\r\n"))
                    return;
                socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                              "Content-Length: 11\r\n\r\n{\"ok\":true}");
            });
        }
    }
    QTcpServer m_server;
};

QByteArray chat(const QByteArray &model, bool stream = false)
{
    return "{\"model\":\"" + model + "\",\"stream\":" + (stream ? "true" : "false") +
           ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
}

} // namespace

class TestUnixBackend : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void discoveryRenamesOverTheSocket();
    void streamIsRelayed();
    void missingOrRefusedSocketIs502_data();
    void missingOrRefusedSocketIs502();
    void retryRedialsOnce();
    void silentBackendTimesOut();
    void probeErrorsNameTheSocket();
    void probeReadsAtMostTheLimit();

private:
    bool qnam() const { return SlpDaemon::transport() == QStringLiteral("qnam"); }
    HttpResult post(const QByteArray &body)
    {
        return httpRequest("POST", m_slp.url() + QStringLiteral("/v1/chat/completions"), body,
                           {{"Content-Type", "application/json"}}, 10000);
    }

    QTemporaryDir m_dir{QStringLiteral("/tmp/slp-ub-XXXXXX")}; // sun_path holds 107 bytes
    MockUpstream m_mock;
    ScriptedUnixServer m_flaky;
    ScriptedUnixServer m_silent;
    SlpDaemon m_slp;
};

void TestUnixBackend::initTestCase()
{
    QVERIFY(m_dir.isValid());
    const QString mockSock = m_dir.filePath(QStringLiteral("vllm.sock"));
    QVERIFY2(m_mock.start({QStringLiteral("real-name")}, {QStringLiteral("--unix"), mockSock}),
             qPrintable(m_mock.errorString()));
    m_flaky.closeFirst = 1;
    QVERIFY(m_flaky.listen(m_dir.filePath(QStringLiteral("flaky.sock"))));
    m_silent.silent = true;
    QVERIFY(m_silent.listen(m_dir.filePath(QStringLiteral("silent.sock"))));
    const int stale = listenUnix(m_dir.filePath(QStringLiteral("stale.sock")));
    QVERIFY(stale >= 0);
    ::close(stale); // the file stays, with nobody behind it: connect(2) is refused
    const QString config =
        QStringLiteral("discovery:\n  probe_timeout: 300ms\n  backoff_max: 1s\n  recheck: 1s\n"
                       "backends:\n"
                       "  - name: alias\n    url: unix:%1\n"
                       "  - name: missing\n    url: unix:%2\n    model: m\n"
                       "  - name: stale\n    url: unix:%3\n    model: m\n"
                       "  - name: flaky\n    url: unix:%4\n    model: m\n    retry: true\n"
                       "  - name: silent\n    url: unix:%5\n    model: m\n    timeout: 300ms\n"
                       "  - name: unprobed\n    url: unix:%2\n"
                       "  - name: mute\n    url: unix:%5\n")
            .arg(mockSock, m_dir.filePath(QStringLiteral("none.sock")),
                 m_dir.filePath(QStringLiteral("stale.sock")),
                 m_dir.filePath(QStringLiteral("flaky.sock")),
                 m_dir.filePath(QStringLiteral("silent.sock")));
    if (qnam()) {
        // Refused up front, with the key and the line: never a route that cannot work.
        QProcess check;
        const QString file = m_dir.filePath(QStringLiteral("qnam.yaml"));
        QFile out(file);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(SlpDaemon::withTestTransport(config).toUtf8());
        out.close();
        check.start(SlpDaemon::binary(),
                    {QStringLiteral("--check"), QStringLiteral("--config"), file});
        QVERIFY(check.waitForFinished(10000));
        QVERIFY(check.exitCode() != 0);
        const QString err = QString::fromUtf8(check.readAllStandardError());
        QVERIFY2(err.contains(QStringLiteral("needs upstream_transport: socket")), qPrintable(err));
        // The first unix: backend's line, as the file was written.
        const QString written = SlpDaemon::withTestTransport(config);
        const int line = int(written.left(written.indexOf(QStringLiteral("name: alias")))
                                 .count(QLatin1Char('\n'))) +
                         1;
        QVERIFY2(err.contains(QStringLiteral(":%1:").arg(line)), qPrintable(err));
        QSKIP("upstream_transport: qnam refuses unix: backends (checked above)");
    }
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
}

void TestUnixBackend::cleanupTestCase()
{
    if (!qnam())
        QCOMPARE(m_slp.stop(), 0);
    m_mock.stop();
}

void TestUnixBackend::discoveryRenamesOverTheSocket()
{
    QVERIFY(m_slp
                .waitForLog(
                    QRegularExpression(QStringLiteral(
                        "discovery: alias: backend serves \"real-name\"; requests are renamed")),
                    10000)
                .hasMatch());
    const HttpResult r = post(chat("alias"));
    QCOMPARE(r.status, 200);
    const QJsonArray seen = m_mock.waitForRequests(1, 5000);
    QVERIFY(!seen.isEmpty());
    const QJsonObject last = seen.last().toObject();
    QCOMPARE(MockUpstream::header(last, "host"), QByteArray("localhost"));
    QVERIFY(MockUpstream::body(last).contains("\"model\":\"real-name\""));
    // The route dump names the socket; ?debug names no address.
    const HttpResult models = httpRequest("GET", m_slp.url() + QStringLiteral("/v1/models?debug"));
    QCOMPARE(models.status, 200);
    QVERIFY(!models.body.contains("sock"));
    const QRegularExpression dumped(QStringLiteral("alias +-> unix:") +
                                    QRegularExpression::escape(m_dir.path()));
    QVERIFY(dumped.match(m_slp.stderrText()).hasMatch());
}

void TestUnixBackend::streamIsRelayed()
{
    const HttpResult r = post(chat("alias", true));
    QCOMPARE(r.status, 200);
    const QList<QByteArray> events = sseData(r.body);
    QVERIFY(events.size() > 2);
    QCOMPARE(events.last(), QByteArray("[DONE]"));
}

void TestUnixBackend::missingOrRefusedSocketIs502_data()
{
    QTest::addColumn<QByteArray>("model");
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("why");
    QTest::newRow("missing") << QByteArray("missing") << QStringLiteral("none.sock")
                             << QStringLiteral("No such file or directory");
    QTest::newRow("refused") << QByteArray("stale") << QStringLiteral("stale.sock")
                             << QStringLiteral("Connection refused");
}

void TestUnixBackend::missingOrRefusedSocketIs502()
{
    QFETCH(QByteArray, model);
    QFETCH(QString, file);
    QFETCH(QString, why);
    const auto mark = m_slp.mark();
    const HttpResult r = post(chat(model));
    QCOMPARE(r.status, 502);
    QVERIFY(r.body.contains("upstream_failed"));
    const QString line = QStringLiteral("connect to unix:%1: %2").arg(m_dir.filePath(file), why);
    QVERIFY2(m_slp.waitForLog(QRegularExpression(QRegularExpression::escape(line)), 5000, mark)
                 .hasMatch(),
             qPrintable(m_slp.stderrText()));
}

void TestUnixBackend::retryRedialsOnce()
{
    const int before = m_flaky.accepted;
    const HttpResult r = post(chat("flaky"));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body, QByteArray("{\"ok\":true}"));
    QCOMPARE(m_flaky.accepted - before, 2); // closed unanswered, then re-dialled once
}

void TestUnixBackend::silentBackendTimesOut()
{
    QElapsedTimer clock;
    clock.start();
    const HttpResult r = post(chat("silent"));
    QCOMPARE(r.status, 502);
    QVERIFY(r.body.contains("upstream_timeout"));
    QVERIFY(r.body.contains("timed out after 300ms"));
    QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
}

// Discovery's probe over the socket fails as the TCP one does, naming the path in the words a
// forwarded request's failure uses (the same dialer): a missing file at once, a backend that
// never answers after probe_timeout.
void TestUnixBackend::probeErrorsNameTheSocket()
{
    const QString missing = QStringLiteral("discovery: unprobed: probe GET \"unix:%1/v1/models\" "
                                           "failed: connect to unix:%1: No such file or directory")
                                .arg(m_dir.filePath(QStringLiteral("none.sock")));
    QVERIFY2(
        m_slp.waitForLog(QRegularExpression(QRegularExpression::escape(missing)), 5000).hasMatch(),
        qPrintable(m_slp.stderrText()));
    const QString silent = QStringLiteral("discovery: mute: probe GET \"unix:%1/v1/models\" "
                                          "failed: no answer within 300ms")
                               .arg(m_dir.filePath(QStringLiteral("silent.sock")));
    QVERIFY2(
        m_slp.waitForLog(QRegularExpression(QRegularExpression::escape(silent)), 5000).hasMatch(),
        qPrintable(m_slp.stderrText()));
}

// The 4 MiB model list limit holds over the socket too: a longer answer is an error, and the
// name learned before stays.
void TestUnixBackend::probeReadsAtMostTheLimit()
{
    const auto mark = m_slp.mark();
    QVERIFY(m_mock.setModelsStatus(
        {{"status", 200}, {"raw", QString(5 * 1024 * 1024, QLatin1Char('x'))}}));
    const QString line =
        QStringLiteral("discovery: alias: probe GET \"unix:%1/v1/models\" failed: model list "
                       "larger than 4194304 bytes: stopped reading; keeping \"real-name\"")
            .arg(m_dir.filePath(QStringLiteral("vllm.sock")));
    const bool seen =
        m_slp.waitForLog(QRegularExpression(QRegularExpression::escape(line)), 10000, mark)
            .hasMatch();
    QVERIFY(m_mock.setModelsStatus({}));
    QVERIFY2(seen, qPrintable(m_slp.stderrText()));
}

QTEST_GUILESS_MAIN(TestUnixBackend)
#include "tst_unix_backend.moc"
