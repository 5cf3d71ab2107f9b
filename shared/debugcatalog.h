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

// The shape of GET /v1/models?debug, shared by the daemon (writer) and slp-monitor (reader).
struct CatalogEntry
{
    QString id;
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

// {"object":"list","data":[{"id","object":"model","created","owned_by":"slp"[,debug fields]}]}
QByteArray catalogToJson(const Catalog &catalog, bool debug);

// One entry alone, without the debug fields: what OpenAI's retrieve-model endpoint returns.
QByteArray catalogEntryToJson(const CatalogEntry &entry, qint64 created);

// Reads either form back; nullopt with `error` set when the text is not a catalog.
std::optional<Catalog> catalogFromJson(const QByteArray &json, QString *error = nullptr);

// True when a ?debug query value asks for the debug view: present with any value but 0/false.
bool debugRequested(bool present, const QString &value);

} // namespace slp
