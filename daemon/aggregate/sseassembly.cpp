// SPDX-License-Identifier: GPL-3.0-or-later
#include "aggregate/sseaggregator.h"

// The JSON side of the aggregator: each event's chunk merged into the answer, and the
// answer (or the upstream's error) written out.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <cmath>
#include <utility>

namespace slp {

namespace {
// Charged per new choice / tool call so that a stream of empty entries is bounded too.
constexpr qint64 EntryCost = 64;

// UTF-8 length of a UTF-16 string, without converting it.
qint64 utf8Length(QStringView s)
{
    qint64 n = 0;
    for (const QChar ch : s) {
        const char16_t u = ch.unicode();
        if (u < 0x80)
            n += 1;
        else if (u < 0x800 || QChar::isSurrogate(u))
            n += 2; // a surrogate pair is 4 bytes, 2 per half
        else
            n += 3;
    }
    return n;
}

qint64 valueSize(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::String:
        return utf8Length(v.toString()) + 2;
    case QJsonValue::Object:
        return QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact).size();
    case QJsonValue::Array:
        return QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact).size();
    default:
        return 8;
    }
}

QString preview(const QByteArray &data)
{
    const QByteArray head = data.left(80);
    QString s = QString::fromUtf8(head);
    for (QChar &ch : s)
        if (ch.unicode() < 0x20)
            ch = u' ';
    return data.size() > 80 ? s + QStringLiteral("...") : s;
}

// A usable "index": a non-negative integer (well inside qint64, so the cast is defined).
bool isIndex(const QJsonValue &v)
{
    const double d = v.toDouble(-1);
    return v.isDouble() && d >= 0 && d < 1e15 && d == std::floor(d);
}
} // namespace

void SseAggregator::mergeNonNull(QJsonObject &into, const QString &key, const QJsonValue &value)
{
    // a null is kept only until a value arrives: stop_reason is null on every chunk but the last
    // (and then stays null, as in the non-streaming answer), and a later null must not erase it
    const bool isNew = !into.contains(key);
    if (value.isUndefined() || (value.isNull() && !isNew))
        return;
    into.insert(key, value);
    // a replaced value is bounded by one event; only new keys can grow the object
    if (isNew)
        charge(utf8Length(key) + valueSize(value));
}

void SseAggregator::handleEvent(const QByteArray &data)
{
    ++m_eventCount;
    const QByteArray trimmed = data.trimmed();
    if (trimmed.isEmpty())
        return; // "data:" with nothing: a keep-alive in all but name
    if (trimmed == "[DONE]") {
        m_state = State::Done;
        return;
    }
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(data, &err);
    if (err.error != QJsonParseError::NoError) {
        setMalformed(QStringLiteral("event %1: data is not JSON (%2 at offset %3): %4")
                         .arg(m_eventCount)
                         .arg(err.errorString())
                         .arg(err.offset)
                         .arg(preview(data)));
        return;
    }
    if (!doc.isObject()) {
        setMalformed(QStringLiteral("event %1: data is not a JSON object: %2")
                         .arg(m_eventCount)
                         .arg(preview(data)));
        return;
    }
    const QJsonObject obj = doc.object();

    // In-band error: {"error":{...}} (vLLM, OpenAI) or a bare {"object":"error",...} (older vLLM)
    const QJsonValue error = obj.value(QLatin1String("error"));
    if (!error.isNull() && !error.isUndefined()) {
        m_error = error;
        m_state = State::UpstreamError;
        return;
    }
    if (obj.value(QLatin1String("object")).toString() == QLatin1String("error")) {
        m_error = obj;
        m_state = State::UpstreamError;
        return;
    }

    for (auto it = obj.constBegin(); it != obj.constEnd() && m_state == State::Streaming; ++it) {
        const QString key = it.key();
        if (key == QLatin1String("choices") || key == QLatin1String("object") ||
            key == QLatin1String("error"))
            continue;
        if (key == QLatin1String("usage")) {
            if (!it.value().isNull())
                m_usage = it.value(); // cumulative: the last one is the total
            continue;
        }
        mergeNonNull(m_top, key, it.value());
    }

    const QJsonValue choices = obj.value(QLatin1String("choices"));
    if (choices.isUndefined() || choices.isNull())
        return;
    if (!choices.isArray()) {
        setMalformed(QStringLiteral("event %1: \"choices\" is not an array").arg(m_eventCount));
        return;
    }
    const QJsonArray arr = choices.toArray();
    for (const QJsonValue &choice : arr) {
        if (!choice.isObject()) {
            setMalformed(
                QStringLiteral("event %1: a choice is not a JSON object").arg(m_eventCount));
            return;
        }
        if (!applyChoice(choice.toObject()))
            return;
    }
}

