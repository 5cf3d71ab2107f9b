// SPDX-License-Identifier: GPL-3.0-or-later
#include "mockupstream.h"

#include <QDeadlineTimer>
#include <QJsonDocument>

namespace slp::test {

QString MockUpstream::binary()
{
    return qEnvironmentVariable("SLP_MOCK_BIN");
}

bool MockUpstream::start(const QStringList &models, const QStringList &extraArgs, int timeoutMs)
{
    m_port = 0;
    m_error.clear();
    const QString bin = binary();
    if (bin.isEmpty()) {
        m_error = QStringLiteral("SLP_MOCK_BIN is not set");
        return false;
    }
    QStringList args{"--listen", "127.0.0.1:0"};
    if (!models.isEmpty())
        args << "--models" << models.join(',');
    args << extraArgs;
    if (!m_process.start(bin, args)) {
        m_error = m_process.errorString();
        return false;
    }
    static const QRegularExpression re(QStringLiteral("^listening on 127\\.0\\.0\\.1:(\\d+)$"));
    const QRegularExpressionMatch m =
        m_process.waitForLine(re, timeoutMs, ChildProcess::Channel::StdOut);
    if (!m.hasMatch()) {
        m_error =
            QStringLiteral("mock_upstream did not report its port: %1").arg(m_process.allOutput());
        m_process.stop();
        return false;
    }
    m_port = static_cast<quint16>(m.captured(1).toUInt());
    return true;
}

QString MockUpstream::url() const
{
    return QStringLiteral("http://127.0.0.1:%1").arg(m_port);
}

HttpResult MockUpstream::control(const QByteArray &method, const QString &path,
                                 const QByteArray &body)
{
    HeaderList headers;
    if (!body.isEmpty())
        headers << qMakePair(QByteArray("Content-Type"), QByteArray("application/json"));
    return httpRequest(method, url() + path, body, headers, 10000);
}

bool MockUpstream::setModels(const QStringList &models)
{
    const QByteArray body =
        QJsonDocument(QJsonObject{{"models", QJsonArray::fromStringList(models)}})
            .toJson(QJsonDocument::Compact);
    return control("POST", "/__mock/models", body).status == 200;
}

bool MockUpstream::setModelsStatus(const QJsonObject &knob)
{
    return control("POST", "/__mock/models_status",
                   QJsonDocument(knob).toJson(QJsonDocument::Compact))
               .status == 200;
}

QJsonArray MockUpstream::requests(qint64 since)
{
    const HttpResult r = control("GET", QStringLiteral("/__mock/requests?since=%1").arg(since));
    return QJsonDocument::fromJson(r.body).array();
}

bool MockUpstream::reset()
{
    return control("POST", "/__mock/reset").status == 200;
}

QJsonObject MockUpstream::stats()
{
    return QJsonDocument::fromJson(control("GET", "/__mock/stats").body).object();
}

QJsonArray MockUpstream::waitForRequests(int n, int timeoutMs, qint64 since)
{
    const QDeadlineTimer deadline(std::max(0, timeoutMs));
    for (;;) {
        const QJsonArray got = requests(since);
        if (got.size() >= n || deadline.hasExpired())
            return got;
        pumpEvents(static_cast<int>(std::min<qint64>(20, deadline.remainingTime())));
    }
}

QByteArray MockUpstream::body(const QJsonObject &recorded)
{
    return QByteArray::fromBase64(recorded.value("body_b64").toString().toLatin1());
}

QByteArray MockUpstream::responseBody(const QJsonObject &recorded)
{
    return QByteArray::fromBase64(recorded.value("response_b64").toString().toLatin1());
}

HeaderList MockUpstream::headers(const QJsonObject &recorded)
{
    HeaderList out;
    for (const QJsonValue &v : recorded.value("headers").toArray()) {
        const QJsonArray pair = v.toArray();
        out << qMakePair(pair.at(0).toString().toLatin1(), pair.at(1).toString().toUtf8());
    }
    return out;
}

QByteArray MockUpstream::header(const QJsonObject &recorded, QByteArrayView name)
{
    for (const auto &h : headers(recorded))
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    return {};
}

int MockUpstream::modelProbes()
{
    int n = 0;
    for (const QJsonValue &v : requests()) {
        const QJsonObject o = v.toObject();
        if (o.value("method").toString() == "GET" &&
            o.value("target").toString().startsWith("/v1/models"))
            ++n;
    }
    return n;
}

} // namespace slp::test
