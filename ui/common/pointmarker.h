#pragma once

#include <QGraphicsObject>
#include <QPointF>
#include <QRectF>
#include <optional>

QT_BEGIN_NAMESPACE
class QAbstractAxis;
class QChart;
class QScatterSeries;
QT_END_NAMESPACE

namespace scalelab::ui {

/// The one point of a scatter series (a chart's "Yours" point), drawn by an item of its own.
///
/// Qt Charts bounds a scatter series' item by the whole plot area, so a step that moves its
/// one point repaints the plot and strokes every curve on it again, though none changed. The
/// marker is bounded by itself: a move repaints where it was and where it goes. The series
/// stays in the chart, without points, for its legend entry, its name, its colours and its
/// marker size (a lesson's emphasis enlarges it); the marker follows those.
///
/// Drawn over the series (made after them, at their depth), clipped to the plot as Qt Charts
/// clips a series; an item of the chart's scene, so it shows in every export as on screen.
class PointMarker : public QGraphicsObject {
public:
    /// Draws `series`' point; the series must be attached to a value or log axis each way.
    PointMarker(QChart* chart, QScatterSeries* series);

    /// The point, in the axes' values; none hides the marker.
    void setPoint(std::optional<QPointF> point);
    std::optional<QPointF> point() const { return m_point; }
    QScatterSeries* series() const { return m_series; }
    /// The marker drawing `series`' point, or null.
    static PointMarker* of(const QScatterSeries* series);

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    /// Puts the marker where its point is on the plot as it is now.
    void place();

    QChart* m_chart;
    QScatterSeries* m_series;
    QAbstractAxis* m_x = nullptr;
    QAbstractAxis* m_y = nullptr;
    std::optional<QPointF> m_point;
    double m_size = 0; ///< the marker size the bounds were given for
};

} // namespace scalelab::ui