bool SseAggregator::applyChoice(const QJsonObject &choice)
{
    const QJsonValue indexValue = choice.value(QLatin1String("index"));
    qint64 index = 0;
    if (!indexValue.isUndefined() && !indexValue.isNull()) {
        if (!isIndex(indexValue)) {
            setMalformed(QStringLiteral("event %1: bad choice index").arg(m_eventCount));
            return false;
        }
        index = qint64(indexValue.toDouble());
    }
    const auto [it, inserted] = m_choices.try_emplace(index);
    Choice &c = it->second;
    if (inserted) {
        charge(EntryCost);
        if (m_state != State::Streaming)
            return false;
    }

    const QJsonValue finish = choice.value(QLatin1String("finish_reason"));
    if (!finish.isNull() && !finish.isUndefined())
        c.finishReason = finish;

    const bool chat = m_kind == Kind::Chat;
    for (auto f = choice.constBegin(); f != choice.constEnd(); ++f) {
        const QString key = f.key();
        if (key == QLatin1String("index") || key == QLatin1String("finish_reason") ||
            key == QLatin1String("logprobs"))
            continue;
        if (chat && key == QLatin1String("delta")) {
            if (f.value().isNull())
                continue;
            if (!f.value().isObject()) {
                setMalformed(
                    QStringLiteral("event %1: \"delta\" is not an object").arg(m_eventCount));
                return false;
            }
            const QJsonObject delta = f.value().toObject();
            for (auto d = delta.constBegin(); d != delta.constEnd(); ++d) {
                const QString dkey = d.key();
                const QJsonValue v = d.value();
                if (v.isNull())
                    continue; // llama.cpp's first chunk has "content": null
                if (dkey == QLatin1String("role")) {
                    if (c.role.isEmpty())
                        c.role = v.toString();
                } else if (dkey == QLatin1String("content")) {
                    const QString piece = v.toString();
                    c.content += piece;
                    charge(utf8Length(piece));
                } else if (dkey == QLatin1String("tool_calls")) {
                    if (!applyToolCalls(c, v))
                        return false;
                } else if (v.isString()) {
                    const QString piece = v.toString();
                    const auto [t, isNew] = c.deltaText.try_emplace(dkey);
                    t->second += piece;
                    charge(utf8Length(piece) + (isNew ? utf8Length(dkey) : 0));
                } else {
                    mergeNonNull(c.deltaOther, dkey, v);
                }
                if (m_state != State::Streaming)
                    return false;
            }
            continue;
        }
        if (!chat && key == QLatin1String("text")) {
            const QString piece = f.value().toString();
            c.content += piece;
            charge(utf8Length(piece));
        } else {
            mergeNonNull(c.extras, key, f.value());
        }
        if (m_state != State::Streaming)
            return false;
    }
    return true;
}

