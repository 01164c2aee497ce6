#include "chartstyle.h"

#include "legendrows.h"

#include <QAbstractAxis>
#include <QAbstractBarSeries>
#include <QApplication>
#include <QBarLegendMarker>
#include <QBarSet>
#include <QChart>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QGraphicsSimpleTextItem>
#include <QHash>
#include <QLegend>
#include <QLegendMarker>
#include <QLineF>
#include <QLogValueAxis>
#include <QPaintEngine>
#include <QPainter>
#include <QPointF>
#include <QScatterSeries>
#include <QThread>
#include <QTimer>
#include <QValueAxis>
#include <QXYSeries>
#include <algorithm>
#include <cmath>

namespace scalelab::ui {

namespace {

/// An axis property: its labels hold room but are not drawn (hideAxisLabels).
constexpr const char* kHiddenLabels = "scalelab_hiddenLabels";

/// The colour of `axis`'s labels: the text's, or none (hideAxisLabels).
QColor labelsColor(const QAbstractAxis* axis)
{
    return axis->property(kHiddenLabels).toBool() ? QColor(Qt::transparent) : chartTextColor();
}

} // namespace

namespace {
double g_lineScale = 1.0;
ChartBackground g_background = ChartBackground::White;
} // namespace

ChartBackground chartBackground()
{
    return g_background;
}

void setChartBackground(ChartBackground background)
{
    g_background = background;
}

QColor chartBackgroundColor()
{
    switch (g_background) {
    case ChartBackground::System:
        return QApplication::palette().color(QPalette::Base);
    case ChartBackground::White:
        return Qt::white;
    case ChartBackground::Transparent:
        return Qt::transparent;
    }
    return Qt::white;
}

QColor chartTextColor()
{
    return g_background == ChartBackground::System ? QApplication::palette().color(QPalette::Text)
                                                   : QColor(Qt::black);
}

QColor chartGridColor()
{
    const QColor text = chartTextColor();
    const QColor back =
        g_background == ChartBackground::System ? chartBackgroundColor() : QColor(Qt::white);
    const auto mix = [](int a, int b) {
        return (a * 2 + b * 8) / 10;
    };
    return QColor(mix(text.red(), back.red()), mix(text.green(), back.green()),
                  mix(text.blue(), back.blue()));
}

double lineScale()
{
    return g_lineScale;
}

void setLineScale(double scale)
{
    g_lineScale = scale;
}

bool paintsVectors(const QPainter& painter)
{
    const QPaintEngine* engine = painter.paintEngine();
    return engine && (engine->type() == QPaintEngine::SVG || engine->type() == QPaintEngine::Pdf);
}

void restyleChart(QChart* chart)
{
    const ChartFonts f = chartFonts();
    chart->setTitleFont(f.title);
    chart->setTitleBrush(chartTextColor());
    chart->setBackgroundBrush(chartBackgroundColor());
    chart->setPlotAreaBackgroundVisible(false);
    chart->legend()->setFont(f.legend);
    chart->legend()->setLabelColor(chartTextColor());
    // New type: ticks and legend are fitted again at the next layout, whatever its size.
    chart->setProperty("scalelab_tickedSize", QVariant());
    for (QAbstractAxis* axis : chart->axes()) {
        axis->setTitleFont(f.axisTitle);
        axis->setLabelsFont(f.axisLabels);
        axis->setTitleBrush(chartTextColor());
        axis->setLabelsColor(labelsColor(axis));
        axis->setGridLineColor(chartGridColor());
    }
    for (QAbstractSeries* series : chart->series()) {
        // Values written on bars follow the type too.
        if (auto* bars = qobject_cast<QAbstractBarSeries*>(series); bars && bars->isLabelsVisible())
            for (QBarSet* set : bars->barSets())
                set->setLabelFont(f.annotation);
        auto* xy = qobject_cast<QXYSeries*>(series);
        if (!xy || qobject_cast<QScatterSeries*>(series))
            continue;
        // The width the tab chose is kept once, so scaling twice never compounds.
        QVariant base = xy->property("scalelabBaseWidth");
        if (!base.isValid()) {
            base = xy->pen().widthF();
            xy->setProperty("scalelabBaseWidth", base);
        }
        QPen pen = xy->pen();
        pen.setWidthF(base.toDouble() * g_lineScale);
        xy->setPen(pen);
    }
}

ChartFonts chartFonts()
{
    const QFont base = QApplication::font();
    // Point sizes relative to the application font: the title stands out, tick labels stay
    // readable at slide size (exports scale everything up with the image).
    const qreal pt = base.pointSizeF() > 0 ? base.pointSizeF() : 10.0;
    // Large type (projector mode, a bigger text size) is readable as it is: the emphasis over
    // the window's type fades as the type grows, so charts keep room for their data.
    const qreal fade = std::min(1.0, 10.0 / pt);
    const auto scaled = [pt, fade](qreal factor) {
        return pt * (1.0 + (factor - 1.0) * fade);
    };
    ChartFonts f{base, base, base, base, base};
    f.title.setPointSizeF(scaled(1.5));
    f.title.setBold(true);
    f.axisTitle.setPointSizeF(scaled(1.2));
    f.axisLabels.setPointSizeF(scaled(1.1));
    f.legend.setPointSizeF(scaled(1.15));
    f.annotation.setPointSizeF(scaled(1.1));
    return f;
}

namespace {

/// The share of a chart's width Qt Charts gives a legend beside the plot, at most.
constexpr double kSideLegendShare = 0.4;

/// Runs `work` on `chart` once the event loop turns, however often it is asked before then:
/// `pending` names the chart property that remembers a run is on its way.
void deferOnce(QChart* chart, const char* pending, void (*work)(QChart*))
{
    if (chart->property(pending).toBool())
        return;
    chart->setProperty(pending, true);
    QTimer::singleShot(0, chart, [chart, pending, work] {
        chart->setProperty(pending, false);
        work(chart);
    });
}

/// The chart property that keeps the chart's width when its legend went into rows.
constexpr const char* kRowsSince = "scalelab_legendRowsSince";

/// A legend shown in rows (legendrows.h) at the chart's present width, from now on.
void legendIntoRows(QChart* chart)
{
    chart->setProperty(kRowsSince, chart->size().width());
    showLegendRows(chart, true);
}

/// A legend under the chart is one row, and Qt Charts cuts every name short when the row is
/// wider than the chart ("Param...", "Activa..."): such a legend moves to the right, one name a
/// line, and comes back under the chart when the chart is wide enough again. Where a column on
/// the right would squeeze the plot, the legend goes into rows under the plot instead.
void keepLegendWhole(QChart* chart)
{
    QLegend* legend = chart->legend();
    const bool moved = chart->property("scalelab_legendMoved").toBool();
    if (!legend->isVisible() || legendRowsShown(chart)
        || (legend->alignment() != Qt::AlignBottom && !moved))
        return;
    const QFontMetricsF fm(legend->font());
    double row = 0, widest = 0;
    for (QLegendMarker* marker : legend->markers())
        if (marker->isVisible()) {
            const double entry = fm.horizontalAdvance(legendEntryName(marker)) + fm.height()
                + 3 * fm.averageCharWidth();
            row += entry;
            widest = std::max(widest, entry);
        }
    const double width = chart->size().width();
    const bool fits = row <= width - 4 * fm.averageCharWidth();
    // On the right the legend takes its widest name from the plot, beside the side axes (a
    // title and about five characters of labels each): only where half the width is left for
    // the plot, or Qt Charts squeezes the axes' labels instead ("1...").
    double sides = 0;
    for (const QAbstractAxis* axis : chart->axes(Qt::Vertical))
        sides += QFontMetricsF(axis->titleFont()).height() * 1.5
            + 5 * QFontMetricsF(axis->labelsFont()).averageCharWidth();
    const bool roomOnTheRight = width - widest - sides >= 0.5 * width;
    if (!fits && !moved && roomOnTheRight) {
        legend->setAlignment(Qt::AlignRight);
        chart->setProperty("scalelab_legendMoved", true);
    } else if (moved && (fits || !roomOnTheRight)) {
        legend->setAlignment(Qt::AlignBottom);
        chart->setProperty("scalelab_legendMoved", false);
    }
    if (!fits && !roomOnTheRight)
        legendIntoRows(chart);
}

/// Qt's legend where it shows every entry whole, rows where it cuts one (a name too long for
/// the legend's share beside the plot, a row too long under it). Rows stay until the chart is
/// a fifth wider than where they began: then Qt's legend is tried again.
void chooseLegendRows(QChart* chart)
{
    if (legendKeptInRows(chart)) {
        showLegendRows(chart, true); // laid out again for the present size and names
    } else if (legendRowsShown(chart)) {
        const bool wider = chart->size().width() > 1.2 * chart->property(kRowsSince).toDouble();
        showLegendRows(chart, !wider);
    } else if (legendWouldCut(chart)) {
        legendIntoRows(chart);
    }
}

/// What a chart's text item adds around its text when Qt Charts measures it against the room it
/// has: a margin each side, and a little slack.
constexpr double kTextItemMargins = 2 * 4 + 4;

/// The chart's title in lines that fit its width; the whole title is kept to fit it again at
/// another width. A title the tab set since (it differs from the lines last shown) is the new
/// whole title.
bool fitTitle(QChart* chart)
{
    const QString shown = chart->title();
    QString whole = chart->property("scalelab_title").toString();
    if (shown != chart->property("scalelab_titleShown").toString())
        whole = shown;
    // Qt Charts gives the title the chart less its layout's margins and the chart's own, and
    // measures it as a text item, which adds a margin each side: a title only just narrower
    // than the chart was cut short ("... compute p...") instead of wrapped.
    const QMargins m = chart->margins();
    qreal left = 0, top = 0, right = 0, bottom = 0;
    if (chart->layout())
        chart->layout()->getContentsMargins(&left, &top, &right, &bottom);
    const double width =
        chart->size().width() - m.left() - m.right() - left - right - kTextItemMargins;
    const QString fit = wrapWords(whole, chart->titleFont(), width);
    chart->setProperty("scalelab_title", whole);
    chart->setProperty("scalelab_titleShown", fit);
    if (fit == shown)
        return false;
    chart->setTitle(fit);
    return true;
}

/// Each axis title in lines that fit the plot's side it runs along (its width for an axis along
/// the bottom or top, its height for one up the side), where Qt Charts would cut it short
/// ("Saved activations (..."). An axis up the side has little room across for more lines (Qt
/// Charts gives the side axes 40% of the width at most, and the title less than its height
/// where the tick labels are narrower than "..."): where its title does not fit on one line,
/// its short form (styleAxis) is shown instead, wrapped only if it must be. As for the chart's
/// title, the whole title is kept to fit again at another size, and a title the tab set since is
/// the new whole one.
bool fitAxisTitles(QChart* chart)
{
    const QSizeF plot = chart->plotArea().size();
    if (plot.width() < 1 || plot.height() < 1)
        return false;
    bool changed = false;
    for (QAbstractAxis* axis : chart->axes()) {
        const QString shown = axis->titleText();
        if (shown.isEmpty() || !axis->isTitleVisible())
            continue;
        const QString whole = axisTitle(axis);
        const bool side = axis->orientation() == Qt::Vertical;
        const double along = (side ? plot.height() : plot.width()) - kTextItemMargins;
        QString fit = wrapWords(whole, axis->titleFont(), along);
        const QString shortTitle = axis->property("scalelab_shortTitle").toString();
        if (!shortTitle.isEmpty() && fit != whole)
            fit = wrapWords(shortTitle, axis->titleFont(), along);
        axis->setProperty("scalelab_title", whole);
        axis->setProperty("scalelab_titleShown", fit);
        if (fit != shown) {
            axis->setTitleText(fit);
            changed = true;
        }
    }
    return changed;
}

/// Legend entries in lines that fit: beside the plot, the legend's share of the width less the
/// marker. Below the plot, entries stay on one line (Qt Charts cuts a wrapped entry of a row
/// short); keepLegendWhole moves a row too long for the chart beside it.
void fitLegend(QChart* chart)
{
    QLegend* legend = chart->legend();
    if (!legend->isVisible() || legendRowsShown(chart))
        return;
    const QFontMetricsF fm(legend->font());
    const bool side = legend->alignment() == Qt::AlignLeft || legend->alignment() == Qt::AlignRight;
    // 0: not wrapped.
    const double width = side
        ? kSideLegendShare * chart->size().width() - fm.height() - 4 * fm.averageCharWidth()
        : 0.0;
    for (QLegendMarker* marker : legend->markers()) {
        const QString fit = wrapWords(legendEntryName(marker), legend->font(), width);
        if (marker->label() != fit)
            marker->setLabel(fit);
    }
}

} // namespace

namespace {

/// wrapWords without its memory.
QString measureAndWrap(const QString& text, const QFont& font, double width)
{
    const QFontMetricsF fm(font);
    if (fm.horizontalAdvance(text) <= width)
        return text;
    QStringList lines;
    QString line;
    for (const QString& word : text.split(' ', Qt::SkipEmptyParts)) {
        const QString longer = line.isEmpty() ? word : line + ' ' + word;
        if (!line.isEmpty() && fm.horizontalAdvance(longer) > width) {
            lines << line;
            line = word;
        } else {
            line = longer;
        }
    }
    if (!line.isEmpty())
        lines << line;
    return lines.join("<br>");
}

/// The texts wrapped lately. Every refresh of a tab fits every text of its charts again, mostly
/// the same texts at the same widths, and measuring a text (shaping it) costs more than the
/// rest of a small chart's refresh. Forgotten wholesale when full: the texts of one window are
/// far fewer.
constexpr qsizetype kWrappedKept = 1024;

/// What a wrapped text is remembered by: the text, the font, the width to a tenth of a pixel.
/// The font itself, not its key(): the key is a new string each time it is asked for, which
/// cost more than the rest of the lookup.
struct WrapKey {
    QString text;
    QFont font;
    qint64 tenths = 0;
    bool operator==(const WrapKey&) const = default;
};

size_t qHash(const WrapKey& key, size_t seed = 0)
{
    return qHashMulti(seed, key.text, key.font, key.tenths);
}

} // namespace

QString wrapWords(const QString& text, const QFont& font, double width)
{
    if (width <= 0 || text.contains('<'))
        return text;
    if (const QCoreApplication* app = QCoreApplication::instance();
        !app || QThread::currentThread() != app->thread())
        return measureAndWrap(text, font, width); // the memory is the GUI thread's
    static QHash<WrapKey, QString> wrapped;
    const WrapKey key{text, font, std::llround(width * 10)};
    if (const auto it = wrapped.constFind(key); it != wrapped.cend())
        return *it;
    if (wrapped.size() >= kWrappedKept)
        wrapped.clear();
    const QString fit = measureAndWrap(text, font, width);
    wrapped.insert(key, fit);
    return fit;
}

/// Chart properties: how many fits in a row changed a title, and whether the next plot area is
/// to be fitted again whatever its change.
constexpr const char* kRefits = "scalelab_titleRefits";
constexpr const char* kRefitPending = "scalelab_refitAfterLayout";
constexpr int kMostRefits = 3;

void fitChartTexts(QChart* chart)
{
    if (chart->size().width() < 1)
        return;
    bool changed = fitTitle(chart);
    fitLegend(chart);
    chooseLegendRows(chart);
    changed = fitAxisTitles(chart) || changed;
    // A title with more or fewer lines gives the plot another size, and so each title other
    // room: the texts are fitted again once the chart is laid out with them, until a fit
    // changes nothing. Before, what a narrow chart showed hung on the order of Qt's layouts: a
    // side title fitted before the bottom one wrapped kept a line 2 px longer than the room the
    // wrapped bottom title left it (cut short), unless the plot happened to shrink by a tenth
    // and so was fitted again. A few rounds at most, should two layouts keep asking for each
    // other.
    const int refits = chart->property(kRefits).toInt();
    const bool again = changed && refits < kMostRefits;
    chart->setProperty(kRefits, changed ? refits + 1 : 0);
    chart->setProperty(kRefitPending, again);
}

namespace {

/// After a real change of the plot's size (a tenth or more: new ticks move the plot's edges by
/// a few pixels, which must not start another round): ticks thinned or thickened for the new
/// length, the legend beside or under the plot, and the texts wrapped again.
void followPlotSize(QChart* chart)
{
    const QSizeF size = chart->plotArea().size();
    const QSizeF last = chart->property("scalelab_tickedSize").toSizeF();
    if (std::abs(size.width() - last.width()) < 0.1 * size.width()
        && std::abs(size.height() - last.height()) < 0.1 * size.height()) {
        if (chart->property(kRefitPending).toBool())
            fitChartTexts(chart); // the texts' own change of room (fitChartTexts)
        return;
    }
    chart->setProperty("scalelab_tickedSize", size);
    for (QAbstractAxis* a : chart->axes()) {
        auto* axis = qobject_cast<QValueAxis*>(a);
        const QVariant asked = axis ? axis->property("scalelab_niceRange") : QVariant();
        if (asked.isValid()) {
            const QLineF r = asked.toLineF();
            if (r.y2() >= 0) // a pad, even 0: the range ends where it was asked
                setPaddedRange(axis, r.x1(), r.y1(), r.y2(), r.x2() != 0);
            else
                setNiceRange(axis, r.x1(), r.y1(), r.x2() != 0);
        }
    }
    keepLegendWhole(chart);
    fitChartTexts(chart);
}

} // namespace

void styleChart(QChart* chart)
{
    const ChartFonts f = chartFonts();
    chart->setTheme(QChart::ChartThemeLight);
    chart->setBackgroundBrush(chartBackgroundColor());
    chart->setBackgroundRoundness(0);
    chart->setTitleFont(f.title);
    chart->setTitleBrush(chartTextColor());
    chart->setMargins(QMargins(6, 6, 6, 6));
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->legend()->setFont(f.legend);
    chart->legend()->setLabelColor(chartTextColor());
    // A chart made narrower (a smaller window, projector type) thins out its ticks: once the
    // layout has settled (not inside it: new ticks lay the chart out again), and only for a
    // real change of size (new ticks move the plot's edges by a few pixels, which must not
    // start another round).
    if (!chart->property("scalelab_ticksFollowWidth").toBool()) {
        chart->setProperty("scalelab_ticksFollowWidth", true);
        // Titles and legend entries wrap to the new size, once the resize has settled.
        QObject::connect(chart, &QGraphicsWidget::geometryChanged, chart, [chart] {
            chart->setProperty(kRefits, 0); // a new size: the titles may change again
            deferOnce(chart, "scalelab_fitPending", fitChartTexts);
        });
        QObject::connect(chart, &QChart::plotAreaChanged, chart,
                         [chart] { deferOnce(chart, "scalelab_tickPending", followPlotSize); });
    }
}

void styleAxis(QAbstractAxis* axis, const QString& title, const QString& shortTitle)
{
    const ChartFonts f = chartFonts();
    axis->setProperty("scalelab_shortTitle", shortTitle);
    setAxisTitle(axis, title);
    axis->setTitleFont(f.axisTitle);
    axis->setTitleBrush(chartTextColor());
    axis->setLabelsFont(f.axisLabels);
    axis->setLabelsColor(labelsColor(axis));
    axis->setGridLineColor(chartGridColor());
    axis->setLinePenColor(QColor(90, 90, 90));
}

void hideAxisLabels(QAbstractAxis* axis)
{
    axis->setProperty(kHiddenLabels, true);
    axis->setLabelsColor(labelsColor(axis));
}

QString axisTitle(const QAbstractAxis* axis)
{
    const QString shown = axis->titleText();
    return shown == axis->property("scalelab_titleShown").toString()
        ? axis->property("scalelab_title").toString()
        : shown;
}

void setAxisTitle(QAbstractAxis* axis, const QString& title)
{
    // The same title, perhaps shown wrapped, is left alone: setting it lays the chart out again.
    if (axisTitle(axis) != title)
        axis->setTitleText(title);
}

void styleNote(QGraphicsSimpleTextItem* note, QFont font)
{
    font.setBold(true);
    if (note->font() != font)
        note->setFont(font);
    if (note->brush().color() != chartTextColor())
        note->setBrush(chartTextColor());
}

namespace {

/// The decimals that label ticks `step` apart: none for whole steps, one more for 2.5, 0.25...
int decimalsFor(double step)
{
    int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
    if (std::abs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals)))
        > 1e-6)
        ++decimals;
    return decimals;
}

