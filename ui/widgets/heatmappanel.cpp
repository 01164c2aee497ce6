#include "heatmappanel.h"

#include "chartstyle.h"
#include "format.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace scalelab::ui {

QColor viridis(double t)
{
    // Nine samples of viridis; linear interpolation between them is indistinguishable by eye.
    static const QColor stops[] = {{68, 1, 84},    {71, 44, 122},  {59, 81, 139},
                                   {44, 113, 142}, {33, 144, 141}, {39, 173, 129},
                                   {92, 200, 99},  {170, 220, 50}, {253, 231, 37}};
    constexpr int n = static_cast<int>(std::size(stops));
    t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * (n - 1);
    const int i = std::min(static_cast<int>(t), n - 2);
    const double f = t - i;
    const auto mix = [f](int a, int b) {
        return static_cast<int>(std::lround(a + (b - a) * f));
    };
    return QColor(mix(stops[i].red(), stops[i + 1].red()),
                  mix(stops[i].green(), stops[i + 1].green()),
                  mix(stops[i].blue(), stops[i + 1].blue()));
}

HeatmapPanel::HeatmapPanel(const QString& name, QWidget* parent)
    : ChartPanel(name, parent)
    , m_format([](double v) { return formatNumber(v); })
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void HeatmapPanel::setTitle(const QString& title)
{
    if (title == m_title)
        return; // a slider step that keeps the title lays nothing out again
    m_title = title;
    textsChanged();
}

void HeatmapPanel::setAxisTitles(const QString& x, const QString& y)
{
    if (x == m_xTitle && y == m_yTitle)
        return;
    m_xTitle = x;
    m_yTitle = y;
    textsChanged();
}

void HeatmapPanel::setColorBarTitle(const QString& title)
{
    if (title == m_barTitle)
        return;
    m_barTitle = title;
    textsChanged();
}

void HeatmapPanel::setRowLabels(const QStringList& labels)
{
    if (labels == m_rowLabels)
        return;
    m_rowLabels = labels;
    m_rowLabelWidth = -1;
    textsChanged();
}

void HeatmapPanel::textsChanged()
{
    update();
    // The least size follows the texts; the layout runs again only when it moved (a title that
    // changes with every slider step mostly keeps it).
    const std::optional<QSize> given = m_givenLeast;
    if (!given || minimumSizeHint() != *given)
        updateGeometry();
}

void HeatmapPanel::setColumnLabels(const QStringList& labels)
{
    if (labels == m_columnLabels)
        return; // a slider step that keeps them paints them not again
    m_columnLabels = labels;
    update();
}

void HeatmapPanel::setMarkDiagonal(bool mark)
{
    m_markDiagonal = mark;
    update();
}

void HeatmapPanel::setLogScale(bool log)
{
    m_log = log;
    rebuildImage();
}

void HeatmapPanel::setValueFormat(const std::function<QString(double)>& format)
{
    m_format = format;
    update();
}

void HeatmapPanel::setRange(std::optional<std::pair<double, double>> range)
{
    m_fixedRange = range;
    rebuildImage(true);
}

void HeatmapPanel::setMatrix(const Eigen::MatrixXd& values)
{
    setMatrix(std::make_shared<const Eigen::MatrixXd>(values));
}

void HeatmapPanel::setMatrix(std::shared_ptr<const Eigen::MatrixXd> values)
{
    const Eigen::Index rows = m_values->rows(), cols = m_values->cols();
    m_values = values ? std::move(values) : std::make_shared<const Eigen::MatrixXd>();
    rebuildImage(m_values->rows() == rows && m_values->cols() == cols);
}

std::pair<double, double> HeatmapPanel::colorRange() const
{
    if (m_fixedRange)
        return *m_fixedRange;
    // Found once per matrix: the image, the colour bar and the tooltips all ask, and a
    // million-cell map takes milliseconds to scan.
    if (!m_foundRange)
        m_foundRange = findRange();
    return *m_foundRange;
}

