#pragma once

#include <QGraphicsObject>
#include <QImage>
#include <QList>
#include <QPointF>
#include <QRectF>

QT_BEGIN_NAMESPACE
class QChart;
class QScatterSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace scalelab::ui {

/// The points of a scatter series with thousands of points, drawn by one graphics item.
///
/// Qt Charts gives every point of a QScatterSeries a graphics item of its own, and moves each
/// of them whenever the points change, even when the points are drawn as light markers (one
/// image each) and the items are hidden: at 2 x 2,000 points that alone took a few
/// milliseconds of every slider step. A cloud keeps the points itself and paints the series'
/// light marker at each one, mapped through the two value axes onto the plot area, clipped to
/// it, in one pass. The series stays in the chart, without points, for its legend entry, its
/// name and its marker size (a lesson's emphasis enlarges it); the cloud follows those.
///
/// Made after the series drawn below it and before those drawn over it: items of one depth are
/// painted in the order they were made. An item of the chart's scene, so it shows in every
/// export as on screen.
class PointCloud : public QGraphicsObject {
public:
    /// Draws `series`' points, which must have a light marker and axes `x` and `y`.
    PointCloud(QChart* chart, QScatterSeries* series, QValueAxis* x, QValueAxis* y);

    void setPoints(const QList<QPointF>& points);
    const QList<QPointF>& points() const { return m_points; }
    QScatterSeries* series() const { return m_series; }
    /// The cloud drawing `series`' points, or null.
    static PointCloud* of(const QScatterSeries* series);

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    void plotAreaChanged(const QRectF& plot);
    /// The series' marker at `size` units drawn `scale` device pixels a unit, made once: drawn
    /// at its own size it is copied, not resampled, at each of thousands of points.
    const QImage& sprite(double size, double scale);

    QScatterSeries* m_series;
    QValueAxis* m_x;
    QValueAxis* m_y;
    QRectF m_plot;
    QList<QPointF> m_points;
    QImage m_sprite;
    qint64 m_spriteOf = 0; ///< the cacheKey of the marker m_sprite was made from
    double m_spriteSize = 0;
    double m_spriteScale = 0;
};

} // namespace scalelab::ui
