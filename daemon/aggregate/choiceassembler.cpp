// SPDX-License-Identifier: GPL-3.0-or-later
#include "aggregate/choiceassembler.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>

// Each chunk of an OpenAI-style stream merged into the non-streaming answer, and the answer
// written out. The rules are SseAggregator's (sseaggregator.h); this is their JSON half.

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

// A usable "index": a non-negative integer (well inside qint64, so the cast is defined).
bool isIndex(const QJsonValue &v)
{
    const double d = v.toDouble(-1);
    return v.isDouble() && d >= 0 && d < 1e15 && d == std::floor(d);
}
} // namespace

ChoiceAssembler::ChoiceAssembler(AnswerKind kind, qint64 maxOutputBytes)
    : m_kind(kind), m_maxOutputBytes(maxOutputBytes)
{}

bool ChoiceAssembler::fail(const QString &why)
{
    if (m_failure.isEmpty())
        m_failure = why;
    return false;
}

void ChoiceAssembler::charge(qint64 bytes)
{
    m_outputBytes += bytes;
    if (!failed() && m_outputBytes > m_maxOutputBytes) {
        m_tooLarge = true;
        fail(QStringLiteral("reassembled output exceeds %1 bytes").arg(m_maxOutputBytes));
    }
}

void ChoiceAssembler::clear()
{
    m_top = {};
    m_choices.clear();
    m_usage = QJsonValue::Null;
}

void ChoiceAssembler::mergeNonNull(QJsonObject &into, const QString &key, const QJsonValue &value)
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

bool ChoiceAssembler::apply(const QJsonObject &chunk, qint64 event)
{
    m_event = event;
    for (auto it = chunk.constBegin(); it != chunk.constEnd() && !failed(); ++it) {
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

    const QJsonValue choices = chunk.value(QLatin1String("choices"));
    if (choices.isUndefined() || choices.isNull())
        return true;
    if (!choices.isArray())
        return fail(QStringLiteral("event %1: \"choices\" is not an array").arg(m_event));
    const QJsonArray arr = choices.toArray();
    for (const QJsonValue &choice : arr) {
        if (!choice.isObject())
            return fail(QStringLiteral("event %1: a choice is not a JSON object").arg(m_event));
        if (!applyChoice(choice.toObject()))
            return false;
    }
    return !failed();
}

bool ChoiceAssembler::applyChoice(const QJsonObject &choice)
{
    const QJsonValue indexValue = choice.value(QLatin1String("index"));
    qint64 index = 0;
    if (!indexValue.isUndefined() && !indexValue.isNull()) {
        if (!isIndex(indexValue)) {
            fail(QStringLiteral("event %1: bad choice index").arg(m_event));
            return false;
        }
        index = qint64(indexValue.toDouble());
    }
    const auto [it, inserted] = m_choices.try_emplace(index);
    Choice &c = it->second;
    if (inserted) {
        charge(EntryCost);
        if (failed())
            return false;
    }

    const QJsonValue finish = choice.value(QLatin1String("finish_reason"));
    if (!finish.isNull() && !finish.isUndefined())
        c.finishReason = finish;

    const bool chat = m_kind == AnswerKind::Chat;
    for (auto f = choice.constBegin(); f != choice.constEnd(); ++f) {
        const QString key = f.key();
        if (key == QLatin1String("index") || key == QLatin1String("finish_reason") ||
            key == QLatin1String("logprobs"))
            continue;
        if (chat && key == QLatin1String("delta")) {
            if (f.value().isNull())
                continue;
            if (!f.value().isObject()) {
                fail(QStringLiteral("event %1: \"delta\" is not an object").arg(m_event));
                return false;
            }
            if (!applyDelta(c, f.value().toObject()))
                return false;
            continue;
        }
        if (!chat && key == QLatin1String("text")) {
            const QString piece = f.value().toString();
            c.content += piece;
            charge(utf8Length(piece));
        } else {
            mergeNonNull(c.extras, key, f.value());
        }
        if (failed())
            return false;
    }
    return true;
}

bool ChoiceAssembler::applyDelta(Choice &c, const QJsonObject &delta)
{
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
        if (failed())
            return false;
    }
    return true;
}

bool ChoiceAssembler::applyToolCalls(Choice &c, const QJsonValue &calls)
{
    if (!calls.isArray()) {
        fail(QStringLiteral("event %1: \"tool_calls\" is not an array").arg(m_event));
        return false;
    }
    const QJsonArray arr = calls.toArray();
    for (const QJsonValue &callValue : arr) {
        if (!callValue.isObject()) {
            fail(QStringLiteral("event %1: a tool call is not a JSON object").arg(m_event));
            return false;
        }
        const QJsonObject call = callValue.toObject();
        const QString id = call.value(QLatin1String("id")).toString();
        const QJsonValue indexValue = call.value(QLatin1String("index"));
        qint64 index;
        if (!indexValue.isUndefined() && !indexValue.isNull()) {
            if (!isIndex(indexValue)) {
                fail(QStringLiteral("event %1: bad tool call index").arg(m_event));
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
        if (failed())
            return false;
    }
    return true;
}

QByteArray ChoiceAssembler::result() const
{
    const bool chat = m_kind == AnswerKind::Chat;
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
