// SPDX-License-Identifier: GPL-3.0-or-later
// The connector against a canned HTTP server in the test: both bodies arrive, errors are
// named, a hung SLP is cut by the per-poll timeout, and polls never overlap. And over TLS
// with a private CA (made with openssl for the test): refused without --ca-file's
// certificates, trusted with them.
#include "fixture.h"
#include "monitoroptions.h"
#include "quietwindow.h"
#include "statuspoller.h"

#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QSslKey>
#include <QSslSocket>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

using namespace slp::monitor;
using slp::monitor::test::fixture;
using namespace std::chrono_literals;

namespace {

// A listener that speaks TLS on every accepted connection (Caddy's part, in miniature).
class TlsServer : public QTcpServer
{
public:
    QSslCertificate certificate;
    QSslKey key;

protected:
    void incomingConnection(qintptr descriptor) override
    {
        if (certificate.isNull())
            return QTcpServer::incomingConnection(descriptor); // plain http
        auto *socket = new QSslSocket(this); // reparented to the CannedSlp by serve()
        if (!socket->setSocketDescriptor(descriptor)) {
            delete socket;
            return;
        }
        socket->setLocalCertificate(certificate);
        socket->setPrivateKey(key);
        socket->startServerEncryption();
        addPendingConnection(socket);
    }
};

// Answers GET /v1/models?debug and /metrics with canned bodies after `delayMs`; counts
// requests and the most that were open at once. With a certificate it serves https.
class CannedSlp : public QObject
{
public:
    QByteArray catalog = fixture(QStringLiteral("catalog-ok.json"));
    QByteArray metrics = fixture(QStringLiteral("metrics-ok.txt"));
    int metricsStatus = 200;
    int delayMs = 0;
    bool hang = false;
    int requests = 0;
    int open = 0;
    int maxOpen = 0;
    QStringList paths;

    CannedSlp() : CannedSlp(QSslCertificate(), QSslKey()) {}
    CannedSlp(const QSslCertificate &certificate, const QSslKey &key)
    {
        m_tls = !certificate.isNull();
        m_server.certificate = certificate;
        m_server.key = key;
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *s = m_server.nextPendingConnection())
                serve(s);
        });
        m_server.listen(QHostAddress::LocalHost, 0);
    }
    QUrl url() const
    {
        return QUrl(QStringLiteral("%1://127.0.0.1:%2")
                        .arg(m_tls ? "https" : "http")
                        .arg(m_server.serverPort()));
    }

private:
    void serve(QTcpSocket *socket)
    {
        socket->setParent(this);
        auto buffer = std::make_shared<QByteArray>();
        connect(socket, &QTcpSocket::readyRead, socket, [this, socket, buffer] {
            buffer->append(socket->readAll());
            if (!buffer->contains("\r\n\r\n") || socket->property("seen").toBool())
                return;
            socket->setProperty("seen", true);
            const QByteArray path = buffer->split(' ').value(1);
            paths << QString::fromLatin1(path);
            ++requests;
            maxOpen = std::max(maxOpen, ++open);
            if (hang)
                return;
            QTimer::singleShot(delayMs, socket, [this, socket, path] {
                const bool isMetrics = path == "/metrics";
                const int status = isMetrics ? metricsStatus : 200;
                const QByteArray body = isMetrics ? metrics : catalog;
                socket->write("HTTP/1.1 " + QByteArray::number(status) +
                              " X\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                              "Content-Length: " +
                              QByteArray::number(body.size()) + "\r\n\r\n" + body);
                socket->disconnectFromHost();
                --open;
            });
        });
    }

    TlsServer m_server; // plain TCP unless given a certificate
    bool m_tls = false;
};

