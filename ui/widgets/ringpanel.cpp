#include "ringpanel.h"

#include "chartstyle.h"
#include "format.h"

#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QHash>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QSlider>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <vector>

namespace scalelab::ui {

namespace {

/// Time a step stays on screen while playing: long enough to read the arrows and the sums.
constexpr int kStepMilliseconds = 1100;

/// The buffers' shading runs from white (one rank's own value) to this (the full sum).
const QColor kCompleteShade{86, 180, 233};

// Layout metrics of the picture, in pixels unless said otherwise.
/// Margins around the picture.
constexpr double kMarginX = 8;
constexpr double kMarginY = 6;
/// The size at which the ring and the buffers are drawn at full scale, and the smallest scale.
constexpr QSizeF kFullSize{900, 560};
constexpr double kMinScale = 0.7;
/// Below the title's line, and between the title and the phase line.
constexpr double kTitlePadding = 4;
constexpr double kTitleGap = 4;
/// Below the phase line's two lines.
constexpr double kPhasePadding = 4;
/// Between the phase line and the picture, between the picture and the caption, above the
/// caption's text.
constexpr double kPhaseGap = 8;
constexpr double kCaptionGap = 6;
constexpr double kCaptionPadding = 2;
/// The ring's share of the picture: at most this part of the width, and this times the height.
constexpr double kRingShare = 0.36;
constexpr double kRingAspect = 1.05;
/// Between the ring and the buffers.
constexpr double kRingGap = 12;
/// Shrinking text to fit: the step of each try and the smallest point size.
constexpr double kShrinkStep = 0.94;
constexpr double kMinTitlePoints = 6;
constexpr double kMinPoints = 5;

/// The ring: the smallest radius, and the room around it for the chunk labels (in label lines,
/// plus pixels).
constexpr double kMinRingRadius = 10;
constexpr double kLabelRoomLines = 1.6;
constexpr double kLabelRoom = 4;
/// A rank's node: its radius is this share of its arc, within these bounds (the upper one
/// scaled).
constexpr double kNodeShare = 0.55;
constexpr double kMinNodeRadius = 9;
constexpr double kMaxNodeRadius = 24;
/// A node's number ("15" at most) is at most this many node radii wide.
constexpr double kNodeTextWidth = 1.7;
/// An arc's control point, in radii: its midpoint then lies just outside the circle.
constexpr double kArcBulge = 2.12;
/// The chunk label: distance from the circle (radii, plus label lines), padding, corner.
constexpr double kChunkLabelRadius = 1.06;
constexpr double kChunkLabelLines = 0.85;
constexpr double kChunkLabelPadding = 3;
constexpr double kChunkLabelCorner = 3;
/// The gap between an arrow's tip and the node it points at.
constexpr double kArrowClearance = 1.5;
/// Links between steps are grey and thin.
const QColor kIdleLink{160, 160, 160};

/// The buffers: between chunks, rows beyond the ranks (header, rule, plain sum), the tallest
/// row in text lines, the widest cell in row heights.
constexpr double kChunkGap = 5;
constexpr double kExtraRows = 2.5;
constexpr double kMaxRowLines = 2.6;
constexpr double kMaxCellAspect = 2.2;
/// The type fills at most this share of a row.
constexpr double kTextShareOfRow = 0.8;
/// The row label: the swatch's largest size and its share of a row, the gap after it.
constexpr double kSwatch = 12;
constexpr double kSwatchShare = 0.6;
constexpr double kSwatchGap = 4;
const QColor kCellBorder{170, 170, 170};
/// The columns' room beyond their text: the label's swatch and gaps, the sent column's gap, a
/// value's padding.
constexpr double kLabelColumnSwatch = 14;
constexpr double kColumnGap = 10;
constexpr double kCellPadding = 8;

QColor mix(const QColor& a, const QColor& b, double t)
{
    const auto channel = [t](int x, int y) {
        return static_cast<int>(std::lround(x + (y - x) * t));
    };
    return QColor(channel(a.red(), b.red()), channel(a.green(), b.green()),
                  channel(a.blue(), b.blue()));
}

QColor textOn(const QColor& background)
{
    return background.lightnessF() > 0.55 ? Qt::black : Qt::white;
}

QFont scaledFont(QFont font, double scale)
{
    font.setPointSizeF(std::max(kMinPoints, font.pointSizeF() * scale));
    return font;
}

/// `font` shrunk step by step until `text` is at most `width` wide (hinting makes widths step,
/// hence a loop).
QFont fitted(QFont font, const QString& text, double width)
{
    while (QFontMetricsF(font).horizontalAdvance(text) > width
           && font.pointSizeF() > kMinTitlePoints)
        font.setPointSizeF(font.pointSizeF() * kShrinkStep);
    return font;
}

QPointF onCircle(const QPointF& centre, double radius, double angle)
{
    return centre + radius * QPointF(std::cos(angle), std::sin(angle));
}

/// Whether `painter` draws on pixels, unturned, at one scale across and down: where a shape
/// drawn once and copied looks the same as the shape drawn again (SVG and PDF get real shapes).
bool copiesPixels(const QPainter& painter)
{
    const QTransform device = painter.deviceTransform();
    return !paintsVectors(painter) && device.type() <= QTransform::TxScale
        && device.m11() == device.m22();
}

/// A circle of `radius` device pixels stroked with `pen` and filled with `brush`, drawn
/// smoothed once and kept. Painting happens on the GUI thread only, so a plain cache will do:
/// a few sizes a panel, each made again only when the panel's size changes.
const QImage& circleSprite(double radius, const QPen& pen, const QBrush& brush)
{
    static QHash<QString, QImage> sprites;
    const bool stroked = pen.style() != Qt::NoPen, filled = brush.style() != Qt::NoBrush;
    const QString key = QString("%1 %2 %3 %4")
                            .arg(std::lround(radius * 64))
                            .arg(stroked ? pen.color().rgba() : 0)
                            .arg(stroked ? pen.widthF() : 0)
                            .arg(filled ? brush.color().rgba() : 0);
    auto sprite = sprites.find(key);
    if (sprite == sprites.end()) {
        const double reach = radius + (stroked ? pen.widthF() / 2 : 0);
        const int side = static_cast<int>(std::ceil(2 * reach)) + 2;
        QImage image(side, side, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::transparent);
        QPainter p(&image);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(pen);
        p.setBrush(brush);
        p.drawEllipse(QPointF(side / 2.0, side / 2.0), radius, radius);
        p.end();
        if (sprites.size() > 64)
            sprites.clear(); // sizes of windows long gone
        sprite = sprites.insert(key, image);
    }
    return *sprite;
}

/// Circles of `radius` around `centres`, with the painter's pen and a plain brush. On pixels
/// one circle is drawn at the device's resolution and copied to each place, to the nearest
/// pixel: the ring of 64 ranks drew 65 ellipses a frame, each outlined and filled as a path
/// (3 M instructions).
void drawCircles(QPainter& painter, const std::vector<QPointF>& centres, double radius)
{
    if (!copiesPixels(painter) || painter.brush().style() > Qt::SolidPattern) {
        for (const QPointF& c : centres)
            painter.drawEllipse(c, radius, radius);
        return;
    }
    const QTransform device = painter.deviceTransform();
    QPen pen = painter.pen();
    pen.setWidthF(pen.widthF() * device.m11());
    const QImage& sprite = circleSprite(radius * device.m11(), pen, painter.brush());
    const double half = sprite.width() / 2.0;
    painter.save();
    painter.resetTransform();
    for (const QPointF& c : centres) {
        const QPointF at = device.map(c);
        painter.drawImage(QPointF(std::round(at.x() - half), std::round(at.y() - half)), sprite);
    }
    painter.restore();
}

/// Rank r sits at angle -90 degrees + r/n of a turn: rank 0 at the top, the ring clockwise.
double rankAngle(int rank, int ranks)
{
    return -std::numbers::pi / 2 + 2 * std::numbers::pi * rank / ranks;
}

template <typename T> const T& at(const std::vector<T>& v, int i)
{
    return v[static_cast<std::size_t>(i)];
}

/// Where the ring of one step is drawn.
struct RingLayout {
    int n = 0;
    double scale = 1;
    bool moving = false; ///< a step that sends chunks (not the start)
    QFont labelFont;
    QPointF centre;
    double radius = 0;
    double nodeRadius = 0;
};

RingLayout ringLayout(const QRectF& area, double scale, int n, bool moving)
{
    RingLayout ring;
    ring.n = n;
    ring.scale = scale;
    ring.moving = moving;
    ring.labelFont = scaledFont(chartFonts().annotation, scale);
    ring.labelFont.setBold(true);
    const QFontMetricsF fm(ring.labelFont);
    ring.centre = area.center();
    ring.radius = std::max(kMinRingRadius,
                           std::min(area.width(), area.height()) / 2 - fm.height() * kLabelRoomLines
                               - kLabelRoom);
    ring.nodeRadius = std::clamp(std::numbers::pi * ring.radius / std::max(n, 1) * kNodeShare,
                                 kMinNodeRadius, kMaxNodeRadius * scale);
    return ring;
}

/// The arrowhead where the arc from `control` meets the receiving node's rim at `end`.
void drawArrowHead(QPainter& painter, const RingLayout& ring, const QPointF& control,
                   const QPointF& end, const QColor& colour)
{
    const QPointF direction = end - control;
    const double length = std::hypot(direction.x(), direction.y());
    const QPointF unit = direction / length;
    const QPointF tip = end - unit * (ring.nodeRadius + kArrowClearance);
    const QPointF normal(-unit.y(), unit.x());
    const double head = ring.moving ? 9.0 + 4.0 * ring.scale : 8.0;
    QPolygonF arrow;
    arrow << tip << tip - unit * head * 1.5 + normal * head * 0.7
          << tip - unit * head * 1.5 - normal * head * 0.7;
    painter.setPen(Qt::NoPen);
    painter.setBrush(colour);
    painter.drawPolygon(arrow);
}

/// "c2" in a box outside the arc at angle `middle`: the chunk the arc carries in this step.
void drawChunkLabel(QPainter& painter, const RingLayout& ring, double middle, int chunk,
                    const QColor& colour)
{
    const QFontMetricsF fm(ring.labelFont);
    const QString label = RingPanel::tr("c%1").arg(chunk);
    const QPointF at = onCircle(
        ring.centre, ring.radius * kChunkLabelRadius + fm.height() * kChunkLabelLines, middle);
    const double width = fm.horizontalAdvance(label);
    const QRectF box(at.x() - width / 2 - kChunkLabelPadding, at.y() - fm.height() / 2,
                     width + 2 * kChunkLabelPadding, fm.height());
    painter.setBrush(Qt::white);
    painter.setPen(QPen(colour, 1.5));
    painter.drawRoundedRect(box, kChunkLabelCorner, kChunkLabelCorner);
    painter.setPen(Qt::black);
    painter.setFont(ring.labelFont);
    painter.drawText(box, Qt::AlignCenter, label);
}

/// The arc from rank `r` to the next, with the chunk it sends (`chunk`, when moving).
void drawLink(QPainter& painter, const RingLayout& ring, int r, int chunk)
{
    const int n = ring.n;
    const QPointF from = onCircle(ring.centre, ring.radius, rankAngle(r, n));
    const QPointF end = onCircle(ring.centre, ring.radius, rankAngle((r + 1) % n, n));
    const double middle = rankAngle(r, n) + std::numbers::pi / n;
    // A quadratic curve's midpoint lies halfway between the chord's midpoint and the
    // control point: put it just outside the circle.
    const double controlDistance =
        kArcBulge * ring.radius - ring.radius * std::cos(std::numbers::pi / n);
    const QPointF control = onCircle(ring.centre, controlDistance, middle);
    const QColor colour = ring.moving ? RingPanel::rankColor(r) : kIdleLink;
    const double width = ring.moving ? std::max(3.0, 4.5 * ring.scale) : 2.0;
    QPainterPath path(from);
    path.quadTo(control, end);
    painter.setPen(QPen(colour, width, Qt::SolidLine, Qt::RoundCap));
    painter.setBrush(Qt::NoBrush);
    painter.drawPath(path);
    drawArrowHead(painter, ring, control, end, colour);
    if (ring.moving)
        drawChunkLabel(painter, ring, middle, chunk, colour);
}

/// The ranks, each in its colour with its number.
void drawNodes(QPainter& painter, const RingLayout& ring)
{
    QFont nodeFont = ring.labelFont;
    const double widest = QFontMetricsF(nodeFont).horizontalAdvance("15");
    if (widest > ring.nodeRadius * kNodeTextWidth)
        nodeFont.setPointSizeF(std::max(
            kMinPoints, nodeFont.pointSizeF() * ring.nodeRadius * kNodeTextWidth / widest));
    painter.setFont(nodeFont);
    const double d = 2 * ring.nodeRadius;
    for (int r = 0; r < ring.n; ++r) {
        const QPointF p =
            ring.n == 1 ? ring.centre : onCircle(ring.centre, ring.radius, rankAngle(r, ring.n));
        const QColor colour = RingPanel::rankColor(r);
        painter.setPen(QPen(Qt::black, 1.5));
        painter.setBrush(colour);
        painter.drawEllipse(p, ring.nodeRadius, ring.nodeRadius);
        painter.setPen(textOn(colour));
        painter.drawText(QRectF(p.x() - ring.nodeRadius, p.y() - ring.nodeRadius, d, d),
                         Qt::AlignCenter, QString::number(r));
    }
}

/// Where the buffers' grid is drawn: a header row, one row per rank, the plain sum.
struct BufferGrid {
    int n = 0;
    QFont font, bold;
    double rowHeight = 0, cellWidth = 0, labelWidth = 0, sentWidth = 0;
    double left = 0, top = 0, sentX = 0, cellPad = 0;
    std::vector<std::int64_t> sizes; ///< values per chunk
    std::vector<double> chunkX; ///< where each chunk starts, in pixels; then the sent column
    std::vector<int> chunkStart; ///< each chunk's first value; then the value count

