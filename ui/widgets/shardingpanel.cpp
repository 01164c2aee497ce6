#include "shardingpanel.h"

#include "chartstyle.h"
#include "format.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <array>
#include <cmath>

namespace scalelab::ui {

QColor rankColor(std::int64_t rank)
{
    const auto n = static_cast<std::int64_t>(palette::kSeries.size());
    return palette::kSeries[static_cast<std::size_t>(((rank % n) + n) % n)];
}

namespace {

const QColor kReplicated(222, 222, 222);
const QColor kBorder(70, 70, 70);
const QColor kHatch(150, 150, 150); ///< the hatching of terms no rank can compute
const QColor kNoteText(60, 60, 60);

// Layout metrics, in pixels of the target: the picture is laid out afresh for every size.
constexpr double kPad = 10; ///< left and right margin of the blocks, caption and colour key
constexpr double kTitleTop = 6; ///< from the top edge to the title
constexpr double kLeading = 4; ///< added to a line's height: title, colour key, block name
constexpr double kKeyBottom = 10; ///< from the bottom edge to the colour key's text
constexpr double kSectionGap = 8; ///< title to blocks, blocks to caption, caption to key
constexpr double kMinBandHeight = 40; ///< the least height of the blocks' band
constexpr double kUnboundedHeight = 10000; ///< room enough to measure the wrapped caption
constexpr double kLabelRoom = 14; ///< a block's slot: this much wider than its widest label
constexpr double kBelowGap = 8; ///< under the lines written under a block
constexpr double kMinBlockArea = 20; ///< the least height a matrix may take
constexpr double kMinSide = 14; ///< the least side of a matrix
constexpr double kStepRoom = 20; ///< a step's slot: this much wider than its text
constexpr double kMinArrow = 40; ///< the least length of a labelled arrow
constexpr double kMinReduce = 70; ///< the all-reduce's least width: lines fan into the sum
constexpr int kScaleSteps = 60; ///< bisection steps for the one scale of every matrix
constexpr double kMinFill = 0.12; ///< the widest matrix's least share of the width, per row
constexpr double kFitSlack = 0.5; ///< rounding allowed when checking that a row fits
constexpr double kMinItem = 4; ///< the least height of one stack item
constexpr double kItemGap = 2; ///< between stack items
constexpr double kEllipsisLeading = 2; ///< the gap for left-out items: a label line and this
constexpr double kLabelPad = 2; ///< each side of a shard label
constexpr double kLabelSqueeze = 2; ///< a stack item may be this much lower than its label
constexpr double kLabelSpacing = 1; ///< the least gap between labels down a stack
constexpr double kThinStripe = 5; ///< stripes narrower than this are drawn without gaps
constexpr double kBorderWidth = 1.5; ///< a matrix's frame
constexpr double kStripeGapWidth = 1.5; ///< the white line between stripes
constexpr double kTextGap = 4; ///< between a matrix and its name above, its lines under
constexpr double kArrowInset = 6; ///< an arrow's ends from its slot's sides
constexpr double kArrowWidth = 2.5; ///< arrows and the lines into the sum
constexpr double kHeadLength = 10; ///< an arrowhead's length
constexpr double kHeadHalfWidth = 5; ///< half an arrowhead's width
constexpr double kHeadOverlap = 6; ///< the line stops this short of the tip, under the head
constexpr double kArrowLabelLift = 6; ///< an arrow's label above its line
constexpr double kSumRadius = 17; ///< the all-reduce's circle, at most a quarter of its slot
constexpr double kReduceTipInset = 4; ///< the all-reduce's arrow tip from its slot's right
constexpr double kReduceLabelGap = 4; ///< the all-reduce's label above the circle
constexpr double kReduceLabelPad = 8; ///< the white behind that label: this much wider
constexpr double kSwatchShare = 0.8; ///< a colour key swatch, as a share of the line height
constexpr double kSwatchGap = 6; ///< swatch to text
constexpr double kKeySpacing = 18; ///< one key's text to the next swatch
constexpr double kKeyTextRoom = 2; ///< a key's text box: this much wider than the text

QString subscript(std::int64_t n)
{
    QString digits = QString::number(n);
    for (QChar& c : digits)
        c = QChar(0x2080 + c.digitValue());
    return digits;
}

QString shape(std::int64_t rows, std::int64_t cols)
{
    return formatWhole(rows) + QString::fromUtf8(" × ") + formatWhole(cols);
}

/// Text that reads on `fill`: black on light colours, white on dark ones.
QColor textOn(const QColor& fill)
{
    return fill.lightnessF() > 0.55 ? Qt::black : Qt::white;
}

struct Run {
    std::int64_t first, last, a, b;
};

/// Consecutive ranks with the same shard shape a x b, so uneven splits read as two lines.
std::vector<Run> runs(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b)
{
    std::vector<Run> out;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto r = static_cast<std::int64_t>(i);
        if (!out.empty() && out.back().a == a[i] && out.back().b == b[i])
            out.back().last = r;
        else
            out.push_back({r, r, a[i], b[i]});
    }
    return out;
}

QStringList shardLines(const std::vector<Run>& list)
{
    QStringList lines;
    if (list.size() == 1) {
        lines << QObject::tr("each rank %1").arg(shape(list[0].a, list[0].b));
        return lines;
    }
    for (std::size_t i = 0; i < list.size() && i < 2; ++i) {
        const Run& r = list[i];
        const QString who = r.first == r.last ? QObject::tr("rank %1").arg(r.first)
                                              : QObject::tr("ranks %1–%2").arg(r.first).arg(r.last);
        lines << QString("%1: %2").arg(who, shape(r.a, r.b));
    }
    if (list.size() > 2)
        lines.back() += QString::fromUtf8(", …");
    return lines;
}

/// The lines written under a block: its shape, the shards' shapes and (with `notes`) its note.
QStringList linesUnder(const ShardingPanel::Block& b, bool notes, bool shards = true)
{
    using Split = ShardingPanel::Split;
    QStringList lines;
    const auto n = b.shards.size();
    switch (b.split) {
    case Split::Whole:
        lines << shape(b.rows, b.cols);
        break;
    case Split::Columns:
        lines << shape(b.rows, b.cols);
        if (shards)
            lines << shardLines(runs(std::vector<std::int64_t>(n, b.rows), b.shards));
        break;
    case Split::Rows:
        lines << shape(b.rows, b.cols);
        if (shards)
            lines << shardLines(runs(b.shards, std::vector<std::int64_t>(n, b.cols)));
        break;
    case Split::BlockDiagonal:
        lines << shape(b.rows, b.cols);
        if (shards)
            lines << shardLines(runs(b.shards, b.columnShards));
        break;
    case Split::Stack:
        lines << QString::fromUtf8("%1 × (%2)").arg(formatWhole(b.items), shape(b.rows, b.cols));
        break;
    }
    if (notes && !b.note.isEmpty())
        lines << b.note;
    return lines;
}

struct Fonts {
    QFont title, name, shape, note, step, label, caption, legend;
};

/// The chart fonts, all but the title scaled by `scale` (a crowded picture steps down).
Fonts fonts(double scale)
{
    const ChartFonts f = chartFonts();
    Fonts out{f.title,     f.legend,     f.axisLabels, f.annotation,
              f.axisTitle, f.annotation, f.annotation, f.legend};
    for (QFont* font :
         {&out.name, &out.shape, &out.note, &out.step, &out.label, &out.caption, &out.legend})
        font->setPointSizeF(font->pointSizeF() * scale);
    out.name.setBold(true);
    out.note.setItalic(true);
    out.step.setBold(true);
    return out;
}

/// How much a layout may say: everything, then without the notes, then in smaller type, then
/// without the shards' shapes (the whole shape and the rank numbers stay).
struct Level {
    bool notes;
    bool shards;
    double scale;
};
constexpr Level kLevels[] = {{true, true, 1.0},   {false, true, 1.0},   {false, true, 0.85},
                             {false, true, 0.72}, {false, false, 0.85}, {false, false, 0.72}};

using Block = ShardingPanel::Block;
using Picture = ShardingPanel::Picture;
using Split = ShardingPanel::Split;
using Step = ShardingPanel::Step;

/// Whether the last line under `b` (of `count`) is its note, set in the note's type.
bool isNote(const Block& b, bool notes, qsizetype line, qsizetype count)
{
    return notes && !b.note.isEmpty() && line == count - 1;
}

/// Where everything of one picture goes at one size (ShardingPanel::Layout).
struct PictureLayout {
    Fonts fonts;
    bool notes = true;
    bool shards = true;
    double fill = 0; ///< the widest block's share of the width
    bool fits = false; ///< every row within the width, every label within its row
    QRectF title, band, caption, legend;
    std::vector<double> mid; ///< the middle line of each block's row
    std::vector<double> stepMid; ///< the same for each step
    std::vector<QRectF> places; ///< a block with the labels above and under it
    std::vector<QRectF> blocks; ///< the matrix itself (a stack: all its items)
    std::vector<QRectF> steps;
    /// Stack items and the rank each stands for (-1: the gap that says how many are left out).
    std::vector<std::vector<std::pair<QRectF, std::int64_t>>> items;
    /// Shard labels that fit, with their text.
    std::vector<std::vector<std::pair<QRectF, QString>>> labels;
};

/// The side of a matrix dimension before scaling: sides grow with the square root of the
/// dimension, so shapes stay recognisable (4096 is wider than 1024) without a wide matrix
/// crushing a narrow one. One scale k for all.
double side(std::int64_t n)
{
    return std::sqrt(static_cast<double>(std::max<std::int64_t>(n, 1)));
}

// ---- Layout, step by step -------------------------------------------------------------------

/// Title at the top, colour key at the bottom, the caption over it, the blocks' band between.
void placeFrame(PictureLayout& l, const QRectF& t, const QString& title, const QString& caption)
{
    const QFontMetricsF titleFm(l.fonts.title), captionFm(l.fonts.caption),
        legendFm(l.fonts.legend);
    // A title wider than the picture wraps onto more lines rather than running off both sides.
    const double titleHeight =
        titleFm
            .boundingRect(QRectF(0, 0, t.width() - 2 * kPad, kUnboundedHeight),
                          Qt::TextWordWrap | Qt::AlignHCenter, title)
            .height();
    l.title =
        QRectF(t.left() + kPad, t.top() + kTitleTop, t.width() - 2 * kPad, titleHeight + kLeading);
    l.legend = QRectF(t.left() + kPad, t.bottom() - legendFm.height() - kKeyBottom,
                      t.width() - 2 * kPad, legendFm.height() + kLeading);
    const double captionHeight = caption.isEmpty()
        ? 0.0
        : captionFm
              .boundingRect(QRectF(0, 0, t.width() - 2 * kPad, kUnboundedHeight),
                            Qt::TextWordWrap | Qt::AlignHCenter, caption)
              .height();
    l.caption = QRectF(t.left() + kPad, l.legend.top() - captionHeight - kSectionGap,
                       t.width() - 2 * kPad, captionHeight);
    const double bandTop = l.title.bottom() + kSectionGap;
    l.band = QRectF(t.left() + kPad, bandTop, t.width() - 2 * kPad,
                    std::max(kMinBandHeight, l.caption.top() - kSectionGap - bandTop));
}

/// One entry per block and step, all empty.
void sizeFor(PictureLayout& l, std::size_t count)
{
    l.places.resize(count);
    l.blocks.resize(count);
    l.mid.resize(count);
    l.items.resize(count);
    l.labels.resize(count);
    l.steps.resize(count > 0 ? count - 1 : 0);
    l.stepMid.resize(l.steps.size());
}

/// The shared measures of one layout attempt: the rows, the room the labels take, the slots.
struct Measures {
    std::size_t split = 0; ///< blocks [0, split) on the first row, the rest on the second
    double rowHeight = 0;
    double nameHeight = 0; ///< the name above each matrix
    double needed = 0; ///< the labels above and under a matrix
    double blockArea = 0; ///< the height left for the matrices
    std::array<double, 2> mids{}; ///< each row's middle line
    std::vector<double> labelWidth; ///< each block's widest label, with room
    std::vector<double> stepWidth; ///< each step's slot

