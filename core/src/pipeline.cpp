#include "scalelab/core/pipeline.h"

#include "pipeline_dual.h"
#include "scalelab/core/error.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

namespace scalelab::core {

namespace {

// Chunks per stage as the simulator uses them: only the interleaved schedule splits a stage.
std::int64_t chunksOf(const PipelineInputs& in)
{
    return in.schedule == Schedule::Interleaved ? in.virtualStages : 1;
}

bool isKnownSchedule(Schedule s)
{
    return s == Schedule::GPipe || s == Schedule::OneFOneB || s == Schedule::Interleaved
        || s == Schedule::ZeroBubbleH1 || s == Schedule::ZeroBubbleH2 || isDualSchedule(s);
}

// DualPipe's and DualPipeV's own conditions: the reference implementation's assertions
// (deepseek-ai/DualPipe: even ranks, even chunks >= 2 ranks; DualPipeV: chunks >= 2 ranks).
void validateDual(const PipelineInputs& in)
{
    const bool dual = in.schedule == Schedule::DualPipe;
    const std::string name = dual ? "dualpipe" : "dualpipev";
    require(in.stages % 2 == 0, "pipeline.stages",
            "an even number for " + name + " (device i holds stages i and p-1-i)");
    if (dual)
        require(in.microbatches % 2 == 0 && in.microbatches >= 2 * in.stages,
                "pipeline.microbatches",
                "an even number >= 2 x stages (" + std::to_string(2 * in.stages)
                    + ") for dualpipe: half enter at each end, and each direction needs one "
                      "per stage to fill its pipeline");
    else
        require(in.microbatches >= in.stages, "pipeline.microbatches",
                "at least the stages (" + std::to_string(in.stages) + ") for dualpipev: twice its "
                    + std::to_string(in.stages / 2) + " devices, to fill the V");
}

void requireTime(double t, const char* field)
{
    require(std::isfinite(t) && t > 0.0, field, "a finite number > 0");
}

// A fused backward (B and W in one pass) of one chunk.
double fusedBackward(const PipelineInputs& in, int v)
{
    // B + 0 is B exactly, so scenarios without weight_time keep every figure to the bit.
    return (in.backwardTime + in.weightTime) / v;
}

// Sizes of one validated problem, in the index types the simulator works with.
struct Shape {
    int p = 1; // stages
    int m = 1; // microbatches
    int v = 1; // chunks per stage
    int kinds = 2; // passes per microbatch and chunk: F and B, or F, B and W when split
    std::size_t perStage = 0; // passes on one stage: kinds m v
    std::size_t total = 0; // passes on all stages
};

Shape shapeOf(const PipelineInputs& in)
{
    // validate() has bounded p m v by kMaxPipelinePasses, so all of these fit in int.
    Shape sh;
    sh.p = static_cast<int>(in.stages);
    sh.m = static_cast<int>(in.microbatches);
    sh.v = static_cast<int>(chunksOf(in));
    sh.kinds = splitsBackward(in.schedule) ? 3 : 2;
    sh.perStage = static_cast<std::size_t>(sh.kinds) * static_cast<std::size_t>(sh.m)
        * static_cast<std::size_t>(sh.v);
    sh.total = sh.perStage * static_cast<std::size_t>(sh.p);
    return sh;
}

// One number per (microbatch, model part, direction), to find a pass's end time in O(1).
std::size_t passId(const Shape& sh, int microbatch, int part, Pass pass)
{
    const std::size_t parts = static_cast<std::size_t>(sh.p) * static_cast<std::size_t>(sh.v);
    return (static_cast<std::size_t>(microbatch) * parts + static_cast<std::size_t>(part))
        * static_cast<std::size_t>(sh.kinds)
        + static_cast<std::size_t>(pass);
}

const char* passName(Pass pass)
{
    return pass == Pass::Forward ? "forward"
        : pass == Pass::Backward ? "backward"
        : pass == Pass::Weight   ? "weight pass"
                                 : "F&B";
}

std::string describe(const PipelineEvent& e)
{
    return std::string(passName(e.pass)) + " of microbatch " + std::to_string(e.microbatch)
        + ", chunk " + std::to_string(e.chunk) + " on stage " + std::to_string(e.stage);
}

// Warm-up forwards of stage s before it starts alternating (see pipelineOrder's comment).
std::int64_t warmupForwards(Schedule schedule, std::int64_t p, std::int64_t m, std::int64_t v,
                            std::int64_t s)
{
    switch (schedule) {
    case Schedule::GPipe:
        return m;
    case Schedule::OneFOneB:
        // Stage s is p - s - 1 hops from the last stage, which can start backwards at once.
        return std::min(p - s - 1, m);
    case Schedule::Interleaved:
        // Megatron-LM's count: v - 1 rounds of p chunk-forwards on every stage, plus two per
        // hop from the last stage (one slot for the forward going on, one for its backward
        // coming back), at most every forward there is.
        return std::min((p - s - 1) * 2 + (v - 1) * p, m * v);
    case Schedule::ZeroBubbleH1:
    case Schedule::ZeroBubbleH2:
    case Schedule::DualPipe:
    case Schedule::DualPipeV:
        break; // their orders are built elsewhere
    }
    return m;
}

void appendStageOrder(std::vector<PipelineEvent>& out, Schedule schedule, const Shape& sh, int s)
{
    const std::int64_t p = sh.p;
    const std::int64_t v = sh.v;
    const std::int64_t total = std::int64_t{sh.m} * v;
    const std::int64_t warm = warmupForwards(schedule, p, sh.m, v, s);

    // The n-th pass of a direction walks microbatches in groups of p, one chunk after another
    // (forwards from the first chunk, backwards from the last); with v = 1 it is microbatch n.
    auto push = [&](std::int64_t n, Pass pass) {
        const std::int64_t round = (n / p) % v;
        PipelineEvent e;
        e.stage = s;
        e.microbatch = static_cast<int>((n / (p * v)) * p + n % p);
        e.chunk = static_cast<int>(pass == Pass::Forward ? round : v - 1 - round);
        e.pass = pass;
        out.push_back(e);
    };
    for (std::int64_t n = 0; n < warm; ++n)
        push(n, Pass::Forward);
    for (std::int64_t n = 0; n < total - warm; ++n) {
        push(warm + n, Pass::Forward);
        push(n, Pass::Backward);
    }
    for (std::int64_t n = total - warm; n < total; ++n)
        push(n, Pass::Backward);
}

// ZB-H1 on stage s: 1F1B's forwards and B passes, W passes held back until s are owed, then one
// after each B, the held-back ones last. With f = b = w the last stage's W passes fill what 1F1B
// leaves idle, and each stage's bubble shrinks from (p-1)(f+b+w) to (p-1)(f+b-w).
void appendZeroBubbleH1(std::vector<PipelineEvent>& out, const Shape& sh, int s)
{
    int next[3] = {0, 0, 0}; // next microbatch of each pass kind
    auto push = [&](Pass pass) {
        PipelineEvent e;
        e.stage = s;
        e.pass = pass;
        e.microbatch = next[static_cast<int>(pass)]++;
        out.push_back(e);
    };
    auto backward = [&] {
        push(Pass::Backward);
        if (next[1] - next[2] > s)
            push(Pass::Weight);
    };
    const int warm = std::min(sh.p - s - 1, sh.m);
    while (next[0] < warm)
        push(Pass::Forward);
    while (next[0] < sh.m) {
        push(Pass::Forward);
        backward();
    }
    while (next[1] < sh.m)
        backward();
    while (next[2] < sh.m)
        push(Pass::Weight);
}

// ZB-H2's list scheduling: one stage's counters and where it stands in time.
struct ListStage {
    int next[3] = {0, 0, 0}; // next microbatch of F, B, W
    std::size_t placed = 0; // passes decided so far
    double freeAt = 0.0;
    double key = 0.0; // when it is next looked at
    bool waiting = false; // nothing to run until a neighbour's pass ends
};

// The stages still to be looked at, earliest key first and the lowest stage among equal keys: a
// tournament tree whose leaves are the stages (a key of infinity is a stage with nothing to look
// at), each inner node the winner of its two children. A stage's key changes in log p steps, the
// winner is read at the root, and there are never stale entries to skip, whatever p is.
class EarliestStage {
public:
    explicit EarliestStage(int stages)
    {
        while (m_leaves < stages)
            m_leaves *= 2;
        m_key.assign(static_cast<std::size_t>(m_leaves), kNever);
        m_winner.assign(2 * static_cast<std::size_t>(m_leaves), 0);
        for (int s = 0; s < m_leaves; ++s)
            m_winner[static_cast<std::size_t>(m_leaves + s)] = s;
        for (int node = m_leaves - 1; node >= 1; --node)
            replay(static_cast<std::size_t>(node));
    }

