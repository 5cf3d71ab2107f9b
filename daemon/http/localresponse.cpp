#include "http/localresponse.h"

#include "body/bodyscanner.h"
#include "observe/requestid.h"

namespace slp {

QByteArray reasonPhrase(int status)
{
    switch (status) {
    case 100:
        return "Continue";
    case 200:
        return "OK";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 411:
        return "Length Required";
    case 413:
        return "Content Too Large";
    case 414:
        return "URI Too Long";
    case 417:
        return "Expectation Failed";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Status";
    }
}

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

QByteArray connectionHeader(bool keepAlive, int versionMinor)
{
    if (!keepAlive) {
        return QByteArrayLiteral("Connection: close\r\n");
    }
    return versionMinor == 0 ? QByteArrayLiteral("Connection: keep-alive\r\n") : QByteArray();
}

QByteArray localResponse(int status, const QByteArray &contentType, const QByteArray &body,
                         const QByteArray &requestId, const QByteArray &connection,
                         const QList<QPair<QByteArray, QByteArray>> &extraHeaders)
{
    QByteArray out;
    out.reserve(body.size() + 256);
    out += "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    out += "Content-Type: " + contentType + "\r\n";
    out += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    out += "X-Request-Id: " + (requestId.isEmpty() ? newRequestId() : requestId) + "\r\n";
    for (const auto &[name, value] : extraHeaders) {
        out += name + ": " + value + "\r\n";
    }
    out += connection;
    out += "\r\n";
    out += body;
    return out;
}

QByteArray localErrorResponse(int status, const QString &message, const QByteArray &requestId,
                              const QByteArray &connection, const QByteArray &code,
                              const QString &param)
{
    const QString type = status == 502 || status == 504 ? QStringLiteral("upstream_error")
                         : status >= 500                ? QStringLiteral("server_error")
                                                        : QStringLiteral("invalid_request_error");
    return localResponse(status, "application/json", openAiErrorJson(message, type, code, param),
                         requestId, connection);
}

} // namespace slp
