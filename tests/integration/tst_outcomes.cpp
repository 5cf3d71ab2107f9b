// SPDX-License-Identifier: GPL-3.0-or-later
// Every way an exchange ends is counted exactly once, in slp_requests_total and (for a
// relayed answer cut short) slp_responses_broken_total, and nothing else moves: a completed
// answer, a 502 from a refusing backend, a stream the upstream cuts, an idle cut, a client
// that leaves mid-stream, and the aggregate route's client that leaves before its answer (a
// 499, once lost altogether). Then the route's passive state: ?debug's `state` and
// `last_failure`, whose request_id is the X-Request-Id of the 502 the client got, and
// slp_route_state. Runs on both transports and with two workers.
#include "deadport.h"
#include "jsonbody.h"
#include "prometheustext.h"
#include "testsupport.h"

#include <QJsonArray>
#include <QtTest>

using namespace slp::test;

namespace {

using Counts = QMap<QString, double>; // "requests 200" / "broken idle_timeout" -> value

QString label(const slp::PromLabels &labels, const QString &name)
{
    for (const auto &[key, value] : labels)
        if (key == name)
            return value;
    return {};
}

QByteArray chat(const QString &model, bool stream)
{
    return QStringLiteral(
               R"({"model":"%1","stream":%2,"messages":[{"role":"user","content":"hi"}]})")
        .arg(model, stream ? QStringLiteral("true") : QStringLiteral("false"))
        .toUtf8();
}

} // namespace

class TestOutcomes : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void completedCountsOnce();
    void refusedCountsOnceAndShowsTheRequestId();
    void upstreamCutCountsOnce();
    void idleCutCountsOnceAndStalls();
    void clientLeavingMidStreamCountsOnce();
    void aggregateClientLeavingIs499();

private:
    Counts counts(const QString &model);
    double inflight(const QString &model);
    void expectDelta(const Counts &before, const QString &model, const QStringList &moved);
    QJsonObject debugEntry(const QString &model);
    void leaveAfter(const QString &model, const HeaderList &knobs, const QByteArray &waitFor);

    MockUpstream m_mock;
    SlpDaemon m_slp;
    DeadPort m_dead;
};

void TestOutcomes::initTestCase()
{
    QVERIFY2(!MockUpstream::binary().isEmpty(), "set SLP_MOCK_BIN");
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "set SLP_BIN");
    QVERIFY2(m_mock.start(), qPrintable(m_mock.errorString()));
    const QString config = QStringLiteral(R"(backends:
  - name: plain
    url: %1
    model: alpha
  - name: stall
    url: %1
    model: alpha
    stream_idle_timeout: 300ms
  - name: agg
    url: %1
    model: alpha
    aggregate: true
  - name: dead
    url: %2
    model: alpha
)")
                               .arg(m_mock.url(), m_dead.url());
    QVERIFY2(m_slp.start(config), qPrintable(m_slp.errorString()));
}

void TestOutcomes::init()
{
    QVERIFY(m_mock.reset());
}

Counts TestOutcomes::counts(const QString &model)
{
    Counts out;
    const HttpResult r = httpRequest("GET", m_slp.url() + "/metrics");
    for (const slp::PromSample &s : slp::parsePromText(r.body).samples) {
        if (label(s.labels, QStringLiteral("model_id")) != model)
            continue;
        if (s.name == QLatin1String("slp_requests_total"))
            out[QStringLiteral("requests ") + label(s.labels, QStringLiteral("code"))] = s.value;
        else if (s.name == QLatin1String("slp_responses_broken_total"))
            out[QStringLiteral("broken ") + label(s.labels, QStringLiteral("reason"))] = s.value;
    }
    return out;
}

double TestOutcomes::inflight(const QString &model)
{
    const HttpResult r = httpRequest("GET", m_slp.url() + "/metrics");
    return slp::findPromSample(slp::parsePromText(r.body).samples,
                               QStringLiteral("slp_route_inflight_requests"),
                               {{QStringLiteral("model_id"), model}})
        .value_or(0);
}

// Exactly the series in `moved` went up by one; every other one of the route stayed.
void TestOutcomes::expectDelta(const Counts &before, const QString &model, const QStringList &moved)
{
    Counts expected = before;
    for (const QString &key : moved)
        expected[key] = before.value(key) + 1;
    QTRY_COMPARE_WITH_TIMEOUT(counts(model), expected, 5000);
    QTest::qWait(slp::test::kQuietWindowMs); // and nothing more comes later
    QCOMPARE(counts(model), expected);
}

QJsonObject TestOutcomes::debugEntry(const QString &model)
{
    const HttpResult r = httpRequest("GET", m_slp.url() + "/v1/models?debug");
    for (const QJsonValue &v : jsonObject(r).value(QStringLiteral("data")).toArray())
        if (v.toObject().value(QStringLiteral("id")).toString() == model)
            return v.toObject();
    return {};
}

void TestOutcomes::leaveAfter(const QString &model, const HeaderList &knobs,
                              const QByteArray &waitFor)
{
    RawConnection conn;
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(buildRequest("POST", m_slp.url() + "/v1/chat/completions",
                                   chat(model, waitFor == "data:"), knobs)));
    if (!waitFor.isEmpty()) {
        QVERIFY(conn.waitForData(waitFor, 5000));
    } else {
        // An aggregate route sends nothing before the end: the request is under way once slp
        // counts it in flight.
        QTRY_VERIFY_WITH_TIMEOUT(inflight(model) >= 1, 5000);
    }
    conn.abort();
}

