#include "chartstyle.h"

#include <QAbstractAxis>
#include <QApplication>
#include <QChart>
#include <QLegend>
#include <QScatterSeries>
#include <QValueAxis>
#include <QXYSeries>
#include <cmath>

namespace scalelab::ui {

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

void restyleChart(QChart* chart)
{
    const ChartFonts f = chartFonts();
    chart->setTitleFont(f.title);
    chart->setTitleBrush(chartTextColor());
    chart->setBackgroundBrush(chartBackgroundColor());
    chart->setPlotAreaBackgroundVisible(false);
    chart->legend()->setFont(f.legend);
    chart->legend()->setLabelColor(chartTextColor());
    for (QAbstractAxis* axis : chart->axes()) {
        axis->setTitleFont(f.axisTitle);
        axis->setLabelsFont(f.axisLabels);
        axis->setTitleBrush(chartTextColor());
        axis->setLabelsColor(chartTextColor());
        axis->setGridLineColor(chartGridColor());
    }
    for (QAbstractSeries* series : chart->series()) {
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
    ChartFonts f{base, base, base, base, base};
    f.title.setPointSizeF(pt * 1.5);
    f.title.setBold(true);
    f.axisTitle.setPointSizeF(pt * 1.2);
    f.axisLabels.setPointSizeF(pt * 1.1);
    f.legend.setPointSizeF(pt * 1.15);
    f.annotation.setPointSizeF(pt * 1.1);
    return f;
}

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
}

void styleAxis(QAbstractAxis* axis, const QString& title)
{
    const ChartFonts f = chartFonts();
    axis->setTitleText(title);
    axis->setTitleFont(f.axisTitle);
    axis->setTitleBrush(chartTextColor());
    axis->setLabelsFont(f.axisLabels);
    axis->setLabelsColor(chartTextColor());
    axis->setGridLineColor(chartGridColor());
    axis->setLinePenColor(QColor(90, 90, 90));
}

void setNiceRange(QValueAxis* axis, double min, double max, bool whole)
{
    if (!(max > min))
        max = min + 1;
    const double span = max - min;
    // The smallest round step that needs at most eight intervals.
    const double power = std::pow(10.0, std::floor(std::log10(span / 8)));
    double step = 10 * power;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (span / (m * power) <= 8.0 + 1e-9) {
            step = m * power;
            break;
        }
    if (whole)
        step = std::max(1.0, std::round(step));
    const double top = min + std::ceil(span / step - 1e-9) * step;
    // Change range and step in the order that never asks for a flood of ticks: a small step
    // over the old, wide range would lay out tens of thousands of them.
    int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
    if (std::abs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals)))
        > 1e-6)
        ++decimals; // 2.5, 0.25, ...
    const QString format = QString("%.%1f").arg(decimals);
    // An axis that does not change must not be touched: Qt Charts lays the whole chart out
    // again (every label measured as rich text) on a new label format, even an equal one.
    if (axis->tickType() == QValueAxis::TicksDynamic && axis->tickAnchor() == min
        && axis->tickInterval() == step && axis->min() == min && axis->max() == top
        && axis->labelFormat() == format)
        return;
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(min);
    if (step >= axis->tickInterval()) {
        axis->setTickInterval(step);
        axis->setRange(min, top);
    } else {
        axis->setRange(min, top);
        axis->setTickInterval(step);
    }
    if (axis->labelFormat() != format)
        axis->setLabelFormat(format);
}

} // namespace scalelab::ui
