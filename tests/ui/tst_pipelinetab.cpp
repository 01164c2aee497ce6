// The pipeline tab: the Gantt chart shows the core's simulated passes, the bubble and memory
// charts follow the core, and the Gantt stays readable (no overlapping text) at p = 32, m = 256.
// Its inputs live in the scenario document (saved, undoable); its comparison of schedules is a
// presenter tested here without widgets.

#include "chartexport.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "explanationpanel.h"
#include "fields.h"
#include "format.h"
#include "ganttpanel.h"
#include "legendrows.h"
#include "parametercontrol.h"
#include "pipelinepresenter.h"
#include "pipelinetab.h"
#include "scalelab/core/pipeline.h"
#include "scenariodocument.h"
#include "scenariojson.h"
#include "testhelpers.h"

#include <QAbstractAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDir>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QHelpEvent>
#include <QImage>
#include <QJsonObject>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QPainter>
#include <QScatterSeries>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>
#include <QUndoStack>
#include <QValueAxis>
#include <algorithm>

using namespace scalelab;
using namespace scalelab::ui;
using namespace scalelab::test;
using core::Pass;
using core::Schedule;

namespace {

core::Scenario scenarioWith(Schedule schedule, std::int64_t p, std::int64_t m, std::int64_t v)
{
    core::Scenario s;
    s.pipeline.schedule = schedule;
    s.pipeline.stages = p;
    s.pipeline.microbatches = m;
    s.pipeline.virtualStages = v;
    return s;
}

/// The first pair of laid-out texts that intersect, as a message; empty if none do.
QString firstOverlap(const std::vector<GanttPanel::Text>& texts)
{
    // Sorted by left edge, a text can only meet those that start before it ends.
    std::vector<std::size_t> order(texts.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return texts[a].rect.left() < texts[b].rect.left();
    });
    for (std::size_t i = 0; i < order.size(); ++i)
        for (std::size_t j = i + 1; j < order.size(); ++j) {
            const QRectF& a = texts[order[i]].rect;
            const QRectF& b = texts[order[j]].rect;
            if (b.left() >= a.right())
                break;
            if (a.intersects(b))
                return QString("'%1' (%2,%3 %4x%5) meets '%6' (%7,%8 %9x%10)")
                    .arg(texts[order[i]].text)
                    .arg(a.x())
                    .arg(a.y())
                    .arg(a.width())
                    .arg(a.height())
                    .arg(texts[order[j]].text)
                    .arg(b.x())
                    .arg(b.y())
                    .arg(b.width())
                    .arg(b.height());
        }
    return {};
}

int countKind(const std::vector<GanttPanel::Text>& texts, GanttPanel::TextKind kind)
{
    return static_cast<int>(std::count_if(texts.begin(), texts.end(),
                                          [kind](const auto& t) { return t.kind == kind; }));
}

} // namespace

class TstPipelineTab : public QObject {
    Q_OBJECT

private:
    /// Every chart against core, for the tab's current inputs, exactly.
    void checkAgainstCore(PipelineTab& tab)
    {
        const core::PipelineInputs in = tab.inputs();
        const core::PipelineResult r = core::simulatePipeline(in);
        const bool interleaved = in.schedule == Schedule::Interleaved;

        // Gantt: one box per event, the same events in the same order.
        GanttPanel* gantt = tab.ganttChart();
        const bool dual = core::isDualSchedule(in.schedule);
        QCOMPARE(gantt->stages(), int(core::pipelineDevices(in)));
        QCOMPARE(gantt->chunks(), interleaved ? int(in.virtualStages) : dual ? 2 : 1);
        QCOMPARE(gantt->makespan(), r.makespan);
        const auto& boxes = gantt->events();
        QCOMPARE(boxes.size(), r.events.size());
        for (std::size_t i = 0; i < boxes.size(); ++i) {
            const core::PipelineEvent& a = boxes[i];
            const core::PipelineEvent& b = r.events[i];
            if (a.stage != b.stage || a.microbatch != b.microbatch || a.chunk != b.chunk
                || a.pass != b.pass || a.start != b.start || a.end != b.end
                || a.pairMicrobatch != b.pairMicrobatch || a.withWeight != b.withWeight)
                QFAIL(qPrintable(QString("box %1 differs from the core's event").arg(i)));
        }

        // Bubble chart: each curve is the core's closed form at every m it holds.
        const bool idle = tab.bubbleDefinition() == PipelineTab::BubbleDefinition::IdleShare;
        for (Schedule s : PipelineTab::schedules()) {
            QLineSeries* line = tab.bubbleCurve(s);
            QVERIFY(line);
            if (core::isDualSchedule(s) && in.stages % 2 != 0) {
                QCOMPARE(line->count(), 0); // no DualPipe on an odd number of stages
                continue;
            }
            // Every m up to 19, then sparser, always up to the axis' end past the slider's 256.
            QVERIFY(line->count() >= 50);
            QCOMPARE(line->at(18).x(), 19.0);
            QVERIFY(line->at(line->count() - 1).x() >= 512);
            const std::int64_t v = s == Schedule::Interleaved ? in.virtualStages : 1;
            core::PipelineInputs at = in;
            at.schedule = s;
            for (const QPointF& pt : line->points()) {
                const auto m = static_cast<std::int64_t>(pt.x());
                QCOMPARE(double(m), pt.x());
                double want = 100.0
                    * (idle ? core::pipelineBubbleFraction(in.stages, m, v)
                            : core::pipelineBubbleOverIdeal(in.stages, m, v));
                if (core::splitsBackward(s)) {
                    // Qi et al.'s (the DualPipe README's) bubble size against a stage's
                    // (device's) work m (f + b + w), 2m (f + b + w) on a DualPipeV device.
                    const double size = core::isDualSchedule(s) ? core::dualPipeBubbleTime(at)
                                                                : core::zeroBubbleBubbleTime(at);
                    const double work = double(m) * (s == Schedule::DualPipeV ? 2 : 1)
                        * (in.forwardTime + in.backwardTime + in.weightTime);
                    want = 100.0 * (idle ? size / (size + work) : size / work);
                }
                QCOMPARE(pt.y(), want);
            }
        }
        QCOMPARE(tab.currentPoint()->count(), 1);
        double measured = idle ? r.simulatedBubbleFraction : r.simulatedBubbleOverIdeal;
        if (core::splitsBackward(in.schedule)) {
            const double work = double(in.microbatches)
                * (in.schedule == Schedule::DualPipeV ? 2 : 1)
                * (in.forwardTime + in.backwardTime + in.weightTime);
            measured = idle ? r.bubbleTime / (r.bubbleTime + work) : r.bubbleRate;
        }
        QCOMPARE(tab.currentPoint()->at(0), QPointF(double(in.microbatches), 100.0 * measured));
        const QString yTitle =
            ui::axisTitle(tab.bubbleChart()->chart()->axes(Qt::Vertical).first());
        QVERIFY2(yTitle.contains(idle ? "Idle share" : "over ideal"), qPrintable(yTitle));

        // Memory chart: the simulator's peak activations, schedule by schedule.
        for (Schedule s : PipelineTab::memorySchedules()) {
            core::PipelineInputs other = in;
            other.schedule = s;
            QBarSet* set = tab.memoryBars(s);
            QVERIFY(set);
            QCOMPARE(set->count(), int(in.stages));
            std::vector<double> held;
            try {
                held = core::simulatePipeline(other).peakActivations;
            } catch (const core::InputError&) {
                // Refused (interleaved at m not a multiple of p, DualPipe at odd p): no bars.
            }
            // A DualPipeV device holds two stages: p/2 bars, then nothing.
            for (int i = 0; i < set->count(); ++i)
                QCOMPARE(set->at(i), std::size_t(i) < held.size() ? held[std::size_t(i)] : 0.0);
        }
    }

