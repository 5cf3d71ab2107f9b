// SPDX-License-Identifier: GPL-3.0-or-later
// The glance explains, end to end: the real slp in front of a backend that refuses (a port
// nobody listens on) and one that stalls (the mock pauses mid-stream past the route's
// stream_idle_timeout). The monitor's own pieces (StatusPoller, StatusModel, the route
// table, the details pane, noticesFor, `--once`) must show `failing` and `stalled` with SLP's
// sentences and the request ids the clients got, both back to `ok` once the backends answer
// in full, and exactly one notice each way. Under QT_QPA_PLATFORM=offscreen.
#include "noticepolicy.h"
#include "routedetailspane.h"
#include "routetablemodel.h"
#include "statusmodel.h"
#include "statuspoller.h"
#include "testsupport.h"

#include <QApplication>
#include <QClipboard>
#include <QLabel>
#include <QPushButton>
#include <QtTest>

using namespace slp::test;
using namespace slp::monitor;

namespace {

QByteArray chatBody(const QString &model, bool stream)
{
    return QStringLiteral(
               R"({"model":"%1","stream":%2,"messages":[{"role":"user","content":"hi"}]})")
        .arg(model, stream ? QStringLiteral("true") : QStringLiteral("false"))
        .toUtf8();
}

} // namespace

class TestMonitorGlance : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void healthyAtStart();
    void refusingBackendFails();
    void stallingBackendStalls();
    void detailsPaneExplains();
    void onceExplains();
    void bothRecover();
    void oneNoticeEachWay();
    void cleanupTestCase();

private:
    void onPoll(const PollResult &result);
    const RouteStatus *route(const QString &id) const;
    RouteCondition conditionOf(const QString &id) const;
    bool pollsPass(int n); // n more polls come in (bounded)
    int noticesAbout(Notice::Kind kind, const QString &routeId) const;
    QByteArray post(const QString &model, bool stream, const HeaderList &knobs = {});
    QString diagnostics();

    MockUpstream m_mock;
    MockUpstream m_late; // comes up on the refusing port
    DeadPort m_dead;
    SlpDaemon m_slp;
    std::unique_ptr<StatusPoller> m_poller;
    StatusModel m_model;
    RouteTableModel m_table;
    StatusSnapshot m_last;
    int m_polls = 0;
    QStringList m_notices; // titles, in order
    QStringList m_bodies;
    QList<Notice> m_sent;
    QByteArray m_refusedId; // the X-Request-Id the last refused client got
    QByteArray m_stalledId;
};

void TestMonitorGlance::initTestCase()
{
    QVERIFY2(!SlpDaemon::binary().isEmpty(), "SLP_BIN is not set");
    QVERIFY2(!MockUpstream::binary().isEmpty(), "SLP_MOCK_BIN is not set");
    QVERIFY(m_dead.port() != 0);
    QVERIFY2(m_mock.start({"Qwen/Qwen3-8B"}), qPrintable(m_mock.errorString()));
    QVERIFY2(m_slp.start(QStringLiteral("backends:\n"
                                        "  - name: refusing\n"
                                        "    url: %1\n"
                                        "    model: Some/Model\n"
                                        "  - name: stalling\n"
                                        "    url: %2\n"
                                        "    model: Qwen/Qwen3-8B\n"
                                        "    stream_idle_timeout: 300ms\n"
                                        "    context_length: 32768\n")
                             .arg(m_dead.url(), m_mock.url())),
             qPrintable(m_slp.errorString()));
    m_poller = std::make_unique<StatusPoller>();
    connect(m_poller.get(), &StatusPoller::pollFinished, this, &TestMonitorGlance::onPoll);
    m_poller->setBaseUrl(QUrl(m_slp.url()));
    m_poller->setInterval(std::chrono::milliseconds(200));
    m_poller->setTimeout(std::chrono::milliseconds(3000));
    m_poller->start();
}

void TestMonitorGlance::onPoll(const PollResult &result)
{
    const StatusUpdate update = m_model.apply(readSnapshot(result));
    m_last = update.snapshot;
    m_table.setRoutes(m_last.routes);
    for (const Notice &n : noticesFor(update)) {
        m_notices << n.title;
        m_bodies << n.body;
        m_sent << n;
    }
    ++m_polls;
}

const RouteStatus *TestMonitorGlance::route(const QString &id) const
{
    for (const RouteStatus &r : m_last.routes)
        if (r.entry.id == id)
            return &r;
    return nullptr;
}

RouteCondition TestMonitorGlance::conditionOf(const QString &id) const
{
    const RouteStatus *r = route(id);
    return r && r->conditionReported ? r->condition : RouteCondition(-1);
}

bool TestMonitorGlance::pollsPass(int n)
{
    const int target = m_polls + n;
    return QTest::qWaitFor([&] { return m_polls >= target; }, 10000);
}

int TestMonitorGlance::noticesAbout(Notice::Kind kind, const QString &routeId) const
{
    return int(std::count_if(
        m_sent.cbegin(), m_sent.cend(),
        [&](const Notice &n) { return n.kind == kind && n.routeIds.contains(routeId); }));
}

