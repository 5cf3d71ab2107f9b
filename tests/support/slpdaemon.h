// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "childprocess.h"

#include <QMap>
#include <QStringList>

#include <functional>
#include <memory>

namespace slp::test {

class MockUpstream;

// The real `slp` (path from $SLP_BIN) on a config written to a temporary directory, listening
// on 127.0.0.1 with a port the OS picks. The daemon's contract: it logs exactly
// `listening on HOST:PORT` on stderr once it accepts connections.
class SlpDaemon
{
public:
    static QString binary();
    // The upstream transport the suite runs against: $SLP_TEST_TRANSPORT, else slp's default,
    // "socket".
    // Configs written through this class get `upstream_transport:` set to it unless they
    // name one themselves; likewise `workers:` from $SLP_TEST_WORKERS.
    static QString transport();
    static QString withTestTransport(const QString &configYaml);

    // Starts `slp --config FILE [--listen 127.0.0.1:0] extraArgs...` and waits for the
    // listening line. With addListen false the config's own `listen:` is used.
    bool start(const QString &configYaml, const QStringList &extraArgs = {},
               const QMap<QString, QString> &envExtras = {}, int timeoutMs = 15000,
               bool addListen = true);
    QString errorString() const { return m_error; }
    // The opening most suites share: both binaries are set, `mock` starts (serving `models`),
    // then slp on configFor(the mock's URL). false with errorString() naming the failed step.
    bool startWith(MockUpstream &mock, const std::function<QString(const QString &)> &configFor,
                   const QStringList &models = {});

    // Rewrites the config file in place (then reload() to make slp read it).
    bool writeConfig(const QString &configYaml);
    bool reload(); // SIGHUP
    QString configPath() const;
    QString directory() const; // the temporary directory, for extra files

    quint16 port() const { return m_port; }
    QString host() const { return m_host; }
    QString url() const; // "http://HOST:PORT"

    // slp_client_connections as /metrics reads it, or -1. The read is a connection of its own,
    // so the gauge counts it too.
    int clientConnections();
    // clientConnections() read every 50 ms until `settled` holds for it or `timeoutMs` pass:
    // the last value read. Assert on that value, never on a read made after it: the next read
    // can reach slp before slp saw the last one's connection close, and count both.
    int settledClientConnections(const std::function<bool(int)> &settled, int timeoutMs);

    QString stderrText() { return QString::fromUtf8(m_process.stderrBytes()); }
    ChildProcess::Mark mark() { return m_process.mark(); }
    // A stderr line matching re after `from` (default: anywhere), within timeoutMs.
    QRegularExpressionMatch waitForLog(const QRegularExpression &re, int timeoutMs = 5000,
                                       ChildProcess::Mark from = {});
    int countLog(const QRegularExpression &re, ChildProcess::Mark from = {});

    // SIGTERM and wait; the exit code. A non-zero exit prints slp's last stderr lines (a
    // sanitizer report lands there), so a failing QCOMPARE(stop(), 0) says why.
    int stop(int timeoutMs = 5000);
    ChildProcess &process() { return m_process; }

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    ChildProcess m_process;
    QString m_host;
    quint16 m_port = 0;
    QString m_error;
};

} // namespace slp::test