    void set(int s, double key)
    {
        m_key[static_cast<std::size_t>(s)] = key;
        for (auto node = static_cast<std::size_t>(m_leaves + s) / 2; node >= 1; node /= 2)
            replay(node);
    }
    void remove(int s) { set(s, kNever); }

    /// The stage to look at next, or -1 when none has anything to look at.
    int earliest() const
    {
        const int s = m_winner[1];
        return m_key[static_cast<std::size_t>(s)] == kNever ? -1 : s;
    }

private:
    static constexpr double kNever = std::numeric_limits<double>::infinity();

    void replay(std::size_t node)
    {
        const int a = m_winner[2 * node];
        const int b = m_winner[2 * node + 1];
        // a is always the lower stage: it wins ties.
        m_winner[node] =
            m_key[static_cast<std::size_t>(b)] < m_key[static_cast<std::size_t>(a)] ? b : a;
    }

    int m_leaves = 1;
    std::vector<double> m_key;
    std::vector<int> m_winner; // [1] is the root, [m_leaves + s] stage s's leaf
};

struct ListState {
    const PipelineInputs& in;
    const Shape& sh;
    std::vector<ListStage> stages;
    std::vector<double> forwardEnd; // [s m + j], negative until decided
    std::vector<double> backwardEnd;
    std::vector<PipelineEvent>& order; // stage s's passes at [s perStage, (s + 1) perStage)
    EarliestStage queue;

