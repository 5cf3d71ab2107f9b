// The connector against a canned HTTP server in the test: both bodies arrive, errors are
// named, a hung SLP is cut by the per-poll timeout, and polls never overlap.
#include "statuspoller.h"

#include <QFile>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QtTest>

using namespace slp::monitor;
using namespace std::chrono_literals;

namespace {

QByteArray fixture(const QString &name)
{
    QFile f(QFINDTESTDATA(QStringLiteral("data/monitor/") + name));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing fixture %s", qPrintable(name));
    return f.readAll();
}

// Answers GET /v1/models?debug and /metrics with canned bodies after `delayMs`; counts
// requests and the most that were open at once.
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

    CannedSlp()
    {
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *s = m_server.nextPendingConnection())
                serve(s);
        });
        m_server.listen(QHostAddress::LocalHost, 0);
    }
    QUrl url() const
    {
        return QUrl(QStringLiteral("http://127.0.0.1:%1").arg(m_server.serverPort()));
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

    QTcpServer m_server;
};

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
    QTest::qWait(500);
    QCOMPARE(done.size(), after); // stopped means stopped
}

void TestMonitorPoller::defaultTimeout()
{
    QCOMPARE(StatusPoller::defaultTimeout(10s), 5000ms);
    QCOMPARE(StatusPoller::defaultTimeout(3s), 3000ms);
    QCOMPARE(StatusPoller::defaultTimeout(200ms), 1000ms);
}

QTEST_GUILESS_MAIN(TestMonitorPoller)
#include "tst_monitor_poller.moc"
