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

} // namespace

struct ShardingPanel::Layout {
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
            if (l.fits && l.fill >= 0.12 * rows)
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
    const Fonts f = fonts(scale);
    const QFontMetricsF titleFm(f.title), nameFm(f.name), shapeFm(f.shape), noteFm(f.note),
        stepFm(f.step), labelFm(f.label), captionFm(f.caption), legendFm(f.legend);
    const double pad = 10;
    Layout l;
    l.fonts = f;
    l.notes = notes;
    l.shards = shards;
    l.title = QRectF(t.left(), t.top() + 6, t.width(), titleFm.height() + 4);
    l.legend = QRectF(t.left() + pad, t.bottom() - legendFm.height() - 10, t.width() - 2 * pad,
                      legendFm.height() + 4);
    const double captionHeight = m_picture.caption.isEmpty()
        ? 0.0
        : captionFm
              .boundingRect(QRectF(0, 0, t.width() - 2 * pad, 10000),
                            Qt::TextWordWrap | Qt::AlignHCenter, m_picture.caption)
              .height();
    l.caption = QRectF(t.left() + pad, l.legend.top() - captionHeight - 8, t.width() - 2 * pad,
                       captionHeight);
    const double bandTop = l.title.bottom() + 8;
    l.band = QRectF(t.left() + pad, bandTop, t.width() - 2 * pad,
                    std::max(40.0, l.caption.top() - 8 - bandTop));

    const auto& blocks = m_picture.blocks;
    const std::size_t count = blocks.size();
    l.places.resize(count);
    l.blocks.resize(count);
    l.mid.resize(count);
    l.items.resize(count);
    l.labels.resize(count);
    l.steps.resize(count > 0 ? count - 1 : 0);
    l.stepMid.resize(l.steps.size());
    if (count == 0)
        return l;
    // Blocks [0, split) on the first row; the step into the first block of the second row
    // starts that row.
    const std::size_t split = rows == 2 ? (count + 1) / 2 : count;
    const auto rowOf = [split](std::size_t block) {
        return block < split ? 0 : 1;
    };

