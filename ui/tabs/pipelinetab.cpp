#include "pipelinetab.h"

#include "chartpanel.h"
#include "chartstyle.h"
#include "format.h"
#include "parametercontrol.h"
#include "ganttpanel.h"

#include <QAbstractAxis>
#include <QAbstractSeries>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <array>
#include <cmath>
#include <future>
#include <memory>
#include <optional>

namespace scalelab::ui {

using core::Schedule;

namespace {

// One colour per schedule, the same in the bubble and the memory chart and in the figures line;
// the curves also differ by line style, so colour is never the only difference.
QColor scheduleColor(Schedule s)
{
    switch (s) {
    case Schedule::GPipe:
        return palette::kVermillion;
    case Schedule::OneFOneB:
        return palette::kBlue;
    case Schedule::Interleaved:
        return palette::kGreen;
    }
    return palette::kBlack;
}

QString scheduleName(Schedule s)
{
    switch (s) {
    case Schedule::GPipe:
        return PipelineTab::tr("GPipe");
    case Schedule::OneFOneB:
        return PipelineTab::tr("1F1B");
    case Schedule::Interleaved:
        return PipelineTab::tr("Interleaved 1F1B");
    }
    return {};
}

int scheduleIndex(Schedule s)
{
    return s == Schedule::GPipe ? 0 : s == Schedule::OneFOneB ? 1 : 2;
}

// The schedule's name in its chart colour, for the figures line.
QString coloured(Schedule s)
{
    return QString("<b><span style=\"color:%1\">%2</span></b>")
        .arg(scheduleColor(s).name(), scheduleName(s).toHtmlEscaped());
}

// A bubble figure as a percentage with one decimal ("20.0 %"), two for small values.
QString percent(double fraction)
{
    const double v = 100.0 * fraction;
    return QString("%1 %").arg(v > 0 && v < 1 ? QString::number(v, 'f', 2)
                                              : QString::number(v, 'f', 1));
}

// The right-hand end of the microbatch axis: a power of two past the slider's 256, or past m.
std::int64_t axisMicrobatches(std::int64_t m)
{
    std::int64_t top = 512;
    while (top < 2 * m && top < (std::int64_t{1} << 40))
        top *= 2;
    return top;
}

// Setters that leave Qt Charts alone when nothing changes: every change relays the chart out.
void setName(QAbstractSeries* series, const QString& name)
{
    if (series->name() != name)
        series->setName(name);
}

void setTitle(QAbstractAxis* axis, const QString& title)
{
    if (axis->titleText() != title)
        axis->setTitleText(title);
}

} // namespace

/// What the worker computes: the simulated schedule, and the activations every schedule holds.
struct PipelineTab::Computed {
    core::PipelineInputs in;
    core::PipelineResult result;
    /// Peak activations per stage of GPipe, 1F1B and interleaved; nullopt if core refuses it.
    std::array<std::optional<std::vector<double>>, 3> held;
};

PipelineTab::PipelineTab(QWidget* parent)
    : Tab(parent)
{
    setObjectName("pipeline");
    buildControls();
    buildGanttChart();
    buildBubbleChart();
    buildMemoryChart();
    // The Gantt chart across the full width; bubble and memory side by side under it.
    setCharts({m_gantt}, 1);
    auto* lower = new QHBoxLayout;
    lower->addWidget(m_bubble, 1);
    lower->addWidget(m_memory, 1);
    QVBoxLayout* column = chartsColumn();
    const int gridIndex = column->count() - 2; // figures, grid, message
    column->insertLayout(gridIndex + 1, lower, 2);
    column->setStretch(gridIndex, 3);
    setScenario(core::Scenario{});
    refreshNow();
}

QList<Schedule> PipelineTab::schedules()
{
    return {Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved};
}

void PipelineTab::buildControls()
{
    const core::PipelineInputs d;
    QVBoxLayout* box = addGroup(tr("Pipeline"));
    addControl(box,
               makeSpec("pipeline.stages", tr("&Stages"), "p", tr("stages"),
                        tr("Pipeline stages: consecutive layers on one rank each."), 1, 32),
               static_cast<double>(d.stages));
    addControl(box,
               makeSpec("pipeline.microbatches", tr("&Microbatches"), "m", tr("microbatches"),
                        tr("Microbatches the batch is split into; the pipeline fills and drains "
                           "once per batch."),
                        1, 256),
               static_cast<double>(d.microbatches));
    m_scheduleBox = new QComboBox;
    m_scheduleBox->setObjectName("pipeline.schedule");
    m_scheduleBox->setAccessibleName(tr("Pipeline schedule"));
    m_scheduleBox->addItem(tr("GPipe: all forwards, then all backwards"));
    m_scheduleBox->addItem(tr("1F1B: one forward, one backward"));
    m_scheduleBox->addItem(tr("Interleaved 1F1B: v chunks per stage"));
    m_scheduleBox->setToolTip(tr("The order in which each stage runs its passes."));
    auto* form = new QFormLayout;
    form->addRow(tr("Sc&hedule"), m_scheduleBox);
    box->addLayout(form);
    connect(m_scheduleBox, &QComboBox::currentIndexChanged, this, [this] { inputEdited(); });
    addControl(box,
               makeSpec("pipeline.virtual_stages", tr("&Chunks per stage"), "v", tr("chunks"),
                        tr("Model chunks per stage in the interleaved schedule (Megatron-LM's "
                           "virtual stages); its curve and bars use it too."),
                        1, 8),
               static_cast<double>(d.virtualStages));

    QVBoxLayout* bubbleBox = addGroup(tr("Bubble"));
    m_definitionBox = new QComboBox;
    m_definitionBox->setObjectName("pipeline.bubble_definition");
    m_definitionBox->setAccessibleName(tr("Bubble definition"));
    m_definitionBox->addItem(tr("Idle share of the run (chapter): (p−1)/(m+p−1)"));
    m_definitionBox->addItem(tr("Bubble over ideal time (Megatron-LM): (p−1)/m"));
    m_definitionBox->setToolTip(
        tr("Two definitions of one bubble: the idle share of the whole run, or the idle time "
           "measured against the time the work alone would take."));
    auto* defForm = new QFormLayout;
    defForm->addRow(tr("&Definition"), m_definitionBox);
    bubbleBox->addLayout(defForm);
    connect(m_definitionBox, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_definition = i == 0 ? BubbleDefinition::IdleShare : BubbleDefinition::OverIdeal;
        inputEdited();
    });

