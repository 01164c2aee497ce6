#pragma once

#include "pipelinepresenter.h"
#include "scalelab/core/pipeline.h"
#include "tab.h"

#include <QHash>
#include <optional>

QT_BEGIN_NAMESPACE
class QBarSeries;
class QBarSet;
class QComboBox;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace scalelab::ui {

class ChartViewPanel;
class GanttPanel;

/// Pipeline schedules: where the bubble comes from (a Gantt chart of the simulated passes), how
/// it shrinks as microbatches grow and with interleaving, and why 1F1B holds fewer activations
/// than GPipe for the same bubble.
class PipelineTab : public Tab {
    Q_OBJECT

public:
    /// The two ways the literature states the bubble.
    enum class BubbleDefinition {
        IdleShare, ///< the chapter's: idle share of the whole run, (p-1)/(m+p-1)
        OverIdeal, ///< Megatron-LM's: bubble time over ideal time, (p-1)/m
    };

    explicit PipelineTab(document::ScenarioDocument* document = nullptr, QWidget* parent = nullptr);

    /// The title in the window, before the tab is made as well.
    static QString titleText() { return tr("Pipeline schedules"); }
    QString title() const override { return titleText(); }
    QList<ChartPanel*> charts() const override;

    /// The inputs the charts show: the document's.
    const core::PipelineInputs& inputs() const { return scenario().pipeline; }
    /// The bubble definition the document holds (pipeline.bubble_definition).
    BubbleDefinition bubbleDefinition() const;
    /// Today's numbers for resources/explanations/pipeline.html, from the last refresh.
    QHash<QString, QString> explanationValues() const override { return m_explanationValues; }
    /// Schedules of the bubble chart's curves, in legend order.
    static QList<core::Schedule> schedules() { return pipelineSchedules(); }
    /// Schedules of the memory chart's bars: all but DualPipe and DualPipeV, whose p + 1
    /// activations and 2x parameters the figures line states (seven sets of 32 stages' bars
    /// would be under a pixel wide).
    static QList<core::Schedule> memorySchedules() { return pipelineSchedules().mid(0, 5); }

    GanttPanel* ganttChart() const { return m_gantt; }
    ChartViewPanel* bubbleChart() const { return m_bubble; }
    ChartViewPanel* memoryChart() const { return m_memory; }
    /// The bubble chart's curve of a schedule and the memory chart's bars of one (null for the
    /// DualPipe schedules).
    QLineSeries* bubbleCurve(core::Schedule schedule) const;
    /// The bubble chart's note of the p and v its curves are for.
    QGraphicsSimpleTextItem* shapeNote() const { return m_shapeNote; }
    QScatterSeries* currentPoint() const { return m_current; }
    QBarSet* memoryBars(core::Schedule schedule) const;

    /// Passes (over all seven simulated schedules, comparisonPasses) above which the core runs
    /// on worker threads: the shown schedule on the charts' worker, the six others on the side
    /// worker. At 32 stages x 256 microbatches (163,840) the seven take about 3 ms on two
    /// threads, which the GUI thread would otherwise spend waiting.
    static constexpr std::int64_t kBackgroundPasses = 20'000;

protected:
    void recompute() override;

private:
    /// Shows a comparison: the Gantt chart, the bubble curves, the bars, the figures line.
    void present(PipelineComparison& comparison);
    /// For inputs past kBackgroundPasses: the shown schedule's half (the Gantt and bubble
    /// charts), then, once the other half is in too, what compares all seven.
    void presentShown(PipelineComparison&& shown);
    void presentComparison();
    void showGantt(PipelineComparison& comparison, const PipelineFigures& figures);
    void showBubbleCurves(const PipelineComparison& comparison, const PipelineFigures& figures,
                          bool idleShare);
    void showActivationBars(const PipelineComparison& comparison);
    /// What compares the seven schedules: the bars, the figures line, the explanation values.
    void showComparison(const PipelineComparison& comparison, const PipelineFigures& figures);

    void buildControls();
    void buildGanttChart();
    void buildBubbleChart();
    void buildMemoryChart();
    /// The Gantt chart across the full width; bubble and memory side by side under it.
    void placeCharts();
    /// The bubble chart's microbatch ticks thinned to its plot's width, and its "p = 4, v = 2"
    /// in the plot's top right corner.
    void followBubblePlot();

    QHash<QString, QString> m_explanationValues;
    /// The two halves of a comparison computed on the workers, for the newest inputs.
    struct Halves {
        core::PipelineInputs in;
        std::optional<PipelineComparison> shown, others;
    };
    std::optional<Halves> m_halves;
    /// The entries of the last comparison shown whole: a schedule whose inputs have not changed
    /// since is taken from here, not simulated again.
    std::optional<PipelineComparison> m_known;

    QComboBox* m_scheduleBox = nullptr;
    QComboBox* m_definitionBox = nullptr;

    GanttPanel* m_gantt = nullptr;

    /// What the bubble curves were last drawn for: p, v, definition, axis length.
    struct CurveKey {
        std::int64_t p = 0, v = 0;
        bool idleShare = true;
        std::int64_t top = 0;
        double f = 0, b = 0, w = 0;
        bool operator==(const CurveKey&) const = default;
    };
    CurveKey m_curveKey;
    std::int64_t m_axisStages = 0;

    ChartViewPanel* m_bubble = nullptr;
    QList<QLineSeries*> m_curves;
    QScatterSeries* m_current = nullptr;
    QLogValueAxis* m_microbatchAxis = nullptr;
    QValueAxis* m_bubbleAxis = nullptr;
    /// What p and v the curves are drawn for: a text of the scene, since a new axis title or
    /// legend name on every p or v step would lay the whole chart out again.
    QGraphicsSimpleTextItem* m_shapeNote = nullptr;

    ChartViewPanel* m_memory = nullptr;
    QBarSeries* m_bars = nullptr;
    QList<QBarSet*> m_sets;
    QValueAxis* m_stageAxis = nullptr;
    QValueAxis* m_heldAxis = nullptr;
};

} // namespace scalelab::ui
