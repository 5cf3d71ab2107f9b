// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "childprocess.h"
#include "httpclient.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QStringList>

namespace slp::test {

// The mock_upstream program (path from $SLP_MOCK_BIN) as a child process, with its /__mock/
// control API wrapped. See tests/mock_upstream/ for the knobs.
class MockUpstream
{
public:
    static QString binary();

    // models empty: the mock accepts any model. extraArgs e.g. {"--id-prefix", "abcd"}.
    bool start(const QStringList &models = {}, const QStringList &extraArgs = {},
               int timeoutMs = 10000);
    void stop() { m_process.stop(); }
    QString errorString() const { return m_error; }

    quint16 port() const { return m_port; }
    QString host() const { return QStringLiteral("127.0.0.1"); }
    QString url() const; // "http://127.0.0.1:PORT"

    bool setModels(const QStringList &models);
    // {"status":503}, {"status":200,"raw":"not json"}, {"delay_ms":N}; {} restores normal.
    bool setModelsStatus(const QJsonObject &knob);
    // Recorded requests with seq > since (the last 200 at most).
    QJsonArray requests(qint64 since = 0);
    bool reset();
    QJsonObject stats();
    // Waits until at least n requests with seq > since are recorded; returns them.
    QJsonArray waitForRequests(int n, int timeoutMs, qint64 since = 0);
    // How many GET /v1/models requests (discovery's probes) are among requests().
    int modelProbes();

    // Helpers over one element of requests().
    static QByteArray body(const QJsonObject &recorded);
    // The body the mock answered with (de-chunked, as planned before any drop).
    static QByteArray responseBody(const QJsonObject &recorded);
    static HeaderList headers(const QJsonObject &recorded);
    static QByteArray header(const QJsonObject &recorded, QByteArrayView name);

    ChildProcess &process() { return m_process; }

private:
    HttpResult control(const QByteArray &method, const QString &path, const QByteArray &body = {});

    ChildProcess m_process;
    quint16 m_port = 0;
    QString m_error;
};

} // namespace slp::test
