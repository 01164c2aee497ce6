// Slider-to-redraw latency of the real tab widgets: for every parameter control of every tab,
// change the value, let the tab recompute, repaint its charts, and time it. Prints median and
// 99th percentile per tab and parameter. A benchmark, not a test: run it on a quiet machine.
//
//   cmake --build --preset release --target bench_redraw
//   QT_QPA_PLATFORM=offscreen ./build/release/bench/bench_redraw [--runs N] [--tab NAME]

#include "common/chartpanel.h"
#include "common/parametercontrol.h"
#include "tabs/tab.h"
#include "tabs/tabs.h"

#include <QAbstractScrollArea>
#include <QApplication>
#include <QElapsedTimer>
#include <QSlider>
#include <QTest>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

using namespace scalelab::ui;

namespace {

double percentile(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

/// One slider move and everything it causes, until the charts are on screen again.
double timeOneStep(Tab& tab, QSlider& slider, int position)
{
    QElapsedTimer timer;
    timer.start();
    slider.setValue(position);
    // The tab recomputes on a zero-delay timer; Qt Charts then updates its items.
    while (tab.refreshPending())
        QCoreApplication::processEvents();
    QCoreApplication::processEvents();
    for (ChartPanel* chart : tab.charts()) {
        chart->repaint();
        for (auto* area : chart->findChildren<QAbstractScrollArea*>())
            area->viewport()->repaint();
    }
    return static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

/// The nearest slider position whose value differs from the current one (some positions of a
/// log slider share a value; moving between them would redraw nothing and flatter the figures).
int neighbourPosition(const ParameterControl& control)
{
    const QSlider* slider = control.slider();
    const int here = slider->value();
    for (int d = 1; d <= slider->maximum(); ++d)
        for (int p : {here + d, here - d})
            if (p >= slider->minimum() && p <= slider->maximum()
                && control.valueAtPosition(p) != control.value())
                return p;
    return here;
}

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    int runs = 300;
    QString only;
    const QStringList args = QCoreApplication::arguments();
    for (qsizetype i = 1; i + 1 < args.size(); ++i) {
        if (args[i] == "--runs")
            runs = std::max(10, args[i + 1].toInt());
        if (args[i] == "--tab")
            only = args[i + 1];
    }

    std::printf("%-18s %-30s %8s %10s %10s %10s\n", "tab", "parameter", "runs", "median ms",
                "p99 ms", "max ms");
    bool allWithinFrame = true;
    for (Tab* raw : createTabs()) {
        std::unique_ptr<Tab> tab(raw);
        if (!only.isEmpty() && tab->name() != only)
            continue;
        tab->resize(1600, 950);
        tab->show();
        if (!QTest::qWaitForWindowExposed(tab.get()))
            std::fprintf(stderr, "warning: %s was not exposed\n", qPrintable(tab->name()));
        for (ParameterControl* control : tab->findChildren<ParameterControl*>()) {
            if (!control->isEnabled() || !control->isVisibleTo(tab.get()))
                continue;
            // Move back and forth between two neighbouring slider positions of different values.
            QSlider* slider = control->slider();
            const int a = slider->value();
            const int b = neighbourPosition(*control);
            if (a == b)
                continue;
            std::vector<double> ms;
            for (int i = 0; i < 10; ++i) // warm-up
                timeOneStep(*tab, *slider, i % 2 ? a : b);
            for (int i = 0; i < runs; ++i)
                ms.push_back(timeOneStep(*tab, *slider, i % 2 ? a : b));
            const double p99 = percentile(ms, 0.99);
            allWithinFrame = allWithinFrame && p99 < 16.0;
            std::printf("%-18s %-30s %8d %10.2f %10.2f %10.2f\n", qPrintable(tab->name()),
                        qPrintable(control->spec().key), runs, percentile(ms, 0.5), p99,
                        *std::max_element(ms.begin(), ms.end()));
            std::fflush(stdout);
        }
    }
    std::printf("%s\n",
                allWithinFrame ? "every p99 is under one 60 Hz frame (16 ms)"
                               : "some p99 is over one 60 Hz frame (16 ms)");
    return 0;
}