    // Room for the name above and the lines under the tallest label stack.
    std::vector<double> labelWidth(count, 0.0);
    double below = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const QStringList lines = linesUnder(blocks[i], notes, shards);
        double w = nameFm.horizontalAdvance(blocks[i].name);
        double h = 0;
        for (int j = 0; j < lines.size(); ++j) {
            const bool note = notes && !blocks[i].note.isEmpty() && j == lines.size() - 1;
            w = std::max(w, (note ? noteFm : shapeFm).horizontalAdvance(lines[j]));
            h += (note ? noteFm : shapeFm).height();
        }
        labelWidth[i] = w + 14;
        below = std::max(below, h);
    }
    const double nameHeight = nameFm.height() + 4;
    const double rowHeight = l.band.height() / rows;
    const double needed = nameHeight + below + 8;
    const double blockArea = std::max(20.0, rowHeight - needed);
    const double mids[] = {l.band.top() + nameHeight + blockArea / 2,
                           l.band.top() + rowHeight + nameHeight + blockArea / 2};

    std::vector<double> stepWidth(l.steps.size(), 0.0);
    for (std::size_t j = 0; j < l.steps.size(); ++j) {
        const Step& s = j < m_picture.steps.size() ? m_picture.steps[j] : Step{};
        const double text = stepFm.horizontalAdvance(s.label);
        switch (s.kind) {
        case Step::Kind::Text:
            stepWidth[j] = text + 20;
            break;
        case Step::Kind::Arrow:
            stepWidth[j] = std::max(text, 40.0) + 20;
            break;
        case Step::Kind::Reduce:
            stepWidth[j] = std::max(text, 70.0) + 20;
            break;
        }
    }

    // Sides grow with the square root of the dimension: shapes stay recognisable (4096 is
    // wider than 1024) without a wide matrix crushing a narrow one. One scale k for all.
    const auto side = [](std::int64_t n) {
        return std::sqrt(static_cast<double>(std::max<std::int64_t>(n, 1)));
    };
    const double minSide = 14;
    const auto rowWidths = [&](double k) {
        std::array<double, 2> sum{0.0, 0.0};
        for (std::size_t i = 0; i < count; ++i) {
            sum[static_cast<std::size_t>(rowOf(i))] +=
                std::max(std::max(minSide, k * side(blocks[i].cols)), labelWidth[i]);
            if (i > 0)
                sum[static_cast<std::size_t>(rowOf(i))] += stepWidth[i - 1];
        }
        return sum;
    };
    const auto widest = [&](double k) {
        const auto w = rowWidths(k);
        return std::max(w[0], w[1]);
    };
    double kMax = 1e9;
    for (const Block& b : blocks)
        if (b.split != Split::Stack)
            kMax = std::min(kMax, blockArea / side(b.rows));
    double lo = 0, hi = kMax;
    for (int it = 0; it < 60; ++it) {
        const double mid = (lo + hi) / 2;
        (widest(mid) <= l.band.width() ? lo : hi) = mid;
    }
    const double k = lo;
    double largest = 0;
    for (const Block& b : blocks)
        largest = std::max(largest, k * side(b.cols));
    l.fill = largest / std::max(l.band.width(), 1.0);
    l.fits = widest(k) <= l.band.width() + 0.5 && rowHeight >= needed + minSide;

    const auto widths = rowWidths(k);
    double x = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const int row = rowOf(i);
        if (i == 0 || row != rowOf(i - 1))
            x = l.band.left()
                + std::max(0.0, (l.band.width() - widths[static_cast<std::size_t>(row)]) / 2);
        const double midY = mids[row];
        if (i > 0) {
            l.steps[i - 1] = QRectF(x, l.band.top() + row * rowHeight, stepWidth[i - 1], rowHeight);
            l.stepMid[i - 1] = midY;
            x += stepWidth[i - 1];
        }
        const Block& b = blocks[i];
        const double w = std::max(minSide, k * side(b.cols));
        const double slotWidth = std::max(w, labelWidth[i]);
        l.places[i] = QRectF(x, l.band.top() + row * rowHeight, slotWidth, rowHeight);
        l.mid[i] = midY;
        const double cx = x + slotWidth / 2;
        if (b.split == Split::Stack) {
            // One item per rank in a column; when they cannot all be told apart, the first
            // ones, a gap that says how many are left out, and the last.
            const std::int64_t items = std::max<std::int64_t>(b.items, 1);
            const double minItem = 4;
            const double gap = 2;
            const auto fitIn = [&](double height) {
                return static_cast<std::int64_t>(std::floor((height + gap) / (minItem + gap)));
            };
            const bool all = items <= fitIn(blockArea);
            // Left-out items get a gap tall enough to say how many they are.
            const double ellipsis = all ? 0.0 : labelFm.height() + 2;
            const std::int64_t shown =
                all ? items : std::max<std::int64_t>(fitIn(blockArea - ellipsis - gap), 2);
            const double itemHeight =
                std::min(std::max(minSide / 2, k * side(b.rows)),
                         (blockArea - ellipsis - static_cast<double>(shown - 1) * gap)
                             / static_cast<double>(shown));
            const double total = static_cast<double>(shown) * itemHeight
                + static_cast<double>(shown - 1) * gap + (all ? 0.0 : ellipsis + gap);
            double y = midY - total / 2;
            for (std::int64_t s = 0; s < shown; ++s) {
                const bool lastOne = !all && s == shown - 1;
                if (lastOne) {
                    l.items[i].push_back({QRectF(cx - w / 2, y, w, ellipsis), -1});
                    y += ellipsis + gap;
                }
                const std::int64_t rank = lastOne ? items - 1 : s;
                l.items[i].push_back({QRectF(cx - w / 2, y, w, itemHeight), rank});
                y += itemHeight + gap;
            }
            l.blocks[i] = QRectF(cx - w / 2, midY - total / 2, w, total);
        } else {
            const double h = std::max(minSide, std::min(blockArea, k * side(b.rows)));
            l.blocks[i] = QRectF(cx - w / 2, midY - h / 2, w, h);
        }
        x += slotWidth;
    }

    // Shard labels: rank numbers on stripes and names on stack items, kept only where the
    // text fits inside its own shard and clear of the previous label.
    const double textHeight = labelFm.height();
    for (std::size_t i = 0; i < count; ++i) {
        const Block& b = blocks[i];
        const QRectF r = l.blocks[i];
        auto& out = l.labels[i];
        if (b.split == Split::Columns || b.split == Split::Rows) {
            const bool cols = b.split == Split::Columns;
            const double extent = cols ? r.width() : r.height();
            const double total = static_cast<double>(cols ? b.cols : b.rows);
            // Every shard numbered or none: numbers on some stripes only would read as a
            // pattern that is not there.
            const double widestLabel =
                labelFm.horizontalAdvance(QString::number(b.shards.size() - 1)) + 4;
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
                    out.push_back(
                        {cols ? QRectF(r.left() + centre - tw / 2 - 2,
                                       r.center().y() - textHeight / 2, tw + 4, textHeight)
                              : QRectF(r.center().x() - tw / 2 - 2,
                                       r.top() + centre - textHeight / 2, tw + 4, textHeight),
                         text});
                offset += size;
            }
        } else if (b.split == Split::Stack) {
            double last = -1e9;
            for (const auto& [rect, rank] : l.items[i]) {
                if (rank < 0) {
                    // "⋮ 4,080 more" may run past the narrow stack, within its own column.
                    const std::int64_t hidden =
                        b.items - static_cast<std::int64_t>(l.items[i].size()) + 1;
                    const QString text = QString::fromUtf8("⋮ %1 more").arg(formatWhole(hidden));
                    const double tw =
                        std::min(labelFm.horizontalAdvance(text) + 4, l.places[i].width());
                    out.push_back(
                        {QRectF(rect.center().x() - tw / 2, rect.top(), tw, rect.height()), text});
                    last = rect.bottom();
                    continue;
                }
                const QString text = QString(b.itemLabel).replace("%1", subscript(rank));
                const double tw = labelFm.horizontalAdvance(text);
                if (rect.height() >= textHeight - 2 && rect.width() >= tw + 4
                    && rect.top() >= last + 1) {
                    out.push_back({QRectF(rect.center().x() - tw / 2 - 2,
                                          rect.center().y() - textHeight / 2, tw + 4, textHeight),
                                   text});
                    last = rect.center().y() + textHeight / 2;
                }
            }
        }
    }
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
    const Fonts& f = l.fonts;
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    painter.fillRect(target, Qt::white);
    painter.setPen(Qt::black);
    painter.setFont(f.title);
    painter.drawText(l.title, Qt::AlignCenter, m_picture.title);

    const QFontMetricsF nameFm(f.name), shapeFm(f.shape), noteFm(f.note), stepFm(f.step);
    const auto& blocks = m_picture.blocks;
    const QPen border(kBorder, 1.5);
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        const Block& b = blocks[i];
        const QRectF r = l.blocks[i];
        const bool thin = [&] {
            // Stripes narrower than a few pixels are drawn without gaps between them.
            const double extent = b.split == Split::Columns ? r.width() : r.height();
            return b.shards.empty() || extent / static_cast<double>(b.shards.size()) < 5;
        }();
        switch (b.split) {
        case Split::Whole:
            painter.fillRect(r, kReplicated);
            break;
        case Split::Columns:
        case Split::Rows: {
            const bool cols = b.split == Split::Columns;
            const double extent = cols ? r.width() : r.height();
            const double total =
                static_cast<double>(std::max<std::int64_t>(cols ? b.cols : b.rows, 1));
            double offset = 0;
            for (std::size_t s = 0; s < b.shards.size(); ++s) {
                const double size = extent * static_cast<double>(b.shards[s]) / total;
                const QRectF stripe = cols ? QRectF(r.left() + offset, r.top(), size, r.height())
                                           : QRectF(r.left(), r.top() + offset, r.width(), size);
                painter.fillRect(stripe, rankColor(static_cast<std::int64_t>(s)));
                if (!thin && s > 0) {
                    painter.setPen(QPen(Qt::white, 1.5));
                    painter.drawLine(cols ? QLineF(stripe.topLeft(), stripe.bottomLeft())
                                          : QLineF(stripe.topLeft(), stripe.topRight()));
                }
                offset += size;
            }
            break;
        }
        case Split::BlockDiagonal: {
            painter.fillRect(r, Qt::white);
            painter.fillRect(r, QBrush(QColor(150, 150, 150), Qt::BDiagPattern));
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
            break;
        }
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
            painter.setPen(border);
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(r);
        }

        // Shard labels, in the colour that reads on their shard.
        painter.setFont(f.label);
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

        // Name above, shape and shards under.
        const QRectF slot = l.places[i];
        painter.setPen(Qt::black);
        painter.setFont(f.name);
        painter.drawText(
            QRectF(slot.left(), r.top() - nameFm.height() - 4, slot.width(), nameFm.height()),
            Qt::AlignHCenter | Qt::AlignBottom, b.name);
        const QStringList lines = linesUnder(b, l.notes, l.shards);
        double y = r.bottom() + 4;
        for (int j = 0; j < lines.size(); ++j) {
            const bool note = l.notes && !b.note.isEmpty() && j == lines.size() - 1;
            const QFontMetricsF& fm = note ? noteFm : shapeFm;
            painter.setFont(note ? f.note : f.shape);
            painter.setPen(note ? QColor(60, 60, 60) : Qt::black);
            painter.drawText(QRectF(slot.left(), y, slot.width(), fm.height()),
                             Qt::AlignHCenter | Qt::AlignTop, lines[j]);
            y += fm.height();
        }
    }

    // The steps between the blocks.
    for (std::size_t j = 0; j < l.steps.size(); ++j) {
        const Step s = j < m_picture.steps.size() ? m_picture.steps[j] : Step{};
        const QRectF slot = l.steps[j];
        const double midY = l.stepMid[j];
        painter.setFont(f.step);
        painter.setPen(Qt::black);
        const auto arrowHead = [&painter](QPointF tip) {
            QPainterPath head;
            head.moveTo(tip);
            head.lineTo(tip + QPointF(-10, -5));
            head.lineTo(tip + QPointF(-10, 5));
            head.closeSubpath();
            painter.fillPath(head, Qt::black);
        };
        if (s.kind == Step::Kind::Text) {
            painter.drawText(
                QRectF(slot.left(), midY - stepFm.height() / 2, slot.width(), stepFm.height()),
                Qt::AlignCenter, s.label);
        } else if (s.kind == Step::Kind::Arrow) {
            const QPointF from(slot.left() + 6, midY), to(slot.right() - 6, midY);
            painter.setPen(QPen(Qt::black, 2.5));
            painter.drawLine(from, to - QPointF(6, 0));
            arrowHead(to);
            painter.setPen(Qt::black);
            painter.drawText(
                QRectF(slot.left(), midY - stepFm.height() - 6, slot.width(), stepFm.height()),
                Qt::AlignCenter, s.label);
        } else {
            // The all-reduce: every partial output runs into one sum, which goes on to the
            // output.
            const double radius = std::min(17.0, slot.width() / 4);
            const QPointF centre(slot.center().x(), midY);
            if (j < l.items.size())
                for (const auto& [rect, rank] : l.items[j]) {
                    if (rank < 0)
                        continue;
                    painter.setPen(QPen(rankColor(rank), 2.5));
                    painter.drawLine(QPointF(rect.right() + 1, rect.center().y()),
                                     centre - QPointF(radius, 0));
                }
            painter.setPen(QPen(Qt::black, 2.5));
            painter.setBrush(Qt::white);
            painter.drawEllipse(centre, radius, radius);
            painter.drawText(
                QRectF(centre.x() - radius, centre.y() - radius, 2 * radius, 2 * radius),
                Qt::AlignCenter, QString::fromUtf8("Σ"));
            const QPointF to(slot.right() - 4, midY);
            painter.drawLine(centre + QPointF(radius, 0), to - QPointF(6, 0));
            arrowHead(to);
            // The label on white, over the lines that fan in behind it.
            const double tw = stepFm.horizontalAdvance(s.label) + 8;
            const QRectF label(centre.x() - tw / 2, centre.y() - radius - stepFm.height() - 4, tw,
                               stepFm.height());
            painter.fillRect(label, Qt::white);
            painter.setPen(Qt::black);
            painter.drawText(label, Qt::AlignCenter, s.label);
        }
    }

    // Caption and the colour key.
    painter.setPen(Qt::black);
    painter.setFont(f.caption);
    painter.drawText(l.caption, Qt::TextWordWrap | Qt::AlignHCenter | Qt::AlignTop,
                     m_picture.caption);

    struct Key {
        QBrush brush;
        QString text;
    };
    const std::int64_t ranks = std::max<std::int64_t>(m_picture.ranks, 1);
    const auto colours = static_cast<std::int64_t>(palette::kSeries.size());
    const bool replicated = std::any_of(blocks.begin(), blocks.end(),
                                        [](const Block& b) { return b.split == Split::Whole; });
    const bool hatched = std::any_of(blocks.begin(), blocks.end(), [](const Block& b) {
        return b.split == Split::BlockDiagonal;
    });
    const QFontMetricsF legendFm(f.legend);
    const double swatch = legendFm.height() * 0.8;
    // Longest wording first; the first that fits on the line is drawn.
    for (int variant = 0; variant < 3; ++variant) {
        QList<Key> keys;
        for (std::int64_t c = 0; c < std::min(ranks, colours); ++c) {
            QString text;
            if (ranks <= colours) {
                text = variant < 2 ? tr("rank %1").arg(c) : QString::number(c);
            } else {
                QStringList same;
                for (std::int64_t r = c; r < ranks && same.size() < (variant == 0 ? 3 : 2);
                     r += colours)
                    same << QString::number(r);
                if (c + static_cast<std::int64_t>(same.size()) * colours < ranks)
                    same << QString::fromUtf8("…");
                text = (variant == 0 ? tr("ranks ") : QString()) + same.join(", ");
                if (variant == 2)
                    text = QString::number(c) + QString::fromUtf8("…");
            }
            keys << Key{rankColor(c), text};
        }
        if (replicated)
            keys << Key{kReplicated, variant < 2 ? tr("every rank (replicated)") : tr("all")};
        if (hatched)
            keys << Key{QBrush(QColor(150, 150, 150), Qt::BDiagPattern),
                        variant < 2 ? tr("needs other ranks' H") : tr("missing")};
        double width = 0;
        for (const Key& key : keys)
            width += swatch + 6 + legendFm.horizontalAdvance(key.text) + 18;
        if (width > l.legend.width() && variant < 2)
            continue;
        painter.setFont(f.legend);
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
            painter.drawText(QRectF(box.right() + 6, l.legend.top(), tw + 2, l.legend.height()),
                             Qt::AlignLeft | Qt::AlignVCenter, key.text);
            x += swatch + 6 + tw + 18;
        }
        break;
    }
    painter.restore();
}

void ShardingPanel::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    render(painter, rect());
}

} // namespace scalelab::ui
