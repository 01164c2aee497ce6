#include "pointmarker.h"

#include <QChart>
#include <QLogValueAxis>
#include <QPainter>
#include <QScatterSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <functional>

namespace scalelab::ui {

namespace {

/// The depth of Qt Charts' series items (drawn at 4, over the grid and axes, under the legend).
constexpr qreal kSeriesDepth = 4;

/// Where `value` falls along `axis`, from 0 at its minimum to 1 at its maximum; nothing for an
/// axis of another kind, an empty range, or a value a log axis cannot show.
std::optional<double> shareAlong(const QAbstractAxis* axis, double value)
{
    if (const auto* linear = qobject_cast<const QValueAxis*>(axis)) {
        const double span = linear->max() - linear->min();
        if (!(span > 0))
            return std::nullopt;
        return (value - linear->min()) / span;
    }
    if (const auto* log = qobject_cast<const QLogValueAxis*>(axis)) {
        if (!(log->min() > 0) || !(log->max() > log->min()) || !(value > 0))
            return std::nullopt;
        return std::log(value / log->min()) / std::log(log->max() / log->min());
    }
    return std::nullopt;
}

/// Calls `moved` whenever `axis`'s range changes.
void followRange(QAbstractAxis* axis, QObject* receiver, const std::function<void()>& moved)
{
    if (auto* linear = qobject_cast<QValueAxis*>(axis))
        QObject::connect(linear, &QValueAxis::rangeChanged, receiver, moved);
    else if (auto* log = qobject_cast<QLogValueAxis*>(axis))
        QObject::connect(log, &QLogValueAxis::rangeChanged, receiver, moved);
}

} // namespace

PointMarker::PointMarker(QChart* chart, QScatterSeries* series)
    : QGraphicsObject(chart)
    , m_chart(chart)
    , m_series(series)
{
    setZValue(kSeriesDepth);
    for (QAbstractAxis* axis : series->attachedAxes()) {
        (axis->orientation() == Qt::Horizontal ? m_x : m_y) = axis;
        followRange(axis, this, [this] { place(); });
    }
    connect(chart, &QChart::plotAreaChanged, this, &PointMarker::place);
    connect(series, &QScatterSeries::markerSizeChanged, this, &PointMarker::place);
    for (auto changed : {&QScatterSeries::colorChanged, &QScatterSeries::borderColorChanged})
        connect(series, changed, this, [this] { update(); });
    connect(series, &QScatterSeries::visibleChanged, this, &PointMarker::place);
    place();
}

void PointMarker::setPoint(std::optional<QPointF> point)
{
    if (point == m_point)
        return;
    m_point = point;
    place();
}

PointMarker* PointMarker::of(const QScatterSeries* series)
{
    if (!series || !series->chart())
        return nullptr;
    for (QGraphicsItem* item : series->chart()->childItems())
        if (auto* marker = dynamic_cast<PointMarker*>(item); marker && marker->m_series == series)
            return marker;
    return nullptr;
}

void PointMarker::place()
{
    const double size = m_series->markerSize();
    if (size != m_size) {
        prepareGeometryChange();
        m_size = size;
    }
    const QRectF plot = m_chart->plotArea();
    const std::optional<double> sx = m_point ? shareAlong(m_x, m_point->x()) : std::nullopt;
    const std::optional<double> sy = m_point ? shareAlong(m_y, m_point->y()) : std::nullopt;
    if (!sx || !sy || !m_series->isVisible() || plot.isEmpty()) {
        setVisible(false);
        return;
    }
    const QPointF at(plot.left() + *sx * plot.width(), plot.bottom() - *sy * plot.height());
    // Off the plot the point is not drawn, as Qt Charts leaves out a series' points there.
    setVisible(plot.adjusted(-0.5, -0.5, 0.5, 0.5).contains(at));
    setPos(at);
    update();
}

QRectF PointMarker::boundingRect() const
{
    const double pen = m_series->pen().widthF();
    const double half = m_size / 2 + std::max(1.0, pen);
    return {-half, -half, 2 * half, 2 * half};
}

void PointMarker::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*)
{
    if (!m_point || !(m_size > 0))
        return;
    painter->save();
    // Half a marker beyond the plot's edge is cut off, as Qt Charts clips a series to the plot.
    painter->setClipRect(mapRectFromParent(m_chart->plotArea()));
    painter->setPen(m_series->pen());
    painter->setBrush(m_series->brush());
    const double r = m_size / 2;
    const QRectF box(-r, -r, 2 * r, 2 * r);
    if (m_series->markerShape() == QScatterSeries::MarkerShapeRectangle)
        painter->drawRect(box);
    else
        painter->drawEllipse(box);
    painter->restore();
}

} // namespace scalelab::ui
