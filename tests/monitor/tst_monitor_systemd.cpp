// SPDX-License-Identifier: GPL-3.0-or-later
// The window header's systemd line: which URLs are local, the words from the unit's
// properties (pure), and SystemdUnitReader's D-Bus calls against a fake systemd1 served on a
// peer-to-peer connection of the test's own (no bus daemon, no real systemd needed).
#include "systemdunit.h"
#include "systemdunitreader.h"

#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusObjectPath>
#include <QDBusServer>
#include <QDBusVariant>
#include <QDBusVirtualObject>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace slp::monitor;

namespace {

const QString kUnitPath = QStringLiteral("/org/freedesktop/systemd1/unit/slp_2eservice");

// Answers Manager.GetUnit and Properties.Get as systemd does, from a property table.
class FakeSystemd : public QDBusVirtualObject
{
public:
    QVariantMap unit{{"ActiveState", "active"}, {"SubState", "running"}};
    QVariantMap service{{"StatusText", "serving 2 routes; 0 ambiguous; 1 failing; 0 stalled"}};
    bool loaded = true;
    int getUnitCalls = 0;

    QString introspect(const QString &) const override { return {}; }
    bool handleMessage(const QDBusMessage &message, const QDBusConnection &connection) override
    {
        connection.send(answer(message));
        return true;
    }

private:
    QDBusMessage answer(const QDBusMessage &m)
    {
        const QVariantList args = m.arguments();
        if (m.member() == QLatin1String("GetUnit")) {
            ++getUnitCalls;
            if (!loaded || args.value(0).toString() != QLatin1String("slp.service"))
                return m.createErrorReply(QStringLiteral("org.freedesktop.systemd1.NoSuchUnit"),
                                          QStringLiteral("Unit slp.service not loaded."));
            return m.createReply(QVariant::fromValue(QDBusObjectPath(kUnitPath)));
        }
        if (m.member() == QLatin1String("Get") && m.path() == kUnitPath) {
            const QVariantMap &table =
                args.value(0).toString().endsWith(QLatin1String(".Unit")) ? unit : service;
            const QString name = args.value(1).toString();
            if (table.contains(name))
                return m.createReply(QVariant::fromValue(QDBusVariant(table.value(name))));
        }
        return m.createErrorReply(QDBusError::UnknownProperty, QStringLiteral("no such thing"));
    }
};

} // namespace

class TestMonitorSystemd : public QObject
{
    Q_OBJECT

private slots:
    void localUrls_data();
    void localUrls();
    void words();
    void readsTheUnit();
    void unitNotLoaded();
    void withoutStatusText();
    void noBus();
    void oneReadAtATime();

private:
    // A reader on a fresh peer connection to a fresh fake; false if D-Bus would not connect.
    bool startFake();

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<QDBusServer> m_server;
    FakeSystemd m_fake;
    std::unique_ptr<SystemdUnitReader> m_reader;
};

void TestMonitorSystemd::localUrls_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<bool>("local");
    QTest::newRow("127.0.0.1") << "http://127.0.0.1:8080" << true;
    QTest::newRow("127.0.1.1") << "http://127.0.1.1:8080" << true;
    QTest::newRow("localhost") << "http://localhost:8080" << true;
    QTest::newRow("LocalHost") << "http://LocalHost" << true;
    QTest::newRow("::1") << "http://[::1]:8080" << true;
    QTest::newRow("lan") << "https://llm.lan" << false;
    QTest::newRow("10.0.0.5") << "http://10.0.0.5:8080" << false;
    QTest::newRow("localhost.example") << "http://localhost.example.com" << false;
}

void TestMonitorSystemd::localUrls()
{
    QFETCH(QString, url);
    QFETCH(bool, local);
    QCOMPARE(isLocalUrl(QUrl(url)), local);
}

void TestMonitorSystemd::words()
{
    const auto status = unitStatusFrom(
        kSlpUnit, {{"ActiveState", "reloading"}, {"SubState", "reload"}, {"StatusText", "x"}});
    QVERIFY(status);
    QCOMPARE(unitHeaderText(*status), QStringLiteral("slp.service: reloading (reload) \u2014 x"));
    QCOMPARE(unitHeaderText(*unitStatusFrom(kSlpUnit, {{"ActiveState", "failed"}})),
             QStringLiteral("slp.service: failed"));
    QCOMPARE(unitHeaderText(
                 *unitStatusFrom(kSlpUnit, {{"ActiveState", "active"}, {"StatusText", "a\nb"}})),
             QStringLiteral("slp.service: active \u2014 a\\x0ab"));
    QVERIFY(!unitStatusFrom(kSlpUnit, {}));
    QVERIFY(!unitStatusFrom(kSlpUnit, {{"ActiveState", 3}}));
    QVERIFY(!unitStatusFrom(kSlpUnit, {{"ActiveState", ""}}));
    // A property of another type is left out, not shown as a number.
    QCOMPARE(unitStatusFrom(kSlpUnit, {{"ActiveState", "active"}, {"StatusText", 7}})->statusText,
             QString());
}