std::pair<double, double> HeatmapPanel::findRange() const
{
    if (m_values->size() == 0)
        return {0.0, 1.0};
    double lo = m_values->minCoeff();
    double hi = m_values->maxCoeff();
    if (m_log) {
        // The smallest positive value sets the bottom of a log scale.
        double smallest = hi;
        for (Eigen::Index i = 0; i < m_values->size(); ++i)
            if (m_values->data()[i] > 0)
                smallest = std::min(smallest, m_values->data()[i]);
        lo = smallest;
    }
    if (!(hi > lo))
        hi = lo + (m_log ? lo : 1.0);
    return {lo, hi};
}

double HeatmapPanel::scaled(double value, std::pair<double, double> range) const
{
    const auto [lo, hi] = range;
    if (m_log) {
        if (!(value > 0) || !(lo > 0))
            return 0.0;
        return (std::log10(value) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    }
    return (value - lo) / (hi - lo);
}

QColor HeatmapPanel::colorFor(double value) const
{
    return viridis(scaled(value, colorRange()));
}

void HeatmapPanel::rebuildImage(bool sameShape)
{
    m_image = QImage();
    m_foundRange.reset();
    // Cells written with their values change their labels' colours and fit with them.
    if (!sameShape || m_values->size() == 0 || writesValues(size())) {
        update();
        return;
    }
    const Layout l = layoutFor(rect());
    update(l.plot.adjusted(-1, -1, 1, 1).toAlignedRect()); // with the frame around it
    update(colorBarLabels(l, rect()).toAlignedRect());
}

ColourSteps::ColourSteps(std::pair<double, double> range, bool log)
    : m_colours(&colours())
    , m_log(log)
    , m_logUsable(log && range.first > 0)
{
    // A log scale needs a positive bottom; without one every value takes the bottom colour.
    const auto [lo, hi] = range;
    const double logLo = m_logUsable ? std::log10(lo) : 0.0;
    const double logHi = m_logUsable ? std::log10(hi) : 0.0;
    for (int k = 1; k < kCount; ++k) {
        const double t = k / double(kCount);
        m_starts[static_cast<std::size_t>(k - 1)] =
            m_logUsable ? std::pow(10.0, logLo + t * (logHi - logLo)) : lo + t * (hi - lo);
    }
    m_origin = m_logUsable ? std::log2(lo) : lo;
    m_perStep = kCount / (m_logUsable ? std::log2(hi) - std::log2(lo) : hi - lo);
}

const std::array<QRgb, ColourSteps::kCount>& ColourSteps::colours()
{
    static const std::array<QRgb, kCount> table = [] {
        std::array<QRgb, kCount> made;
        for (int k = 0; k < kCount; ++k)
            made[static_cast<std::size_t>(k)] = viridis(k / double(kCount - 1)).rgb();
        return made;
    }();
    return table;
}

int ColourSteps::bisect(double value) const
{
    return static_cast<int>(std::upper_bound(m_starts.begin(), m_starts.end(), value)
                            - m_starts.begin());
}

const QImage& HeatmapPanel::imageFor(const QSize& pixels)
{
    // Pool the matrix down to the pixels it is drawn on, by the largest value of each pool:
    // scaling a larger image down would drop cells, and with them a lone outlier.
    const Eigen::Index rows = m_values->rows(), cols = m_values->cols();
    const auto limit = [](Eigen::Index n, int px) {
        return (n + std::clamp(px, 1, kMaxImageSide) - 1) / std::clamp(px, 1, kMaxImageSide);
    };
    const Eigen::Index poolR = limit(rows, pixels.height());
    const Eigen::Index poolC = limit(cols, pixels.width());
    const auto h = static_cast<int>((rows + poolR - 1) / poolR);
    const auto w = static_cast<int>((cols + poolC - 1) / poolC);
    if (m_image.size() == QSize(w, h))
        return m_image;
    m_image = QImage(w, h, QImage::Format_RGB32);
    const ColourSteps steps(colorRange(), m_log);
    if (poolR == 1 && poolC == 1) {
        // A pixel or more a cell: each cell coloured straight from the matrix, read down its
        // columns as it is stored.
        std::vector<QRgb*> lines(static_cast<std::size_t>(h));
        for (int y = 0; y < h; ++y)
            lines[static_cast<std::size_t>(y)] = reinterpret_cast<QRgb*>(m_image.scanLine(y));
        for (Eigen::Index c = 0; c < cols; ++c) {
            const double* column = m_values->data() + c * rows;
            for (Eigen::Index r = 0; r < rows; ++r)
                lines[static_cast<std::size_t>(r)][c] = steps.colour(steps.stepOf(column[r]));
        }
        return m_image;
    }
    // Each pool's largest value, the matrix read once down its columns (it is stored by column);
    // a NaN never wins a pool, and a pool of NaNs alone gets the bottom colour, as a NaN does.
    std::vector<double> pooled(static_cast<std::size_t>(w) * static_cast<std::size_t>(h),
                               -std::numeric_limits<double>::infinity());
    for (Eigen::Index c = 0; c < cols; ++c) {
        const double* column = m_values->data() + c * rows;
        double* out = pooled.data() + (c / poolC) * h;
        for (int y = 0; y < h; ++y) {
            double best = out[y];
            for (Eigen::Index r = y * poolR; r < std::min(rows, (y + 1) * poolR); ++r)
                best = column[r] > best ? column[r] : best;
            out[y] = best;
        }
    }
    for (int y = 0; y < h; ++y) {
        auto* line = reinterpret_cast<QRgb*>(m_image.scanLine(y));
        for (int x = 0; x < w; ++x)
            line[x] = steps.colour(steps.stepOf(pooled[static_cast<std::size_t>(x) * h + y]));
    }
    return m_image;
}

bool HeatmapPanel::writesValues(const QSizeF& size) const
{
    if (m_values->size() == 0 || m_values->rows() > 24 || m_values->cols() > 24)
        return false;
    const Layout l = layoutFor(QRectF(QPointF(0, 0), size));
    const QFontMetricsF fm(chartFonts().annotation);
    const double cellW = l.plot.width() / static_cast<double>(m_values->cols());
    const double cellH = l.plot.height() / static_cast<double>(m_values->rows());
    double widest = 0;
    for (Eigen::Index i = 0; i < m_values->size(); ++i)
        widest = std::max(widest, fm.horizontalAdvance(m_format(m_values->data()[i])));
    return cellW >= widest + 6 && cellH >= fm.height() + 4;
}

double HeatmapPanel::rowLabelWidth(const QFont& font) const
{
    // A thousand labels take milliseconds to measure, and every paint lays the panel out.
    if (m_rowLabelWidth < 0 || m_rowLabelFont != font.key()) {
        const QFontMetricsF fm(font);
        m_rowLabelWidth = fm.horizontalAdvance("0000");
        for (const QString& s : m_rowLabels)
            m_rowLabelWidth = std::max(m_rowLabelWidth, fm.horizontalAdvance(s));
        m_rowLabelFont = font.key();
    }
    return m_rowLabelWidth;
}

namespace {

/// Titles wrap onto this many lines at most before they are shortened.
constexpr int kMaxTitleLines = 3;
/// The most times the layout is worked out again with the titles' new line counts: it settles
/// within two or three; should it not, a title of the last pass is shortened (drawTitle).
constexpr int kLayoutPasses = 4;

/// `text` broken at whole words into lines of at most `width` in `font`: the charts' own
/// wrapping (wrapWords), which remembers what it measured, so a repaint measures nothing again.
QStringList titleLines(const QFont& font, const QString& text, double width)
{
    return wrapWords(text, font, width).split(QStringLiteral("<br>"));
}

/// The lines `text` takes in `font` wrapped to `width` (at most kMaxTitleLines).
int linesFor(const QFont& font, const QString& text, double width)
{
    return std::clamp(static_cast<int>(titleLines(font, text, width).size()), 1, kMaxTitleLines);
}

} // namespace

HeatmapPanel::Layout HeatmapPanel::layoutFor(const QRectF& t) const
{
    const ChartFonts f = chartFonts();
    const QFontMetricsF titleFm(f.title), axisFm(f.axisTitle), labelFm(f.axisLabels);
    const double labelWidth = rowLabelWidth(f.axisLabels);
    const double line = axisFm.lineSpacing();
    // A title too long for its room wraps at whole words: its band grows by a line each time.
    const double titleHeight =
        linesFor(f.title, m_title, t.width() - 8) * titleFm.lineSpacing() + 8;
    Layout l;
    l.title = QRectF(t.left(), t.top() + 6, t.width(), titleHeight);
    const double top = l.title.bottom() + 8;
    // The axis and bar titles' lines depend on the plot's size and the plot's on theirs:
    // measured at one line each first, then again at the size that gives, until they agree.
    int xLines = 1, yLines = 1, barLines = 1;
    for (int pass = 0; pass < kLayoutPasses; ++pass) {
        const double barWidth =
            22 + 12 + labelFm.horizontalAdvance("0.000e-00") + barLines * line + 8;
        const double bottom = t.bottom() - xLines * line - labelFm.height() - 16;
        const double left = t.left() + yLines * line + 8 + labelWidth + 10;
        const double right = t.right() - barWidth - 16;
        l.plot = QRectF(QPointF(left, top), QPointF(right, bottom));
        l.bar = QRectF(right + 16, top, 22, bottom - top);
        l.xTitle = QRectF(left, t.bottom() - xLines * line - 6, right - left, xLines * line);
        l.yTitle = QRectF(t.left() + 4, top, yLines * line, bottom - top);
        const int x = linesFor(f.axisTitle, m_xTitle, l.xTitle.width());
        const int y = linesFor(f.axisTitle, m_yTitle, l.yTitle.height());
        const int bar = linesFor(f.axisTitle, m_barTitle, l.bar.height());
        if (x == xLines && y == yLines && bar == barLines)
            break; // the rectangles above hold their titles
        xLines = x;
        yLines = y;
        barLines = bar;
    }
    l.barTitleLines = barLines;
    return l;
}

namespace {

/// The width of the longest word of `text` in `font`.
double longestWord(const QFont& font, const QString& text)
{
    const QFontMetricsF fm(font);
    double widest = 0;
    for (const QString& word : text.split(u' ', Qt::SkipEmptyParts))
        widest = std::max(widest, fm.horizontalAdvance(word));
    return widest;
}

} // namespace

QSize HeatmapPanel::minimumSizeHint() const
{
    const ChartFonts f = chartFonts();
    const double least = kMinPlotLines * QFontMetricsF(f.axisLabels).lineSpacing();
    // Along x: the x title's words; along y, the y and colour bar titles'.
    const QSizeF plot(std::max(least, longestWord(f.axisTitle, m_xTitle)),
                      std::max({least, longestWord(f.axisTitle, m_yTitle),
                                longestWord(f.axisTitle, m_barTitle)}));
    // Grown until the layout leaves that plot: the titles' lines depend on the size.
    QSizeF size = plot + QSizeF(400, 300);
    for (int pass = 0; pass < kLayoutPasses; ++pass) {
        const Layout l = layoutFor(QRectF(QPointF(), size));
        const QSizeF short_(plot.width() - l.plot.width(), plot.height() - l.plot.height());
        if (short_.width() <= 0 && short_.height() <= 0 && pass > 0)
            break;
        size += QSizeF(short_.width(), short_.height());
    }
    // And the title's longest word across the whole width.
    const double width = std::max(size.width(), longestWord(f.title, m_title) + 8);
    m_givenLeast =
        QSize(static_cast<int>(std::ceil(width)), static_cast<int>(std::ceil(size.height())));
    return *m_givenLeast;
}

namespace {

/// A title wrapped at whole words into `box`; one still too long for it (more lines than the
/// box holds) ends its last line in an ellipsis rather than being cut off. Drawn centred.
void drawTitle(QPainter& painter, const QRectF& box, const QString& text)
{
    const QFontMetricsF fm(painter.font());
    QStringList lines = titleLines(painter.font(), text, box.width());
    // Rounded: the band was measured in the screen font, the painter may draw a pixel larger.
    const int room = std::max(1, static_cast<int>(std::lround(box.height() / fm.lineSpacing())));
    if (lines.size() > room) {
        // The lines that fit, the rest shortened on the last.
        const QString rest = lines.mid(room - 1).join(u' ');
        lines = lines.mid(0, room - 1);
        lines << fm.elidedText(rest, Qt::ElideRight, std::max(box.width(), 0.0));
    }
    painter.drawText(box, Qt::AlignCenter, lines.join(u'\n'));
}

/// Room between the tick labels and what they label, in pixels.
constexpr double kLabelGap = 4;
/// Where the row labels end, left of the plot, in pixels.
constexpr double kRowLabelsEnd = 6;
/// Grey of the frames around the plot and the colour bar.
const QColor kFrameGrey(90, 90, 90);
/// Up to this many cells, each is filled in its colour rather than drawn as a stretched image.
constexpr Eigen::Index kMaxFilledCells = 256;

/// A thin grey frame around `box`, drawn without blending its edges: a stroked, antialiased
/// rectangle is outlined and filled as a path, half a million instructions a frame.
void drawFrame(QPainter& painter, const QRectF& box)
{
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing, false);
    painter.setPen(QPen(kFrameGrey, 1));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(box);
    painter.restore();
}

} // namespace

