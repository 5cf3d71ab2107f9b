// SPDX-License-Identifier: GPL-3.0-or-later
#include "systemdunit.h"

#include "plaintext.h"

#include <QHostAddress>

namespace slp::monitor {

bool isLocalUrl(const QUrl &url)
{
    const QString host = url.host();
    if (host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        return true;
    const QHostAddress address(host);
    return !address.isNull() && address.isLoopback();
}

std::optional<UnitStatus> unitStatusFrom(const QString &unit, const QVariantMap &properties)
{
    const QVariant active = properties.value(QStringLiteral("ActiveState"));
    if (active.typeId() != QMetaType::QString || active.toString().isEmpty())
        return std::nullopt;
    const auto text = [&properties](const char *name) {
        const QVariant v = properties.value(QLatin1String(name));
        return v.typeId() == QMetaType::QString ? v.toString() : QString();
    };
    return UnitStatus{unit, active.toString(), text("SubState"), text("StatusText")};
}

QString unitHeaderText(const UnitStatus &s)
{
    QString out = QStringLiteral("%1: %2").arg(s.unit, displayText(s.activeState));
    if (!s.subState.isEmpty())
        out += QStringLiteral(" (%1)").arg(displayText(s.subState));
    if (!s.statusText.isEmpty())
        out += QStringLiteral(" \u2014 %1").arg(displayText(s.statusText));
    return out;
}

} // namespace slp::monitor
