// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace slp {

// The last request of a route that failed, as the client knew it: never a host or an address.
struct RouteFailure
{
    QDateTime at;      // written RFC 3339 UTC
    QString what;      // a short sentence: "connection refused", "upstream closed mid-body"
    QString requestId; // the X-Request-Id the client got
};

// The shape of GET /v1/models (and ?debug), shared by the daemon (writer) and slp-monitor
// (reader).
struct CatalogEntry
{
    QString id;
    // What the backend said of its model (discovery's learned fields, its name's fields
    // removed), relayed in the plain entry: owned_by and created when it gave them, then the
    // rest (max_model_len, meta, status, capabilities, ...). Empty: SLP's own entry.
    QJsonObject fields;
    // The context window clients read as context_length: the config's, else the backend's
    // own, else derived from its fields (contextLengthOf); nullopt: none is known.
    std::optional<qint64> contextLength;
    // Debug fields; meaningful only in the debug view.
    QString upstreamModel; // empty = unknown (omitted from JSON)
    QString discovery;     // discovered | pending | pinned | passthrough
    QString lastProbe;     // ok | ambiguous | error; empty = no probe yet (omitted)
    QDateTime lastProbeAt; // invalid = no probe yet (omitted); written RFC 3339 UTC
    QString timeout;       // Go duration string, e.g. "2m0s"
    bool retry = false;
    bool aggregate = false;
    QString streamIdleTimeout = QStringLiteral("0s"); // Go duration string; "0s" = off
    QString sseKeepalive = QStringLiteral("0s");      // Go duration string; "0s" = off
    QString state; // passive route state: ok | slow | failing | stalled; empty = omitted
    std::optional<RouteFailure> lastFailure; // omitted when the route has not failed
};

struct Catalog
{
    QList<CatalogEntry> entries;
    qint64 created = 0; // unix seconds put in every entry's "created"
};

// {"object":"list","data":[{"id","object":"model","created","owned_by", the backend's fields,
// "context_length"[, debug fields]}]}: created and owned_by are the backend's when it gave them
// (a number and a string), else SLP's start and "slp".
QByteArray catalogToJson(const Catalog &catalog, bool debug);

// One entry alone: what OpenAI's retrieve-model endpoint returns.
QByteArray catalogEntryToJson(const CatalogEntry &entry, qint64 created, bool debug = false);

// The context window a backend's entry gives: its own context_length, else max_model_len
// (vLLM, SGLang), else meta.n_ctx (llama.cpp), the first present; nullopt when that one is not
// a positive integer (a backend's own context_length is never replaced by another field).
std::optional<qint64> contextLengthOf(const QJsonObject &fields);

// Reads either form back; nullopt with `error` set when the text is not a catalog.
std::optional<Catalog> catalogFromJson(const QByteArray &json, QString *error = nullptr);

// True when a ?debug query value asks for the debug view: present with any value but 0/false.
bool debugRequested(bool present, const QString &value);

} // namespace slp