void HeatmapPanel::render(QPainter& painter, const QRectF& target)
{
    render(painter, target, nullptr);
}

void HeatmapPanel::render(QPainter& painter, const QRectF& target, const QRegion* dirty)
{
    const ChartFonts f = chartFonts();
    const Layout l = layoutFor(target);
    // A pixel around each part's bounds: blended edges spill a little past them.
    const Needed needed = [dirty](const QRectF& bounds) {
        return !dirty || dirty->intersects(bounds.adjusted(-1, -1, 1, 1).toAlignedRect());
    };
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.fillRect(target, chartBackgroundColor());
    painter.setPen(chartTextColor());
    painter.setFont(f.title);
    if (needed(l.title))
        drawTitle(painter, l.title.adjusted(4, 0, -4, 0), m_title);
    if (m_values->size() > 0) {
        if (needed(l.plot))
            renderCells(painter, l, target.size());
        renderCellLabels(painter, l, needed);
    }
    renderAxisTitles(painter, l, needed);
    renderColorBar(painter, l, target, needed);
    painter.restore();
}

void HeatmapPanel::renderCells(QPainter& painter, const Layout& l, const QSizeF& size)
{
    const ChartFonts f = chartFonts();
    const Eigen::Index rows = m_values->rows(), cols = m_values->cols();
    // Cells as crisp blocks: no smoothing between neighbouring values, no blended edges.
    painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
    const bool smooth = painter.testRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::Antialiasing, false);
    const QRectF device = painter.deviceTransform().mapRect(l.plot);
    const QImage& image = imageFor(device.size().toSize());
    const double cw = l.plot.width() / static_cast<double>(cols);
    const double ch = l.plot.height() / static_cast<double>(rows);
    if (image.width() == cols && image.height() == rows && rows * cols <= kMaxFilledCells) {
        // A few large cells: each filled in its colour. Stretching a tiny image over the plot
        // reads its pixel again for every pixel drawn (1.4 M instructions for 5 x 5 ranks).
        for (Eigen::Index r = 0; r < rows; ++r) {
            const auto* line = reinterpret_cast<const QRgb*>(image.constScanLine(int(r)));
            for (Eigen::Index c = 0; c < cols; ++c)
                painter.fillRect(QRectF(l.plot.left() + c * cw, l.plot.top() + r * ch, cw, ch),
                                 QColor::fromRgb(line[c]));
        }
    } else {
        painter.drawImage(l.plot, image);
    }
    if (writesValues(size)) {
        const auto range = colorRange();
        painter.setFont(f.annotation);
        for (Eigen::Index r = 0; r < rows; ++r)
            for (Eigen::Index c = 0; c < cols; ++c) {
                const QRectF cell(l.plot.left() + c * cw, l.plot.top() + r * ch, cw, ch);
                const QColor bg = viridis(scaled((*m_values)(r, c), range));
                painter.setPen(bg.lightnessF() > 0.55 ? Qt::black : Qt::white);
                painter.drawText(cell, Qt::AlignCenter, m_format((*m_values)(r, c)));
            }
    }
    if (m_markDiagonal && rows == cols && rows <= 64) {
        // A frame inside each diagonal cell, as four filled edges: a stroked rectangle is
        // outlined and filled as a path, a millisecond for five cells.
        const double pen = std::clamp(std::min(cw, ch) / 12, 2.0, 4.0 * lineScale());
        for (Eigen::Index i = 0; i < rows; ++i) {
            const QRectF frame =
                QRectF(l.plot.left() + i * cw, l.plot.top() + i * ch, cw, ch)
                    .adjusted(1.5 - pen / 2, 1.5 - pen / 2, pen / 2 - 1.5, pen / 2 - 1.5);
            for (const QRectF& edge :
                 {QRectF(frame.left(), frame.top(), frame.width(), pen),
                  QRectF(frame.left(), frame.bottom() - pen, frame.width(), pen),
                  QRectF(frame.left(), frame.top() + pen, pen, frame.height() - 2 * pen),
                  QRectF(frame.right() - pen, frame.top() + pen, pen, frame.height() - 2 * pen)})
                painter.fillRect(edge, palette::kVermillion);
        }
    }
    painter.setRenderHint(QPainter::Antialiasing, smooth);
}

