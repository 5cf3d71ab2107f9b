// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "status.h"

#include <QAbstractTableModel>
#include <QList>

namespace slp::monitor {

// The window's route table: one row per route, the debug catalog's fields and the traffic of
// the last poll interval as columns.
// Qt Core only (the state icon is added by the widgets layer through HealthRole and
// ConditionRole).
class RouteTableModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column
    {
        Id,
        Upstream,
        Context,
        State,
        PerMinute,
        Failed,
        InFlight,
        TimeToFirstByte,
        Discovery,
        LastProbe,
        Timeout,
        Retry,
        Aggregate,
        ColumnCount
    };
    static constexpr int StateRole = Qt::UserRole + 1;  // RouteState as int
    static constexpr int HealthRole = Qt::UserRole + 2; // routeHealth() as int
    // shownCondition() as int; invalid when the health icon is the one to show.
    static constexpr int ConditionRole = Qt::UserRole + 3;

    explicit RouteTableModel(QObject *parent = nullptr);

    // Keeps rows whose id stays, so a selection survives a poll that changed nothing.
    void setRoutes(const QList<RouteStatus> &routes);
    const QList<RouteStatus> &routes() const { return m_routes; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QList<RouteStatus> m_routes;
};

} // namespace slp::monitor