bool TestMonitorSystemd::startFake()
{
    m_dir = std::make_unique<QTemporaryDir>();
    m_server = std::make_unique<QDBusServer>(QStringLiteral("unix:dir=") + m_dir->path());
    if (!m_server->isConnected())
        return false;
    QObject::connect(
        m_server.get(), &QDBusServer::newConnection, this, [this](const QDBusConnection &peer) {
            QDBusConnection(peer).registerVirtualObject(QStringLiteral("/org/freedesktop/systemd1"),
                                                        &m_fake, QDBusConnection::SubPath);
        });
    static int n = 0;
    const QDBusConnection client =
        QDBusConnection::connectToPeer(m_server->address(), QStringLiteral("peer%1").arg(++n));
    if (!client.isConnected())
        return false;
    m_reader = std::make_unique<SystemdUnitReader>(client);
    return true;
}

void TestMonitorSystemd::readsTheUnit()
{
    QVERIFY2(startFake(), "no peer-to-peer D-Bus connection");
    QSignalSpy read(m_reader.get(), &SystemdUnitReader::statusRead);
    m_reader->refresh();
    QTRY_COMPARE_WITH_TIMEOUT(read.size(), 1, 5000);
    const UnitStatus status = read.first().first().value<UnitStatus>();
    QCOMPARE(unitHeaderText(status),
             QStringLiteral("slp.service: active (running) \u2014 serving 2 routes; 0 ambiguous; "
                            "1 failing; 0 stalled"));
    QVERIFY(!m_reader->isReading());
}

void TestMonitorSystemd::unitNotLoaded()
{
    QVERIFY2(startFake(), "no peer-to-peer D-Bus connection");
    m_fake.loaded = false;
    QSignalSpy gone(m_reader.get(), &SystemdUnitReader::unavailable);
    m_reader->refresh();
    QTRY_COMPARE_WITH_TIMEOUT(gone.size(), 1, 5000);
    QCOMPARE(gone.first().first().toString(), QStringLiteral("Unit slp.service not loaded."));
    m_fake.loaded = true;
}

void TestMonitorSystemd::withoutStatusText()
{
    QVERIFY2(startFake(), "no peer-to-peer D-Bus connection");
    const QVariantMap service = m_fake.service;
    m_fake.service.clear();
    QSignalSpy read(m_reader.get(), &SystemdUnitReader::statusRead);
    m_reader->refresh();
    QTRY_COMPARE_WITH_TIMEOUT(read.size(), 1, 5000);
    QCOMPARE(unitHeaderText(read.first().first().value<UnitStatus>()),
             QStringLiteral("slp.service: active (running)"));
    m_fake.service = service;
}

void TestMonitorSystemd::noBus()
{
    SystemdUnitReader reader(QDBusConnection(QStringLiteral("never connected")));
    QSignalSpy gone(&reader, &SystemdUnitReader::unavailable);
    reader.refresh();
    QCOMPARE(gone.size(), 1); // at once: nothing to wait for
}

void TestMonitorSystemd::oneReadAtATime()
{
    QVERIFY2(startFake(), "no peer-to-peer D-Bus connection");
    const int before = m_fake.getUnitCalls;
    QSignalSpy read(m_reader.get(), &SystemdUnitReader::statusRead);
    m_reader->refresh();
    m_reader->refresh(); // under way: its answer serves both
    QTRY_COMPARE_WITH_TIMEOUT(read.size(), 1, 5000);
    QCOMPARE(m_fake.getUnitCalls - before, 1);
    m_reader->refresh(); // done: a fresh read
    QTRY_COMPARE_WITH_TIMEOUT(read.size(), 2, 5000);
    QCOMPARE(m_fake.getUnitCalls - before, 2);
}

QTEST_GUILESS_MAIN(TestMonitorSystemd)
#include "tst_monitor_systemd.moc"