/// The smallest round step (1, 2, 2.5 or 5 times a power of ten) that cuts `span` into at most
/// `intervals` pieces.
double roundStep(double span, int intervals, bool whole)
{
    const double power = std::pow(10.0, std::floor(std::log10(span / intervals)));
    double step = 10 * power;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (span / (m * power) <= intervals + 1e-9) {
            step = m * power;
            break;
        }
    return whole ? std::max(1.0, std::round(step)) : step;
}

/// How many intervals an axis can label without Qt Charts cutting its labels short ("1..."):
/// along the bottom, its plot width over its widest label and a gap; up the side, its plot
/// height over a line and a half. At most eight; eight for an axis not in a laid-out chart.
int intervalsThatFit(const QValueAxis* axis, double min, double max, bool whole)
{
    // An axis added to a chart belongs to the chart's data set, which belongs to the chart.
    const QChart* chart = nullptr;
    for (const QObject* o = axis->parent(); o && !chart; o = o->parent())
        chart = qobject_cast<const QChart*>(o);
    if (!chart)
        return 8;
    const bool horizontal = axis->orientation() == Qt::Horizontal;
    const double length = horizontal ? chart->plotArea().width() : chart->plotArea().height();
    if (length < 1)
        return 8;
    const QFontMetricsF fm(axis->labelsFont());
    for (int intervals = 8; intervals > 1; --intervals) {
        const double step = roundStep(max - min, intervals, whole);
        const int decimals = decimalsFor(step);
        const double top = min + std::ceil((max - min) / step - 1e-9) * step;
        // Across: the widest label and two characters; up the side: a line and a half.
        const double label = horizontal
            ? std::max(fm.horizontalAdvance(QString::number(min, 'f', decimals)),
                       fm.horizontalAdvance(QString::number(top, 'f', decimals)))
                + 2 * fm.averageCharWidth()
            : 1.5 * fm.height();
        if (length * step / (top - min) >= label)
            return intervals;
    }
    return 1;
}

} // namespace

