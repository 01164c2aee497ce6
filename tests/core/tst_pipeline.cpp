// Pipeline schedules: closed-form bubble, simulated GPipe, 1F1B, interleaved 1F1B, the
// zero-bubble ZB-H1 and ZB-H2 with the backward split into B and W, and DualPipe and DualPipeV
// with overlapped F&B passes.

#include "scalelab/core/pipeline.h"
#include "testhelpers.h"

#include <QTest>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace scalelab::core;

namespace {

/// The columns of a bubble formula's rows: p, m, v and the expected fraction as a numerator and
/// a denominator reduced by hand (so the expected value is not the implementation's expression).
void addBubbleColumns()
{
    QTest::addColumn<qint64>("p");
    QTest::addColumn<qint64>("m");
    QTest::addColumn<qint64>("v");
    QTest::addColumn<double>("numerator");
    QTest::addColumn<double>("denominator");
}

struct BubbleRow {
    qint64 p, m, v;
    double expected; ///< numerator / denominator: one correctly rounded division
};

/// The current row of a table made by addBubbleColumns.
BubbleRow fetchBubbleRow()
{
    QFETCH(qint64, p);
    QFETCH(qint64, m);
    QFETCH(qint64, v);
    QFETCH(double, numerator);
    QFETCH(double, denominator);
    return {p, m, v, numerator / denominator};
}

// Sums of doubles: every end time is a chain of at most 2(m v + p) rounded additions of positive
// durations (max() is exact), so its relative error is below that count times 2^-53. The rows
// here stay under 2100 additions, about 2.4e-13, so 1e-12 relative cannot fail by rounding.
constexpr double kTolerance = 1e-12;

bool closeRelative(double a, double b)
{
    return std::abs(a - b) <= kTolerance * std::max({std::abs(a), std::abs(b), 1.0});
}

PipelineInputs makeInputs(Schedule schedule, std::int64_t p, std::int64_t m, std::int64_t v,
                          double f, double b, double w = 0.0)
{
    PipelineInputs in;
    in.schedule = schedule;
    in.stages = p;
    in.microbatches = m;
    in.virtualStages = v;
    in.forwardTime = f;
    in.backwardTime = b;
    in.weightTime = w;
    return in;
}

const char* scheduleName(Schedule s)
{
    switch (s) {
    case Schedule::GPipe:
        return "gpipe";
    case Schedule::OneFOneB:
        return "1f1b";
    case Schedule::Interleaved:
        return "interleaved";
    case Schedule::ZeroBubbleH1:
        return "zb-h1";
    case Schedule::ZeroBubbleH2:
        return "zb-h2";
    case Schedule::DualPipe:
        return "dualpipe";
    case Schedule::DualPipeV:
        return "dualpipev";
    }
    return "?";
}

std::string where(const PipelineEvent& e)
{
    return std::string(1, "FBW"[static_cast<int>(e.pass)]) + "(stage " + std::to_string(e.stage)
        + ", mb " + std::to_string(e.microbatch) + ", chunk " + std::to_string(e.chunk) + ")";
}

// Checks a simulated schedule from its events alone, without the simulator's internals. Returns
// the first problem found, or an empty string.
std::string checkSchedule(const PipelineInputs& in, const PipelineResult& r)
{
    const int p = static_cast<int>(in.stages);
    const int m = static_cast<int>(in.microbatches);
    const int v = in.schedule == Schedule::Interleaved ? static_cast<int>(in.virtualStages) : 1;
    const int parts = p * v;
    const bool split = splitsBackward(in.schedule);
    const int kinds = split ? 3 : 2;
    // Durations by pass kind: a fused backward is B + W.
    const double duration[3] = {in.forwardTime / v,
                                split ? in.backwardTime : (in.backwardTime + in.weightTime) / v,
                                in.weightTime};

    if (r.events.size() != static_cast<std::size_t>(kinds * p * m * v))
        return "wrong number of events: " + std::to_string(r.events.size());

    // Every (microbatch, model part, pass) exactly once; ranges checked on the way.
    std::map<std::tuple<int, int, int>, const PipelineEvent*> byPass;
    for (const PipelineEvent& e : r.events) {
        if (e.stage < 0 || e.stage >= p || e.microbatch < 0 || e.microbatch >= m || e.chunk < 0
            || e.chunk >= v || static_cast<int>(e.pass) >= kinds)
            return "out of range: " + where(e);
        const auto key = std::make_tuple(e.microbatch, e.chunk * p + e.stage, int(e.pass));
        if (!byPass.emplace(key, &e).second)
            return "twice: " + where(e);
    }
    // As many distinct keys as the kinds p m v possible ones: each appears exactly once.

    auto find = [&](int mb, int part, Pass pass) {
        return byPass.at(std::make_tuple(mb, part, int(pass)));
    };

    double lastEnd = 0.0;
    for (std::size_t i = 0; i < r.events.size(); ++i) {
        const PipelineEvent& e = r.events[i];
        const bool firstOnStage = i == 0 || r.events[i - 1].stage != e.stage;
        if (!firstOnStage && r.events[i - 1].stage > e.stage)
            return "events not ordered by stage at " + where(e);
        if (!firstOnStage && e.start < r.events[i - 1].end)
            return "overlaps the previous pass on its stage: " + where(e);
        if (e.end != e.start + duration[int(e.pass)])
            return "wrong duration: " + where(e);

        // The dependency model, written out again here.
        const int part = e.chunk * p + e.stage;
        const PipelineEvent* dep = nullptr;
        if (e.pass == Pass::Weight)
            dep = find(e.microbatch, part, Pass::Backward);
        else if (e.pass == Pass::Forward && part > 0)
            dep = find(e.microbatch, part - 1, Pass::Forward);
        else if (e.pass == Pass::Backward && part < parts - 1)
            dep = find(e.microbatch, part + 1, Pass::Backward);
        else if (e.pass == Pass::Backward)
            dep = find(e.microbatch, part, Pass::Forward);
        if (dep && e.start < dep->end)
            return "starts before its dependency ends: " + where(e);

        // Nothing idles without a reason: a pass starts as soon as its stage and input allow.
        const double stageFree = firstOnStage ? 0.0 : r.events[i - 1].end;
        const double asap = std::max(stageFree, dep ? dep->end : 0.0);
        if (e.start != asap)
            return "does not start as soon as it could: " + where(e);
        lastEnd = std::max(lastEnd, e.end);
    }
    if (r.makespan != lastEnd)
        return "makespan is not the last end";

    // Idle time over stage-time, from the events themselves.
    double busy = 0.0;
    for (const PipelineEvent& e : r.events)
        busy += e.end - e.start;
    const double bubble = (p * r.makespan - busy) / (p * r.makespan);
    if (!closeRelative(bubble, r.simulatedBubbleFraction))
        return "simulated bubble " + std::to_string(r.simulatedBubbleFraction)
            + " but the events give " + std::to_string(bubble);

    // Peak in flight by a sweep over time: a pair is held over [forward start, backward end),
    // so at equal times releases come before acquisitions.
    if (r.peakInFlight.size() != static_cast<std::size_t>(p))
        return "peakInFlight has the wrong size";
    for (int s = 0; s < p; ++s) {
        std::vector<std::pair<double, int>> points;
        for (int mb = 0; mb < m; ++mb) {
            for (int c = 0; c < v; ++c) {
                points.emplace_back(find(mb, c * p + s, Pass::Forward)->start, +1);
                points.emplace_back(find(mb, c * p + s, Pass::Backward)->end, -1);
            }
        }
        std::sort(points.begin(), points.end());
        int held = 0;
        int peak = 0;
        for (const auto& point : points) {
            held += point.second;
            peak = std::max(peak, held);
        }
        if (peak != r.peakInFlight[static_cast<std::size_t>(s)])
            return "stage " + std::to_string(s) + " peak in flight "
                + std::to_string(r.peakInFlight[static_cast<std::size_t>(s)])
                + " but the events give " + std::to_string(peak);
    }
    return {};
}

// A pass written out by hand: stage, microbatch, chunk, 'F', 'B' or 'W', start, end.
struct Expected {
    int stage;
    int microbatch;
    int chunk;
    char pass;
    double start;
    double end;
};

std::string compareEvents(const std::vector<PipelineEvent>& got, const std::vector<Expected>& want,
                          bool withTimes)
{
    if (got.size() != want.size())
        return "got " + std::to_string(got.size()) + " events, want " + std::to_string(want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const PipelineEvent& g = got[i];
        const Expected& w = want[i];
        const bool same = g.stage == w.stage && g.microbatch == w.microbatch && g.chunk == w.chunk
            && "FBW"[static_cast<int>(g.pass)] == w.pass
            && (!withTimes || (g.start == w.start && g.end == w.end));
        if (!same)
            return "event " + std::to_string(i) + " is " + where(g) + " [" + std::to_string(g.start)
                + ", " + std::to_string(g.end) + "]";
    }
    return {};
}

// Stage s's part of an order, for comparisons stage by stage.
std::vector<PipelineEvent> stageOf(const std::vector<PipelineEvent>& events, int s)
{
    std::vector<PipelineEvent> out;
    for (const PipelineEvent& e : events)
        if (e.stage == s)
            out.push_back(e);
    return out;
}

// The (microbatch, model stage) passes of a DualPipe schedule, from its events alone: an F&B
// is the forward of (microbatch, stage of chunk) and the backward of (pair, stage of pairChunk).
struct DualPasses {
    std::map<std::pair<int, int>, const PipelineEvent*> forward, backward, weight;
};

// Checks a DualPipe or DualPipeV result from its events alone: every forward and backward of
// every (microbatch, stage) once, on the device that holds the stage (device i: stages i and
// p-1-i; in DualPipe microbatches m/2.. enter at device p-1), a W exactly for each backward
// without its weight gradient, durations, dependencies, no device running two passes at once,
// and every pass starting as soon as its device and inputs allow. Returns the first problem.
std::string checkDualSchedule(const PipelineInputs& in, const PipelineResult& r)
{
    const int p = static_cast<int>(in.stages);
    const int m = static_cast<int>(in.microbatches);
    const bool dual = in.schedule == Schedule::DualPipe;
    const int devices = dual ? p : p / 2;
    if (r.devices != devices)
        return "wrong device count";
    DualPasses passes;
    auto add = [&](auto& into, int j, int stage, const PipelineEvent& e) {
        return into.emplace(std::pair{j, stage}, &e).second;
    };
    for (const PipelineEvent& e : r.events) {
        if (e.stage < 0 || e.stage >= devices || e.chunk < 0 || e.chunk > 1)
            return "out of range: " + where(e);
        const int k = e.chunk == 0 ? e.stage : p - 1 - e.stage;
        const int device =
            dual ? (e.microbatch < m / 2 ? k : p - 1 - k) : (k < p / 2 ? k : p - 1 - k);
        if (device != e.stage)
            return "on a device that does not hold its stage: " + where(e);
        const bool ok = e.pass == Pass::Forward ? add(passes.forward, e.microbatch, k, e)
            : e.pass == Pass::Backward          ? add(passes.backward, e.microbatch, k, e)
            : e.pass == Pass::Weight            ? add(passes.weight, e.microbatch, k, e)
                                                : add(passes.forward, e.microbatch, k, e)
                && add(passes.backward, e.pairMicrobatch,
                       e.pairChunk == 0 ? e.stage : p - 1 - e.stage, e);
        if (!ok)
            return "twice: " + where(e);
    }
    if (passes.forward.size() != std::size_t(p * m) || passes.backward.size() != std::size_t(p * m))
        return "not every forward and backward once";
    std::size_t owed = 0;
    for (const auto& [key, b] : passes.backward)
        owed += b->pass == Pass::Backward && !b->withWeight ? 1 : 0;
    if (owed != passes.weight.size())
        return "a W for each split backward, and none else";
    const double f = in.forwardTime, b = in.backwardTime, w = in.weightTime;
    for (std::size_t i = 0; i < r.events.size(); ++i) {
        const PipelineEvent& e = r.events[i];
        const bool first = i == 0 || r.events[i - 1].stage != e.stage;
        const double duration = e.pass == Pass::Forward ? f
            : e.pass == Pass::Weight                    ? w
            : e.pass == Pass::ForwardBackward           ? f + b + w
                                                        : (e.withWeight ? b + w : b);
        if (e.end != e.start + duration)
            return "wrong duration: " + where(e);
        // Inputs: the previous stage's forward; the next stage's backward, the last stage's
        // own forward; W its own backward.
        double ready = 0.0;
        auto need = [&](const auto& from, int j, int k) {
            ready = std::max(ready, from.at({j, k})->end);
        };
        const int k = e.chunk == 0 ? e.stage : p - 1 - e.stage;
        if ((e.pass == Pass::Forward || e.pass == Pass::ForwardBackward) && k > 0)
            need(passes.forward, e.microbatch, k - 1);
        const bool isPair = e.pass == Pass::ForwardBackward;
        const int bj = isPair ? e.pairMicrobatch : e.microbatch;
        const int bk = isPair ? (e.pairChunk == 0 ? e.stage : p - 1 - e.stage) : k;
        if (e.pass == Pass::Backward || isPair)
            bk + 1 < p ? need(passes.backward, bj, bk + 1) : need(passes.forward, bj, bk);
        if (e.pass == Pass::Weight)
            need(passes.backward, e.microbatch, k);
        const double free = first ? 0.0 : r.events[i - 1].end;
        if (e.start != std::max(free, ready))
            return "does not start as soon as it could: " + where(e);
    }
    return {};
}

} // namespace

