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

// A complete response with Content-Length and X-Request-Id (a fresh id when `requestId` is
// empty); "Connection: close" when the connection will close after it.
QByteArray localResponse(int status, const QByteArray &contentType, const QByteArray &body,
                         const QByteArray &requestId, bool keepAlive,
                         const QList<QPair<QByteArray, QByteArray>> &extraHeaders = {});

// An OpenAI-style error response. `type` defaults by status: invalid_request_error for 4xx,
// upstream_error for 502/504, server_error otherwise.
QByteArray localErrorResponse(int status, const QString &message, const QByteArray &requestId,
                              bool keepAlive, const QByteArray &code = {},
                              const QString &param = {});

} // namespace slp
