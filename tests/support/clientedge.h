// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace slp::test {

// The slp config of the client-edge suites (tst_front_edge, tst_hostile_clients): client
// limits tight enough to reach in a test (1 s head and idle timeouts, 8 KiB heads, 64 KiB
// bodies) and one backend, `good`, pinned to `good-upstream` on `upstreamUrl`.
inline QString clientEdgeConfig(const QString &upstreamUrl)
{
    return QStringLiteral(R"(header_timeout: 1s
idle_timeout: 1s
max_header_bytes: 8KiB
max_body_bytes: 64KiB
backends:
  - name: good
    url: %1
    model: good-upstream
    timeout: 20s
)")
        .arg(upstreamUrl);
}

} // namespace slp::test
