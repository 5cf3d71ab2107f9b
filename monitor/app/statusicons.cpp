// SPDX-License-Identifier: GPL-3.0-or-later
#include "statusicons.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>
#include <QPolygonF>

#include <cmath>
#include <functional>

namespace slp::monitor {

namespace {

using Painter = std::function<void(QPainter &)>;

QIcon paintIcon(const Painter &paint)
{
    QIcon icon;
    for (const int size : {16, 22, 24, 32, 48, 64, 128}) {
        QPixmap pixmap(size, size);
        pixmap.fill(Qt::transparent);
        QPainter p(&pixmap);
        p.setRenderHint(QPainter::Antialiasing);
        p.scale(size / 64.0, size / 64.0); // the SVGs' viewBox is 0 0 64 64
        paint(p);
        p.end();
        icon.addPixmap(pixmap);
    }
    return icon;
}

QPen strokePen(const char *colour, qreal width)
{
    QPen pen{QColor(QLatin1String(colour)), width};
    pen.setCapStyle(Qt::RoundCap);
    pen.setJoinStyle(Qt::RoundJoin);
    return pen;
}

void paintOk(QPainter &p)
{
    p.setPen(strokePen("#1b5e20", 2));
    p.setBrush(QColor(QLatin1String("#2e7d32")));
    p.drawEllipse(QPointF(32, 32), 28, 28);
    p.setPen(strokePen("#ffffff", 7));
    p.setBrush(Qt::NoBrush);
    p.drawPolyline(QPolygonF{QPointF(18, 33), QPointF(28, 43), QPointF(46, 22)});
}

void paintAttention(QPainter &p)
{
    p.setPen(strokePen("#8d6e00", 2));
    p.setBrush(QColor(QLatin1String("#f9a825")));
    p.drawPolygon(QPolygonF{QPointF(32, 5), QPointF(61, 57), QPointF(3, 57)});
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(QLatin1String("#212121")));
    p.drawRoundedRect(QRectF(28.5, 20, 7, 22), 3, 3);
    p.drawEllipse(QPointF(32, 50), 4, 4);
}

QPolygonF octagon()
{
    // A regular octagon with flat top (vertices at 22.5° + k·45°), radius 29.
    QPolygonF poly;
    for (int k = 0; k < 8; ++k) {
        const double a = (22.5 + 45.0 * k) * M_PI / 180.0;
        poly << QPointF(32 + 29 * std::cos(a), 32 + 29 * std::sin(a));
    }
    return poly;
}

void paintAlert(QPainter &p)
{
    p.setPen(strokePen("#7f0000", 2));
    p.setBrush(QColor(QLatin1String("#c62828")));
    p.drawPolygon(octagon());
    p.setPen(strokePen("#ffffff", 7));
    p.drawLine(QPointF(21, 21), QPointF(43, 43));
    p.drawLine(QPointF(43, 21), QPointF(21, 43));
}

void paintSlow(QPainter &p)
{
    p.setPen(strokePen("#8d6e00", 2));
    p.setBrush(QColor(QLatin1String("#f9a825")));
    p.drawEllipse(QPointF(32, 32), 28, 28);
    p.setPen(strokePen("#212121", 6));
    p.drawPolyline(QPolygonF{QPointF(32, 14), QPointF(32, 32), QPointF(45, 40)});
}

void paintStalled(QPainter &p)
{
    p.setPen(strokePen("#8d6e00", 2));
    p.setBrush(QColor(QLatin1String("#f9a825")));
    p.drawRoundedRect(QRectF(5, 5, 54, 54), 10, 10);
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(QLatin1String("#212121")));
    p.drawRoundedRect(QRectF(20, 17, 8, 30), 2, 2);
    p.drawRoundedRect(QRectF(36, 17, 8, 30), 2, 2);
}

void paintFailing(QPainter &p)
{
    p.setPen(strokePen("#8c2f00", 2));
    p.setBrush(QColor(QLatin1String("#e65100")));
    p.drawEllipse(QPointF(32, 32), 28, 28);
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(QLatin1String("#ffffff")));
    p.drawRoundedRect(QRectF(14, 27, 36, 10), 3, 3);
}

void paintWaiting(QPainter &p)
{
    p.setPen(strokePen("#757575", 6));
    p.setBrush(Qt::NoBrush);
    p.drawEllipse(QPointF(32, 32), 26, 26);
}

} // namespace

QIcon healthIcon(Health health)
{
    // Painted once per state: the tray asks on every poll.
    static const QIcon ok = paintIcon(paintOk);
    static const QIcon attention = paintIcon(paintAttention);
    static const QIcon alert = paintIcon(paintAlert);
    switch (health) {
    case Health::Ok:
        return ok;
    case Health::Attention:
        return attention;
    case Health::Alert:
        return alert;
    }
    return alert;
}

QIcon routeStateIcon(RouteState state)
{
    return healthIcon(healthOf(state));
}

QIcon routeConditionIcon(RouteCondition condition)
{
    static const QIcon slow = paintIcon(paintSlow);
    static const QIcon stalled = paintIcon(paintStalled);
    static const QIcon failing = paintIcon(paintFailing);
    switch (condition) {
    case RouteCondition::Ok:
        return healthIcon(Health::Ok);
    case RouteCondition::Slow:
        return slow;
    case RouteCondition::Stalled:
        return stalled;
    case RouteCondition::Failing:
        return failing;
    }
    return failing;
}

QIcon routeIcon(const RouteStatus &route)
{
    const std::optional<RouteCondition> shown = shownCondition(route);
    return shown ? routeConditionIcon(*shown) : healthIcon(routeHealth(route));
}

QIcon waitingIcon()
{
    static const QIcon waiting = paintIcon(paintWaiting);
    return waiting;
}

} // namespace slp::monitor
