// SPDX-License-Identifier: GPL-3.0-or-later
// The model scan between a client connection and the router: a request whose body arrives in
// several reads is shown to its scan after each one (every byte so far, growing), the request
// handed to the handler carries that scan, typed, and a ModelLocator fed so finishes with the
// model the one-shot scan finds. Requests the factory gives no scan (here, as the router's
// table says, outside /v1/) and bodiless ones get none.
#include "body/modellocator.h"
#include "http/clientlistener.h"
#include "http/connectionbudget.h"
#include "http/httpfront.h"
#include "http/requesthandler.h"
#include "http/responsewriter.h"

#include <QTcpSocket>
#include <QTest>

#include <memory>

using namespace slp;

namespace {

constexpr int kWaitMs = 5000;

// A real locator that records every arrival it is shown.
class RecordingLocator : public ModelLocator
{
public:
    using ModelLocator::ModelLocator;
    void arrived(QByteArrayView soFar) override
    {
        sizes.append(soFar.size());
        ModelLocator::arrived(soFar);
    }
    QList<qsizetype> sizes;
};

class RecordingHandler : public RequestHandler
{
public:
    void handle(InboundRequest request, ResponseWriter *writer) override
    {
        requests.append(std::move(request));
        writer->respond(200, "text/plain", QByteArrayLiteral("ok"), {});
    }
    QList<InboundRequest> requests;
};

} // namespace

class TestBodyWatch : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void watchSeesEveryReadAndTravelsWithTheRequest();
    void chunkedBodyIsWatchedToo();
    void noWatchOutsideV1OrWithoutBody();

private:
    // Sends `pieces` with a pause between them, so they arrive as separate reads.
    void send(const QList<QByteArray> &pieces);
    bool waitForRequests(qsizetype n);

    RecordingHandler m_handler;
    BodyBudget m_bodies;
    std::unique_ptr<ConnectionBudget> m_budget;
    std::unique_ptr<HttpFront> m_front;
    std::unique_ptr<ClientListener> m_listener;
    std::unique_ptr<QTcpSocket> m_client;
    QList<RecordingLocator *> m_watches; // owned by the connection, then by the requests
};

void TestBodyWatch::init()
{
    m_watches.clear();
    m_handler.requests.clear();
    ConnectionSettings limits;
    limits.bodies = &m_bodies;
    limits.scanModel = [this](const RequestHead &head) -> std::unique_ptr<ModelLocator> {
        if (!head.target.startsWith("/v1/"))
            return nullptr;
        auto scan = std::make_unique<RecordingLocator>(head.headers);
        m_watches.append(scan.get());
        return scan;
    };
    m_budget = std::make_unique<ConnectionBudget>(16);
    m_front = std::make_unique<HttpFront>(m_handler);
    m_listener = std::make_unique<ClientListener>(limits, m_budget.get());
    QVERIFY(m_listener->listen(QHostAddress::LocalHost, 0));
    m_front->bind(m_listener.get());
    m_client = std::make_unique<QTcpSocket>();
    m_client->connectToHost(QHostAddress::LocalHost, m_listener->serverPort());
    QVERIFY(m_client->waitForConnected(kWaitMs));
}

void TestBodyWatch::cleanup()
{
    m_client.reset();
    m_handler.requests.clear(); // the watches go with the requests
    m_listener.reset();
    m_front.reset();
    m_budget.reset();
}

void TestBodyWatch::send(const QList<QByteArray> &pieces)
{
    for (const QByteArray &piece : pieces) {
        m_client->write(piece);
        QVERIFY(m_client->waitForBytesWritten(kWaitMs));
        QTest::qWait(30); // the server reads it before the next piece is sent
    }
}

bool TestBodyWatch::waitForRequests(qsizetype n)
{
    return QTest::qWaitFor([&] { return m_handler.requests.size() >= n; }, kWaitMs);
}

void TestBodyWatch::watchSeesEveryReadAndTravelsWithTheRequest()
{
    const QByteArray body = R"({"messages":[{"role":"user","content":")" +
                            QByteArray(300 * 1024, 'a') + R"("}],"model":"deepseek-r1"})";
    const QByteArray head = "POST /v1/chat/completions HTTP/1.1\r\nHost: t\r\n"
                            "Content-Type: application/json\r\nContent-Length: " +
                            QByteArray::number(body.size()) + "\r\n\r\n";
    send({head + body.left(10), body.mid(10, 100 * 1024), body.mid(10 + 100 * 1024)});
    QVERIFY(waitForRequests(1));
    QCOMPARE(m_watches.size(), 1);
    const QList<qsizetype> sizes = m_watches.front()->sizes;
    QVERIFY2(sizes.size() >= 3, qPrintable(QString::number(sizes.size())));
    for (qsizetype i = 1; i < sizes.size(); ++i)
        QVERIFY(sizes.at(i) > sizes.at(i - 1));
    QCOMPARE(sizes.back(), body.size());

    InboundRequest &request = m_handler.requests.front();
    QCOMPARE(request.modelScan.get(), static_cast<ModelLocator *>(m_watches.front()));
    const ModelLocation where = request.modelScan->finish(request.body);
    QCOMPARE(where.status(), 0);
    QCOMPARE(where.model(), QStringLiteral("deepseek-r1"));
    QCOMPARE(where.json().valueBegin, body.indexOf("\"deepseek-r1\""));
}

void TestBodyWatch::chunkedBodyIsWatchedToo()
{
    const QByteArray head = "POST /v1/embeddings HTTP/1.1\r\nHost: t\r\n"
                            "Transfer-Encoding: chunked\r\n\r\n";
    send({head + "8\r\n{\"model\"\r\n", "5\r\n:\"e5\"\r\n", "1\r\n}\r\n0\r\n\r\n"});
    QVERIFY(waitForRequests(1));
    QCOMPARE(m_watches.size(), 1);
    QVERIFY(m_watches.front()->sizes.size() >= 2);
    QCOMPARE(m_watches.front()->sizes.back(), 14);
    const InboundRequest &request = m_handler.requests.front();
    QCOMPARE(request.modelScan->finish(request.body).model(), QStringLiteral("e5"));
}

void TestBodyWatch::noWatchOutsideV1OrWithoutBody()
{
    send({"POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}",
          "GET /v1/models HTTP/1.1\r\nHost: t\r\n\r\n"});
    QVERIFY(waitForRequests(2));
    QVERIFY(m_watches.isEmpty());
    QVERIFY(!m_handler.requests.at(0).modelScan);
    QVERIFY(!m_handler.requests.at(1).modelScan);
}

QTEST_GUILESS_MAIN(TestBodyWatch)
#include "tst_body_watch.moc"
