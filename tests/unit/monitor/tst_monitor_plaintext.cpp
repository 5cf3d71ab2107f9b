// SPDX-License-Identifier: GPL-3.0-or-later
// A backend names its model: slp-monitor shows that name as the literal text it is in the
// route table, the tray tooltip and notifications, with control characters made visible and
// markup never interpreted (monitor/core/plaintext.h).
#include "noticepolicy.h"
#include "plaintext.h"
#include "routetablemodel.h"
#include "status.h"
#include "statusmodel.h"
#include "statustext.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace slp::monitor;

namespace {

// ESC, CR, BEL, quotes, a backslash and markup: what a hostile backend may call its model.
const QString kHostile = QStringLiteral("red\x1b[31mRED\x1b[0m\r\x07<b>bold</b> & \"q\" \\ end");
// What the monitor shows for it.
const QString kShown =
    QStringLiteral("red\\x1b[31mRED\\x1b[0m\\x0d\\x07<b>bold</b> & \"q\" \\ end");

QByteArray fixture(const QString &name)
{
    QFile f(QFINDTESTDATA(QStringLiteral("data/") + name));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing fixture %s", qPrintable(name));
    return f.readAll();
}

// The recorded moment with qwen3-8b's upstream model renamed to `name`.
PollResult withName(const QString &moment, const QString &name)
{
    PollResult p;
    p.baseUrl = QUrl(QStringLiteral("http://127.0.0.1:8080"));
    p.finishedAt = QDateTime::currentDateTimeUtc();
    QJsonObject catalog = QJsonDocument::fromJson(fixture("catalog-" + moment + ".json")).object();
    QJsonArray data = catalog.value("data").toArray();
    for (qsizetype i = 0; i < data.size(); ++i) {
        QJsonObject entry = data.at(i).toObject();
        if (entry.value("id").toString() == QLatin1String("qwen3-8b"))
            entry.insert("upstream_model", name);
        data[i] = entry;
    }
    catalog.insert("data", data);
    p.catalogBody = QJsonDocument(catalog).toJson(QJsonDocument::Compact);
    p.metricsBody = fixture("metrics-" + moment + ".txt");
    return p;
}

bool hasControl(const QString &text)
{
    return std::any_of(
        text.cbegin(), text.cend(),
        [](QChar c) { return c.category() == QChar::Other_Control && c != QLatin1Char('\n'); });
}

} // namespace

class TestMonitorPlainText : public QObject
{
    Q_OBJECT

private slots:
    void displayTextMakesControlsVisible();
    void displayTextCutsLongNames();
    void markupEscapedForNotificationBodies();
    void autoTextLiteralOnlyWhenNeeded();
    void hostileNameOnEveryFace();
};

void TestMonitorPlainText::displayTextMakesControlsVisible()
{
    QCOMPARE(displayText(kHostile), kShown);
    QCOMPARE(displayText(QStringLiteral("Qwen/Qwen3-8B")), QStringLiteral("Qwen/Qwen3-8B"));
    QCOMPARE(displayText(QStringLiteral("a") + QChar(0x85) + QLatin1String("b") + QChar(0x7f) +
                         QLatin1String("c")),
             QStringLiteral("a\\x85b\\x7fc"));
    QCOMPARE(displayText(QStringLiteral("caf\u00e9 \u2192 ok")),
             QStringLiteral("caf\u00e9 \u2192 ok"));
}

void TestMonitorPlainText::displayTextCutsLongNames()
{
    const QString shown = displayText(QString(100000, QLatin1Char('x')));
    QCOMPARE(shown.size(), kMaxShownNameChars + 1);
    QCOMPARE(shown.back(), QChar(0x2026));
}

void TestMonitorPlainText::markupEscapedForNotificationBodies()
{
    QCOMPARE(markupEscaped(QStringLiteral("a <b>x</b> & y")),
             QStringLiteral("a &lt;b&gt;x&lt;/b&gt; &amp; y"));
}

