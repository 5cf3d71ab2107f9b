// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace slp::mock {

// vLLM-shaped bodies, written by hand so key order matches vLLM's (QJsonObject sorts keys).

QByteArray errorBody(int status, const QString &message, const QString &type = {});
QByteArray errorTypeForStatus(int status);

enum class Endpoint
{
    Chat,
    Completion,
    Embedding,
    Other
};

struct Generation
{
    Endpoint endpoint = Endpoint::Chat;
    QString model;
    QByteArray id;      // e.g. "chatcmpl-<hex>"
    qint64 created = 0; // unix seconds
    int contentEvents = 5;
    int reasoningEvents = 2;
    int toolCalls = 0;
    int promptTokens = 1;
    QByteArray path; // for Endpoint::Other
};

// The pieces the answer is made of; a stream sends one per event, a full answer joins them.
QList<QString> contentPieces(const Generation &g);
QList<QString> reasoningPieces(const Generation &g);
int completionTokens(const Generation &g);

// Every `data: ...\n\n` event of a stream, [DONE] included, in order.
QList<QByteArray> streamEvents(const Generation &g);
QByteArray fullResponse(const Generation &g);

QByteArray modelsList(const QStringList &models, qint64 created);

// A gzip member made of stored (uncompressed) deflate blocks: valid for every gunzip.
QByteArray gzipStored(const QByteArray &data);
quint32 crc32(const QByteArray &data);

} // namespace slp::mock
