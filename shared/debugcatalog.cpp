// SPDX-License-Identifier: GPL-3.0-or-later
#include "debugcatalog.h"

#include "jsonstring.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QVariant>

#include <algorithm>

namespace slp {

namespace {

void appendMember(QByteArray &out, const char *key, const QString &value)
{
    out += ",\"";
    out += key;
    out += "\":";
    appendJsonString(out, value);
}

void appendMember(QByteArray &out, const char *key, bool value)
{
    out += ",\"";
    out += key;
    out += value ? "\":true" : "\":false";
}

// RFC 3339 in UTC with 'Z', whole seconds: what Go's time.RFC3339 prints.
QString rfc3339(const QDateTime &t)
{
    return t.toUTC().toString(QStringLiteral("yyyy-MM-dd'T'HH:mm:ss'Z'"));
}

void appendFailure(QByteArray &out, const RouteFailure &f)
{
    out += ",\"last_failure\":{\"at\":";
    appendJsonString(out, rfc3339(f.at));
    appendMember(out, "what", f.what);
    appendMember(out, "request_id", f.requestId);
    out += '}';
}

bool fail(QString *error, const QString &why)
{
    if (error)
        *error = why;
    return false;
}

// Optional string member: absent is fine, any other type is an error.
bool readString(const QJsonObject &o, const char *key, QString *out, QString *error, int index)
{
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined())
        return true;
    if (!v.isString())
        return fail(
            error,
            QStringLiteral("data[%1].%2 is not a string").arg(index).arg(QLatin1String(key)));
    *out = v.toString();
    return true;
}

bool readBool(const QJsonObject &o, const char *key, bool *out, QString *error, int index)
{
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined())
        return true;
    if (!v.isBool())
        return fail(
            error,
            QStringLiteral("data[%1].%2 is not a boolean").arg(index).arg(QLatin1String(key)));
    *out = v.toBool();
    return true;
}

std::optional<QDateTime> readTime(const QString &text)
{
    const QDateTime t = QDateTime::fromString(text, Qt::ISODate);
    if (!t.isValid())
        return std::nullopt;
    return t.toUTC();
}

// "last_failure": absent, null, or {"at","what","request_id"} (all strings).
bool readFailure(const QJsonObject &o, std::optional<RouteFailure> *out, QString *error, int index)
{
    const QJsonValue v = o.value(QLatin1String("last_failure"));
    if (v.isUndefined() || v.isNull())
        return true;
    const QString where = QStringLiteral("data[%1].last_failure").arg(index);
    if (!v.isObject())
        return fail(error, where + QStringLiteral(" is not an object"));
    const QJsonObject f = v.toObject();
    const QJsonValue at = f.value(QLatin1String("at"));
    const QJsonValue what = f.value(QLatin1String("what"));
    const QJsonValue id = f.value(QLatin1String("request_id"));
    if (!at.isString() || !what.isString() || !id.isString())
        return fail(error, where + QStringLiteral(" needs the strings at, what and request_id"));
    const std::optional<QDateTime> when = readTime(at.toString());
    if (!when)
        return fail(error, where + QStringLiteral(".at is not an RFC 3339 time: ") + at.toString());
    *out = RouteFailure{*when, what.toString(), id.toString()};
    return true;
}

// The keys ?debug writes: on top of the backend's, which never shadow them.
const QLatin1String kDebugKeys[] = {
    QLatin1String("upstream_model"), QLatin1String("discovery"),
    QLatin1String("last_probe"),     QLatin1String("last_probe_at"),
    QLatin1String("timeout"),        QLatin1String("retry"),
    QLatin1String("aggregate"),      QLatin1String("stream_idle_timeout"),
    QLatin1String("sse_keepalive"),  QLatin1String("state"),
    QLatin1String("last_failure")};