void TestMonitorPlainText::autoTextLiteralOnlyWhenNeeded()
{
    QCOMPARE(autoTextLiteral(QStringLiteral("ok: 4 routes\nqwen \u2192 Qwen/Qwen3-8B: ok")),
             QStringLiteral("ok: 4 routes\nqwen \u2192 Qwen/Qwen3-8B: ok"));
    // Qt guesses from the first line: markup further down is shown as text anyway.
    QCOMPARE(autoTextLiteral(QStringLiteral("ok\na \u2192 <b>x</b> & \"y\"")),
             QStringLiteral("ok\na \u2192 <b>x</b> & \"y\""));
    QCOMPARE(autoTextLiteral(QStringLiteral("R&D model")), QStringLiteral("R&D model"));
    QCOMPARE(autoTextLiteral(QStringLiteral("a \u2192 <b>x</b> & \"y\"\nok")),
             QStringLiteral("<qt>a \u2192 &lt;b&gt;x&lt;/b&gt; &amp; &quot;y&quot;<br>ok</qt>"));
    QCOMPARE(autoTextLiteral(QStringLiteral("&lt;i&gt;")),
             QStringLiteral("<qt>&amp;lt;i&amp;gt;</qt>"));
}

void TestMonitorPlainText::hostileNameOnEveryFace()
{
    StatusModel model;
    model.apply(readSnapshot(withName("ok", QStringLiteral("Qwen/Qwen3-8B"))));
    const StatusUpdate update = model.apply(readSnapshot(withName("ambiguous", kHostile)));

    const RouteStatus *qwen = nullptr;
    for (const RouteStatus &r : update.snapshot.routes)
        if (r.entry.id == QLatin1String("qwen3-8b"))
            qwen = &r;
    QVERIFY(qwen);
    QCOMPARE(qwen->upstreamName(), kShown);

    // The window's table: the literal name, as plain item text.
    RouteTableModel table;
    table.setRoutes(update.snapshot.routes);
    bool found = false;
    for (int row = 0; row < table.rowCount(); ++row) {
        if (table.index(row, RouteTableModel::Id).data().toString() != QLatin1String("qwen3-8b"))
            continue;
        found = true;
        QCOMPARE(table.index(row, RouteTableModel::Upstream).data().toString(), kShown);
    }
    QVERIFY(found);

    // The tray tooltip: no control character, and its first line (what Qt guesses rich text
    // from) is SLP's headline, so the name's markup is shown as text.
    const QString tooltip = tooltipText(update.snapshot);
    QVERIFY2(tooltip.contains(kShown), qPrintable(tooltip));
    QVERIFY(!hasControl(tooltip));
    QVERIFY(!tooltip.section(QLatin1Char('\n'), 0, 0).contains(QLatin1Char('<')));
    QCOMPARE(autoTextLiteral(tooltip), tooltip);
    // The same line first, as in a tray balloon: escaped rich text.
    const QString balloon = autoTextLiteral(routeLine(*qwen) + QLatin1Char('\n') + tooltip);
    QVERIFY(balloon.startsWith(QLatin1String("<qt>")));
    QVERIFY(!balloon.contains(QLatin1String("<b>")));
    QVERIFY(balloon.contains(QLatin1String("&lt;b&gt;bold&lt;/b&gt;")));

    // The notification the ambiguity raises: the literal name, escaped for the markup the
    // notification server reads.
    const QList<Notice> notices = noticesFor(update);
    QVERIFY(!notices.isEmpty());
    bool named = false;
    for (const Notice &n : notices) {
        QVERIFY(!hasControl(n.title) && !hasControl(n.body));
        if (n.body.contains(kShown)) {
            named = true;
            QVERIFY(!markupEscaped(n.body).contains(QLatin1String("<b>")));
            QVERIFY(markupEscaped(n.body).contains(QLatin1String("&lt;b&gt;bold")));
        }
    }
    QVERIFY2(named, qPrintable(notices.first().body));
}

QTEST_GUILESS_MAIN(TestMonitorPlainText)
#include "tst_monitor_plaintext.moc"