    /// Once the tab is idle it shows what the one-thread comparison gives for its inputs: the
    /// charts (checkAgainstCore), the figures line and the explanation's values.
    void checkWholeComparison(PipelineTab& tab)
    {
        tab.waitForIdle();
        QVERIFY(!tab.refreshPending());
        checkAgainstCore(tab);
        const PipelineFigures whole = pipelineFigures(comparePipelineSchedules(tab.inputs()), true);
        QCOMPARE(tab.figuresLabel()->text(), whole.figuresLine);
        QCOMPARE(tab.explanationValues(), whole.explanation);
    }

    void checkNoOverlap(GanttPanel* gantt, const QSizeF& size)
    {
        const auto texts = gantt->texts(QRectF(QPointF(0, 0), size));
        const QString overlap = firstOverlap(texts);
        QVERIFY2(overlap.isEmpty(), qPrintable(overlap));
        // Every text inside the chart, and every box label inside its own box.
        const GanttPanel::Layout l = gantt->layoutFor(QRectF(QPointF(0, 0), size));
        for (const auto& t : texts) {
            QVERIFY2(QRectF(QPointF(0, 0), size).contains(t.rect), qPrintable(t.text));
            if (t.kind == GanttPanel::TextKind::BoxLabel)
                QVERIFY2(gantt->boxRect(l, t.box).contains(t.rect), qPrintable(t.text));
        }
        QVERIFY(countKind(texts, GanttPanel::TextKind::TickLabel) >= 3);
        QVERIFY(countKind(texts, GanttPanel::TextKind::RowLabel) >= 1);
    }

private slots:
    void opensOnThePhenomenon()
    {
        PipelineTab tab;
        const core::PipelineInputs d;
        QCOMPARE(tab.inputs().stages, d.stages);
        QCOMPARE(tab.inputs().microbatches, d.microbatches);
        QCOMPARE(tab.inputs().schedule, Schedule::GPipe);
        checkAgainstCore(tab);
        // p = 4, m = 12 idles a fifth of the time, and the figures line says so first.
        const QString text = tab.figuresLabel()->text();
        QVERIFY2(text.contains("idles 20.0 % of the time"), qPrintable(text));
        QVERIFY(text.contains("(4−1)/(12+4−1)"));
        QCOMPARE(tab.ganttChart()->figures().size(), 2);
        QVERIFY(tab.ganttChart()->figures().at(0).contains("20.0 %"));
        QVERIFY(tab.ganttChart()->figures().at(1).contains("20.0 %"));
        QVERIFY(tab.ganttChart()->timeAxisTitle().contains("time units"));
        // Wide boxes at the default size: microbatch numbers are written in them.
        const auto texts = tab.ganttChart()->texts(QRectF(0, 0, 1000, 625));
        QVERIFY(countKind(texts, GanttPanel::TextKind::BoxLabel) > 0);
        checkNoOverlap(tab.ganttChart(), QSizeF(1000, 625));
    }

    void theExplanationGetsTodaysNumbers()
    {
        PipelineTab tab;
        // Every placeholder of resources/explanations/pipeline.html is filled.
        const QHash<QString, QString> values = tab.explanationValues();
        for (const char* key : {"stages", "microbatches", "schedule", "formula", "bubble",
                                "simulated", "makespan", "megatron", "peak_gpipe", "peak_1f1b"})
            QVERIFY2(!values.value(key).isEmpty(), key);
        QCOMPARE(values.value("bubble"), QString("20.0 %"));
        QCOMPARE(values.value("megatron"), QString("25.0 %"));
        QCOMPARE(values.value("peak_gpipe"), QString("12"));
        QCOMPARE(values.value("peak_1f1b"), QString("4"));
        QVERIFY(tab.explanation());
        const QString html = tab.explanation()->html();
        QVERIFY2(!html.contains("{{"), qPrintable(html));
        QVERIFY(html.contains("20.0 %"));
    }

