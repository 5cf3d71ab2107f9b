// SPDX-License-Identifier: GPL-3.0-or-later
#include "routedetailspane.h"

#include "history.h"
#include "routedetails.h"
#include "sparkline.h"

#include <QApplication>
#include <QClipboard>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace slp::monitor {

RouteDetailsPane::RouteDetailsPane(QWidget *parent)
    : QGroupBox(QStringLiteral("Route details"), parent), m_title(new QLabel(this)),
      m_explanation(new QLabel(this)), m_failure(new QLabel(this)), m_when(new QLabel(this)),
      m_requestIdLabel(new QLabel(this)),
      m_copy(new QPushButton(QStringLiteral("Copy request id"), this)), m_broken(new QLabel(this)),
      m_ttfb(new Sparkline(this))
{
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    // SLP's sentences and a client's request id are text, never markup.
    for (QLabel *label : {m_title, m_explanation, m_failure, m_when, m_requestIdLabel, m_broken}) {
        label->setTextFormat(Qt::PlainText);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    m_explanation->setWordWrap(true);
    m_failure->setWordWrap(true);
    m_copy->setToolTip(QStringLiteral("Copy the failed request's X-Request-Id, to find it in "
                                      "slp's journal"));
    connect(m_copy, &QPushButton::clicked, this, &RouteDetailsPane::copyRequestId);

    auto *form = new QFormLayout; // owned by the layout below
    form->addRow(QStringLiteral("Last failure:"), m_failure);
    form->addRow(QStringLiteral("When:"), m_when);
    auto *idRow = new QHBoxLayout;
    idRow->addWidget(m_requestIdLabel, 1);
    idRow->addWidget(m_copy);
    form->addRow(QStringLiteral("Request id:"), idRow);
    form->addRow(QStringLiteral("Broken, last hour:"), m_broken);
    m_ttfb->setToolTip(QStringLiteral("The route's time-to-first-byte median of each poll "
                                      "interval over the last hour (a gap: no answer then)"));
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    layout->addWidget(m_explanation);
    layout->addLayout(form);
    layout->addWidget(m_ttfb);
    showRoute(nullptr, {}, {});
}

void RouteDetailsPane::showRoute(const RouteStatus *route, const QDateTime &now,
                                 const QList<TrafficPoint> &history, bool selected)
{
    setTitle(route && !selected
                 ? QStringLiteral("Route details: the worst route (select a row for another)")
                 : QStringLiteral("Route details"));
    if (!route) {
        m_title->setText(QStringLiteral("Every route is ok"));
        m_explanation->setText(QStringLiteral("Select a route (or double-click it) to see its "
                                              "last failure."));
        m_failure->setText(QStringLiteral("\u2014"));
        m_when->setText(QStringLiteral("\u2014"));
        m_requestId.clear();
        m_broken->setText(QStringLiteral("\u2014"));
        m_ttfb->setSeries({{}, QStringLiteral("TTFB p50 per poll, last hour")});
    } else {
        const RouteDetails d = routeDetails(*route, now);
        m_title->setText(d.title);
        m_explanation->setText(d.explanation);
        m_failure->setText(d.failure);
        m_when->setText(d.hasFailure ? d.when : QStringLiteral("\u2014"));
        m_requestId = d.requestId;
        m_broken->setText(brokenText(brokenByReason(history, route->entry.id)));
        m_ttfb->setSeries(ttfbSeries(history, route->entry.id));
    }
    m_requestIdLabel->setText(m_requestId.isEmpty() ? QStringLiteral("\u2014") : m_requestId);
    m_copy->setEnabled(!m_requestId.isEmpty());
}

void RouteDetailsPane::copyRequestId()
{
    if (!m_requestId.isEmpty())
        QApplication::clipboard()->setText(m_requestId);
}

} // namespace slp::monitor