// openssl: a CA, and a server certificate for 127.0.0.1 signed by it. Empty on failure.
QString makePrivateCa(const QString &dir)
{
    const QString openssl = QStandardPaths::findExecutable(QStringLiteral("openssl"));
    if (openssl.isEmpty())
        return QStringLiteral("openssl not found");
    QFile ext(dir + QStringLiteral("/server.ext"));
    if (!ext.open(QIODevice::WriteOnly))
        return QStringLiteral("cannot write server.ext");
    ext.write("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n");
    ext.close();
    const QList<QStringList> steps{
        {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=SLP test CA"},
        {"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
         "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"},
        {"x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
         "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "server.ext"},
    };
    for (const QStringList &args : steps) {
        QProcess p;
        p.setWorkingDirectory(dir);
        p.start(openssl, args);
        if (!p.waitForFinished(20000) || p.exitCode() != 0)
            return QStringLiteral("openssl %1: %2")
                .arg(args.first(), QString::fromLocal8Bit(p.readAllStandardError()));
    }
    return {};
}

} // namespace

class TestMonitorPoller : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { qRegisterMetaType<PollResult>(); }
    void pollsBoth();
    void refused();
    void metricsStatusIsAnError();
    void hungSlpTimesOut();
    void neverOverlaps();
    void defaultTimeout();
    void privateCaTrustedOnlyWhenGiven();
};

void TestMonitorPoller::pollsBoth()
{
    CannedSlp slp;
    StatusPoller poller;
    poller.setBaseUrl(slp.url());
    QSignalSpy done(&poller, &StatusPoller::pollFinished);
    poller.pollNow();
    QVERIFY(done.wait(5000));
    const auto r = done.first().first().value<PollResult>();
    QVERIFY2(r.catalogError.isEmpty(), qPrintable(r.catalogError));
    QVERIFY2(r.metricsError.isEmpty(), qPrintable(r.metricsError));
    QCOMPARE(r.catalogBody, slp.catalog);
    QCOMPARE(r.metricsBody, slp.metrics);
    QCOMPARE(r.baseUrl, slp.url());
    QVERIFY(r.finishedAt.isValid());
    slp.paths.sort();
    QCOMPARE(slp.paths, (QStringList{"/metrics", "/v1/models?debug"}));
    QCOMPARE(readSnapshot(r).health, Health::Ok);
}

void TestMonitorPoller::refused()
{
    QTcpServer closed;
    QVERIFY(closed.listen(QHostAddress::LocalHost, 0));
    const quint16 port = closed.serverPort();
    closed.close(); // nothing listens there now
    StatusPoller poller;
    poller.setBaseUrl(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(port)));
    QSignalSpy done(&poller, &StatusPoller::pollFinished);
    poller.pollNow();
    QVERIFY(done.wait(5000));
    const auto r = done.first().first().value<PollResult>();
    QVERIFY2(r.catalogError.contains(QLatin1String("refused")), qPrintable(r.catalogError));
    const StatusSnapshot s = readSnapshot(r);
    QVERIFY(!s.reachable);
    QCOMPARE(s.health, Health::Alert);
}

void TestMonitorPoller::metricsStatusIsAnError()
{
    CannedSlp slp;
    slp.metricsStatus = 404;
    StatusPoller poller;
    poller.setBaseUrl(slp.url());
    QSignalSpy done(&poller, &StatusPoller::pollFinished);
    poller.pollNow();
    QVERIFY(done.wait(5000));
    const auto r = done.first().first().value<PollResult>();
    QVERIFY(r.catalogError.isEmpty());
    QVERIFY2(r.metricsError.startsWith(QLatin1String("HTTP 404")), qPrintable(r.metricsError));
    QCOMPARE(readSnapshot(r).health, Health::Attention);
}

void TestMonitorPoller::hungSlpTimesOut()
{
    CannedSlp slp;
    slp.hang = true;
    StatusPoller poller;
    poller.setBaseUrl(slp.url());
    poller.setTimeout(400ms);
    QSignalSpy done(&poller, &StatusPoller::pollFinished);
    QElapsedTimer clock;
    clock.start();
    poller.pollNow();
    QVERIFY(done.wait(5000));
    const qint64 elapsed = clock.elapsed();
    QVERIFY2(elapsed >= 350 && elapsed < 3000, qPrintable(QString::number(elapsed)));
    const auto r = done.first().first().value<PollResult>();
    QCOMPARE(r.catalogError, QStringLiteral("no answer within 400 ms"));
    QCOMPARE(r.metricsError, QStringLiteral("no answer within 400 ms"));
    QVERIFY(!poller.isPolling());
    QCOMPARE(done.size(), 1);
}

