// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "status.h"
#include "systemdunit.h"

#include <optional>

#include <QWidget>

class QLabel;
class QPushButton;
class QTableView;

namespace slp::monitor {

class RouteDetailsPane;
class RouteTableModel;
class Sparkline;

// The route table with the last poll's time and error, the traffic headline and the hour's
// sparkline, and under the table the details of the selected route (with none selected, of
// the worst one). In tray mode closing it only hides it; without a tray it is the
// application and closing it quits.
class MonitorWindow : public QWidget
{
    Q_OBJECT

public:
    MonitorWindow(RouteTableModel *routes, bool standalone, QWidget *parent = nullptr);

    void showStatus(const StatusSnapshot &snapshot);
    void showWaiting(const QUrl &url);
    // systemd's word on slp.service (a local SLP); nullopt leaves it out of the header.
    void showUnit(const std::optional<UnitStatus> &unit);

signals:
    void refreshRequested();
    void settingsRequested();
    void quitRequested();

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    // The constructor's steps: the labels, the route table, the layout with its buttons.
    void setUpLabels();
    void setUpTable();
    void layOut();
    void copyMapping();
    void updateDetails();
    QString selectedRouteId() const;

    RouteTableModel *m_routes;
    bool m_standalone;
    QLabel *m_icon;
    QLabel *m_headline;
    QLabel *m_unit;
    QLabel *m_pollInfo;
    QLabel *m_error;
    QLabel *m_traffic;
    QLabel *m_broken;
    Sparkline *m_sparkline;
    QTableView *m_table;
    RouteDetailsPane *m_details;
    QList<TrafficPoint> m_history; // the last snapshot's, for the details pane
};

} // namespace slp::monitor
