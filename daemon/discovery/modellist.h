// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <chrono>

namespace slp {

// A model list is a list, not a download: a probe stops reading past this (a fixed limit:
// 200,000 ids fit in it), so a hostile backend cannot make SLP buffer an endless body.
constexpr qint64 kMaxModelListBytes = 4 * 1024 * 1024;
// Ids beyond this, or with a control character, make the probe an error, never a rename:
// they would end up in every log line and request that names the model.
constexpr qsizetype kMaxModelIdBytes = 256;
// The ids of an ambiguous list that its log line names.
constexpr qsizetype kMaxIdsReported = 32;
// The most of a backend's entry SLP keeps for the catalog, as SLP writes it: past this only
// the fields clients size prompts with are kept (learnedFields).
constexpr qsizetype kMaxLearnedEntryBytes = 8 * 1024;

// Reads a backend's GET /v1/models answer ({"object":"list","data":[{"id":...},...]}).
struct ModelList
{
    bool ok = false;
    QStringList ids;     // in the backend's order
    qsizetype count = 0; // how many the list has (ModelListParser keeps only the first ids)
    QString error;       // why the text is not a model list
    // When the list has exactly one model: its entry's fields as the catalog keeps them
    // (learnedFields), and whether they were cut to the context fields (and from how many
    // bytes).
    QJsonObject fields;
    bool fieldsTrimmed = false;
    qsizetype entryBytes = 0;
};
ModelList parseModelList(const QByteArray &json);
// What the catalog keeps of a backend's entry for its model: every field but those that name
// the backend's model (`id`, `object`, `root`, `parent`: SLP's id and `?debug`'s
// upstream_model say those). Written by SLP over kMaxLearnedEntryBytes, it keeps only the
// context fields (`context_length`, `max_model_len`, `meta.n_ctx`) with `owned_by` and
// `created`, and says so in `trimmed`; `bytes` gets its size as written.
QJsonObject learnedFields(const QJsonObject &entry, bool *trimmed, qsizetype *bytes);
// Why `id` is no model name SLP renames to (over kMaxModelIdBytes or a control character), or
// empty when it is one.
QString modelIdFault(const QString &id);

enum class ProbeResult
{
    Ok,
    Ambiguous,
    Error
};

// The probe schedule, pure so it is testable without timers: backoff_initial doubling to
// backoff_max while no single name is confirmed, then recheck while it is.
class DiscoverySchedule
{
public:
    using Duration = std::chrono::nanoseconds;
    DiscoverySchedule(Duration initial, Duration max, Duration recheck);

    // The wait before the next probe, given the result of the one that just ran.
    Duration next(ProbeResult result);
    Duration currentBackoff() const { return m_backoff; }

private:
    Duration m_initial;
    Duration m_max;
    Duration m_recheck;
    Duration m_backoff;
};

} // namespace slp