    int rowOf(std::size_t block) const { return block < split ? 0 : 1; }
};

/// The room for each block's name above and for the lines under the tallest label stack;
/// returns the height of that stack.
double measureLabels(const PictureLayout& l, const Picture& p, Measures& m)
{
    const QFontMetricsF nameFm(l.fonts.name), shapeFm(l.fonts.shape), noteFm(l.fonts.note);
    const std::size_t count = p.blocks.size();
    m.labelWidth.assign(count, 0.0);
    double below = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const QStringList lines = linesUnder(p.blocks[i], l.notes, l.shards);
        double w = nameFm.horizontalAdvance(p.blocks[i].name);
        double h = 0;
        for (int j = 0; j < lines.size(); ++j) {
            const bool note = isNote(p.blocks[i], l.notes, j, lines.size());
            w = std::max(w, (note ? noteFm : shapeFm).horizontalAdvance(lines[j]));
            h += (note ? noteFm : shapeFm).height();
        }
        m.labelWidth[i] = w + kLabelRoom;
        below = std::max(below, h);
    }
    return below;
}

/// Each step's slot: its text with room, an arrow or the all-reduce at least their length.
void measureSteps(const PictureLayout& l, const Picture& p, Measures& m)
{
    const QFontMetricsF stepFm(l.fonts.step);
    m.stepWidth.assign(l.steps.size(), 0.0);
    for (std::size_t j = 0; j < l.steps.size(); ++j) {
        const Step& s = j < p.steps.size() ? p.steps[j] : Step{};
        const double text = stepFm.horizontalAdvance(s.label);
        switch (s.kind) {
        case Step::Kind::Text:
            m.stepWidth[j] = text + kStepRoom;
            break;
        case Step::Kind::Arrow:
            m.stepWidth[j] = std::max(text, kMinArrow) + kStepRoom;
            break;
        case Step::Kind::Reduce:
            m.stepWidth[j] = std::max(text, kMinReduce) + kStepRoom;
            break;
        }
    }
}

