// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "noticepolicy.h"

#include <QObject>
#include <QPointer>
#include <QSystemTrayIcon>

namespace slp::monitor {

// Delivers a Notice: org.freedesktop.Notifications.Notify over QtDBus first, because on the
// XEmbed tray path QSystemTrayIcon::showMessage draws Qt's own balloon and never reaches the
// desktop's notification daemon. When the call fails (no session bus, no such service), the
// tray balloon is the fallback; without a tray the notice is only logged.
class DesktopNotifier : public QObject
{
    Q_OBJECT

public:
    explicit DesktopNotifier(QObject *parent = nullptr);

    void setTray(QSystemTrayIcon *tray) { m_tray = tray; }
    void show(const Notice &notice);

private:
    void showFallback(const Notice &notice, const QString &why);

    QPointer<QSystemTrayIcon> m_tray;
};

} // namespace slp::monitor