void HeatmapPanel::renderCellLabels(QPainter& painter, const Layout& l, const Needed& needed) const
{
    const Eigen::Index rows = m_values->rows(), cols = m_values->cols();
    const double cw = l.plot.width() / static_cast<double>(cols);
    const double ch = l.plot.height() / static_cast<double>(rows);
    // Row and column labels, thinned so they never overlap.
    const QFont font = chartFonts().axisLabels;
    painter.setPen(chartTextColor());
    painter.setFont(font);
    const QFontMetricsF fm(font);
    const auto label = [](const QStringList& names, Eigen::Index i) {
        return i < names.size() ? names[static_cast<int>(i)] : QString::number(i);
    };
    const Eigen::Index rowStep =
        std::max<Eigen::Index>(1, static_cast<Eigen::Index>(std::ceil((fm.height() + 2) / ch)));
    // Each label a line tall, centred on its row: a row thinner than a line would cut it.
    const double line = std::max(ch, fm.height());
    const bool rowLabels = needed(QRectF(l.yTitle.right(), l.plot.top() - line,
                                         l.plot.left() - kRowLabelsEnd - l.yTitle.right(),
                                         l.plot.height() + 2 * line));
    for (Eigen::Index r = 0; rowLabels && r < rows; r += rowStep)
        painter.drawText(QRectF(l.yTitle.right() + kLabelGap,
                                l.plot.top() + (r + 0.5) * ch - line / 2,
                                l.plot.left() - kRowLabelsEnd - kLabelGap - l.yTitle.right(), line),
                         Qt::AlignRight | Qt::AlignVCenter, label(m_rowLabels, r));
    const double widest = fm.horizontalAdvance(label(m_columnLabels, cols - 1));
    const Eigen::Index colStep =
        std::max<Eigen::Index>(1, static_cast<Eigen::Index>(std::ceil((widest + 8) / cw)));
    // Each column label gets room well beyond its column, centred on it.
    constexpr double kOverhang = 40;
    // (Their text starts below the top of their line: the frame's pixel row below the plot,
    // painted again with the cells, is not theirs.)
    const bool columnLabels = needed(QRectF(l.plot.left() - kOverhang, l.plot.bottom() + 2.5,
                                            l.plot.width() + 2 * kOverhang, fm.height()));
    for (Eigen::Index c = 0; columnLabels && c < cols; c += colStep)
        painter.drawText(QRectF(l.plot.left() + c * cw - kOverhang, l.plot.bottom() + 2,
                                cw + 2 * kOverhang, fm.height()),
                         Qt::AlignHCenter | Qt::AlignTop, label(m_columnLabels, c));
    if (needed(l.plot))
        drawFrame(painter, l.plot);
}

