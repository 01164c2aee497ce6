// Slider-to-redraw latency of the real tab widgets: for every parameter control of every tab,
// change the value, let the tab recompute, repaint its charts, and time it. Prints median and
// 99th percentile per tab and parameter. A benchmark, not a test: run it on a quiet machine.
//
//   cmake --build --preset release --target bench_redraw
//   QT_QPA_PLATFORM=offscreen ./build/release/bench/bench_redraw [--runs N] [--tab NAME]
//                                                               [--scenario FILE]
//                                                               [--no-explanations]
//                                                               [--spans]
//                                                               [--during-search]
//                                                               [--control KEY]
//                                                               [--drag]
//                                                               [--pause MS]
//
// Each line also gives the longest GUI-thread stall of its steps: the longest time the GUI thread
// spent in one piece of work (the slider's move, or one event it handled) before it went back to
// the event loop, where it could have drawn a frame or taken the next mouse move.
//
// With --spans each line also splits the median step into its three parts: the edit itself
// (slider, document, undo step, controls shown again), the tab's refresh (computation and new
// chart data) and what Qt does after (layout and paint), names the widgets painted, and gives
// the mean time a step spends painting and laying out each widget (with the named widget it
// belongs to, so the charts of a tab are told apart).
//
// Each step is a move of the slider as its user makes one (an action of the slider, as a key
// press or a click on its groove makes), the next one as soon as the window has painted the
// last, as a held key's auto-repeat does. With --drag each slider is held down through its
// steps, as a mouse drags it. A tab may show a quicker preview of such moves (the FP8 tab does
// for a large matrix) and the exact figures once the slider rests or is let go: each line is
// then followed by the time from the last step (or from letting go) to the exact figures'
// repaint (median of 5).
//
// With --pause each step comes MS milliseconds after the last one was painted (the window's
// event loop runs meanwhile), as separate key presses do: with --pause 70 the FP8 tab's exact
// comparison of a large matrix is under way at each step, which must stop it and not wait.
// The spans then count the steps alone, not what the window did between them.
//
// With --scenario the tabs start from that scenario instead of the defaults, for the cases an
// issue names (bench/scenarios/ holds them; for example the 32-stage, 256-microbatch
// interleaved pipeline).
//
// With --during-search (the plan tab) every step happens while the tab's layout search runs on
// its worker thread: before each step a change of plan.train_tokens (which the search covers,
// and which no slider of the layout moves) starts a new search, and the step is timed until
// the charts of the plan itself are repainted, not until the search ends. The line says in how
// many steps the search was still running when the repaint was done. With
// bench/scenarios/plan-1t-4096.json that is the largest search.

#include "appstyle.h"
#include "backgroundrunner.h"
#include "parametercontrol.h"
#include "scenariodocument.h"
#include "scenariojson.h"
#include "tab.h"
#include "tabs.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QGraphicsObject>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QLabel>
#include <QMap>
#include <QMetaEnum>
#include <QSlider>
#include <QTest>
#include <QThread>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

using namespace scalelab::ui;