class TstPipeline : public QObject {
    Q_OBJECT

private slots:
    void chapterExercise()
    {
        // Exercise 41.4: p = 4, m = 12 gives 3 / 15 = 0.2. One correctly rounded division, so it
        // is the double nearest 0.2, the same as the literal.
        QCOMPARE(pipelineBubbleFraction(4, 12), 0.2);
        for (Schedule s : {Schedule::GPipe, Schedule::OneFOneB}) {
            const PipelineInputs in = makeInputs(s, 4, 12, 2, 1.0, 2.0);
            const PipelineResult r = simulatePipeline(in);
            // Whole-number times: every sum is exact, so (12 + 3) x 3 = 45 and 36 / 180 exactly.
            QCOMPARE(r.makespan, 45.0);
            QCOMPARE(r.bubbleFraction, 0.2);
            QCOMPARE(r.simulatedBubbleFraction, 0.2);
        }
    }

    void bubbleClosedForm_data()
    {
        addBubbleColumns();
        // Reduced by hand, so the expected value is not the implementation's expression.
        QTest::newRow("one stage") << 1LL << 7LL << 1LL << 0.0 << 1.0;
        QTest::newRow("exercise") << 4LL << 12LL << 1LL << 1.0 << 5.0;
        QTest::newRow("m = 1") << 4LL << 1LL << 1LL << 3.0 << 4.0;
        QTest::newRow("interleaved v=2") << 4LL << 12LL << 2LL << 1.0 << 9.0;
        QTest::newRow("interleaved v=4") << 8LL << 8LL << 4LL << 7.0 << 39.0;
        QTest::newRow("v ignored when 1") << 2LL << 2LL << 1LL << 1.0 << 3.0;
    }

    void bubbleClosedForm()
    {
        const auto [p, m, v, expected] = fetchBubbleRow();
        // Both sides are one correctly rounded division of the same rational: equal bits.
        QCOMPARE(pipelineBubbleFraction(p, m, v), expected);
    }

    void bubbleOverIdeal_data()
    {
        addBubbleColumns();
        // Megatron-LM's (p-1)/(v m), reduced by hand.
        QTest::newRow("one stage") << 1LL << 7LL << 1LL << 0.0 << 1.0;
        QTest::newRow("exercise") << 4LL << 12LL << 1LL << 1.0 << 4.0;
        QTest::newRow("m = 1: three times the work") << 4LL << 1LL << 1LL << 3.0 << 1.0;
        QTest::newRow("interleaved v=2") << 4LL << 12LL << 2LL << 1.0 << 8.0;
        QTest::newRow("p=32 m=256 v=4") << 32LL << 256LL << 4LL << 31.0 << 1024.0;
    }

    void bubbleOverIdeal()
    {
        const auto [p, m, v, expected] = fetchBubbleRow();
        QCOMPARE(pipelineBubbleOverIdeal(p, m, v), expected);
        // The two definitions describe one bubble: f / (1 - f) of the chapter's idle share f.
        const double f = pipelineBubbleFraction(p, m, v);
        QVERIFY(closeRelative(f / (1.0 - f), pipelineBubbleOverIdeal(p, m, v)));
        SCALELAB_VERIFY_INPUT_ERROR(pipelineBubbleOverIdeal(0, m, v), "pipeline.stages");
        SCALELAB_VERIFY_INPUT_ERROR(pipelineBubbleOverIdeal(p, 0, v), "pipeline.microbatches");
        SCALELAB_VERIFY_INPUT_ERROR(pipelineBubbleOverIdeal(p, m, 0), "pipeline.virtual_stages");
    }

    void bubbleOverBusy_data()
    {
        addBubbleColumns();
        // m >= p: Megatron-LM's (p-1)/(v m). m < p: ((p-m) v + m - 1)/(v m), reduced by hand.
        QTest::newRow("m = p, v = 2") << 4LL << 4LL << 2LL << 3.0 << 8.0;
        QTest::newRow("p=32 m=256 v=4") << 32LL << 256LL << 4LL << 31.0 << 1024.0;
        QTest::newRow("v = 1, m < p: (p-1)/m") << 4LL << 2LL << 1LL << 3.0 << 2.0;
        QTest::newRow("p=4 m=2 v=2: (4+1)/4") << 4LL << 2LL << 2LL << 5.0 << 4.0;
        QTest::newRow("one microbatch: v gains nothing") << 8LL << 1LL << 3LL << 7.0 << 1.0;
        QTest::newRow("p=2 m=1 v=24") << 2LL << 1LL << 24LL << 1.0 << 1.0;
    }

    void bubbleOverBusy()
    {
        const auto [p, m, v, expected] = fetchBubbleRow();
        QVERIFY(closeRelative(pipelineBubbleOverBusy(p, m, v), expected));
        if (m >= p) {
            QCOMPARE(pipelineBubbleOverBusy(p, m, v), pipelineBubbleOverIdeal(p, m, v));
            return;
        }
        // With m < p the bound is met by one schedule: all forwards as one wave through the
        // p v chunks (microbatch i runs chunk k, on GPU k mod p, in slot i + k), then all
        // backwards as the mirror wave. No GPU gets two chunks in one slot, and the wave lasts
        // m - 1 + p v slots, each 1/v of a microbatch's forward (or backward) on one GPU.
        std::set<std::pair<qint64, qint64>> taken; // (slot, GPU)
        for (qint64 i = 0; i < m; ++i)
            for (qint64 k = 0; k < p * v; ++k)
                QVERIFY(taken.insert({i + k, k % p}).second);
        qint64 waveLength = 0;
        for (const auto& cell : taken)
            waveLength = std::max(waveLength, cell.first + 1);
        QCOMPARE(waveLength, m - 1 + p * v);
        const double units = static_cast<double>(waveLength) / static_cast<double>(v);
        QVERIFY(closeRelative(pipelineBubbleOverBusy(p, m, v),
                              (units - static_cast<double>(m)) / static_cast<double>(m)));
        SCALELAB_VERIFY_INPUT_ERROR(pipelineBubbleOverBusy(p, 0, v), "pipeline.microbatches");
    }

