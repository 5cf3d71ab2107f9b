// SPDX-License-Identifier: GPL-3.0-or-later
#include "payloads.h"

#include "jsonstring.h"

#include <QStringList>

#include <array>

namespace slp::mock {

// JSON strings are written by the daemon's own encoder (body/): one writer of them.
using slp::jsonStringLiteral;

QByteArray errorTypeForStatus(int status)
{
    switch (status) {
    case 400:
        return "BadRequestError";
    case 401:
        return "AuthenticationError";
    case 403:
        return "PermissionDeniedError";
    case 404:
        return "NotFoundError";
    case 408:
        return "RequestTimeoutError";
    case 413:
        return "RequestEntityTooLargeError";
    case 422:
        return "UnprocessableEntityError";
    case 429:
        return "RateLimitError";
    case 503:
        return "ServiceUnavailableError";
    default:
        return status >= 500 ? "InternalServerError" : "BadRequestError";
    }
}

QByteArray errorBody(int status, const QString &message, const QString &type)
{
    const QByteArray t = type.isEmpty() ? errorTypeForStatus(status) : type.toUtf8();
    return "{\"error\":{\"message\":" + jsonStringLiteral(message) +
           ",\"type\":" + jsonStringLiteral(QString::fromUtf8(t)) +
           ",\"param\":null,\"code\":" + QByteArray::number(status) + "}}";
}

QList<QString> contentPieces(const Generation &g)
{
    QList<QString> out;
    for (int i = 0; i < g.contentEvents; ++i)
        if (i == 0)
            out << QStringLiteral("Hello");
        else if (i == 1)
            out << QStringLiteral(" from");
        else if (i == 2)
            out << QLatin1Char(' ') + g.model;
        else
            out << QStringLiteral(" word%1").arg(i);
    return out;
}

QList<QString> reasoningPieces(const Generation &g)
{
    QList<QString> out;
    for (int i = 0; i < g.reasoningEvents; ++i)
        if (i == 0)
            out << QStringLiteral("Thinking");
        else if (i == 1)
            out << QStringLiteral(" about it");
        else
            out << QStringLiteral(" step%1").arg(i);
    return out;
}

int completionTokens(const Generation &g)
{
    const int reasoning = g.endpoint == Endpoint::Chat ? g.reasoningEvents : 0;
    return g.contentEvents + reasoning + g.toolCalls;
}

namespace {

QByteArray usageJson(const Generation &g)
{
    const int completion = completionTokens(g);
    return "{\"prompt_tokens\":" + QByteArray::number(g.promptTokens) +
           ",\"total_tokens\":" + QByteArray::number(g.promptTokens + completion) +
           ",\"completion_tokens\":" + QByteArray::number(completion) +
           ",\"prompt_tokens_details\":null}";
}

QByteArray chunkPrefix(const Generation &g, const char *object)
{
    return "{\"id\":" + jsonStringLiteral(QString::fromLatin1(g.id)) + ",\"object\":\"" + object +
           "\",\"created\":" + QByteArray::number(g.created) +
           ",\"model\":" + jsonStringLiteral(g.model);
}

QByteArray sse(const QByteArray &payload)
{
    return "data: " + payload + "\n\n";
}

QByteArray toolCallId(int i)
{
    return "chatcmpl-tool-" + QByteArray::number(1000 + i);
}

QByteArray toolName(int i)
{
    return "get_weather_" + QByteArray::number(i);
}

QByteArray toolArgs(int i)
{
    return "{\"city\": \"City" + QByteArray::number(i) + "\"}";
}

} // namespace

QList<QByteArray> streamEvents(const Generation &g)
{
    QList<QByteArray> events;
    const QByteArray finish = g.toolCalls > 0 ? "\"tool_calls\"" : "\"stop\"";
    if (g.endpoint == Endpoint::Completion) {
        const QByteArray pre = chunkPrefix(g, "text_completion");
        for (const QString &p : contentPieces(g)) {
            events << sse(pre + ",\"choices\":[{\"index\":0,\"text\":" + jsonStringLiteral(p) +
                          ",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}]}");
        }
        events << sse(pre +
                      ",\"choices\":[{\"index\":0,\"text\":\"\",\"logprobs\":null,"
                      "\"finish_reason\":\"stop\",\"stop_reason\":null}],\"usage\":" +
                      usageJson(g) + "}");
        events << sse("[DONE]");
        return events;
    }
    const QByteArray pre = chunkPrefix(g, "chat.completion.chunk");
    auto delta = [&](const QByteArray &d, const QByteArray &fin = "null") {
        return sse(pre + ",\"choices\":[{\"index\":0,\"delta\":" + d +
                   ",\"logprobs\":null,\"finish_reason\":" + fin + "}]}");
    };
    events << delta("{\"role\":\"assistant\",\"content\":\"\"}");
    for (const QString &p : reasoningPieces(g))
        events << delta("{\"reasoning_content\":" + jsonStringLiteral(p) + "}");
    for (const QString &p : contentPieces(g))
        events << delta("{\"content\":" + jsonStringLiteral(p) + "}");
    for (int i = 0; i < g.toolCalls; ++i) {
        const QByteArray idx = QByteArray::number(i);
        events << delta("{\"tool_calls\":[{\"id\":\"" + toolCallId(i) +
                        "\",\"type\":\"function\",\"index\":" + idx + ",\"function\":{\"name\":\"" +
                        toolName(i) + "\",\"arguments\":\"\"}}]}");
        events << delta("{\"tool_calls\":[{\"index\":" + idx + ",\"function\":{\"arguments\":" +
                        jsonStringLiteral(QString::fromUtf8(toolArgs(i))) + "}}]}");
    }
    events << sse(pre +
                  ",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"logprobs\":null,"
                  "\"finish_reason\":" +
                  finish + ",\"stop_reason\":null}],\"usage\":" + usageJson(g) + "}");
    events << sse("[DONE]");
    return events;
}

QByteArray fullResponse(const Generation &g)
{
    switch (g.endpoint) {
    case Endpoint::Completion:
        return chunkPrefix(g, "text_completion") + ",\"choices\":[{\"index\":0,\"text\":" +
               jsonStringLiteral(contentPieces(g).join(QString())) +
               ",\"logprobs\":null,\"finish_reason\":\"stop\",\"stop_reason\":null,"
               "\"prompt_logprobs\":null}],\"usage\":" +
               usageJson(g) + "}";
    case Endpoint::Embedding:
        return "{\"id\":" + jsonStringLiteral(QString::fromLatin1(g.id)) +
               ",\"object\":\"list\",\"created\":" + QByteArray::number(g.created) +
               ",\"model\":" + jsonStringLiteral(g.model) +
               ",\"data\":[{\"index\":0,\"object\":\"embedding\",\"embedding\":"
               "[0.1,-0.2,0.3,-0.4,0.5,-0.6,0.7,-0.8]}],\"usage\":{\"prompt_tokens\":" +
               QByteArray::number(g.promptTokens) +
               ",\"total_tokens\":" + QByteArray::number(g.promptTokens) +
               ",\"completion_tokens\":0,\"prompt_tokens_details\":null}}";
    case Endpoint::Other:
        return chunkPrefix(g, "mock.response") +
               ",\"path\":" + jsonStringLiteral(QString::fromUtf8(g.path)) +
               ",\"output_text\":" + jsonStringLiteral(contentPieces(g).join(QString())) +
               ",\"usage\":" + usageJson(g) + "}";
    case Endpoint::Chat:
        break;
    }
    QByteArray toolCalls = "[";
    for (int i = 0; i < g.toolCalls; ++i) {
        if (i > 0)
            toolCalls += ',';
        toolCalls += "{\"id\":\"" + toolCallId(i) +
                     "\",\"type\":\"function\",\"function\":{\"name\":\"" + toolName(i) +
                     "\",\"arguments\":" + jsonStringLiteral(QString::fromUtf8(toolArgs(i))) + "}}";
    }
    toolCalls += ']';
    const QByteArray reasoning =
        g.reasoningEvents > 0 ? jsonStringLiteral(reasoningPieces(g).join(QString())) : "null";
    return chunkPrefix(g, "chat.completion") +
           ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"reasoning_content\":" +
           reasoning + ",\"content\":" + jsonStringLiteral(contentPieces(g).join(QString())) +
           ",\"tool_calls\":" + toolCalls + "},\"logprobs\":null,\"finish_reason\":" +
           (g.toolCalls > 0 ? "\"tool_calls\"" : "\"stop\"") +
           ",\"stop_reason\":null}],\"usage\":" + usageJson(g) + ",\"prompt_logprobs\":null}";
}

QByteArray modelsList(const QStringList &models, qint64 created)
{
    QByteArray out = "{\"object\":\"list\",\"data\":[";
    for (qsizetype i = 0; i < models.size(); ++i) {
        if (i > 0)
            out += ',';
        out += "{\"id\":" + jsonStringLiteral(models[i]) +
               ",\"object\":\"model\",\"created\":" + QByteArray::number(created) +
               ",\"owned_by\":\"vllm\",\"root\":" + jsonStringLiteral(models[i]) +
               ",\"parent\":null,\"max_model_len\":32768}";
    }
    out += "]}";
    return out;
}

quint32 crc32(const QByteArray &data)
{
    static const std::array<quint32, 256> table = [] {
        std::array<quint32, 256> t{};
        for (quint32 i = 0; i < 256; ++i) {
            quint32 c = i;
            for (int k = 0; k < 8; ++k)
                c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    quint32 crc = 0xFFFFFFFFu;
    for (char ch : data)
        crc = table[(crc ^ static_cast<quint8>(ch)) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

QByteArray gzipStored(const QByteArray &data)
{
    auto le32 = [](QByteArray &out, quint32 v) {
        for (int i = 0; i < 4; ++i)
            out += static_cast<char>((v >> (8 * i)) & 0xFF);
    };
    // RFC 1952 header: magic, deflate, no flags, mtime 0, no extra flags, OS unknown.
    QByteArray out("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10);
    qsizetype pos = 0;
    do {
        const qsizetype n = std::min<qsizetype>(65535, data.size() - pos);
        const bool last = pos + n >= data.size();
        out += static_cast<char>(last ? 0x01 : 0x00); // BFINAL, BTYPE=00 (stored)
        out += static_cast<char>(n & 0xFF);
        out += static_cast<char>((n >> 8) & 0xFF);
        out += static_cast<char>(~n & 0xFF);
        out += static_cast<char>((~n >> 8) & 0xFF);
        out.append(data.constData() + pos, n);
        pos += n;
    } while (pos < data.size());
    le32(out, crc32(data));
    le32(out, static_cast<quint32>(data.size()));
    return out;
}

} // namespace slp::mock