Measures measure(const PictureLayout& l, const Picture& p, int rows)
{
    Measures m;
    const std::size_t count = p.blocks.size();
    // Blocks [0, split) on the first row; the step into the first block of the second row
    // starts that row.
    m.split = rows == 2 ? (count + 1) / 2 : count;
    const double below = measureLabels(l, p, m);
    const QFontMetricsF nameFm(l.fonts.name);
    m.nameHeight = nameFm.height() + kLeading;
    m.rowHeight = l.band.height() / rows;
    m.needed = m.nameHeight + below + kBelowGap;
    m.blockArea = std::max(kMinBlockArea, m.rowHeight - m.needed);
    m.mids = {l.band.top() + m.nameHeight + m.blockArea / 2,
              l.band.top() + m.rowHeight + m.nameHeight + m.blockArea / 2};
    measureSteps(l, p, m);
    return m;
}

/// The width of each row at scale `k`: every block's slot and the steps between them.
std::array<double, 2> rowWidths(const std::vector<Block>& blocks, const Measures& m, double k)
{
    std::array<double, 2> sum{0.0, 0.0};
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        sum[static_cast<std::size_t>(m.rowOf(i))] +=
            std::max(std::max(kMinSide, k * side(blocks[i].cols)), m.labelWidth[i]);
        if (i > 0)
            sum[static_cast<std::size_t>(m.rowOf(i))] += m.stepWidth[i - 1];
    }
    return sum;
}