namespace {

/// The label format for ticks every `step` from `anchor` on an axis from `low` to `high`. On a
/// horizontal axis whose first and last labels are one character each ("0" to "7" stages), each
/// label has a no-break space on either side. Qt Charts lays the whole chart out again after a
/// range change when the axis' preferred size differs from what it was; it compares its new
/// preferred width (half the widest end label) with the old one as the layout has it, raised to
/// the least width (half of "..."). Labels narrower than "..." never compare equal, and every
/// step of a count slider cost a layout of the chart (3 M instructions, a tenth of a step of the
/// pipeline tab's stages). The spaces are invisible and keep each label centred on its tick.
QString tickFormat(const QValueAxis* axis, double anchor, double step, double low, double high)
{
    const int decimals = decimalsFor(step);
    const QString plain = QString("%.%1f").arg(decimals);
    if (axis->orientation() != Qt::Horizontal || !(step > 0))
        return plain;
    const double first = anchor + std::ceil((low - anchor) / step - 1e-9) * step;
    const double last = anchor + std::floor((high - anchor) / step + 1e-9) * step;
    // As Qt Charts writes them; -0 prints as "-0", two characters, which needs no padding.
    const auto characters = [&](double v) {
        return QString::asprintf(qPrintable(plain), v).size();
    };
    if (characters(first) > 1 || characters(last) > 1)
        return plain;
    // As entities: Qt Charts reads the format as Latin-1 and prints it as UTF-8, and draws the
    // label as rich text.
    return QStringLiteral("&nbsp;") + plain + QStringLiteral("&nbsp;");
}

} // namespace