    // Pass times matter less to the lesson: behind a disclosure.
    auto* times = new QWidget;
    auto* timesBox = new QVBoxLayout(times);
    timesBox->setContentsMargins(12, 0, 0, 0);
    for (const auto& [key, label, symbol, what, initial] :
         {std::tuple{"pipeline.forward_time", tr("&Forward time"), "f",
                     tr("Time of one microbatch's forward pass through one stage."), d.forwardTime},
          std::tuple{"pipeline.backward_time", tr("&Backward time"), "b",
                     tr("Time of one microbatch's backward pass through one stage (about twice "
                        "the forward)."),
                     d.backwardTime}}) {
        ParameterSpec spec = makeSpec(key, label, symbol, tr("time units"), what, 0.1, 10);
        spec.decimals = 2;
        spec.step = 0.1;
        addControl(timesBox, spec, initial);
    }
    addDisclosure(box, tr("Pass times"), times, tr("Show pass times"));
}

void PipelineTab::buildGanttChart()
{
    m_gantt = new GanttPanel("pipeline-gantt");
    m_gantt->setRowAxisTitle(tr("Pipeline stage (one rank each)"));
    m_gantt->setTimeUnit(tr("time units"));
}

void PipelineTab::buildBubbleChart()
{
    m_bubble = new ChartViewPanel("pipeline-bubble");
    QChart* chart = m_bubble->chart();
    chart->setTitle(tr("The bubble shrinks as m grows"));
    m_microbatchAxis = new QLogValueAxis;
    m_microbatchAxis->setBase(2);
    m_microbatchAxis->setLabelFormat("%.0f");
    m_microbatchAxis->setMinorTickCount(0);
    m_bubbleAxis = new QValueAxis;
    chart->addAxis(m_microbatchAxis, Qt::AlignBottom);
    chart->addAxis(m_bubbleAxis, Qt::AlignLeft);
    styleAxis(m_microbatchAxis, tr("Microbatches m"));
    styleAxis(m_bubbleAxis, tr("Bubble (%)"));

    // GPipe and 1F1B share one curve: GPipe wide underneath, 1F1B dashed on top, so both show.
    const std::array<QPen, 3> pens = {
        QPen(scheduleColor(Schedule::GPipe), kLineWidth + 5, Qt::SolidLine, Qt::FlatCap),
        QPen(scheduleColor(Schedule::OneFOneB), kLineWidth, Qt::DashLine, Qt::FlatCap),
        QPen(scheduleColor(Schedule::Interleaved), kLineWidth, Qt::DashDotLine, Qt::FlatCap)};
    for (Schedule s : schedules()) {
        auto* line = new QLineSeries;
        line->setPen(pens[static_cast<std::size_t>(scheduleIndex(s))]);
        chart->addSeries(line);
        line->attachAxis(m_microbatchAxis);
        line->attachAxis(m_bubbleAxis);
        m_curves << line;
    }
    m_current = new QScatterSeries;
    m_current->setMarkerSize(16);
    m_current->setColor(palette::kBlack);
    m_current->setBorderColor(Qt::white);
    chart->addSeries(m_current);
    m_current->attachAxis(m_microbatchAxis);
    m_current->attachAxis(m_bubbleAxis);
}