// A JSON number that is a whole, positive count (a context window, a time stamp).
std::optional<qint64> positiveInteger(const QJsonValue &v)
{
    if (!v.isDouble())
        return std::nullopt;
    const QVariant number = v.toVariant();
    if (number.typeId() == QMetaType::LongLong)
        return number.toLongLong() > 0 ? std::optional(number.toLongLong()) : std::nullopt;
    const double d = v.toDouble();
    if (d >= 1 && d < 9007199254740992.0 && d == double(qint64(d)))
        return qint64(d);
    return std::nullopt;
}

// The plain entry: id and object SLP's, created and owned_by the backend's when it gave them
// in their types (else SLP's), the rest of what the backend said, then context_length.
void appendPlain(QByteArray &out, const CatalogEntry &e, const QByteArray &created, bool debug)
{
    out += "{\"id\":";
    appendJsonString(out, e.id);
    out += ",\"object\":\"model\",\"created\":";
    const QJsonValue learnedCreated = e.fields.value(QLatin1String("created"));
    if (learnedCreated.isDouble())
        appendJsonValue(out, learnedCreated);
    else
        out += created;
    const QJsonValue ownedBy = e.fields.value(QLatin1String("owned_by"));
    appendMember(out, "owned_by", ownedBy.isString() ? ownedBy.toString() : QStringLiteral("slp"));
    for (auto it = e.fields.begin(); it != e.fields.end(); ++it) {
        const QString &key = it.key();
        if (key == QLatin1String("created") || key == QLatin1String("owned_by") ||
            key == QLatin1String("id") || key == QLatin1String("object") ||
            (e.contextLength && key == QLatin1String("context_length")) ||
            (debug &&
             std::find(std::begin(kDebugKeys), std::end(kDebugKeys), key) != std::end(kDebugKeys)))
            continue;
        out += ',';
        appendJsonString(out, key);
        out += ':';
        appendJsonValue(out, it.value());
    }
    if (e.contextLength)
        out += ",\"context_length\":" + QByteArray::number(*e.contextLength);
}

void appendDebug(QByteArray &out, const CatalogEntry &e)
{
    if (!e.upstreamModel.isEmpty())
        appendMember(out, "upstream_model", e.upstreamModel);
    appendMember(out, "discovery", e.discovery);
    if (!e.lastProbe.isEmpty())
        appendMember(out, "last_probe", e.lastProbe);
    if (e.lastProbeAt.isValid())
        appendMember(out, "last_probe_at", rfc3339(e.lastProbeAt));
    appendMember(out, "timeout", e.timeout);
    appendMember(out, "retry", e.retry);
    appendMember(out, "aggregate", e.aggregate);
    appendMember(out, "stream_idle_timeout", e.streamIdleTimeout);
    appendMember(out, "sse_keepalive", e.sseKeepalive);
    if (!e.state.isEmpty())
        appendMember(out, "state", e.state);
    if (e.lastFailure)
        appendFailure(out, *e.lastFailure);
}

void appendEntry(QByteArray &out, const CatalogEntry &e, const QByteArray &created, bool debug)
{
    appendPlain(out, e, created, debug);
    if (debug)
        appendDebug(out, e);
    out += '}';
}
} // namespace

QByteArray catalogToJson(const Catalog &catalog, bool debug)
{
    // Written by hand to keep the key order (id, object, created, owned_by, the backend's
    // fields, context_length, then the debug fields) for people reading curl output; one entry
    // per line for the same reason.
    QByteArray out = "{\"object\":\"list\",\"data\":[";
    const QByteArray created = QByteArray::number(catalog.created);
    bool first = true;
    for (const CatalogEntry &e : catalog.entries) {
        out += first ? "\n" : ",\n";
        first = false;
        appendEntry(out, e, created, debug);
    }
    out += first ? "]}\n" : "\n]}\n";
    return out;
}

QByteArray catalogEntryToJson(const CatalogEntry &entry, qint64 created, bool debug)
{
    QByteArray out;
    appendEntry(out, entry, QByteArray::number(created), debug);
    return out;
}

std::optional<qint64> contextLengthOf(const QJsonObject &fields)
{
    for (const char *key : {"context_length", "max_model_len"})
        if (fields.contains(QLatin1String(key)))
            return positiveInteger(fields.value(QLatin1String(key)));
    const QJsonObject meta = fields.value(QLatin1String("meta")).toObject();
    if (meta.contains(QLatin1String("n_ctx")))
        return positiveInteger(meta.value(QLatin1String("n_ctx")));
    return std::nullopt;
}