void setTicks(QValueAxis* axis, double anchor, double step, double low, double high)
{
    const QString format = tickFormat(axis, anchor, step, low, high);
    // An axis that does not change must not be touched: Qt Charts lays the whole chart out
    // again (every label measured as rich text) on a new label format, even an equal one.
    if (axis->tickType() == QValueAxis::TicksDynamic && axis->tickAnchor() == anchor
        && axis->tickInterval() == step && axis->min() == low && axis->max() == high
        && axis->labelFormat() == format)
        return;
    // Change range and step in the order that never asks for a flood of ticks: a small step
    // over the old, wide range would lay out tens of thousands of them.
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(anchor);
    if (step >= axis->tickInterval()) {
        axis->setTickInterval(step);
        axis->setRange(low, high);
    } else {
        axis->setRange(low, high);
        axis->setTickInterval(step);
    }
    if (axis->labelFormat() != format)
        axis->setLabelFormat(format);
}

void setNiceRange(QValueAxis* axis, double min, double max, bool whole)
{
    if (!(max > min))
        max = min + 1;
    // Remembered, so the ticks can be thinned out again when the chart changes size; a pad of
    // -1 marks a range that may end past `max` at the next round tick.
    axis->setProperty("scalelab_niceRange", QVariant::fromValue(QLineF(min, max, whole, -1)));
    // The top the range is made for, which setStickyRange measures a smaller top against.
    axis->setProperty("scalelab_rangeMadeFor", max);
    const double span = max - min;
    const double step = roundStep(span, intervalsThatFit(axis, min, max, whole), whole);
    const double top = min + std::ceil(span / step - 1e-9) * step;
    setTicks(axis, min, step, min, top);
}

