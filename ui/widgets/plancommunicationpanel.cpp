#include "plancommunicationpanel.h"

#include "chartstyle.h"
#include "format.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QPainter>
#include <QTextLayout>
#include <QToolTip>
#include <algorithm>
#include <cmath>

namespace scalelab::ui {

namespace {

constexpr double kMinTextScale = 0.62; // below this the formulas stop reading on a projector
constexpr double kMaxTextScale = 1.3; // a roomy target gets larger type, not empty space
constexpr double kGap = 10;

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
    setMinimumSize(260, 220);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void PlanCommunicationPanel::setTitle(const QString& title)
{
    m_title = title;
    update();
}

void PlanCommunicationPanel::setSubtitle(const QString& subtitle)
{
    m_subtitle = subtitle;
    update();
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
    l.title = QRectF(t.left() + 8, t.top() + 6, t.width() - 16, titleFm.height() + 4);
    l.subtitle = QRectF(t.left() + 8, l.title.bottom() + 2, t.width() - 16,
                        wrappedHeight(m_subtitle, f.annotation, t.width() - 16));
    const QRectF area(QPointF(t.left() + 12, l.subtitle.bottom() + kGap),
                      QPointF(t.right() - 12, t.bottom() - 8));
    const int rows = static_cast<int>(m_axes.size());
    if (rows == 0 || area.height() <= 0)
        return l;

    // Left: name and bar; right: the formula. The bar column takes what its labels need.
    // Sized for the longest name and a long detail, not today's: a detail that changes with
    // every edit ("d = 8") then never moves the formulas, and the laid-out text is reused.
    double labelWidth = 0;
    for (const Axis& a : m_axes)
        labelWidth =
            std::max(labelWidth, labelFm.horizontalAdvance(a.name + "  (d = 88,888, ZeRO-3)"));
    const double left = std::clamp(labelWidth + 16, area.width() * 0.34, area.width() * 0.46);
    const double textX = area.left() + left + 18;
    const double textWidth = area.right() - textX;
    const double leftBlock = labelFm.height() + 4 + valueFm.height() * 1.5;

    // The largest text scale at which every row fits; below the floor, formulas are cut.
    const double available = area.height() - kGap * (rows - 1);
    double scale = kMaxTextScale;
    QList<double> heights;
    for (;; scale -= 0.04) {
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
        l.labels << QRectF(area.left(), y, left, labelFm.height());
        const double barTop = y + labelFm.height() + 4;
        const double barHeight = valueFm.height() * 1.3;
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
    painter.drawText(l.title, Qt::AlignCenter, m_title);
    painter.setFont(f.annotation);
    painter.drawStaticText(l.subtitle.topLeft(), cache.subtitle);

    double largest = 0;
    for (const Axis& a : m_axes)
        largest = std::max(largest, a.bytes);
    const QFontMetricsF valueFm(f.axisLabels);
    double widestValue = 0;
    for (const Axis& a : m_axes)
        widestValue = std::max(widestValue, valueFm.horizontalAdvance(valueText(a.bytes)));
    const QFont formulaFont = scaledFont(f.annotation, l.textScale);

    for (int i = 0; i < l.labels.size() && i < m_axes.size(); ++i) {
        const Axis& a = m_axes[i];
        painter.setPen(chartTextColor());
        painter.setFont(f.legend);
        QFont bold = f.legend;
        bold.setBold(true);
        painter.setFont(bold);
        const QFontMetricsF boldFm(bold);
        painter.drawText(l.labels[i], Qt::AlignLeft | Qt::AlignVCenter, a.name);
        painter.setFont(f.legend);
        painter.drawText(l.labels[i].adjusted(boldFm.horizontalAdvance(a.name + "  "), 0, 0, 0),
                         Qt::AlignLeft | Qt::AlignVCenter, "(" + a.detail + ")");

        // The bar: its length against the busiest axis, the figure just past its end.
        const QRectF track = l.bars[i];
        const double room = std::max(0.0, track.width() - widestValue - 10);
        const double length = largest > 0 ? room * a.bytes / largest : 0;
        const QRectF bar(track.left(), track.top(), std::max(length, a.bytes > 0 ? 2.0 : 0.0),
                         track.height());
        painter.setPen(Qt::NoPen);
        painter.setBrush(a.color);
        painter.drawRect(bar);
        painter.setPen(QPen(chartGridColor(), 1.5));
        painter.drawLine(QPointF(track.left(), track.top() - 2),
                         QPointF(track.left(), track.bottom() + 2));
        painter.setPen(chartTextColor());
        painter.setFont(f.axisLabels);
        painter.drawText(QRectF(bar.right() + 6, track.top(), widestValue + 8, track.height()),
                         Qt::AlignLeft | Qt::AlignVCenter, valueText(a.bytes));

        // The formula beside it, as large as the space allows.
        painter.setFont(formulaFont);
        const QRectF box = l.formulas[i];
        if (i < cache.formulas.size())
            painter.drawStaticText(box.topLeft(), cache.formulas[i]);
        if (i + 1 < l.labels.size()) {
            painter.setPen(QPen(chartGridColor(), 1));
            const double y = box.bottom() + kGap / 2;
            painter.drawLine(QPointF(12, y), QPointF(target.width() - 12, y));
        }
    }
    painter.restore();
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
