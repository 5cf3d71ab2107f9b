// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "monitoroptions.h"
#include "statusmodel.h"

#include <QList>
#include <QObject>

#include <memory>

class QAction;
class QMenu;
class QSystemTrayIcon;

namespace slp::monitor {

class DesktopNotifier;
class MonitorWindow;
class RouteTableModel;
class StatusPoller;
class SystemdUnitReader;

// The widgets layer's conductor: poller -> state model -> tray, window and notifications.
// Holds no rules of its own: states come from StatusModel, notices from noticesFor().
class MonitorApp : public QObject
{
    Q_OBJECT

public:
    // saved: the persisted settings; the command line's --url/--interval override them for
    // this run only.
    MonitorApp(const MonitorSettings &saved, const MonitorCommandLine &commandLine,
               QObject *parent = nullptr);
    ~MonitorApp() override;

    void start();

private:
    void onPollFinished(const PollResult &result);
    void applySettings(const MonitorSettings &settings);
    void applyCaFile();
    void updateTray(const StatusSnapshot &snapshot);
    void updateMenuRoutes(const StatusSnapshot &snapshot);
    void showWindow();
    void openSettings();
    void readUnit();

    MonitorSettings m_settings;
    StatusPoller *m_poller;      // child
    RouteTableModel *m_routes;   // child
    DesktopNotifier *m_notifier; // child
    // child; made on the first poll of a local SLP, so a remote one never touches the bus
    SystemdUnitReader *m_unitReader = nullptr;
    StatusModel m_model;
    QSystemTrayIcon *m_tray = nullptr; // child; null without a system tray
    std::unique_ptr<QMenu> m_menu;     // QMenu wants a widget parent; owned here instead
    std::unique_ptr<MonitorWindow> m_window;
    QAction *m_headerAction = nullptr;
    QAction *m_trafficAction = nullptr;
    QAction *m_routesEnd = nullptr; // the separator after the route entries
    QList<QAction *> m_routeActions;
    QStringList m_routeTexts; // what the route entries show, to rebuild only on change
};

} // namespace slp::monitor