void HeatmapPanel::renderAxisTitles(QPainter& painter, const Layout& l, const Needed& needed) const
{
    const QFont font = chartFonts().axisTitle;
    painter.setPen(chartTextColor());
    painter.setFont(font);
    if (needed(l.xTitle))
        drawTitle(painter, l.xTitle, m_xTitle);
    if (!needed(l.yTitle))
        return;
    painter.save();
    painter.translate(l.yTitle.center());
    painter.rotate(-90);
    drawTitle(
        painter,
        QRectF(-l.yTitle.height() / 2, -l.yTitle.width() / 2, l.yTitle.height(), l.yTitle.width()),
        m_yTitle);
    painter.restore();
}

namespace {

constexpr double kTickLength = 4;
constexpr double kTickLabelWidth = 200;

} // namespace

QRectF HeatmapPanel::colorBarLabels(const Layout& l, const QRectF& target) const
{
    // The ticks and their labels, half a line beyond the bar's ends, to the panel's edge.
    const double half = QFontMetricsF(chartFonts().axisLabels).height() / 2 + 1;
    return QRectF(QPointF(l.bar.right() + 1, l.bar.top() - half),
                  QPointF(target.right(), l.bar.bottom() + half));
}

void HeatmapPanel::renderColorBar(QPainter& painter, const Layout& l, const QRectF& target,
                                  const Needed& needed) const
{
    const ChartFonts f = chartFonts();
    if (needed(l.bar)) {
        QLinearGradient gradient(l.bar.bottomLeft(), l.bar.topLeft());
        for (int i = 0; i <= 16; ++i)
            gradient.setColorAt(i / 16.0, viridis(i / 16.0));
        painter.fillRect(l.bar, gradient);
        drawFrame(painter, l.bar);
    }
    if (!needed(colorBarLabels(l, target)))
        return; // the labels and the bar's title, at its right
    const auto [lo, hi] = colorRange();
    painter.setFont(f.axisLabels);
    painter.setPen(chartTextColor());
    const QFontMetricsF fm(f.axisLabels);
    // Five labels where they fit, fewer on a short bar (never overlapping), at least the ends.
    const int ticks = std::clamp(static_cast<int>(l.bar.height() / (fm.height() * 1.5)) + 1, 2, 5);
    for (int i = 0; i < ticks; ++i) {
        const double t = i / double(ticks - 1);
        const double v = m_log
            ? std::pow(10.0, std::log10(lo) + t * (std::log10(hi) - std::log10(lo)))
            : lo + t * (hi - lo);
        const double y = l.bar.bottom() - t * l.bar.height();
        painter.drawLine(QPointF(l.bar.right(), y), QPointF(l.bar.right() + kTickLength, y));
        painter.drawText(QRectF(l.bar.right() + kTickLength + 2, y - fm.height() / 2,
                                kTickLabelWidth, fm.height()),
                         Qt::AlignLeft | Qt::AlignVCenter, m_format(v));
    }
    // The bar's title, turned to run along it at the right edge.
    painter.setFont(f.axisTitle);
    painter.save();
    const double band = l.barTitleLines * QFontMetricsF(f.axisTitle).lineSpacing();
    painter.translate(target.right() - band / 2 - kLabelGap, l.bar.center().y());
    painter.rotate(-90);
    drawTitle(painter, QRectF(-l.bar.height() / 2, -band / 2, l.bar.height(), band), m_barTitle);
    painter.restore();
}

