// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "traffic.h"

#include <QList>
#include <QWidget>

namespace slp::monitor {

// Requests per poll over the last hour, painted with QPainter (no chart library): one thin
// bar per poll, newest at the right, scaled to the hour's peak, the failed share of each bar
// in red.
class Sparkline : public QWidget
{
    Q_OBJECT

public:
    explicit Sparkline(QWidget *parent = nullptr);

    void setHistory(const QList<TrafficPoint> &history);
    QSize sizeHint() const override { return {400, 44}; }

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    QList<TrafficPoint> m_history;
};

} // namespace slp::monitor