    double ended(const std::vector<double>& ends, int s, int j) const
    {
        return ends[static_cast<std::size_t>(s) * static_cast<std::size_t>(sh.m)
                    + static_cast<std::size_t>(j)];
    }
    bool doneBy(const std::vector<double>& ends, int s, int j, double t) const
    {
        const double e = ended(ends, s, j);
        return e >= 0.0 && e <= t;
    }

    // The pass stage s runs at time t: B if ready, else F if ready and under the in-flight
    // limit 2 (p - s) - 1, else a W it owes; nothing if none.
    std::optional<Pass> choose(int s, double t) const
    {
        const ListStage& x = stages[static_cast<std::size_t>(s)];
        const int b = x.next[1];
        if (b < sh.m
            && (s + 1 < sh.p ? doneBy(backwardEnd, s + 1, b, t) : doneBy(forwardEnd, s, b, t)))
            return Pass::Backward;
        const int f = x.next[0];
        if (f < sh.m && f - b < 2 * (sh.p - s) - 1 && (s == 0 || doneBy(forwardEnd, s - 1, f, t)))
            return Pass::Forward;
        if (x.next[2] < b)
            return Pass::Weight;
        return std::nullopt;
    }

    // When a stage that can run nothing at t can next run something: the end of a decided pass
    // it waits for, if one ends later; none if it waits for a pass not decided yet.
    std::optional<double> nextChance(int s, double t) const
    {
        const ListStage& x = stages[static_cast<std::size_t>(s)];
        std::optional<double> at;
        auto consider = [&](double e) {
            if (e > t && (!at || e < *at))
                at = e;
        };
        const int b = x.next[1];
        if (b < sh.m)
            consider(s + 1 < sh.p ? ended(backwardEnd, s + 1, b) : ended(forwardEnd, s, b));
        const int f = x.next[0];
        if (f < sh.m && f - b < 2 * (sh.p - s) - 1 && s > 0)
            consider(ended(forwardEnd, s - 1, f));
        return at;
    }

    // A neighbour's pass that ends at `at` may be what stage s waits for: look at it again then
    // (or when it is free, if later), unless it is to be looked at sooner anyway.
    void wake(int s, double at)
    {
        if (s < 0 || s >= sh.p)
            return;
        ListStage& x = stages[static_cast<std::size_t>(s)];
        const double key = std::max(at, x.freeAt);
        if (x.waiting || key < x.key) {
            x.waiting = false;
            x.key = key;
            queue.set(s, key);
        }
    }