/// The largest scale at which the wider row fits the band and no matrix is taller than its
/// area; records how much of the width the widest matrix fills and whether it all fits.
double fitScale(PictureLayout& l, const std::vector<Block>& blocks, const Measures& m)
{
    const auto widest = [&](double k) {
        const auto w = rowWidths(blocks, m, k);
        return std::max(w[0], w[1]);
    };
    double kMax = 1e9;
    for (const Block& b : blocks)
        if (b.split != Split::Stack)
            kMax = std::min(kMax, m.blockArea / side(b.rows));
    double lo = 0, hi = kMax;
    for (int it = 0; it < kScaleSteps; ++it) {
        const double mid = (lo + hi) / 2;
        (widest(mid) <= l.band.width() ? lo : hi) = mid;
    }
    const double k = lo;
    double largest = 0;
    for (const Block& b : blocks)
        largest = std::max(largest, k * side(b.cols));
    l.fill = largest / std::max(l.band.width(), 1.0);
    l.fits = widest(k) <= l.band.width() + kFitSlack && m.rowHeight >= m.needed + kMinSide;
    return k;
}

/// A stack of `w` wide items centred on (cx, midY): one item per rank in a column; when they
/// cannot all be told apart, the first ones, a gap that says how many are left out, and the
/// last. Returns the rectangle of them all.
QRectF placeStack(PictureLayout& l, std::size_t i, const Block& b, const Measures& m, double k,
                  QPointF centre, double w)
{
    const QFontMetricsF labelFm(l.fonts.label);
    const double cx = centre.x(), midY = centre.y();
    const std::int64_t items = std::max<std::int64_t>(b.items, 1);
    const auto fitIn = [&](double height) {
        return static_cast<std::int64_t>(std::floor((height + kItemGap) / (kMinItem + kItemGap)));
    };
    const bool all = items <= fitIn(m.blockArea);
    // Left-out items get a gap tall enough to say how many they are.
    const double ellipsis = all ? 0.0 : labelFm.height() + kEllipsisLeading;
    const std::int64_t shown =
        all ? items : std::max<std::int64_t>(fitIn(m.blockArea - ellipsis - kItemGap), 2);
    const double itemHeight =
        std::min(std::max(kMinSide / 2, k * side(b.rows)),
                 (m.blockArea - ellipsis - static_cast<double>(shown - 1) * kItemGap)
                     / static_cast<double>(shown));
    const double total = static_cast<double>(shown) * itemHeight
        + static_cast<double>(shown - 1) * kItemGap + (all ? 0.0 : ellipsis + kItemGap);
    double y = midY - total / 2;
    for (std::int64_t s = 0; s < shown; ++s) {
        const bool lastOne = !all && s == shown - 1;
        if (lastOne) {
            l.items[i].push_back({QRectF(cx - w / 2, y, w, ellipsis), -1});
            y += ellipsis + kItemGap;
        }
        const std::int64_t rank = lastOne ? items - 1 : s;
        l.items[i].push_back({QRectF(cx - w / 2, y, w, itemHeight), rank});
        y += itemHeight + kItemGap;
    }
    return QRectF(cx - w / 2, midY - total / 2, w, total);
}

/// Blocks and steps left to right, each row centred in the band.
void placeBlocks(PictureLayout& l, const std::vector<Block>& blocks, const Measures& m, double k)
{
    const auto widths = rowWidths(blocks, m, k);
    double x = 0;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        const int row = m.rowOf(i);
        if (i == 0 || row != m.rowOf(i - 1))
            x = l.band.left()
                + std::max(0.0, (l.band.width() - widths[static_cast<std::size_t>(row)]) / 2);
        const double midY = m.mids[static_cast<std::size_t>(row)];
        const double rowTop = l.band.top() + row * m.rowHeight;
        if (i > 0) {
            l.steps[i - 1] = QRectF(x, rowTop, m.stepWidth[i - 1], m.rowHeight);
            l.stepMid[i - 1] = midY;
            x += m.stepWidth[i - 1];
        }
        const Block& b = blocks[i];
        const double w = std::max(kMinSide, k * side(b.cols));
        const double slotWidth = std::max(w, m.labelWidth[i]);
        l.places[i] = QRectF(x, rowTop, slotWidth, m.rowHeight);
        l.mid[i] = midY;
        const double cx = x + slotWidth / 2;
        if (b.split == Split::Stack) {
            l.blocks[i] = placeStack(l, i, b, m, k, QPointF(cx, midY), w);
        } else {
            const double h = std::max(kMinSide, std::min(m.blockArea, k * side(b.rows)));
            l.blocks[i] = QRectF(cx - w / 2, midY - h / 2, w, h);
        }
        x += slotWidth;
    }
}

