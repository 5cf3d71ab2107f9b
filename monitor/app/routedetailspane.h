// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "status.h"
#include "traffic.h"

#include <QDateTime>
#include <QGroupBox>

class QLabel;
class QPushButton;

namespace slp::monitor {

class Sparkline;

// Under the route table: why the chosen route is in its state, its last failure (sentence,
// time, request id) and a button that copies the request id, to find the request in slp's
// journal (`journalctl -u slp | grep ID`); its broken answers of the hour by reason and its
// TTFB median per poll. The words come from routeDetails() and history.h.
class RouteDetailsPane : public QGroupBox
{
    Q_OBJECT

public:
    explicit RouteDetailsPane(QWidget *parent = nullptr);

    // route null: nothing to explain (the pane says how to choose a route). selected: the
    // user chose it (else it is the worst route, and the title says so).
    void showRoute(const RouteStatus *route, const QDateTime &now,
                   const QList<TrafficPoint> &history, bool selected = true);
    QString requestId() const { return m_requestId; }

private:
    void copyRequestId();

    QLabel *m_title;
    QLabel *m_explanation;
    QLabel *m_failure;
    QLabel *m_when;
    QLabel *m_requestIdLabel;
    QPushButton *m_copy;
    QLabel *m_broken;
    Sparkline *m_ttfb;
    QString m_requestId;
};

} // namespace slp::monitor
