#pragma once

#include "chartpanel.h"

#include <Eigen/Core>
#include <QImage>
#include <QStringList>
#include <functional>
#include <memory>
#include <optional>

namespace scalelab::ui {

/// A matrix drawn as coloured cells with a colour bar: rows top to bottom, columns left to
/// right. Small matrices get their values written in the cells; large ones (an FP8 error map
/// of 4096 x 4096) are pooled to the pixels they are drawn on (at most kMaxImageSide a side) by
/// the largest value of each pool, so a single bad value still shows. Hovering a cell tells its
/// row, column and value.
class HeatmapPanel : public ChartPanel {
    Q_OBJECT

public:
    static constexpr int kMaxImageSide = 1024;

    explicit HeatmapPanel(const QString& name, QWidget* parent = nullptr);

    void setTitle(const QString& title);
    QString title() const override { return m_title; }
    /// Axis titles with units: x along the columns, y down the rows.
    void setAxisTitles(const QString& x, const QString& y);
    /// The colour bar's title with the unit, e.g. "tokens" or "|error|".
    void setColorBarTitle(const QString& title);
    /// Labels for rows and columns; by default their indices.
    void setRowLabels(const QStringList& labels);
    void setColumnLabels(const QStringList& labels);
    /// Outlines the diagonal cells (source == destination).
    void setMarkDiagonal(bool mark);
    /// Colours on a log10 scale of the value (zero and below take the bottom colour).
    void setLogScale(bool log);
    /// How values are written in cells and on the colour bar (default: three significant digits).
    void setValueFormat(const std::function<QString(double)>& format);
    /// A fixed colour range; by default min..max of the matrix.
    void setRange(std::optional<std::pair<double, double>> range);

    void setMatrix(const Eigen::MatrixXd& values);
    /// Shows `values` without copying them (a million-cell map the tab's worker made).
    void setMatrix(std::shared_ptr<const Eigen::MatrixXd> values);
    const Eigen::MatrixXd& matrix() const { return *m_values; }

    /// The colour a value gets with the current range and scale.
    QColor colorFor(double value) const;
    /// The range colours run over (min, max).
    std::pair<double, double> colorRange() const;
    /// Whether values are written in the cells at this size.
    bool writesValues(const QSizeF& size) const;

    void render(QPainter& painter, const QRectF& target) override;

    /// The least size at which every text is whole and the plot still shows a pattern: the
    /// tick labels, titles and colour bar in the charts' present type, around a plot at least
    /// kMinPlotLines lines of tick type a side and as long as the longest word of the axis
    /// titles that run along it.
    QSize minimumSizeHint() const override;
    static constexpr int kMinPlotLines = 4;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct Layout {
        QRectF title, plot, bar, xTitle, yTitle;
        int barTitleLines = 1; ///< the colour bar's title wraps too, at the bar's right
    };
    Layout layoutFor(const QRectF& target) const;
    /// The matrix's own range (colorRange() without a fixed one): a scan of every cell.
    std::pair<double, double> findRange() const;
    /// The widest row label (at least "0000") in `font`, measured once per labels and font.
    double rowLabelWidth(const QFont& font) const;
    // The steps of render(): the cells (with their values and the diagonal when asked), the row
    // and column labels, the axis titles, and the colour bar with its ticks and title.
    void renderCells(QPainter& painter, const Layout& l, const QSizeF& size);
    void renderCellLabels(QPainter& painter, const Layout& l) const;
    void renderAxisTitles(QPainter& painter, const Layout& l) const;
    void renderColorBar(QPainter& painter, const Layout& l, const QRectF& target) const;
    void rebuildImage();
    /// After a text changed: repaint, and ask for another layout if the least size moved.
    void textsChanged();
    const QImage& imageFor(const QSize& pixels);
    double scaled(double value, std::pair<double, double> range) const;

    QString m_title, m_xTitle, m_yTitle, m_barTitle;
    QStringList m_rowLabels, m_columnLabels;
    bool m_markDiagonal = false;
    bool m_log = false;
    std::function<QString(double)> m_format;
    std::optional<std::pair<double, double>> m_fixedRange;
    /// colorRange() of the matrix shown, once found (without a fixed range).
    mutable std::optional<std::pair<double, double>> m_foundRange;
    mutable double m_rowLabelWidth = -1; ///< rowLabelWidth's last answer; < 0: none yet
    mutable QString m_rowLabelFont; ///< the font key it was measured for
    mutable std::optional<QSize> m_givenLeast; ///< minimumSizeHint's last answer
    std::shared_ptr<const Eigen::MatrixXd> m_values =
        std::make_shared<const Eigen::MatrixXd>(); ///< never null
    QImage m_image; ///< one pixel per pooled cell, for the size last drawn
};

/// The viridis colour map at t in [0, 1]: perceptually even and readable for the common kinds
/// of colour blindness.
QColor viridis(double t);

} // namespace scalelab::ui