/// Rank numbers on the stripes of a column or row split: every shard numbered or none
/// (numbers on some stripes only would read as a pattern that is not there).
void labelStripes(PictureLayout& l, std::size_t i, const Block& b)
{
    const QFontMetricsF labelFm(l.fonts.label);
    const double textHeight = labelFm.height();
    const QRectF r = l.blocks[i];
    const bool cols = b.split == Split::Columns;
    const double extent = cols ? r.width() : r.height();
    const double total = static_cast<double>(cols ? b.cols : b.rows);
    const double widestLabel =
        labelFm.horizontalAdvance(QString::number(b.shards.size() - 1)) + 2 * kLabelPad;
    const double need = cols ? widestLabel : textHeight;
    const double across = cols ? r.height() : r.width();
    const double acrossNeed = cols ? textHeight : widestLabel;
    bool fit = across >= acrossNeed;
    for (std::int64_t size : b.shards)
        if (size > 0 && extent * static_cast<double>(size) / total < need)
            fit = false;
    double offset = 0;
    for (std::size_t s = 0; s < b.shards.size() && fit; ++s) {
        const double size = extent * static_cast<double>(b.shards[s]) / total;
        const QString text = QString::number(s);
        const double tw = labelFm.horizontalAdvance(text);
        const double centre = offset + size / 2;
        if (size > 0)
            l.labels[i].push_back(
                {cols ? QRectF(r.left() + centre - tw / 2 - kLabelPad,
                               r.center().y() - textHeight / 2, tw + 2 * kLabelPad, textHeight)
                      : QRectF(r.center().x() - tw / 2 - kLabelPad,
                               r.top() + centre - textHeight / 2, tw + 2 * kLabelPad, textHeight),
                 text});
        offset += size;
    }
}

/// Names on stack items ("O₀"), each clear of the one above, and how many are left out.
void labelStack(PictureLayout& l, std::size_t i, const Block& b)
{
    const QFontMetricsF labelFm(l.fonts.label);
    const double textHeight = labelFm.height();
    double last = -1e9;
    for (const auto& [rect, rank] : l.items[i]) {
        if (rank < 0) {
            // "⋮ 4,080 more" may run past the narrow stack, within its own column.
            const std::int64_t hidden = b.items - static_cast<std::int64_t>(l.items[i].size()) + 1;
            const QString text = QString::fromUtf8("⋮ %1 more").arg(formatWhole(hidden));
            const double tw =
                std::min(labelFm.horizontalAdvance(text) + 2 * kLabelPad, l.places[i].width());
            l.labels[i].push_back(
                {QRectF(rect.center().x() - tw / 2, rect.top(), tw, rect.height()), text});
            last = rect.bottom();
            continue;
        }
        const QString text = QString(b.itemLabel).replace("%1", subscript(rank));
        const double tw = labelFm.horizontalAdvance(text);
        if (rect.height() >= textHeight - kLabelSqueeze && rect.width() >= tw + 2 * kLabelPad
            && rect.top() >= last + kLabelSpacing) {
            l.labels[i].push_back(
                {QRectF(rect.center().x() - tw / 2 - kLabelPad, rect.center().y() - textHeight / 2,
                        tw + 2 * kLabelPad, textHeight),
                 text});
            last = rect.center().y() + textHeight / 2;
        }
    }
}

/// Shard labels: rank numbers on stripes and names on stack items, kept only where the text
/// fits inside its own shard and clear of the previous label.
void placeLabels(PictureLayout& l, const std::vector<Block>& blocks)
{
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        const Block& b = blocks[i];
        if (b.split == Split::Columns || b.split == Split::Rows)
            labelStripes(l, i, b);
        else if (b.split == Split::Stack)
            labelStack(l, i, b);
    }
}

// ---- Drawing, step by step ------------------------------------------------------------------

/// Column or row shards as stripes in their ranks' colours, white lines between them unless
/// they are too thin to spare one.
void drawStripes(QPainter& painter, const Block& b, const QRectF& r)
{
    const bool cols = b.split == Split::Columns;
    const double extent = cols ? r.width() : r.height();
    // Stripes narrower than a few pixels are drawn without gaps between them.
    const bool thin =
        b.shards.empty() || extent / static_cast<double>(b.shards.size()) < kThinStripe;
    const double total = static_cast<double>(std::max<std::int64_t>(cols ? b.cols : b.rows, 1));
    double offset = 0;
    for (std::size_t s = 0; s < b.shards.size(); ++s) {
        const double size = extent * static_cast<double>(b.shards[s]) / total;
        const QRectF stripe = cols ? QRectF(r.left() + offset, r.top(), size, r.height())
                                   : QRectF(r.left(), r.top() + offset, r.width(), size);
        painter.fillRect(stripe, rankColor(static_cast<std::int64_t>(s)));
        if (!thin && s > 0) {
            painter.setPen(QPen(Qt::white, kStripeGapWidth));
            painter.drawLine(cols ? QLineF(stripe.topLeft(), stripe.bottomLeft())
                                  : QLineF(stripe.topLeft(), stripe.topRight()));
        }
        offset += size;
    }
}

