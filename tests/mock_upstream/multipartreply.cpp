// SPDX-License-Identifier: GPL-3.0-or-later
#include "multipartreply.h"

#include "payloads.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

namespace slp::mock {

namespace {
QString sha256(QByteArrayView bytes)
{
    return QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());
}

QByteArray boundaryOf(const QByteArray &contentType)
{
    static const QRegularExpression re(QStringLiteral("boundary=(\"([^\"]*)\"|[^;\\s]+)"),
                                       QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(QString::fromLatin1(contentType));
    if (!m.hasMatch())
        return {};
    return (m.capturedLength(2) > 0 ? m.captured(2) : m.captured(1)).toLatin1();
}

QString dispositionParam(const QByteArray &headers, const char *name)
{
    const QRegularExpression re(QStringLiteral("[;\\s]%1=(\"([^\"]*)\"|[^;\\s]+)").arg(name),
                                QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(QString::fromUtf8(headers));
    if (!m.hasMatch())
        return {};
    return m.capturedLength(2) > 0 ? m.captured(2) : m.captured(1);
}

// Every part between "--boundary" lines: its name, filename and content. Empty on any fault.
QJsonArray parseParts(const QByteArray &body, const QByteArray &boundary, QByteArray &model,
                      int &modelParts)
{
    QJsonArray parts;
    const QByteArray delimiter = "\r\n--" + boundary;
    qsizetype pos = body.startsWith("--" + boundary) ? boundary.size() + 2
                                                     : body.indexOf(delimiter) + delimiter.size();
    while (pos > 0 && !body.mid(pos, 2).startsWith("--")) {
        const qsizetype next = body.indexOf(delimiter, pos);
        const qsizetype blank = body.indexOf("\r\n\r\n", pos);
        if (next < 0 || blank < 0 || blank > next)
            return {};
        const QByteArray headers = body.mid(pos, blank - pos);
        const QByteArray content = body.mid(blank + 4, next - blank - 4);
        const QString name = dispositionParam(headers, "name");
        const QString filename = dispositionParam(headers, "filename");
        if (name == QLatin1String("model") && filename.isEmpty()) {
            model = content;
            ++modelParts;
        }
        parts.append(QJsonObject{{"name", name},
                                 {"filename", filename},
                                 {"bytes", content.size()},
                                 {"sha256", sha256(content)}});
        pos = next + delimiter.size();
    }
    return pos > 0 ? parts : QJsonArray();
}
} // namespace

bool isMultipart(const Request &request)
{
    return request.header("content-type").trimmed().toLower().startsWith("multipart/form-data");
}

MultipartReply multipartReply(const Request &request, const QStringList &models, qint64 created)
{
    QByteArray model;
    int modelParts = 0;
    const QByteArray boundary = boundaryOf(request.header("content-type"));
    const QJsonArray parts = parseParts(request.body, boundary, model, modelParts);
    if (parts.isEmpty() || modelParts != 1)
        return {400, errorBody(400, QStringLiteral("mock: a multipart body with one model part "
                                                   "expected (%1 found)")
                                        .arg(modelParts))};
    const QString id = QString::fromUtf8(model);
    if (!models.isEmpty() && !models.contains(id))
        return {404, errorBody(404, QStringLiteral("The model `%1` does not exist.").arg(id))};
    const QJsonObject seen{{"model", id},
                           {"bytes", request.body.size()},
                           {"sha256", sha256(request.body)},
                           {"parts", parts}};
    QJsonObject answer;
    const QByteArray path = request.path();
    if (path.endsWith("/audio/transcriptions") || path.endsWith("/audio/translations")) {
        answer.insert("text", QStringLiteral("mock transcription by %1").arg(id));
    } else if (path.contains("/images/")) {
        // A 1x1 transparent PNG, as b64_json.
        answer.insert("created", created);
        answer.insert("data",
                      QJsonArray{QJsonObject{
                          {"b64_json", QStringLiteral("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfF"
                                                      "cSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAA"
                                                      "BJRU5ErkJggg==")}}});
    }
    answer.insert("slp_mock", seen);
    return {200, QJsonDocument(answer).toJson(QJsonDocument::Compact)};
}

} // namespace slp::mock
