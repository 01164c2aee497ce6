#include "pipelinepresenter.h"

#include "chartstyle.h"
#include "format.h"

#include <QCoreApplication>
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

// Past the first few dozen m, the curves' points are whole m this factor apart.
constexpr double kCurveGrowth = 1.03;
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

ClosedForm closedForm(const core::PipelineInputs& in, bool idleShare)
{
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

// The figures line's second sentence: the lesson of the schedule on screen.
QString lesson(const PipelineComparison& c, const PipelineFigures& f, bool idleShare)
{
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
    return {Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved, Schedule::ZeroBubbleH1,
            Schedule::ZeroBubbleH2};
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
    // GPipe and 1F1B 2 p m each, interleaved 2 p m v, ZB-H1 and ZB-H2 3 p m each.
    return 4 * pm + 2 * pm * static_cast<double>(in.virtualStages) + 6 * pm;
}

PipelineComparison comparePipelineSchedules(const core::PipelineInputs& in)
{
    PipelineComparison c;
    c.in = in;
    // The other schedules are simulated on a second thread while this one simulates the
    // schedule shown (at p = 32, m = 256 that halves the wait). One core refuses (the
    // interleaved schedule when m is not a multiple of p) is left out, not an error.
    using Summary = std::pair<std::vector<double>, double>; // peak activations, bubbleTime
    std::vector<std::pair<std::size_t, std::future<Summary>>> others;
    for (Schedule s : pipelineSchedules()) {
        if (s == in.schedule)
            continue;
        core::PipelineInputs other = in;
        other.schedule = s;
        others.emplace_back(scheduleIndex(s), std::async(std::launch::async, [other] {
                                core::PipelineResult r = core::simulatePipeline(other);
                                return Summary{std::move(r.peakActivations), r.bubbleTime};
                            }));
    }
    c.result = core::simulatePipeline(in);
    c.held[scheduleIndex(in.schedule)] = c.result.peakActivations;
    c.idle[scheduleIndex(in.schedule)] = c.result.bubbleTime;
    for (auto& [k, summary] : others) {
        try {
            Summary got = summary.get();
            c.held[k] = std::move(got.first);
            c.idle[k] = got.second;
        } catch (const core::InputError&) {
            c.held[k].reset();
            c.idle[k].reset();
        }
    }
    return c;
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
    // Qi et al.'s bubble does not depend on m; their work m (f + b + w) does.
    const double idle = core::zeroBubbleBubbleTime(at);
    const double step = in.forwardTime + in.backwardTime + in.weightTime;
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
        bars.label = s != Schedule::Interleaved ? scheduleName(s)
            : held ? Text::tr("Interleaved, v = %1").arg(c.in.virtualStages)
                   : Text::tr("Interleaved: m not a multiple of p");
    }
    return chart;
}

BubbleCurveTexts bubbleCurveTexts(std::int64_t p, std::int64_t v, bool idleShare)
{
    BubbleCurveTexts t;
    t.curveNames[scheduleIndex(Schedule::GPipe)] = scheduleName(Schedule::GPipe);
    t.curveNames[scheduleIndex(Schedule::OneFOneB)] = Text::tr("1F1B");
    t.curveNames[scheduleIndex(Schedule::Interleaved)] = Text::tr("Interleaved, v = %1").arg(v);
    t.curveNames[scheduleIndex(Schedule::ZeroBubbleH1)] = scheduleName(Schedule::ZeroBubbleH1);
    t.curveNames[scheduleIndex(Schedule::ZeroBubbleH2)] = scheduleName(Schedule::ZeroBubbleH2);
    t.microbatchAxisTitle = Text::tr("Microbatches m (log scale; p = %1, v = %2)").arg(p).arg(v);
    t.bubbleAxisTitle =
        idleShare ? Text::tr("Idle share of run (%)") : Text::tr("Bubble over ideal (%)");
    return t;
}

PipelineFigures pipelineFigures(const PipelineComparison& c, bool idleShare)
{
    const core::PipelineResult& r = c.result;
    PipelineFigures f;
    f.measured = idleShare ? r.simulatedBubbleFraction : r.simulatedBubbleOverIdeal;
    if (core::splitsBackward(c.in.schedule)) {
        // Measured the way the closed form counts: Qi et al.'s idle inside a stage's own run.
        const double work = static_cast<double>(c.in.microbatches)
            * (c.in.forwardTime + c.in.backwardTime + c.in.weightTime);
        f.measured = idleShare ? r.bubbleTime / (r.bubbleTime + work) : r.bubbleRate;
        f.publishedLine = publishedLine(c);
    }
    f.closed = idleShare ? r.bubbleFraction : r.bubbleOverIdeal;
    f.chunks = c.in.schedule == Schedule::Interleaved ? static_cast<int>(c.in.virtualStages) : 1;
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
