// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <chrono>

namespace slp {

// Reads a backend's GET /v1/models answer ({"object":"list","data":[{"id":...},...]}).
struct ModelList
{
    bool ok = false;
    QStringList ids; // in the backend's order
    QString error;   // why the text is not a model list
};
ModelList parseModelList(const QByteArray &json);

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