namespace {

double percentile(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

QString ownerName(QObject* object);

/// Counts the events Qt delivers, so a step can run the event loop until the cascade a slider
/// move sets off (recompute, scene changes, layout, update requests, paint) has died down.
class EventCounter : public QObject {
public:
    long long count = 0;
    long long paints = 0; ///< widgets painted: a step that paints nothing measured nothing
    QMap<QString, long long> painted; ///< with --spans: paints by widget class and owner

    bool byClass = false;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        ++count;
        if (event->type() == QEvent::Paint) {
            ++paints;
            if (byClass)
                ++painted[QString::fromLatin1(watched->metaObject()->className()) + "/"
                          + ownerName(watched)];
        }
        return false;
    }
};

/// The name of the nearest named widget holding `object` ("pipeline-memory" for a chart's
/// viewport or the chart itself), to tell apart the charts a tab paints.
QString ownerName(QObject* object)
{
    if (auto* item = qobject_cast<QGraphicsObject*>(object))
        object = item->scene() && !item->scene()->views().isEmpty() ? item->scene()->views().first()
                                                                    : nullptr;
    for (; object; object = object->parent())
        if (!object->objectName().isEmpty() && !object->objectName().startsWith("qt_"))
            return object->objectName();
    return {};
}

/// Times the events the GUI thread handles. Every event the event loop hands out (not those a
/// handler sends on its way) is a stretch of work the loop waits for: the longest is the
/// stall. With --spans, also the time each widget class spends in its paint events and in its
/// layout requests (where Qt Charts lays a chart out again), summed over the steps. The event
/// filter sees an event before its handler, so the handler is timed here, around the delivery.
class TimingApplication : public QApplication {
public:
    using QApplication::QApplication;
    bool timing = false;
    QMap<QString, double> ms; ///< "paint QWidget (pipeline-memory)", "layout QChart (...)"...
    double longestStall = 0; ///< ms, the longest event the event loop handed out
    QString longestEvent; ///< what it was: "MetaCall to BackgroundRunner (plan)"

    bool notify(QObject* receiver, QEvent* event) override
    {
        if (QThread::currentThread() != thread()) // a worker's events block no frame
            return QApplication::notify(receiver, event);
        // Read before delivery: the receiver may be gone after it.
        const QEvent::Type type = event->type();
        const char* className = receiver->metaObject()->className();
        const QString owner = m_depth == 0 ? ownerName(receiver) : QString();
        QElapsedTimer timer;
        timer.start();
        ++m_depth;
        const bool handled = spanned(receiver, event);
        --m_depth;
        const double elapsed = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        if (m_depth == 0 && elapsed > longestStall) {
            longestStall = elapsed;
            // A queued call (a worker's result, a chart scene's deferred update) is a MetaCall.
            longestEvent =
                QString("%1 to %2 (%3)")
                    .arg(QString::fromLatin1(QMetaEnum::fromType<QEvent::Type>().valueToKey(type)),
                         QString::fromLatin1(className), owner);
        }
        return handled;
    }

private:
    int m_depth = 0; ///< events being handled, one inside another