void PipelineTab::buildMemoryChart()
{
    m_memory = new ChartViewPanel("pipeline-memory");
    QChart* chart = m_memory->chart();
    chart->setTitle(tr("Activations held: 1F1B keeps fewer"));
    m_bars = new QBarSeries;
    for (Schedule s : schedules()) {
        auto* set = new QBarSet(scheduleName(s));
        set->setColor(scheduleColor(s));
        // No white outline: at 32 stages the bars are a few pixels wide and it would eat them.
        set->setBorderColor(scheduleColor(s));
        m_sets << set;
        m_bars->append(set);
    }
    m_bars->setBarWidth(0.75);
    chart->addSeries(m_bars);
    m_stageAxis = new QValueAxis;
    m_heldAxis = new QValueAxis;
    chart->addAxis(m_stageAxis, Qt::AlignBottom);
    chart->addAxis(m_heldAxis, Qt::AlignLeft);
    m_bars->attachAxis(m_stageAxis);
    m_bars->attachAxis(m_heldAxis);
    styleAxis(m_stageAxis, tr("Pipeline stage (one rank each)"));
    styleAxis(m_heldAxis, tr("Peak held (microbatches)"));
    m_stageAxis->setGridLineVisible(false);
}

QList<ChartPanel*> PipelineTab::charts() const
{
    return {m_gantt, m_bubble, m_memory};
}

QLineSeries* PipelineTab::bubbleCurve(Schedule schedule) const
{
    return m_curves.value(scheduleIndex(schedule));
}

QBarSet* PipelineTab::memoryBars(Schedule schedule) const
{
    return m_sets.value(scheduleIndex(schedule));
}

void PipelineTab::setScenario(const core::Scenario& scenario)
{
    const core::PipelineInputs& in = scenario.pipeline;
    loadValue(control("pipeline.stages"), static_cast<double>(in.stages));
    loadValue(control("pipeline.microbatches"), static_cast<double>(in.microbatches));
    loadValue(control("pipeline.virtual_stages"), static_cast<double>(in.virtualStages));
    loadValue(control("pipeline.forward_time"), in.forwardTime);
    loadValue(control("pipeline.backward_time"), in.backwardTime);
    m_exactForward = in.forwardTime;
    m_shownForward = control("pipeline.forward_time")->value();
    m_exactBackward = in.backwardTime;
    m_shownBackward = control("pipeline.backward_time")->value();
    {
        const QSignalBlocker block(m_scheduleBox);
        m_scheduleBox->setCurrentIndex(scheduleIndex(in.schedule));
    }
    readControls();
    // A schedule the combo does not list (only a hand-made struct could hold one) reaches core,
    // which names it.
    m_inputs.schedule = in.schedule;
    scheduleRefresh();
}

void PipelineTab::writeScenario(core::Scenario& scenario) const
{
    scenario.pipeline = m_inputs;
}