/// Hatched everywhere but the diagonal blocks each rank can compute.
void drawBlockDiagonal(QPainter& painter, const Block& b, const QRectF& r)
{
    painter.fillRect(r, Qt::white);
    painter.fillRect(r, QBrush(kHatch, Qt::BDiagPattern));
    const double rowTotal = static_cast<double>(std::max<std::int64_t>(b.rows, 1));
    const double colTotal = static_cast<double>(std::max<std::int64_t>(b.cols, 1));
    double y = 0, x = 0;
    for (std::size_t s = 0; s < b.shards.size() && s < b.columnShards.size(); ++s) {
        const double h = r.height() * static_cast<double>(b.shards[s]) / rowTotal;
        const double w = r.width() * static_cast<double>(b.columnShards[s]) / colTotal;
        if (h > 0 && w > 0)
            painter.fillRect(QRectF(r.left() + x, r.top() + y, w, h),
                             rankColor(static_cast<std::int64_t>(s)));
        y += h;
        x += w;
    }
}

/// The matrix of block `i`: grey, striped, block-diagonal or a stack of items, then its frame.
void drawMatrix(QPainter& painter, const PictureLayout& l, std::size_t i, const Block& b)
{
    const QRectF r = l.blocks[i];
    switch (b.split) {
    case Split::Whole:
        painter.fillRect(r, kReplicated);
        break;
    case Split::Columns:
    case Split::Rows:
        drawStripes(painter, b, r);
        break;
    case Split::BlockDiagonal:
        drawBlockDiagonal(painter, b, r);
        break;
    case Split::Stack:
        for (const auto& [rect, rank] : l.items[i]) {
            if (rank < 0)
                continue;
            painter.fillRect(rect, rankColor(rank));
            painter.setPen(QPen(kBorder, 1));
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(rect);
        }
        break;
    }
    if (b.split != Split::Stack) {
        painter.setPen(QPen(kBorder, kBorderWidth));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(r);
    }
}

/// Shard labels of block `i`, in the colour that reads on their shard.
void drawShardLabels(QPainter& painter, const PictureLayout& l, std::size_t i, const Block& b)
{
    painter.setFont(l.fonts.label);
    for (const auto& [rect, text] : l.labels[i]) {
        QColor fill = kReplicated;
        if (!text.startsWith(QString::fromUtf8("⋮"))) {
            if (b.split == Split::Stack) {
                for (const auto& [itemRect, rank] : l.items[i])
                    if (itemRect.contains(rect.center()))
                        fill = rankColor(rank);
            } else {
                fill = rankColor(text.toLongLong());
            }
        } else {
            fill = Qt::white;
        }
        if (fill == Qt::white)
            painter.fillRect(rect, Qt::white); // over the lines running to the sum
        painter.setPen(textOn(fill));
        painter.drawText(rect, Qt::AlignCenter, text);
    }
}

/// Block `i`'s name above its matrix, its shape, shards and note under it.
void drawBlockText(QPainter& painter, const PictureLayout& l, std::size_t i, const Block& b)
{
    const QFontMetricsF nameFm(l.fonts.name), shapeFm(l.fonts.shape), noteFm(l.fonts.note);
    const QRectF r = l.blocks[i];
    const QRectF slot = l.places[i];
    painter.setPen(Qt::black);
    painter.setFont(l.fonts.name);
    painter.drawText(
        QRectF(slot.left(), r.top() - nameFm.height() - kTextGap, slot.width(), nameFm.height()),
        Qt::AlignHCenter | Qt::AlignBottom, b.name);
    const QStringList lines = linesUnder(b, l.notes, l.shards);
    double y = r.bottom() + kTextGap;
    for (int j = 0; j < lines.size(); ++j) {
        const bool note = isNote(b, l.notes, j, lines.size());
        const QFontMetricsF& fm = note ? noteFm : shapeFm;
        painter.setFont(note ? l.fonts.note : l.fonts.shape);
        painter.setPen(note ? kNoteText : Qt::black);
        painter.drawText(QRectF(slot.left(), y, slot.width(), fm.height()),
                         Qt::AlignHCenter | Qt::AlignTop, lines[j]);
        y += fm.height();
    }
}

void drawArrowHead(QPainter& painter, QPointF tip)
{
    QPainterPath head;
    head.moveTo(tip);
    head.lineTo(tip + QPointF(-kHeadLength, -kHeadHalfWidth));
    head.lineTo(tip + QPointF(-kHeadLength, kHeadHalfWidth));
    head.closeSubpath();
    painter.fillPath(head, Qt::black);
}

/// An arrow across the slot with its label above it ("GELU").
void drawArrowStep(QPainter& painter, const QFontMetricsF& stepFm, const QRectF& slot, double midY,
                   const QString& label)
{
    const QPointF from(slot.left() + kArrowInset, midY), to(slot.right() - kArrowInset, midY);
    painter.setPen(QPen(Qt::black, kArrowWidth));
    painter.drawLine(from, to - QPointF(kHeadOverlap, 0));
    drawArrowHead(painter, to);
    painter.setPen(Qt::black);
    painter.drawText(QRectF(slot.left(), midY - stepFm.height() - kArrowLabelLift, slot.width(),
                            stepFm.height()),
                     Qt::AlignCenter, label);
}

