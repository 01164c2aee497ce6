#include "plancommunicationpanel.h"

#include "chartstyle.h"
#include "format.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QTextLayout>
#include <QToolTip>
#include <algorithm>
#include <cmath>

namespace scalelab::ui {

namespace {

constexpr double kMinTextScale = 0.62; // below this the formulas stop reading on a projector
constexpr double kMaxTextScale = 1.3; // a roomy target gets larger type, not empty space
const QSize kMinimumSize(260, 220); // pixels, as every chart panel
constexpr double kGap = 10; // between rows, and under the subtitle
constexpr double kTextScaleStep = 0.04; // tried from kMaxTextScale down to the floor
/// The longest detail beside an axis's name the bar column is sized for, not today's: a detail
/// that changes with every edit then never moves the formulas, and the laid-out text is reused.
const QString kWidestDetail = QStringLiteral("(d = 88,888, ZeRO-3)");

// Layout metrics, in pixels of the target (or in lines of a font where named so).
constexpr double kTitleInset = 8; // title and subtitle from the left and right edges
constexpr double kTitleTop = 6; // above the title
constexpr double kTitlePadding = 4; // added to the title's line height
constexpr double kSubtitleGap = 2; // between the title and the subtitle
constexpr double kRowInset = 12; // rows (and the lines between them) from the left and right
constexpr double kBottomMargin = 8; // under the last row
constexpr double kLabelPadding = 16; // the bar column beyond its widest label
constexpr double kMinBarColumn = 0.34; // the bar column's share of the width, at least ...
constexpr double kMaxBarColumn = 0.46; // ... and at most
constexpr double kFormulaGap = 18; // between the bar column and the formulas
constexpr double kLabelBarGap = 4; // between an axis's name and its bar
constexpr double kBarLines = 1.3; // a bar's height, in lines of the figures' font
constexpr double kBarBlockLines = 1.5; // a bar and the space under it, in the same lines
constexpr double kValueGap = 6; // between a bar's end and its figure
constexpr double kValueRoom = 10; // kept free past the widest figure at the longest bar
constexpr double kValuePadding = 8; // added to the widest figure's box
constexpr double kMinBarLength = 2; // a figure above zero always shows some bar
constexpr double kZeroLineOverhang = 2; // the zero line past the bar, above and below

QFont scaledFont(QFont font, double scale)
{
    font.setPointSizeF(font.pointSizeF() * scale);
    return font;
}

/// Height of `text` wrapped at `width` in `font`.
double wrappedHeight(const QString& text, const QFont& font, double width)
{
    const QFontMetricsF fm(font);
    return fm.boundingRect(QRectF(0, 0, width, 1e6), Qt::TextWordWrap | Qt::AlignLeft, text)
        .height();
}

/// `text` wrapped at `width`, cut after the last line that fits in `height`, with an ellipsis.
QString elidedToHeight(const QString& text, const QFont& font, double width, double height)
{
    const QFontMetricsF fm(font);
    const int lines = std::max(1, static_cast<int>(std::floor(height / fm.lineSpacing())));
    QTextLayout layout(text, font);
    layout.beginLayout();
    QString out;
    for (int i = 0; i < lines; ++i) {
        QTextLine line = layout.createLine();
        if (!line.isValid())
            break;
        line.setLineWidth(width);
        const QString part = text.mid(line.textStart(), line.textLength());
        if (i == lines - 1 && line.textStart() + line.textLength() < text.size())
            out += fm.elidedText(part.trimmed() + QStringLiteral(" \u2026"), Qt::ElideRight, width);
        else
            out += part;
    }
    layout.endLayout();
    return out;
}

} // namespace

PlanCommunicationPanel::PlanCommunicationPanel(const QString& name, QWidget* parent)
    : ChartPanel(name, parent)
{
    setAttribute(Qt::WA_OpaquePaintEvent);
}

double PlanCommunicationPanel::leastHeight(double width) const
{
    // Measured again only for new texts, fonts or width: the values a slider moves (bars,
    // details) never change it.
    const QString key = cacheKey();
    if (m_least && m_least->width == width && m_least->key == key)
        return m_least->height;
    const double height = measureLeastHeight(width);
    m_least = LeastHeight{width, key, height};
    return height;
}

double PlanCommunicationPanel::measureLeastHeight(double width) const
{
    const Layout l = layoutFor(QRectF(0, 0, width, 1e6));
    const QFont smallest = scaledFont(chartFonts().annotation, kMinTextScale);
    double height = l.rowsTop + kBottomMargin;
    for (const Axis& a : m_axes)
        height += std::max(l.leftBlock, wrappedHeight(a.formula, smallest, l.formulaWidth)) + kGap;
    return height - (m_axes.isEmpty() ? 0 : kGap);
}

QSize PlanCommunicationPanel::minimumSizeHint() const
{
    const double width = std::max(this->width(), kMinimumSize.width());
    return {kMinimumSize.width(),
            std::max(kMinimumSize.height(), static_cast<int>(std::ceil(leastHeight(width))))};
}

void PlanCommunicationPanel::remeasure()
{
    // Asked again only when it changed: a new formula at every slider step would otherwise
    // lay the whole chart area out again.
    const int least = minimumSizeHint().height();
    if (least != m_leastHeight) {
        m_leastHeight = least;
        updateGeometry();
    }
}

void PlanCommunicationPanel::resizeEvent(QResizeEvent* event)
{
    ChartPanel::resizeEvent(event);
    remeasure();
}

void PlanCommunicationPanel::setTitle(const QString& title)
{
    m_title = title;
    update();
    remeasure();
}

void PlanCommunicationPanel::setSubtitle(const QString& subtitle)
{
    m_subtitle = subtitle;
    update();
    remeasure();
}

void PlanCommunicationPanel::setUnit(double bytesPerUnit, const QString& unitName)
{
    m_bytesPerUnit = bytesPerUnit;
    m_unitName = unitName;
    update();
}

void PlanCommunicationPanel::setAxes(const QList<Axis>& axes)
{
    m_axes = axes;
    update();
    remeasure();
}

QString PlanCommunicationPanel::valueText(double bytes) const
{
    return formatNumber(bytes / m_bytesPerUnit) + ' ' + m_unitName;
}

PlanCommunicationPanel::Layout PlanCommunicationPanel::layoutFor(const QRectF& t) const
{
    const ChartFonts f = chartFonts();
    const QFontMetricsF titleFm(f.title), subFm(f.annotation), labelFm(f.legend),
        valueFm(f.axisLabels);
    Layout l;
    const double titleWidth = t.width() - 2 * kTitleInset;
    const double titleHeight = wrappedHeight(m_title, f.title, titleWidth); // wrapped
    l.title = QRectF(t.left() + kTitleInset, t.top() + kTitleTop, titleWidth,
                     std::max(titleFm.height(), titleHeight) + kTitlePadding);
    l.subtitle = QRectF(t.left() + kTitleInset, l.title.bottom() + kSubtitleGap, titleWidth,
                        wrappedHeight(m_subtitle, f.annotation, titleWidth));
    const QRectF area(QPointF(t.left() + kRowInset, l.subtitle.bottom() + kGap),
                      QPointF(t.right() - kRowInset, t.bottom() - kBottomMargin));
    l.rowsTop = area.top();
    const int rows = static_cast<int>(m_axes.size());
    // Left: name and bar; right: the formula. The bar column takes what its labels need (for
    // the longest name and kWidestDetail) within its share; past that, details go under names.
    QFont bold = f.legend;
    bold.setBold(true);
    const QFontMetricsF boldFm(bold);
    double labelWidth = 0;
    for (const Axis& a : m_axes)
        labelWidth = std::max(labelWidth,
                              boldFm.horizontalAdvance(a.name + "  ")
                                  + labelFm.horizontalAdvance(kWidestDetail));
    const double left = std::clamp(labelWidth + kLabelPadding, area.width() * kMinBarColumn,
                                   area.width() * kMaxBarColumn);
    l.detailBelow = labelWidth > left;
    const double labelHeight = labelFm.height() * (l.detailBelow ? 2 : 1);
    const double textX = area.left() + left + kFormulaGap;
    const double textWidth = area.right() - textX;
    l.formulaWidth = textWidth;
    const double leftBlock = l.leftBlock =
        labelHeight + kLabelBarGap + valueFm.height() * kBarBlockLines;
    if (rows == 0 || area.height() <= 0)
        return l;

    // The largest text scale at which every row fits; below the floor, formulas are cut.
    const double available = area.height() - kGap * (rows - 1);
    double scale = kMaxTextScale;
    QList<double> heights;
    for (;; scale -= kTextScaleStep) {
        const QFont font = scaledFont(f.annotation, std::max(scale, kMinTextScale));
        heights.clear();
        double total = 0;
        for (const Axis& a : m_axes) {
            const double h = std::max(leftBlock, wrappedHeight(a.formula, font, textWidth));
            heights << h;
            total += h;
        }
        if (total <= available || scale <= kMinTextScale)
            break;
    }
    l.textScale = std::max(scale, kMinTextScale);
    double total = 0;
    for (double h : heights)
        total += h;
    if (total > available) {
        // Even at the floor the texts do not fit: every row gets its share, texts are cut.
        l.elided = true;
        heights.fill(std::max(leftBlock, available / rows));
    } else {
        // Space to spare goes to the rows evenly, so the chart fills its canvas.
        for (double& h : heights)
            h += (available - total) / rows;
    }

    double y = area.top();
    for (int i = 0; i < rows; ++i) {
        const double h = heights[i];
        l.labels << QRectF(area.left(), y, left, labelHeight);
        const double barTop = y + labelHeight + kLabelBarGap;
        const double barHeight = valueFm.height() * kBarLines;
        l.bars << QRectF(area.left(), barTop, left, barHeight);
        l.values << QRectF(area.left(), barTop, left, barHeight);
        l.formulas << QRectF(textX, y, textWidth, h);
        y += h + kGap;
    }
    return l;
}

QString PlanCommunicationPanel::cacheKey() const
{
    const ChartFonts f = chartFonts();
    QStringList parts = {m_title,
                         m_subtitle,
                         f.title.toString(),
                         f.annotation.toString(),
                         f.legend.toString(),
                         f.axisLabels.toString()};
    for (const Axis& a : m_axes)
        parts << a.name << a.formula;
    return parts.join(QChar(0x1f));
}

const PlanCommunicationPanel::Cache& PlanCommunicationPanel::cacheFor(const QSizeF& size) const
{
    const QString key = cacheKey();
    // Two sizes are kept: the panel shrinks and grows back whenever the line for refused input
    // under the charts comes and goes.
    for (Cache& c : m_cache)
        if (c.size == size && c.key == key) {
            std::swap(c, m_cache[0]);
            return m_cache[0];
        }
    std::swap(m_cache[0], m_cache[1]);
    Cache& cache = m_cache[0];
    const ChartFonts f = chartFonts();
    cache.size = size;
    cache.key = key;
    cache.layout = layoutFor(QRectF(QPointF(0, 0), size));
    const Layout& l = cache.layout;
    const auto prepared = [](const QString& text, const QFont& font, double width,
                             Qt::Alignment align) {
        QStaticText st(text);
        st.setTextFormat(Qt::PlainText);
        st.setTextWidth(width);
        QTextOption option(align);
        option.setWrapMode(QTextOption::WordWrap);
        st.setTextOption(option);
        st.prepare(QTransform(), font);
        return st;
    };
    cache.subtitle = prepared(m_subtitle, f.annotation, l.subtitle.width(), Qt::AlignHCenter);
    cache.formulas.clear();
    const QFont formulaFont = scaledFont(f.annotation, l.textScale);
    for (int i = 0; i < l.formulas.size() && i < m_axes.size(); ++i) {
        const QRectF box = l.formulas[i];
        const QString text = l.elided
            ? elidedToHeight(m_axes[i].formula, formulaFont, box.width(), box.height())
            : m_axes[i].formula;
        cache.formulas << prepared(text, formulaFont, box.width(), Qt::AlignLeft);
    }
    return cache;
}

void PlanCommunicationPanel::render(QPainter& painter, const QRectF& target)
{
    const ChartFonts f = chartFonts();
    const Cache& cache = cacheFor(target.size());
    const Layout& l = cache.layout;
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    painter.fillRect(target, chartBackgroundColor());
    // The layout is made at the origin, so one cache serves the screen and an export alike.
    painter.translate(target.topLeft());
    painter.setPen(chartTextColor());
    painter.setFont(f.title);
    painter.drawText(l.title, Qt::AlignCenter | Qt::TextWordWrap, m_title);
    painter.setFont(f.annotation);
    painter.drawStaticText(l.subtitle.topLeft(), cache.subtitle);

    Scale scale;
    const QFontMetricsF valueFm(f.axisLabels);
    for (const Axis& a : m_axes) {
        scale.largest = std::max(scale.largest, a.bytes);
        scale.widestValue =
            std::max(scale.widestValue, valueFm.horizontalAdvance(valueText(a.bytes)));
    }
    for (int i = 0; i < l.labels.size() && i < m_axes.size(); ++i) {
        drawRow(painter, cache, i, scale);
        if (i + 1 < l.labels.size()) {
            painter.setPen(QPen(chartGridColor(), 1));
            const double y = l.formulas[i].bottom() + kGap / 2;
            painter.drawLine(QPointF(kRowInset, y), QPointF(target.width() - kRowInset, y));
        }
    }
    painter.restore();
}

void PlanCommunicationPanel::drawRow(QPainter& painter, const Cache& cache, int i,
                                     const Scale& scale) const
{
    const ChartFonts f = chartFonts();
    const Layout& l = cache.layout;
    const Axis& a = m_axes[i];
    // The axis's name in bold, its size today beside it.
    painter.setPen(chartTextColor());
    QFont bold = f.legend;
    bold.setBold(true);
    painter.setFont(bold);
    const QFontMetricsF boldFm(bold);
    const QRectF label = l.labels[i];
    const QString detail = "(" + a.detail + ")";
    if (l.detailBelow) {
        const QRectF top(label.topLeft(), QSizeF(label.width(), label.height() / 2));
        painter.drawText(top, Qt::AlignLeft | Qt::AlignVCenter, a.name);
        painter.setFont(f.legend);
        painter.drawText(top.translated(0, top.height()), Qt::AlignLeft | Qt::AlignVCenter, detail);
    } else {
        painter.drawText(label, Qt::AlignLeft | Qt::AlignVCenter, a.name);
        painter.setFont(f.legend);
        painter.drawText(label.adjusted(boldFm.horizontalAdvance(a.name + "  "), 0, 0, 0),
                         Qt::AlignLeft | Qt::AlignVCenter, detail);
    }

    // The bar: its length against the busiest axis, the figure just past its end.
    const QRectF track = l.bars[i];
    const double room = std::max(0.0, track.width() - scale.widestValue - kValueRoom);
    const double length = scale.largest > 0 ? room * a.bytes / scale.largest : 0;
    const QRectF bar(track.left(), track.top(), std::max(length, a.bytes > 0 ? kMinBarLength : 0.0),
                     track.height());
    painter.setPen(Qt::NoPen);
    painter.setBrush(a.color);
    painter.drawRect(bar);
    painter.setPen(QPen(chartGridColor(), 1.5));
    painter.drawLine(QPointF(track.left(), track.top() - kZeroLineOverhang),
                     QPointF(track.left(), track.bottom() + kZeroLineOverhang));
    painter.setPen(chartTextColor());
    painter.setFont(f.axisLabels);
    painter.drawText(QRectF(bar.right() + kValueGap, track.top(), scale.widestValue + kValuePadding,
                            track.height()),
                     Qt::AlignLeft | Qt::AlignVCenter, valueText(a.bytes));

    // The formula beside it, as large as the space allows.
    painter.setFont(scaledFont(f.annotation, l.textScale));
    if (i < cache.formulas.size())
        painter.drawStaticText(l.formulas[i].topLeft(), cache.formulas[i]);
}

void PlanCommunicationPanel::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    render(painter, rect());
}

bool PlanCommunicationPanel::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        // The whole formula of the row under the pointer, for when it was cut short.
        auto* help = static_cast<QHelpEvent*>(event);
        const Layout l = layoutFor(rect());
        for (int i = 0; i < l.formulas.size() && i < m_axes.size(); ++i) {
            const QRectF row =
                l.labels[i].united(l.formulas[i]).united(l.bars[i]).adjusted(0, 0, 0, kGap / 2);
            if (row.contains(help->pos())) {
                const Axis& a = m_axes[i];
                QToolTip::showText(help->globalPos(),
                                   QString("<b>%1 (%2): %3</b><br>%4")
                                       .arg(a.name.toHtmlEscaped(), a.detail.toHtmlEscaped(),
                                            valueText(a.bytes), a.formula.toHtmlEscaped()),
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