void TestMonitorPoller::neverOverlaps()
{
    // Each answer takes longer than the interval; pollNow() during a poll adds nothing.
    CannedSlp slp;
    slp.delayMs = 250;
    StatusPoller poller;
    poller.setBaseUrl(slp.url());
    poller.setInterval(100ms);
    poller.setTimeout(2000ms);
    QSignalSpy done(&poller, &StatusPoller::pollFinished);
    poller.start();
    for (int i = 0; i < 5; ++i)
        poller.pollNow();
    QTRY_VERIFY_WITH_TIMEOUT(done.size() >= 3, 10000);
    poller.stop();
    QVERIFY(slp.maxOpen <= 2); // one catalog + one metrics request, never two polls
    QVERIFY2(slp.requests <= 2 * (done.size() + 1), qPrintable(QString::number(slp.requests)));
    const int after = done.size();
    // Stopped means stopped: no poll for several intervals (a poll takes slp.delayMs).
    QTest::qWait(5 * slp::test::kQuietWindowMs);
    QCOMPARE(done.size(), after);
}

void TestMonitorPoller::defaultTimeout()
{
    QCOMPARE(StatusPoller::defaultTimeout(10s), 5000ms);
    QCOMPARE(StatusPoller::defaultTimeout(3s), 3000ms);
    QCOMPARE(StatusPoller::defaultTimeout(200ms), 1000ms);
}

void TestMonitorPoller::privateCaTrustedOnlyWhenGiven()
{
    if (!QSslSocket::supportsSsl())
        QSKIP("Qt has no TLS backend here");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString made = makePrivateCa(dir.path());
    QVERIFY2(made.isEmpty(), qPrintable(made));
    const auto certificates = QSslCertificate::fromPath(dir.filePath(QStringLiteral("server.pem")));
    QCOMPARE(certificates.size(), 1);
    QFile keyFile(dir.filePath(QStringLiteral("server.key")));
    QVERIFY(keyFile.open(QIODevice::ReadOnly));
    const QSslKey key(&keyFile, QSsl::Ec);
    QVERIFY(!key.isNull());
    CannedSlp slp(certificates.first(), key);

    // Without the CA: the system does not know it, the handshake fails (SLP "unreachable").
    StatusPoller plain;
    plain.setBaseUrl(slp.url());
    QSignalSpy refused(&plain, &StatusPoller::pollFinished);
    plain.pollNow();
    QVERIFY(refused.wait(10000));
    const auto bad = refused.first().first().value<PollResult>();
    QVERIFY2(!bad.catalogError.isEmpty(), "an unknown CA was trusted");
    QCOMPARE(slp.requests, 0);

    // With --ca-file's certificates: both requests go through.
    QString why;
    const auto ca = loadCaFile(dir.filePath(QStringLiteral("ca.pem")), &why);
    QVERIFY2(ca, qPrintable(why));
    StatusPoller trusting;
    trusting.setBaseUrl(slp.url());
    trusting.setCaCertificates(*ca);
    QSignalSpy done(&trusting, &StatusPoller::pollFinished);
    trusting.pollNow();
    QVERIFY(done.wait(10000));
    const auto r = done.first().first().value<PollResult>();
    QVERIFY2(r.catalogError.isEmpty(), qPrintable(r.catalogError));
    QVERIFY2(r.metricsError.isEmpty(), qPrintable(r.metricsError));
    QCOMPARE(r.catalogBody, slp.catalog);
    QCOMPARE(readSnapshot(r).health, Health::Ok);
}

QTEST_GUILESS_MAIN(TestMonitorPoller)
#include "tst_monitor_poller.moc"
