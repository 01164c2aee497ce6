#pragma once

#include <QBrush>
#include <QHash>
#include <QPen>
#include <QString>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QGraphicsItem;
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
    /// The chart's title as plain words (what a screen reader says of it); empty for none.
    virtual QString title() const { return {}; }

    /// Lays the chart out for `target.size()` (logical pixels) and draws it into `target`.
    virtual void render(QPainter& painter, const QRectF& target) = 0;

protected:
    /// For a panel made of widgets (a table, labels): draws them as they are laid out now,
    /// scaled to fit `target`, on the chart background.
    void renderWidgets(QPainter& painter, const QRectF& target);

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
    QString title() const override;
    /// Sets the chart's title, only when its words differ from those shown (a wrapped title
    /// read as one line): set again, it would lay the chart out twice, once as given and once
    /// wrapped again. True when it was set.
    bool setTitle(const QString& title);

    /// restyleChart() over the tab's own looks, then the emphasised series again: for a new
    /// font, line scale or background.
    void restyle();

    /// Draws the series whose object name is `key` (a QXYSeries or a QBarSet: the keys of
    /// document::highlightableSeries) stronger than the rest: a line twice as thick, markers
    /// larger, bars outlined; every other series of the chart faded. An empty key, or one the
    /// chart does not have, draws every series as the tab styled it. Returns whether the chart
    /// has the series. Idempotent; call it again after the tab restyles a series itself.
    bool emphasiseSeries(const QString& key);
    QString emphasisedSeries() const { return m_emphasis; }

    /// Keeps each axis line, grid line and tick mark of the chart as a picture of the screen's
    /// pixels, drawn again only when it moves or changes: a step that redraws the plot then
    /// copies them instead of blending every line anew (the memory tab's batch step: 21.5 M
    /// instructions instead of 14.2 M). Call it after the chart is laid out (an axis makes its
    /// items then); items it has not seen are drawn as usual. The tick labels stay drawn: kept as
    /// pictures, the value axes' labels came out blank after the window changed size.
    void cacheAxisItems();

protected:
    /// Indexes the chart's scene while a font or palette change passes through it.
    bool eventFilter(QObject* watched, QEvent* event) override;
    /// A new application font (projector mode, text size) restyles the chart.
    void changeEvent(QEvent* event) override;

private:
    /// How a series or bar set is drawn: its pen, its fill, its marker size (scatter only).
    struct Look {
        QPen pen;
        QBrush brush;
        qreal markerSize = 0;
        friend bool operator==(const Look&, const Look&) = default;
    };
    struct Styled {
        Look plain; ///< as the tab made it
        Look shown; ///< as emphasiseSeries drew it
    };
    static Look lookOf(const QObject* item);
    static void setLook(QObject* item, const Look& look);
    QList<QObject*> styledItems() const;
    bool applyEmphasis();
    /// Lays the chart out for its present geometry with its texts fitted to it (render).
    void settleTexts();
    void restorePlainLooks();
    /// The chart's axis lines, grid lines and tick marks (cacheAxisItems).
    QList<QGraphicsItem*> axisItems() const;

    QChart* m_chart;
    QChartView* m_view;
    QString m_emphasis;
    QHash<QObject*, Styled> m_styled;
};

} // namespace scalelab::ui
