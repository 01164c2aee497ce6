#include "ganttpanel.h"

#include "chartstyle.h"
#include "format.h"

#include <QApplication>
#include <QEvent>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QPainter>
#include <QStaticText>
#include <QToolTip>
#include <algorithm>
#include <array>
#include <cmath>

namespace scalelab::ui {

namespace {

using core::Pass;

// Light and dark of four hues: a forward and a backward differ in lightness by about half the
// scale, so they stay apart in grey scale and for every kind of colour blindness; the hue only
// says the chunk. Hues repeat after four chunks (the label and the hover text still say which).
struct PassColors {
    QColor forward, backward;
};
const std::array<PassColors, 4> kPassColors = {{
    {QColor(160, 210, 240), QColor(0, 90, 160)},
    {QColor(250, 205, 120), QColor(175, 80, 0)},
    {QColor(150, 220, 190), QColor(0, 115, 80)},
    {QColor(235, 180, 210), QColor(150, 60, 115)},
}};

// The weight-gradient pass W (zero-bubble schedules, one chunk): another hue, between the
// forward's and the backward's lightness, so the three kinds stay apart in grey scale too.
const QColor kWeightFill(240, 150, 40);

const QColor kIdleFill(234, 234, 234);
const QColor kIdleHatch(150, 150, 150);
const QColor kGrid(215, 215, 215);
const QColor kAxis(90, 90, 90);

const QColor kCardBorder(170, 170, 170);
const QColor kCardFill(246, 246, 246);

// Layout metrics, in logical pixels (of the target a chart is drawn into).
constexpr double kMinimumWidth = 480, kMinimumHeight = 300; // the panel on screen
constexpr double kOuterMargin = 6.0; // above the title, below the legend
constexpr double kSideMargin = 12.0; // figures and legend, from the left and right edges
constexpr double kGap = 4.0; // between neighbouring bands (title, figures, ticks, row labels)
constexpr double kTitlePadding = 4.0; // added to the title font's height
constexpr double kFigureLinePadding = 8.0; // added to the figure font's height, per line
constexpr double kFigureCardPaddingX = 8.0; // the card around a figure, each side
constexpr double kFigureCardPaddingY = 3.0;
constexpr double kFigureCardRadius = 4.0;
constexpr double kFigureGap = 36.0; // between figures written side by side
constexpr double kLegendLinePadding = 6.0; // added to the legend font's height, per line
constexpr double kLegendGap = 28.0; // between legend entries
constexpr double kSwatchGap = 6.0; // between a legend swatch and its text
constexpr double kSwatchShare = 0.8; // a swatch's side, of the legend font's height
constexpr double kSwatchHatchGap = 4.0; // the idle swatch's hatching
constexpr double kXTitleGap = 8.0; // between the time axis title and the legend
constexpr double kTickLength = 5.0;
constexpr double kTickLabelSpacing = 28.0; // added to the widest tick label: room between labels
constexpr double kPlotRightMargin = 14.0; // at least, for half the last tick label
constexpr double kPlotTopGap = 8.0; // between the figures and the plot
constexpr double kRowLabelPadding = 10.0; // added to the widest stage number
constexpr double kRowLabelInset = 6.0; // stage numbers end this far left of the plot's band
constexpr double kRowLabelSpacing = 2.0; // at least, between stage numbers
constexpr double kRowGapFrom = 10.0; // rows this tall or taller leave a gap between them
constexpr double kBoxShare = 0.8; // ... and their boxes take this share of the row
constexpr double kIdleHatchGap = 7.0; // the bubble's hatching
constexpr double kBoxLabelPadding = 4.0; // a box label needs this much more than its width
constexpr double kEdgeFromPixels = 5.0; // boxes this wide (device pixels) get a white edge
constexpr double kEdgeWidth = 1.2; // device pixels
constexpr double kPooledBelowPixels = 2.0; // boxes narrower (device pixels) are pooled
constexpr double kUprightTitle = 1.5; // a text band this much taller than wide is drawn turned

constexpr int kHatchTileWidth = 128; // device pixels, about: a whole number of hatch periods

// Fills `r` with `background` hatched by "/" lines `gap` apart on a grid anchored at
// x = `origin`, so neighbouring rows line up. On pixels a tile of the pattern, made at device
// resolution with its background in it, is repeated by a texture brush: hundreds of separate
// lines cost milliseconds, and an opaque tile is copied where a transparent one would be blended
// pixel by pixel over a fill (a millisecond a Gantt paint). SVG and PDF get real lines.
void hatch(QPainter& painter, const QRectF& r, double gap, double origin, const QColor& background)
{
    if (paintsVectors(painter)) {
        painter.fillRect(r, background);
        const double h = r.height();
        std::vector<QLineF> lines;
        // A line leaves the bottom edge at x = c and rises at 45 degrees to the top edge.
        for (double c = origin + std::floor((r.left() - h - origin) / gap) * gap; c < r.right();
             c += gap) {
            double x0 = c, y0 = r.bottom(), x1 = c + h, y1 = r.top();
            if (x0 < r.left()) {
                y0 -= r.left() - x0;
                x0 = r.left();
            }
            if (x1 > r.right()) {
                y1 += x1 - r.right();
                x1 = r.right();
            }
            if (x0 < x1)
                lines.emplace_back(x0, y0, x1, y1);
        }
        painter.setPen(QPen(kIdleHatch, 1.0));
        painter.drawLines(lines.data(), static_cast<int>(lines.size()));
        return;
    }
    const double scale = std::max(1e-9, painter.deviceTransform().m11());
    const int n = std::max(3, static_cast<int>(std::lround(gap * scale)));
    // Painting happens on the GUI thread only, so a plain cache of tiles will do.
    static QHash<std::pair<int, QRgb>, QImage> tiles;
    const std::pair<int, QRgb> key(n, background.rgba());
    auto tile = tiles.find(key);
    if (tile == tiles.end()) {
        // Several periods wide: a row is filled a tile width at a time, and a narrow tile
        // makes that dozens of short copies a scanline.
        const int periods = std::max(1, kHatchTileWidth / n);
        QImage image(n * periods, n,
                     background.alpha() == 255 ? QImage::Format_RGB32
                                               : QImage::Format_ARGB32_Premultiplied);
        image.fill(background);
        QPainter p(&image);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(QPen(kIdleHatch, std::max(1.0, scale)));
        for (int k = -1; k <= periods; ++k) // the neighbours' ends too, so tiles join seamlessly
            p.drawLine(QPointF(k * n, n), QPointF(k * n + n, 0));
        p.end();
        tile = tiles.insert(key, image);
    }
    QBrush brush(*tile);
    brush.setTransform(QTransform::fromScale(1 / scale, 1 / scale));
    painter.save();
    painter.setBrushOrigin(QPointF(origin, 0));
    painter.fillRect(r, brush);
    painter.restore();
}

// Device pixels per logical pixel. Vector files (SVG, PDF) count as twice the resolution, so
// strips embedded in them stay sharp when a slide scales them up.
double deviceScale(QPainter& painter)
{
    double scale = std::max(1e-9, painter.deviceTransform().m11());
    if (paintsVectors(painter))
        scale = std::max(scale, 2.0);
    return scale;
}

// The smallest round step (1, 2, 2.5 or 5 times a power of ten) that is at least `raw`.
double niceStep(double raw)
{
    if (!(raw > 0) || !std::isfinite(raw))
        return 1.0;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (m * power >= raw * (1 - 1e-12))
            return m * power;
    return 10 * power;
}

int decimalsFor(double step)
{
    int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
    const double scaled = step * std::pow(10.0, decimals);
    if (std::abs(scaled - std::round(scaled)) > 1e-6)
        ++decimals; // 2.5, 0.25, ...
    return decimals;
}

QString subscript(int n)
{
    static const QChar digits[] = {QChar(0x2080), QChar(0x2081), QChar(0x2082), QChar(0x2083),
                                   QChar(0x2084), QChar(0x2085), QChar(0x2086), QChar(0x2087),
                                   QChar(0x2088), QChar(0x2089)};
    QString out;
    for (QChar c : QString::number(n))
        out += digits[c.digitValue()];
    return out;
}

struct LegendEntry {
    enum Kind { Forward, Backward, Weight, Idle, Chunk, Overlapped } kind;
    int chunk;
    QString text;
};

// The DualPipe schedules: F&B passes, and two chunks that are two stages of the model.
std::vector<LegendEntry> overlappedLegend()
{
    return {
        {LegendEntry::Forward, 0, GanttPanel::tr("F: forward (light)")},
        {LegendEntry::Backward, 0, GanttPanel::tr("B: input gradient, BW: whole backward (dark)")},
        {LegendEntry::Weight, 0, GanttPanel::tr("W: weight gradient (orange)")},
        {LegendEntry::Overlapped, 0,
         GanttPanel::tr("F&B: a forward over a whole backward, overlapped")},
        {LegendEntry::Idle, 0, GanttPanel::tr("Idle: the bubble")},
        {LegendEntry::Chunk, 0, GanttPanel::tr("Chunk 0: stage i")},
        {LegendEntry::Chunk, 1, GanttPanel::tr("Chunk 1: stage p\u22121\u2212i")},
    };
}

std::vector<LegendEntry> legendEntries(int chunks, bool split, bool overlapped)
{
    if (overlapped)
        return overlappedLegend();
    std::vector<LegendEntry> out =
        split ? std::vector<LegendEntry>{
                    {LegendEntry::Forward, 0, GanttPanel::tr("F: forward (light)")},
                    {LegendEntry::Backward, 0, GanttPanel::tr("B: input gradient (dark)")},
                    {LegendEntry::Weight, 0, GanttPanel::tr("W: weight gradient (orange)")},
                    {LegendEntry::Idle, 0, GanttPanel::tr("Idle: the bubble")},
                }
              : std::vector<LegendEntry>{
                    {LegendEntry::Forward, 0, GanttPanel::tr("Forward pass (light)")},
                    {LegendEntry::Backward, 0, GanttPanel::tr("Backward pass (dark)")},
                    {LegendEntry::Idle, 0, GanttPanel::tr("Idle: the bubble")},
                };
    if (chunks > 1)
        for (int c = 0; c < std::min(chunks, static_cast<int>(kPassColors.size())); ++c)
            out.push_back(
                {LegendEntry::Chunk, c,
                 chunks > static_cast<int>(kPassColors.size())
                     ? GanttPanel::tr("Chunk %1, %2, ...").arg(c).arg(c + kPassColors.size())
                     : GanttPanel::tr("Chunk %1").arg(c)});
    return out;
}

// Legend entries wrapped into lines no wider than `width`: each line lists entry indices.
std::vector<std::vector<int>> legendLines(const std::vector<LegendEntry>& entries, double width,
                                          TextWidths& widths)
{
    const QFont font = chartFonts().legend;
    const QFontMetricsF fm(font);
    std::vector<std::vector<int>> lines(1);
    double used = 0;
    for (int i = 0; i < static_cast<int>(entries.size()); ++i) {
        const double w = fm.height() + kSwatchGap + widths.of(font, entries[i].text);
        if (!lines.back().empty() && used + kLegendGap + w > width) {
            lines.emplace_back();
            used = 0;
        }
        used += (lines.back().empty() ? 0 : kLegendGap) + w;
        lines.back().push_back(i);
    }
    return lines;
}

// Figures wrapped the same way: one line if they fit side by side, otherwise one a line.
bool figuresFitOnOneLine(const QStringList& figures, double width, TextWidths& widths)
{
    const QFont font = chartFonts().annotation;
    double used = 0;
    for (const QString& f : figures)
        used += widths.of(font, f) + 2 * kFigureCardPaddingX;
    used += kFigureGap * std::max<qsizetype>(0, figures.size() - 1);
    return used <= width;
}

} // namespace

GanttPanel::GanttPanel(const QString& name, QWidget* parent)
    : ChartPanel(name, parent)
    , m_timeUnit(tr("time units"))
{
    setMinimumSize(static_cast<int>(kMinimumWidth), static_cast<int>(kMinimumHeight));
    setAttribute(Qt::WA_OpaquePaintEvent);
    m_rowBegin = {0};
}

void GanttPanel::setTitle(const QString& title)
{
    m_title = title;
    changed();
}

void GanttPanel::setTimeAxisTitle(const QString& title)
{
    m_xTitle = title;
    changed();
}

void GanttPanel::setRowAxisTitle(const QString& title)
{
    m_yTitle = title;
    changed();
}

void GanttPanel::setTimeUnit(const QString& unit)
{
    m_timeUnit = unit;
}

void GanttPanel::setFigures(const QStringList& figures)
{
    m_figures = figures;
    changed();
}

void GanttPanel::setSchedule(std::vector<core::PipelineEvent> events, int stages, int chunks,
                             double makespan)
{
    m_events = std::move(events);
    m_stages = std::max(0, stages);
    m_chunks = std::max(1, chunks);
    m_makespan = makespan;
    m_split = std::any_of(m_events.begin(), m_events.end(),
                          [](const core::PipelineEvent& e) { return e.pass == Pass::Weight; });
    m_overlapped = std::any_of(m_events.begin(), m_events.end(), [](const core::PipelineEvent& e) {
        return e.pass == Pass::ForwardBackward;
    });
    // Where each stage's events begin, for hit tests: core orders them by stage, then start.
    m_rowBegin.assign(static_cast<std::size_t>(m_stages) + 1, m_events.size());
    for (std::size_t i = m_events.size(); i-- > 0;)
        m_rowBegin[static_cast<std::size_t>(m_events[i].stage)] = i;
    for (int s = m_stages - 1; s >= 0; --s)
        m_rowBegin[static_cast<std::size_t>(s)] = std::min(
            m_rowBegin[static_cast<std::size_t>(s)], m_rowBegin[static_cast<std::size_t>(s) + 1]);
    m_strip = QImage();
    changed();
}

void GanttPanel::setRowLabels(const QStringList& labels)
{
    m_rowLabels = labels;
    changed();
}

int GanttPanel::hueOf(int chunk) const
{
    // DualPipe's second chunk in green: the second hue, orange, is too near W's.
    return m_overlapped && chunk == 1 ? 2 : chunk;
}

QColor GanttPanel::fillOf(const core::PipelineEvent& e) const
{
    if (e.pass != Pass::ForwardBackward)
        return passColor(e.pass, hueOf(e.chunk));
    // Pooled pixels: half the forward's colour, half the backward's, as the box is drawn.
    const QColor f = passColor(Pass::Forward, hueOf(e.chunk));
    const QColor b = passColor(Pass::Backward, hueOf(e.pairChunk));
    return QColor((f.red() + b.red()) / 2, (f.green() + b.green()) / 2, (f.blue() + b.blue()) / 2);
}

QColor GanttPanel::passColor(core::Pass pass, int chunk)
{
    if (pass == Pass::Weight)
        return kWeightFill;
    const PassColors& c = kPassColors[static_cast<std::size_t>(chunk) % kPassColors.size()];
    return pass == Pass::Forward ? c.forward : c.backward;
}

GanttPanel::Layout GanttPanel::layoutFor(const QRectF& t) const
{
    const QFont font = QApplication::font(); // what chartFonts() follows
    if (m_kept.generation != m_generation || m_kept.target != t || m_kept.font != font)
        m_kept = {t, m_generation, font, computeLayout(t)};
    return m_kept.layout;
}

GanttPanel::Layout GanttPanel::computeLayout(const QRectF& t) const
{
    const ChartFonts f = chartFonts();
    const QFontMetricsF titleFm(f.title), axisFm(f.axisTitle), labelFm(f.axisLabels),
        figureFm(f.annotation), legendFm(f.legend);
    Layout l;
    l.title = QRectF(t.left(), t.top() + kOuterMargin, t.width(), titleFm.height() + kTitlePadding);
    const double inner = t.width() - 2 * kSideMargin;
    const int figureLines = m_figures.isEmpty()
        ? 0
        : (figuresFitOnOneLine(m_figures, inner, m_widths) ? 1
                                                           : static_cast<int>(m_figures.size()));
    l.figures = QRectF(t.left() + kSideMargin, l.title.bottom() + kGap, inner,
                       figureLines * (figureFm.height() + kFigureLinePadding));

    const auto lines = legendLines(legendEntries(m_chunks, m_split, m_overlapped), inner, m_widths);
    const double legendHeight =
        static_cast<double>(lines.size()) * (legendFm.height() + kLegendLinePadding);
    l.legend = QRectF(t.left() + kSideMargin, t.bottom() - kOuterMargin - legendHeight, inner,
                      legendHeight);
    l.xTitle =
        QRectF(t.left(), l.legend.top() - kXTitleGap - axisFm.height(), t.width(), axisFm.height());
    l.ticks = QRectF(t.left(), l.xTitle.top() - kGap - labelFm.height() - kTickLength, t.width(),
                     labelFm.height() + kTickLength);

    l.yTitle = QRectF(t.left() + kGap, 0, axisFm.height(), 0);
    double widestRow = m_widths.of(f.axisLabels, QString::number(std::max(0, m_stages - 1)));
    for (const QString& label : m_rowLabels)
        widestRow = std::max(widestRow, m_widths.of(f.axisLabels, label));
    const double rowLabelWidth = widestRow + kRowLabelPadding;
    l.rowLabels = QRectF(l.yTitle.right() + kGap, 0, rowLabelWidth, 0);

    // The time axis: as many round ticks as fit with room between their labels.
    const double span = m_makespan > 0 ? m_makespan : 1.0;
    const double widest =
        labelFm.horizontalAdvance(QString::number(span, 'f', 1)) + kTickLabelSpacing;
    const double left = l.rowLabels.right() + kGap;
    const double right = t.right() - std::max(kPlotRightMargin, widest / 2);
    const int maxTicks = std::max(1, static_cast<int>((right - left) / widest));
    l.tickStep = niceStep(span / maxTicks);
    l.tickDecimals = decimalsFor(l.tickStep);
    l.timeEnd = std::ceil(span / l.tickStep - 1e-9) * l.tickStep;
    if (!(l.timeEnd > 0))
        l.timeEnd = l.tickStep;

    const double top = l.figures.bottom() + kPlotTopGap;
    const double bottom = l.ticks.top();
    l.plot = QRectF(QPointF(left, top), QPointF(right, std::max(top + 1, bottom)));
    l.yTitle.setTop(l.plot.top());
    l.yTitle.setHeight(l.plot.height());
    l.rowLabels.setTop(l.plot.top());
    l.rowLabels.setHeight(l.plot.height());
    l.rowPitch = l.plot.height() / std::max(1, m_stages);
    // A gap between rows while they are tall enough to spare one.
    l.boxHeight = l.rowPitch >= kRowGapFrom ? l.rowPitch * kBoxShare : l.rowPitch;
    return l;
}

double GanttPanel::timeToX(const Layout& l, double t) const
{
    return l.plot.left() + t / l.timeEnd * l.plot.width();
}

double GanttPanel::xToTime(const Layout& l, double x) const
{
    return (x - l.plot.left()) / l.plot.width() * l.timeEnd;
}

QRectF GanttPanel::rowRect(const Layout& l, int stage) const
{
    return QRectF(l.plot.left(), l.plot.top() + stage * l.rowPitch + (l.rowPitch - l.boxHeight) / 2,
                  l.plot.width(), l.boxHeight);
}

QRectF GanttPanel::boxRect(const Layout& l, std::size_t index) const
{
    const core::PipelineEvent& e = m_events[index];
    const QRectF row = rowRect(l, e.stage);
    const double x0 = timeToX(l, e.start);
    return QRectF(x0, row.top(), timeToX(l, e.end) - x0, row.height());
}

bool GanttPanel::drawsPooled(const QRectF& target, double deviceScale) const
{
    if (m_events.empty())
        return false;
    const Layout l = layoutFor(target);
    double shortest = m_events.front().end - m_events.front().start;
    // Only a few durations exist (a chunk's forward and backward, W); the first row has all.
    // A W of no time (weight_time 0) draws nothing and does not count.
    for (std::size_t i = 0; i < m_rowBegin[1]; ++i)
        if (m_events[i].end > m_events[i].start)
            shortest = std::min(shortest, m_events[i].end - m_events[i].start);
    return shortest / l.timeEnd * l.plot.width() * deviceScale < kPooledBelowPixels;
}

void GanttPanel::appendOverlappedLabels(const Layout& l, std::size_t i,
                                        std::vector<Text>& out) const
{
    // An F&B box is two halves, forward on top and backward below: a label in each, if both fit.
    const QFontMetricsF fm(chartFonts().annotation);
    const core::PipelineEvent& e = m_events[i];
    const QRectF box = boxRect(l, i);
    if (fm.height() > box.height() / 2)
        return;
    const QString top = QStringLiteral("F") + QString::number(e.microbatch) + subscript(e.chunk);
    const QString bottom =
        QStringLiteral("B") + QString::number(e.pairMicrobatch) + subscript(e.pairChunk);
    const QFont font = chartFonts().annotation;
    const double wide = std::max(m_widths.of(font, top), m_widths.of(font, bottom));
    if (wide + kBoxLabelPadding > box.width())
        return;
    for (int half = 0; half < 2; ++half) {
        const QString& text = half == 0 ? top : bottom;
        const double advance = m_widths.of(font, text);
        const double cy = box.top() + box.height() * (half == 0 ? 0.25 : 0.75);
        out.push_back(
            {TextKind::BoxLabel, text,
             QRectF(box.center().x() - advance / 2, cy - fm.height() / 2, advance, fm.height()),
             i});
    }
}

void GanttPanel::appendBoxLabels(const Layout& l, std::vector<Text>& out) const
{
    const QFont font = chartFonts().annotation;
    const QFontMetricsF fm(font);
    const double h = fm.height();
    if (h > l.boxHeight)
        return;
    // The narrowest label there can be: boxes narrower than it are skipped without measuring.
    const double narrowest = m_widths.of(font, QStringLiteral("0")) + kBoxLabelPadding;
    for (std::size_t i = 0; i < m_events.size(); ++i) {
        const core::PipelineEvent& e = m_events[i];
        const double w = (e.end - e.start) / l.timeEnd * l.plot.width();
        if (w < narrowest)
            continue;
        if (e.pass == Pass::ForwardBackward) {
            appendOverlappedLabels(l, i, out);
            continue;
        }
        QString text = QString::number(e.microbatch);
        if (m_split) // which of the three passes, in letters as well as colour
            text.prepend(e.withWeight ? QStringLiteral("BW")
                                      : QString(QChar("FBW"[static_cast<int>(e.pass)])));
        if (m_chunks > 1)
            text += subscript(e.chunk);
        // The few distinct labels are measured once each, not once per box.
        const double advance = m_widths.of(font, text);
        if (advance + kBoxLabelPadding > w)
            continue;
        const QRectF box = boxRect(l, i);
        out.push_back({TextKind::BoxLabel, text,
                       QRectF(box.center().x() - advance / 2, box.center().y() - h / 2, advance, h),
                       i});
    }
}

std::vector<GanttPanel::Text> GanttPanel::texts(const QRectF& target) const
{
    const Layout l = layoutFor(target);
    std::vector<Text> out;
    if (!m_title.isEmpty())
        out.push_back(centredText(TextKind::Title, chartFonts().title, m_title, l.title));
    appendFigures(l, out);
    appendTickLabels(l, out);
    appendRowLabels(l, out);
    appendAxisTitles(l, out);
    appendLegend(l, out);
    appendBoxLabels(l, out);
    return out;
}

GanttPanel::Text GanttPanel::centredText(TextKind kind, const QFont& font, const QString& text,
                                         const QRectF& band) const
{
    const QFontMetricsF fm(font);
    const QString shown = m_widths.elided(font, text, band.width());
    const double w = std::min(m_widths.of(font, shown), band.width());
    return Text{
        kind, shown,
        QRectF(band.center().x() - w / 2, band.center().y() - fm.height() / 2, w, fm.height()), 0};
}

void GanttPanel::appendFigures(const Layout& l, std::vector<Text>& out) const
{
    // Side by side when they fit, otherwise one a line.
    if (m_figures.isEmpty())
        return;
    const QFont font = chartFonts().annotation;
    const QFontMetricsF fm(font);
    const double lineHeight = fm.height() + kFigureLinePadding;
    if (!figuresFitOnOneLine(m_figures, l.figures.width(), m_widths)) {
        for (int i = 0; i < m_figures.size(); ++i)
            out.push_back(centredText(TextKind::Figure, font, m_figures[i],
                                      QRectF(l.figures.left(), l.figures.top() + i * lineHeight,
                                             l.figures.width(), lineHeight)));
        return;
    }
    const double card = 2 * kFigureCardPaddingX;
    double total = kFigureGap * static_cast<double>(m_figures.size() - 1);
    for (const QString& s : m_figures)
        total += m_widths.of(font, s) + card;
    double x = l.figures.center().x() - total / 2 + kFigureCardPaddingX;
    for (const QString& s : m_figures) {
        const double w = m_widths.of(font, s);
        out.push_back({TextKind::Figure, s,
                       QRectF(x, l.figures.top() + kFigureLinePadding / 2, w, fm.height()), 0});
        x += w + card + kFigureGap;
    }
}

int GanttPanel::tickCount(const Layout& l)
{
    return static_cast<int>(std::floor(l.timeEnd / l.tickStep + 1e-9));
}

void GanttPanel::appendTickLabels(const Layout& l, std::vector<Text>& out) const
{
    const QFont font = chartFonts().axisLabels;
    const QFontMetricsF fm(font);
    const int count = tickCount(l);
    for (int i = 0; i <= count; ++i) {
        const double t = i * l.tickStep;
        const QString s = QString::number(t, 'f', l.tickDecimals);
        const double w = m_widths.of(font, s);
        out.push_back({TextKind::TickLabel, s,
                       QRectF(timeToX(l, t) - w / 2, l.ticks.top() + kTickLength, w, fm.height()),
                       0});
    }
}

void GanttPanel::appendRowLabels(const Layout& l, std::vector<Text>& out) const
{
    // Stage numbers, thinned so they never touch.
    if (m_stages <= 0)
        return;
    const QFont font = chartFonts().axisLabels;
    const QFontMetricsF fm(font);
    const int step =
        std::max(1, static_cast<int>(std::ceil((fm.height() + kRowLabelSpacing) / l.rowPitch)));
    for (int s = 0; s < m_stages; s += step) {
        const QString text = s < m_rowLabels.size() ? m_rowLabels[s] : QString::number(s);
        const double w = m_widths.of(font, text);
        const double cy = l.plot.top() + (s + 0.5) * l.rowPitch;
        out.push_back(
            {TextKind::RowLabel, text,
             QRectF(l.rowLabels.right() - kRowLabelInset - w, cy - fm.height() / 2, w, fm.height()),
             0});
    }
}

void GanttPanel::appendAxisTitles(const Layout& l, std::vector<Text>& out) const
{
    // The row title is drawn turned, so its rectangle is upright and narrow.
    const QFont font = chartFonts().axisTitle;
    if (!m_xTitle.isEmpty())
        out.push_back(
            centredText(TextKind::AxisTitle, font, m_xTitle,
                        QRectF(l.plot.left(), l.xTitle.top(), l.plot.width(), l.xTitle.height())));
    if (!m_yTitle.isEmpty()) {
        const QFontMetricsF fm(font);
        const QString shown = m_widths.elided(font, m_yTitle, l.plot.height());
        const double len = std::min(m_widths.of(font, shown), l.plot.height());
        out.push_back({TextKind::AxisTitle, shown,
                       QRectF(l.yTitle.left(), l.yTitle.center().y() - len / 2, fm.height(), len),
                       0});
    }
}

void GanttPanel::appendLegend(const Layout& l, std::vector<Text>& out) const
{
    // Line by line, each entry's text after its swatch.
    const QFont font = chartFonts().legend;
    const QFontMetricsF fm(font);
    const auto entries = legendEntries(m_chunks, m_split, m_overlapped);
    const auto lines = legendLines(entries, l.legend.width(), m_widths);
    const double swatch = fm.height() + kSwatchGap;
    double y = l.legend.top();
    for (const auto& line : lines) {
        double total = kLegendGap * static_cast<double>(line.size() - 1);
        for (int i : line)
            total += swatch + m_widths.of(font, entries[i].text);
        double x = l.legend.center().x() - total / 2;
        for (int i : line) {
            const double w = m_widths.of(font, entries[i].text);
            x += swatch;
            out.push_back({TextKind::Legend, entries[i].text,
                           QRectF(x, y + kLegendLinePadding / 2, w, fm.height()),
                           static_cast<std::size_t>(i)});
            x += w + kLegendGap;
        }
        y += fm.height() + kLegendLinePadding;
    }
}

void GanttPanel::drawBoxes(QPainter& painter, const Layout& l)
{
    // One batch of rectangles per colour: a few fills instead of one per pass.
    const double scale = std::max(1e-9, painter.deviceTransform().m11());
    std::array<QList<QRectF>, 2 * std::tuple_size_v<decltype(kPassColors)> + 1> batches;
    for (auto& b : batches)
        b.reserve(static_cast<qsizetype>(m_events.size() / batches.size() + 1));
    // A white line where one box meets the next, while boxes are wide enough to spare it. It
    // is drawn over the boxes: a gap between them would show the hatching, a bubble that is not.
    std::vector<QLineF> edges;
    QList<QRectF> overlapped; // F&B boxes, outlined as one
    for (std::size_t i = 0; i < m_events.size(); ++i) {
        const core::PipelineEvent& e = m_events[i];
        const QRectF r = boxRect(l, i);
        const auto hue = [this](int chunk) {
            return static_cast<std::size_t>(hueOf(chunk)) % kPassColors.size();
        };
        if (e.pass == Pass::ForwardBackward) {
            // The forward on top, the backward it overlaps below, one border round both.
            QRectF top = r;
            top.setHeight(r.height() / 2);
            batches[hue(e.chunk) * 2].append(top);
            batches[hue(e.pairChunk) * 2 + 1].append(top.translated(0, r.height() / 2));
            overlapped.append(r);
        } else {
            batches[e.pass == Pass::Weight ? batches.size() - 1
                                           : hue(e.chunk) * 2 + (e.pass == Pass::Forward ? 0 : 1)]
                .append(r);
        }
        if (r.width() * scale >= kEdgeFromPixels && i > 0 && m_events[i - 1].stage == e.stage
            && m_events[i - 1].end == e.start)
            edges.emplace_back(r.topLeft(), r.bottomLeft());
    }
    painter.setPen(Qt::NoPen);
    for (std::size_t k = 0; k < batches.size(); ++k) {
        if (batches[k].isEmpty())
            continue;
        if (k == batches.size() - 1) {
            painter.setBrush(kWeightFill);
        } else {
            const PassColors& c = kPassColors[k / 2];
            painter.setBrush(k % 2 == 0 ? c.forward : c.backward);
        }
        painter.drawRects(batches[k].constData(), static_cast<int>(batches[k].size()));
    }
    painter.setPen(QPen(Qt::white, kEdgeWidth / scale));
    painter.drawLines(edges.data(), static_cast<int>(edges.size()));
    painter.setPen(QPen(Qt::black, kEdgeWidth / scale));
    painter.setBrush(Qt::NoBrush);
    painter.drawRects(overlapped.constData(), static_cast<int>(overlapped.size()));
}

void GanttPanel::drawPooled(QPainter& painter, const Layout& l)
{
    // Each device pixel of a row gets the mix of the passes in it, weighted by the time they
    // take there, and stays transparent for the idle share, so the hatching shows through.
    const double scale = deviceScale(painter);
    const int w = std::max(1, static_cast<int>(std::ceil(l.plot.width() * scale)));
    const int h = std::max(1, m_stages);
    if (m_strip.isNull() || m_stripFor != QSize(w, h)) {
        std::vector<float>& acc = m_coverage;
        acc.assign(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4, 0.f);
        const double perTime = w / l.timeEnd;
        // A pass's colour depends on its kind and its chunks' hues alone: a few dozen colours
        // for tens of thousands of passes, each made once here rather than once a pass.
        constexpr std::size_t hues = kPassColors.size();
        std::array<std::array<float, 4>, 4 * hues * hues> palette{}; // r, g, b, made yet
        for (const core::PipelineEvent& e : m_events) {
            const auto hue = [this](int chunk) {
                return static_cast<std::size_t>(hueOf(chunk)) % hues;
            };
            std::array<float, 4>& rgb =
                palette[(static_cast<std::size_t>(e.pass) * hues + hue(e.chunk)) * hues
                        + (e.pass == Pass::ForwardBackward ? hue(e.pairChunk) : 0)];
            if (rgb[3] == 0.f) {
                const QColor c = fillOf(e);
                rgb = {static_cast<float>(c.red()), static_cast<float>(c.green()),
                       static_cast<float>(c.blue()), 1.f};
            }
            const double x0 = std::clamp(e.start * perTime, 0.0, static_cast<double>(w));
            const double x1 = std::clamp(e.end * perTime, 0.0, static_cast<double>(w));
            float* row = acc.data() + static_cast<std::size_t>(e.stage) * w * 4;
            for (int px = static_cast<int>(x0); px < w && px < x1; ++px) {
                const auto cover = static_cast<float>(std::min(x1, px + 1.0)
                                                      - std::max(x0, static_cast<double>(px)));
                float* p = row + static_cast<std::size_t>(px) * 4;
                p[0] += cover * rgb[0];
                p[1] += cover * rgb[1];
                p[2] += cover * rgb[2];
                p[3] += cover;
            }
        }
        m_strip = QImage(w, h, QImage::Format_ARGB32_Premultiplied);
        for (int y = 0; y < h; ++y) {
            auto* line = reinterpret_cast<QRgb*>(m_strip.scanLine(y));
            const float* row = acc.data() + static_cast<std::size_t>(y) * w * 4;
            for (int x = 0; x < w; ++x) {
                const float* p = row + static_cast<std::size_t>(x) * 4;
                // Premultiplied: no channel may exceed alpha.
                const int a = static_cast<int>(std::min(1.f, p[3]) * 255.f + 0.5f);
                const auto channel = [a](float v) {
                    return std::min(a, static_cast<int>(v + 0.5f));
                };
                line[x] = qRgba(channel(p[0]), channel(p[1]), channel(p[2]), a);
            }
        }
        m_stripFor = QSize(w, h);
    }
    painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
    for (int s = 0; s < m_stages; ++s)
        painter.drawImage(rowRect(l, s), m_strip, QRectF(0, s, w, 1));
}

void GanttPanel::drawLegend(QPainter& painter, const Layout& l, const std::vector<Text>& all)
{
    const ChartFonts f = chartFonts();
    const QFontMetricsF fm(f.legend);
    const auto entries = legendEntries(m_chunks, m_split, m_overlapped);
    painter.setFont(f.legend);
    for (const Text& t : all) {
        if (t.kind != TextKind::Legend)
            continue;
        const LegendEntry& e = entries[t.box];
        const double side = fm.height() * kSwatchShare;
        const QRectF swatch(t.rect.left() - kSwatchGap - side, t.rect.center().y() - side / 2, side,
                            side);
        switch (e.kind) {
        case LegendEntry::Forward:
            painter.fillRect(swatch, passColor(Pass::Forward, 0));
            break;
        case LegendEntry::Backward:
            painter.fillRect(swatch, passColor(Pass::Backward, 0));
            break;
        case LegendEntry::Weight:
            painter.fillRect(swatch, passColor(Pass::Weight, 0));
            break;
        case LegendEntry::Overlapped: {
            QRectF top = swatch;
            top.setHeight(side / 2);
            painter.fillRect(top, passColor(Pass::Forward, 0));
            painter.fillRect(top.translated(0, side / 2), passColor(Pass::Backward, hueOf(1)));
            break;
        }
        case LegendEntry::Idle:
            hatch(painter, swatch, kSwatchHatchGap, swatch.left(), kIdleFill);
            break;
        case LegendEntry::Chunk: {
            // Both shades of the chunk's hue, forward on the left.
            QRectF half = swatch;
            half.setWidth(side / 2);
            painter.fillRect(half, passColor(Pass::Forward, hueOf(e.chunk)));
            painter.fillRect(half.translated(side / 2, 0),
                             passColor(Pass::Backward, hueOf(e.chunk)));
            break;
        }
        }
        painter.setPen(QPen(kAxis, 1));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(swatch);
        painter.setPen(Qt::black);
        const QStaticText& laid = staticText(t.text, f.legend);
        painter.drawStaticText(
            QPointF(t.rect.left(), t.rect.center().y() - laid.size().height() / 2), laid);
    }
    Q_UNUSED(l);
}

void GanttPanel::render(QPainter& painter, const QRectF& target)
{
    const Layout l = layoutFor(target);
    const std::vector<Text> all = texts(target);
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    painter.fillRect(target, Qt::white);
    drawGrid(painter, l);
    drawRows(painter, l, target);
    drawAxes(painter, l);
    drawTexts(painter, l, all);
    drawLegend(painter, l, all);
    painter.restore();
}

void GanttPanel::drawGrid(QPainter& painter, const Layout& l) const
{
    // Grid lines at the ticks, under the rows so they show in the gaps.
    painter.setPen(QPen(kGrid, 1));
    const int count = tickCount(l);
    for (int i = 0; i <= count; ++i) {
        const double x = timeToX(l, i * l.tickStep);
        painter.drawLine(QPointF(x, l.plot.top()), QPointF(x, l.plot.bottom()));
    }
}

void GanttPanel::drawRows(QPainter& painter, const Layout& l, const QRectF& target)
{
    if (m_stages <= 0 || m_events.empty())
        return;
    // Every row is idle until a box covers it: what stays hatched is the bubble. Crisp
    // hatching and boxes: no antialiasing needed for axis-aligned fills and thin hatch.
    painter.setRenderHint(QPainter::Antialiasing, false);
    const double end = timeToX(l, m_makespan);
    for (int s = 0; s < m_stages; ++s) {
        QRectF row = rowRect(l, s);
        row.setRight(end);
        hatch(painter, row, kIdleHatchGap, l.plot.left(), kIdleFill);
    }
    if (drawsPooled(target, deviceScale(painter)))
        drawPooled(painter, l);
    else
        drawBoxes(painter, l);
    painter.setRenderHint(QPainter::Antialiasing);
}

void GanttPanel::drawAxes(QPainter& painter, const Layout& l) const
{
    // The time axis: line, ticks; and the row axis' line.
    painter.setPen(QPen(kAxis, 1));
    painter.drawLine(l.plot.bottomLeft(), l.plot.bottomRight());
    painter.drawLine(l.plot.topLeft(), l.plot.bottomLeft());
    const int count = tickCount(l);
    for (int i = 0; i <= count; ++i) {
        const double x = timeToX(l, i * l.tickStep);
        painter.drawLine(QPointF(x, l.plot.bottom()), QPointF(x, l.plot.bottom() + kTickLength));
    }
}

void GanttPanel::drawTexts(QPainter& painter, const Layout& l, const std::vector<Text>& all)
{
    const ChartFonts f = chartFonts();
    for (const Text& t : all) {
        switch (t.kind) {
        case TextKind::Title:
            painter.setPen(Qt::black);
            drawCentred(painter, t.rect, t.text, f.title);
            break;
        case TextKind::Figure:
            drawFigure(painter, t, f.annotation);
            break;
        case TextKind::TickLabel:
        case TextKind::RowLabel:
            // The same few dozen labels on every paint: laid out once each and kept.
            painter.setPen(Qt::black);
            drawCentred(painter, t.rect, t.text, f.axisLabels);
            break;
        case TextKind::AxisTitle:
            drawAxisTitle(painter, l, t, f.axisTitle);
            break;
        case TextKind::BoxLabel:
            drawBoxLabel(painter, t, f.annotation);
            break;
        case TextKind::Legend: // with its swatch, in drawLegend()
            break;
        }
    }
}

void GanttPanel::drawFigure(QPainter& painter, const Text& t, const QFont& font)
{
    // Each figure on a light card, so measured and closed form read as a pair.
    const QRectF card = t.rect.adjusted(-kFigureCardPaddingX, -kFigureCardPaddingY,
                                        kFigureCardPaddingX, kFigureCardPaddingY);
    painter.setPen(QPen(kCardBorder, 1));
    painter.setBrush(kCardFill);
    painter.drawRoundedRect(card, kFigureCardRadius, kFigureCardRadius);
    painter.setPen(Qt::black);
    drawCentred(painter, t.rect, t.text, font);
}

void GanttPanel::drawAxisTitle(QPainter& painter, const Layout& l, const Text& t, const QFont& font)
{
    painter.setPen(Qt::black);
    if (t.rect.height() <= t.rect.width() * kUprightTitle || t.rect.left() >= l.plot.left()) {
        drawCentred(painter, t.rect, t.text, font);
        return;
    }
    painter.setFont(font);
    // The row axis title, turned to read upwards.
    painter.save();
    painter.translate(t.rect.center());
    painter.rotate(-90);
    painter.drawText(
        QRectF(-t.rect.height() / 2, -t.rect.width() / 2, t.rect.height(), t.rect.width()),
        Qt::AlignCenter, t.text);
    painter.restore();
}

void GanttPanel::drawBoxLabel(QPainter& painter, const Text& t, const QFont& font)
{
    // Hundreds of short numbers: laid out once each and kept (drawText would shape every one of
    // them on every paint).
    painter.setFont(font);
    const Pass pass = m_events[t.box].pass;
    // White on the dark backwards, and on the lower (backward) half of an F&B box.
    const bool dark = pass == Pass::Backward
        || (pass == Pass::ForwardBackward && t.text.startsWith(QLatin1Char('B')));
    painter.setPen(dark ? Qt::white : Qt::black);
    painter.drawStaticText(t.rect.topLeft(), staticText(t.text, font));
}

template <typename T> QHash<QString, T>& ByFont<T>::in(const QFont& font)
{
    constexpr qsizetype kMostTexts = 4096;
    constexpr std::size_t kMostFonts = 16; // the chart's five, in desk and projector type
    for (auto& [f, table] : m_tables) {
        if (f == font) {
            if (table.size() >= kMostTexts)
                table.clear();
            return table;
        }
    }
    if (m_tables.size() >= kMostFonts)
        m_tables.clear();
    return m_tables.emplace_back(font, QHash<QString, T>()).second;
}

double TextWidths::of(const QFont& font, const QString& text)
{
    QHash<QString, double>& widths = m_widths.in(font);
    if (const auto it = widths.constFind(text); it != widths.constEnd())
        return *it;
    return *widths.insert(text, QFontMetricsF(font).horizontalAdvance(text));
}

QString TextWidths::elided(const QFont& font, const QString& text, double width)
{
    return of(font, text) <= width ? text
                                   : QFontMetricsF(font).elidedText(text, Qt::ElideRight, width);
}

const QStaticText& GanttPanel::staticText(const QString& text, const QFont& font)
{
    QHash<QString, QStaticText>& laid = m_laidOut.in(font);
    auto it = laid.find(text);
    if (it == laid.end()) {
        QStaticText fresh(text);
        fresh.setTextFormat(Qt::PlainText);
        fresh.prepare(QTransform(), font);
        it = laid.insert(text, fresh);
    }
    return *it;
}

void GanttPanel::drawCentred(QPainter& painter, const QRectF& rect, const QString& text,
                             const QFont& font)
{
    painter.setFont(font);
    const QStaticText& laid = staticText(text, font);
    const QSizeF size = laid.size();
    painter.drawStaticText(
        QPointF(rect.center().x() - size.width() / 2, rect.center().y() - size.height() / 2), laid);
}

long long GanttPanel::eventAt(const QRectF& target, const QPointF& pos) const
{
    if (m_stages <= 0 || m_events.empty())
        return -1;
    const Layout l = layoutFor(target);
    const int s = static_cast<int>(std::floor((pos.y() - l.plot.top()) / l.rowPitch));
    if (s < 0 || s >= m_stages || !rowRect(l, s).contains(pos))
        return -1;
    const double t = xToTime(l, pos.x());
    const auto begin = m_events.begin() + static_cast<std::ptrdiff_t>(m_rowBegin[s]);
    const auto end = m_events.begin() + static_cast<std::ptrdiff_t>(m_rowBegin[s + 1]);
    // The last pass of the row that starts at or before t.
    auto it = std::upper_bound(
        begin, end, t, [](double time, const core::PipelineEvent& e) { return time < e.start; });
    if (it != begin && t < std::prev(it)->end)
        return std::prev(it) - m_events.begin();
    // Passes narrower than a pixel: take the nearest one within a pixel.
    const double pixel = l.timeEnd / l.plot.width();
    double best = pixel;
    long long found = -1;
    if (it != begin && t - std::prev(it)->end < best) {
        best = t - std::prev(it)->end;
        found = std::prev(it) - m_events.begin();
    }
    if (it != end && it->start - t < best)
        found = it - m_events.begin();
    return found;
}

QString GanttPanel::describeAt(const QRectF& target, const QPointF& pos) const
{
    const long long i = eventAt(target, pos);
    if (i >= 0 && m_events[static_cast<std::size_t>(i)].pass == Pass::ForwardBackward) {
        const core::PipelineEvent& e = m_events[static_cast<std::size_t>(i)];
        return tr("Device %1: F&B from %2 to %3 %4\nforward of microbatch %5 (chunk %6) "
                  "overlapped with the whole backward of microbatch %7 (chunk %8)")
            .arg(e.stage)
            .arg(formatNumber(e.start, 6), formatNumber(e.end, 6), m_timeUnit)
            .arg(e.microbatch)
            .arg(e.chunk)
            .arg(e.pairMicrobatch)
            .arg(e.pairChunk);
    }
    if (i >= 0) {
        const core::PipelineEvent& e = m_events[static_cast<std::size_t>(i)];
        return tr("Stage %1, microbatch %2, chunk %3\n%4 pass from %5 to %6 %7")
            .arg(e.stage)
            .arg(e.microbatch)
            .arg(e.chunk)
            .arg(e.pass == Pass::Forward      ? tr("Forward")
                     : e.pass == Pass::Weight ? tr("Weight-gradient (W)")
                     : e.withWeight           ? tr("Whole backward (B and W)")
                     : m_split                ? tr("Input-gradient (B)")
                                              : tr("Backward"))
            .arg(formatNumber(e.start, 6), formatNumber(e.end, 6), m_timeUnit);
    }
    const Layout l = layoutFor(target);
    const int s = static_cast<int>(std::floor((pos.y() - l.plot.top()) / l.rowPitch));
    const double t = xToTime(l, pos.x());
    if (s >= 0 && s < m_stages && rowRect(l, s).contains(pos) && t >= 0 && t <= m_makespan)
        return tr("Stage %1 is idle at %2 %3: bubble").arg(s).arg(formatNumber(t, 4), m_timeUnit);
    return {};
}

void GanttPanel::changed()
{
    ++m_generation;
    m_screenDirty = true;
    m_paintedSinceChange = false;
    update();
}

void GanttPanel::paintEvent(QPaintEvent*)
{
    // The first paint after a change (a slider step) draws straight on the screen. Painted again
    // unchanged (an overlapping tool tip, a window expose), the chart is drawn once into an
    // image and kept: later repaints cost a copy, not 65,536 boxes. A step no longer pays for
    // the image's copy it would seldom use.
    const qreal ratio = devicePixelRatioF();
    const QSize pixels = (QSizeF(size()) * ratio).toSize();
    const bool kept = m_screen.size() == pixels && m_screen.devicePixelRatio() == ratio;
    if (m_screenDirty && !m_paintedSinceChange) {
        m_paintedSinceChange = true;
        QPainter painter(this);
        render(painter, rect());
        return;
    }
    if (m_screenDirty || !kept) {
        // Opaque (render() fills white): copies to the window's backing store without blending.
        // Drawn over in place while the size holds: a new image of a few megabytes each time
        // cost the kernel's page faults to clear it first.
        if (!kept) {
            m_screen = QImage(pixels, QImage::Format_RGB32);
            m_screen.setDevicePixelRatio(ratio);
        }
        QPainter offscreen(&m_screen);
        render(offscreen, rect());
        m_screenDirty = false;
    }
    QPainter painter(this);
    painter.drawImage(QPointF(0, 0), m_screen);
}

bool GanttPanel::event(QEvent* event)
{
    // Chart type follows the application font (projector mode): draw again.
    if (event->type() == QEvent::ApplicationFontChange || event->type() == QEvent::FontChange)
        changed();
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = describeAt(rect(), help->pos());
        if (!text.isEmpty()) {
            QToolTip::showText(help->globalPos(), text, this);
            return true;
        }
        QToolTip::hideText();
        event->ignore();
        return true;
    }
    return ChartPanel::event(event);
}

} // namespace scalelab::ui
