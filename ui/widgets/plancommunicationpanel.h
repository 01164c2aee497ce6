#pragma once

#include "chartpanel.h"

#include <QColor>
#include <QList>
#include <QStaticText>
#include <QString>
#include <array>
#include <optional>

namespace scalelab::ui {

/// What one GPU sends per optimizer step, axis by axis (tensor, data, pipeline, expert
/// parallelism): one row per axis with its name, a bar as long as its bytes, the figure, and
/// beside it the formula the figure comes from, so the number and its reason are read together.
/// The text shrinks to fit the space it is given (down to a floor; past it, each formula is cut
/// short and the tooltip holds the whole).
class PlanCommunicationPanel : public ChartPanel {
    Q_OBJECT

public:
    struct Axis {
        QString name; ///< "Tensor parallel"
        QString detail; ///< the axis's size today: "t = 8"
        double bytes = 0; ///< sent per GPU per step
        QColor color;
        QString formula; ///< how the figure is computed, in words and symbols
    };

    explicit PlanCommunicationPanel(const QString& name, QWidget* parent = nullptr);

    void setTitle(const QString& title);
    /// One line under the title (what is counted and in which unit).
    void setSubtitle(const QString& subtitle);
    /// Bytes per shown unit and its name ("GiB"): every figure is written in it.
    void setUnit(double bytesPerUnit, const QString& unitName);
    void setAxes(const QList<Axis>& axes);

    const QList<Axis>& axes() const { return m_axes; }
    QString title() const override { return m_title; }
    /// The figure as written beside a bar: "378 GiB", "0 GiB".
    QString valueText(double bytes) const;

    /// Where each part goes for a target of this size; the formulas' scale (1 = the chart
    /// annotation font) and whether any formula had to be cut short.
    struct Layout {
        QRectF title, subtitle;
        QList<QRectF> labels, bars, values, formulas;
        double textScale = 1;
        bool elided = false;
        /// The axis's detail ("d = 8, ZeRO-1") on a line under its name, the bar column being
        /// too narrow for both on one.
        bool detailBelow = false;
        double rowsTop = 0; ///< where the first row starts
        double formulaWidth = 0;
        double leftBlock = 0; ///< a row's least height: its name, bar and figure
    };
    Layout layoutFor(const QRectF& target) const;

    void render(QPainter& painter, const QRectF& target) override;

    /// At least 260 x 220, and as tall as every formula needs, whole, in the smallest type
    /// the panel sets them in, at the panel's present width: the chart area scrolls rather than
    /// the formulas being cut.
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool event(QEvent* event) override;

private:
    /// The height every formula needs whole at `width` (minimumSizeHint).
    double leastHeight(double width) const;
    double measureLeastHeight(double width) const;
    /// Tells the layout when the least height changed.
    void remeasure();
    int m_leastHeight = -1;
    /// leastHeight's last answer, for the width and texts (cacheKey) it was measured at.
    struct LeastHeight {
        double width = 0;
        QString key;
        double height = 0;
    };
    mutable std::optional<LeastHeight> m_least;
    /// The layout and its laid-out texts for one size: most edits change only the bytes, so a
    /// repaint reuses them instead of wrapping every formula again.
    struct Cache {
        QSizeF size;
        QString key;
        Layout layout;
        QStaticText subtitle;
        QList<QStaticText> formulas;
    };
    const Cache& cacheFor(const QSizeF& size) const;
    /// What every bar is measured against: the busiest axis and the widest figure.
    struct Scale {
        double largest = 0;
        double widestValue = 0;
    };
    /// Row `i`: the axis's name and size, its bar and figure, and its formula.
    void drawRow(QPainter& painter, const Cache& cache, int i, const Scale& scale) const;
    QString cacheKey() const;

    QString m_title, m_subtitle, m_unitName = "GiB";
    double m_bytesPerUnit = 1073741824.0;
    QList<Axis> m_axes;
    mutable std::array<Cache, 2> m_cache;
};

} // namespace scalelab::ui
