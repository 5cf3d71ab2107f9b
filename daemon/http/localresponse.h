#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

namespace slp {

// Answers SLP gives itself (errors, catalog, health, metrics), framed as whole HTTP/1.1
// responses. Errors are OpenAI-style so every OpenAI client surfaces the message.

QByteArray reasonPhrase(int status);

// {"error":{"message":...,"type":...,"param":...,"code":...}}; an empty code or param is null.
QByteArray openAiErrorJson(const QString &message, const QString &type, const QByteArray &code = {},
                           const QString &param = {});

// The Connection header line a response needs, or nothing: "close" when the connection ends
// after it, "keep-alive" for an HTTP/1.0 client that asked to keep it (1.0 closes by default,
// so its client keeps a connection only when the answer says so).
QByteArray connectionHeader(bool keepAlive, int versionMinor);

// A complete response with Content-Length and X-Request-Id (a fresh id when `requestId` is
// empty) and `connection` (a connectionHeader() line, or empty).
QByteArray localResponse(int status, const QByteArray &contentType, const QByteArray &body,
                         const QByteArray &requestId, const QByteArray &connection,
                         const QList<QPair<QByteArray, QByteArray>> &extraHeaders = {});

// An OpenAI-style error response. `type` defaults by status: invalid_request_error for 4xx,
// upstream_error for 502/504, server_error otherwise.
QByteArray localErrorResponse(int status, const QString &message, const QByteArray &requestId,
                              const QByteArray &connection, const QByteArray &code = {},
                              const QString &param = {});

} // namespace slp
