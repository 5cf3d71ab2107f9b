// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QString>

namespace slp {

// Errors SLP answers itself are OpenAI-style, so every OpenAI client surfaces the message:
// {"error":{"message":...,"type":...,"param":...,"code":...}}; an empty code or param is null.
QByteArray openAiErrorJson(const QString &message, const QString &type, const QByteArray &code = {},
                           const QString &param = {});

// The same with the type chosen by status: invalid_request_error for 4xx, upstream_error for
// 502/504, server_error for other 5xx.
QByteArray openAiErrorBody(int status, const QString &message, const QByteArray &code = {},
                           const QString &param = {});

} // namespace slp