    void matchesClosedForm_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<qint64>("p");
        QTest::addColumn<qint64>("m");
        QTest::addColumn<qint64>("v");
        QTest::addColumn<double>("f");
        QTest::addColumn<double>("b");
        const std::vector<std::pair<double, double>> times = {
            {1.0, 2.0}, {1.0, 1.0}, {2.5, 1.0}, {0.3, 0.7}, {0.1, 0.35}};
        const std::vector<std::pair<int, int>> sizes = {{1, 1}, {1, 4},  {4, 1}, {4, 2},  {4, 3},
                                                        {4, 4}, {4, 12}, {3, 7}, {8, 32}, {16, 5}};
        for (Schedule s : {Schedule::GPipe, Schedule::OneFOneB})
            for (const auto& [p, m] : sizes)
                for (const auto& [f, b] : times)
                    QTest::addRow("%s p=%d m=%d f=%g b=%g", scheduleName(s), p, m, f, b)
                        << static_cast<int>(s) << qint64(p) << qint64(m) << 1LL << f << b;
        // Interleaved: m must be a multiple of p; m = p, 2p and 4p.
        const std::vector<std::pair<double, double>> interleavedTimes = {
            {1.0, 2.0}, {0.3, 0.7}, {3.0, 1.0}};
        for (int p : {1, 2, 3, 4, 8})
            for (int v : {1, 2, 3, 4})
                for (int k : {1, 2, 4})
                    for (const auto& [f, b] : interleavedTimes)
                        QTest::addRow("interleaved p=%d m=%d v=%d f=%g b=%g", p, k * p, v, f, b)
                            << static_cast<int>(Schedule::Interleaved) << qint64(p) << qint64(k * p)
                            << qint64(v) << f << b;
    }

    void matchesClosedForm()
    {
        QFETCH(int, schedule);
        QFETCH(qint64, p);
        QFETCH(qint64, m);
        QFETCH(qint64, v);
        QFETCH(double, f);
        QFETCH(double, b);
        const auto s = static_cast<Schedule>(schedule);
        const PipelineInputs in = makeInputs(s, p, m, v, f, b);
        PipelineResult r;
        try {
            r = simulatePipeline(in);
        } catch (const std::exception& e) {
            QFAIL(e.what()); // e.g. a deadlock: say which, for this row
        }

        // (m + p - 1)(f + b); interleaved, the fill and drain shrink to (p - 1)/v of a slot.
        const double chunks = s == Schedule::Interleaved ? double(v) : 1.0;
        const double makespan = (double(m) + double(p - 1) / chunks) * (f + b);
        const double bubble = double(p - 1) / (chunks * double(m) + double(p - 1));
        QVERIFY2(closeRelative(r.makespan, makespan),
                 qPrintable(QString("makespan %1, closed form %2")
                                .arg(r.makespan, 0, 'g', 17)
                                .arg(makespan, 0, 'g', 17)));
        QCOMPARE(r.bubbleFraction, bubble);
        // A fraction in [0, 1): relative to 1, the same rounding argument holds.
        QVERIFY2(closeRelative(r.simulatedBubbleFraction, bubble),
                 qPrintable(QString("simulated bubble %1, closed form %2")
                                .arg(r.simulatedBubbleFraction, 0, 'g', 17)
                                .arg(bubble, 0, 'g', 17)));
        // Megatron's reading of the same run: idle over busy time, (p - 1)/(v m) closed.
        const double overIdeal = double(p - 1) / (chunks * double(m));
        QCOMPARE(r.bubbleOverIdeal, overIdeal);
        QVERIFY2(closeRelative(r.simulatedBubbleOverIdeal, overIdeal),
                 qPrintable(QString("simulated bubble/ideal %1, closed form %2")
                                .arg(r.simulatedBubbleOverIdeal, 0, 'g', 17)
                                .arg(overIdeal, 0, 'g', 17)));
        const std::string problem = checkSchedule(in, r);
        QVERIFY2(problem.empty(), problem.c_str());
    }

    void peakInFlight_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<qint64>("p");
        QTest::addColumn<qint64>("m");
        QTest::addColumn<qint64>("v");
        const std::vector<std::pair<int, int>> plain = {{1, 1}, {1, 5},  {4, 1}, {4, 3},
                                                        {4, 4}, {4, 12}, {6, 20}};
        for (Schedule s : {Schedule::GPipe, Schedule::OneFOneB})
            for (const auto& [p, m] : plain)
                QTest::addRow("%s p=%d m=%d", scheduleName(s), p, m)
                    << static_cast<int>(s) << qint64(p) << qint64(m) << 1LL;
        const std::vector<std::tuple<int, int, int>> interleaved = {
            {2, 2, 2}, {4, 4, 2}, {4, 8, 2}, {4, 16, 3}, {3, 12, 4}, {8, 16, 2}};
        for (const auto& [p, m, v] : interleaved)
            QTest::addRow("interleaved p=%d m=%d v=%d", p, m, v)
                << static_cast<int>(Schedule::Interleaved) << qint64(p) << qint64(m) << qint64(v);
    }

    void peakInFlight()
    {
        QFETCH(int, schedule);
        QFETCH(qint64, p);
        QFETCH(qint64, m);
        QFETCH(qint64, v);
        const auto sched = static_cast<Schedule>(schedule);
        const PipelineInputs in = makeInputs(sched, p, m, v, 1.0, 2.0);
        const PipelineResult r = simulatePipeline(in);
        QCOMPARE(r.peakInFlight.size(), std::size_t(p));
        for (qint64 s = 0; s < p; ++s) {
            qint64 expected = 0;
            switch (sched) {
            case Schedule::GPipe:
                expected = m; // every forward before the first backward
                break;
            case Schedule::OneFOneB:
                expected = std::min(p - s, m); // warm-up p - s - 1, plus the steady forward
                QVERIFY(expected <= p);
                break;
            case Schedule::Interleaved:
                // Megatron's warm-up count plus the steady forward, at most every pair.
                expected = std::min(2 * (p - s - 1) + (v - 1) * p + 1, m * v);
                break;
            case Schedule::ZeroBubbleH1:
            case Schedule::ZeroBubbleH2:
                QFAIL("not in this table: see publishedZeroBubbleFigures");
            case Schedule::DualPipe:
            case Schedule::DualPipeV:
                QFAIL("not in this table: see publishedDualPipeFigures");
            }
            QCOMPARE(qint64(r.peakInFlight[std::size_t(s)]), expected);
            // Held chunks are 1/v of a stage's activations each (v is 1 unless interleaved).
            const double chunks = sched == Schedule::Interleaved ? double(v) : 1.0;
            QCOMPARE(r.peakActivations[std::size_t(s)], double(expected) / chunks);
        }
        QCOMPARE(r.peakActivations.size(), std::size_t(p));
        // Megatron-LM's memory factor: stage 0 of the interleaved schedule holds
        // p (1 + (p - 1)/(p v)) = p + (p - 1)/v microbatches of activations once m v is large.
        if (sched == Schedule::Interleaved && m * v >= 2 * (p - 1) + (v - 1) * p + 1)
            QCOMPARE(r.peakActivations[0], double(p) + double(p - 1) / double(v));
        // And the same numbers from the events by a sweep over time.
        const std::string problem = checkSchedule(in, r);
        QVERIFY2(problem.empty(), problem.c_str());
    }

    void handWorkedGPipe()
    {
        // p = 2, m = 2, f = 1, b = 2, worked on paper.
        const PipelineResult r = simulatePipeline(makeInputs(Schedule::GPipe, 2, 2, 1, 1.0, 2.0));
        const std::vector<Expected> want = {
            {0, 0, 0, 'F', 0, 1}, {0, 1, 0, 'F', 1, 2}, {0, 0, 0, 'B', 5, 7}, {0, 1, 0, 'B', 7, 9},
            {1, 0, 0, 'F', 1, 2}, {1, 1, 0, 'F', 2, 3}, {1, 0, 0, 'B', 3, 5}, {1, 1, 0, 'B', 5, 7},
        };
        const std::string problem = compareEvents(r.events, want, true);
        QVERIFY2(problem.empty(), problem.c_str());
        QCOMPARE(r.makespan, 9.0);
        QCOMPARE(r.peakInFlight, (std::vector<int>{2, 2}));
    }

    void handWorked1F1B()
    {
        // p = 2, m = 2, f = 1, b = 2: stage 0 warms up with one forward, stage 1 with none.
        const PipelineResult r =
            simulatePipeline(makeInputs(Schedule::OneFOneB, 2, 2, 1, 1.0, 2.0));
        const std::vector<Expected> want = {
            {0, 0, 0, 'F', 0, 1}, {0, 1, 0, 'F', 1, 2}, {0, 0, 0, 'B', 4, 6}, {0, 1, 0, 'B', 7, 9},
            {1, 0, 0, 'F', 1, 2}, {1, 0, 0, 'B', 2, 4}, {1, 1, 0, 'F', 4, 5}, {1, 1, 0, 'B', 5, 7},
        };
        const std::string problem = compareEvents(r.events, want, true);
        QVERIFY2(problem.empty(), problem.c_str());
        QCOMPARE(r.makespan, 9.0);
        QCOMPARE(r.peakInFlight, (std::vector<int>{2, 1}));
    }

    void handWorkedInterleaved()
    {
        // p = 2, m = 2, v = 2, f = 2, b = 4: chunk passes take 1 and 2. Parts: stage 0 chunk 0
        // is part 0, stage 1 chunk 0 part 1, stage 0 chunk 1 part 2, stage 1 chunk 1 part 3.
        // Warm-up: stage 0 min(2 + 2, 4) = 4 (all), stage 1 min(0 + 2, 4) = 2.
        const PipelineResult r =
            simulatePipeline(makeInputs(Schedule::Interleaved, 2, 2, 2, 2.0, 4.0));
        const std::vector<Expected> want = {
            {0, 0, 0, 'F', 0, 1},   {0, 1, 0, 'F', 1, 2},   {0, 0, 1, 'F', 2, 3},
            {0, 1, 1, 'F', 3, 4},   {0, 0, 1, 'B', 6, 8},   {0, 1, 1, 'B', 9, 11},
            {0, 0, 0, 'B', 11, 13}, {0, 1, 0, 'B', 13, 15}, {1, 0, 0, 'F', 1, 2},
            {1, 1, 0, 'F', 2, 3},   {1, 0, 1, 'F', 3, 4},   {1, 0, 1, 'B', 4, 6},
            {1, 1, 1, 'F', 6, 7},   {1, 1, 1, 'B', 7, 9},   {1, 0, 0, 'B', 9, 11},
            {1, 1, 0, 'B', 11, 13},
        };
        const std::string problem = compareEvents(r.events, want, true);
        QVERIFY2(problem.empty(), problem.c_str());
        QCOMPARE(r.makespan, 15.0); // (2 + 1/2) x 6
        QCOMPARE(r.peakInFlight, (std::vector<int>{4, 3}));
    }

    void orders1F1B()
    {
        // p = 4, m = 6: stage 0 warms up with 3 forwards, the last stage with none.
        const std::vector<PipelineEvent> order =
            pipelineOrder(makeInputs(Schedule::OneFOneB, 4, 6, 1, 1.0, 2.0));
        const std::vector<Expected> stage0 = {
            {0, 0, 0, 'F', 0, 0}, {0, 1, 0, 'F', 0, 0}, {0, 2, 0, 'F', 0, 0}, {0, 3, 0, 'F', 0, 0},
            {0, 0, 0, 'B', 0, 0}, {0, 4, 0, 'F', 0, 0}, {0, 1, 0, 'B', 0, 0}, {0, 5, 0, 'F', 0, 0},
            {0, 2, 0, 'B', 0, 0}, {0, 3, 0, 'B', 0, 0}, {0, 4, 0, 'B', 0, 0}, {0, 5, 0, 'B', 0, 0},
        };
        const std::vector<Expected> stage3 = {
            {3, 0, 0, 'F', 0, 0}, {3, 0, 0, 'B', 0, 0}, {3, 1, 0, 'F', 0, 0}, {3, 1, 0, 'B', 0, 0},
            {3, 2, 0, 'F', 0, 0}, {3, 2, 0, 'B', 0, 0}, {3, 3, 0, 'F', 0, 0}, {3, 3, 0, 'B', 0, 0},
            {3, 4, 0, 'F', 0, 0}, {3, 4, 0, 'B', 0, 0}, {3, 5, 0, 'F', 0, 0}, {3, 5, 0, 'B', 0, 0},
        };
        std::string problem = compareEvents(stageOf(order, 0), stage0, false);
        QVERIFY2(problem.empty(), problem.c_str());
        problem = compareEvents(stageOf(order, 3), stage3, false);
        QVERIFY2(problem.empty(), problem.c_str());
    }

    void ordersInterleaved()
    {
        // p = 2, m = 4, v = 2, derived by hand from Megatron-LM's rules: warm-up 4 on stage 0
        // and 2 on stage 1; the n-th forward goes through microbatches {0, 1} on chunk 0, then
        // {0, 1} on chunk 1, then {2, 3} on chunk 0, ...; backwards start from the last chunk.
        const std::vector<PipelineEvent> order =
            pipelineOrder(makeInputs(Schedule::Interleaved, 2, 4, 2, 1.0, 2.0));
        const std::vector<Expected> stage0 = {
            {0, 0, 0, 'F', 0, 0}, {0, 1, 0, 'F', 0, 0}, {0, 0, 1, 'F', 0, 0}, {0, 1, 1, 'F', 0, 0},
            {0, 2, 0, 'F', 0, 0}, {0, 0, 1, 'B', 0, 0}, {0, 3, 0, 'F', 0, 0}, {0, 1, 1, 'B', 0, 0},
            {0, 2, 1, 'F', 0, 0}, {0, 0, 0, 'B', 0, 0}, {0, 3, 1, 'F', 0, 0}, {0, 1, 0, 'B', 0, 0},
            {0, 2, 1, 'B', 0, 0}, {0, 3, 1, 'B', 0, 0}, {0, 2, 0, 'B', 0, 0}, {0, 3, 0, 'B', 0, 0},
        };
        const std::vector<Expected> stage1 = {
            {1, 0, 0, 'F', 0, 0}, {1, 1, 0, 'F', 0, 0}, {1, 0, 1, 'F', 0, 0}, {1, 0, 1, 'B', 0, 0},
            {1, 1, 1, 'F', 0, 0}, {1, 1, 1, 'B', 0, 0}, {1, 2, 0, 'F', 0, 0}, {1, 0, 0, 'B', 0, 0},
            {1, 3, 0, 'F', 0, 0}, {1, 1, 0, 'B', 0, 0}, {1, 2, 1, 'F', 0, 0}, {1, 2, 1, 'B', 0, 0},
            {1, 3, 1, 'F', 0, 0}, {1, 3, 1, 'B', 0, 0}, {1, 2, 0, 'B', 0, 0}, {1, 3, 0, 'B', 0, 0},
        };
        std::string problem = compareEvents(stageOf(order, 0), stage0, false);
        QVERIFY2(problem.empty(), problem.c_str());
        problem = compareEvents(stageOf(order, 1), stage1, false);
        QVERIFY2(problem.empty(), problem.c_str());
    }

    void deadlockIsDetected_data()
    {
        QTest::addColumn<int>("which");
        QTest::newRow("backward before its own forward") << 0;
        QTest::newRow("cycle across two stages") << 1;
    }

    void deadlockIsDetected()
    {
        QFETCH(int, which);
        const PipelineInputs in = makeInputs(Schedule::GPipe, 2, 2, 1, 1.0, 2.0);
        std::vector<PipelineEvent> order = pipelineOrder(in); // stage 0: F0 F1 B0 B1, then stage 1
        if (which == 0) {
            // Last stage: B0 first, but it needs its own F0, which comes after it.
            std::swap(order[4], order[6]);
        } else {
            // Stage 0 runs F0 B0 F1 B1; stage 1 runs F0 F1 B1 B0. Stage 0's B0 waits for stage
            // 1's B0, behind B1, which needs F1 from stage 0, behind B0.
            std::swap(order[1], order[2]);
            std::swap(order[6], order[7]);
        }
        bool threw = false;
        try {
            (void)simulatePipelineOrder(in, order);
        } catch (const InputError&) {
            QFAIL("a deadlock is a bug, not bad input");
        } catch (const std::logic_error& e) {
            threw = true;
            QVERIFY2(std::string(e.what()).find("deadlock") != std::string::npos, e.what());
        }
        QVERIFY(threw);
    }

    void handMadeOrder()
    {
        // The same inputs in 1F1B order on stage 1 only: that is a valid order, and times follow.
        const PipelineInputs in = makeInputs(Schedule::GPipe, 2, 2, 1, 1.0, 2.0);
        std::vector<PipelineEvent> order = pipelineOrder(in);
        std::swap(order[5], order[6]); // stage 1: F0 B0 F1 B1
        const PipelineResult r = simulatePipelineOrder(in, order);
        const std::vector<Expected> want = {
            {0, 0, 0, 'F', 0, 1}, {0, 1, 0, 'F', 1, 2}, {0, 0, 0, 'B', 4, 6}, {0, 1, 0, 'B', 7, 9},
            {1, 0, 0, 'F', 1, 2}, {1, 0, 0, 'B', 2, 4}, {1, 1, 0, 'F', 4, 5}, {1, 1, 0, 'B', 5, 7},
        };
        const std::string problem = compareEvents(r.events, want, true);
        QVERIFY2(problem.empty(), problem.c_str());
    }

    void malformedOrderIsRefused()
    {
        const PipelineInputs in = makeInputs(Schedule::OneFOneB, 3, 4, 1, 1.0, 2.0);
        std::vector<PipelineEvent> order = pipelineOrder(in);

        std::vector<PipelineEvent> shorter(order.begin(), order.end() - 1);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, simulatePipelineOrder(in, shorter));

        std::vector<PipelineEvent> duplicated = order;
        duplicated[1] = duplicated[0];
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, simulatePipelineOrder(in, duplicated));

        std::vector<PipelineEvent> misplaced = order;
        misplaced[0].stage = 1; // a stage-1 pass inside stage 0's block
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, simulatePipelineOrder(in, misplaced));

        std::vector<PipelineEvent> badChunk = order;
        badChunk[0].chunk = 1; // no chunk 1 outside the interleaved schedule
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, simulatePipelineOrder(in, badChunk));
    }

    void invalidInputs_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<qint64>("p");
        QTest::addColumn<qint64>("m");
        QTest::addColumn<qint64>("v");
        QTest::addColumn<double>("f");
        QTest::addColumn<double>("b");
        QTest::addColumn<QString>("field");
        const int gp = static_cast<int>(Schedule::GPipe);
        const int ofob = static_cast<int>(Schedule::OneFOneB);
        const int il = static_cast<int>(Schedule::Interleaved);
        const qint64 big = 9'007'199'254'740'992LL; // 2^53
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double inf = std::numeric_limits<double>::infinity();
        const QString st = "pipeline.stages", mb = "pipeline.microbatches",
                      sc = "pipeline.schedule", vs = "pipeline.virtual_stages",
                      ft = "pipeline.forward_time", bt = "pipeline.backward_time";
        QTest::newRow("no stages") << gp << 0LL << 4LL << 1LL << 1.0 << 2.0 << st;
        QTest::newRow("negative stages") << gp << -3LL << 4LL << 1LL << 1.0 << 2.0 << st;
        QTest::newRow("stages -2^53") << ofob << -big << 4LL << 1LL << 1.0 << 2.0 << st;
        QTest::newRow("no microbatches") << gp << 4LL << 0LL << 1LL << 1.0 << 2.0 << mb;
        QTest::newRow("negative microbatches") << il << 4LL << -4LL << 2LL << 1.0 << 2.0 << mb;
        // 3 and 4 are the zero-bubble schedules, 5 and 6 DualPipe and DualPipeV.
        QTest::newRow("unknown schedule") << 7 << 4LL << 4LL << 1LL << 1.0 << 2.0 << sc;
        const int dp = static_cast<int>(Schedule::DualPipe);
        const int dv = static_cast<int>(Schedule::DualPipeV);
        QTest::newRow("dualpipe odd p") << dp << 3LL << 12LL << 1LL << 1.0 << 2.0 << st;
        QTest::newRow("dualpipe p = 1") << dp << 1LL << 12LL << 1LL << 1.0 << 2.0 << st;
        QTest::newRow("dualpipe odd m") << dp << 4LL << 9LL << 1LL << 1.0 << 2.0 << mb;
        QTest::newRow("dualpipe m < 2p") << dp << 4LL << 6LL << 1LL << 1.0 << 2.0 << mb;
        QTest::newRow("dualpipev odd p") << dv << 5LL << 12LL << 1LL << 1.0 << 2.0 << st;
        QTest::newRow("dualpipev m < p") << dv << 8LL << 7LL << 1LL << 1.0 << 2.0 << mb;
        QTest::newRow("dualpipe p m over the limit")
            << dp << 4LL << 1'000'002LL << 1LL << 1.0 << 2.0 << mb;
        QTest::newRow("no chunks (gpipe)") << gp << 4LL << 4LL << 0LL << 1.0 << 2.0 << vs;
        QTest::newRow("negative chunks") << il << 4LL << 4LL << -1LL << 1.0 << 2.0 << vs;
        QTest::newRow("forward 0") << gp << 4LL << 4LL << 1LL << 0.0 << 2.0 << ft;
        QTest::newRow("forward -0") << gp << 4LL << 4LL << 1LL << -0.0 << 2.0 << ft;
        QTest::newRow("forward negative") << gp << 4LL << 4LL << 1LL << -1.0 << 2.0 << ft;
        QTest::newRow("forward NaN") << ofob << 4LL << 4LL << 1LL << nan << 2.0 << ft;
        QTest::newRow("forward inf") << ofob << 4LL << 4LL << 1LL << inf << 2.0 << ft;
        QTest::newRow("backward 0") << gp << 4LL << 4LL << 1LL << 1.0 << 0.0 << bt;
        QTest::newRow("backward -inf") << gp << 4LL << 4LL << 1LL << 1.0 << -inf << bt;
        QTest::newRow("backward NaN") << il << 4LL << 4LL << 2LL << 1.0 << nan << bt;
        QTest::newRow("interleaved m not a multiple of p")
            << il << 4LL << 6LL << 2LL << 1.0 << 2.0 << mb;
        QTest::newRow("interleaved m < p") << il << 4LL << 2LL << 2LL << 1.0 << 2.0 << mb;
        QTest::newRow("p m over the limit") << gp << 4LL << 1'000'001LL << 1LL << 1.0 << 2.0 << mb;
        QTest::newRow("p m v over the limit") << il << 4LL << 4'000LL << 251LL << 1.0 << 2.0 << mb;
        QTest::newRow("p = 2^53") << gp << big << 1LL << 1LL << 1.0 << 2.0 << st;
        // The Gantt gives each stage a row: 10^6 stages once allocated gigabytes and crashed.
        QTest::newRow("p over the stage limit") << gp << 1'025LL << 1LL << 1LL << 1.0 << 2.0 << st;
        QTest::newRow("m = 2^53") << ofob << 2LL << big << 1LL << 1.0 << 2.0 << mb;
        QTest::newRow("v = 2^53") << il << 1LL << 1LL << big << 1.0 << 2.0 << mb;
        QTest::newRow("p = m = v = 2^53") << il << big << big << big << 1.0 << 2.0 << st;
        QTest::newRow("forward underflows") << gp << 2LL << 2LL << 1LL << 5e-324 << 1.0 << ft;
        QTest::newRow("forward chunk underflows") << il << 2LL << 2LL << 4LL << 1e-308 << 1.0 << ft;
        QTest::newRow("backward chunk underflows")
            << il << 2LL << 2LL << 4LL << 1.0 << 1e-308 << bt;
        QTest::newRow("forward overflows") << gp << 4LL << 12LL << 1LL << 1e308 << 1.0 << ft;
        QTest::newRow("backward overflows") << ofob << 4LL << 12LL << 1LL << 1.0 << 1e307 << bt;
    }

    void invalidInputs()
    {
        QFETCH(int, schedule);
        QFETCH(qint64, p);
        QFETCH(qint64, m);
        QFETCH(qint64, v);
        QFETCH(double, f);
        QFETCH(double, b);
        QFETCH(QString, field);
        const PipelineInputs in = makeInputs(static_cast<Schedule>(schedule), p, m, v, f, b);
        const std::string name = field.toStdString();
        SCALELAB_VERIFY_INPUT_ERROR(validate(in), name);
        SCALELAB_VERIFY_INPUT_ERROR(simulatePipeline(in), name);
        SCALELAB_VERIFY_INPUT_ERROR(pipelineOrder(in), name);
    }

    void validEdges()
    {
        // Exactly at the limit is accepted (validate only: simulating it is the slow case).
        validate(makeInputs(Schedule::GPipe, 1'000, 4'000, 1, 1.0, 2.0));
        validate(makeInputs(Schedule::Interleaved, 1'000, 1'000, 4, 1.0, 2.0));
        validate(makeInputs(Schedule::OneFOneB, kMaxPipelineStages, 1, 1, 1.0, 2.0));
        // Chunks count only when interleaved, so a huge v is harmless otherwise.
        validate(makeInputs(Schedule::OneFOneB, 4, 12, 9'007'199'254'740'992LL, 1.0, 2.0));
        // The smallest normal time, and a large one that stays finite.
        const double tiny = std::numeric_limits<double>::min();
        const PipelineResult r = simulatePipeline(makeInputs(Schedule::GPipe, 2, 3, 1, tiny, tiny));
        QVERIFY(r.makespan > 0.0);
        const PipelineResult big =
            simulatePipeline(makeInputs(Schedule::GPipe, 2, 3, 1, 1e300, 1e300));
        QVERIFY(std::isfinite(big.simulatedBubbleFraction));
        QVERIFY(closeRelative(big.simulatedBubbleFraction, 0.25));

        SCALELAB_VERIFY_INPUT_ERROR(pipelineBubbleFraction(0, 4), "pipeline.stages");
        SCALELAB_VERIFY_INPUT_ERROR(pipelineBubbleFraction(4, 0), "pipeline.microbatches");
        SCALELAB_VERIFY_INPUT_ERROR(pipelineBubbleFraction(4, 4, 0), "pipeline.virtual_stages");
    }

    void weightTimeFoldsIntoTheBackward_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<qint64>("p");
        QTest::addColumn<qint64>("m");
        QTest::addColumn<qint64>("v");
        for (Schedule s : {Schedule::GPipe, Schedule::OneFOneB})
            QTest::addRow("%s", scheduleName(s)) << int(s) << 4LL << 6LL << 1LL;
        QTest::addRow("interleaved") << int(Schedule::Interleaved) << 4LL << 8LL << 2LL;
    }

    void weightTimeFoldsIntoTheBackward()
    {
        // A schedule that does not split the backward runs B + W as one pass: b = 1.5, w = 0.5
        // is the old b = 2 (every sum here is exact in binary), and w = 0 is the old file.
        QFETCH(int, schedule);
        QFETCH(qint64, p);
        QFETCH(qint64, m);
        QFETCH(qint64, v);
        const auto s = static_cast<Schedule>(schedule);
        const PipelineResult old = simulatePipeline(makeInputs(s, p, m, v, 1.0, 2.0));
        const PipelineResult split = simulatePipeline(makeInputs(s, p, m, v, 1.0, 1.5, 0.5));
        QCOMPARE(PipelineInputs{}.weightTime, 0.0);
        QCOMPARE(split.makespan, old.makespan);
        QCOMPARE(split.simulatedBubbleFraction, old.simulatedBubbleFraction);
        QCOMPARE(split.bubbleFraction, old.bubbleFraction);
        QCOMPARE(split.peakInFlight, old.peakInFlight);
        QCOMPARE(split.events.size(), old.events.size());
        for (std::size_t i = 0; i < old.events.size(); ++i) {
            QVERIFY(split.events[i].pass != Pass::Weight);
            QCOMPARE(split.events[i].end, old.events[i].end);
        }
        QCOMPARE(split.peakWeightPending, std::vector<int>(std::size_t(p), 0));
    }

    void handWorkedZeroBubbleH1()
    {
        // p = 2, m = 2, f = b = w = 1. Stage 0 warms up with one forward, stage 1 with none;
        // stage s runs a W once more than s are owed, the rest last.
        //   stage 0: F0 F1 B0 W0 B1 W1 (after B0 one W is owed > 0: run it)
        //   stage 1: F0 B0 F1 B1 W0 W1 (after B0 one is owed, not > 1; after B1 two are)
        // Times: s0 F0 [0,1] F1 [1,2]; s1 F0 [1,2] B0 [2,3]; s0 B0 waits for s1's B0: [3,4],
        // W0 [4,5]; s1 F1 [3,4] B1 [4,5] W0 [5,6] W1 [6,7]; s0 B1 waits for s1's B1: [5,6],
        // W1 [6,7]. Makespan 7 = 3m + (p-1). Stage 0 idles [2,3] inside its span [0,7]: the
        // bubble is 1 = (p-1)(f + b - w), and the rate 1/6 = (p-1)/(3m). Stage 1 never idles
        // inside [1,7]. 1F1B on the same work (b + w = 2 fused) idles 3 = (p-1)(f+b+w).
        const PipelineInputs in = makeInputs(Schedule::ZeroBubbleH1, 2, 2, 1, 1.0, 1.0, 1.0);
        const PipelineResult r = simulatePipeline(in);
        const std::vector<Expected> want = {
            {0, 0, 0, 'F', 0, 1}, {0, 1, 0, 'F', 1, 2}, {0, 0, 0, 'B', 3, 4}, {0, 0, 0, 'W', 4, 5},
            {0, 1, 0, 'B', 5, 6}, {0, 1, 0, 'W', 6, 7}, {1, 0, 0, 'F', 1, 2}, {1, 0, 0, 'B', 2, 3},
            {1, 1, 0, 'F', 3, 4}, {1, 1, 0, 'B', 4, 5}, {1, 0, 0, 'W', 5, 6}, {1, 1, 0, 'W', 6, 7},
        };
        const std::string problem = compareEvents(r.events, want, true);
        QVERIFY2(problem.empty(), problem.c_str());
        QCOMPARE(r.makespan, 7.0);
        QCOMPARE(r.bubbleTime, 1.0);
        QCOMPARE(r.bubbleRate, 1.0 / 6.0);
        QCOMPARE(r.bubbleOverIdeal, 1.0 / 6.0); // the paper's closed form agrees
        QCOMPARE(r.peakInFlight, (std::vector<int>{2, 1})); // 1F1B's
        QCOMPARE(r.peakWeightPending, (std::vector<int>{1, 2}));
        const PipelineResult ofob =
            simulatePipeline(makeInputs(Schedule::OneFOneB, 2, 2, 1, 1.0, 1.0, 1.0));
        QCOMPARE(ofob.bubbleTime, 3.0);
        QCOMPARE(ofob.bubbleRate, 0.5);
    }

    void handWorkedZeroBubbleH2()
    {
        // p = 2, m = 3, f = b = w = 1. In-flight limits 2(p-s) - 1: 3 on stage 0, 1 on stage 1.
        // Each free stage runs B if ready, else F if ready and allowed, else an owed W.
        //   t=0..3 stage 0 runs F0 F1 F2 (no B ready yet); stage 1 F0 [1,2], B0 [2,3].
        //   t=3: stage 0's B0 is ready (ended 3) [3,4]; stage 1 F1 [3,4] (limit 1: B0 done).
        //   t=4: stage 1 B1 [4,5]; stage 0 has no B ready, F is used up: W0 [4,5].
        //   t=5: stage 0 B1 [5,6]; stage 1 F2 [5,6], B2 [6,7], then W0 W1 W2 [7,10].
        //   t=6: stage 0 W1 [6,7], B2 [7,8], W2 [8,9].
        // Neither stage idles inside its own span ([0,9] and [1,10]): Qi et al.'s parallelogram,
        // bubble 0, though the makespan 10 is 3m + (p-1): with a synchronising optimizer step
        // the run still pays the fill, which is what the chapter's fraction measures.
        const PipelineInputs in = makeInputs(Schedule::ZeroBubbleH2, 2, 3, 1, 1.0, 1.0, 1.0);
        const PipelineResult r = simulatePipeline(in);
        const std::vector<Expected> want = {
            {0, 0, 0, 'F', 0, 1}, {0, 1, 0, 'F', 1, 2},  {0, 2, 0, 'F', 2, 3}, {0, 0, 0, 'B', 3, 4},
            {0, 0, 0, 'W', 4, 5}, {0, 1, 0, 'B', 5, 6},  {0, 1, 0, 'W', 6, 7}, {0, 2, 0, 'B', 7, 8},
            {0, 2, 0, 'W', 8, 9}, {1, 0, 0, 'F', 1, 2},  {1, 0, 0, 'B', 2, 3}, {1, 1, 0, 'F', 3, 4},
            {1, 1, 0, 'B', 4, 5}, {1, 2, 0, 'F', 5, 6},  {1, 2, 0, 'B', 6, 7}, {1, 0, 0, 'W', 7, 8},
            {1, 1, 0, 'W', 8, 9}, {1, 2, 0, 'W', 9, 10},
        };
        const std::string problem = compareEvents(r.events, want, true);
        QVERIFY2(problem.empty(), problem.c_str());
        QCOMPARE(r.makespan, 10.0);
        QCOMPARE(r.bubbleTime, 0.0);
        QCOMPARE(r.bubbleRate, 0.0);
        QCOMPARE(r.simulatedBubbleFraction, 2.0 / 20.0); // idle 1 + 1 of 2 x 10
        QCOMPARE(r.peakInFlight, (std::vector<int>{3, 1}));
        QCOMPARE(r.peakWeightPending, (std::vector<int>{1, 3}));
    }

    void publishedZeroBubbleFigures_data()
    {
        QTest::addColumn<qint64>("p");
        QTest::addColumn<qint64>("m");
        // m >= 2p - 1, the paper's condition for ZB-H2.
        for (const auto& [p, m] : std::vector<std::pair<int, int>>{{1, 1},
                                                                   {2, 3},
                                                                   {2, 8},
                                                                   {3, 5},
                                                                   {4, 7},
                                                                   {4, 8},
                                                                   {4, 12},
                                                                   {5, 9},
                                                                   {8, 15},
                                                                   {8, 32},
                                                                   {16, 31},
                                                                   {16, 64},
                                                                   {32, 256}})
            QTest::addRow("p=%d m=%d", p, m) << qint64(p) << qint64(m);
    }

    void publishedZeroBubbleFigures()
    {
        // Qi et al. (ICLR 2024) compare schedules at T_F = T_B = T_W. Their bubble rate is the
        // bubble (a stage's idle time inside its own span; without the optimizer's sync a stage
        // starts the next iteration when it ends this one) over a stage's work m (f + b + w):
        // 1F1B (p-1)/m, ZB-H1 (p-1)/(3m), ZB-H2 0. Activations (until B ends): ZB-H1 holds
        // 1F1B's min(p - s, m) on stage s, ZB-H2 up to 2(p - s) - 1, so 2p - 1 on stage 0.
        // Every time is a whole number here, so every figure is exact.
        QFETCH(qint64, p);
        QFETCH(qint64, m);
        const PipelineResult ofob =
            simulatePipeline(makeInputs(Schedule::OneFOneB, p, m, 1, 1.0, 1.0, 1.0));
        const PipelineInputs h1In = makeInputs(Schedule::ZeroBubbleH1, p, m, 1, 1.0, 1.0, 1.0);
        const PipelineInputs h2In = makeInputs(Schedule::ZeroBubbleH2, p, m, 1, 1.0, 1.0, 1.0);
        const PipelineResult h1 = simulatePipeline(h1In);
        const PipelineResult h2 = simulatePipeline(h2In);
        QCOMPARE(ofob.bubbleRate, double(p - 1) / double(m));
        QCOMPARE(h1.bubbleRate, double(p - 1) / double(3 * m));
        QCOMPARE(h2.bubbleRate, 0.0);
        QCOMPARE(ofob.bubbleTime, 3.0 * double(p - 1));
        QCOMPARE(h1.bubbleTime, double(p - 1));
        // The closed forms say the same.
        QCOMPARE(h1.bubbleOverIdeal, h1.bubbleRate);
        QCOMPARE(h2.bubbleOverIdeal, 0.0);
        QCOMPARE(zeroBubbleBubbleTime(h1In), double(p - 1));
        // ZB-H1's makespan is 3m + (p - 1), against 1F1B's 3(m + p - 1).
        QCOMPARE(h1.makespan, double(3 * m + p - 1));
        // ZB-H2 ends no sooner: with a synchronising optimizer step both pay the fill, and only
        // without it (Qi et al.'s post-validation) does ZB-H2's parallelogram pay nothing.
        QCOMPARE(h2.makespan, double(3 * m + p - 1));
        QCOMPARE(h1.peakInFlight, ofob.peakInFlight);
        for (qint64 s = 0; s < p; ++s)
            QCOMPARE(qint64(h2.peakInFlight[std::size_t(s)]), std::min(2 * (p - s) - 1, m));
        QCOMPARE(qint64(h2.peakInFlight[0]), 2 * p - 1);
        for (const auto* r : {&h1, &h2}) {
            const std::string problem = checkSchedule(r == &h1 ? h1In : h2In, *r);
            QVERIFY2(problem.empty(), problem.c_str());
        }
    }

    void zeroBubbleSchedulesAreValid_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<qint64>("p");
        QTest::addColumn<qint64>("m");
        QTest::addColumn<double>("f");
        QTest::addColumn<double>("b");
        QTest::addColumn<double>("w");
        const std::vector<std::tuple<double, double, double>> times = {
            {1.0, 1.0, 1.0}, {1.0, 2.0, 1.0}, {2.0, 3.0, 1.0},
            {1.0, 1.0, 2.0}, {0.3, 0.4, 0.3}, {1.0, 2.0, 0.0}};
        const std::vector<std::pair<int, int>> sizes = {{1, 1}, {1, 4}, {4, 1}, {4, 2},
                                                        {4, 4}, {4, 6}, {3, 7}, {8, 32}};
        for (Schedule s : {Schedule::ZeroBubbleH1, Schedule::ZeroBubbleH2})
            for (const auto& [p, m] : sizes)
                for (const auto& [f, b, w] : times)
                    QTest::addRow("%s p=%d m=%d f=%g b=%g w=%g", scheduleName(s), p, m, f, b, w)
                        << int(s) << qint64(p) << qint64(m) << f << b << w;
    }

    void zeroBubbleSchedulesAreValid()
    {
        // Any times and sizes, small m included: every pass once, no pass before its input,
        // none idling when it could run, counts matching a sweep over the events; ZB-H1 never
        // holds more than 1F1B, ZB-H2 never more than its limit.
        QFETCH(int, schedule);
        QFETCH(qint64, p);
        QFETCH(qint64, m);
        QFETCH(double, f);
        QFETCH(double, b);
        QFETCH(double, w);
        const PipelineInputs in = makeInputs(static_cast<Schedule>(schedule), p, m, 1, f, b, w);
        const PipelineResult r = simulatePipeline(in);
        const std::string problem = checkSchedule(in, r);
        QVERIFY2(problem.empty(), problem.c_str());
        for (qint64 s = 0; s < p; ++s) {
            const qint64 limit = in.schedule == Schedule::ZeroBubbleH1
                ? std::min(p - s, m)
                : std::min(2 * (p - s) - 1, m);
            QVERIFY(r.peakInFlight[std::size_t(s)] <= limit);
        }
        // The order alone, timed again, gives the same run.
        const PipelineResult again = simulatePipelineOrder(in, pipelineOrder(in));
        QCOMPARE(again.makespan, r.makespan);
    }

    void invalidWeightTime_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<double>("w");
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double inf = std::numeric_limits<double>::infinity();
        for (Schedule s : {Schedule::OneFOneB, Schedule::ZeroBubbleH1, Schedule::ZeroBubbleH2}) {
            QTest::addRow("%s negative", scheduleName(s)) << int(s) << -1.0;
            QTest::addRow("%s NaN", scheduleName(s)) << int(s) << nan;
            QTest::addRow("%s inf", scheduleName(s)) << int(s) << inf;
            QTest::addRow("%s underflows", scheduleName(s)) << int(s) << 5e-324;
            QTest::addRow("%s overflows", scheduleName(s)) << int(s) << 1e307;
        }
    }

    void invalidWeightTime()
    {
        QFETCH(int, schedule);
        QFETCH(double, w);
        const PipelineInputs in =
            makeInputs(static_cast<Schedule>(schedule), 4, 12, 1, 1.0, 1.0, w);
        SCALELAB_VERIFY_INPUT_ERROR(simulatePipeline(in), "pipeline.weight_time");
        // Only a split schedule has a closed form of Qi et al.'s bubble.
        SCALELAB_VERIFY_INPUT_ERROR(
            zeroBubbleBubbleTime(makeInputs(Schedule::OneFOneB, 4, 12, 1, 1.0, 1.0)),
            "pipeline.schedule");
    }

    void handWorkedDualPipe()
    {
        // p = 2, m = 4, f = b = w = 1. Microbatches 0, 1 enter at device 0, 2, 3 at device 1.
        // Device 0 holds stage 0 (chunk 0, for 0 and 1) and stage 1 (chunk 1, for 2 and 3);
        // device 1 the mirror image. Both devices are the middle of their V (h = p/2 - 1 = 0),
        // so the reference's eight steps are: F0 F1 (step 2); F0 then a whole B1 apart, F&B
        // (step 4, n - p + 1 = 1 round); B1 whole, B0 split (step 6); W (step 8). Device 0:
        //   F(0, s0) [0,1]; F(2, s1) [1,2] after device 1's F(2, s0) [0,1];
        //   F(1, s0) [2,3]; BW(2, s1) [3,5], the last stage needs only its own forward;
        //   F&B: F(3, s1) needs F(3, s0) [2,3] on device 1, B(0, s0) needs BW(0, s1) [3,5]
        //   there: [5,8]; BW(3, s1) [8,10]; B(1, s0) after BW(1, s1) [8,10] on device 1:
        //   [10,11]; W(1, s0) [11,12].
        // Device 1 is the same with the directions swapped. Neither idles: bubble 0, which is
        // the README's (p/2 - 1)(F&B + B - 3W) at p = 2. Activations: F F F, then B frees one
        // and the F&B's forward takes one before its backward frees: 3 = p + 1.
        const PipelineInputs in = makeInputs(Schedule::DualPipe, 2, 4, 1, 1.0, 1.0, 1.0);
        const PipelineResult r = simulatePipeline(in);
        QCOMPARE(r.devices, 2);
        QCOMPARE(r.events.size(), std::size_t(16));
        struct Want {
            int device, microbatch, chunk;
            Pass pass;
            int pair;
            bool withWeight;
            double start, end;
        };
        const Pass F = Pass::Forward, B = Pass::Backward, W = Pass::Weight,
                   FB = Pass::ForwardBackward;
        const std::vector<Want> want = {
            {0, 0, 0, F, -1, false, 0, 1},   {0, 2, 1, F, -1, false, 1, 2},
            {0, 1, 0, F, -1, false, 2, 3},   {0, 2, 1, B, -1, true, 3, 5},
            {0, 3, 1, FB, 0, false, 5, 8},   {0, 3, 1, B, -1, true, 8, 10},
            {0, 1, 0, B, -1, false, 10, 11}, {0, 1, 0, W, -1, false, 11, 12},
            {1, 2, 1, F, -1, false, 0, 1},   {1, 0, 0, F, -1, false, 1, 2},
            {1, 3, 1, F, -1, false, 2, 3},   {1, 0, 0, B, -1, true, 3, 5},
            {1, 1, 0, FB, 2, false, 5, 8},   {1, 1, 0, B, -1, true, 8, 10},
            {1, 3, 1, B, -1, false, 10, 11}, {1, 3, 1, W, -1, false, 11, 12},
        };
        for (std::size_t i = 0; i < want.size(); ++i) {
            const PipelineEvent& g = r.events[i];
            const Want& x = want[i];
            QVERIFY2(g.stage == x.device && g.microbatch == x.microbatch && g.chunk == x.chunk
                         && g.pass == x.pass && g.pairMicrobatch == x.pair
                         && g.withWeight == x.withWeight && g.start == x.start && g.end == x.end,
                     qPrintable(QString("event %1: %2 [%3, %4]")
                                    .arg(i)
                                    .arg(QString::fromStdString(where(g)))
                                    .arg(g.start)
                                    .arg(g.end)));
        }
        QCOMPARE(r.makespan, 12.0);
        QCOMPARE(r.bubbleTime, 0.0);
        QCOMPARE(r.simulatedBubbleFraction, 0.0);
        QCOMPARE(r.peakInFlight, (std::vector<int>{3, 3}));
        QCOMPARE(r.peakActivations, (std::vector<double>{3.0, 3.0}));
        QCOMPARE(r.peakWeightPending, (std::vector<int>{1, 1}));
        QCOMPARE(r.parametersPerDevice, 2.0);
        const std::string problem = checkDualSchedule(in, r);
        QVERIFY2(problem.empty(), problem.c_str());
    }

    void handWorkedDualPipeV()
    {
        // p = 4 stages on 2 devices, m = 4, f = b = w = 1. Device 0 holds stages 0 and 3, device
        // 1 stages 1 and 2; every microbatch goes 0 -> 1 -> 2 -> 3 (devices 0, 1, 1, 0) and back.
        // Device 0 (h = 0): F F (step 1), F0 F3 (step 2: stage 0 of mb 2, stage 3 of mb 0),
        // then B(0, s3) W F(1, s3) (step 3), two rounds of F&B pairs (step 4), ... Its run:
        //   F(0,s0) F(1,s0) F(2,s0) [0,3]; F(0,s3) [3,4] after device 1's F(0,s2) [2,3];
        //   B(0,s3) [4,5], W [5,6], F(1,s3) [6,7]; F&B(F(3,s0), B(1,s3)) [7,10];
        //   F&B(F(2,s3), B(0,s0)) needs B(0,s1), whole on device 1 at [8,11] after its
        //   F&B [8,11]... so it waits: idle [10,11], runs [11,14]; BW(2,s3) [14,16];
        //   F&B(F(3,s3), B(1,s0)) needs B(1,s1) from device 1's F&B [14,17]: idle [16,17].
        // Device 1 waits [0,1] for its first input and [21,22] at the end (B(3,s2) needs
        // BW(3,s3) on device 0 [20,22]). Each device idles 2 inside its own run: the README's
        // (p/2 - 1)(F&B + B - 3W) = 1 x (3 + 2 - 3) = 2 with F&B = 3, B = 2, W = 1.
        const PipelineInputs in = makeInputs(Schedule::DualPipeV, 4, 4, 1, 1.0, 1.0, 1.0);
        const PipelineResult r = simulatePipeline(in);
        QCOMPARE(r.devices, 2);
        QCOMPARE(r.makespan, 26.0);
        QCOMPARE(r.bubbleTime, 2.0);
        QCOMPARE(r.bubbleRate, 2.0 / 24.0); // a device's work: 2m (f + b + w) = 24
        QCOMPARE(dualPipeBubbleTime(in), 2.0);
        QCOMPARE(r.events[0].start, 0.0);
        // The idle stretches named above, from the events.
        auto idleOn = [&](int device) {
            std::vector<std::pair<double, double>> gaps;
            double free = -1;
            for (const PipelineEvent& e : r.events)
                if (e.stage == device) {
                    if (free >= 0 && e.start > free)
                        gaps.emplace_back(free, e.start);
                    free = e.end;
                }
            return gaps;
        };
        QCOMPARE(idleOn(0), (std::vector<std::pair<double, double>>{{10, 11}, {16, 17}}));
        QCOMPARE(idleOn(1), (std::vector<std::pair<double, double>>{{21, 22}}));
        QCOMPARE(r.peakActivations, (std::vector<double>{5.0, 5.0})); // p + 1
        QCOMPARE(r.parametersPerDevice, 2.0);
        const std::string problem = checkDualSchedule(in, r);
        QVERIFY2(problem.empty(), problem.c_str());
    }

    void publishedDualPipeFigures_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<qint64>("p");
        QTest::addColumn<qint64>("m");
        QTest::addColumn<double>("f");
        QTest::addColumn<double>("b");
        QTest::addColumn<double>("w");
        for (const Schedule s : {Schedule::DualPipe, Schedule::DualPipeV})
            for (const qint64 p : {2, 4, 6, 8, 16, 32})
                for (const qint64 m : {2 * p, 2 * p + 2, 4 * p})
                    for (const auto& [f, b, w] :
                         {std::tuple{1.0, 1.0, 1.0}, std::tuple{2.0, 2.0, 1.0},
                          std::tuple{1.0, 1.0, 0.5}, std::tuple{1.0, 1.0, 0.0}})
                        QTest::addRow("%s p=%lld m=%lld f=%g b=%g w=%g", scheduleName(s), p, m, f,
                                      b, w)
                            << int(s) << p << m << f << b << w;
    }

    void publishedDualPipeFigures()
    {
        // The DualPipe README's table, same number of stages p: bubble 1F1B (p-1)(F+B), ZB1P
        // (p-1)(F+B-2W), DualPipe and DualPipeV (p/2-1)(F&B+B-3W); parameters per device 1x, 1x,
        // 2x, 2x; activations per device p, p, p+1, p+1. Its B is a whole backward (b + w
        // here) and F&B is taken as f + b + w, so DualPipe's is (p/2-1)(f + 2b - w). With
        // f = b and w <= b (the README's diagram) the simulation gives exactly these; every
        // time is a multiple of 1/2, so the figures are exact.
        QFETCH(int, schedule);
        QFETCH(qint64, p);
        QFETCH(qint64, m);
        QFETCH(double, f);
        QFETCH(double, b);
        QFETCH(double, w);
        const PipelineInputs in = makeInputs(static_cast<Schedule>(schedule), p, m, 1, f, b, w);
        const PipelineResult r = simulatePipeline(in);
        const double published = double(p / 2 - 1) * ((f + b + w) + (b + w) - 3 * w);
        QCOMPARE(dualPipeBubbleTime(in), published);
        QCOMPARE(r.bubbleTime, published);
        QCOMPARE(r.parametersPerDevice, 2.0);
        QCOMPARE(*std::max_element(r.peakActivations.begin(), r.peakActivations.end()),
                 double(p + 1));
        const std::string problem = checkDualSchedule(in, r);
        QVERIFY2(problem.empty(), problem.c_str());
        // The other rows of the table at the same p (m >= p here).
        const PipelineResult ofob =
            simulatePipeline(makeInputs(Schedule::OneFOneB, p, m, 1, f, b, w));
        QCOMPARE(ofob.bubbleTime, double(p - 1) * (f + (b + w)));
        QCOMPARE(ofob.parametersPerDevice, 1.0);
        QCOMPARE(ofob.peakActivations.front(), double(p));
        const PipelineResult zb1p =
            simulatePipeline(makeInputs(Schedule::ZeroBubbleH1, p, m, 1, f, b, w));
        QCOMPARE(zb1p.bubbleTime, double(p - 1) * (f + (b + w) - 2 * w));
        QCOMPARE(zb1p.peakActivations.front(), double(p));
    }

    void dualPipeDiffersFromPublished_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<double>("f");
        QTest::addColumn<double>("b");
        QTest::addColumn<double>("w");
        QTest::addColumn<double>("simulated");
        const int dp = int(Schedule::DualPipe), dv = int(Schedule::DualPipeV);
        // p = 8, m = 16: published (p/2-1)(f + 2b - w) = 3 (f + 2b - w).
        QTest::newRow("f > b") << dp << 2.0 << 1.0 << 1.0 << 12.0; // published 9
        QTest::newRow("f < b") << dp << 1.0 << 2.0 << 1.0 << 11.0; // published 12
        QTest::newRow("w > b") << dv << 1.0 << 1.0 << 2.0 << 6.0; // published 3
        QTest::newRow("f < b, no W") << dv << 1.0 << 2.0 << 0.0 << 14.0; // published 15
    }

    void dualPipeDiffersFromPublished()
    {
        // The README's formula is read off its diagram, where F and B (the input gradient) are
        // equally long and W no longer. Outside that the waits differ, and so does the bubble:
        // the tab says so. The simulated values are what the hand-checked order gives.
        QFETCH(int, schedule);
        QFETCH(double, f);
        QFETCH(double, b);
        QFETCH(double, w);
        QFETCH(double, simulated);
        const PipelineInputs in = makeInputs(static_cast<Schedule>(schedule), 8, 16, 1, f, b, w);
        const PipelineResult r = simulatePipeline(in);
        QCOMPARE(dualPipeBubbleTime(in), 3.0 * (f + 2 * b - w));
        QCOMPARE(r.bubbleTime, simulated);
        QVERIFY(r.bubbleTime != dualPipeBubbleTime(in));
        const std::string problem = checkDualSchedule(in, r);
        QVERIFY2(problem.empty(), problem.c_str());
    }

    void dualPipeOrders()
    {
        // The order times to the same schedule through simulatePipelineOrder; broken orders
        // are refused, and one whose W comes before its B deadlocks with a message.
        for (const Schedule s : {Schedule::DualPipe, Schedule::DualPipeV}) {
            const PipelineInputs in = makeInputs(s, 6, 14, 1, 1.0, 1.5, 0.5);
            const std::vector<PipelineEvent> order = pipelineOrder(in);
            const PipelineResult a = simulatePipeline(in);
            const PipelineResult b = simulatePipelineOrder(in, order);
            QCOMPARE(a.makespan, b.makespan);
            QCOMPARE(a.events.size(), b.events.size());
            std::vector<PipelineEvent> twice = order;
            twice[1] = twice[0];
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, simulatePipelineOrder(in, twice));
            std::vector<PipelineEvent> shorter(order.begin(), order.end() - 1);
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, simulatePipelineOrder(in, shorter));
            std::vector<PipelineEvent> moved = order;
            moved[0].stage = 1; // device 0's first forward is not device 1's to run
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, simulatePipelineOrder(in, moved));
            // The last pass of device 0 is a W; put it first.
            std::vector<PipelineEvent> early = order;
            const auto last = std::find_if(early.begin(), early.end(),
                                           [](const PipelineEvent& e) { return e.stage == 1; })
                - 1;
            QCOMPARE(last->pass, Pass::Weight);
            std::rotate(early.begin(), last, last + 1);
            QVERIFY_THROWS_EXCEPTION(std::logic_error, simulatePipelineOrder(in, early));
        }
    }

    void largeDualPipeIsCorrect()
    {
        // The tab's largest case, p = 32 and m = 256, and DualPipeV on 32 devices.
        for (const auto& [s, p] :
             {std::pair{Schedule::DualPipe, 32}, std::pair{Schedule::DualPipeV, 64}}) {
            const PipelineInputs in = makeInputs(s, p, 256, 1, 1.0, 1.0, 1.0);
            const PipelineResult r = simulatePipeline(in);
            const std::string problem = checkDualSchedule(in, r);
            QVERIFY2(problem.empty(), problem.c_str());
            QCOMPARE(r.bubbleTime, double(p - 2));
        }
    }

    void largeInterleavedIsCorrect()
    {
        // The size the Gantt tab must redraw live (its speed is measured in bench/, not here).
        const PipelineInputs in = makeInputs(Schedule::Interleaved, 32, 256, 4, 1.0, 2.0);
        const PipelineResult r = simulatePipeline(in);
        QCOMPARE(r.events.size(), std::size_t(2 * 32 * 256 * 4));
        QVERIFY(closeRelative(r.makespan, (256.0 + 31.0 / 4.0) * 3.0));
        const std::string problem = checkSchedule(in, r);
        QVERIFY2(problem.empty(), problem.c_str());
    }
};

QTEST_GUILESS_MAIN(TstPipeline)
#include "tst_pipeline.moc"