    double cellX(int chunk, int value) const
    {
        return at(chunkX, chunk) + (value - at(chunkStart, chunk)) * cellWidth;
    }
    double chunkWidth(int chunk) const
    {
        return at(chunkX, chunk + 1) - at(chunkX, chunk) - kChunkGap;
    }
};

/// The widths of the label, sent and value columns and the text height, in `font`.
struct ColumnWidths {
    double label, sent, cell, height;
};

ColumnWidths columnWidths(const QFont& font)
{
    const QFontMetricsF fm(font);
    return {kLabelColumnSwatch + fm.horizontalAdvance(RingPanel::tr("rank 15")) + kColumnGap,
            fm.horizontalAdvance(RingPanel::tr("sent (bytes)")) + kColumnGap,
            fm.horizontalAdvance("999") + kCellPadding, fm.height()};
}

void placeChunks(BufferGrid& g)
{
    g.chunkX.assign(static_cast<std::size_t>(g.n) + 1, 0);
    g.chunkStart.assign(static_cast<std::size_t>(g.n) + 1, 0);
    double x = g.left + g.labelWidth;
    for (std::size_t c = 0; c < static_cast<std::size_t>(g.n); ++c) {
        g.chunkX[c] = x;
        g.chunkStart[c + 1] = g.chunkStart[c] + static_cast<int>(g.sizes[c]);
        x += static_cast<double>(g.sizes[c]) * g.cellWidth + kChunkGap;
    }
    g.chunkX[static_cast<std::size_t>(g.n)] = x;
    g.sentX = x;
}

BufferGrid bufferGrid(const QRectF& area, double scale, int n, int values,
                      const std::vector<std::int64_t>& sizes)
{
    BufferGrid g;
    g.n = n;
    g.sizes = sizes;
    // Fit the type to the rows and columns: n ranks, a header and the plain sum.
    QFont font = scaledFont(chartFonts().annotation, scale);
    const double rows = n + kExtraRows;
    // Rows no taller than a comfortable line: a ring of one or two ranks stays compact, centred.
    g.rowHeight = std::min(area.height() / rows, QFontMetricsF(font).height() * kMaxRowLines);
    {
        const ColumnWidths w = columnWidths(font);
        const double needed = w.label + w.sent + values * w.cell + kChunkGap * n;
        const double shrink =
            std::min({1.0, area.width() / needed, g.rowHeight * kTextShareOfRow / w.height});
        font.setPointSizeF(std::max(kMinPoints, font.pointSizeF() * shrink));
    }
    g.font = font;
    g.bold = font;
    g.bold.setBold(true);
    const ColumnWidths w = columnWidths(font);
    g.labelWidth = w.label;
    g.sentWidth = w.sent;
    g.cellWidth = std::min((area.width() - w.label - w.sent - kChunkGap * n) / values,
                           g.rowHeight * kMaxCellAspect);
    const double gridWidth = w.label + values * g.cellWidth + kChunkGap * n + w.sent;
    g.left = area.left() + std::max(0.0, (area.width() - gridWidth) / 2);
    g.top = area.top() + (area.height() - rows * g.rowHeight) / 2;
    g.cellPad = std::max(1.0, std::min(3.0, g.rowHeight * 0.08));
    placeChunks(g);
    return g;
}

/// Chunk names over their values, and the bytes column.
void drawBufferHeader(QPainter& painter, const BufferGrid& g)
{
    const QFontMetricsF fm(g.font);
    painter.setFont(g.font);
    painter.setPen(chartTextColor());
    for (int c = 0; c < g.n; ++c) {
        const QRectF box(at(g.chunkX, c), g.top, g.chunkWidth(c), g.rowHeight);
        const QString full = RingPanel::tr("chunk %1").arg(c);
        const QString text =
            fm.horizontalAdvance(full) <= box.width() ? full : RingPanel::tr("c%1").arg(c);
        painter.drawText(box, Qt::AlignCenter, text);
    }
    painter.drawText(QRectF(g.sentX, g.top, g.sentWidth, g.rowHeight),
                     Qt::AlignRight | Qt::AlignVCenter, RingPanel::tr("sent (bytes)"));
}

/// Row label: the rank's colour and number, as on the ring.
void drawRowLabel(QPainter& painter, const BufferGrid& g, int r, double y)
{
    const QColor colour = RingPanel::rankColor(r);
    const double swatch = std::min(kSwatch, g.rowHeight * kSwatchShare);
    painter.setPen(QPen(Qt::black, 1));
    painter.setBrush(colour);
    painter.drawEllipse(QRectF(g.left, y + (g.rowHeight - swatch) / 2, swatch, swatch));
    painter.setPen(chartTextColor());
    painter.setFont(g.font);
    painter.drawText(QRectF(g.left + swatch + kSwatchGap, y, g.labelWidth - swatch - 2 * kSwatchGap,
                            g.rowHeight),
                     Qt::AlignLeft | Qt::AlignVCenter, RingPanel::tr("rank %1").arg(r));
}

/// Rank r's values of chunk c, shaded by how many ranks they already sum.
void drawChunkCells(QPainter& painter, const BufferGrid& g, const core::RingStep& s, int r, int c,
                    double y)
{
    const int contributors = core::ringContributors(g.n, s.phase, s.index, r, c);
    const QColor shade =
        mix(Qt::white, kCompleteShade, g.n > 1 ? (contributors - 1.0) / (g.n - 1.0) : 1.0);
    const double pad = g.cellPad / 2;
    for (int i = at(g.chunkStart, c); i < at(g.chunkStart, c + 1); ++i) {
        const QRectF inner =
            QRectF(g.cellX(c, i), y, g.cellWidth, g.rowHeight).adjusted(pad, pad, -pad, -pad);
        painter.setPen(QPen(kCellBorder, 1));
        painter.setBrush(shade);
        painter.drawRect(inner);
        painter.setPen(textOn(shade));
        painter.setFont(contributors == g.n ? g.bold : g.font);
        painter.drawText(inner, Qt::AlignCenter, formatNumber(s.buffers(r, i), 6));
    }
}

/// One rank's row: its label, its buffer with the chunk it received outlined, the bytes sent.
void drawBufferRow(QPainter& painter, const BufferGrid& g, const core::RingStep& s, int r,
                   double scale)
{
    const double y = g.top + (r + 1) * g.rowHeight;
    drawRowLabel(painter, g, r, y);
    // Which chunk this rank received in this step: the one its left-hand neighbour sent.
    const int received = s.phase == core::RingStep::Phase::Start || g.n < 2
        ? -1
        : at(s.sentChunk, (r - 1 + g.n) % g.n);
    for (int c = 0; c < g.n; ++c) {
        drawChunkCells(painter, g, s, r, c, y);
        if (received == c && at(g.sizes, c) > 0) {
            painter.setBrush(Qt::NoBrush);
            painter.setPen(QPen(chartTextColor(), std::max(2.5, 3.0 * scale)));
            painter.drawRect(
                QRectF(at(g.chunkX, c) - 1, y - 1, g.chunkWidth(c) + 2, g.rowHeight + 2));
        }
    }
    painter.setPen(chartTextColor());
    painter.setFont(g.font);
    painter.drawText(QRectF(g.sentX, y, g.sentWidth, g.rowHeight),
                     Qt::AlignRight | Qt::AlignVCenter, formatWhole(at(s.bytesSent, r)));
}

/// The plain sum, computed without the ring, under a rule.
void drawPlainSum(QPainter& painter, const BufferGrid& g, const Eigen::RowVectorXd& sum)
{
    const double sumY = g.top + (g.n + 1.5) * g.rowHeight;
    const double ruleY = sumY - g.rowHeight * 0.25;
    painter.setPen(QPen(chartTextColor(), 1.5));
    painter.drawLine(QPointF(g.left, ruleY), QPointF(g.sentX + g.sentWidth, ruleY));
    painter.setFont(g.bold);
    painter.setPen(chartTextColor());
    painter.drawText(QRectF(g.left, sumY, g.labelWidth, g.rowHeight),
                     Qt::AlignLeft | Qt::AlignVCenter, RingPanel::tr("plain sum"));
    for (int c = 0; c < g.n; ++c)
        for (int i = at(g.chunkStart, c); i < at(g.chunkStart, c + 1); ++i)
            painter.drawText(QRectF(g.cellX(c, i), sumY, g.cellWidth, g.rowHeight), Qt::AlignCenter,
                             formatNumber(sum(i), 6));
}

} // namespace

RingPanel::RingPanel(const QString& name, QWidget* parent)
    : ChartPanel(name, parent)
    , m_strip(new QWidget(this))
    , m_play(new QToolButton(m_strip))
    , m_slider(new QSlider(Qt::Horizontal, m_strip))
    , m_stepLabel(new QLabel(m_strip))
    , m_fewer(new QPushButton(tr("Watch &8 ranks"), m_strip))
    , m_timer(new QTimer(this))
{
    setMinimumSize(320, 260);
    setAttribute(Qt::WA_OpaquePaintEvent);

    m_play->setObjectName("zero.ring_play");
    m_play->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_play->setCheckable(true);
    m_play->setAccessibleDescription(tr("Plays the ring all-reduce one step at a time"));
    m_slider->setObjectName("zero.ring_step");
    m_slider->setAccessibleName(tr("Ring all-reduce step"));
    m_slider->setAccessibleDescription(
        tr("0 is the start; then n-1 reduce-scatter and n-1 all-gather steps"));
    m_slider->setPageStep(1);
    m_slider->setTickPosition(QSlider::TicksBelow);
    m_slider->setTickInterval(1);
    m_stepLabel->setObjectName("zero.ring_step_label");
    m_stepLabel->setMinimumWidth(m_stepLabel->fontMetrics().horizontalAdvance("step 30 of 30") + 8);
    m_fewer->setObjectName("zero.ring_fewer");
    m_fewer->setAccessibleDescription(tr("Sets the rank count to 8 so the ring can be drawn"));
    m_fewer->hide();

    auto* strip = new QHBoxLayout(m_strip);
    strip->setContentsMargins(6, 2, 6, 4);
    strip->addWidget(m_play);
    strip->addWidget(m_slider, 1);
    strip->addWidget(m_stepLabel);
    strip->addWidget(m_fewer);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addStretch(1); // the picture, painted by paintEvent
    layout->addWidget(m_strip);

    m_timer->setInterval(kStepMilliseconds);
    connect(m_timer, &QTimer::timeout, this, &RingPanel::advance);
    connect(m_play, &QToolButton::toggled, this, &RingPanel::setPlaying);
    connect(m_slider, &QSlider::valueChanged, this, &RingPanel::setStep);
    connect(m_fewer, &QPushButton::clicked, this, [this] { emit fewerRanksRequested(8); });
    syncControls();
}

QColor RingPanel::rankColor(int rank)
{
    // Okabe-Ito first (colour-blind safe), then Paul Tol's muted scheme for ranks 8..15.
    static const std::array<QColor, kMaxRanks> colours = {
        palette::kBlue,       palette::kOrange,      palette::kGreen,       palette::kVermillion,
        palette::kPurple,     palette::kSkyBlue,     palette::kYellow,      QColor(90, 90, 90),
        QColor(51, 34, 136),  QColor(136, 204, 238), QColor(68, 170, 153),  QColor(17, 119, 51),
        QColor(153, 153, 51), QColor(221, 204, 119), QColor(204, 102, 119), QColor(136, 34, 85)};
    return colours[static_cast<std::size_t>(((rank % kMaxRanks) + kMaxRanks) % kMaxRanks)];
}

QAbstractButton* RingPanel::playButton() const
{
    return m_play;
}

void RingPanel::setDemo(const core::RingDemo& demo, std::int64_t bytesPerValue)
{
    const bool sameShape = m_tooMany == 0 && demo.inputs.rows() == m_demo.inputs.rows()
        && demo.inputs.cols() == m_demo.inputs.cols();
    m_demo = demo;
    m_bytesPerValue = bytesPerValue;
    m_tooMany = 0;
    if (!sameShape) {
        setPlaying(false);
        m_step = 0;
    }
    m_step = std::clamp(m_step, 0, lastStep());
    syncControls();
    changed();
}

void RingPanel::showTooManyRanks(std::int64_t ranks)
{
    setPlaying(false);
    m_tooMany = ranks;
    m_demo = core::RingDemo{};
    m_step = 0;
    syncControls();
    changed();
}

int RingPanel::lastStep() const
{
    return m_demo.ring.steps.empty() ? 0 : static_cast<int>(m_demo.ring.steps.size()) - 1;
}

const core::RingStep* RingPanel::currentStep() const
{
    if (m_tooMany > 0 || m_demo.ring.steps.empty())
        return nullptr;
    return &m_demo.ring.steps[static_cast<std::size_t>(m_step)];
}

void RingPanel::setStep(int step)
{
    step = std::clamp(step, 0, lastStep());
    if (step == m_step)
        return;
    m_step = step;
    syncControls();
    changed();
    emit stepChanged(m_step);
}

bool RingPanel::isPlaying() const
{
    return m_timer->isActive();
}

void RingPanel::setPlaying(bool play)
{
    play = play && m_tooMany == 0 && lastStep() > 0;
    if (play == isPlaying()) {
        syncControls();
        return;
    }
    if (play) {
        if (m_step >= lastStep())
            setStep(0); // play from the start once the end has been reached
        m_timer->start();
    } else {
        m_timer->stop();
    }
    syncControls();
}

void RingPanel::advance()
{
    if (m_step < lastStep())
        setStep(m_step + 1);
    if (m_step >= lastStep())
        setPlaying(false);
}

void RingPanel::syncControls()
{
    const bool ring = m_tooMany == 0;
    {
        const QSignalBlocker block(m_slider);
        m_slider->setRange(0, lastStep());
        m_slider->setValue(m_step);
    }
    m_slider->setEnabled(ring && lastStep() > 0);
    m_play->setEnabled(ring && lastStep() > 0);
    {
        const QSignalBlocker block(m_play);
        m_play->setChecked(isPlaying());
    }
    const bool playing = isPlaying();
    m_play->setText(playing ? tr("Pause") : tr("Play"));
    m_play->setIcon(style()->standardIcon(playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    m_play->setAccessibleName(playing ? tr("Pause the ring") : tr("Play the ring"));
    m_stepLabel->setText(ring ? stepCaption() : tr("not drawn"));
    m_stepLabel->setVisible(ring);
    m_fewer->setVisible(!ring);
    // A screen reader hears what the picture shows.
    setAccessibleName(tr("Ring all-reduce"));
    setAccessibleDescription(ring ? phaseText() + ", " + stepCaption()
                                  : tr("too many ranks to draw"));
}

QString RingPanel::stepCaption() const
{
    return tr("step %1 of %2").arg(m_step).arg(lastStep());
}

QString RingPanel::phaseText() const
{
    const core::RingStep* s = currentStep();
    if (!s)
        return tr("Too many ranks to draw");
    const int n = static_cast<int>(m_demo.inputs.rows());
    switch (s->phase) {
    case core::RingStep::Phase::Start:
        return n == 1 ? tr("One rank") : tr("Start");
    case core::RingStep::Phase::ReduceScatter:
        return tr("Reduce-scatter step %1 of %2").arg(s->index).arg(n - 1);
    case core::RingStep::Phase::AllGather:
        return tr("All-gather step %1 of %2").arg(s->index).arg(n - 1);
    }
    return {};
}

void RingPanel::paintEvent(QPaintEvent*)
{
    // The picture changes only with the state, the size or the style; every other repaint
    // (a neighbour redrawn, an expose) copies the cached image instead of laying out all the
    // text again.
    const int bottom = m_strip->isVisible() ? m_strip->geometry().top() : height();
    const QSize size(width(), bottom);
    const qreal ratio = devicePixelRatioF();
    const QString key = QString("%1 %2 %3 %4 %5 %6 %7")
                            .arg(m_version)
                            .arg(size.width())
                            .arg(size.height())
                            .arg(ratio)
                            .arg(chartBackgroundColor().rgba())
                            .arg(chartTextColor().rgba())
                            .arg(chartFonts().title.toString());
    if (key != m_cacheKey || m_cache.isNull()) {
        m_cache = QPixmap((QSizeF(size) * ratio).toSize());
        m_cache.setDevicePixelRatio(ratio);
        m_cache.fill(Qt::transparent);
        QPainter picture(&m_cache);
        render(picture, QRectF(QPointF(0, 0), QSizeF(size)));
        m_cacheKey = key;
    }
    QPainter painter(this);
    painter.fillRect(rect(), palette().window());
    painter.drawPixmap(0, 0, m_cache);
}

void RingPanel::changed()
{
    ++m_version;
    update();
}

void RingPanel::render(QPainter& painter, const QRectF& target)
{
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    painter.fillRect(target, chartBackgroundColor());
    const QRectF area = target.adjusted(kMarginX, kMarginY, -kMarginX, -kMarginY);
    const QRectF body = renderTitle(painter, area);
    if (m_tooMany > 0 || m_demo.inputs.rows() == 0) {
        renderNote(painter, body);
        painter.restore();
        return;
    }
    // Title and phase line keep the charts' sizes; the ring and the buffers shrink with a small
    // panel (never below what the window's own labels use).
    const double scale =
        std::clamp(std::min(area.width() / kFullSize.width(), area.height() / kFullSize.height()),
                   kMinScale, 1.0);
    const double phaseHeight = renderPhase(painter, body, area.width());
    const QRectF caption = renderCaption(painter, body, scale);
    const QRectF content(body.left(), body.top() + phaseHeight + kPhaseGap, body.width(),
                         caption.top() - body.top() - phaseHeight - kPhaseGap - kCaptionGap);
    const double ringWidth = std::min(content.height() * kRingAspect, content.width() * kRingShare);
    renderRing(painter, QRectF(content.left(), content.top(), ringWidth, content.height()), scale);
    renderBuffers(painter,
                  QRectF(content.left() + ringWidth + kRingGap, content.top(),
                         content.width() - ringWidth - kRingGap, content.height()),
                  scale);
    painter.restore();
}

QString RingPanel::title() const
{
    const int n = static_cast<int>(m_demo.inputs.rows());
    if (m_tooMany == 0 && n > 0)
        return tr("Ring all-reduce of a demo gradient, %1 x %2 values")
            .arg(countText(tr("%1 rank(s)", nullptr, n), n))
            .arg(m_demo.inputs.cols());
    return tr("Ring all-reduce, step by step");
}

QRectF RingPanel::renderTitle(QPainter& painter, const QRectF& area) const
{
    const QString title = this->title();
    // A narrow panel: shrink the title until it fits (hinting makes widths step, hence a loop).
    const QFont titleFont = fitted(chartFonts().title, title, area.width());
    painter.setFont(titleFont);
    painter.setPen(chartTextColor());
    const QRectF titleRect(area.left(), area.top(), area.width(),
                           QFontMetricsF(titleFont).height() + kTitlePadding);
    painter.drawText(titleRect, Qt::AlignHCenter | Qt::AlignTop, title);
    return QRectF(area.left(), titleRect.bottom() + kTitleGap, area.width(),
                  area.bottom() - titleRect.bottom() - kTitleGap);
}

QString RingPanel::stepDescription() const
{
    const int n = static_cast<int>(m_demo.inputs.rows());
    switch (currentStep()->phase) {
    case core::RingStep::Phase::Start:
        return n == 1 ? tr("nothing to send, its values are already the sum")
                      : tr("each rank holds its own gradients, cut into %1 chunks").arg(n);
    case core::RingStep::Phase::ReduceScatter:
        return tr("each rank sends one chunk to the next, which adds it to its own");
    case core::RingStep::Phase::AllGather:
        return m_step == lastStep()
            ? tr("done: every rank holds the plain sum")
            : tr("each rank passes a finished chunk on; the next one copies it");
    }
    return {};
}

double RingPanel::renderPhase(QPainter& painter, const QRectF& body, double areaWidth) const
{
    // What happens in this step, in words, on at most two lines.
    const QString text = phaseText() + ": " + stepDescription();
    QFont phaseFont = chartFonts().axisTitle;
    phaseFont.setBold(true);
    const QRectF phaseRect(body.left(), body.top(), body.width(),
                           QFontMetricsF(phaseFont).height() * 2 + kPhasePadding);
    phaseFont = fitted(phaseFont, text, 2 * areaWidth);
    painter.setFont(phaseFont);
    painter.setPen(chartTextColor());
    painter.drawText(phaseRect, Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap, text);
    return QFontMetricsF(phaseFont)
        .boundingRect(phaseRect, Qt::AlignHCenter | Qt::TextWordWrap, text)
        .height();
}

QRectF RingPanel::renderCaption(QPainter& painter, const QRectF& body, double scale) const
{
    // How to read the shading, and the formula the bytes follow.
    const int n = static_cast<int>(m_demo.inputs.rows());
    const QFont captionFont = scaledFont(chartFonts().annotation, scale);
    const std::int64_t tensor = m_demo.inputs.cols() * m_bytesPerValue;
    const core::Ratio perRank = core::ringAllReduceBytes(tensor, static_cast<std::int64_t>(n));
    const QString caption =
        tr("Shading: how many ranks a value already sums (white: 1, blue: all %1). Outlined: the "
           "chunk each rank received in this step. After all 2(n-1) = %2 steps each rank has sent "
           "2(n-1)/n of the %3-byte tensor = %4 bytes (%5 bytes a value).")
            .arg(n)
            .arg(2 * (n - 1))
            .arg(tensor)
            .arg(formatNumber(perRank.value(), 6))
            .arg(m_bytesPerValue);
    // As tall as the wrapped caption needs: a small panel wraps it onto more lines.
    const double height =
        QFontMetricsF(captionFont)
            .boundingRect(QRectF(0, 0, body.width(), 1e6), Qt::TextWordWrap, caption)
            .height();
    const QRectF box(body.left(), body.bottom() - height - kCaptionPadding, body.width(),
                     height + kCaptionPadding);
    painter.setFont(captionFont);
    painter.setPen(chartTextColor());
    painter.drawText(box, Qt::AlignHCenter | Qt::AlignBottom | Qt::TextWordWrap, caption);
    return box;
}

void RingPanel::renderRing(QPainter& painter, const QRectF& area, double scale)
{
    const core::RingStep& s = *currentStep();
    const RingLayout ring = ringLayout(area, scale, static_cast<int>(m_demo.inputs.rows()),
                                       s.phase != core::RingStep::Phase::Start);
    // The links: an arc from each rank to the next, bulging outwards so that two ranks still
    // show two arrows. In a step each arc carries the sender's colour and the chunk it sends.
    for (int r = 0; r < ring.n && ring.n > 1; ++r)
        drawLink(painter, ring, r, ring.moving ? s.sentChunk[static_cast<std::size_t>(r)] : -1);
    drawNodes(painter, ring);
    if (ring.n > 1) {
        painter.setPen(chartTextColor());
        painter.setFont(scaledFont(chartFonts().annotation, scale));
        painter.drawText(
            QRectF(ring.centre.x() - ring.radius * 0.7, ring.centre.y() - ring.radius * 0.5,
                   ring.radius * 1.4, ring.radius),
            Qt::AlignCenter | Qt::TextWordWrap, tr("each rank sends to the next, clockwise"));
    }
}

void RingPanel::renderBuffers(QPainter& painter, const QRectF& area, double scale)
{
    const core::RingStep& s = *currentStep();
    const BufferGrid grid =
        bufferGrid(area, scale, static_cast<int>(m_demo.inputs.rows()),
                   static_cast<int>(m_demo.inputs.cols()), m_demo.ring.chunkSizes);
    drawBufferHeader(painter, grid);
    for (int r = 0; r < grid.n; ++r)
        drawBufferRow(painter, grid, s, r, scale);
    drawPlainSum(painter, grid, m_demo.plainSum);
}

void RingPanel::renderNote(QPainter& painter, const QRectF& area)
{
    const ChartFonts f = chartFonts();
    const std::int64_t n = m_tooMany;
    if (n <= 0)
        return; // nothing set yet
    // The ring itself still fits as a circle of dots (a line past 256 ranks), without values.
    const double side = std::min(area.height(), area.width() * 0.55);
    const QRectF ringArea(area.left(), area.top() + (area.height() - side) / 2, side, side);
    const QPointF centre = ringArea.center();
    const double radius = side / 2 - 8;
    painter.setPen(QPen(QColor(170, 170, 170), 2));
    painter.setBrush(Qt::NoBrush);
    drawCircles(painter, {centre}, radius);
    if (n > 0 && n <= 256) {
        const double dot =
            std::clamp(std::numbers::pi * radius / static_cast<double>(n) * 0.5, 2.0, 7.0);
        painter.setPen(Qt::NoPen);
        painter.setBrush(chartTextColor());
        std::vector<QPointF> centres;
        centres.reserve(static_cast<std::size_t>(n));
        for (std::int64_t r = 0; r < n; ++r)
            centres.push_back(
                onCircle(centre, radius, rankAngle(static_cast<int>(r), static_cast<int>(n))));
        drawCircles(painter, centres, dot);
    }
    painter.setPen(chartTextColor());
    painter.setFont(f.axisTitle);
    painter.drawText(ringArea, Qt::AlignCenter,
                     countText(tr("%1 rank(s)", nullptr, pluralChoice(n)), n));

    const QString text =
        tr("%1 ranks are too many to draw with their values: the ring is drawn for up to %2.\n\n"
           "The algorithm is the same: each rank sends 2(n-1) = %3 messages, each 1/%1 of the "
           "gradients, so it sends 2(n-1)/n = %4 times the gradient tensor in all (the traffic "
           "chart shows it).\n\nSet %2 ranks or fewer to watch the chunks move.")
            .arg(formatWhole(n))
            .arg(kMaxRanks)
            .arg(formatWhole(2 * (n - 1)))
            .arg(formatNumber(2.0 * static_cast<double>(n - 1) / static_cast<double>(n), 4));
    painter.setPen(chartTextColor());
    painter.setFont(f.axisTitle);
    const QRectF textArea(ringArea.right() + 24, area.top(), area.right() - ringArea.right() - 24,
                          area.height());
    painter.drawText(textArea, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, text);
}

} // namespace scalelab::ui
