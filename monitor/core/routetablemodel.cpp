// SPDX-License-Identifier: GPL-3.0-or-later
#include "routetablemodel.h"

#include "statustext.h"

namespace slp::monitor {

namespace {

QString conditionToolTip(const RouteStatus &r)
{
    QString why;
    switch (r.condition) {
    case RouteCondition::Ok:
        return {};
    case RouteCondition::Slow:
        why = QStringLiteral("The last response heads each took over half the route's timeout");
        break;
    case RouteCondition::Stalled:
        why = QStringLiteral("The last responses that started were cut mid-body");
        break;
    case RouteCondition::Failing:
        why = r.conditionReported
                  ? QStringLiteral("The last attempts to the backend failed before a response "
                                   "head (refused, reset, timed out)")
                  : QStringLiteral("SLP's last %1 attempt(s) to the backend failed (refused, "
                                   "reset, timed out); any answer clears it")
                        .arg(r.consecutiveFailures);
        break;
    }
    if (r.entry.lastFailure)
        why += QStringLiteral("\nLast failure: %1").arg(r.entry.lastFailure->what);
    return why;
}

} // namespace

RouteTableModel::RouteTableModel(QObject *parent) : QAbstractTableModel(parent)
{}

void RouteTableModel::setRoutes(const QList<RouteStatus> &routes)
{
    bool sameIds = routes.size() == m_routes.size();
    for (qsizetype i = 0; sameIds && i < routes.size(); ++i)
        sameIds = routes[i].entry.id == m_routes[i].entry.id;
    if (!sameIds) {
        beginResetModel();
        m_routes = routes;
        endResetModel();
        return;
    }
    for (qsizetype i = 0; i < routes.size(); ++i) {
        if (routes[i] == m_routes[i])
            continue;
        m_routes[i] = routes[i];
        emit dataChanged(index(int(i), 0), index(int(i), ColumnCount - 1));
    }
}

int RouteTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_routes.size());
}

int RouteTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

namespace {

QVariant toolTip(const RouteStatus &r, int column)
{
    const CatalogEntry &e = r.entry;
    if (column == RouteTableModel::Context && e.contextLength)
        return QStringLiteral("context_length %1 tokens, as /v1/models gives it to clients")
            .arg(*e.contextLength);
    if (column == RouteTableModel::LastProbe && e.lastProbeAt.isValid())
        return e.lastProbeAt.toLocalTime().toString(Qt::ISODate);
    if (column == RouteTableModel::State && r.state == RouteState::Ambiguous)
        return QStringLiteral("The backend serves zero or several models; SLP keeps the "
                              "last known name");
    if (column == RouteTableModel::State && r.condition != RouteCondition::Ok)
        return conditionToolTip(r);
    if (column >= RouteTableModel::PerMinute && column <= RouteTableModel::TimeToFirstByte)
        return QStringLiteral("Since SLP started: %1").arg(totalsText(r.counters));
    return {};
}

QVariant displayText(const RouteStatus &r, int column)
{
    const CatalogEntry &e = r.entry;
    const auto yesNo = [](bool b) { return b ? QStringLiteral("yes") : QStringLiteral("no"); };
    switch (column) {
    case RouteTableModel::Id:
        return e.id;
    case RouteTableModel::Upstream:
        return r.upstreamName();
    case RouteTableModel::Context:
        return formatContext(e.contextLength);
    case RouteTableModel::State:
        return routeStateText(r);
    case RouteTableModel::PerMinute:
        return formatPerMinute(r.traffic);
    case RouteTableModel::Failed:
        return r.traffic.measured ? QString::number(qRound64(r.traffic.failed))
                                  : QStringLiteral("\u2014");
    case RouteTableModel::InFlight:
        return QString::number(qRound64(r.inflight));
    case RouteTableModel::TimeToFirstByte:
        return formatSeconds(r.traffic.ttfbP50);
    case RouteTableModel::Discovery:
        return e.discovery;
    case RouteTableModel::LastProbe:
        if (e.lastProbe.isEmpty())
            return QStringLiteral("\u2014");
        return e.lastProbeAt.isValid()
                   ? QStringLiteral("%1 at %2")
                         .arg(e.lastProbe, e.lastProbeAt.toLocalTime().toString(u"HH:mm:ss"))
                   : e.lastProbe;
    case RouteTableModel::Timeout:
        return e.timeout;
    case RouteTableModel::Retry:
        return yesNo(e.retry);
    case RouteTableModel::Aggregate:
        return yesNo(e.aggregate);
    default:
        return {};
    }
}

} // namespace

QVariant RouteTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_routes.size())
        return {};
    const RouteStatus &r = m_routes[index.row()];
    switch (role) {
    case StateRole:
        return int(r.state);
    case HealthRole:
        return int(routeHealth(r));
    case ConditionRole: {
        const std::optional<RouteCondition> shown = shownCondition(r);
        return shown ? QVariant(int(*shown)) : QVariant();
    }
    case Qt::TextAlignmentRole:
        if (index.column() == Context ||
            (index.column() >= PerMinute && index.column() <= TimeToFirstByte))
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ToolTipRole:
        return toolTip(r, index.column());
    case Qt::DisplayRole:
        return displayText(r, index.column());
    default:
        return {};
    }
}

QVariant RouteTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Id:
        return QStringLiteral("Model id");
    case Upstream:
        return QStringLiteral("Upstream model");
    case Context:
        return QStringLiteral("Context");
    case State:
        return QStringLiteral("State");
    case PerMinute:
        return QStringLiteral("Req/min");
    case Failed:
        return QStringLiteral("Failed");
    case InFlight:
        return QStringLiteral("In flight");
    case TimeToFirstByte:
        return QStringLiteral("TTFB p50");
    case Discovery:
        return QStringLiteral("Discovery");
    case LastProbe:
        return QStringLiteral("Last probe");
    case Timeout:
        return QStringLiteral("Timeout");
    case Retry:
        return QStringLiteral("Retry");
    case Aggregate:
        return QStringLiteral("Aggregate");
    default:
        return {};
    }
}

} // namespace slp::monitor
