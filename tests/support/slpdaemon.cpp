// SPDX-License-Identifier: GPL-3.0-or-later
#include "slpdaemon.h"

#include "httpclient.h"
#include "mockupstream.h"
#include "prometheustext.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QSaveFile>
#include <QTest>

#include <csignal>

namespace slp::test {

QString SlpDaemon::binary()
{
    return qEnvironmentVariable("SLP_BIN");
}

bool SlpDaemon::startWith(MockUpstream &mock,
                          const std::function<QString(const QString &)> &configFor,
                          const QStringList &models)
{
    if (binary().isEmpty() || MockUpstream::binary().isEmpty()) {
        m_error = QStringLiteral("set SLP_BIN and SLP_MOCK_BIN (ctest does)");
        return false;
    }
    if (!mock.start(models)) {
        m_error = QStringLiteral("mock upstream: ") + mock.errorString();
        return false;
    }
    return start(configFor(mock.url()));
}

bool SlpDaemon::start(const QString &configYaml, const QStringList &extraArgs,
                      const QMap<QString, QString> &envExtras, int timeoutMs, bool addListen)
{
    m_port = 0;
    m_host.clear();
    m_error.clear();
    const QString bin = binary();
    if (bin.isEmpty()) {
        m_error = QStringLiteral("SLP_BIN is not set");
        return false;
    }
    m_dir = std::make_unique<QTemporaryDir>();
    if (!m_dir->isValid() || !writeConfig(configYaml)) {
        m_error = QStringLiteral("cannot write the config file");
        return false;
    }
    QStringList args{"--config", configPath()};
    if (addListen)
        args << "--listen"
             << "127.0.0.1:0";
    args << extraArgs;
    if (!m_process.start(bin, args, envExtras, m_dir->path())) {
        m_error = m_process.errorString();
        return false;
    }
    static const QRegularExpression re(QStringLiteral("listening on (\\S+):(\\d+)"));
    const QRegularExpressionMatch m =
        m_process.waitForLine(re, timeoutMs, ChildProcess::Channel::StdErr);
    if (!m.hasMatch()) {
        m_error = QStringLiteral("slp did not report listening (exit code %1): %2")
                      .arg(m_process.exitCode())
                      .arg(m_process.allOutput());
        m_process.stop();
        return false;
    }
    m_host = m.captured(1);
    if (m_host.startsWith('[') && m_host.endsWith(']'))
        m_host = m_host.mid(1, m_host.size() - 2);
    m_port = static_cast<quint16>(m.captured(2).toUInt());
    return true;
}

bool SlpDaemon::writeConfig(const QString &configYaml)
{
    if (!m_dir)
        return false;
    // Atomic replace, so a reload never reads a half-written file.
    QSaveFile f(configPath());
    if (!f.open(QIODevice::WriteOnly))
        return false;
    f.write(withTestTransport(configYaml).toUtf8());
    return f.commit();
}

QString SlpDaemon::transport()
{
    const QString chosen = qEnvironmentVariable("SLP_TEST_TRANSPORT");
    return chosen.isEmpty() ? QStringLiteral("socket") : chosen; // slp's default
}

QString SlpDaemon::withTestTransport(const QString &configYaml)
{
    // ctest runs the core's suites on the default transport and again with
    // SLP_TEST_TRANSPORT=qnam (tests/CMakeLists.txt); a config that names its transport keeps it.
    static const QRegularExpression named(QStringLiteral("^upstream_transport\\s*:"),
                                          QRegularExpression::MultilineOption);
    static const QRegularExpression namedWorkers(QStringLiteral("^workers\\s*:"),
                                                 QRegularExpression::MultilineOption);
    QString yaml = configYaml;
    if (!qEnvironmentVariableIsEmpty("SLP_TEST_TRANSPORT") && !configYaml.contains(named))
        yaml.prepend(QStringLiteral("upstream_transport: %1\n").arg(transport()));
    // ... and once more with worker threads (SLP_TEST_WORKERS), for the suites whose requests
    // land on whichever thread the kernel picks.
    const QString workers = qEnvironmentVariable("SLP_TEST_WORKERS");
    if (!workers.isEmpty() && !configYaml.contains(namedWorkers))
        yaml.prepend(QStringLiteral("workers: %1\n").arg(workers));
    return yaml;
}

int SlpDaemon::stop(int timeoutMs)
{
    const int code = m_process.stop(timeoutMs);
    if (code != 0 && !m_process.stderrBytes().isEmpty()) {
        qWarning().noquote() << QStringLiteral("slp exited with %1; its stderr ends:\n%2")
                                    .arg(code)
                                    .arg(stderrText().right(6000));
    }
    return code;
}

bool SlpDaemon::reload()
{
    return m_process.sendSignal(SIGHUP);
}

QString SlpDaemon::configPath() const
{
    return m_dir ? m_dir->filePath("slp.yaml") : QString();
}

QString SlpDaemon::directory() const
{
    return m_dir ? m_dir->path() : QString();
}

int SlpDaemon::clientConnections()
{
    const HttpResult r = rawHttp(m_host, m_port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 10000);
    const auto parsed = slp::parsePromText(r.body);
    const auto v = slp::findPromSample(parsed.samples, QStringLiteral("slp_client_connections"));
    return v ? int(*v) : -1;
}

int SlpDaemon::settledClientConnections(const std::function<bool(int)> &settled, int timeoutMs)
{
    int open = clientConnections();
    for (QDeadlineTimer deadline(timeoutMs); !settled(open) && !deadline.hasExpired();) {
        QTest::qWait(50);
        open = clientConnections();
    }
    return open;
}

QString SlpDaemon::url() const
{
    const QString h = m_host.contains(':') ? QStringLiteral("[%1]").arg(m_host) : m_host;
    return QStringLiteral("http://%1:%2").arg(h).arg(m_port);
}

QRegularExpressionMatch SlpDaemon::waitForLog(const QRegularExpression &re, int timeoutMs,
                                              ChildProcess::Mark from)
{
    return m_process.waitForLine(re, timeoutMs, ChildProcess::Channel::StdErr, from);
}

int SlpDaemon::countLog(const QRegularExpression &re, ChildProcess::Mark from)
{
    return m_process.countLines(re, ChildProcess::Channel::StdErr, from);
}

} // namespace slp::test
