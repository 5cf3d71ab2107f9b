// SPDX-License-Identifier: GPL-3.0-or-later
#include "discovery/modellist.h"

#include "jsonstring.h"
#include "observe/logging.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace slp {

namespace {
constexpr int kQuotedIdBytes = 64; // enough of a refused id to recognise it in the log
} // namespace

QString modelIdFault(const QString &id)
{
    if (id.toUtf8().size() > kMaxModelIdBytes)
        return QStringLiteral("a model id over %1 bytes").arg(kMaxModelIdBytes);
    for (const QChar c : id) {
        // C0, DEL and C1 controls: what a terminal or a journal viewer would act on.
        if (c.category() == QChar::Other_Control)
            return QStringLiteral("a model id with a control character");
    }
    return {};
}

ModelList parseModelList(const QByteArray &json)
{
    ModelList list;
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (doc.isNull()) {
        list.error = QStringLiteral("not JSON: %1").arg(parseError.errorString());
        return list;
    }
    if (!doc.isObject() || !doc.object().value(QLatin1String("data")).isArray()) {
        list.error = QStringLiteral("not a model list: no \"data\" array");
        return list;
    }
    const QJsonArray data = doc.object().value(QLatin1String("data")).toArray();
    for (const QJsonValue &entry : data) {
        const QJsonValue id = entry.toObject().value(QLatin1String("id"));
        if (!id.isString() || id.toString().isEmpty()) {
            list.error = QStringLiteral("not a model list: an entry has no string \"id\"");
            return list;
        }
        const QString fault = modelIdFault(id.toString());
        if (!fault.isEmpty()) {
            list.error = fault + QStringLiteral(" (") +
                         quoteForLog(id.toString().toUtf8(), kQuotedIdBytes) + QStringLiteral(")");
            return list;
        }
        list.ids.append(id.toString());
    }
    list.count = list.ids.size();
    if (list.count == 1)
        list.fields = learnedFields(data.first().toObject(), &list.fieldsTrimmed, &list.entryBytes);
    list.ok = true;
    return list;
}

QJsonObject learnedFields(const QJsonObject &entry, bool *trimmed, qsizetype *bytes)
{
    QJsonObject fields = entry;
    for (const char *key : {"id", "object", "root", "parent"})
        fields.remove(QLatin1String(key));
    QByteArray written;
    appendJsonValue(written, fields);
    *bytes = written.size();
    *trimmed = written.size() > kMaxLearnedEntryBytes;
    if (!*trimmed)
        return fields;
    // A hostile or verbose backend: what clients need to size prompts, and no more.
    QJsonObject kept;
    for (const char *key : {"context_length", "max_model_len", "owned_by", "created"}) {
        const QJsonValue v = fields.value(QLatin1String(key));
        if (v.isDouble() || (v.isString() && v.toString().size() <= kMaxModelIdBytes))
            kept.insert(QLatin1String(key), v);
    }
    const QJsonValue nCtx = fields.value(QLatin1String("meta")).toObject().value(u"n_ctx");
    if (nCtx.isDouble())
        kept.insert(QLatin1String("meta"), QJsonObject{{QStringLiteral("n_ctx"), nCtx}});
    return kept;
}

DiscoverySchedule::DiscoverySchedule(Duration initial, Duration max, Duration recheck)
    : m_initial(initial), m_max(std::max(max, initial)), m_recheck(recheck), m_backoff(initial)
{}

DiscoverySchedule::Duration DiscoverySchedule::next(ProbeResult result)
{
    if (result == ProbeResult::Ok) {
        m_backoff = m_initial; // a later failure starts the back-off afresh
        return m_recheck;
    }
    const Duration wait = m_backoff;
    m_backoff = std::min(m_backoff * 2, m_max);
    return wait;
}

} // namespace slp