namespace {

// One entry of data[], index `i`; false with `error` set when a field has the wrong type.
bool readEntry(const QJsonObject &o, int i, CatalogEntry *e, QString *error)
{
    const QJsonValue id = o.value(QLatin1String("id"));
    if (!id.isString())
        return fail(error, QStringLiteral("data[%1].id is missing or not a string").arg(i));
    e->id = id.toString();
    e->contextLength = positiveInteger(o.value(QLatin1String("context_length")));
    QString lastProbeAt;
    if (!readString(o, "upstream_model", &e->upstreamModel, error, i) ||
        !readString(o, "discovery", &e->discovery, error, i) ||
        !readString(o, "last_probe", &e->lastProbe, error, i) ||
        !readString(o, "last_probe_at", &lastProbeAt, error, i) ||
        !readString(o, "timeout", &e->timeout, error, i) ||
        !readBool(o, "retry", &e->retry, error, i) ||
        !readBool(o, "aggregate", &e->aggregate, error, i) ||
        !readString(o, "stream_idle_timeout", &e->streamIdleTimeout, error, i) ||
        !readString(o, "sse_keepalive", &e->sseKeepalive, error, i) ||
        !readString(o, "state", &e->state, error, i) || !readFailure(o, &e->lastFailure, error, i))
        return false;
    if (!lastProbeAt.isEmpty()) {
        const std::optional<QDateTime> when = readTime(lastProbeAt);
        if (!when)
            return fail(error, QStringLiteral("data[%1].last_probe_at is not an RFC 3339 time: %2")
                                   .arg(i)
                                   .arg(lastProbeAt));
        e->lastProbeAt = *when;
    }
    return true;
}

// The list's data[] array, or an error naming what the text is instead.
std::optional<QJsonArray> dataOf(const QByteArray &json, QString *error)
{
    QJsonParseError perr;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &perr);
    if (perr.error != QJsonParseError::NoError) {
        fail(error,
             QStringLiteral("not JSON: %1 at offset %2").arg(perr.errorString()).arg(perr.offset));
        return std::nullopt;
    }
    if (!doc.isObject()) {
        fail(error, QStringLiteral("not a JSON object"));
        return std::nullopt;
    }
    const QJsonObject root = doc.object();
    if (root.value(QLatin1String("object")).toString() != QLatin1String("list")) {
        fail(error, QStringLiteral("\"object\" is not \"list\""));
        return std::nullopt;
    }
    const QJsonValue data = root.value(QLatin1String("data"));
    if (!data.isArray()) {
        fail(error, QStringLiteral("\"data\" is not an array"));
        return std::nullopt;
    }
    return data.toArray();
}

} // namespace

std::optional<Catalog> catalogFromJson(const QByteArray &json, QString *error)
{
    const std::optional<QJsonArray> items = dataOf(json, error);
    if (!items)
        return std::nullopt;
    Catalog catalog;
    for (int i = 0; i < items->size(); ++i) {
        if (!items->at(i).isObject()) {
            fail(error, QStringLiteral("data[%1] is not an object").arg(i));
            return std::nullopt;
        }
        const QJsonObject o = items->at(i).toObject();
        const QJsonValue created = o.value(QLatin1String("created"));
        if (!created.isUndefined() && !created.isDouble()) {
            fail(error, QStringLiteral("data[%1].created is not a number").arg(i));
            return std::nullopt;
        }
        if (i == 0 && created.isDouble())
            catalog.created = created.toInteger();
        CatalogEntry e;
        if (!readEntry(o, i, &e, error))
            return std::nullopt;
        catalog.entries.append(e);
    }
    return catalog;
}

bool debugRequested(bool present, const QString &value)
{
    return present && value != QLatin1String("0") &&
           value.compare(QLatin1String("false"), Qt::CaseInsensitive) != 0;
}

} // namespace slp
