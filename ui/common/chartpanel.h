#pragma once

#include <QString>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QPainter;
QT_END_NAMESPACE

namespace scalelab::ui {

/// One chart of a tab. Whatever draws it (a Qt Charts view or a custom painter), it draws
/// through render(), so the window and every exported file show the same picture. This is the
/// only place that knows about the plotting library: replacing Qt Charts means replacing
/// ChartViewPanel.
class ChartPanel : public QWidget {
    Q_OBJECT

public:
    /// `name` is the file name stem of exports, `<tab>-<chart>` (e.g. "memory-budget").
    ChartPanel(const QString& name, QWidget* parent = nullptr);

    QString name() const { return m_name; }

    /// Lays the chart out for `target.size()` (logical pixels) and draws it into `target`.
    virtual void render(QPainter& painter, const QRectF& target) = 0;

private:
    QString m_name;
};

/// A ChartPanel showing a QChart. Series and axes are made once by the tab; the tab swaps data
/// with QXYSeries::replace() and sets ranges.
class ChartViewPanel : public ChartPanel {
    Q_OBJECT

public:
    ChartViewPanel(const QString& name, QWidget* parent = nullptr);

    QChart* chart() const { return m_chart; }
    QChartView* view() const { return m_view; }

    void render(QPainter& painter, const QRectF& target) override;

protected:
    /// A new application font (projector mode, text size) restyles the chart.
    void changeEvent(QEvent* event) override;

private:
    QChart* m_chart;
    QChartView* m_view;
};

} // namespace scalelab::ui
