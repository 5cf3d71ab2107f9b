// SPDX-License-Identifier: GPL-3.0-or-later
// Every key the compiler's tables declare is documented: in resources/examples/slp.yaml (the
// reference with every key, top-level and discovery ones with their defaults) and in the
// key table of docs/CONFIG.md. And the defaults the tables apply are the ones a hand-built Config
// has.
#include "config/config.h"

#include <QFile>
#include <QRegularExpression>
#include <QTest>

using slp::Config;
using slp::ConfigError;
using slp::ConfigKey;

class TestConfigKeys : public QObject
{
    Q_OBJECT

private slots:
    void tableIsComplete();
    void everyKeyInExample();
    void everyKeyInConfigDoc();
    void defaultsMatchStructs();
};

namespace {

QString sourceFile(const char *relative)
{
    QFile f(QStringLiteral(SLP_SOURCE_DIR "/") + QLatin1String(relative));
    if (!f.open(QIODevice::ReadOnly))
        return QString();
    return QString::fromUtf8(f.readAll());
}

QString label(const ConfigKey &k)
{
    return k.section.isEmpty() ? k.name : k.section + QLatin1Char('.') + k.name;
}

// The lines of `section:`'s block in a YAML file (up to the next top-level line), or the
// top-level lines themselves for section "".
QStringList sectionLines(const QString &yaml, const QString &section)
{
    QStringList out;
    bool inside = section.isEmpty();
    for (const QString &line : yaml.split(QLatin1Char('\n'))) {
        const bool topLevel = !line.isEmpty() && !line.front().isSpace() && !line.startsWith('#');
        if (section.isEmpty()) {
            if (topLevel)
                out << line;
            continue;
        }
        if (topLevel)
            inside = line.startsWith(section + QLatin1Char(':'));
        else if (inside)
            out << line;
    }
    return out;
}

// The key table of docs/CONFIG.md (its "## Keys" section): its rows' cells.
QList<QStringList> keyTableRows()
{
    const QString doc = sourceFile("docs/CONFIG.md");
    const qsizetype start = doc.indexOf(QLatin1String("\n## Keys\n"));
    if (start < 0)
        return {};
    const qsizetype end = doc.indexOf(QLatin1String("\n## "), start + 1);
    QList<QStringList> rows;
    for (const QString &line : doc.mid(start, end - start).split(QLatin1Char('\n')))
        if (line.startsWith(QLatin1String("| `")))
            rows << line.split(QLatin1Char('|'));
    return rows;
}

} // namespace

void TestConfigKeys::tableIsComplete()
{
    const QList<ConfigKey> keys = slp::configKeys();
    QStringList names;
    for (const ConfigKey &k : keys)
        names << label(k);
    for (const char *expected :
         {"listen", "upstream_transport", "workers", "discovery", "discovery.probe_timeout",
          "backends.name", "backends.aggregate", "editions.suffix", "editions.apply_to"})
        QVERIFY2(names.contains(QLatin1String(expected)), expected);
    QCOMPARE(names.removeDuplicates(), 0);
}

void TestConfigKeys::everyKeyInExample()
{
    const QString example = sourceFile("resources/examples/slp.yaml");
    QVERIFY2(!example.isEmpty(), "resources/examples/slp.yaml not found");
    for (const ConfigKey &k : slp::configKeys()) {
        // "key:", "- key:" or a commented-out "# key:" inside its section.
        const QRegularExpression re(QStringLiteral("^\\s*(#\\s*)?(-\\s+)?%1:\\s*(.*)$")
                                        .arg(QRegularExpression::escape(k.name)));
        QString value;
        bool found = false;
        for (const QString &line : sectionLines(example, k.section)) {
            const auto m = re.match(line);
            if (m.hasMatch()) {
                found = true;
                value = m.captured(3).section(QLatin1Char('#'), 0, 0).trimmed();
                break;
            }
        }
        QVERIFY2(found, qPrintable(label(k) + QStringLiteral(" is not in slp.yaml")));
        // The reference shows the top-level and discovery defaults as the values it sets.
        if ((k.section.isEmpty() || k.section == u"discovery") && !k.defaultText.isEmpty()) {
            value.remove(QLatin1Char('"'));
            QVERIFY2(value == k.defaultText,
                     qPrintable(QStringLiteral("slp.yaml sets %1: %2, the default is %3")
                                    .arg(label(k), value, k.defaultText)));
        }
    }
}