QByteArray TestMonitorGlance::post(const QString &model, bool stream, const HeaderList &knobs)
{
    HeaderList headers{{"Content-Type", "application/json"}};
    headers << knobs;
    const HttpResult r = httpRequest("POST", m_slp.url() + "/v1/chat/completions",
                                     chatBody(model, stream), headers, 10000);
    return QByteArray::number(r.status) + (r.complete ? " complete " : " cut ") +
           r.header("x-request-id");
}

QString TestMonitorGlance::diagnostics()
{
    QStringList routes;
    for (const RouteStatus &r : m_last.routes)
        routes << QStringLiteral("%1 %2 %3")
                      .arg(r.entry.id, r.entry.state,
                           r.entry.lastFailure ? r.entry.lastFailure->what : QString());
    return QStringLiteral("\n--- polls: %1\n--- routes: %2\n--- notices:\n%3\n--- slp:\n%4")
        .arg(m_polls)
        .arg(routes.join(QStringLiteral("; ")), m_notices.join('\n'),
             m_slp.stderrText().right(3000));
}

void TestMonitorGlance::healthyAtStart()
{
    QTRY_VERIFY2_WITH_TIMEOUT(m_polls >= 2 && conditionOf("refusing") == RouteCondition::Ok &&
                                  conditionOf("stalling") == RouteCondition::Ok,
                              qPrintable(diagnostics()), 10000);
    QVERIFY2(m_notices.isEmpty(), qPrintable(diagnostics()));
}

void TestMonitorGlance::refusingBackendFails()
{
    for (int i = 0; i < 3; ++i) {
        const QByteArray r = post(QStringLiteral("refusing"), false);
        QVERIFY2(r.startsWith("502 "), r.constData());
        m_refusedId = r.mid(r.lastIndexOf(' ') + 1);
    }
    QTRY_VERIFY2_WITH_TIMEOUT(conditionOf("refusing") == RouteCondition::Failing,
                              qPrintable(diagnostics()), 10000);
    const RouteStatus *r = route("refusing");
    QVERIFY(r->entry.lastFailure);
    QCOMPARE(r->entry.lastFailure->what, QStringLiteral("connection refused"));
    QCOMPARE(r->entry.lastFailure->requestId.toUtf8(), m_refusedId);
    QCOMPARE(m_table.data(m_table.index(0, RouteTableModel::State)).toString(),
             QStringLiteral("failing"));
    QTRY_COMPARE_WITH_TIMEOUT(m_notices.size(), 1, 10000);
    QCOMPARE(m_notices.first(), QStringLiteral("SLP: backend of refusing failing"));
    QVERIFY2(m_bodies.first().contains(
                 QStringLiteral("connection refused (request id %1)").arg(m_refusedId)),
             qPrintable(m_bodies.first()));
}

void TestMonitorGlance::stallingBackendStalls()
{
    for (int i = 0; i < 3; ++i) {
        const QByteArray r = post(QStringLiteral("stalling"), true,
                                  {{"X-Mock-Pause-After", "1"}, {"X-Mock-Pause-Ms", "3000"}});
        QVERIFY2(r.startsWith("200 cut "), r.constData());
        m_stalledId = r.mid(r.lastIndexOf(' ') + 1);
    }
    QTRY_VERIFY2_WITH_TIMEOUT(conditionOf("stalling") == RouteCondition::Stalled,
                              qPrintable(diagnostics()), 10000);
    const RouteStatus *r = route("stalling");
    QVERIFY(r->entry.lastFailure);
    QVERIFY2(r->entry.lastFailure->what.startsWith(QStringLiteral("stream idle 300ms after ")),
             qPrintable(r->entry.lastFailure->what));
    QCOMPARE(r->entry.lastFailure->requestId.toUtf8(), m_stalledId);
    QCOMPARE(m_table.data(m_table.index(1, RouteTableModel::State)).toString(),
             QStringLiteral("stalled"));
    // The route's context window, as clients read it from /v1/models: a column of its own.
    QCOMPARE(m_table.data(m_table.index(1, RouteTableModel::Context)).toString(),
             QStringLiteral("32k"));
    QCOMPARE(m_table.data(m_table.index(0, RouteTableModel::Context)).toString(),
             QStringLiteral("\u2014"));
    QTRY_COMPARE_WITH_TIMEOUT(m_notices.size(), 2, 10000);
    QCOMPARE(m_notices.last(), QStringLiteral("SLP: route stalling stalled"));
    QVERIFY2(m_bodies.last().contains(r->entry.lastFailure->what), qPrintable(m_bodies.last()));
    // The cut answers show in the hour's broken responses.
    QTRY_VERIFY2_WITH_TIMEOUT(
        !m_last.history.isEmpty() &&
            std::any_of(m_last.history.cbegin(), m_last.history.cend(),
                        [](const TrafficPoint &p) {
                            return p.routes.value("stalling").broken.value("idle_timeout") > 0;
                        }),
        qPrintable(diagnostics()), 5000);
}