void PipelineTab::readControls()
{
    m_inputs.stages = control("pipeline.stages")->wholeValue();
    m_inputs.microbatches = control("pipeline.microbatches")->wholeValue();
    m_inputs.virtualStages = control("pipeline.virtual_stages")->wholeValue();
    m_inputs.schedule = schedules().value(m_scheduleBox->currentIndex(), Schedule::GPipe);
    // A time from a file stays exact until its control is moved.
    const double f = control("pipeline.forward_time")->value();
    const double b = control("pipeline.backward_time")->value();
    m_inputs.forwardTime = f == m_shownForward ? m_exactForward : f;
    m_inputs.backwardTime = b == m_shownBackward ? m_exactBackward : b;
}

PipelineTab::Computed PipelineTab::compute(const core::PipelineInputs& in)
{
    Computed c;
    c.in = in;
    // The memory chart compares every schedule at the same p, m and v: the other schedules are
    // simulated on a second thread while this one simulates the schedule shown (at p = 32,
    // m = 256 that halves the wait). One core refuses (the interleaved schedule when m is not
    // a multiple of p) is left out, not shown as an error.
    std::vector<std::pair<std::size_t, std::future<std::vector<double>>>> others;
    for (Schedule s : schedules()) {
        if (s == in.schedule)
            continue;
        core::PipelineInputs other = in;
        other.schedule = s;
        others.emplace_back(static_cast<std::size_t>(scheduleIndex(s)),
                            std::async(std::launch::async, [other] {
                                return core::simulatePipeline(other).peakActivations;
                            }));
    }
    c.result = core::simulatePipeline(in);
    c.held[static_cast<std::size_t>(scheduleIndex(in.schedule))] = c.result.peakActivations;
    for (auto& [k, peak] : others) {
        try {
            c.held[k] = peak.get();
        } catch (const core::InputError&) {
            c.held[k].reset();
        }
    }
    return c;
}

void PipelineTab::recompute()
{
    core::validate(m_inputs);
    // Passes over the three simulations (in double: v is unbounded unless interleaved).
    const double pm =
        static_cast<double>(m_inputs.stages) * static_cast<double>(m_inputs.microbatches);
    const double passes = 4 * pm + 2 * pm * static_cast<double>(m_inputs.virtualStages);
    if (passes <= static_cast<double>(kBackgroundPasses)) {
        Computed c = compute(m_inputs);
        present(c);
        return;
    }
    computeInBackground([this, in = m_inputs]() -> std::function<void()> {
        auto c = std::make_shared<Computed>(compute(in));
        return [this, c] {
            present(*c);
        };
    });
}