/// The all-reduce: every partial output of the stack `items` runs into one sum, which goes on
/// to the output.
void drawReduceStep(QPainter& painter, const QFontMetricsF& stepFm, const QRectF& slot, double midY,
                    const QString& label, const std::vector<std::pair<QRectF, std::int64_t>>* items)
{
    const double radius = std::min(kSumRadius, slot.width() / 4);
    const QPointF centre(slot.center().x(), midY);
    if (items)
        for (const auto& [rect, rank] : *items) {
            if (rank < 0)
                continue;
            painter.setPen(QPen(rankColor(rank), kArrowWidth));
            painter.drawLine(QPointF(rect.right() + 1, rect.center().y()),
                             centre - QPointF(radius, 0));
        }
    painter.setPen(QPen(Qt::black, kArrowWidth));
    painter.setBrush(Qt::white);
    painter.drawEllipse(centre, radius, radius);
    painter.drawText(QRectF(centre.x() - radius, centre.y() - radius, 2 * radius, 2 * radius),
                     Qt::AlignCenter, QString::fromUtf8("Σ"));
    const QPointF to(slot.right() - kReduceTipInset, midY);
    painter.drawLine(centre + QPointF(radius, 0), to - QPointF(kHeadOverlap, 0));
    drawArrowHead(painter, to);
    // The label on white, over the lines that fan in behind it.
    const double tw = stepFm.horizontalAdvance(label) + kReduceLabelPad;
    const QRectF box(centre.x() - tw / 2, centre.y() - radius - stepFm.height() - kReduceLabelGap,
                     tw, stepFm.height());
    painter.fillRect(box, Qt::white);
    painter.setPen(Qt::black);
    painter.drawText(box, Qt::AlignCenter, label);
}

/// The steps between the blocks: a sign, an arrow or the all-reduce.
void drawSteps(QPainter& painter, const PictureLayout& l, const Picture& p)
{
    const QFontMetricsF stepFm(l.fonts.step);
    for (std::size_t j = 0; j < l.steps.size(); ++j) {
        const Step s = j < p.steps.size() ? p.steps[j] : Step{};
        const QRectF slot = l.steps[j];
        const double midY = l.stepMid[j];
        painter.setFont(l.fonts.step);
        painter.setPen(Qt::black);
        switch (s.kind) {
        case Step::Kind::Text:
            painter.drawText(
                QRectF(slot.left(), midY - stepFm.height() / 2, slot.width(), stepFm.height()),
                Qt::AlignCenter, s.label);
            break;
        case Step::Kind::Arrow:
            drawArrowStep(painter, stepFm, slot, midY, s.label);
            break;
        case Step::Kind::Reduce:
            drawReduceStep(painter, stepFm, slot, midY, s.label,
                           j < l.items.size() ? &l.items[j] : nullptr);
            break;
        }
    }
}

/// One entry of the colour key.
struct Key {
    QBrush brush;
    QString text;
};

/// What rank colour `c` stands for in wording `variant` (0: longest, 2: shortest): one rank,
/// or every rank that shares the colour when there are more ranks than colours.
QString rankKeyText(std::int64_t c, std::int64_t ranks, int variant)
{
    const auto colours = static_cast<std::int64_t>(palette::kSeries.size());
    if (ranks <= colours)
        return variant < 2 ? ShardingPanel::tr("rank %1").arg(c) : QString::number(c);
    if (variant == 2)
        return QString::number(c) + QString::fromUtf8("…");
    QStringList same;
    for (std::int64_t r = c; r < ranks && same.size() < (variant == 0 ? 3 : 2); r += colours)
        same << QString::number(r);
    if (c + static_cast<std::int64_t>(same.size()) * colours < ranks)
        same << QString::fromUtf8("…");
    return (variant == 0 ? ShardingPanel::tr("ranks ") : QString()) + same.join(", ");
}

/// The colour key in wording `variant`: the rank colours, then grey and hatching if drawn.
QList<Key> colourKeys(const Picture& p, int variant)
{
    const std::int64_t ranks = std::max<std::int64_t>(p.ranks, 1);
    const auto colours = static_cast<std::int64_t>(palette::kSeries.size());
    const auto& blocks = p.blocks;
    const bool replicated = std::any_of(blocks.begin(), blocks.end(),
                                        [](const Block& b) { return b.split == Split::Whole; });
    const bool hatched = std::any_of(blocks.begin(), blocks.end(), [](const Block& b) {
        return b.split == Split::BlockDiagonal;
    });
    QList<Key> keys;
    for (std::int64_t c = 0; c < std::min(ranks, colours); ++c)
        keys << Key{rankColor(c), rankKeyText(c, ranks, variant)};
    if (replicated)
        keys << Key{kReplicated,
                    variant < 2 ? ShardingPanel::tr("every rank (replicated)")
                                : ShardingPanel::tr("all")};
    if (hatched)
        keys << Key{QBrush(kHatch, Qt::BDiagPattern),
                    variant < 2 ? ShardingPanel::tr("needs other ranks' H")
                                : ShardingPanel::tr("missing")};
    return keys;
}

