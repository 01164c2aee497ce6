#include "pipelinepresenter.h"

#include "chartstyle.h"
#include "format.h"

#include <QCoreApplication>
#include <QThread>
#include <algorithm>
#include <cmath>
#include <future>
#include <utility>

namespace scalelab::ui {

using core::Schedule;

namespace {

// The texts keep the tab's translation context: they were the tab's and still read as its.
struct Text {
    Q_DECLARE_TR_FUNCTIONS(PipelineTab)
};

// Past the first score of m, the curves' points are whole m this factor apart: about 7 px on a
// 600 px log axis to 512, smooth to the eye. (At 3 % apart, Qt Charts' outline of each curve,
// worked out again for every new point, took a third of a step of p.)
constexpr double kCurveGrowth = 1.08;
// The microbatch axis ends at a power of two from this (past the slider's 256) up to kAxisCap.
constexpr std::int64_t kAxisStart = 512;
constexpr std::int64_t kAxisCap = std::int64_t{1} << 40;

// The schedule's name in its chart colour, for the figures line.
QString coloured(Schedule s)
{
    return QString("<b><span style=\"color:%1\">%2</span></b>")
        .arg(scheduleColor(s).name(), scheduleName(s).toHtmlEscaped());
}

/// The closed form in the chosen definition, as symbols and with today's numbers written in.
struct ClosedForm {
    QString formula, substituted;
};

// Qi et al.'s closed form: their bubble size s over a stage's work m (f + b + w).
ClosedForm zeroBubbleForm(const core::PipelineInputs& in, bool idleShare)
{
    const bool h1 = in.schedule == Schedule::ZeroBubbleH1;
    const QString size = h1 ? Text::tr("(p−1)(f+b−w)") : Text::tr("(p−1)(f+b−2w)");
    const QString sized =
        (h1 ? Text::tr("(%1−1)(%2+%3−%4)") : Text::tr("(%1−1)(%2+%3−2·%4)"))
            .arg(in.stages)
            .arg(formatNumber(in.forwardTime, 4), formatNumber(in.backwardTime, 4),
                 formatNumber(in.weightTime, 4));
    const QString work = Text::tr("m(f+b+w)");
    const QString worked =
        Text::tr("%1(%2+%3+%4)")
            .arg(in.microbatches)
            .arg(formatNumber(in.forwardTime, 4), formatNumber(in.backwardTime, 4),
                 formatNumber(in.weightTime, 4));
    if (idleShare)
        return {Text::tr("%1/(%1+%2)").arg(size, work), Text::tr("%1/(%1+%2)").arg(sized, worked)};
    return {Text::tr("%1/%2").arg(size, work), Text::tr("%1/%2").arg(sized, worked)};
}

// The DualPipe README's closed form: its bubble (p/2−1)(F&B+B−3W), with F&B = f+b+w and its
// B = b+w, over one device's work (m passes of each kind, 2m for DualPipeV).
ClosedForm dualForm(const core::PipelineInputs& in, bool idleShare)
{
    const bool v = in.schedule == Schedule::DualPipeV;
    const QString f = formatNumber(in.forwardTime, 4), b = formatNumber(in.backwardTime, 4),
                  w = formatNumber(in.weightTime, 4);
    const QString size = Text::tr("(p/2−1)(f+2b−w)");
    const QString sized = Text::tr("(%1/2−1)(%2+2·%3−%4)").arg(in.stages).arg(f, b, w);
    const QString work = v ? Text::tr("2m(f+b+w)") : Text::tr("m(f+b+w)");
    const QString worked = (v ? Text::tr("2·%1(%2+%3+%4)") : Text::tr("%1(%2+%3+%4)"))
                               .arg(in.microbatches)
                               .arg(f, b, w);
    if (idleShare)
        return {Text::tr("%1/(%1+%2)").arg(size, work), Text::tr("%1/(%1+%2)").arg(sized, worked)};
    return {Text::tr("%1/%2").arg(size, work), Text::tr("%1/%2").arg(sized, worked)};
}

ClosedForm closedForm(const core::PipelineInputs& in, bool idleShare)
{
    if (core::isDualSchedule(in.schedule))
        return dualForm(in, idleShare);
    if (core::splitsBackward(in.schedule))
        return zeroBubbleForm(in, idleShare);
    const bool interleaved = in.schedule == Schedule::Interleaved;
    const std::int64_t p = in.stages, m = in.microbatches, v = in.virtualStages;
    if (idleShare)
        return interleaved
            ? ClosedForm{Text::tr("(p−1)/(v·m+p−1)"),
                         Text::tr("(%1−1)/(%2·%3+%1−1)").arg(p).arg(v).arg(m)}
            : ClosedForm{Text::tr("(p−1)/(m+p−1)"), Text::tr("(%1−1)/(%2+%1−1)").arg(p).arg(m)};
    return interleaved
        ? ClosedForm{Text::tr("(p−1)/(v·m)"), Text::tr("(%1−1)/(%2·%3)").arg(p).arg(v).arg(m)}
        : ClosedForm{Text::tr("(p−1)/m"), Text::tr("(%1−1)/%2").arg(p).arg(m)};
}

// The first stage's peak activations of schedule `s`, or a dash where core refused it.
QString firstStage(const PipelineComparison& c, Schedule s)
{
    const auto& held = c.held[scheduleIndex(s)];
    return held ? formatNumber(held->front(), 3) : QString("–");
}

// What schedule `s` idles inside one stage's run (Qi et al.'s bubble), from the comparison.
QString firstStageIdle(const PipelineComparison& c, Schedule s)
{
    const auto& idle = c.idle[scheduleIndex(s)];
    return idle ? formatNumber(*idle, 4) : QString("–");
}

QString ganttTitle(const core::PipelineInputs& in)
{
    const std::int64_t p = in.stages, m = in.microbatches, v = in.virtualStages;
    if (in.schedule == Schedule::Interleaved)
        return Text::tr("%1: %2 stages × %3 chunks, %4 microbatches")
            .arg(scheduleName(in.schedule))
            .arg(p)
            .arg(v)
            .arg(m);
    if (in.schedule == Schedule::DualPipe)
        return Text::tr("%1: %2 stages on %2 devices, %3 microbatches (%4 from each end)")
            .arg(scheduleName(in.schedule))
            .arg(p)
            .arg(m)
            .arg(m / 2);
    if (in.schedule == Schedule::DualPipeV)
        return Text::tr("%1: %2 stages on %3 devices, %4 microbatches down the V and back")
            .arg(scheduleName(in.schedule))
            .arg(p)
            .arg(p / 2)
            .arg(m);
    return Text::tr("%1: %2 stages, %3 microbatches").arg(scheduleName(in.schedule)).arg(p).arg(m);
}

QStringList ganttFigures(const PipelineFigures& f, const ClosedForm& form, bool idleShare)
{
    return {idleShare ? Text::tr("Measured on this schedule: %1 of the run idle")
                            .arg(bubblePercent(f.measured))
                      : Text::tr("Measured on this schedule: bubble = %1 of the ideal time")
                            .arg(bubblePercent(f.measured)),
            Text::tr("Closed form %1 = %2 = %3")
                .arg(form.formula, form.substituted, bubblePercent(f.closed))};
}

QString timeAxisTitle(const core::PipelineInputs& in)
{
    if (core::isDualSchedule(in.schedule))
        return Text::tr("Time (time units: F = %1, B = %2, W = %3; a whole backward B+W and an "
                        "overlapped F&B = F+B+W are one pass each)")
            .arg(formatNumber(in.forwardTime, 4), formatNumber(in.backwardTime, 4),
                 formatNumber(in.weightTime, 4));
    if (core::splitsBackward(in.schedule))
        return Text::tr("Time (time units per microbatch and stage: forward F = %1, input "
                        "gradient B = %2, weight gradient W = %3)")
            .arg(formatNumber(in.forwardTime, 4), formatNumber(in.backwardTime, 4),
                 formatNumber(in.weightTime, 4));
    return Text::tr("Time (time units: forward f = %1, backward b = %2 per microbatch and stage%3)")
        .arg(formatNumber(in.forwardTime, 4), formatNumber(in.backwardTime, 4),
             in.schedule == Schedule::Interleaved ? Text::tr("; a chunk's pass takes 1/v of it")
                                                  : QString());
}

// The figures line's first sentence: the phenomenon, measured and in closed form.
QString headline(const PipelineComparison& c, const PipelineFigures& f, const ClosedForm& form,
                 bool idleShare)
{
    const core::PipelineResult& r = c.result;
    if (core::isDualSchedule(c.in.schedule))
        return Text::tr("<b>Each device idles at most %1 %2</b> (measured inside each device's "
                        "own run); closed form %3 = %4 = <b>%5</b>. Makespan %6 time units.")
            .arg(bubblePercent(f.measured),
                 idleShare ? Text::tr("of its run") : Text::tr("of its work"), form.formula,
                 form.substituted, bubblePercent(f.closed), formatNumber(r.makespan, 4));
    if (core::splitsBackward(c.in.schedule))
        return Text::tr("<b>Each stage idles at most %1 %2</b> (measured inside each stage's "
                        "own run, as Qi et al. count); closed form %3 = %4 = <b>%5</b>. "
                        "Makespan %6 time units.")
            .arg(bubblePercent(f.measured),
                 idleShare ? Text::tr("of its run") : Text::tr("of its work"), form.formula,
                 form.substituted, bubblePercent(f.closed), formatNumber(r.makespan, 4));
    if (idleShare)
        return Text::tr("<b>This pipeline idles %1 of the time</b> (measured on the simulated "
                        "schedule); closed form %2 = %3 = <b>%4</b>. Makespan %5 time units.")
            .arg(bubblePercent(f.measured), form.formula, form.substituted, bubblePercent(f.closed),
                 formatNumber(r.makespan, 4));
    return Text::tr("<b>The bubble adds %1 to the ideal time</b> (measured: idle over busy "
                    "stage-time); closed form %2 = %3 = <b>%4</b>. As a share of the run: %5 "
                    "idle. Makespan %6 time units.")
        .arg(bubblePercent(f.measured), form.formula, form.substituted, bubblePercent(f.closed),
             bubblePercent(r.simulatedBubbleFraction), formatNumber(r.makespan, 4));
}

// The lesson of a zero-bubble schedule: what splitting W from B buys and what it costs.
QString zeroBubbleLesson(const PipelineComparison& c)
{
    const core::PipelineResult& r = c.result;
    const bool h1 = c.in.schedule == Schedule::ZeroBubbleH1;
    return Text::tr("%1 runs the weight gradient W apart from the input gradient B: only B is "
                    "on the path back, and W fills the time a stage would wait. Each stage "
                    "idles at most %2 time units inside its own run (%3 for %4); with the "
                    "optimizer's synchronising step the whole run still idles %5. The first "
                    "stage holds %6 microbatches of activations (%7 for 1F1B)%8.")
        .arg(coloured(c.in.schedule), formatNumber(r.bubbleTime, 4))
        .arg(firstStageIdle(c, Schedule::OneFOneB), coloured(Schedule::OneFOneB),
             bubblePercent(r.simulatedBubbleFraction), firstStage(c, c.in.schedule),
             firstStage(c, Schedule::OneFOneB),
             h1 ? QString() : Text::tr(", the price of its extra warm-up forwards"));
}

// Qi et al.'s published comparison (f = b = w) against this simulation, for the zb schedules.
QString publishedLine(const PipelineComparison& c)
{
    const core::PipelineInputs& in = c.in;
    const std::int64_t p = in.stages, m = in.microbatches;
    const bool h1 = in.schedule == Schedule::ZeroBubbleH1;
    const double published = h1 ? double(p - 1) / double(3 * m) : 0.0;
    const bool equalTimes = in.forwardTime == in.backwardTime && in.backwardTime == in.weightTime;
    const std::int64_t need = h1 ? p : 2 * p - 1;
    QString why;
    if (!equalTimes)
        why = Text::tr("the paper's figure assumes f = b = w; here they differ.");
    else if (m < need)
        why = Text::tr("the paper's figure assumes m ≥ %1; here m = %2.").arg(need).arg(m);
    else
        why = Text::tr("equal, as the tests check.");
    return Text::tr("Published (Qi et al. 2024, bubble rate at f = b = w): %1 %2 = %3. "
                    "Simulated: %4 (the most a stage idles inside its own run, over m(f+b+w)): %5")
        .arg(scheduleName(in.schedule), h1 ? Text::tr("(p−1)/(3m)") : Text::tr("0 for m ≥ 2p−1"),
             bubblePercent(published), bubblePercent(c.result.bubbleRate), why);
}

// The lesson of DualPipe and DualPipeV: what feeding from both ends buys and what it costs.
QString dualLesson(const PipelineComparison& c)
{
    const core::PipelineResult& r = c.result;
    const QString start = c.in.schedule == Schedule::DualPipe
        ? Text::tr("%1 feeds microbatches from both ends: device i holds stages i and p−1−i, so "
                   "one direction's forward and the other's backward run side by side as one "
                   "overlapped F&B pass.")
              .arg(coloured(c.in.schedule))
        : Text::tr("%1 cuts DualPipe in half: %2 devices each hold stages i and p−1−i, and "
                   "every microbatch goes down the V and comes back.")
              .arg(coloured(c.in.schedule))
              .arg(r.devices);
    return start + " "
        + Text::tr("Each device idles at most %1 time units inside its own run (%2 for %3, %4 "
                   "for %5). The price: every device holds %6× the parameters of a 1F1B stage "
                   "(two stages) and %7 microbatches of activations (%8 for 1F1B).")
              .arg(formatNumber(r.bubbleTime, 4), firstStageIdle(c, Schedule::OneFOneB),
                   coloured(Schedule::OneFOneB), firstStageIdle(c, Schedule::ZeroBubbleH1),
                   coloured(Schedule::ZeroBubbleH1), formatNumber(r.parametersPerDevice, 3),
                   firstStage(c, c.in.schedule), firstStage(c, Schedule::OneFOneB));
}

// Why the simulated DualPipe bubble differs from the README's, or that it does not.
QString dualBubbleWhy(const core::PipelineInputs& in, double published, double simulated)
{
    if (simulated == published)
        return Text::tr("equal, as the tests check.");
    if (in.forwardTime != in.backwardTime || in.weightTime > in.backwardTime)
        return Text::tr("the README's formula is read off its diagram, where a forward and an "
                        "input-gradient backward take equally long (f = b) and a W no longer "
                        "(w ≤ b); here f = %1, b = %2, w = %3, so devices wait differently.")
            .arg(formatNumber(in.forwardTime, 4), formatNumber(in.backwardTime, 4),
                 formatNumber(in.weightTime, 4));
    return Text::tr("they differ at these times.");
}

// The DualPipe README's table (same number of stages) against this simulation.
QString dualPublishedLine(const PipelineComparison& c)
{
    const core::PipelineInputs& in = c.in;
    const core::PipelineResult& r = c.result;
    const double p = static_cast<double>(in.stages);
    const double published = core::dualPipeBubbleTime(in);
    const double held = *std::max_element(r.peakActivations.begin(), r.peakActivations.end());
    core::PipelineInputs zb = in;
    zb.schedule = Schedule::ZeroBubbleH1;
    const QString units = Text::tr("time units");
    return Text::tr("Published (DualPipe README, same number of stages; its B is b+w, and F&B is "
                    "f+b+w here): bubble (p/2−1)(F&B+B−3W) = %1 %2, parameters 2×, activations "
                    "p+1 = %3 per device. Simulated: bubble %4 %2 (the most a device idles "
                    "inside its own run): %5 Parameters %6×, activations %7: %8")
               .arg(formatNumber(published, 4), units, formatNumber(p + 1, 4),
                    formatNumber(r.bubbleTime, 4), dualBubbleWhy(in, published, r.bubbleTime),
                    formatNumber(r.parametersPerDevice, 3), formatNumber(held, 4),
                    held == p + 1 ? Text::tr("equal.") : Text::tr("they differ."))
        + " "
        + Text::tr("The README's other rows: 1F1B (p−1)(F+B) = %1 (simulated %2), ZB1P "
                   "(p−1)(F+B−2W) = %3 (ZB-H1 simulated %4).")
              .arg(formatNumber((p - 1) * (in.forwardTime + in.backwardTime + in.weightTime), 4),
                   firstStageIdle(c, Schedule::OneFOneB),
                   formatNumber(core::zeroBubbleBubbleTime(zb), 4),
                   firstStageIdle(c, Schedule::ZeroBubbleH1));
}

// The figures line's second sentence: the lesson of the schedule on screen.
QString lesson(const PipelineComparison& c, const PipelineFigures& f, bool idleShare)
{
    if (core::isDualSchedule(c.in.schedule))
        return dualLesson(c);
    if (core::splitsBackward(c.in.schedule))
        return zeroBubbleLesson(c);
    const std::int64_t p = c.in.stages, m = c.in.microbatches, v = c.in.virtualStages;
    const double plain =
        idleShare ? core::pipelineBubbleFraction(p, m) : core::pipelineBubbleOverIdeal(p, m);
    if (c.in.schedule != Schedule::Interleaved)
        return Text::tr("%1 does <i>not</i> shrink the bubble: same %2 as %3, since it reorders "
                        "passes but fills and drains alike. It saves memory: the first stage "
                        "holds %4 microbatches of activations instead of %5.")
            .arg(coloured(Schedule::OneFOneB), bubblePercent(plain), coloured(Schedule::GPipe),
                 firstStage(c, Schedule::OneFOneB), firstStage(c, Schedule::GPipe));
    return Text::tr("%1 with v = %2 cuts the bubble from %3 (%4) to %5: fill and drain take 1/v "
                    "as long. The price: v times more sends between stages, and the first stage "
                    "holds %6 microbatches of activations against %7 for 1F1B.")
        .arg(coloured(Schedule::Interleaved))
        .arg(v)
        .arg(bubblePercent(plain), coloured(Schedule::OneFOneB), bubblePercent(f.closed),
             firstStage(c, Schedule::Interleaved), firstStage(c, Schedule::OneFOneB));
}

// The explanation beside the charts speaks the chapter's definition whatever the switch.
QHash<QString, QString> explanationValues(const PipelineComparison& c)
{
    const core::PipelineInputs& in = c.in;
    const core::PipelineResult& r = c.result;
    const bool interleaved = in.schedule == Schedule::Interleaved;
    const std::int64_t p = in.stages, m = in.microbatches, v = in.virtualStages;
    const QString chapterForm = interleaved
        ? Text::tr("(p−1)/(v·m+p−1) = (%1−1)/(%2·%3+%1−1)").arg(p).arg(v).arg(m)
        : Text::tr("(p−1)/(m+p−1) = (%1−1)/(%2+%1−1)").arg(p).arg(m);
    return {
        {"stages", formatWhole(p)},
        {"microbatches", formatWhole(m)},
        {"schedule", scheduleName(in.schedule)},
        {"formula", chapterForm},
        {"bubble", bubblePercent(r.bubbleFraction)},
        {"simulated", bubblePercent(r.simulatedBubbleFraction)},
        {"makespan", Text::tr("%1 time units").arg(formatNumber(r.makespan, 4))},
        {"megatron",
         interleaved
             ? Text::tr("%1 (interleaved: (p−1)/(v·m))").arg(bubblePercent(r.bubbleOverIdeal))
             : bubblePercent(r.bubbleOverIdeal)},
        {"peak_gpipe", firstStage(c, Schedule::GPipe)},
        {"peak_1f1b", firstStage(c, Schedule::OneFOneB)},
    };
}

} // namespace

QList<Schedule> pipelineSchedules()
{
    return {Schedule::GPipe,        Schedule::OneFOneB,     Schedule::Interleaved,
            Schedule::ZeroBubbleH1, Schedule::ZeroBubbleH2, Schedule::DualPipe,
            Schedule::DualPipeV};
}

std::size_t scheduleIndex(Schedule s)
{
    switch (s) {
    case Schedule::GPipe:
        return 0;
    case Schedule::OneFOneB:
        return 1;
    case Schedule::Interleaved:
        return 2;
    case Schedule::ZeroBubbleH1:
        return 3;
    case Schedule::ZeroBubbleH2:
        return 4;
    case Schedule::DualPipe:
        return 5;
    case Schedule::DualPipeV:
        return 6;
    }
    return 0;
}

QString scheduleName(Schedule s)
{
    switch (s) {
    case Schedule::GPipe:
        return Text::tr("GPipe");
    case Schedule::OneFOneB:
        return Text::tr("1F1B");
    case Schedule::Interleaved:
        return Text::tr("Interleaved 1F1B");
    case Schedule::ZeroBubbleH1:
        return Text::tr("ZB-H1");
    case Schedule::ZeroBubbleH2:
        return Text::tr("ZB-H2");
    case Schedule::DualPipe:
        return Text::tr("DualPipe");
    case Schedule::DualPipeV:
        return Text::tr("DualPipeV");
    }
    return {};
}

// The curves also differ by line style, so colour is never the only difference.
QColor scheduleColor(Schedule s)
{
    switch (s) {
    case Schedule::GPipe:
        return palette::kVermillion;
    case Schedule::OneFOneB:
        return palette::kBlue;
    case Schedule::Interleaved:
        return palette::kGreen;
    case Schedule::ZeroBubbleH1:
        return palette::kPurple;
    case Schedule::ZeroBubbleH2:
        return palette::kOrange;
    case Schedule::DualPipe:
        return palette::kSkyBlue;
    case Schedule::DualPipeV:
        return palette::kBlack;
    }
    return palette::kBlack;
}

QString bubblePercent(double fraction)
{
    const double v = 100.0 * fraction;
    return QString("%1 %").arg(v > 0 && v < 1 ? QString::number(v, 'f', 2)
                                              : QString::number(v, 'f', 1));
}

double comparisonPasses(const core::PipelineInputs& in)
{
    const double pm = static_cast<double>(in.stages) * static_cast<double>(in.microbatches);
    // GPipe and 1F1B 2 p m each, interleaved 2 p m v, ZB-H1 and ZB-H2 3 p m each, DualPipe
    // and DualPipeV at most 3 p m each.
    return 4 * pm + 2 * pm * static_cast<double>(in.virtualStages) + 12 * pm;
}

namespace {

// What the comparison keeps of another schedule's simulation; nullopt where core refuses it.
struct Summary {
    std::vector<double> held;
    double idle = 0, parameters = 1;
};

// Simulates `schedules` one after another: each simulation's events are freed before the next
// starts, so a worker holds one schedule's passes at a time.
std::vector<std::optional<Summary>> summarize(core::PipelineInputs in, QList<Schedule> schedules)
{
    std::vector<std::optional<Summary>> out;
    for (Schedule s : schedules) {
        in.schedule = s;
        try {
            core::PipelineResult r = core::simulatePipeline(in);
            out.push_back(
                Summary{std::move(r.peakActivations), r.bubbleTime, r.parametersPerDevice});
        } catch (const core::InputError&) {
            out.push_back(std::nullopt); // refused for these inputs: left out, not an error
        }
    }
    return out;
}

/// Rough time to simulate `s`, per p m passes' worth: measured by bench_core's
/// BM_PipelineEverySchedule at p = 32, m = 256 against GPipe's.
double simulationCost(Schedule s, std::int64_t v)
{
    switch (s) {
    case Schedule::GPipe:
        return 1.0;
    case Schedule::OneFOneB:
        return 1.4;
    case Schedule::Interleaved:
        return 1.25 * static_cast<double>(v);
    case Schedule::ZeroBubbleH1:
        return 1.85;
    case Schedule::ZeroBubbleH2:
        return 2.45;
    case Schedule::DualPipe:
        return 1.15;
    case Schedule::DualPipeV:
        return 1.05;
    }
    return 1.0;
}

} // namespace

std::pair<QList<Schedule>, QList<Schedule>> splitSchedules(const core::PipelineInputs& in,
                                                           bool shownHere)
{
    // The costliest first, each to the side with less work so far; this thread starts with the
    // shown schedule's when it simulates that one too.
    QList<Schedule> others = pipelineSchedules();
    others.removeAll(in.schedule);
    const auto cost = [&in](Schedule s) {
        return simulationCost(s, in.virtualStages);
    };
    std::stable_sort(others.begin(), others.end(),
                     [&cost](Schedule a, Schedule b) { return cost(a) > cost(b); });
    std::pair<QList<Schedule>, QList<Schedule>> out;
    double here = shownHere ? cost(in.schedule) : 0.0, there = 0;
    for (Schedule s : others) {
        if (here <= there) {
            out.first << s;
            here += cost(s);
        } else {
            out.second << s;
            there += cost(s);
        }
    }
    return out;
}

namespace {

/// Fills `c`'s entries of `schedules` from what summarize gave for them.
void takeSummaries(PipelineComparison& c, const QList<Schedule>& schedules,
                   std::vector<std::optional<Summary>> got)
{
    for (qsizetype i = 0; i < schedules.size(); ++i) {
        const std::size_t k = scheduleIndex(schedules[i]);
        auto& summary = got[static_cast<std::size_t>(i)];
        c.held[k] = summary ? std::optional(std::move(summary->held)) : std::nullopt;
        c.idle[k] = summary ? std::optional(summary->idle) : std::nullopt;
        c.parameters[k] = summary ? std::optional(summary->parameters) : std::nullopt;
    }
}

/// Copies into `c` the entries of `known` that hold for `c.in`, and takes their schedules out
/// of `schedules`.
void takeKnown(PipelineComparison& c, QList<Schedule>& schedules, const PipelineComparison* known)
{
    if (!known)
        return;
    schedules.removeIf([&c, known](Schedule s) {
        if (inputsFor(s, c.in) != inputsFor(s, known->in))
            return false;
        const std::size_t k = scheduleIndex(s);
        c.held[k] = known->held[k];
        c.idle[k] = known->idle[k];
        c.parameters[k] = known->parameters[k];
        return true;
    });
}

/// Simulates the shown schedule (when `shown`) and then `mine` on this thread while a worker
/// simulates `theirs`; what `known` holds for these inputs is taken, not simulated.
PipelineComparison simulateOnTwoThreads(const core::PipelineInputs& in, bool shown,
                                        QList<Schedule> mine, QList<Schedule> theirs,
                                        const PipelineComparison* known = nullptr)
{
    PipelineComparison c;
    c.in = in;
    takeKnown(c, mine, known);
    takeKnown(c, theirs, known);
    auto worker = std::async(theirs.isEmpty() ? std::launch::deferred : std::launch::async,
                             summarize, in, theirs);
    if (shown) {
        c.result = core::simulatePipeline(in);
        const std::size_t k = scheduleIndex(in.schedule);
        c.held[k] = c.result.peakActivations;
        c.idle[k] = c.result.bubbleTime;
        c.parameters[k] = c.result.parametersPerDevice;
    }
    takeSummaries(c, mine, summarize(in, mine));
    takeSummaries(c, theirs, worker.get());
    return c;
}

} // namespace

core::PipelineInputs inputsFor(Schedule schedule, const core::PipelineInputs& in)
{
    core::PipelineInputs at = in;
    at.schedule = schedule;
    if (schedule != Schedule::Interleaved)
        at.virtualStages = 1;
    return at;
}

PipelineComparison entriesOf(const PipelineComparison& c)
{
    PipelineComparison entries;
    entries.in = c.in;
    entries.held = c.held;
    entries.idle = c.idle;
    entries.parameters = c.parameters;
    return entries;
}

PipelineComparison comparePipelineSchedules(const core::PipelineInputs& in,
                                            const PipelineComparison* known)
{
    // Two threads for two cores: a worker simulates about half of the six other schedules
    // while this thread simulates the shown one and then the rest. (Three threads, one per
    // third, took longer on two cores than two even halves.) At most three simulations live at
    // once: at the simulator's 4,000,000 passes seven at once took more than the 2 GB a
    // scenario may use. One that core refuses (the interleaved schedule when m is not a
    // multiple of p, DualPipe at odd p) is left out, not an error.
    const auto [mine, theirs] = splitSchedules(in);
    return simulateOnTwoThreads(in, true, mine, theirs, known);
}

PipelineComparison simulateShownSchedule(const core::PipelineInputs& in)
{
    return simulateOnTwoThreads(in, true, {}, {});
}

PipelineComparison simulateOtherSchedules(const core::PipelineInputs& in,
                                          const PipelineComparison* known)
{
    // The window paints the shown schedule while these run: with the GUI thread busy, a
    // second thread here would only pay off on a machine with a core to spare for it. On two
    // cores it took the painting thread's core away (bench_redraw, ZB-H2 and DualPipe at
    // p = 32, m = 256: p99 lower with one thread here in 14 of 18 alternating runs).
    if (QThread::idealThreadCount() < 4) {
        QList<Schedule> others = pipelineSchedules();
        others.removeAll(in.schedule);
        return simulateOnTwoThreads(in, false, others, {}, known);
    }
    const auto [mine, theirs] = splitSchedules(in, false);
    return simulateOnTwoThreads(in, false, mine, theirs, known);
}

void mergeOtherSchedules(PipelineComparison& shown, PipelineComparison&& others)
{
    const std::size_t mine = scheduleIndex(shown.in.schedule);
    for (std::size_t k = 0; k < kPipelineSchedules; ++k) {
        if (k == mine)
            continue;
        shown.held[k] = std::move(others.held[k]);
        shown.idle[k] = others.idle[k];
        shown.parameters[k] = others.parameters[k];
    }
}

std::int64_t bubbleAxisMicrobatches(std::int64_t m)
{
    std::int64_t top = kAxisStart;
    while (top < 2 * m && top < kAxisCap)
        top *= 2;
    return top;
}

std::vector<std::int64_t> bubbleCurveMicrobatches(std::int64_t top)
{
    // Rounding keeps whole steps of one while kCurveGrowth adds less than one and a half.
    const auto next = [](std::int64_t mb) {
        return std::max(mb + 1, static_cast<std::int64_t>(std::llround(mb * kCurveGrowth)));
    };
    std::vector<std::int64_t> out;
    for (std::int64_t mb = 1; mb <= top; mb = mb < top && next(mb) > top ? top : next(mb))
        out.push_back(mb);
    return out;
}

QList<QPointF> bubbleCurvePoints(Schedule schedule, std::int64_t p, std::int64_t v,
                                 std::int64_t top, bool idleShare)
{
    const std::int64_t chunks = schedule == Schedule::Interleaved ? v : 1;
    QList<QPointF> points;
    for (std::int64_t mb : bubbleCurveMicrobatches(top))
        points.append({static_cast<double>(mb),
                       100.0
                           * (idleShare ? core::pipelineBubbleFraction(p, mb, chunks)
                                        : core::pipelineBubbleOverIdeal(p, mb, chunks))});
    return points;
}

QList<QPointF> bubbleCurvePoints(Schedule schedule, const core::PipelineInputs& in,
                                 std::int64_t top, bool idleShare)
{
    if (!core::splitsBackward(schedule))
        return bubbleCurvePoints(schedule, in.stages, in.virtualStages, top, idleShare);
    core::PipelineInputs at = in;
    at.schedule = schedule;
    const bool dual = core::isDualSchedule(schedule);
    if (dual && in.stages % 2 != 0)
        return {}; // no DualPipe on an odd number of stages
    // Qi et al.'s and the DualPipe README's bubbles do not depend on m; the work m (f + b + w)
    // of a stage (2m for a DualPipeV device) does.
    const double idle = dual ? core::dualPipeBubbleTime(at) : core::zeroBubbleBubbleTime(at);
    const double step = (schedule == Schedule::DualPipeV ? 2.0 : 1.0)
        * (in.forwardTime + in.backwardTime + in.weightTime);
    QList<QPointF> points;
    for (std::int64_t mb : bubbleCurveMicrobatches(top)) {
        const double work = static_cast<double>(mb) * step;
        points.append(
            {static_cast<double>(mb), 100.0 * (idleShare ? idle / (idle + work) : idle / work)});
    }
    return points;
}

ActivationChart activationChart(const PipelineComparison& c)
{
    ActivationChart chart;
    for (Schedule s : pipelineSchedules()) {
        const auto& held = c.held[scheduleIndex(s)];
        ActivationBars& bars = chart.bars[scheduleIndex(s)];
        bars.values = QList<qreal>(static_cast<qsizetype>(c.in.stages), 0.0);
        if (held)
            for (std::size_t i = 0; i < held->size(); ++i) {
                bars.values[static_cast<qsizetype>(i)] = (*held)[i];
                chart.most = std::max(chart.most, (*held)[i]);
            }
        if (s == Schedule::Interleaved)
            bars.label = held ? scheduleName(s) : Text::tr("Interleaved: m not a multiple of p");
        else if (s == Schedule::DualPipe && !held)
            bars.label = Text::tr("DualPipe: needs even p, even m ≥ 2p");
        else if (s == Schedule::DualPipeV && !held)
            bars.label = Text::tr("DualPipeV: needs even p, m ≥ p");
        else if (s == Schedule::DualPipeV)
            bars.label = Text::tr("DualPipeV (%1 devices)").arg(c.in.stages / 2);
        else
            bars.label = scheduleName(s);
    }
    return chart;
}

BubbleCurveTexts bubbleCurveTexts(std::int64_t p, std::int64_t v, bool idleShare)
{
    BubbleCurveTexts t;
    t.curveNames[scheduleIndex(Schedule::GPipe)] = scheduleName(Schedule::GPipe);
    t.curveNames[scheduleIndex(Schedule::OneFOneB)] = Text::tr("1F1B");
    t.curveNames[scheduleIndex(Schedule::Interleaved)] = scheduleName(Schedule::Interleaved);
    t.curveNames[scheduleIndex(Schedule::ZeroBubbleH1)] = scheduleName(Schedule::ZeroBubbleH1);
    t.curveNames[scheduleIndex(Schedule::ZeroBubbleH2)] = scheduleName(Schedule::ZeroBubbleH2);
    t.curveNames[scheduleIndex(Schedule::DualPipe)] = scheduleName(Schedule::DualPipe);
    t.curveNames[scheduleIndex(Schedule::DualPipeV)] = scheduleName(Schedule::DualPipeV);
    t.microbatchAxisTitle = Text::tr("Microbatches m (log scale)");
    t.shapeNote = Text::tr("p = %1, v = %2").arg(p).arg(v);
    t.bubbleAxisTitle =
        idleShare ? Text::tr("Idle share of run (%)") : Text::tr("Bubble over ideal (%)");
    return t;
}

PipelineFigures pipelineFigures(const PipelineComparison& c, bool idleShare)
{
    const core::PipelineResult& r = c.result;
    PipelineFigures f;
    f.measured = idleShare ? r.simulatedBubbleFraction : r.simulatedBubbleOverIdeal;
    const bool dual = core::isDualSchedule(c.in.schedule);
    if (core::splitsBackward(c.in.schedule)) {
        // Measured the way the closed form counts: the idle inside a stage's (device's) own run.
        const double work = static_cast<double>(c.in.microbatches)
            * (c.in.schedule == Schedule::DualPipeV ? 2.0 : 1.0)
            * (c.in.forwardTime + c.in.backwardTime + c.in.weightTime);
        f.measured = idleShare ? r.bubbleTime / (r.bubbleTime + work) : r.bubbleRate;
        f.publishedLine = dual ? dualPublishedLine(c) : publishedLine(c);
    }
    f.closed = idleShare ? r.bubbleFraction : r.bubbleOverIdeal;
    f.chunks = c.in.schedule == Schedule::Interleaved ? static_cast<int>(c.in.virtualStages)
        : dual                                        ? 2
                                                      : 1;
    f.rows = r.devices;
    f.rowAxisTitle = dual ? Text::tr("Device (holds stages i and p−1−i)")
                          : Text::tr("Pipeline stage (one rank each)");
    for (int d = 0; dual && d < r.devices; ++d)
        f.rowLabels << Text::tr("%1: %2, %3")
                           .arg(d)
                           .arg(core::modelStageOf(c.in, d, 0))
                           .arg(core::modelStageOf(c.in, d, 1));
    const ClosedForm form = closedForm(c.in, idleShare);
    f.ganttTitle = ganttTitle(c.in);
    f.ganttFigures = ganttFigures(f, form, idleShare);
    f.timeAxisTitle = timeAxisTitle(c.in);
    f.figuresLine = headline(c, f, form, idleShare) + "<br>" + lesson(c, f, idleShare);
    if (!f.publishedLine.isEmpty())
        f.figuresLine += "<br>" + f.publishedLine.toHtmlEscaped();
    f.explanation = explanationValues(c);
    return f;
}

} // namespace scalelab::ui