void setStickyRange(QValueAxis* axis, double min, double max, bool whole, double keep)
{
    // Measured against the data the range was made for, not against the rounded-up axis: data
    // that halve and double again then keep the scale however far the range was rounded up.
    const QVariant madeFor = axis->property("scalelab_rangeMadeFor");
    if (madeFor.isValid() && axis->property("scalelab_niceRange").isValid() && axis->min() == min
        && max <= axis->max() && max - min >= keep * (madeFor.toDouble() - min)) {
        // What a resize thins the ticks for: today's data, not the data the range was made for
        // (a smaller ask then would cut today's bars).
        axis->setProperty("scalelab_niceRange", QVariant::fromValue(QLineF(min, max, whole, -1)));
        return;
    }
    setNiceRange(axis, min, max, whole);
}

void setPaddedRange(QValueAxis* axis, double min, double max, double pad, bool whole)
{
    if (max < min)
        max = min;
    // Remembered with the pad, so a resize that thins the ticks keeps the ends whole.
    axis->setProperty("scalelab_niceRange", QVariant::fromValue(QLineF(min, max, whole, pad)));
    axis->setProperty("scalelab_rangeMadeFor", max);
    const double span = std::max(max - min, whole ? 1.0 : 1e-9);
    const double step = roundStep(span, intervalsThatFit(axis, min, min + span, whole), whole);
    setTicks(axis, min, step, min - pad, max + pad);
}