void HeatmapPanel::paintEvent(QPaintEvent* event)
{
    QPainter painter(this);
    render(painter, rect(), &event->region());
}

bool HeatmapPanel::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip && m_values->size() > 0) {
        auto* help = static_cast<QHelpEvent*>(event);
        const Layout l = layoutFor(rect());
        if (l.plot.contains(help->pos())) {
            const auto c = static_cast<Eigen::Index>((help->pos().x() - l.plot.left())
                                                     / l.plot.width() * m_values->cols());
            const auto r = static_cast<Eigen::Index>((help->pos().y() - l.plot.top())
                                                     / l.plot.height() * m_values->rows());
            if (r >= 0 && r < m_values->rows() && c >= 0 && c < m_values->cols()) {
                const auto name = [](const QStringList& names, Eigen::Index i) {
                    return i < names.size() ? names[static_cast<int>(i)] : QString::number(i);
                };
                QToolTip::showText(help->globalPos(),
                                   tr("%1 %2, %3 %4: %5")
                                       .arg(m_yTitle, name(m_rowLabels, r), m_xTitle,
                                            name(m_columnLabels, c), m_format((*m_values)(r, c))),
                                   this);
                return true;
            }
        }
        QToolTip::hideText();
        event->ignore();
        return true;
    }
    return ChartPanel::event(event);
}

} // namespace scalelab::ui