    bool spanned(QObject* receiver, QEvent* event)
    {
        const QEvent::Type type = event->type();
        if (!timing || (type != QEvent::Paint && type != QEvent::LayoutRequest))
            return QApplication::notify(receiver, event);
        QElapsedTimer timer;
        timer.start();
        const bool handled = QApplication::notify(receiver, event);
        ms[QString("%1 %2 (%3)")
               .arg(type == QEvent::Paint ? "paint" : "layout",
                    QString::fromLatin1(receiver->metaObject()->className()),
                    ownerName(receiver))] += static_cast<double>(timer.nsecsElapsed()) / 1e6;
        return handled;
    }
};

/// Where one step's time went, in milliseconds.
struct Step {
    double edit = 0; ///< the slider's move up to the document's change shown in the controls
    double refresh = 0; ///< the tab's recomputation and new chart data
    double total = 0; ///< until the last paint
};

/// Runs the event loop pass after pass while passes still deliver events (layout, update
/// requests, paint), and returns when the last of them was done, in ms on `timer`.
double untilPainted(const QElapsedTimer& timer, EventCounter& events)
{
    double lastActive = static_cast<double>(timer.nsecsElapsed());
    for (int pass = 0; pass < 50; ++pass) {
        const long long before = events.count;
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
        if (events.count == before)
            break;
        lastActive = static_cast<double>(timer.nsecsElapsed());
    }
    return lastActive / 1e6;
}

/// One slider move and everything it causes, until the window has painted its last change:
/// what a user waits for. The event loop runs pass after pass while passes still deliver
/// events; the window paints exactly what is dirty, once, as it would on screen.
Step timeOneStep(Tab& tab, QSlider& slider, int position, EventCounter& events,
                 bool duringSearch = false)
{
    QElapsedTimer timer;
    timer.start();
    Step step;
    slider.setSliderPosition(position); // an action of the slider, as a key press makes
    step.edit = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    // The tab recomputes on a zero-delay timer (or on its worker thread). The loop sleeps until
    // an event comes, as the window's own loop does: spinning would take a core from the worker.
    while (duringSearch ? tab.chartsPending() : tab.refreshPending())
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    step.refresh = static_cast<double>(timer.nsecsElapsed()) / 1e6 - step.edit;
    step.total = untilPainted(timer, events);
    return step;
}

/// After a step that left a preview: lets go of the slider if it is held (--drag), or lets it
/// rest, and times it until the window has painted the exact figures, in milliseconds.
double timeUntilExact(Tab& tab, QSlider& slider, EventCounter& events)
{
    QElapsedTimer timer;
    timer.start();
    slider.setSliderDown(false);
    while (tab.refreshPending() || tab.refinementPending())
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    return untilPainted(timer, events);
}

/// Whether the tab shows the current inputs, rather than a message refusing them.
bool acceptsInputs(Tab& tab)
{
    tab.waitForIdle();
    const auto* message = tab.findChild<QLabel*>("message");
    return !message || message->text().isEmpty();
}

/// Where the steps start: the slider's own position, unless that position stands for another
/// value than the tab's (a rounded one: DeepSeek-V3's global batch of 15,360 sits at the
/// position of 15,300) which the tab refuses; stepping back to it then timed a refusal, the
/// message line shown and hidden, every other step. Then the nearest position whose value is
/// accepted (12,800 there), the slider left there; else none (the parameter is not timed), the
/// tab's exact value given back.
std::optional<int> startPosition(Tab& tab, ParameterControl& control)
{
    QSlider* slider = control.slider();
    const int here = slider->value();
    const double exact = control.value();
    if (control.valueAtPosition(here) == exact)
        return here;
    for (int d = 0; d <= slider->maximum() - slider->minimum(); ++d)
        for (int p : {here - d, here + d}) {
            if (p < slider->minimum() || p > slider->maximum())
                continue;
            control.setValue(control.valueAtPosition(p));
            if (acceptsInputs(tab))
                return p;
            if (d == 0)
                break; // here once, not twice
        }
    control.setValue(exact);
    tab.waitForIdle();
    return std::nullopt;
}

/// The nearest slider position whose value differs from the current one and which the tab
/// accepts. Some positions of a log slider share a value (moving between them would redraw
/// nothing), and some values are refused in some scenarios (with the interleaved schedule the
/// microbatches must be a multiple of the stages): stepping there would time the message line,
/// not the charts.
int neighbourPosition(Tab& tab, ParameterControl& control)
{
    QSlider* slider = control.slider();
    const int here = slider->value();
    const double value = control.value();
    int found = here;
    for (int d = 1; d <= slider->maximum() && found == here; ++d)
        for (int p : {here + d, here - d}) {
            if (p < slider->minimum() || p > slider->maximum()
                || control.valueAtPosition(p) == value)
                continue;
            slider->setValue(p);
            const bool accepted = acceptsInputs(tab);
            control.setValue(value); // the value the steps start from, exactly
            tab.waitForIdle();
            if (accepted) {
                found = p;
                break;
            }
        }
    return found;
}

} // namespace

