// SPDX-License-Identifier: GPL-3.0-or-later
#include "monitorwindow.h"

#include "history.h"
#include "routedetails.h"
#include "routedetailspane.h"
#include "routetablemodel.h"
#include "sparkline.h"
#include "statusicons.h"
#include "statustext.h"

#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIdentityProxyModel>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace slp::monitor {

namespace {

// Adds each row's state icon to the id column: the pure model stays free of QtGui.
class StateIconProxy : public QIdentityProxyModel
{
public:
    using QIdentityProxyModel::QIdentityProxyModel;

    QVariant data(const QModelIndex &index, int role) const override
    {
        if (role == Qt::DecorationRole && index.column() == RouteTableModel::State) {
            const QVariant condition =
                QIdentityProxyModel::data(index, RouteTableModel::ConditionRole);
            if (condition.isValid())
                return routeConditionIcon(RouteCondition(condition.toInt()));
            const QVariant health = QIdentityProxyModel::data(index, RouteTableModel::HealthRole);
            if (health.isValid())
                return healthIcon(Health(health.toInt()));
        }
        return QIdentityProxyModel::data(index, role);
    }
};

} // namespace

MonitorWindow::MonitorWindow(RouteTableModel *routes, bool standalone, QWidget *parent)
    : QWidget(parent), m_routes(routes), m_standalone(standalone), m_icon(new QLabel(this)),
      m_headline(new QLabel(this)), m_unit(new QLabel(this)), m_pollInfo(new QLabel(this)),
      m_error(new QLabel(this)), m_traffic(new QLabel(this)), m_broken(new QLabel(this)),
      m_sparkline(new Sparkline(this)), m_table(new QTableView(this)),
      m_details(new RouteDetailsPane(this))
{
    setWindowTitle(QStringLiteral("SLP monitor"));
    setWindowIcon(healthIcon(Health::Ok));
    setUpLabels();
    setUpTable();
    layOut();
    resize(1240, 660);
}

void MonitorWindow::setUpLabels()
{
    QFont bold = m_headline->font();
    bold.setBold(true);
    m_headline->setFont(bold);
    m_headline->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // What SLP reports (names a backend chose, error text) is shown as it is, never as markup.
    for (QLabel *label : {m_headline, m_unit, m_pollInfo, m_error, m_traffic, m_broken})
        label->setTextFormat(Qt::PlainText);
    m_error->setStyleSheet(QStringLiteral("color: #c62828"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_unit->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_unit->setToolTip(QStringLiteral("What systemd says of the unit (ActiveState, SubState and "
                                      "slp's STATUS= line)"));
    m_unit->hide();
    m_broken->setToolTip(QStringLiteral("Answers whose head reached the client and whose body "
                                        "did not end cleanly (slp_responses_broken_total), over "
                                        "every route"));
    m_sparkline->setToolTip(QStringLiteral("Requests per poll over the last hour (red: failed)"));
}

void MonitorWindow::setUpTable()
{
    auto *proxy = new StateIconProxy(this);
    proxy->setSourceModel(m_routes);
    m_table->setModel(proxy);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    // Sized to their contents on every change: "ok at ..." becomes "ambiguous at ..." in
    // place, and a truncated state is the one thing this table must not do.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    // The pane follows the selection; a double-click selects too, so either way works.
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &MonitorWindow::updateDetails);
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex &index) {
        m_table->selectRow(index.row());
        updateDetails();
    });
}

void MonitorWindow::layOut()
{
    auto *refresh = new QPushButton(QStringLiteral("Refresh"), this);
    auto *copy = new QPushButton(QStringLiteral("Copy mapping"), this);
    copy->setToolTip(QStringLiteral("Copy the model id \u2192 upstream model table"));
    auto *settings = new QPushButton(QStringLiteral("Settings\u2026"), this);
    connect(refresh, &QPushButton::clicked, this, &MonitorWindow::refreshRequested);
    connect(copy, &QPushButton::clicked, this, &MonitorWindow::copyMapping);
    connect(settings, &QPushButton::clicked, this, &MonitorWindow::settingsRequested);

    auto *header = new QHBoxLayout; // owned by the main layout
    auto *titles = new QVBoxLayout;
    titles->addWidget(m_headline);
    titles->addWidget(m_unit);
    header->addWidget(m_icon);
    header->addLayout(titles, 1);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_pollInfo, 1);
    buttons->addWidget(refresh);
    buttons->addWidget(copy);
    buttons->addWidget(settings);
    if (m_standalone) {
        auto *quit = new QPushButton(QStringLiteral("Quit"), this);
        connect(quit, &QPushButton::clicked, this, &MonitorWindow::quitRequested);
        buttons->addWidget(quit);
    }
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(header);
    layout->addWidget(m_error);
    layout->addWidget(m_traffic);
    layout->addWidget(m_broken);
    layout->addWidget(m_sparkline);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_details);
    layout->addLayout(buttons);
}

void MonitorWindow::showWaiting(const QUrl &url)
{
    m_icon->setPixmap(waitingIcon().pixmap(32, 32));
    m_headline->setText(QStringLiteral("Polling SLP at %1\u2026").arg(url.toString()));
    m_pollInfo->clear();
    m_traffic->clear();
    m_broken->clear();
    m_history.clear();
    m_sparkline->setSeries(requestSeries({}));
    m_error->hide();
}

void MonitorWindow::showStatus(const StatusSnapshot &s)
{
    m_icon->setPixmap(healthIcon(s.health).pixmap(32, 32));
    setWindowIcon(healthIcon(s.health));
    m_headline->setText(QStringLiteral("SLP %1 \u2014 %2").arg(s.baseUrl.toString(), headline(s)));
    m_traffic->setText(trafficHeadline(s));
    m_history = s.history;
    m_sparkline->setSeries(requestSeries(s.history));
    m_broken->setText(QStringLiteral("Broken responses, last hour: %1")
                          .arg(brokenText(brokenByReason(s.history))));
    updateDetails();
    m_pollInfo->setText(QStringLiteral("Last poll: %1")
                            .arg(s.polledAt.toLocalTime().toString(u"yyyy-MM-dd HH:mm:ss")));
    if (s.error.isEmpty()) {
        m_error->hide();
    } else {
        m_error->setText(
            s.reachable ? s.error : QStringLiteral("%1 (routes below as last seen)").arg(s.error));
        m_error->show();
    }
}

void MonitorWindow::showUnit(const std::optional<UnitStatus> &unit)
{
    m_unit->setVisible(unit.has_value());
    m_unit->setText(unit ? unitHeaderText(*unit) : QString());
}

QString MonitorWindow::selectedRouteId() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty() || rows.first().row() >= m_routes->routes().size())
        return {};
    return m_routes->routes().at(rows.first().row()).entry.id;
}

void MonitorWindow::updateDetails()
{
    const QString selected = selectedRouteId();
    const QString id = routeToExplain(m_routes->routes(), selected);
    const RouteStatus *shown = nullptr;
    for (const RouteStatus &r : m_routes->routes())
        if (r.entry.id == id)
            shown = &r;
    m_details->showRoute(shown, QDateTime::currentDateTimeUtc(), m_history,
                         !selected.isEmpty() && selected == id);
}

void MonitorWindow::copyMapping()
{
    QApplication::clipboard()->setText(mappingText(m_routes->routes()));
}

void MonitorWindow::closeEvent(QCloseEvent *event)
{
    if (m_standalone) {
        emit quitRequested();
        event->accept();
        return;
    }
    hide();
    event->ignore();
}

} // namespace slp::monitor