    void run(int s, double t, Pass pass)
    {
        ListStage& x = stages[static_cast<std::size_t>(s)];
        const double duration[3] = {in.forwardTime, in.backwardTime, in.weightTime};
        PipelineEvent& e = order[static_cast<std::size_t>(s) * sh.perStage + x.placed++];
        e.stage = s;
        e.pass = pass;
        e.microbatch = x.next[static_cast<int>(pass)]++;
        e.start = t;
        e.end = t + duration[static_cast<int>(pass)];
        x.freeAt = x.key = e.end;
        const std::size_t at = static_cast<std::size_t>(s) * static_cast<std::size_t>(sh.m)
            + static_cast<std::size_t>(e.microbatch);
        if (pass == Pass::Forward) {
            forwardEnd[at] = e.end;
            wake(s + 1, e.end);
        } else if (pass == Pass::Backward) {
            backwardEnd[at] = e.end;
            wake(s - 1, e.end);
        }
        if (x.next[2] < sh.m)
            queue.set(s, x.key);
        else
            queue.remove(s); // its last W: nothing is left for it to run
    }
};

// ZB-H2's order (see pipelineOrder), by list scheduling in time. Stages are taken earliest
// first; one that can run nothing waits until a neighbour ends a pass it may need (F from the
// stage before, B from the stage after), so a stage is never idle while it could run a pass.
std::vector<PipelineEvent> zeroBubbleH2Order(const PipelineInputs& in, const Shape& sh)
{
    const std::size_t cells = static_cast<std::size_t>(sh.p) * static_cast<std::size_t>(sh.m);
    std::vector<PipelineEvent> order(sh.total);
    ListState st{in,
                 sh,
                 std::vector<ListStage>(static_cast<std::size_t>(sh.p)),
                 std::vector<double>(cells, -1.0),
                 std::vector<double>(cells, -1.0),
                 order,
                 EarliestStage(sh.p)};
    for (int s = 0; s < sh.p; ++s)
        st.queue.set(s, 0.0);
    for (int s = st.queue.earliest(); s >= 0; s = st.queue.earliest()) {
        ListStage& x = st.stages[static_cast<std::size_t>(s)];
        const double t = x.key;
        if (const auto pass = st.choose(s, t)) {
            st.run(s, t, *pass);
        } else if (const auto at = st.nextChance(s, t)) {
            x.key = *at;
            st.queue.set(s, *at);
        } else {
            x.waiting = true; // a neighbour's next decision wakes it
            st.queue.remove(s);
        }
    }
    for (const ListStage& x : st.stages)
        if (x.placed != sh.perStage) // cannot happen: B, then F under the limit, always free
            throw std::logic_error("pipeline schedule deadlock in zb-h2's list scheduling");
    return order;
}

// Throws unless `order` holds every pass of `sh` exactly once, each stage's block in place.
void checkOrder(const Shape& sh, const std::vector<PipelineEvent>& order)
{
    if (order.size() != sh.total)
        throw std::invalid_argument("pipeline order: expected " + std::to_string(sh.total)
                                    + " passes, got " + std::to_string(order.size()));
    std::vector<char> seen(sh.total, 0);
    for (std::size_t i = 0; i < order.size(); ++i) {
        const PipelineEvent& e = order[i];
        const auto stage = static_cast<int>(i / sh.perStage);
        if (e.stage != stage || e.microbatch < 0 || e.microbatch >= sh.m || e.chunk < 0
            || e.chunk >= sh.v
            || (e.pass != Pass::Forward && e.pass != Pass::Backward
                && (e.pass != Pass::Weight || sh.kinds != 3)))
            throw std::invalid_argument("pipeline order: entry " + std::to_string(i)
                                        + " is out of range or not in stage "
                                        + std::to_string(stage) + "'s block");
        const std::size_t id = passId(sh, e.microbatch, e.chunk * sh.p + e.stage, e.pass);
        if (seen[id])
            throw std::invalid_argument("pipeline order: " + describe(e) + " appears twice");
        seen[id] = 1;
    }
}

} // namespace

void validate(const PipelineInputs& in)
{
    require(in.stages >= 1 && in.stages <= kMaxPipelineStages, "pipeline.stages",
            "a whole number in 1.." + std::to_string(kMaxPipelineStages));
    require(in.microbatches >= 1, "pipeline.microbatches", "a whole number >= 1");
    require(isKnownSchedule(in.schedule), "pipeline.schedule",
            "one of \"gpipe\", \"1f1b\", \"interleaved\", \"zb-h1\", \"zb-h2\", "
            "\"dualpipe\", \"dualpipev\"");
    require(in.virtualStages >= 1, "pipeline.virtual_stages", "a whole number >= 1");
    requireTime(in.forwardTime, "pipeline.forward_time");
    requireTime(in.backwardTime, "pipeline.backward_time");
    require(std::isfinite(in.weightTime) && in.weightTime >= 0.0, "pipeline.weight_time",
            "a finite number >= 0");
    if (in.schedule == Schedule::Interleaved)
        require(in.microbatches % in.stages == 0, "pipeline.microbatches",
                "a multiple of the stages (" + std::to_string(in.stages)
                    + ") for the interleaved schedule");
    if (isDualSchedule(in.schedule))
        validateDual(in);

    // Memory and time grow with p m v; divide rather than multiply so huge inputs cannot wrap.
    const std::int64_t v = chunksOf(in);
    const bool small = in.stages <= kMaxPipelinePasses
        && in.microbatches <= kMaxPipelinePasses / in.stages
        && v <= kMaxPipelinePasses / (in.stages * in.microbatches);
    require(small, "pipeline.microbatches",
            "small enough that stages x microbatches"
                + std::string(in.schedule == Schedule::Interleaved ? " x virtual_stages" : "")
                + " is at most " + std::to_string(kMaxPipelinePasses));

    // A chunk's share of a time must stay a normal double, or passes would take no time at all.
    const double minTime = std::numeric_limits<double>::min() * static_cast<double>(v);
    require(in.forwardTime >= minTime, "pipeline.forward_time",
            "a number large enough that its share per chunk does not underflow");
    require(in.backwardTime >= minTime, "pipeline.backward_time",
            "a number large enough that its share per chunk does not underflow");
    require(in.weightTime == 0.0 || in.weightTime >= minTime, "pipeline.weight_time",
            "0, or a number large enough that its share per chunk does not underflow");
    // GPipe, 1F1B and interleaved end by (m + p - 1)(f + b + w), the zero-bubble schedules by
    // (m + 2p)(f + b + w), DualPipeV's devices run 2m passes each; the bubble needs p times
    // that: keep finite.
    const std::int64_t slots = (isDualSchedule(in.schedule) ? 2 : 1) * in.microbatches
        + (splitsBackward(in.schedule) ? 2 : 1) * in.stages;
    const double bound = static_cast<double>(in.stages) * static_cast<double>(slots)
        * (in.forwardTime + in.backwardTime + in.weightTime);
    const double largest = std::max({in.forwardTime, in.backwardTime, in.weightTime});
    require(std::isfinite(bound),
            largest == in.forwardTime        ? "pipeline.forward_time"
                : largest == in.backwardTime ? "pipeline.backward_time"
                                             : "pipeline.weight_time",
            "a number small enough that the schedule's length stays finite");
}

double pipelineBubbleFraction(std::int64_t stages, std::int64_t microbatches,
                              std::int64_t virtualStages)
{
    require(stages >= 1, "pipeline.stages", "a whole number >= 1");
    require(microbatches >= 1, "pipeline.microbatches", "a whole number >= 1");
    require(virtualStages >= 1, "pipeline.virtual_stages", "a whole number >= 1");
    // Bubble fraction (41.5): p - 1 idle slots out of m + p - 1; chunks shrink a slot to 1/v.
    // In double so that no input can overflow; exact below 2^53, which covers all valid inputs.
    const double idle = static_cast<double>(stages - 1);
    return idle / (static_cast<double>(virtualStages) * static_cast<double>(microbatches) + idle);
}

double pipelineBubbleOverIdeal(std::int64_t stages, std::int64_t microbatches,
                               std::int64_t virtualStages)
{
    require(stages >= 1, "pipeline.stages", "a whole number >= 1");
    require(microbatches >= 1, "pipeline.microbatches", "a whole number >= 1");
    require(virtualStages >= 1, "pipeline.virtual_stages", "a whole number >= 1");
    // Megatron-LM's bubble: p - 1 idle slots against m slots of useful work; chunks shrink a
    // slot to 1/v. In double, exact below 2^53 like the chapter's form.
    return static_cast<double>(stages - 1)
        / (static_cast<double>(virtualStages) * static_cast<double>(microbatches));
}

double pipelineBubbleOverBusy(std::int64_t stages, std::int64_t microbatches,
                              std::int64_t virtualStages)
{
    const double closedForm = pipelineBubbleOverIdeal(stages, microbatches, virtualStages);
    if (microbatches >= stages)
        return closedForm;
    const auto p = static_cast<double>(stages);
    const auto m = static_cast<double>(microbatches);
    const auto v = static_cast<double>(virtualStages);
    return ((p - m) * v + m - 1) / (v * m);
}

bool splitsBackward(Schedule s)
{
    return s == Schedule::ZeroBubbleH1 || s == Schedule::ZeroBubbleH2 || isDualSchedule(s);
}

bool isDualSchedule(Schedule s)
{
    return s == Schedule::DualPipe || s == Schedule::DualPipeV;
}

std::int64_t pipelineDevices(const PipelineInputs& in)
{
    return in.schedule == Schedule::DualPipeV ? in.stages / 2 : in.stages;
}

int modelStageOf(const PipelineInputs& in, int device, int chunk)
{
    const int p = static_cast<int>(in.stages);
    if (isDualSchedule(in.schedule))
        return chunk == 0 ? device : p - 1 - device;
    return chunk * p + device;
}

double dualPipeBubbleTime(const PipelineInputs& in)
{
    require(isDualSchedule(in.schedule), "pipeline.schedule", "\"dualpipe\" or \"dualpipev\"");
    // DualPipe README: (PP/2 - 1)(F&B + B - 3W) with its B the whole backward b + w and F&B
    // taken as f + b + w: (p/2 - 1)(f + 2b - w).
    const double idle = static_cast<double>(in.stages / 2 - 1)
        * (in.forwardTime + 2.0 * in.backwardTime - in.weightTime);
    return std::max(0.0, idle);
}

double zeroBubbleBubbleTime(const PipelineInputs& in)
{
    require(in.schedule == Schedule::ZeroBubbleH1 || in.schedule == Schedule::ZeroBubbleH2,
            "pipeline.schedule", "\"zb-h1\" or \"zb-h2\"");
    // Qi et al., Table 2: W passes fill (p-1) w of 1F1B's (p-1)(f+b+w) in ZB-H1, and the extra
    // warm-up forwards another (p-1) w in ZB-H2.
    const double filled = in.schedule == Schedule::ZeroBubbleH1 ? 1.0 : 2.0;
    const double idle = static_cast<double>(in.stages - 1)
        * (in.forwardTime + in.backwardTime - filled * in.weightTime);
    return std::max(0.0, idle);
}

std::vector<PipelineEvent> pipelineOrder(const PipelineInputs& in)
{
    validate(in);
    if (isDualSchedule(in.schedule))
        return detail::dualPipeOrder(in);
    const Shape sh = shapeOf(in);
    if (in.schedule == Schedule::ZeroBubbleH2)
        return zeroBubbleH2Order(in, sh);
    std::vector<PipelineEvent> order;
    order.reserve(sh.total);
    for (int s = 0; s < sh.p; ++s) {
        if (in.schedule == Schedule::ZeroBubbleH1)
            appendZeroBubbleH1(order, sh, s);
        else
            appendStageOrder(order, in.schedule, sh, s);
    }
    for (PipelineEvent& e : order)
        e.start = e.end = 0.0;
    return order;
}

namespace {

/// The simulation's state: where each stage is in its order, when it is free, and when every
/// pass that has run ended (negative until then).
struct Progress {
    std::vector<double> endOf;
    std::vector<std::size_t> next;
    std::vector<double> freeAt;
};

/// The pass `e` (on `stage`) waits for, if any: the previous part's forward, the next part's
/// backward, or the same part's forward for the model's last part.
std::optional<std::size_t> dependencyOf(const Shape& sh, const PipelineEvent& e, int stage)
{
    const int part = e.chunk * sh.p + stage;
    const int lastPart = sh.p * sh.v - 1;
    if (e.pass == Pass::Weight)
        return passId(sh, e.microbatch, part, Pass::Backward);
    if (e.pass == Pass::Forward)
        return part > 0 ? std::optional(passId(sh, e.microbatch, part - 1, Pass::Forward))
                        : std::nullopt;
    if (part < lastPart)
        return passId(sh, e.microbatch, part + 1, Pass::Backward);
    return passId(sh, e.microbatch, part, Pass::Forward);
}

/// Runs stage `s` along its order until a pass must wait; returns whether any pass ran.
bool runStage(const PipelineInputs& in, const Shape& sh, std::vector<PipelineEvent>& order,
              Progress& pr, int s)
{
    const auto su = static_cast<std::size_t>(s);
    const double duration[3] = {in.forwardTime / sh.v,
                                sh.kinds == 3 ? in.backwardTime : fusedBackward(in, sh.v),
                                in.weightTime};
    const std::size_t stageEnd = (su + 1) * sh.perStage;
    const std::size_t before = pr.next[su];
    while (pr.next[su] < stageEnd) {
        PipelineEvent& e = order[pr.next[su]];
        double ready = 0.0;
        if (const auto dependency = dependencyOf(sh, e, s)) {
            if (pr.endOf[*dependency] < 0.0)
                break;
            ready = pr.endOf[*dependency];
        }
        e.start = std::max(pr.freeAt[su], ready);
        e.end = e.start + duration[static_cast<int>(e.pass)];
        pr.freeAt[su] = e.end;
        pr.endOf[passId(sh, e.microbatch, e.chunk * sh.p + s, e.pass)] = e.end;
        ++pr.next[su];
    }
    return pr.next[su] != before;
}

/// Timings of every pass of `order`. Stages are tried and run until they block. A stage's pass
/// waits on a pass of the stage before (forwards) or after it (backwards), so progress on stage
/// s can only unblock s +- 1 (cyclically, since chunk c's part after stage p-1 is chunk c+1 on
/// stage 0). This visits each pass once, with O(1) extra work per wake-up: linear in the
/// number of passes. Throws std::logic_error when the order deadlocks.
std::vector<double> runOrder(const PipelineInputs& in, const Shape& sh,
                             std::vector<PipelineEvent>& order)
{
    Progress pr{std::vector<double>(sh.total, -1.0), std::vector<std::size_t>(std::size_t(sh.p)),
                std::vector<double>(std::size_t(sh.p), 0.0)};
    for (int s = 0; s < sh.p; ++s)
        pr.next[static_cast<std::size_t>(s)] = static_cast<std::size_t>(s) * sh.perStage;
    std::vector<int> work;
    std::vector<char> queued(static_cast<std::size_t>(sh.p), 1);
    for (int s = sh.p - 1; s >= 0; --s)
        work.push_back(s);
    while (!work.empty()) {
        const int s = work.back();
        work.pop_back();
        queued[static_cast<std::size_t>(s)] = 0;
        if (!runStage(in, sh, order, pr, s))
            continue;
        for (const int t : {(s + 1) % sh.p, (s + sh.p - 1) % sh.p}) {
            const auto tu = static_cast<std::size_t>(t);
            if (!queued[tu] && pr.next[tu] < (tu + 1) * sh.perStage) {
                queued[tu] = 1;
                work.push_back(t);
            }
        }
    }
    // Nothing left to wake: any stage not at its end waits for a pass that can never run.
    for (int s = 0; s < sh.p; ++s) {
        const auto su = static_cast<std::size_t>(s);
        if (pr.next[su] < (su + 1) * sh.perStage)
            throw std::logic_error("pipeline schedule deadlock: the " + describe(order[pr.next[su]])
                                   + " waits for a pass that can never run");
    }
    return pr.freeAt;
}

/// The most activations each stage holds at once, in whole stages' worth.
void countInFlight(const Shape& sh, const std::vector<PipelineEvent>& order, PipelineResult& r)
{
    // No two passes of a stage overlap, so counting along the order is counting over time.
    // Activations count from F to the end of B: B frees what only it needs, and W keeps the
    // smaller part (its inputs), counted apart as weight gradients owed.
    r.peakInFlight.assign(static_cast<std::size_t>(sh.p), 0);
    r.peakWeightPending.assign(static_cast<std::size_t>(sh.p), 0);
    for (int s = 0; s < sh.p; ++s) {
        const auto su = static_cast<std::size_t>(s);
        int held = 0;
        int owed = 0;
        for (std::size_t i = su * sh.perStage; i < (su + 1) * sh.perStage; ++i) {
            const Pass pass = order[i].pass;
            held += pass == Pass::Forward ? 1 : pass == Pass::Backward ? -1 : 0;
            owed += sh.kinds != 3 ? 0 : pass == Pass::Backward ? 1 : pass == Pass::Weight ? -1 : 0;
            r.peakInFlight[su] = std::max(r.peakInFlight[su], held);
            r.peakWeightPending[su] = std::max(r.peakWeightPending[su], owed);
        }
    }
    // A chunk's activations are 1/v of its stage's, so held chunks count 1/v each.
    r.peakActivations.reserve(r.peakInFlight.size());
    for (const int held : r.peakInFlight)
        r.peakActivations.push_back(static_cast<double>(held) / static_cast<double>(sh.v));
}

/// Qi et al.'s bubble: the most idle time of one stage between its own first and last pass.
void measureStageBubble(const Shape& sh, const std::vector<PipelineEvent>& order, double work,
                        PipelineResult& r)
{
    for (std::size_t first = 0; first < order.size(); first += sh.perStage) {
        // A stage runs one pass at a time in its order, so its span is first start to last end.
        const double span = order[first + sh.perStage - 1].end - order[first].start;
        r.bubbleTime = std::max(r.bubbleTime, span - work);
    }
    r.bubbleRate = r.bubbleTime / work;
}

} // namespace

PipelineResult simulatePipelineOrder(const PipelineInputs& in, std::vector<PipelineEvent> order)
{
    validate(in);
    if (isDualSchedule(in.schedule))
        return detail::simulateDualOrder(in, std::move(order));
    const Shape sh = shapeOf(in);
    checkOrder(sh, order);
    const std::vector<double> freeAt = runOrder(in, sh, order);

    PipelineResult result;
    result.devices = sh.p;
    result.makespan = *std::max_element(freeAt.begin(), freeAt.end());
    // Busy time is m v passes of each kind per stage; one product instead of summing millions
    // of durations keeps the rounding small.
    const double stageBusy = static_cast<double>(sh.m) * static_cast<double>(sh.v)
        * (in.forwardTime / sh.v + fusedBackward(in, sh.v));
    const double busy = static_cast<double>(sh.p) * static_cast<double>(sh.m)
        * static_cast<double>(sh.v) * (in.forwardTime / sh.v + fusedBackward(in, sh.v));
    if (sh.kinds == 3) {
        // Qi et al.'s closed form: their bubble size against one stage's work.
        const double idle = zeroBubbleBubbleTime(in);
        result.bubbleFraction = idle / (idle + stageBusy);
        result.bubbleOverIdeal = idle / stageBusy;
    } else {
        result.bubbleFraction = pipelineBubbleFraction(in.stages, in.microbatches, sh.v);
        result.bubbleOverIdeal = pipelineBubbleOverIdeal(in.stages, in.microbatches, sh.v);
    }
    const double capacity = static_cast<double>(sh.p) * result.makespan;
    // Rounding can leave a perfectly full pipeline (p = 1) a hair below zero idle time.
    result.simulatedBubbleFraction = std::max(0.0, (capacity - busy) / capacity);
    result.simulatedBubbleOverIdeal = std::max(0.0, (capacity - busy) / busy);
    measureStageBubble(sh, order, stageBusy, result);
    countInFlight(sh, order, result);
    result.events = std::move(order);
    return result;
}

PipelineResult simulatePipeline(const PipelineInputs& in)
{
    return simulatePipelineOrder(in, pipelineOrder(in));
}

} // namespace scalelab::core