/// The colour key on its line: the longest wording that fits (the shortest in any case).
void drawColourKey(QPainter& painter, const PictureLayout& l, const Picture& p)
{
    const QFontMetricsF legendFm(l.fonts.legend);
    const double swatch = legendFm.height() * kSwatchShare;
    for (int variant = 0; variant < 3; ++variant) {
        const QList<Key> keys = colourKeys(p, variant);
        double width = 0;
        for (const Key& key : keys)
            width += swatch + kSwatchGap + legendFm.horizontalAdvance(key.text) + kKeySpacing;
        if (width > l.legend.width() && variant < 2)
            continue;
        painter.setFont(l.fonts.legend);
        double x = l.legend.center().x() - width / 2;
        for (const Key& key : keys) {
            const QRectF box(x, l.legend.center().y() - swatch / 2, swatch, swatch);
            painter.fillRect(box, Qt::white);
            painter.fillRect(box, key.brush);
            painter.setPen(QPen(kBorder, 1));
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(box);
            painter.setPen(Qt::black);
            const double tw = legendFm.horizontalAdvance(key.text);
            painter.drawText(QRectF(box.right() + kSwatchGap, l.legend.top(), tw + kKeyTextRoom,
                                    l.legend.height()),
                             Qt::AlignLeft | Qt::AlignVCenter, key.text);
            x += swatch + kSwatchGap + tw + kKeySpacing;
        }
        break;
    }
}

} // namespace

struct ShardingPanel::Layout : PictureLayout { };

ShardingPanel::ShardingPanel(const QString& name, QWidget* parent)
    : ChartPanel(name, parent)
{
    setMinimumSize(480, 260);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void ShardingPanel::setPicture(Picture picture)
{
    m_picture = std::move(picture);
    update();
}

ShardingPanel::Layout ShardingPanel::layoutFor(const QRectF& t) const
{
    // The most that fits, with the largest matrix still a fair size: one row with every
    // label, else two rows (a narrow window has height to spare), else fewer words, else
    // smaller type.
    Layout l;
    for (const Level& level : kLevels)
        for (int rows : {1, 2}) {
            l = layoutAt(t, level.notes, level.shards, level.scale, rows);
            if (l.fits && l.fill >= kMinFill * rows)
                return l;
        }
    for (const Level& level : kLevels)
        for (int rows : {1, 2}) {
            l = layoutAt(t, level.notes, level.shards, level.scale, rows);
            if (l.fits)
                return l;
        }
    return l;
}

ShardingPanel::Layout ShardingPanel::layoutAt(const QRectF& t, bool notes, bool shards,
                                              double scale, int rows) const
{
    Layout l;
    l.fonts = fonts(scale);
    l.notes = notes;
    l.shards = shards;
    placeFrame(l, t, m_picture.title, m_picture.caption);
    sizeFor(l, m_picture.blocks.size());
    if (m_picture.blocks.empty())
        return l;
    const Measures m = measure(l, m_picture, rows);
    const double k = fitScale(l, m_picture.blocks, m);
    placeBlocks(l, m_picture.blocks, m, k);
    placeLabels(l, m_picture.blocks);
    return l;
}

QList<QRectF> ShardingPanel::blockRects(const QSizeF& size) const
{
    const Layout l = layoutFor(QRectF(QPointF(0, 0), size));
    return QList<QRectF>(l.blocks.begin(), l.blocks.end());
}

QList<QList<QRectF>> ShardingPanel::labelRects(const QSizeF& size) const
{
    const Layout l = layoutFor(QRectF(QPointF(0, 0), size));
    QList<QList<QRectF>> out;
    for (const auto& list : l.labels) {
        QList<QRectF> rects;
        for (const auto& [rect, text] : list)
            rects << rect;
        out << rects;
    }
    return out;
}

void ShardingPanel::render(QPainter& painter, const QRectF& target)
{
    const Layout l = layoutFor(target);
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    painter.fillRect(target, Qt::white);
    painter.setPen(Qt::black);
    painter.setFont(l.fonts.title);
    painter.drawText(l.title, Qt::AlignCenter | Qt::TextWordWrap, m_picture.title);

    for (std::size_t i = 0; i < m_picture.blocks.size(); ++i) {
        const Block& b = m_picture.blocks[i];
        drawMatrix(painter, l, i, b);
        drawShardLabels(painter, l, i, b);
        drawBlockText(painter, l, i, b);
    }
    drawSteps(painter, l, m_picture);

    painter.setPen(Qt::black);
    painter.setFont(l.fonts.caption);
    painter.drawText(l.caption, Qt::TextWordWrap | Qt::AlignHCenter | Qt::AlignTop,
                     m_picture.caption);
    drawColourKey(painter, l, m_picture);
    painter.restore();
}

void ShardingPanel::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    render(painter, rect());
}

} // namespace scalelab::ui