void TestConfigKeys::everyKeyInConfigDoc()
{
    const QList<QStringList> rows = keyTableRows();
    QVERIFY2(rows.size() > 5, "docs/CONFIG.md has no key table under \"## Keys\"");
    for (const ConfigKey &k : slp::configKeys()) {
        bool found = false;
        for (const QStringList &cells : rows) {
            const QString first = cells.value(1).trimmed();
            if (k.section.isEmpty()) {
                // `key` in the first cell, or `key.`, `key[]` for a section's row.
                const QString tick = QLatin1Char('`') + k.name;
                found = first.startsWith(tick + QLatin1Char('`')) ||
                        first.startsWith(tick + QLatin1Char('.')) ||
                        first.startsWith(tick + QLatin1Char('['));
            } else if (first.startsWith(QLatin1Char('`') + k.section)) {
                // `key` anywhere in the row, or `section.key`.
                const QString row = cells.join(QLatin1Char('|'));
                found = row.contains(QLatin1Char('`') + k.name + QLatin1Char('`')) ||
                        row.contains(QLatin1Char('.') + k.name + QLatin1Char('`'));
            }
            if (found)
                break;
        }
        QVERIFY2(found,
                 qPrintable(label(k) + QStringLiteral(" is not in docs/CONFIG.md's key table")));
    }
}

void TestConfigKeys::defaultsMatchStructs()
{
    // The tables apply the defaults; the structs' own initializers must say the same, so a
    // Config built by hand (tests, tools) behaves like a compiled one.
    const auto result = slp::compileConfig("backends: [{name: a, url: http://a}]\n"
                                           "editions: [{suffix: -e, url: http://e}]\n",
                                           QStringLiteral("test.yaml"));
    QVERIFY(std::holds_alternative<Config>(result));
    const Config &c = std::get<Config>(result);
    const Config d;
    QCOMPARE(c.listen.text, QStringLiteral(":8080"));
    QCOMPARE(c.logRequests, d.logRequests);
    QCOMPARE(c.maxBodyBytes, d.maxBodyBytes);
    QCOMPARE(c.maxHeaderBytes, d.maxHeaderBytes);
    QCOMPARE(c.headerTimeout, d.headerTimeout);
    QCOMPARE(c.idleTimeout, d.idleTimeout);
    QCOMPARE(c.maxConnections, d.maxConnections);
    QCOMPARE(c.shutdownGrace, d.shutdownGrace);
    QCOMPARE(c.upstreamTransport, d.upstreamTransport);
    QCOMPARE(c.maxUpstreamConnections, d.maxUpstreamConnections);
    QCOMPARE(c.workers, d.workers);
    QCOMPARE(c.discovery.backoffInitial, d.discovery.backoffInitial);
    QCOMPARE(c.discovery.backoffMax, d.discovery.backoffMax);
    QCOMPARE(c.discovery.recheck, d.discovery.recheck);
    QCOMPARE(c.discovery.probeTimeout, d.discovery.probeTimeout);
    QCOMPARE(c.routes.size(), 2);
    for (const slp::Route &r : c.routes) {
        QCOMPARE(r.timeoutText, QStringLiteral("60s"));
        QCOMPARE(r.timeout, std::chrono::seconds(60));
        QVERIFY(!r.retry);
        QVERIFY(!r.aggregate);
    }
}

QTEST_APPLESS_MAIN(TestConfigKeys)
#include "tst_config_keys.moc"
