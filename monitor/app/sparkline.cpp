// SPDX-License-Identifier: GPL-3.0-or-later
#include "sparkline.h"

#include <QPainter>

#include <algorithm>

namespace slp::monitor {

Sparkline::Sparkline(QWidget *parent) : QWidget(parent)
{
    setMinimumHeight(36);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void Sparkline::setSeries(const SparkSeries &series)
{
    if (series == m_series)
        return;
    m_series = series;
    update();
}

void Sparkline::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, false);
    const QRect frame = rect().adjusted(0, 0, -1, -1);
    p.setPen(palette().color(QPalette::Mid));
    p.setBrush(palette().color(QPalette::Base));
    p.drawRect(frame);

    const QFontMetrics fm = fontMetrics();
    const QList<SparkBar> &bars = m_series.bars;
    double peak = 0;
    for (const SparkBar &bar : bars)
        peak = std::max(peak, bar.present ? bar.value : 0.0);
    const QRect plot = frame.adjusted(4, fm.height() + 2, -4, -3);
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(frame.adjusted(5, 1, -5, 0), Qt::AlignLeft | Qt::AlignTop, m_series.label);
    if (bars.isEmpty() || plot.height() < 4 || plot.width() < 4)
        return;

    // One slot per poll, newest at the right: 4 px while an hour fits, narrower beyond.
    const qsizetype n = bars.size();
    const double slot = std::min(4.0, double(plot.width()) / double(std::max<qsizetype>(1, n)));
    const int barWidth = std::max(1, int(slot) - (slot >= 3 ? 1 : 0));
    const QColor ok(0x2e, 0x7d, 0x32);
    const QColor alarm(0xc6, 0x28, 0x28);
    p.setPen(Qt::NoPen);
    // The baseline, so an idle hour is a visible flat line rather than nothing.
    p.setBrush(palette().color(QPalette::Mid));
    p.drawRect(QRect(plot.left(), plot.bottom(), plot.width(), 1));
    for (qsizetype i = 0; i < n && peak > 0; ++i) {
        const SparkBar &bar = bars[i];
        if (!bar.present)
            continue;
        const int x = plot.right() + 1 - int(double(n - i) * slot);
        const int height =
            std::max(bar.value > 0 ? 1 : 0, int(bar.value / peak * (plot.height() - 1)));
        const int alarmHeight =
            bar.alarm > 0 ? std::max(1, int(bar.alarm / peak * (plot.height() - 1))) : 0;
        p.setBrush(ok);
        p.drawRect(QRect(x, plot.bottom() - height, barWidth, height));
        if (alarmHeight > 0) {
            p.setBrush(alarm);
            p.drawRect(QRect(x, plot.bottom() - std::min(alarmHeight, height), barWidth,
                             std::min(alarmHeight, height)));
        }
    }
}

} // namespace slp::monitor