void TestMonitorGlance::detailsPaneExplains()
{
    RouteDetailsPane pane;
    pane.showRoute(route("refusing"), QDateTime::currentDateTimeUtc(), m_last.history);
    QCOMPARE(pane.requestId().toUtf8(), m_refusedId);
    QStringList texts;
    for (const QLabel *label : pane.findChildren<QLabel *>())
        texts << label->text();
    QVERIFY2(texts.contains(QStringLiteral("connection refused")), qPrintable(texts.join('|')));
    QVERIFY2(texts.contains(QStringLiteral("refusing \u2192 Some/Model: failing")),
             qPrintable(texts.join('|')));
    QPushButton *copy = nullptr;
    for (QPushButton *b : pane.findChildren<QPushButton *>())
        if (b->text() == QLatin1String("Copy request id"))
            copy = b;
    QVERIFY(copy && copy->isEnabled());
    copy->click();
    QCOMPARE(QApplication::clipboard()->text().toUtf8(), m_refusedId);
}

void TestMonitorGlance::onceExplains()
{
    const QString monitor = qEnvironmentVariable("SLP_MONITOR_BIN");
    if (monitor.isEmpty())
        QSKIP("SLP_MONITOR_BIN is not set");
    const CommandResult r = runCommand(monitor, {"--once", "--url", m_slp.url()}, 15000);
    QCOMPARE(r.exitCode, 1); // attention
    const QString out = QString::fromUtf8(r.stdOut);
    QVERIFY2(out.contains(QStringLiteral("routes not ok:\n")), qPrintable(out));
    const QRegularExpression refusing(
        QStringLiteral(
            "\n  refusing: failing; last failure \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ: "
            "connection refused \\(request id %1\\)\n")
            .arg(QRegularExpression::escape(QString::fromUtf8(m_refusedId))));
    QVERIFY2(refusing.match(out).hasMatch(), qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("  stalling: stalled; last failure ")), qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("(request id %1)\n").arg(m_stalledId)), qPrintable(out));
    // Each route's line: its upstream name, discovery state and, where known, its window.
    QVERIFY2(out.contains(QStringLiteral("Qwen/Qwen3-8B (pinned, context 32768)\n")),
             qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("Some/Model (pinned)\n")), qPrintable(out));
}

void TestMonitorGlance::bothRecover()
{
    // A backend comes up on the refusing port; the stalling one answers a stream in full.
    const quint16 port = m_dead.port();
    m_dead.release();
    QVERIFY2(m_late.start({}, {"--listen", QStringLiteral("127.0.0.1:%1").arg(port)}),
             qPrintable(m_late.errorString()));
    QByteArray r = post(QStringLiteral("refusing"), false);
    QVERIFY2(r.startsWith("200 complete "), r.constData());
    r = post(QStringLiteral("stalling"), true);
    QVERIFY2(r.startsWith("200 complete "), r.constData());
    QTRY_VERIFY2_WITH_TIMEOUT(conditionOf("refusing") == RouteCondition::Ok &&
                                  conditionOf("stalling") == RouteCondition::Ok,
                              qPrintable(diagnostics()), 10000);
    // The last failure stays on record: ok is the state, not a forgotten past.
    QCOMPARE(route("refusing")->entry.lastFailure->requestId.toUtf8(), m_refusedId);
    // Ok for two polls in a row ends each episode (both may end in the same poll: one notice).
    QTRY_VERIFY2_WITH_TIMEOUT(noticesAbout(Notice::Kind::BackendRecovered, "refusing") == 1 &&
                                  noticesAbout(Notice::Kind::BackendRecovered, "stalling") == 1,
                              qPrintable(diagnostics()), 10000);
}

void TestMonitorGlance::oneNoticeEachWay()
{
    QVERIFY2(pollsPass(5), qPrintable(diagnostics())); // ok holds: nothing more
    for (const char *id : {"refusing", "stalling"})
        QCOMPARE(noticesAbout(Notice::Kind::BackendRecovered, id), 1);
    QCOMPARE(noticesAbout(Notice::Kind::Failing, "refusing"), 1);
    QCOMPARE(noticesAbout(Notice::Kind::Stalled, "stalling"), 1);
    QCOMPARE(noticesAbout(Notice::Kind::Failing, "stalling"), 0);
    QCOMPARE(noticesAbout(Notice::Kind::Stalled, "refusing"), 0);
    for (const Notice &n : std::as_const(m_sent))
        QVERIFY2(n.kind == Notice::Kind::Failing || n.kind == Notice::Kind::Stalled ||
                     n.kind == Notice::Kind::BackendRecovered,
                 qPrintable(diagnostics()));
}

void TestMonitorGlance::cleanupTestCase()
{
    if (m_poller)
        m_poller->stop();
    m_slp.stop();
    m_late.stop();
    m_mock.stop();
}

QTEST_MAIN(TestMonitorGlance)
#include "tst_monitor_glance.moc"
