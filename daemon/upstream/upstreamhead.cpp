// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/upstreamhead.h"

#include "observe/logging.h"

namespace slp {

QString upstreamRequestIdFault(const QByteArray &value)
{
    if (value.isEmpty())
        return QStringLiteral("empty");
    if (value.size() > kMaxUpstreamRequestIdBytes)
        return QStringLiteral("over %1 bytes").arg(kMaxUpstreamRequestIdBytes);
    for (const char c : value) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7f)
            return QStringLiteral("not visible ASCII");
    }
    return {};
}

void dropUnfitRequestIds(UpstreamHead &head, const QString &origin)
{
    for (qsizetype i = 0; i < head.headers.size();) {
        const auto &[name, value] = head.headers.at(i);
        if (!equalsNoCase(name, "x-request-id")) {
            ++i;
            continue;
        }
        const QString fault = upstreamRequestIdFault(value);
        if (fault.isEmpty()) {
            ++i;
            continue;
        }
        qCWarning(lcProxy).noquote()
            << QStringLiteral("upstream %1 sent X-Request-Id %2 (%3): not relayed, the client "
                              "gets SLP's own id")
                   .arg(origin, quoteForLog(value), fault);
        head.headers.removeAt(i);
    }
}

} // namespace slp
