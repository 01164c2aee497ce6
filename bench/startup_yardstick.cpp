// The yardstick for bench_startup: the plainest Qt Charts window, one line chart with its axes,
// as large as ScaleLab's window first opens. It prints "painted" once the window has painted for
// the first time, as ScaleLab does when SCALELAB_REPORT_FIRST_PAINT is set, and waits to be
// stopped.

#include "firstpaint.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QScreen>
#include <cmath>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    scalelab::ui::FirstPaintAnnouncer firstPaint;
    app.installEventFilter(&firstPaint);
    auto* series = new QLineSeries;
    for (int i = 0; i <= 200; ++i)
        series->append(i, std::sin(i / 20.0));
    auto* chart = new QChart;
    chart->addSeries(series);
    chart->createDefaultAxes();
    chart->setTitle("Yardstick");
    QChartView view(chart);
    view.setRenderHint(QPainter::Antialiasing);
    view.resize(QSize(1800, 1000).boundedTo(view.screen()->availableSize() * 0.95)); // as ScaleLab
    view.show();
    return QApplication::exec();
}