void PipelineTab::present(Computed& c)
{
    const core::PipelineInputs& in = c.in;
    const core::PipelineResult& r = c.result;
    const bool interleaved = in.schedule == Schedule::Interleaved;
    const bool idleShare = m_definition == BubbleDefinition::IdleShare;
    const std::int64_t p = in.stages, m = in.microbatches, v = in.virtualStages;

    // The closed form with today's numbers written in.
    const QString formula = idleShare ? (interleaved ? tr("(p−1)/(v·m+p−1)") : tr("(p−1)/(m+p−1)"))
                                      : (interleaved ? tr("(p−1)/(v·m)") : tr("(p−1)/m"));
    const QString substituted = idleShare
        ? (interleaved ? tr("(%1−1)/(%2·%3+%1−1)").arg(p).arg(v).arg(m)
                       : tr("(%1−1)/(%2+%1−1)").arg(p).arg(m))
        : (interleaved ? tr("(%1−1)/(%2·%3)").arg(p).arg(v).arg(m) : tr("(%1−1)/%2").arg(p).arg(m));
    const double measured = idleShare ? r.simulatedBubbleFraction : r.simulatedBubbleOverIdeal;
    const double closed = idleShare ? r.bubbleFraction : r.bubbleOverIdeal;

    // Gantt chart.
    const int chunks = interleaved ? static_cast<int>(v) : 1;
    m_gantt->setTitle(
        interleaved
            ? tr("%1: %2 stages × %3 chunks, %4 microbatches")
                  .arg(scheduleName(in.schedule))
                  .arg(p)
                  .arg(v)
                  .arg(m)
            : tr("%1: %2 stages, %3 microbatches").arg(scheduleName(in.schedule)).arg(p).arg(m));
    m_gantt->setFigures(
        {idleShare ? tr("Measured on this schedule: %1 of the run idle").arg(percent(measured))
                   : tr("Measured on this schedule: bubble = %1 of the ideal time")
                         .arg(percent(measured)),
         tr("Closed form %1 = %2 = %3").arg(formula, substituted, percent(closed))});
    m_gantt->setTimeAxisTitle(
        tr("Time (time units: forward f = %1, backward b = %2 per microbatch and stage%3)")
            .arg(formatNumber(in.forwardTime, 4), formatNumber(in.backwardTime, 4),
                 interleaved ? tr("; a chunk's pass takes 1/v of it") : QString()));
    m_gantt->setSchedule(std::move(c.result.events), static_cast<int>(p), chunks, r.makespan);

    // Bubble against microbatches: the closed forms of all three schedules, and the simulated
    // figure of the current one as the point.
    const std::int64_t top = axisMicrobatches(m);
    // The curves depend on p, v, the definition and the axis length only: moving m moves the
    // point, and the curves are left alone (replacing them costs Qt Charts a relayout).
    const CurveKey key{p, v, idleShare, top};
    if (key != m_curveKey) {
        m_curveKey = key;
        // Every m up to 32, then whole m about 3 % apart: on a log axis that is smooth, and a
        // few hundred points keep the thick and dashed strokes cheap to draw.
        const auto next = [](std::int64_t mb) {
            return std::max(mb + 1, static_cast<std::int64_t>(std::llround(mb * 1.03)));
        };
        for (Schedule s : schedules()) {
            const std::int64_t chunksPerStage = s == Schedule::Interleaved ? v : 1;
            QList<QPointF> points;
            for (std::int64_t mb = 1; mb <= top; mb = mb < top && next(mb) > top ? top : next(mb))
                points.append(
                    {static_cast<double>(mb),
                     100.0
                         * (idleShare ? core::pipelineBubbleFraction(p, mb, chunksPerStage)
                                      : core::pipelineBubbleOverIdeal(p, mb, chunksPerStage))});
            bubbleCurve(s)->replace(points);
        }
        setName(bubbleCurve(Schedule::GPipe), scheduleName(Schedule::GPipe));
        setName(bubbleCurve(Schedule::OneFOneB), tr("1F1B"));
        setName(bubbleCurve(Schedule::Interleaved), tr("Interleaved, v = %1").arg(v));
        m_microbatchAxis->setRange(1, static_cast<double>(top));
        setTitle(m_microbatchAxis, tr("Microbatches m (log scale; p = %1, v = %2)").arg(p).arg(v));
        setTitle(m_bubbleAxis,
                 idleShare ? tr("Idle share of run (%)") : tr("Bubble over ideal (%)"));
    }
    m_current->replace(QList<QPointF>{{static_cast<double>(m), 100.0 * measured}});
    setName(m_current, tr("Yours (simulated)"));
    setNiceRange(m_bubbleAxis, 0, std::max(100.0, 110.0 * std::max(measured, closed)));

    // Activations held per stage, schedule by schedule. Bars change in place and only the
    // difference in stages is added or removed: Qt Charts rebuilds every bar it is handed anew.
    double most = 1.0;
    for (Schedule s : schedules()) {
        const auto k = static_cast<std::size_t>(scheduleIndex(s));
        QBarSet* set = memoryBars(s);
        QList<qreal> values(static_cast<qsizetype>(p), 0.0);
        if (c.held[k])
            for (std::size_t i = 0; i < c.held[k]->size(); ++i) {
                values[static_cast<qsizetype>(i)] = (*c.held[k])[i];
                most = std::max(most, (*c.held[k])[i]);
            }
        if (set->count() > values.size())
            set->remove(static_cast<int>(values.size()),
                        set->count() - static_cast<int>(values.size()));
        for (int i = 0; i < set->count(); ++i)
            if (set->at(i) != values[i])
                set->replace(i, values[i]);
        if (set->count() < values.size())
            set->append(values.mid(set->count()));
        const QString label = s == Schedule::Interleaved
            ? (c.held[k] ? tr("Interleaved, v = %1").arg(v)
                         : tr("Interleaved: m not a multiple of p"))
            : scheduleName(s);
        if (set->label() != label)
            set->setLabel(label);
    }
    if (m_axisStages != p) {
        m_axisStages = p;
        // Whole stage numbers as ticks, bars centred on them.
        setNiceRange(m_stageAxis, 0, static_cast<double>(std::max<std::int64_t>(p - 1, 1)), true);
        m_stageAxis->setRange(-0.5, static_cast<double>(p) - 0.5);
        m_stageAxis->setTickAnchor(0);
    }
    setNiceRange(m_heldAxis, 0, most * 1.06);

    // The figures line: the phenomenon first, then the lesson of the schedule on screen.
    const std::size_t gp = static_cast<std::size_t>(scheduleIndex(Schedule::GPipe));
    const std::size_t ofob = static_cast<std::size_t>(scheduleIndex(Schedule::OneFOneB));
    const std::size_t il = static_cast<std::size_t>(scheduleIndex(Schedule::Interleaved));
    const auto firstStage = [&](std::size_t k) {
        return c.held[k] ? formatNumber(c.held[k]->front(), 3) : QString("–");
    };
    QString headline = idleShare
        ? tr("<b>This pipeline idles %1 of the time</b> (measured on the simulated "
             "schedule); closed form %2 = %3 = <b>%4</b>. Makespan %5 time units.")
              .arg(percent(measured), formula, substituted, percent(closed),
                   formatNumber(r.makespan, 4))
        : tr("<b>The bubble adds %1 to the ideal time</b> (measured: idle over busy "
             "stage-time); closed form %2 = %3 = <b>%4</b>. As a share of the run: %5 "
             "idle. Makespan %6 time units.")
              .arg(percent(measured), formula, substituted, percent(closed),
                   percent(r.simulatedBubbleFraction), formatNumber(r.makespan, 4));
    const double plain =
        idleShare ? core::pipelineBubbleFraction(p, m) : core::pipelineBubbleOverIdeal(p, m);
    QString lesson;
    if (!interleaved) {
        lesson = tr("%1 does <i>not</i> shrink the bubble: same %2 as %3, since it reorders "
                    "passes but fills and drains alike. It saves memory: the first stage holds %4 "
                    "microbatches of activations instead of %5.")
                     .arg(coloured(Schedule::OneFOneB), percent(plain), coloured(Schedule::GPipe),
                          firstStage(ofob), firstStage(gp));
    } else {
        lesson =
            tr("%1 with v = %2 cuts the bubble from %3 (%4) to %5: fill and drain take 1/v "
               "as long. The price: v times more sends between stages, and the first stage holds "
               "%6 microbatches of activations against %7 for 1F1B.")
                .arg(coloured(Schedule::Interleaved))
                .arg(v)
                .arg(percent(plain), coloured(Schedule::OneFOneB), percent(closed), firstStage(il),
                     firstStage(ofob));
    }
    figuresLabel()->setText(headline + "<br>" + lesson);

    // The explanation beside the charts speaks the chapter's definition whatever the switch.
    const QString chapterForm = interleaved
        ? tr("(p−1)/(v·m+p−1) = (%1−1)/(%2·%3+%1−1)").arg(p).arg(v).arg(m)
        : tr("(p−1)/(m+p−1) = (%1−1)/(%2+%1−1)").arg(p).arg(m);
    m_explanationValues = {
        {"stages", formatWhole(p)},
        {"microbatches", formatWhole(m)},
        {"schedule", scheduleName(in.schedule)},
        {"formula", chapterForm},
        {"bubble", percent(r.bubbleFraction)},
        {"simulated", percent(r.simulatedBubbleFraction)},
        {"makespan", tr("%1 time units").arg(formatNumber(r.makespan, 4))},
        {"megatron",
         interleaved ? tr("%1 (interleaved: (p−1)/(v·m))").arg(percent(r.bubbleOverIdeal))
                     : percent(r.bubbleOverIdeal)},
        {"peak_gpipe", firstStage(gp)},
        {"peak_1f1b", firstStage(ofob)},
    };
}

} // namespace scalelab::ui
