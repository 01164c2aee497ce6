#pragma once

// What the pipeline tab shows, computed without a widget: the comparison of the seven schedules
// at the same p, m and v (the simulated schedule, the activations every schedule holds), the
// bubble curves, the activation bars and every text of the tab. The tab only hands these to its
// charts; tests call them directly.

#include "scalelab/core/error.h"
#include "scalelab/core/pipeline.h"

#include <QColor>
#include <QHash>
#include <QList>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace scalelab::ui {

/// How many schedules the tab compares.
inline constexpr std::size_t kPipelineSchedules = 7;
/// The schedules of the bubble chart's curves (the memory chart's bars: the first five), in legend
/// order: GPipe, 1F1B, interleaved, ZB-H1, ZB-H2, DualPipe, DualPipeV.
QList<core::Schedule> pipelineSchedules();
/// The position of `schedule` in pipelineSchedules().
std::size_t scheduleIndex(core::Schedule schedule);
/// "GPipe", "1F1B", "Interleaved 1F1B", "ZB-H1", "ZB-H2", "DualPipe", "DualPipeV".
QString scheduleName(core::Schedule schedule);
/// One colour per schedule, the same in the bubble chart, the memory chart and the figures line.
QColor scheduleColor(core::Schedule schedule);

/// The simulated schedule, and the peak activations per stage of every schedule at the same p,
/// m and v.
struct PipelineComparison {
    core::PipelineInputs in;
    core::PipelineResult result;
    /// Peak activations per stage of every schedule (pipelineSchedules() order); nullopt where
    /// core refuses the schedule (interleaved when m is not a multiple of p).
    std::array<std::optional<std::vector<double>>, kPipelineSchedules> held;
    /// Qi et al.'s bubble of every schedule (the most a stage idles inside its own run), in the
    /// same order; nullopt where core refuses the schedule.
    std::array<std::optional<double>, kPipelineSchedules> idle;
    /// Parameters per device of every schedule, in stages' worth (1, or 2 for DualPipe and
    /// DualPipeV); nullopt where core refuses the schedule.
    std::array<std::optional<double>, kPipelineSchedules> parameters;
};

/// Passes over the seven simulations of a comparison (in double: v is unbounded unless
/// interleaved), the measure of its cost.
double comparisonPasses(const core::PipelineInputs& in);
/// What simulating `schedule` depends on: `in` as that schedule, with v left at 1 unless it is
/// the interleaved schedule (the only one that splits a stage into chunks).
core::PipelineInputs inputsFor(core::Schedule schedule, const core::PipelineInputs& in);
/// A comparison's entries (its inputs, and every schedule's held, idle and parameters), without
/// the shown schedule's result: what a later comparison may take over.
PipelineComparison entriesOf(const PipelineComparison& c);
/// Simulates `in` and the six other schedules (on other threads). Throws core::InputError
/// when core refuses `in` itself. A schedule other than the shown one whose inputs (inputsFor)
/// are those it had in `known` takes its entries from there instead of being simulated again:
/// a step of v changes the interleaved schedule's alone.
PipelineComparison comparePipelineSchedules(const core::PipelineInputs& in,
                                            const PipelineComparison* known = nullptr);
/// A comparison in two halves, for inputs too large to simulate on the GUI thread: the shown
/// schedule (its result and its own entries), and the six others (their entries only, no
/// result, taken from `known` as comparePipelineSchedules does); mergeOtherSchedules makes them
/// the comparison comparePipelineSchedules gives.
PipelineComparison simulateShownSchedule(const core::PipelineInputs& in);
PipelineComparison simulateOtherSchedules(const core::PipelineInputs& in,
                                          const PipelineComparison* known = nullptr);
void mergeOtherSchedules(PipelineComparison& shown, PipelineComparison&& others);
/// The schedules other than the shown one, split for the comparison's two threads: this
/// thread's share (after the shown one, when `shownHere`) and the worker's, about even in
/// simulation time.
std::pair<QList<core::Schedule>, QList<core::Schedule>>
splitSchedules(const core::PipelineInputs& in, bool shownHere = true);

/// The right-hand end of the microbatch axis: a power of two past the slider's 256, or past m.
std::int64_t bubbleAxisMicrobatches(std::int64_t m);
/// The m of a bubble curve up to `top`: every m up to 19, then whole m about 8 % apart (smooth
/// on a log axis, and few enough points to keep thick and dashed strokes cheap), ending at top.
std::vector<std::int64_t> bubbleCurveMicrobatches(std::int64_t top);
/// The closed-form bubble of `schedule` (in %) at every m of bubbleCurveMicrobatches(top), for
/// p stages and v chunks (interleaved only), as the idle share or over the ideal time.
QList<QPointF> bubbleCurvePoints(core::Schedule schedule, std::int64_t p, std::int64_t v,
                                 std::int64_t top, bool idleShare);
/// The same for any schedule: the zero-bubble ones' closed form (Qi et al.'s bubble against a
/// stage's work m (f + b + w)) depends on the pass times of `in` too.
QList<QPointF> bubbleCurvePoints(core::Schedule schedule, const core::PipelineInputs& in,
                                 std::int64_t top, bool idleShare);

/// One schedule's bars of the memory chart.
struct ActivationBars {
    QList<qreal> values; ///< peak activations of each stage; zeros where core refused
    QString label; ///< the legend entry
};
/// The memory chart's bars, schedule by schedule, and the tallest bar (at least 1).
struct ActivationChart {
    std::array<ActivationBars, kPipelineSchedules> bars;
    double most = 1.0;
};
ActivationChart activationChart(const PipelineComparison& comparison);

/// The texts of the bubble chart, which depend on p, v and the definition only.
struct BubbleCurveTexts {
    std::array<QString, kPipelineSchedules> curveNames; ///< pipelineSchedules() order
    QString microbatchAxisTitle;
    QString bubbleAxisTitle;
    /// The p and v the curves are for, "p = 4, v = 2": a note in the plot. Names and titles
    /// stay the same at any p and v, so a step of either does not lay the chart out again.
    QString shapeNote;
};
BubbleCurveTexts bubbleCurveTexts(std::int64_t p, std::int64_t v, bool idleShare);

/// Every figure and text of the tab for one comparison and one bubble definition.
struct PipelineFigures {
    double measured = 0; ///< the simulated bubble in the chosen definition (a fraction)
    double closed = 0; ///< the closed form in the chosen definition
    int chunks = 1; ///< chunks per stage the Gantt chart colours
    QString ganttTitle;
    QStringList ganttFigures; ///< measured, then closed form
    QString timeAxisTitle;
    int rows = 1; ///< the Gantt's rows: stages, or devices for DualPipeV
    QString rowAxisTitle; ///< the Gantt's row axis
    /// Each row's label: empty for plain numbers; "0: 0, 7" (device: the stages it holds) for
    /// the DualPipe schedules.
    QStringList rowLabels;
    QString figuresLine; ///< the tab's line of live figures (rich text)
    /// For a zero-bubble or DualPipe schedule, the published figures (Qi et al.; the DualPipe
    /// README's table) against the simulated ones, and why they may differ; empty otherwise.
    QString publishedLine;
    /// The values of resources/explanations/pipeline.html (the chapter's definition always).
    QHash<QString, QString> explanation;
};
PipelineFigures pipelineFigures(const PipelineComparison& comparison, bool idleShare);

/// A bubble figure as a percentage with one decimal ("20.0 %"), two for small values.
QString bubblePercent(double fraction);

} // namespace scalelab::ui
