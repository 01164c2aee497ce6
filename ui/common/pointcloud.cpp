#include "pointcloud.h"

#include <QChart>
#include <QPaintEngine>
#include <QPainter>
#include <QScatterSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace scalelab::ui {

namespace {

/// The depth of Qt Charts' series items (its series and scatter items are drawn at 4, over
/// the grid and axes and under the legend).
constexpr qreal kSeriesDepth = 4;

} // namespace

PointCloud::PointCloud(QChart* chart, QScatterSeries* series, QValueAxis* x, QValueAxis* y)
    : QGraphicsObject(chart)
    , m_series(series)
    , m_x(x)
    , m_y(y)
    , m_plot(chart->plotArea())
{
    setZValue(kSeriesDepth);
    connect(chart, &QChart::plotAreaChanged, this, &PointCloud::plotAreaChanged);
    for (QValueAxis* axis : {x, y})
        connect(axis, &QValueAxis::rangeChanged, this, [this] { update(); });
    connect(series, &QScatterSeries::markerSizeChanged, this, [this] { update(); });
    connect(series, &QScatterSeries::lightMarkerChanged, this, [this] { update(); });
    connect(series, &QScatterSeries::visibleChanged, this,
            [this] { setVisible(m_series->isVisible()); });
}

void PointCloud::setPoints(const QList<QPointF>& points)
{
    if (points == m_points)
        return;
    m_points = points;
    update();
}

PointCloud* PointCloud::of(const QScatterSeries* series)
{
    if (!series || !series->chart())
        return nullptr;
    for (QGraphicsItem* item : series->chart()->childItems())
        if (auto* cloud = dynamic_cast<PointCloud*>(item); cloud && cloud->m_series == series)
            return cloud;
    return nullptr;
}

QRectF PointCloud::boundingRect() const
{
    // A marker's half beyond the plot is clipped, as Qt Charts clips a series to the plot.
    return m_plot;
}

void PointCloud::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*)
{
    const QImage& marker = m_series->lightMarker();
    const double xSpan = m_x->max() - m_x->min();
    const double ySpan = m_y->max() - m_y->min();
    const double size = m_series->markerSize();
    if (marker.isNull() || m_points.isEmpty() || !(xSpan > 0) || !(ySpan > 0) || !(size > 0)
        || m_plot.isEmpty())
        return;
    painter->save();
    painter->setClipRect(m_plot);
    // On pixels the marker is drawn at its size once and copied to each point; a vector
    // export (SVG, PDF) keeps the oversampled marker itself, so it stays crisp when enlarged.
    const bool pixels = painter->paintEngine()->type() == QPaintEngine::Raster;
    // Device pixels a unit (a scaled export draws more of them than the screen).
    const QTransform& device = painter->deviceTransform();
    const double scale = std::max(std::hypot(device.m11(), device.m12()), 1e-6);
    const QImage& image = pixels ? sprite(size, scale) : marker;
    const double sx = m_plot.width() / xSpan;
    const double sy = m_plot.height() / ySpan;
    for (const QPointF& p : m_points) {
        if (!std::isfinite(p.x()) || !std::isfinite(p.y()))
            continue;
        const double cx = m_plot.left() + (p.x() - m_x->min()) * sx;
        const double cy = m_plot.bottom() - (p.y() - m_y->min()) * sy;
        if (pixels)
            painter->drawImage(QPointF(cx - size / 2, cy - size / 2), image);
        else
            painter->drawImage(QRectF(cx - size / 2, cy - size / 2, size, size), image);
    }
    painter->restore();
}

const QImage& PointCloud::sprite(double size, double scale)
{
    const QImage& marker = m_series->lightMarker();
    if (m_spriteOf != marker.cacheKey() || m_spriteSize != size || m_spriteScale != scale) {
        const int side = std::max(1, static_cast<int>(std::lround(size * scale)));
        m_sprite = marker.scaled(side, side, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
        m_sprite.setDevicePixelRatio(side / size); // drawn `size` units wide
        m_spriteOf = marker.cacheKey();
        m_spriteSize = size;
        m_spriteScale = scale;
    }
    return m_sprite;
}

void PointCloud::plotAreaChanged(const QRectF& plot)
{
    if (plot == m_plot)
        return;
    prepareGeometryChange();
    m_plot = plot;
    update();
}

} // namespace scalelab::ui