bool SseAggregator::applyToolCalls(Choice &c, const QJsonValue &calls)
{
    if (!calls.isArray()) {
        setMalformed(QStringLiteral("event %1: \"tool_calls\" is not an array").arg(m_eventCount));
        return false;
    }
    const QJsonArray arr = calls.toArray();
    for (const QJsonValue &callValue : arr) {
        if (!callValue.isObject()) {
            setMalformed(
                QStringLiteral("event %1: a tool call is not a JSON object").arg(m_eventCount));
            return false;
        }
        const QJsonObject call = callValue.toObject();
        const QString id = call.value(QLatin1String("id")).toString();
        const QJsonValue indexValue = call.value(QLatin1String("index"));
        qint64 index;
        if (!indexValue.isUndefined() && !indexValue.isNull()) {
            if (!isIndex(indexValue)) {
                setMalformed(QStringLiteral("event %1: bad tool call index").arg(m_eventCount));
                return false;
            }
            index = qint64(indexValue.toDouble());
        } else if (c.lastToolIndex < 0 ||
                   (!id.isEmpty() && id != c.toolCalls[c.lastToolIndex].id)) {
            // no index (non-conforming servers): a new id starts a new call, else continue
            index = c.toolCalls.empty() ? 0 : c.toolCalls.rbegin()->first + 1;
        } else {
            index = c.lastToolIndex;
        }
        c.lastToolIndex = index;
        const auto [it, inserted] = c.toolCalls.try_emplace(index);
        ToolCall &t = it->second;
        if (inserted)
            charge(EntryCost);
        if (t.id.isEmpty() && !id.isEmpty()) {
            t.id = id;
            charge(utf8Length(id));
        }
        const QString type = call.value(QLatin1String("type")).toString();
        if (t.type.isEmpty() && !type.isEmpty())
            t.type = type;
        const QJsonObject function = call.value(QLatin1String("function")).toObject();
        const QString name = function.value(QLatin1String("name")).toString();
        if (t.name.isEmpty() && !name.isEmpty()) {
            t.name = name;
            charge(utf8Length(name));
        }
        const QString args = function.value(QLatin1String("arguments")).toString();
        t.arguments += args;
        charge(utf8Length(args));
        if (m_state != State::Streaming)
            return false;
    }
    return true;
}

QByteArray SseAggregator::errorJson() const
{
    if (m_state != State::UpstreamError)
        return {};
    QJsonObject body;
    if (m_error.isObject()) {
        body.insert(QLatin1String("error"), m_error);
    } else {
        // {"error":"text"}: give the client the usual object shape
        QJsonObject error;
        if (m_error.isString()) {
            error.insert(QLatin1String("message"), m_error);
        } else {
            error.insert(QLatin1String("message"), QStringLiteral("upstream error"));
            error.insert(QLatin1String("detail"), m_error);
        }
        body.insert(QLatin1String("error"), error);
    }
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

QByteArray SseAggregator::result() const
{
    if (m_state != State::Done)
        return {};
    const bool chat = m_kind == Kind::Chat;
    QJsonObject top = m_top;
    top.insert(QLatin1String("object"),
               chat ? QLatin1String("chat.completion") : QLatin1String("text_completion"));
    QJsonArray choices;
    for (const auto &[index, c] : m_choices) {
        QJsonObject choice = c.extras;
        choice.insert(QLatin1String("index"), index);
        if (chat) {
            QJsonObject message = c.deltaOther;
            for (const auto &[key, text] : c.deltaText)
                message.insert(key, text);
            message.insert(QLatin1String("role"),
                           c.role.isEmpty() ? QStringLiteral("assistant") : c.role);
            if (c.toolCalls.empty()) {
                message.insert(QLatin1String("content"), c.content);
            } else {
                // as OpenAI: content is null when the answer is only tool calls
                message.insert(QLatin1String("content"),
                               c.content.isEmpty() ? QJsonValue() : QJsonValue(c.content));
                QJsonArray calls;
                for (const auto &[ti, t] : c.toolCalls) {
                    QJsonObject call;
                    if (!t.id.isEmpty())
                        call.insert(QLatin1String("id"), t.id);
                    call.insert(QLatin1String("type"),
                                t.type.isEmpty() ? QStringLiteral("function") : t.type);
                    call.insert(QLatin1String("function"),
                                QJsonObject{{QLatin1String("name"), t.name},
                                            {QLatin1String("arguments"), t.arguments}});
                    calls.append(call);
                }
                message.insert(QLatin1String("tool_calls"), calls);
            }
            choice.insert(QLatin1String("message"), message);
        } else {
            choice.insert(QLatin1String("text"), c.content);
        }
        choice.insert(QLatin1String("logprobs"), QJsonValue());
        choice.insert(QLatin1String("finish_reason"), c.finishReason);
        choices.append(choice);
    }
    top.insert(QLatin1String("choices"), choices);
    if (!m_usage.isNull())
        top.insert(QLatin1String("usage"), m_usage);
    return QJsonDocument(top).toJson(QJsonDocument::Compact);
}

} // namespace slp