    void keyPressesOnASliderChangeTheScenarioAndTheCharts_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("qtKey");
        QTest::addColumn<int>("schedule");
        QTest::newRow("stages, right") << "pipeline.stages" << int(Qt::Key_Right) << 0;
        QTest::newRow("stages, end, 1F1B") << "pipeline.stages" << int(Qt::Key_End) << 1;
        QTest::newRow("microbatches, page up")
            << "pipeline.microbatches" << int(Qt::Key_PageUp) << 0;
        QTest::newRow("microbatches, left, 1F1B")
            << "pipeline.microbatches" << int(Qt::Key_Left) << 1;
        QTest::newRow("microbatches, end, interleaved")
            << "pipeline.microbatches" << int(Qt::Key_End) << 2;
        QTest::newRow("chunks, right, interleaved")
            << "pipeline.virtual_stages" << int(Qt::Key_Right) << 2;
        QTest::newRow("forward time, page up")
            << "pipeline.forward_time" << int(Qt::Key_PageUp) << 1;
        QTest::newRow("backward time, home, interleaved")
            << "pipeline.backward_time" << int(Qt::Key_Home) << 2;
    }

    void keyPressesOnASliderChangeTheScenarioAndTheCharts()
    {
        QFETCH(QString, key);
        QFETCH(int, qtKey);
        QFETCH(int, schedule);
        PipelineTab tab;
        tab.resize(1400, 900);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        auto* box = tab.findChild<QComboBox*>("pipeline.schedule");
        QVERIFY(box);
        box->setCurrentIndex(schedule);
        settle(tab);
        QCOMPARE(tab.inputs().schedule, PipelineTab::schedules().at(schedule));
        ParameterControl* control = tab.control(key);
        QVERIFY(control);
        const double before = control->value();
        const core::Scenario old = tab.scenario();
        control->slider()->setFocus();
        QTest::keyClick(control->slider(), Qt::Key(qtKey));
        QVERIFY(control->value() != before);
        settle(tab);
        const core::Scenario now = tab.document()->scenario();
        const auto tie = [](const core::PipelineInputs& in) {
            return std::tie(in.stages, in.microbatches, in.virtualStages, in.forwardTime,
                            in.backwardTime);
        };
        QVERIFY(tie(now.pipeline) != tie(old.pipeline));
        QVERIFY(tab.messageLabel()->isHidden());
        checkAgainstCore(tab);
    }

    void theGanttLooksTheSameDrawnStraightOrFromItsKeptImage()
    {
        // After a change the Gantt chart paints straight on the screen; painted again unchanged,
        // from an image it keeps. Both show the same pixels.
        PipelineTab tab;
        tab.resize(1400, 900);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        ParameterControl* stages = tab.control("pipeline.stages");
        QVERIFY(stages);
        stages->setValue(stages->value() + 1);
        settle(tab);
        GanttPanel* gantt = tab.ganttChart();
        QEvent font(QEvent::FontChange); // a change (draw again), with no paint since
        QCoreApplication::sendEvent(gantt, &font);
        const QImage straight = gantt->grab().toImage();
        const QImage kept = gantt->grab().toImage(); // unchanged: drawn into the kept image
        const QImage copied = gantt->grab().toImage(); // and copied from it
        QVERIFY(!straight.isNull());
        QCOMPARE(kept, straight);
        QCOMPARE(copied, straight);
    }

    void theDefinitionSwitchChangesCurvesAndLabels()
    {
        PipelineTab tab;
        auto* box = tab.findChild<QComboBox*>("pipeline.bubble_definition");
        QVERIFY(box);
        box->setCurrentIndex(1);
        settle(tab);
        QCOMPARE(tab.bubbleDefinition(), PipelineTab::BubbleDefinition::OverIdeal);
        checkAgainstCore(tab);
        // Megatron's figure for p = 4, m = 12: 3/12 of the ideal time.
        QCOMPARE(tab.currentPoint()->at(0).y(), 25.0);
        QVERIFY(tab.ganttChart()->figures().at(1).contains("(p−1)/m = (4−1)/12 = 25.0 %"));
        QVERIFY(tab.figuresLabel()->text().contains("25.0 %"));
        box->setCurrentIndex(0);
        settle(tab);
        QCOMPARE(tab.currentPoint()->at(0).y(), 20.0);
        checkAgainstCore(tab);
    }

    void oneFOneBHoldsFewerActivationsForTheSameBubble()
    {
        PipelineTab tab;
        tab.findChild<QComboBox*>("pipeline.schedule")->setCurrentIndex(1);
        settle(tab);
        checkAgainstCore(tab);
        QCOMPARE(tab.currentPoint()->at(0).y(), 20.0); // the same bubble as GPipe
        QBarSet* gpipe = tab.memoryBars(Schedule::GPipe);
        QBarSet* ofob = tab.memoryBars(Schedule::OneFOneB);
        for (int s = 0; s < 4; ++s) {
            QCOMPARE(gpipe->at(s), 12.0);
            QCOMPARE(ofob->at(s), double(4 - s));
        }
        QVERIFY(tab.figuresLabel()->text().contains("instead of 12"));
    }

    void everyActivationBarShowsWhole_data()
    {
        QTest::addColumn<int>("stages");
        QTest::addColumn<QSize>("size");
        // Five schedules' bars side by side: at 32 stages they are under a pixel wide on a
        // 1280-wide window (issue 18: readable on every screen), so that case is 1920 only.
        for (int p : {1, 2, 4, 8, 32})
            for (QSize size : {QSize(1280, 800), QSize(1920, 1080)})
                if (p < 32 || size.width() >= 1920)
                    QTest::addRow("p=%d %dx%d", p, size.width(), size.height()) << p << size;
    }

    void everyActivationBarShowsWhole()
    {
        QFETCH(int, stages);
        QFETCH(QSize, size);
        PipelineTab tab;
        // Shown and resized: the chart thins its ticks after a resize, which once put the
        // stage axis back to 0..p-1 and cut the first and last stages' bars in half.
        tab.resize(size / 2);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        tab.setScenario(scenarioWith(Schedule::GPipe, stages, 2 * stages, 2));
        settle(tab);
        tab.resize(size);
        QChart* chart = tab.memoryChart()->chart();
        QTRY_VERIFY(chart->plotArea().width() > 0);
        QTest::qWait(50); // the tick thinning runs a turn after the layout
        settle(tab);
        const QRectF plot = chart->mapRectToScene(chart->plotArea());
        int nonZero = 0;
        for (Schedule s : PipelineTab::memorySchedules())
            for (int i = 0; i < tab.memoryBars(s)->count(); ++i)
                nonZero += tab.memoryBars(s)->at(i) > 0 ? 1 : 0;
        QVERIFY(nonZero >= 2 * stages); // GPipe and 1F1B hold something on every stage
        QList<QColor> colours;
        for (Schedule s : PipelineTab::memorySchedules())
            colours << tab.memoryBars(s)->color();
        int shown = 0;
        for (QGraphicsItem* item : chart->scene()->items()) {
            auto* bar = qgraphicsitem_cast<QGraphicsRectItem*>(item);
            if (!bar || !bar->isVisible() || chart->legend()->isAncestorOf(bar)
                || !colours.contains(bar->brush().color()))
                continue;
            const QRectF r = bar->sceneBoundingRect().adjusted(0.5, 0.5, -0.5, -0.5);
            if (r.height() < 1 || r.width() < 1 || !chart->isAncestorOf(bar))
                continue;
            ++shown;
            QVERIFY2(plot.adjusted(-1, -1, 1, 1).contains(r),
                     qPrintable(QString("bar (%1,%2 %3x%4) outside plot (%5..%6)")
                                    .arg(r.x())
                                    .arg(r.y())
                                    .arg(r.width())
                                    .arg(r.height())
                                    .arg(plot.left())
                                    .arg(plot.right())));
        }
        QCOMPARE(shown, nonZero);
        // The ticks name whole stages, from the first.
        auto* axis = qobject_cast<QValueAxis*>(chart->axes(Qt::Horizontal).first());
        QVERIFY(axis);
        QCOMPARE(axis->min(), -0.5);
        QCOMPARE(axis->max(), stages - 0.5);
        QCOMPARE(axis->tickAnchor(), 0.0);
    }

    void interleavingShrinksTheBubble()
    {
        PipelineTab tab;
        tab.findChild<QComboBox*>("pipeline.schedule")->setCurrentIndex(2);
        settle(tab);
        checkAgainstCore(tab);
        // (p-1)/(v m + p-1) = 3/27 with v = 2.
        QCOMPARE(tab.inputs().virtualStages, std::int64_t(2));
        const QString text = tab.figuresLabel()->text();
        QVERIFY2(text.contains("11.1 %") && text.contains("20.0 %"), qPrintable(text));
        QCOMPARE(tab.ganttChart()->chunks(), 2);
        QVERIFY(tab.ganttChart()->title().contains("2 chunks"));
    }

    void refusedInputKeepsTheLastCharts()
    {
        PipelineTab tab;
        tab.findChild<QComboBox*>("pipeline.schedule")->setCurrentIndex(2);
        settle(tab);
        const std::size_t before = tab.ganttChart()->events().size();
        tab.control("pipeline.microbatches")->setValue(13); // not a multiple of p = 4
        settle(tab);
        QVERIFY(!tab.messageLabel()->isHidden());
        QVERIFY(tab.messageLabel()->text().contains("pipeline.microbatches"));
        QCOMPARE(tab.ganttChart()->events().size(), before);
        // GPipe takes m = 13; the interleaved bars are then left empty, not an error.
        tab.findChild<QComboBox*>("pipeline.schedule")->setCurrentIndex(0);
        settle(tab);
        QVERIFY(tab.messageLabel()->isHidden());
        checkAgainstCore(tab);
        QVERIFY(tab.memoryBars(Schedule::Interleaved)->label().contains("multiple"));
        // Drawn in the legend's rows, which the memory chart keeps at every size: a changed
        // name redraws the rows, not the chart's layout.
        QChart* memory = qobject_cast<ChartViewPanel*>(tab.charts().last())->chart();
        QVERIFY(legendKeptInRows(memory));
        QVERIFY(legendRowsShown(memory));
        QVERIFY(!memory->legend()->isVisible());
        QVERIFY(legendRowsTexts(memory).join(' ').replace('\n', ' ').contains(
            "Interleaved: m not a multiple of p"));
        tab.control("pipeline.microbatches")->setValue(12);
        settle(tab);
        const QString names = legendRowsTexts(memory).join(' ').replace('\n', ' ');
        QVERIFY(!names.contains("multiple"));
        QVERIFY(names.contains(scheduleName(Schedule::Interleaved)));
    }

    void largeSchedulesFollowTheCoreAndStayReadable_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("v");
        QTest::newRow("gpipe p=32 m=256") << int(Schedule::GPipe) << 1;
        QTest::newRow("1f1b p=32 m=256") << int(Schedule::OneFOneB) << 1;
        QTest::newRow("interleaved p=32 m=256 v=4") << int(Schedule::Interleaved) << 4;
    }

    void largeSchedulesFollowTheCoreAndStayReadable()
    {
        QFETCH(int, schedule);
        QFETCH(int, v);
        PipelineTab tab;
        tab.setScenario(scenarioWith(Schedule(schedule), 32, 256, v));
        settle(tab);
        QCOMPARE(tab.ganttChart()->events().size(), std::size_t(2 * 32 * 256 * v));
        checkAgainstCore(tab);
        GanttPanel* gantt = tab.ganttChart();
        for (const QSizeF size :
             {QSizeF(1000, 625), QSizeF(800, 500), QSizeF(1600, 1000), QSizeF(480, 300)})
            checkNoOverlap(gantt, size);
        // Stage numbers thin out rather than pile up.
        const auto texts = gantt->texts(QRectF(0, 0, 1000, 625));
        const int rows = countKind(texts, GanttPanel::TextKind::RowLabel);
        QVERIFY(rows >= 4 && rows < 32);
        // Boxes this narrow are pooled into pixel strips on screen and in exports.
        QVERIFY(gantt->drawsPooled(QRectF(0, 0, 1000, 625), 1.6));
    }

    void boxesSitOnTheirRowsAndTimes()
    {
        PipelineTab tab;
        tab.setScenario(scenarioWith(Schedule::Interleaved, 4, 8, 2));
        settle(tab);
        GanttPanel* gantt = tab.ganttChart();
        const QRectF target(0, 0, 1000, 625);
        const GanttPanel::Layout l = gantt->layoutFor(target);
        QVERIFY(l.timeEnd >= gantt->makespan());
        const auto& events = gantt->events();
        for (std::size_t i = 0; i < events.size(); ++i) {
            const QRectF box = gantt->boxRect(l, i);
            const QRectF row = gantt->rowRect(l, events[i].stage);
            QCOMPARE(box.top(), row.top());
            QCOMPARE(box.height(), row.height());
            // Time runs linearly from the plot's left edge at 0 to its right edge at timeEnd.
            QVERIFY(std::abs(box.left()
                             - (l.plot.left() + events[i].start / l.timeEnd * l.plot.width()))
                    < 1e-9);
            QVERIFY(
                std::abs(box.right() - (l.plot.left() + events[i].end / l.timeEnd * l.plot.width()))
                < 1e-9);
            // The hit test finds the box at its centre.
            QCOMPARE(gantt->eventAt(target, box.center()), static_cast<long long>(i));
        }
        checkNoOverlap(gantt, target.size());
    }

    void hoverTellsThePass()
    {
        PipelineTab tab;
        tab.setScenario(scenarioWith(Schedule::Interleaved, 4, 8, 2));
        settle(tab);
        tab.resize(1400, 900);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        GanttPanel* gantt = tab.ganttChart();
        const QRectF target = gantt->rect();
        const GanttPanel::Layout l = gantt->layoutFor(target);
        // A backward of the last stage, somewhere in the middle.
        std::size_t pick = 0;
        for (std::size_t i = 0; i < gantt->events().size(); ++i)
            if (gantt->events()[i].stage == 3 && gantt->events()[i].pass == Pass::Backward
                && gantt->events()[i].chunk == 1 && gantt->events()[i].microbatch == 5)
                pick = i;
        const core::PipelineEvent e = gantt->events()[pick];
        const QPointF centre = gantt->boxRect(l, pick).center();
        const QString text = gantt->describeAt(target, centre);
        QVERIFY2(text.contains("Stage 3") && text.contains("microbatch 5")
                     && text.contains("chunk 1") && text.contains("Backward")
                     && text.contains(formatNumber(e.start, 6))
                     && text.contains(formatNumber(e.end, 6)),
                 qPrintable(text));
        // Stage 3 waits at the start: the bubble.
        const QPointF idle(l.plot.left() + 1, gantt->rowRect(l, 3).center().y());
        QVERIFY(gantt->describeAt(target, idle).contains("idle"));
        QVERIFY(gantt->describeAt(target, QPointF(2, 2)).isEmpty());

        // And the same text as a real tool tip.
        QHelpEvent help(QEvent::ToolTip, centre.toPoint(), gantt->mapToGlobal(centre.toPoint()));
        QCoreApplication::sendEvent(gantt, &help);
        QTRY_VERIFY(QToolTip::isVisible());
        QVERIFY(QToolTip::text().contains("microbatch 5"));
    }

    void forwardsAndBackwardsDifferInLightness()
    {
        // Told apart without colour: a backward is far darker than a forward of any chunk.
        for (int c = 0; c < 8; ++c) {
            const double f = GanttPanel::passColor(Pass::Forward, c).lightnessF();
            const double b = GanttPanel::passColor(Pass::Backward, c).lightnessF();
            QVERIFY2(f - b > 0.3, qPrintable(QString("chunk %1: %2 vs %3").arg(c).arg(f).arg(b)));
        }
        // Chunks differ in hue.
        QVERIFY(GanttPanel::passColor(Pass::Forward, 0) != GanttPanel::passColor(Pass::Forward, 1));
    }

    void exportsFillTheCanvas_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("p");
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("v");
        QTest::newRow("default") << int(Schedule::GPipe) << 4 << 12 << 2;
        QTest::newRow("1f1b p=8 m=16") << int(Schedule::OneFOneB) << 8 << 16 << 2;
        QTest::newRow("interleaved p=32 m=256 v=4") << int(Schedule::Interleaved) << 32 << 256 << 4;
    }

    void exportsFillTheCanvas()
    {
        QFETCH(int, schedule);
        QFETCH(int, p);
        QFETCH(int, m);
        QFETCH(int, v);
        PipelineTab tab; // never shown: export lays every chart out itself
        tab.setScenario(scenarioWith(Schedule(schedule), p, m, v));
        tab.waitForIdle();
        QTemporaryDir temp;
        // SCALELAB_PNG_DIR keeps the images for a look.
        const QString keep = qEnvironmentVariable("SCALELAB_PNG_DIR");
        const QString dir = keep.isEmpty() ? temp.path() : keep;
        QDir().mkpath(dir);
        const QString tag = QTest::currentDataTag();
        QList<ExportJob> jobs;
        for (ChartPanel* chart : tab.charts())
            jobs << ExportJob{
                chart,
                QDir(dir).filePath(
                    QString("%1-%2.png").arg(chart->name(), QString(tag).replace(' ', '_'))),
                ImageFormat::Png,
                {1600, 1000}};
        QCOMPARE(jobs.size(), 3);
        QCOMPARE(exportCharts(jobs), QString());
        for (const ExportJob& job : jobs) {
            const QImage image(job.path);
            QCOMPARE(image.size(), QSize(1600, 1000));
            const QSizeF span = drawnSpan(image);
            QVERIFY2(
                span.width() > 0.9 && span.height() > 0.9,
                qPrintable(
                    QString("%1: %2 x %3").arg(job.path).arg(span.width()).arg(span.height())));
        }
        // The Gantt's own text does not overlap at the layout size of an export.
        checkNoOverlap(tab.ganttChart(), exportLayoutSize(QSize(1600, 1000)));
    }

    void zeroBubbleSchedulesAreDrawn_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("p");
        QTest::addColumn<int>("m");
        QTest::newRow("zb-h1 p=4 m=8") << int(Schedule::ZeroBubbleH1) << 4 << 8;
        QTest::newRow("zb-h2 p=4 m=8") << int(Schedule::ZeroBubbleH2) << 4 << 8;
        QTest::newRow("zb-h2 p=32 m=256") << int(Schedule::ZeroBubbleH2) << 32 << 256;
    }

    void zeroBubbleSchedulesAreDrawn()
    {
        // Qi et al.'s comparison, f = b = w = 1, in the tab: the Gantt draws F, B and W apart
        // (colour, letter, legend), the bars and curves include both schedules, and the figures
        // line sets the published rate against the simulated one.
        QFETCH(int, schedule);
        QFETCH(int, p);
        QFETCH(int, m);
        core::Scenario s = scenarioWith(Schedule(schedule), p, m, 2);
        s.pipeline.forwardTime = s.pipeline.backwardTime = s.pipeline.weightTime = 1.0;
        PipelineTab tab;
        tab.setScenario(s);
        settle(tab);
        tab.waitForIdle();
        checkAgainstCore(tab);
        GanttPanel* gantt = tab.ganttChart();
        QCOMPARE(gantt->events().size(), std::size_t(3 * p * m));
        // W is neither F's nor B's colour, and lies between them in lightness.
        const QColor w = GanttPanel::passColor(Pass::Weight, 0);
        QVERIFY(w != GanttPanel::passColor(Pass::Forward, 0));
        QVERIFY(w != GanttPanel::passColor(Pass::Backward, 0));
        QVERIFY(w.lightnessF() < GanttPanel::passColor(Pass::Forward, 0).lightnessF());
        QVERIFY(w.lightnessF() > GanttPanel::passColor(Pass::Backward, 0).lightnessF());
        const QSizeF size(1600, 1000);
        const auto texts = gantt->texts(QRectF(QPointF(0, 0), size));
        QStringList legend;
        bool lettered = true;
        int weightLabels = 0;
        for (const auto& t : texts) {
            if (t.kind == GanttPanel::TextKind::Legend)
                legend << t.text;
            if (t.kind != GanttPanel::TextKind::BoxLabel)
                continue;
            const QChar letter = QChar("FBW"[int(gantt->events()[t.box].pass)]);
            lettered = lettered && t.text.startsWith(letter);
            weightLabels += letter == 'W';
        }
        QVERIFY(lettered);
        if (p <= 4)
            QVERIFY(weightLabels > 0);
        QVERIFY2(legend.join('|').contains("W: weight gradient"), qPrintable(legend.join('|')));
        QVERIFY(legend.join('|').contains("B: input gradient"));
        checkNoOverlap(gantt, size);
        // ZB-H1 holds 1F1B's activations; ZB-H2 2(p - s) - 1 on stage s.
        QBarSet* ofob = tab.memoryBars(Schedule::OneFOneB);
        QBarSet* h1 = tab.memoryBars(Schedule::ZeroBubbleH1);
        QBarSet* h2 = tab.memoryBars(Schedule::ZeroBubbleH2);
        for (int st = 0; st < p; ++st) {
            QCOMPARE(h1->at(st), ofob->at(st));
            QCOMPARE(h2->at(st), double(std::min(2 * (p - st) - 1, m)));
        }
        // Published against simulated: equal here (f = b = w, m >= 2p - 1).
        const QString figures = tab.figuresLabel()->text();
        QVERIFY2(figures.contains("Published (Qi et al. 2024"), qPrintable(figures));
        const double rate =
            schedule == int(Schedule::ZeroBubbleH1) ? double(p - 1) / (3.0 * m) : 0.0;
        QVERIFY2(figures.contains(QString("Simulated: %1").arg(bubblePercent(rate))),
                 qPrintable(figures));
        QVERIFY(figures.contains("equal, as the tests check"));
    }

    void dualPipeSchedulesAreDrawn_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("p");
        QTest::addColumn<int>("m");
        QTest::newRow("dualpipe p=4 m=8") << int(Schedule::DualPipe) << 4 << 8;
        QTest::newRow("dualpipe p=8 m=20") << int(Schedule::DualPipe) << 8 << 20;
        QTest::newRow("dualpipev p=8 m=10") << int(Schedule::DualPipeV) << 8 << 10;
        QTest::newRow("dualpipe p=32 m=256") << int(Schedule::DualPipe) << 32 << 256;
    }

    void dualPipeSchedulesAreDrawn()
    {
        // The DualPipe README's comparison, f = b = w = 1, in the tab: the Gantt draws F&B
        // boxes and says which stages each device holds, the bars and curves include both
        // schedules, and the figures line sets the README's table against the simulation.
        QFETCH(int, schedule);
        QFETCH(int, p);
        QFETCH(int, m);
        core::Scenario s = scenarioWith(Schedule(schedule), p, m, 2);
        s.pipeline.forwardTime = s.pipeline.backwardTime = s.pipeline.weightTime = 1.0;
        PipelineTab tab;
        tab.setScenario(s);
        settle(tab);
        tab.waitForIdle();
        checkAgainstCore(tab);
        GanttPanel* gantt = tab.ganttChart();
        QVERIFY(gantt->overlapped());
        const int devices = schedule == int(Schedule::DualPipe) ? p : p / 2;
        QCOMPARE(gantt->rowLabels().size(), devices);
        QCOMPARE(gantt->rowLabels().front(), QString("0: 0, %1").arg(p - 1));
        const QSizeF size(1600, 1000);
        const auto texts = gantt->texts(QRectF(QPointF(0, 0), size));
        QStringList legend;
        int pairLabels = 0;
        for (const auto& t : texts) {
            if (t.kind == GanttPanel::TextKind::Legend)
                legend << t.text;
            if (t.kind == GanttPanel::TextKind::BoxLabel
                && gantt->events()[t.box].pass == Pass::ForwardBackward)
                ++pairLabels;
        }
        QVERIFY2(legend.join('|').contains("F&B"), qPrintable(legend.join('|')));
        QVERIFY(legend.join('|').contains("Chunk 1: stage p"));
        if (p <= 8)
            QVERIFY(pairLabels > 0);
        checkNoOverlap(gantt, size);
        // Every device holds p + 1 microbatches of activations at its peak: the figures say
        // so, not the memory chart's bars (seven sets of them would not fit).
        QVERIFY(!tab.memoryBars(Schedule(schedule)));
        const ActivationChart chart = activationChart(comparePipelineSchedules(tab.inputs()));
        const ActivationBars& bars = chart.bars[scheduleIndex(Schedule(schedule))];
        for (int d = 0; d < devices; ++d)
            QCOMPARE(bars.values[d], double(p + 1));
        // Published against simulated: equal here (f = b = w).
        const QString figures = tab.figuresLabel()->text();
        QVERIFY2(figures.contains("Published (DualPipe README"), qPrintable(figures));
        QVERIFY2(figures.contains(QString("Simulated: bubble %1 time units").arg(p - 2)),
                 qPrintable(figures));
        QVERIFY(figures.contains("equal, as the tests check"));
        QVERIFY(figures.contains(QString("activations %1: equal").arg(p + 1)));
        QVERIFY(figures.contains("Parameters 2×"));
        // The README's other rows: 1F1B (p-1)(F+B) = 3(p-1), ZB1P (p-1)(F+B-2W) = p-1.
        QVERIFY2(figures.contains(QString("1F1B (p−1)(F+B) = %1 (simulated %1)").arg(3 * (p - 1))),
                 qPrintable(figures));
        QVERIFY(figures.contains(QString("= %1 (ZB-H1 simulated %1)").arg(p - 1)));
    }

    void dualPipeSaysWhyItDiffersFromTheReadme()
    {
        // f > b: the README's diagram has f = b, so its formula does not hold; the tab says why.
        core::Scenario s = scenarioWith(Schedule::DualPipe, 8, 16, 2);
        s.pipeline.forwardTime = 2.0;
        s.pipeline.backwardTime = s.pipeline.weightTime = 1.0;
        PipelineTab tab;
        tab.setScenario(s);
        settle(tab);
        const QString figures = tab.figuresLabel()->text();
        // Published 3 (2 + 2 - 1) = 9, simulated 12 (core's dualPipeDiffersFromPublished).
        QVERIFY2(figures.contains("(p/2−1)(F&amp;B+B−3W) = 9"), qPrintable(figures));
        QVERIFY(figures.contains("Simulated: bubble 12 time units"));
        QVERIFY(figures.contains("(f = b)"));
        QVERIFY(!figures.contains("equal, as the tests check"));
    }

    void dualPipeRefusalsNameTheKey()
    {
        // Odd p for DualPipe: the tab keeps its last charts and names the key and the reason.
        core::Scenario s = scenarioWith(Schedule::DualPipe, 5, 20, 2);
        PipelineTab tab;
        tab.setScenario(s);
        settle(tab);
        QVERIFY(!tab.messageLabel()->isHidden());
        QVERIFY2(tab.messageLabel()->text().contains("even"),
                 qPrintable(tab.messageLabel()->text()));
        s = scenarioWith(Schedule::DualPipeV, 8, 6, 2);
        tab.setScenario(s);
        settle(tab);
        QVERIFY2(tab.messageLabel()->text().contains("at least the stages"),
                 qPrintable(tab.messageLabel()->text()));
    }

    void scenarioValuesBeyondTheSlidersAreKept()
    {
        core::Scenario s = scenarioWith(Schedule::OneFOneB, 40, 300, 12);
        s.pipeline.forwardTime = 0.001; // below the slider, and finer than its two decimals
        s.pipeline.backwardTime = 1.0 / 3.0;
        PipelineTab tab;
        tab.setScenario(s);
        settle(tab);
        const core::Scenario back = tab.document()->scenario();
        QCOMPARE(back.pipeline.stages, std::int64_t(40));
        QCOMPARE(back.pipeline.microbatches, std::int64_t(300));
        QCOMPARE(back.pipeline.virtualStages, std::int64_t(12));
        QCOMPARE(back.pipeline.schedule, Schedule::OneFOneB);
        QCOMPARE(back.pipeline.forwardTime, 0.001);
        QCOMPARE(back.pipeline.backwardTime, 1.0 / 3.0);
        // The slider shows the file's value (its range widened), the document keeps it exact.
        QVERIFY(tab.control("pipeline.forward_time")->spec().minimum <= 0.001);
        QVERIFY(tab.control("pipeline.stages")->spec().maximum >= 40);
        checkAgainstCore(tab);
    }

    void largeInputsComputeInTheBackground()
    {
        // Past kBackgroundPasses the core runs on a worker; the result is the same.
        PipelineTab tab;
        tab.setScenario(scenarioWith(Schedule::GPipe, 100, 1000, 1));
        tab.refreshNow();
        tab.waitForIdle();
        QVERIFY(!tab.refreshPending());
        QCOMPARE(tab.ganttChart()->events().size(), std::size_t(2 * 100 * 1000));
        checkAgainstCore(tab);
    }

    void largeInputsShowAllSevenOnceBothHalvesAreIn()
    {
        // Past kBackgroundPasses the shown schedule is simulated on the charts' worker and the
        // six others on the side worker. Once both halves are in, the tab shows exactly what
        // the one-thread comparison gives: the Gantt, every bar, the figures line and the
        // explanation's values.
        PipelineTab tab;
        tab.setScenario(scenarioWith(Schedule::DualPipe, 32, 256, 1));
        QVERIFY(comparisonPasses(tab.inputs()) > PipelineTab::kBackgroundPasses);
        tab.refreshNow();
        checkWholeComparison(tab);
    }

    void aNewerStepDropsTheHalvesOfAnOlderOne()
    {
        // A large comparison is still running when the inputs change again: neither of its
        // halves may show, alone or merged with the newer inputs' other half.
        PipelineTab tab;
        tab.setScenario(scenarioWith(Schedule::ZeroBubbleH2, 32, 256, 1));
        tab.refreshNow(); // both workers start on ZB-H2 at m = 256
        tab.setScenario(scenarioWith(Schedule::OneFOneB, 32, 192, 1));
        tab.refreshNow();
        checkWholeComparison(tab);
        // And back to small inputs: the comparison runs here at once, and a late half of the
        // large one cannot overwrite it.
        tab.setScenario(scenarioWith(Schedule::ZeroBubbleH2, 32, 256, 1));
        tab.refreshNow();
        tab.setScenario(scenarioWith(Schedule::OneFOneB, 4, 8, 1));
        tab.refreshNow();
        checkWholeComparison(tab);
    }

    // The document: every input of the tab is in the scenario, saved and undoable.

    void theScheduleAndTheDefinitionAreSavedAndUndoable_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("index");
        QTest::newRow("schedule 1F1B") << "pipeline.schedule" << 1;
        QTest::newRow("schedule interleaved") << "pipeline.schedule" << 2;
        QTest::newRow("schedule zb-h1") << "pipeline.schedule" << 3;
        QTest::newRow("schedule zb-h2") << "pipeline.schedule" << 4;
        QTest::newRow("bubble definition Megatron-LM") << "pipeline.bubble_definition" << 1;
    }

    void theScheduleAndTheDefinitionAreSavedAndUndoable()
    {
        QFETCH(QString, key);
        QFETCH(int, index);
        PipelineTab tab;
        auto* box = tab.findChild<QComboBox*>(key);
        QVERIFY(box);
        QCOMPARE(box->currentIndex(), 0);
        const core::Scenario before = tab.document()->scenario();
        box->setCurrentIndex(index);
        settle(tab);
        const core::Scenario after = tab.document()->scenario();
        if (key == "pipeline.schedule") {
            QCOMPARE(after.pipeline.schedule, PipelineTab::schedules().at(index));
        } else {
            QVERIFY(after.pipelineDisplay.megatronBubble);
            QCOMPARE(tab.bubbleDefinition(), PipelineTab::BubbleDefinition::OverIdeal);
        }
        checkAgainstCore(tab);
        // Written under its key in a scenario file, and read back the same.
        const document::Field* field = document::findField(key);
        QVERIFY(field);
        const QJsonObject json = document::scenarioToJson(after);
        QCOMPARE(json.value("pipeline").toObject().value(field->jsonKey()).toString(),
                 QString(field->choices.at(std::size_t(index))));
        QVERIFY(document::scenarioFromJson(json) == after);

        // One undo step; undo brings the box and the charts back, redo forward again.
        QCOMPARE(tab.document()->undoStack()->count(), 1);
        tab.document()->undoStack()->undo();
        settle(tab);
        QCOMPARE(box->currentIndex(), 0);
        QVERIFY(tab.document()->scenario() == before);
        checkAgainstCore(tab);
        tab.document()->undoStack()->redo();
        settle(tab);
        QCOMPARE(box->currentIndex(), index);
        QVERIFY(tab.document()->scenario() == after);
        checkAgainstCore(tab);
    }

    void aDragOfAPassTimeIsOneUndoStep()
    {
        PipelineTab tab;
        ParameterControl* forward = tab.control("pipeline.forward_time");
        QVERIFY(forward);
        for (const double f : {1.1, 1.2, 1.3, 1.5})
            forward->setValue(f);
        settle(tab);
        QCOMPARE(tab.inputs().forwardTime, 1.5);
        QCOMPARE(tab.document()->undoStack()->count(), 1);
        checkAgainstCore(tab);
        tab.document()->undoStack()->undo();
        settle(tab);
        QCOMPARE(tab.inputs().forwardTime, core::PipelineInputs{}.forwardTime);
        QCOMPARE(forward->value(), core::PipelineInputs{}.forwardTime);
        checkAgainstCore(tab);
    }

    void noRuleSnapsTheInputs()
    {
        // An interleaved schedule with m not a multiple of p is refused by core and named in the
        // message line; the edit itself stands (the lesson is the refusal).
        const core::Scenario before = scenarioWith(Schedule::Interleaved, 4, 12, 2);
        for (const char* key : {"pipeline.microbatches", "pipeline.stages"}) {
            core::Scenario after = before;
            if (QString(key) == "pipeline.microbatches")
                after.pipeline.microbatches = 13;
            else
                after.pipeline.stages = 5;
            const core::Scenario edited = after;
            document::normalizeSection(before, after, core::Section::Pipeline,
                                       document::findField(QString(key)));
            QVERIFY2(after == edited, key);
        }
        document::ScenarioDocument document(before);
        QVERIFY(document.setValue("pipeline.microbatches", 13));
        QCOMPARE(document.scenario().pipeline.microbatches, std::int64_t(13));
        QCOMPARE(document.scenario().pipeline.schedule, Schedule::Interleaved);
    }

    // The presenter: the comparison of schedules, without a widget.

    void theComparisonSimulatesEverySchedule()
    {
        const core::PipelineInputs in; // p = 4, m = 12, GPipe
        const PipelineComparison c = comparePipelineSchedules(in);
        const core::PipelineResult r = core::simulatePipeline(in);
        QCOMPARE(c.result.makespan, r.makespan);
        QCOMPARE(c.result.events.size(), r.events.size());
        for (Schedule s : pipelineSchedules()) {
            core::PipelineInputs other = in;
            other.schedule = s;
            QVERIFY(c.held[scheduleIndex(s)]);
            QCOMPARE(*c.held[scheduleIndex(s)], core::simulatePipeline(other).peakActivations);
        }
        const ActivationChart chart = activationChart(c);
        QCOMPARE(chart.bars[scheduleIndex(Schedule::GPipe)].values, QList<qreal>(4, 12.0));
        QCOMPARE(chart.bars[scheduleIndex(Schedule::OneFOneB)].values,
                 QList<qreal>({4.0, 3.0, 2.0, 1.0}));
        QCOMPARE(chart.bars[scheduleIndex(Schedule::Interleaved)].label,
                 QString("Interleaved 1F1B"));
        QCOMPARE(chart.most, 12.0);
        // 4 p m passes of GPipe and 1F1B, 2 p m v of the interleaved schedule, 6 p m of the
        // zero-bubble ones (F, B and W each), at most 6 p m of the DualPipe ones.
        QCOMPARE(comparisonPasses(in), 4.0 * 48 + 2.0 * 48 * 2 + 6.0 * 48 + 6.0 * 48);
    }

    void aComparisonTakesOverTheSchedulesItsNewInputsLeaveAlone()
    {
        core::PipelineInputs in;
        in.schedule = Schedule::OneFOneB;
        const PipelineComparison first = comparePipelineSchedules(in);
        // A known GPipe entry no simulation would give: it shows whether it was taken over.
        PipelineComparison known = entriesOf(first);
        const std::size_t gpipe = scheduleIndex(Schedule::GPipe);
        known.held[gpipe] = std::vector<double>{99.0};
        const auto same = [](const PipelineComparison& a, const PipelineComparison& b,
                             std::size_t k) {
            return a.held[k] == b.held[k] && a.idle[k] == b.idle[k]
                && a.parameters[k] == b.parameters[k];
        };

        // v changes the interleaved schedule alone: it is simulated again, GPipe is taken over.
        core::PipelineInputs moreChunks = in;
        moreChunks.virtualStages = 3;
        const PipelineComparison fresh = comparePipelineSchedules(moreChunks);
        const PipelineComparison reused = comparePipelineSchedules(moreChunks, &known);
        QCOMPARE(*reused.held[gpipe], std::vector<double>{99.0});
        for (std::size_t k = 1; k < kPipelineSchedules; ++k)
            QVERIFY2(same(reused, fresh, k), qPrintable(scheduleName(pipelineSchedules()[k])));
        QVERIFY(*fresh.held[scheduleIndex(Schedule::Interleaved)]
                != *first.held[scheduleIndex(Schedule::Interleaved)]);
        QCOMPARE(reused.result.makespan, fresh.result.makespan);

        // m changes every schedule: nothing is taken over.
        core::PipelineInputs moreMicrobatches = in;
        moreMicrobatches.microbatches = 16;
        const PipelineComparison all = comparePipelineSchedules(moreMicrobatches, &known);
        const PipelineComparison alone = comparePipelineSchedules(moreMicrobatches);
        for (std::size_t k = 0; k < kPipelineSchedules; ++k)
            QVERIFY2(same(all, alone, k), qPrintable(scheduleName(pipelineSchedules()[k])));

        // The shown schedule is always simulated, even when its entry is known: its result is
        // the Gantt chart. The other half takes over as the whole comparison does.
        in.schedule = Schedule::GPipe;
        const PipelineComparison shown = comparePipelineSchedules(in, &known);
        QCOMPARE(*shown.held[gpipe], *first.held[gpipe]);
        QVERIFY(!shown.result.events.empty());
        core::PipelineInputs other = in;
        other.schedule = Schedule::ZeroBubbleH2;
        other.virtualStages = 5;
        const PipelineComparison half = simulateOtherSchedules(other, &known);
        QCOMPARE(*half.held[gpipe], std::vector<double>{99.0});
        QVERIFY(!half.held[scheduleIndex(Schedule::ZeroBubbleH2)]); // the shown half's
        QVERIFY(half.result.events.empty());
    }

    void theComparisonSplitsTheOtherSchedulesBetweenItsTwoThreads()
    {
        for (Schedule shown : pipelineSchedules()) {
            core::PipelineInputs in;
            in.schedule = shown;
            const auto [mine, theirs] = splitSchedules(in);
            QList<Schedule> both = mine + theirs;
            QCOMPARE(both.size(), pipelineSchedules().size() - 1);
            QVERIFY(!both.contains(shown));
            for (Schedule s : pipelineSchedules())
                QCOMPARE(both.count(s), s == shown ? 0 : 1);
            // The slowest to simulate of the others (the interleaved schedule at v = 2, then
            // ZB-H2) is the worker's when this thread has the shown schedule to do; neither
            // side is left empty.
            QVERIFY(theirs.contains(shown == Schedule::Interleaved ? Schedule::ZeroBubbleH2
                                                                   : Schedule::Interleaved));
            QVERIFY(!mine.isEmpty() && !theirs.isEmpty());
        }
    }

    void theComparisonLeavesOutWhatCoreRefuses()
    {
        core::PipelineInputs in;
        in.microbatches = 13; // not a multiple of p = 4: no interleaved schedule
        const PipelineComparison c = comparePipelineSchedules(in);
        QVERIFY(!c.held[scheduleIndex(Schedule::Interleaved)]);
        QVERIFY(c.held[scheduleIndex(Schedule::OneFOneB)]);
        const ActivationChart chart = activationChart(c);
        const ActivationBars& interleaved = chart.bars[scheduleIndex(Schedule::Interleaved)];
        QCOMPARE(interleaved.values, QList<qreal>(4, 0.0));
        QVERIFY(interleaved.label.contains("multiple"));
        QCOMPARE(chart.most,
                 *std::max_element(c.held[0]->begin(), c.held[0]->end())); // GPipe's, the most
        QCOMPARE(pipelineFigures(c, true).explanation.value("peak_gpipe"),
                 formatNumber(c.held[0]->front(), 3));
        // The schedule shown refused is an error, not an empty chart.
        in.schedule = Schedule::Interleaved;
        QVERIFY_THROWS_EXCEPTION(core::InputError, comparePipelineSchedules(in));
    }

    void theBubbleCurvesAreTheClosedForms_data()
    {
        QTest::addColumn<int>("p");
        QTest::addColumn<int>("v");
        QTest::addColumn<bool>("idleShare");
        QTest::newRow("p=4 v=2 idle share") << 4 << 2 << true;
        QTest::newRow("p=4 v=2 over ideal") << 4 << 2 << false;
        QTest::newRow("p=32 v=8 idle share") << 32 << 8 << true;
        QTest::newRow("p=1 v=1 over ideal") << 1 << 1 << false;
    }

    void theBubbleCurvesAreTheClosedForms()
    {
        QFETCH(int, p);
        QFETCH(int, v);
        QFETCH(bool, idleShare);
        // The axis ends at a power of two from 512, past twice m.
        QCOMPARE(bubbleAxisMicrobatches(12), std::int64_t(512));
        QCOMPARE(bubbleAxisMicrobatches(256), std::int64_t(512));
        QCOMPARE(bubbleAxisMicrobatches(300), std::int64_t(1024));
        const std::int64_t top = 1024;
        const std::vector<std::int64_t> ms = bubbleCurveMicrobatches(top);
        for (std::int64_t i = 0; i < 19; ++i)
            QCOMPARE(ms[std::size_t(i)], i + 1); // every m while the curves are steepest
        QVERIFY(std::is_sorted(ms.begin(), ms.end()));
        QVERIFY(std::adjacent_find(ms.begin(), ms.end()) == ms.end());
        for (std::size_t i = 0; i + 1 < ms.size(); ++i) // then no step over 9 %: smooth
            QVERIFY2(ms[i + 1] - ms[i] <= std::max<std::int64_t>(1, std::llround(0.09 * ms[i])),
                     qPrintable(QString("%1 to %2").arg(ms[i]).arg(ms[i + 1])));
        QCOMPARE(ms.back(), top);
        QVERIFY(ms.size() < 80); // few enough points to lay out and draw thick and dashed fast
        for (Schedule s : pipelineSchedules()) {
            const std::int64_t chunks = s == Schedule::Interleaved ? v : 1;
            const QList<QPointF> points = bubbleCurvePoints(s, p, v, top, idleShare);
            QCOMPARE(std::size_t(points.size()), ms.size());
            for (std::size_t i = 0; i < ms.size(); ++i) {
                const QPointF pt = points[qsizetype(i)];
                QCOMPARE(pt.x(), double(ms[i]));
                QCOMPARE(pt.y(),
                         100.0
                             * (idleShare ? core::pipelineBubbleFraction(p, ms[i], chunks)
                                          : core::pipelineBubbleOverIdeal(p, ms[i], chunks)));
            }
        }
        const BubbleCurveTexts texts = bubbleCurveTexts(p, v, idleShare);
        QVERIFY(texts.bubbleAxisTitle.contains(idleShare ? "Idle share" : "over ideal"));
        QCOMPARE(texts.shapeNote, QString("p = %1, v = %2").arg(p).arg(v));
        // Names and titles say nothing of p and v: a step of either leaves them alone.
        QCOMPARE(texts.microbatchAxisTitle, QString("Microbatches m (log scale)"));
        QCOMPARE(texts.curveNames[scheduleIndex(Schedule::Interleaved)],
                 QString("Interleaved 1F1B"));
    }

    void aStepOfPOrVChangesTheNoteNotTheTitlesOrNames()
    {
        // A new axis title or legend name makes Qt Charts lay the chart out again: the p and v
        // the curves are drawn for are a note in the plot instead.
        PipelineTab tab;
        tab.resize(1400, 900);
        tab.show();
        tab.setScenario(scenarioWith(Schedule::Interleaved, 4, 16, 2));
        tab.waitForIdle();
        QChart* chart = tab.bubbleCurve(Schedule::GPipe)->chart();
        const auto texts = [chart] {
            QStringList out{chart->title()};
            for (QAbstractAxis* axis : chart->axes())
                out << ui::axisTitle(axis);
            for (QAbstractSeries* series : chart->series())
                out << series->name();
            return out;
        };
        const QStringList before = texts();
        QCOMPARE(tab.shapeNote()->text(), QString("p = 4, v = 2"));
        tab.setScenario(scenarioWith(Schedule::Interleaved, 8, 16, 4));
        tab.waitForIdle();
        QCOMPARE(texts(), before);
        QCOMPARE(tab.shapeNote()->text(), QString("p = 8, v = 4"));
        // In the plot's top right corner, whole.
        const QRectF note = tab.shapeNote()->mapRectToScene(tab.shapeNote()->boundingRect());
        QTRY_VERIFY(chart->plotArea().contains(note));
        QVERIFY(note.right() > chart->plotArea().center().x());
        QVERIFY(note.top() < chart->plotArea().center().y());
    }

    void theFiguresSpeakTheChosenDefinition()
    {
        const PipelineComparison c = comparePipelineSchedules(core::PipelineInputs{});
        const PipelineFigures idle = pipelineFigures(c, true);
        QCOMPARE(idle.measured, c.result.simulatedBubbleFraction);
        QCOMPARE(idle.closed, c.result.bubbleFraction);
        QCOMPARE(idle.chunks, 1);
        QVERIFY2(idle.figuresLine.contains("idles 20.0 % of the time"),
                 qPrintable(idle.figuresLine));
        QVERIFY(idle.figuresLine.contains("instead of 12"));
        QCOMPARE(idle.ganttTitle, QString("GPipe: 4 stages, 12 microbatches"));
        QCOMPARE(idle.ganttFigures.size(), 2);
        QVERIFY(idle.ganttFigures.at(1).contains("(p−1)/(m+p−1) = (4−1)/(12+4−1) = 20.0 %"));
        QCOMPARE(idle.explanation.value("megatron"), QString("25.0 %"));

        const PipelineFigures megatron = pipelineFigures(c, false);
        QCOMPARE(megatron.measured, c.result.simulatedBubbleOverIdeal);
        QCOMPARE(megatron.closed, 0.25);
        QVERIFY(megatron.ganttFigures.at(1).contains("(p−1)/m = (4−1)/12 = 25.0 %"));
        QVERIFY(megatron.figuresLine.contains("adds 25.0 % to the ideal time"));
        // The explanation speaks the chapter's definition whatever the switch.
        QCOMPARE(megatron.explanation, idle.explanation);

        core::PipelineInputs in;
        in.schedule = Schedule::Interleaved;
        const PipelineFigures interleaved = pipelineFigures(comparePipelineSchedules(in), true);
        QCOMPARE(interleaved.chunks, 2);
        QVERIFY(interleaved.ganttTitle.contains("2 chunks"));
        QVERIFY(interleaved.timeAxisTitle.contains("1/v"));
        QVERIFY(interleaved.figuresLine.contains("11.1 %"));

        QCOMPARE(bubblePercent(0.2), QString("20.0 %"));
        QCOMPARE(bubblePercent(0.005), QString("0.50 %"));
        QCOMPARE(bubblePercent(0.0), QString("0.0 %"));
    }

    void aStepOfPPaintsTheActivationChartOnce()
    {
        // A step of p gives the activation chart new bars and a new stage axis, which lays the
        // chart out again: laid out before the window paints, it is painted once a step, not
        // once with the new bars on the old axis and again after Qt Charts' own layout.
        PipelineTab tab;
        tab.resize(1600, 950);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        tab.setScenario(scenarioWith(Schedule::OneFOneB, 8, 32, 1));
        settle(tab);
        QTest::qWait(50); // the tick thinning runs a turn after the layout
        int paints = 0;
        scalelab::test::EventSpy spy(tab.memoryChart()->view()->viewport(), QEvent::Paint,
                                     [&paints] { ++paints; });
        QChart* chart = tab.memoryChart()->chart();
        for (const int p : {16, 8, 16}) {
            const QString before = chart->axes(Qt::Horizontal).first()->property("max").toString();
            paints = 0;
            tab.control("pipeline.stages")->setValue(p);
            settle(tab);
            QTest::qWait(50);
            // The axis did change (the case in point), and the chart was painted once for it.
            QVERIFY(chart->axes(Qt::Horizontal).first()->property("max").toString() != before);
            QCOMPARE(paints, 1);
        }
    }
};

QTEST_MAIN(TstPipelineTab)
#include "tst_pipelinetab.moc"
