// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>

#include <map>

namespace slp {

// /v1/chat/completions vs /v1/completions
enum class AnswerKind
{
    Chat,
    Completion
};

// The JSON half of SseAggregator: each chunk of an OpenAI-style completion stream merged into
// the non-streaming answer (the rules are in sseaggregator.h), within a bound on the
// assembled output. Pure.
class ChoiceAssembler
{
public:
    ChoiceAssembler(AnswerKind kind, qint64 maxOutputBytes);

    // Merges one chunk (a JSON object that is not an error); `event` numbers it in messages.
    // False once a chunk was malformed or the answer outgrew its bound: failure() says why.
    bool apply(const QJsonObject &chunk, qint64 event);
    bool failed() const { return !m_failure.isEmpty(); }
    const QString &failure() const { return m_failure; }
    bool tooLarge() const { return m_tooLarge; }
    // The reassembled answer (compact JSON).
    QByteArray result() const;
    // Frees what was assembled (the answer is not needed).
    void clear();

private:
    struct ToolCall
    {
        QString id;
        QString type;
        QString name;
        QString arguments;
    };
    struct Choice
    {
        QString role;
        QString content;                      // chat delta.content, or completion text
        QJsonObject deltaOther;               // other non-string delta fields (last non-null wins)
        std::map<QString, QString> deltaText; // other string delta fields, concatenated
        std::map<qint64, ToolCall> toolCalls;
        qint64 lastToolIndex = -1; // for tool-call deltas without "index"
        QJsonValue finishReason = QJsonValue::Null;
        QJsonObject extras; // other per-choice fields (last non-null wins)
    };

    bool applyChoice(const QJsonObject &choice);
    bool applyDelta(Choice &c, const QJsonObject &delta);
    bool applyToolCalls(Choice &c, const QJsonValue &calls);
    void mergeNonNull(QJsonObject &into, const QString &key, const QJsonValue &value);
    void charge(qint64 bytes);
    bool fail(const QString &why); // false, for `return fail(...)`

    AnswerKind m_kind;
    qint64 m_maxOutputBytes;
    qint64 m_outputBytes = 0;
    qint64 m_event = 0;
    QString m_failure;
    bool m_tooLarge = false;
    QJsonObject m_top;
    QJsonValue m_usage = QJsonValue::Null;
    std::map<qint64, Choice> m_choices;
};

} // namespace slp
