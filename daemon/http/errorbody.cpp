// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/errorbody.h"

#include "jsonstring.h"

namespace slp {

QByteArray openAiErrorJson(const QString &message, const QString &type, const QByteArray &code,
                           const QString &param)
{
    QByteArray out = "{\"error\":{\"message\":" + jsonStringLiteral(message) +
                     ",\"type\":" + jsonStringLiteral(type) + ",\"param\":";
    out += param.isEmpty() ? QByteArray("null") : jsonStringLiteral(param);
    out += ",\"code\":";
    out += code.isEmpty() ? QByteArray("null") : jsonStringLiteral(QString::fromLatin1(code));
    out += "}}";
    return out;
}

QByteArray openAiErrorBody(int status, const QString &message, const QByteArray &code,
                           const QString &param)
{
    const QString type = status == 502 || status == 504 ? QStringLiteral("upstream_error")
                         : status >= 500                ? QStringLiteral("server_error")
                                                        : QStringLiteral("invalid_request_error");
    return openAiErrorJson(message, type, code, param);
}

} // namespace slp