namespace {

/// Ticks every `base` (10 or 100) over [lo, hi] widened to whole powers of the base.
void setDecadeRange(QLogValueAxis* axis, double lo, double hi, double base)
{
    const double step = std::log10(base);
    const double low = std::pow(10.0, step * std::floor(std::log10(lo) / step + 1e-9));
    double high = std::pow(10.0, step * std::ceil(std::log10(hi) / step - 1e-9));
    if (!(high > low))
        high = low * base;
    const double a = low * (1 - 1e-9), z = high * (1 + 1e-9);
    if (axis->base() != base)
        axis->setBase(base);
    if (axis->min() != a || axis->max() != z) {
        axis->setRange(a, z);
        // A new range alone does not make Qt Charts measure the labels again: a wider top
        // label ("100" after "10") would be cut to "1...". A new label format does; "%g" and
        // "%.6g" print the same text.
        axis->setLabelFormat(axis->labelFormat() == QLatin1String("%g") ? "%.6g" : "%g");
    }
}

} // namespace

void setLogDecades(QLogValueAxis* axis, double lo, double hi)
{
    if (!(lo > 0) || !(hi > 0))
        return;
    axis->setProperty("scalelab_decades", QPointF(lo, hi));
    auto* chart = qobject_cast<QChart*>(axis->parent());
    double base = 10;
    if (chart && chart->plotArea().height() > 0) {
        const double decades =
            std::max(1.0, std::ceil(std::log10(hi) - 1e-9) - std::floor(std::log10(lo) + 1e-9));
        const double room = chart->plotArea().height() / decades;
        if (room < 1.5 * QFontMetricsF(axis->labelsFont()).height())
            base = 100;
    }
    setDecadeRange(axis, lo, hi, base);
    if (chart && !chart->property("scalelab_followsDecades").toBool()) {
        chart->setProperty("scalelab_followsDecades", true);
        // After the layout has settled, not inside it: a new base lays the chart out again.
        QObject::connect(chart, &QChart::plotAreaChanged, axis, [axis] {
            QTimer::singleShot(0, axis, [axis] {
                const QPointF r = axis->property("scalelab_decades").toPointF();
                setLogDecades(axis, r.x(), r.y());
            });
        });
    }
}

} // namespace scalelab::ui
