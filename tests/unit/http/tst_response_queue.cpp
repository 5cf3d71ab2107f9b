// SPDX-License-Identifier: GPL-3.0-or-later
// ResponseQueue on a real socket pair: requests handed over in order, one exchange at a time
// per connection, the bound on held pipelined requests, and shutdown's Connection: close.

#include "connectionpair.h"
#include "http/requesthandler.h"
#include "http/responsequeue.h"

#include <QPointer>
#include <QtTest>

using slp::InboundRequest;
using slp::ResponseContext;
using slp::ResponseQueue;
using slp::ResponseWriter;

namespace {

using Pair = slp::test::ConnectionPair;

// Records what it is handed; answers only when told to.
class RecordingHandler : public slp::RequestHandler
{
public:
    void handle(InboundRequest request, ResponseWriter *writer) override
    {
        targets.append(request.target);
        writers.append(writer);
    }
    QList<QByteArray> targets;
    QList<QPointer<ResponseWriter>> writers;
};

InboundRequest request(const QByteArray &target)
{
    InboundRequest r;
    r.method = "GET";
    r.setTarget(target);
    return r;
}

} // namespace

class TestResponseQueue : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void requestsAreHandedOverInTurn()
    {
        Pair pair;
        ResponseQueue queue(pair.serverSide());
        RecordingHandler handler;
        ResponseWriter *first = queue.open({});
        queue.dispatch(request("/1"), first, handler);
        ResponseWriter *second = queue.open({});
        queue.dispatch(request("/2"), second, handler);
        QCOMPARE(handler.targets, QList<QByteArray>{"/1"}); // the second waits its turn
        QVERIFY(queue.isTurnOf(first));
        QVERIFY(!queue.isTurnOf(second));

        first->respond(200, "text/plain", "one", "id1");
        QCOMPARE(handler.targets, (QList<QByteArray>{"/1", "/2"}));
        QVERIFY(queue.isTurnOf(second));
        second->respond(200, "text/plain", "two", "id2");
        QVERIFY(Pair::waitFor([&] { return pair.received().endsWith("two"); }));
        QVERIFY(pair.received().indexOf("one") < pair.received().indexOf("two"));
        QVERIFY(!queue.isClosingAfterResponse());
    }

    void aClosingRequestIsTheLast()
    {
        Pair pair;
        ResponseQueue queue(pair.serverSide());
        RecordingHandler handler;
        ResponseContext closing;
        closing.keepAlive = false;
        queue.dispatch(request("/close"), queue.open(closing), handler);
        QVERIFY(queue.isClosingAfterResponse());
        handler.writers.first()->respond(200, "text/plain", "bye", "id");
        QVERIFY(pair.waitClosed());
        QVERIFY(queue.isClosing());
        QVERIFY(pair.received().contains("Connection: close\r\n"));
    }

    void tooManyHeldRequestsAreRefused()
    {
        Pair pair;
        ResponseQueue queue(pair.serverSide());
        RecordingHandler handler;
        queue.dispatch(request("/busy"), queue.open({}), handler); // never answered
        QList<QPointer<ResponseWriter>> held;
        for (int i = 0; i < 32; ++i) {
            held.append(queue.open({}));
            queue.dispatch(request("/held"), held.last(), handler);
        }
        QVERIFY(!queue.isClosingAfterResponse());
        ResponseWriter *over = queue.open({});
        queue.dispatch(request("/over"), over, handler);
        QVERIFY(queue.isClosingAfterResponse());
        QVERIFY(over->isFinished()); // answered 503 at once, written in its turn
        QCOMPARE(handler.targets.size(), 1);
    }

    void shutdownClosesAfterWhatIsOwed()
    {
        Pair pair;
        ResponseQueue queue(pair.serverSide());
        ResponseWriter *owed = queue.open({});
        queue.closeAfterOwed();
        QVERIFY(owed->closesConnection());
        QVERIFY(queue.open({})->closesConnection()); // opened while draining
        owed->respond(200, "text/plain", "last", "id");
        QVERIFY(pair.waitClosed());
        QVERIFY(pair.received().contains("Connection: close\r\n"));
        QCOMPARE(pair.received().count("HTTP/1.1 "), 1);
    }

    void clientGoneReachesEveryWriter()
    {
        Pair pair;
        ResponseQueue queue(pair.serverSide());
        QPointer<ResponseWriter> a = queue.open({});
        QPointer<ResponseWriter> b = queue.open({});
        QSignalSpy aGone(a.data(), &ResponseWriter::clientGone);
        QSignalSpy bGone(b.data(), &ResponseWriter::clientGone);
        queue.abandon();
        QCOMPARE(aGone.count(), 1);
        QCOMPARE(bGone.count(), 1);
        QVERIFY(queue.isEmpty());
        QVERIFY(queue.isClosing());
        QTRY_VERIFY_WITH_TIMEOUT(!a && !b, Pair::kWaitMs); // deleted later
    }
};

QTEST_GUILESS_MAIN(TestResponseQueue)
#include "tst_response_queue.moc"