void TestOutcomes::completedCountsOnce()
{
    const Counts before = counts(QStringLiteral("plain"));
    QCOMPARE(httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                         chat(QStringLiteral("plain"), true))
                 .status,
             200);
    expectDelta(before, QStringLiteral("plain"), {QStringLiteral("requests 200")});
    QCOMPARE(debugEntry(QStringLiteral("plain")).value(QStringLiteral("state")).toString(),
             QStringLiteral("ok"));
}

void TestOutcomes::refusedCountsOnceAndShowsTheRequestId()
{
    QByteArray lastId;
    for (int i = 0; i < 3; ++i) {
        const Counts before = counts(QStringLiteral("dead"));
        const HttpResult r = httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                                         chat(QStringLiteral("dead"), false));
        QCOMPARE(r.status, 502);
        lastId = r.header("x-request-id");
        expectDelta(before, QStringLiteral("dead"), {QStringLiteral("requests 502")});
    }
    const QJsonObject entry = debugEntry(QStringLiteral("dead"));
    QCOMPARE(entry.value(QStringLiteral("state")).toString(), QStringLiteral("failing"));
    const QJsonObject failure = entry.value(QStringLiteral("last_failure")).toObject();
    QCOMPARE(failure.value(QStringLiteral("request_id")).toString(), QString::fromLatin1(lastId));
    QCOMPARE(failure.value(QStringLiteral("what")).toString(),
             QStringLiteral("connection refused"));
    QVERIFY(!QJsonDocument(entry).toJson().contains(QByteArray::number(m_dead.port())));
    const HttpResult metrics = httpRequest("GET", m_slp.url() + "/metrics");
    QVERIFY(metrics.body.contains(R"(slp_route_state{model_id="dead",state="failing"} 1)"));
    QVERIFY(metrics.body.contains(R"(slp_route_state{model_id="dead",state="ok"} 0)"));
}

void TestOutcomes::upstreamCutCountsOnce()
{
    const Counts before = counts(QStringLiteral("plain"));
    const bool socket = SlpDaemon::transport() == QLatin1String("socket");
    RawConnection conn; // reads until slp ends the connection: the cut is the upstream's
    QVERIFY(conn.connectTo(m_slp.host(), m_slp.port()));
    QVERIFY(conn.send(buildRequest("POST", m_slp.url() + "/v1/chat/completions",
                                   chat(QStringLiteral("plain"), true),
                                   {{"X-Mock-Drop-After", "2"}, {"X-Mock-Drop-Reset", "1"}})));
    const HttpResult r = conn.readResponse(8000);
    QCOMPARE(r.status, 200);
    QVERIFY(!r.complete);
    expectDelta(before, QStringLiteral("plain"),
                {QStringLiteral("requests 200"), socket
                                                     ? QStringLiteral("broken upstream_reset")
                                                     : QStringLiteral("broken upstream_closed")});
}

void TestOutcomes::idleCutCountsOnceAndStalls()
{
    for (int i = 0; i < 3; ++i) {
        const Counts before = counts(QStringLiteral("stall"));
        const HttpResult r = httpRequest(
            "POST", m_slp.url() + "/v1/chat/completions", chat(QStringLiteral("stall"), true),
            {{"X-Mock-Pause-After", "2"}, {"X-Mock-Pause-Ms", "5000"}});
        QCOMPARE(r.status, 200);
        expectDelta(before, QStringLiteral("stall"),
                    {QStringLiteral("requests 200"), QStringLiteral("broken idle_timeout")});
    }
    const QJsonObject entry = debugEntry(QStringLiteral("stall"));
    QCOMPARE(entry.value(QStringLiteral("state")).toString(), QStringLiteral("stalled"));
    const QString what =
        entry.value(QStringLiteral("last_failure")).toObject().value("what").toString();
    QVERIFY2(what.startsWith(QStringLiteral("stream idle 300ms after ")), qPrintable(what));
    // A stream that completes is the route's way back.
    QCOMPARE(httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                         chat(QStringLiteral("stall"), true))
                 .status,
             200);
    QTRY_COMPARE_WITH_TIMEOUT(
        debugEntry(QStringLiteral("stall")).value(QStringLiteral("state")).toString(),
        QStringLiteral("ok"), 5000);
}

void TestOutcomes::clientLeavingMidStreamCountsOnce()
{
    const Counts before = counts(QStringLiteral("plain"));
    leaveAfter(QStringLiteral("plain"),
               {{"X-Mock-Events", "200"}, {"X-Mock-Event-Interval-Ms", "50"}}, "data:");
    expectDelta(before, QStringLiteral("plain"),
                {QStringLiteral("requests 200"), QStringLiteral("broken client_gone")});
}

void TestOutcomes::aggregateClientLeavingIs499()
{
    const Counts before = counts(QStringLiteral("agg"));
    leaveAfter(QStringLiteral("agg"),
               {{"X-Mock-Events", "200"}, {"X-Mock-Event-Interval-Ms", "50"}}, {});
    expectDelta(before, QStringLiteral("agg"), {QStringLiteral("requests 499")});
}

QTEST_GUILESS_MAIN(TestOutcomes)
#include "tst_outcomes.moc"
