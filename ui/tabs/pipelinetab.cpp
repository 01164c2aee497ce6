#include "pipelinetab.h"

#include "backgroundrunner.h"
#include "chartdata.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "fields.h"
#include "ganttpanel.h"
#include "legendrows.h"
#include "parametercontrol.h"

#include <QAbstractAxis>
#include <QAbstractSeries>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QComboBox>
#include <QFontMetricsF>
#include <QFormLayout>
#include <QGraphicsSimpleTextItem>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>

namespace scalelab::ui {

using core::Schedule;

namespace {

// Layout of the tab.
constexpr int kDisclosureIndent = 12; // pass times, indented under their button
constexpr int kGanttStretch = 3; // the Gantt's row's height to the lower charts' row's, as 3 : 2
// The bubble chart.
constexpr double kGPipeExtraWidth = 5; // GPipe's curve is this much wider than 1F1B's on it
constexpr double kCurrentMarkerSize = 16;
// The bubble axis ends 10 % above the largest figure (in percent of it), never below 100 %.
constexpr double kBubbleHeadroomPercent = 110;
constexpr double kBubbleAxisMinimum = 100;
// The "p = 4, v = 2" note, this far in from the plot's top right corner.
constexpr double kNoteInset = 6;
// The memory chart.
constexpr double kBarWidth = 0.75;
constexpr double kStagePad = 0.5; // half a stage: a bar group is at most one stage wide
constexpr double kHeldHeadroom = 1.06; // the held axis ends this far above the tallest bar

// Setters that leave Qt Charts alone when nothing changes: every change relays the chart out.
void setName(QAbstractSeries* series, const QString& name)
{
    if (series->name() != name)
        series->setName(name);
}

void setTitle(QAbstractAxis* axis, const QString& title)
{
    setAxisTitle(axis, title);
}

} // namespace

PipelineTab::PipelineTab(document::ScenarioDocument* document, QWidget* parent)
    : Tab(document, core::Section::Pipeline, parent)
{
    setObjectName("pipeline");
    buildControls();
    buildGanttChart();
    buildBubbleChart();
    buildMemoryChart();
    placeCharts();
    sectionShown();
    drawFirst();
}

void PipelineTab::placeCharts()
{
    // In the tab's scrolling grid: the Gantt across the width, the bubble and memory charts
    // side by side under it (one above the other when the room is narrow). Never squeezed
    // below a readable size: on a small screen in projector mode the area scrolls instead.
    setCharts({m_gantt, m_bubble, m_memory}, 2, kMinChartChars, Lead::Row, kGanttStretch);
}

PipelineTab::BubbleDefinition PipelineTab::bubbleDefinition() const
{
    return scenario().pipelineDisplay.megatronBubble ? BubbleDefinition::OverIdeal
                                                     : BubbleDefinition::IdleShare;
}

void PipelineTab::buildControls()
{
    QVBoxLayout* box = addGroup(tr("Pipeline"));
    addControl(box, "pipeline.stages");
    addControl(box, "pipeline.microbatches");
    auto* form = new QFormLayout;
    box->addLayout(form);
    m_scheduleBox = addChoice(form, "pipeline.schedule");
    m_scheduleBox->setAccessibleName(tr("Pipeline schedule"));
    addControl(box, "pipeline.virtual_stages");

    // Pass times matter less to the lesson: behind a disclosure. Made before the next group so
    // that Tab reaches them in the order they sit.
    auto* times = new QWidget;
    auto* timesBox = new QVBoxLayout(times);
    timesBox->setContentsMargins(kDisclosureIndent, 0, 0, 0);
    addControl(timesBox, "pipeline.forward_time");
    addControl(timesBox, "pipeline.backward_time");
    // W: the zero-bubble and DualPipe schedules run it apart from B.
    addControl(timesBox, "pipeline.weight_time");
    addDisclosure(box, tr("Pass times"), times, tr("Show pass times"));

    QVBoxLayout* bubbleBox = addGroup(tr("Bubble"));
    auto* definitionForm = new QFormLayout;
    bubbleBox->addLayout(definitionForm);
    m_definitionBox = addChoice(definitionForm, "pipeline.bubble_definition");
    m_definitionBox->setAccessibleName(tr("Bubble definition"));
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
    const std::array<QPen, kPipelineSchedules> pens = {
        QPen(scheduleColor(Schedule::GPipe), kLineWidth + kGPipeExtraWidth, Qt::SolidLine,
             Qt::FlatCap),
        QPen(scheduleColor(Schedule::OneFOneB), kLineWidth, Qt::DashLine, Qt::FlatCap),
        QPen(scheduleColor(Schedule::Interleaved), kLineWidth, Qt::DashDotLine, Qt::FlatCap),
        QPen(scheduleColor(Schedule::ZeroBubbleH1), kLineWidth, Qt::DotLine, Qt::FlatCap),
        QPen(scheduleColor(Schedule::ZeroBubbleH2), kLineWidth, Qt::DashDotDotLine, Qt::FlatCap),
        QPen(scheduleColor(Schedule::DualPipe), kLineWidth, Qt::SolidLine, Qt::FlatCap),
        // DualPipeV's curve is DualPipe's (the same formula per device): dashed on top of it.
        QPen(scheduleColor(Schedule::DualPipeV), kLineWidth * 0.5, Qt::DashLine, Qt::FlatCap)};
    for (Schedule s : schedules()) {
        auto* line = new QLineSeries;
        // The schedule's scenario name ("1f1b"): what a lesson step highlights it by.
        line->setObjectName(
            document::findField(u"pipeline.schedule")->choices[static_cast<std::size_t>(s)]);
        line->setPen(pens[scheduleIndex(s)]);
        chart->addSeries(line);
        line->attachAxis(m_microbatchAxis);
        line->attachAxis(m_bubbleAxis);
        m_curves << line;
    }
    m_current = new QScatterSeries;
    m_current->setMarkerSize(kCurrentMarkerSize);
    m_current->setColor(palette::kBlack);
    m_current->setBorderColor(Qt::white);
    chart->addSeries(m_current);
    m_current->attachAxis(m_microbatchAxis);
    m_current->attachAxis(m_bubbleAxis);
    m_shapeNote = new QGraphicsSimpleTextItem(chart);
    connect(chart, &QChart::plotAreaChanged, this, &PipelineTab::followBubblePlot);
    // The simulated point's legend entry is a dot like the point: as a square it would be
    // DualPipeV's, whose curve is black too.
    for (QLegendMarker* marker : chart->legend()->markers(m_current))
        marker->setShape(QLegend::MarkerShapeCircle);
}

void PipelineTab::followBubblePlot()
{
    // Ticks at every power of two while their labels fit the plot's width, else at every
    // second or third ("128" and "512" were cut to "..." on a narrow chart).
    const QFontMetricsF fm(m_microbatchAxis->labelsFont());
    const double label = fm.horizontalAdvance(QStringLiteral("1024")) + 2 * fm.averageCharWidth();
    const QRectF plot = m_bubble->chart()->plotArea();
    const double width = plot.width();
    const double decades = std::log2(std::max(2.0, m_microbatchAxis->max()));
    double base = 2;
    while (width > 0 && base < 16 && width / (decades / std::log2(base) + 1) < label)
        base *= 2;
    if (m_microbatchAxis->base() != base)
        m_microbatchAxis->setBase(base);

    styleNote(m_shapeNote, chartFonts().axisTitle);
    // Top right: the curves fall towards the bottom as m grows, so the corner stays clear.
    m_shapeNote->setPos(plot.right() - m_shapeNote->boundingRect().width() - kNoteInset,
                        plot.top() + kNoteInset);
}

void PipelineTab::buildMemoryChart()
{
    m_memory = new ChartViewPanel("pipeline-memory");
    QChart* chart = m_memory->chart();
    chart->setTitle(tr("Activations held: 1F1B keeps fewer"));
    m_bars = new QBarSeries;
    for (Schedule s : memorySchedules()) {
        auto* set = new QBarSet(scheduleName(s));
        set->setColor(scheduleColor(s));
        // No outline at all: at 32 stages the bars are a few pixels wide and a white one would
        // eat them, and stroking an outline of the fill's own colour costs the raster engine
        // several times what the fill does (a millisecond a step at 32 stages).
        set->setPen(Qt::NoPen);
        m_sets << set;
        m_bars->append(set);
    }
    m_bars->setBarWidth(kBarWidth);
    chart->addSeries(m_bars);
    m_stageAxis = new QValueAxis;
    m_heldAxis = new QValueAxis;
    chart->addAxis(m_stageAxis, Qt::AlignBottom);
    chart->addAxis(m_heldAxis, Qt::AlignLeft);
    m_bars->attachAxis(m_stageAxis);
    m_bars->attachAxis(m_heldAxis);
    styleAxis(m_stageAxis, tr("Pipeline stage (one rank each)"));
    styleAxis(m_heldAxis, tr("Peak held (microbatches)"), tr("Microbatches"));
    m_stageAxis->setGridLineVisible(false);
    // A schedule core refuses says why in its legend entry, so names change as m and p move.
    keepLegendInRows(chart);
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

void PipelineTab::recompute()
{
    const core::PipelineInputs in = inputs();
    core::validate(in);
    if (comparisonPasses(in) <= static_cast<double>(kBackgroundPasses)) {
        m_halves.reset();
        PipelineComparison c = comparePipelineSchedules(in, m_known ? &*m_known : nullptr);
        m_known = entriesOf(c);
        present(c);
        return;
    }
    // Larger: the shown schedule on the charts' worker, drawn as soon as it is done, while the
    // side worker simulates the six others; what compares them (the bars, the figures line,
    // the explanation) follows when both halves of these inputs are in. The window paints the
    // Gantt chart meanwhile instead of waiting for all seven.
    m_halves = Halves{in, std::nullopt, std::nullopt};
    computeInBackground([this, in]() -> std::function<void()> {
        auto c = std::make_shared<PipelineComparison>(simulateShownSchedule(in));
        return [this, c] {
            presentShown(std::move(*c));
        };
    });
    sideRunner()->run([this, in, known = m_known]() -> std::function<void()> {
        auto c = std::make_shared<PipelineComparison>(
            simulateOtherSchedules(in, known ? &*known : nullptr));
        return [this, c] {
            if (!m_halves || m_halves->in != c->in)
                return; // superseded by newer inputs
            m_halves->others = std::move(*c);
            presentComparison();
        };
    });
}

void PipelineTab::present(PipelineComparison& c)
{
    // The definition is read now, not when the worker started: a switch meanwhile shows at once.
    const bool idleShare = bubbleDefinition() == BubbleDefinition::IdleShare;
    const PipelineFigures figures = pipelineFigures(c, idleShare);
    showGantt(c, figures); // takes the events: nothing after it reads them
    showBubbleCurves(c, figures, idleShare);
    showComparison(c, figures);
}

void PipelineTab::showComparison(const PipelineComparison& c, const PipelineFigures& figures)
{
    showActivationBars(c);
    figuresLabel()->setText(figures.figuresLine);
    m_explanationValues = figures.explanation;
}

void PipelineTab::presentShown(PipelineComparison&& shown)
{
    if (!m_halves || m_halves->in != shown.in)
        return; // superseded by newer inputs
    // The Gantt chart and the bubble chart need the shown schedule alone.
    const bool idleShare = bubbleDefinition() == BubbleDefinition::IdleShare;
    const PipelineFigures figures = pipelineFigures(shown, idleShare);
    showGantt(shown, figures); // takes the events
    showBubbleCurves(shown, figures, idleShare);
    m_halves->shown = std::move(shown);
    presentComparison();
}

void PipelineTab::presentComparison()
{
    if (!m_halves || !m_halves->shown || !m_halves->others)
        return;
    PipelineComparison c = std::move(*m_halves->shown);
    mergeOtherSchedules(c, std::move(*m_halves->others));
    m_halves.reset();
    m_known = entriesOf(c);
    showComparison(c, pipelineFigures(c, bubbleDefinition() == BubbleDefinition::IdleShare));
}

void PipelineTab::showGantt(PipelineComparison& c, const PipelineFigures& figures)
{
    m_gantt->setTitle(figures.ganttTitle);
    m_gantt->setFigures(figures.ganttFigures);
    m_gantt->setTimeAxisTitle(figures.timeAxisTitle);
    m_gantt->setRowAxisTitle(figures.rowAxisTitle);
    m_gantt->setRowLabels(figures.rowLabels);
    m_gantt->setSchedule(std::move(c.result.events), figures.rows, figures.chunks,
                         c.result.makespan);
}

void PipelineTab::showBubbleCurves(const PipelineComparison& c, const PipelineFigures& figures,
                                   bool idleShare)
{
    // The closed forms of all five schedules, and the simulated figure of the current one as
    // the point.
    const std::int64_t p = c.in.stages, m = c.in.microbatches, v = c.in.virtualStages;
    const std::int64_t top = bubbleAxisMicrobatches(m);
    // The curves depend on p, v, the pass times (zero-bubble curves), the definition and the
    // axis length only: moving m moves the
    // point, and the curves are left alone (replacing them costs Qt Charts a relayout).
    const CurveKey key{p, v, idleShare, top, c.in.forwardTime, c.in.backwardTime, c.in.weightTime};
    if (key != m_curveKey) {
        m_curveKey = key;
        const BubbleCurveTexts texts = bubbleCurveTexts(p, v, idleShare);
        for (Schedule s : schedules()) {
            bubbleCurve(s)->replace(bubbleCurvePoints(s, c.in, top, idleShare));
            setName(bubbleCurve(s), texts.curveNames[scheduleIndex(s)]);
        }
        if (m_microbatchAxis->min() != 1 || m_microbatchAxis->max() != static_cast<double>(top))
            m_microbatchAxis->setRange(1, static_cast<double>(top));
        setTitle(m_microbatchAxis, texts.microbatchAxisTitle);
        setTitle(m_bubbleAxis, texts.bubbleAxisTitle);
        if (m_shapeNote->text() != texts.shapeNote)
            m_shapeNote->setText(texts.shapeNote);
        followBubblePlot();
    }
    m_current->replace(QList<QPointF>{{static_cast<double>(m), 100.0 * figures.measured}});
    setName(m_current, tr("Yours (simulated)"));
    setStickyRange(m_bubbleAxis, 0,
                   std::max(kBubbleAxisMinimum,
                            kBubbleHeadroomPercent * std::max(figures.measured, figures.closed)));
}

void PipelineTab::showActivationBars(const PipelineComparison& c)
{
    const ActivationChart chart = activationChart(c);
    QList<std::pair<QBarSet*, QList<qreal>>> values;
    for (Schedule s : memorySchedules()) {
        const ActivationBars& bars = chart.bars[scheduleIndex(s)];
        QBarSet* set = memoryBars(s);
        values.append({set, bars.values});
        if (set->label() != bars.label)
            set->setLabel(bars.label);
    }
    setBarValues(values); // one layout of the bars for every schedule's changes
    const std::int64_t p = c.in.stages;
    if (m_axisStages != p) {
        m_axisStages = p;
        // Whole stage numbers as ticks, bars centred on them, half a stage of room at each end
        // so the first and last stages' bars show whole. (A value axis rather than a category
        // axis: at 32 stages it thins its labels out instead of eliding every one of them.)
        setPaddedRange(m_stageAxis, 0, static_cast<double>(p - 1), kStagePad);
    }
    setStickyRange(m_heldAxis, 0, chart.most * kHeldHeadroom);
}

} // namespace scalelab::ui
