// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "history.h"

#include <QList>
#include <QWidget>

namespace slp::monitor {

// A series over the last hour (history.h: requests per poll, a route's TTFB median), painted
// with QPainter (no chart library): one thin bar per poll, newest at the right, scaled to the
// hour's peak, the alarm share of each bar (failed requests) in red, a gap where a poll has
// no value.
class Sparkline : public QWidget
{
    Q_OBJECT

public:
    explicit Sparkline(QWidget *parent = nullptr);

    void setSeries(const SparkSeries &series);
    QSize sizeHint() const override { return {400, 44}; }

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    SparkSeries m_series;
};

} // namespace slp::monitor