int main(int argc, char** argv)
{
    scalelab::ui::setUpProcessMemory(); // as main() does: measure what the window does
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    TimingApplication app(argc, argv);
    scalelab::ui::installAppStyle(); // the window's style, as main() sets it
    int runs = 300;
    QString only;
    QString onlyControl; ///< --control: one parameter (its key, "plan.tensor_parallel")
    scalelab::core::Scenario scenario;
    // Projector mode hides the explanations: the tabs then redraw without their text.
    const bool explanations = !QCoreApplication::arguments().contains("--no-explanations");
    const bool spans = QCoreApplication::arguments().contains("--spans");
    const bool duringSearch = QCoreApplication::arguments().contains("--during-search");
    const bool drag = QCoreApplication::arguments().contains("--drag");
    int pauseMs = 0;
    const QStringList args = QCoreApplication::arguments();
    for (qsizetype i = 1; i + 1 < args.size(); ++i) {
        if (args[i] == "--runs")
            runs = std::max(10, args[i + 1].toInt());
        if (args[i] == "--tab")
            only = args[i + 1];
        if (args[i] == "--control")
            onlyControl = args[i + 1];
        if (args[i] == "--pause")
            pauseMs = std::max(0, args[i + 1].toInt());
        if (args[i] == "--scenario") {
            try {
                scenario = scalelab::document::loadScenarioFile(args[i + 1]);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "%s: %s\n", qPrintable(args[i + 1]), e.what());
                return 2;
            }
        }
    }

    if (duringSearch)
        only = "plan"; // the one tab with a search
    std::printf("%-16s %-28s %-20s %6s %10s %10s %10s %10s %7s\n", "tab", "parameter", "values",
                "runs", "median ms", "p99 ms", "max ms", "stall ms", "paints");
    bool allWithinFrame = true;
    struct {
        double ms = 0;
        QString where;
    } worstStall;
    EventCounter events;
    events.byClass = spans;
    app.timing = spans;
    app.installEventFilter(&events);
    // One document for every tab, as in the window. Each tab draws itself first when its turn
    // comes, as the window's tabs do when they are shown: drawn at once, the later tabs'
    // computations (the FP8 tab's training runs, the plan's search) ran on the two cores
    // while the first tabs were timed.
    scalelab::document::ScenarioDocument document(scenario);
    for (Tab* raw : createTabs(&document, nullptr, scalelab::ui::FirstDrawing::WhenShown)) {
        std::unique_ptr<Tab> tab(raw);
        if (!only.isEmpty() && tab->name() != only)
            continue;
        tab->waitForIdle();
        tab->setExplanationVisible(explanations);
        tab->resize(1600, 950);
        tab->show();
        if (!QTest::qWaitForWindowExposed(tab.get()))
            std::fprintf(stderr, "warning: %s was not exposed\n", qPrintable(tab->name()));
        for (ParameterControl* control : tab->findChildren<ParameterControl*>()) {
            if (!control->isEnabled() || !control->isVisibleTo(tab.get())
                || (!onlyControl.isEmpty() && control->spec().key != onlyControl))
                continue;
            // Move back and forth between two neighbouring slider positions of different values.
            QSlider* slider = control->slider();
            const std::optional<int> start = startPosition(*tab, *control);
            if (!start)
                continue;
            const int a = *start;
            const int b = neighbourPosition(*tab, *control);
            if (a == b)
                continue;
            const QString values = QString("%1 <-> %2")
                                       .arg(control->valueAtPosition(a))
                                       .arg(control->valueAtPosition(b));
            std::vector<double> ms, edit, refresh, rest;
            const long long paintsBefore = events.paints;
            if (drag)
                slider->setSliderDown(true);
            for (int i = 0; i < 10; ++i) // warm-up
                timeOneStep(*tab, *slider, i % 2 ? a : b, events);
            events.painted.clear();
            app.ms.clear();
            app.longestStall = 0;
            app.longestEvent.clear();
            int overlapped = 0; // steps repainted while the search still ran
            for (int i = 0; i < runs; ++i) {
                if (duringSearch) {
                    // A new search starts (the tokens alternate), and the plan's own charts
                    // have settled before the step: only the step is timed.
                    document.setValue("plan.train_tokens", i % 2 ? 1e12 : 1.5e12);
                    while (tab->chartsPending())
                        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
                }
                if (pauseMs > 0) {
                    // What the window does while it waits (the exact figures of the last step)
                    // is not the step's: the spans name what the step itself cost.
                    const auto spansBefore = app.ms;
                    const auto paintedBefore = events.painted;
                    QTest::qWait(pauseMs);
                    app.ms = spansBefore;
                    events.painted = paintedBefore;
                }
                const Step step = timeOneStep(*tab, *slider, i % 2 ? a : b, events, duringSearch);
                overlapped += duringSearch && tab->refreshPending();
                ms.push_back(step.total);
                edit.push_back(step.edit);
                refresh.push_back(step.refresh);
                rest.push_back(step.total - step.edit - step.refresh);
            }
            // A preview on show: how long until the exact figures follow it.
            std::vector<double> untilExact;
            if (tab->refinementPending()) {
                untilExact.push_back(timeUntilExact(*tab, *slider, events));
                for (int i = 1; i < 5; ++i) {
                    slider->setSliderDown(drag);
                    timeOneStep(*tab, *slider, i % 2 ? a : b, events);
                    untilExact.push_back(timeUntilExact(*tab, *slider, events));
                }
            }
            slider->setSliderDown(false);
            const double p99 = percentile(ms, 0.99);
            allWithinFrame = allWithinFrame && p99 < 16.0;
            // The slider's move runs outside any event the loop handed out: a stall of its own.
            const double stall =
                std::max(app.longestStall, *std::max_element(edit.begin(), edit.end()));
            if (stall > worstStall.ms)
                worstStall = {stall,
                              tab->name() + " " + control->spec().key
                                  + (stall == app.longestStall && !app.longestEvent.isEmpty()
                                         ? ": " + app.longestEvent
                                         : QString(": the slider's own move"))};
            // Widgets painted per step, on average: the charts and whatever else changed.
            const double paints = static_cast<double>(events.paints - paintsBefore) / (runs + 10);
            std::printf("%-16s %-28s %-20s %6d %10.2f %10.2f %10.2f %10.2f %7.1f\n",
                        qPrintable(tab->name()), qPrintable(control->spec().key),
                        qPrintable(values), runs, percentile(ms, 0.5), p99,
                        *std::max_element(ms.begin(), ms.end()), stall, paints);
            if (spans) {
                QStringList painted;
                for (auto it = events.painted.cbegin(); it != events.painted.cend(); ++it)
                    painted << QString("%1 %2").arg(it.key()).arg(
                        static_cast<double>(it.value()) / runs, 0, 'f', 1);
                std::printf("    median edit %.2f, refresh %.2f, layout and paint %.2f ms; "
                            "painted: %s\n",
                            percentile(edit, 0.5), percentile(refresh, 0.5), percentile(rest, 0.5),
                            qPrintable(painted.join(", ")));
                QStringList costs; // the costliest first
                QList<std::pair<double, QString>> byCost;
                for (auto it = app.ms.cbegin(); it != app.ms.cend(); ++it)
                    if (it.value() / runs >= 0.05)
                        byCost.append({it.value() / runs, it.key()});
                std::sort(byCost.rbegin(), byCost.rend());
                for (const auto& [cost, what] : byCost)
                    costs << QString("%1 %2").arg(what).arg(cost, 0, 'f', 2);
                std::printf("    mean ms a step: %s\n", qPrintable(costs.join(", ")));
            }
            if (duringSearch)
                std::printf("    the search was still running after %d of %d steps\n", overlapped,
                            runs);
            if (!untilExact.empty())
                std::printf("    a preview: the exact figures repainted %.2f ms after %s "
                            "(median of 5)\n",
                            percentile(untilExact, 0.5), drag ? "letting go" : "the last step");
            std::fflush(stdout);
        }
        if (duringSearch)
            tab->waitForIdle();
    }
    std::printf("%s\n",
                allWithinFrame ? "every p99 is under one 60 Hz frame (16 ms)"
                               : "some p99 is over one 60 Hz frame (16 ms)");
    if (!worstStall.where.isEmpty())
        std::printf("the longest GUI-thread stall: %.2f ms (%s)\n", worstStall.ms,
                    qPrintable(worstStall.where));
    return 0;
}
