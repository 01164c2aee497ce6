#pragma once

#include "chartpanel.h"

#include <Eigen/Core>
#include <QImage>
#include <QRegion>
#include <QStringList>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
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
    /// Draws the panel into `target`; with `dirty`, only the parts that reach into it (a paint
    /// event's region: the rest of the panel shows what it showed).
    void render(QPainter& painter, const QRectF& target, const QRegion* dirty);
    // The steps of render(): the cells (with their values and the diagonal when asked), the row
    // and column labels, the axis titles, and the colour bar with its ticks and title. Each
    // part is drawn where `needed` says its bounds reach into what is painted.
    using Needed = std::function<bool(const QRectF&)>;
    void renderCells(QPainter& painter, const Layout& l, const QSizeF& size);
    void renderCellLabels(QPainter& painter, const Layout& l, const Needed& needed) const;
    void renderAxisTitles(QPainter& painter, const Layout& l, const Needed& needed) const;
    void renderColorBar(QPainter& painter, const Layout& l, const QRectF& target,
                        const Needed& needed) const;
    /// Where the colour bar's tick labels are drawn, in `target`.
    QRectF colorBarLabels(const Layout& l, const QRectF& target) const;
    /// After new values, a new range or scale: the image is made again, and what shows them
    /// painted again. With `sameShape`, that is the cells and the colour bar's labels alone
    /// (each slider step of the FP8 tab drew the titles and tick labels of both maps again, a
    /// million instructions); otherwise the whole panel, whose labels follow the shape.
    void rebuildImage(bool sameShape = false);
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

/// The steps a heatmap's colour range is cut into for drawing: kCount colours along viridis,
/// finer than the eye tells apart, and the value where each step after the first begins (even
/// in the value, or in its log10 on a log scale). A value's step is the number of beginnings
/// at or below it, found from an estimate checked against the beginnings themselves: the same
/// answer as a binary search, in a few instructions for the common case (a map redraws on every
/// slider step, one value per pixel).
class ColourSteps {
public:
    static constexpr int kCount = 512;

    ColourSteps(std::pair<double, double> range, bool log);

    /// The step of `value`: 0 for NaN and, on a log scale, for values not above zero (as
    /// HeatmapPanel::colorFor gives them the bottom colour).
    int stepOf(double value) const;
    QRgb colour(int step) const { return (*m_colours)[static_cast<std::size_t>(step)]; }
    /// Where steps 1 .. kCount - 1 begin, rising.
    const std::array<double, kCount - 1>& starts() const { return m_starts; }

private:
    static const std::array<QRgb, kCount>& colours();
    /// The step found by bisecting m_starts (what stepOf falls back to).
    int bisect(double value) const;
    /// log2 of a positive `value` to within 2e-4.
    static double roughLog2(double value);

    const std::array<QRgb, kCount>* m_colours;
    std::array<double, kCount - 1> m_starts;
    bool m_log;
    bool m_logUsable; ///< a log scale with a positive bottom
    double m_origin = 0; ///< lo, or log2(lo) on a log scale
    double m_perStep = 0; ///< steps per unit of value, or per unit of log2(value)
};

// Defined here rather than with the rest: a heatmap asks once for each pixel, and a call for each
// cost more than the work.

inline double ColourSteps::roughLog2(double value)
{
    // The binary exponent, and a polynomial fitted to log2 over the mantissa's [1, 2). A step's
    // estimate needs no more (the steps' beginnings settle it), and it costs a few instructions
    // where std::log2 costs tens.
    const auto bits = std::bit_cast<std::uint64_t>(value);
    const auto exponent = static_cast<int>((bits >> 52) & 0x7ff);
    if (exponent == 0 || exponent == 0x7ff)
        return std::log2(value); // subnormal or infinite: rare enough to ask libm
    constexpr std::uint64_t kMantissa = (std::uint64_t(1) << 52) - 1;
    constexpr std::uint64_t kOne = std::uint64_t(0x3ff) << 52;
    const double x = std::bit_cast<double>((bits & kMantissa) | kOne) - 1.0; // in [0, 1)
    const double log2OnePlusX = x
        * (1.4385467915023176
           + x * (-0.6780814857708316 + x * (0.32363036819981095 + x * -0.08428509262187511)));
    return (exponent - 1023) + log2OnePlusX;
}

inline int ColourSteps::stepOf(double value) const
{
    if (std::isnan(value) || (m_log && !(m_logUsable && value > 0)))
        return 0; // no place on the scale
    const double estimate = ((m_logUsable ? roughLog2(value) : value) - m_origin) * m_perStep;
    // Compared before any conversion: an estimate may be infinite or NaN (a range of one value).
    const int step = !(estimate >= 0)                 ? 0
        : estimate >= static_cast<double>(kCount - 1) ? kCount - 1
                                                      : static_cast<int>(estimate);
    const auto holds = [&](int s) {
        return (s == 0 || m_starts[static_cast<std::size_t>(s - 1)] <= value)
            && (s == kCount - 1 || value < m_starts[static_cast<std::size_t>(s)]);
    };
    if (holds(step))
        return step;
    if (step + 1 < kCount && holds(step + 1))
        return step + 1;
    if (step > 0 && holds(step - 1))
        return step - 1;
    return bisect(value);
}

} // namespace scalelab::ui
