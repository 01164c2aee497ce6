#include "scalelab/core/layoutsearch.h"

#include "threads.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <numeric>
#include <thread>
#include <tuple>

namespace scalelab::core {

namespace {

constexpr Recompute kRecipes[] = {Recompute::None, Recompute::Selective, Recompute::Full};

/// Divisibility failures kept for a search in which no (t, p) divides the global batch.
constexpr std::size_t kMaxDivisibilityFailures = 20;

std::string str(std::int64_t v)
{
    return std::to_string(v);
}

std::string gib(double bytes)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / 1073741824.0);
    return buf;
}

/// Trial divisions spent finding divisors; the search refuses past the options' budget.
struct Work {
    std::int64_t spent = 0;
    std::int64_t budget = 0;
    bool over() const { return spent > budget; }
};

/// The divisors of n (n >= 1) that are at most `upTo`, ascending; trial division up to the
/// square root, charged to `work` (empty once the budget is spent).
std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t upTo, Work& work)
{
    std::vector<std::int64_t> small;
    std::vector<std::int64_t> large;
    for (std::int64_t i = 1; i <= n / i; ++i) {
        if (++work.spent > work.budget)
            return {};
        if (n % i != 0)
            continue;
        small.push_back(i);
        if (i != n / i)
            large.push_back(n / i);
    }
    small.insert(small.end(), large.rbegin(), large.rend());
    std::erase_if(small, [upTo](std::int64_t x) { return x > upTo; });
    return small;
}

/// v = 1, and with p > 1 every v > 1 that cuts the layers into p v equal chunks (Megatron-LM's
/// interleaved schedule needs equal chunks; validate accepts uneven ones, which the search
/// leaves out). With p = 1 interleaving has no bubble to shrink, so v > 1 is left out too.
std::vector<std::int64_t> virtualStagesOf(std::int64_t layers, std::int64_t p, Work& work)
{
    std::vector<std::int64_t> out{1};
    if (p == 1)
        return out;
    for (std::int64_t v = 2; v <= layers / p; ++v) {
        if (++work.spent > work.budget)
            return out;
        if (layers % (p * v) == 0)
            out.push_back(v);
    }
    return out;
}

/// The keys fixed for a group of candidates; micro-batch, SP and recompute vary inside it.
struct Group {
    LayoutKey base;
    std::vector<std::int64_t> microBatches;
};

/// The sequence-parallel and recompute choices of every group, after the plan's keep.
struct Choices {
    std::vector<bool> sequenceParallel; ///< true is tried only where t > 1
    std::vector<Recompute> recompute;

    explicit Choices(const PlanInputs& plan)
    {
        const SearchKeep& keep = plan.searchKeep;
        for (const bool sp : {false, true})
            if (!keep.sequenceParallel || sp == plan.sequenceParallel)
                sequenceParallel.push_back(sp);
        for (const Recompute rc : kRecipes)
            if (!keep.recompute || rc == plan.recompute)
                recompute.push_back(rc);
    }

    /// The SP choices of a group whose tensor-parallel size is t.
    std::int64_t sequenceParallelCount(std::int64_t t) const
    {
        return std::ranges::count_if(sequenceParallel, [t](bool sp) { return !sp || t > 1; });
    }
};

std::int64_t candidatesOf(const Group& g, const Choices& c)
{
    return static_cast<std::int64_t>(g.microBatches.size()) * c.sequenceParallelCount(g.base.t)
        * std::ssize(c.recompute);
}

struct Enumeration {
    explicit Enumeration(const PlanInputs& plan)
        : choices(plan)
    {
    }

    Choices choices;
    std::vector<Group> groups;
    std::vector<LayoutFailure> divisibility; ///< (t, p) pairs whose d does not divide the batch
    std::int64_t candidates = 0;
    std::int64_t stageWork = 0;
    std::string refusal;
};

LayoutFailure batchFailure(const PlanInputs& plan, std::int64_t t, std::int64_t p, std::int64_t d)
{
    LayoutFailure f;
    f.key.t = t;
    f.key.p = p;
    f.key.d = d;
    f.constraint = "plan.global_batch";
    f.reason = "global_batch " + str(plan.globalBatch) + " is not a multiple of the data-parallel "
        + "size d = gpus / (t p) = " + str(d);
    return f;
}

/// Drops from `values` those that differ from the plan's own `own` when `kept`.
void keepOnly(std::vector<std::int64_t>& values, bool kept, std::int64_t own)
{
    if (kept)
        std::erase_if(values, [own](std::int64_t x) { return x != own; });
}

/// Adds the groups of one (t, p); false when a limit is passed (refusal set).
bool addGroups(const PlanInputs& plan, const LayoutSearchOptions& o, std::int64_t t, std::int64_t p,
               Work& work, Enumeration& e)
{
    const ModelShape& m = plan.model;
    const SearchKeep& keep = plan.searchKeep;
    const LayoutKey own = layoutOf(plan);
    const std::int64_t d = plan.gpus / t / p;
    if (keep.dataParallel && d != own.d)
        return true;
    if (plan.globalBatch % d != 0) {
        if (e.divisibility.size() < kMaxDivisibilityFailures) // the first ones tell the story
            e.divisibility.push_back(batchFailure(plan, t, p, d));
        return true;
    }
    std::vector<std::int64_t> mbs = divisors(plan.globalBatch / d, plan.globalBatch, work);
    std::vector<std::int64_t> eps =
        m.experts > 0 ? divisors(std::gcd(m.experts, d), d, work) : std::vector<std::int64_t>{1};
    std::vector<std::int64_t> vs = virtualStagesOf(m.layers, p, work);
    std::vector<std::int64_t> zeros{0};
    if (d > 1)
        zeros = {0, 1, 2, 3};
    keepOnly(mbs, keep.microBatch, own.microBatch);
    keepOnly(eps, keep.expertParallel, own.ep);
    keepOnly(vs, keep.virtualStages, own.v);
    keepOnly(zeros, keep.zeroStage, own.zeroStage);
    for (const std::int64_t v : vs) {
        // Megatron-LM's interleaved schedule runs the microbatches in rounds of p, so with
        // v > 1 the m = batch / (d b) microbatches must be a multiple of p (the Pipeline tab
        // asks the same).
        std::vector<std::int64_t> runnable = mbs;
        if (v > 1)
            std::erase_if(runnable,
                          [&](std::int64_t b) { return plan.globalBatch / d / b % p != 0; });
        if (runnable.empty())
            continue;
        for (const std::int64_t ep : eps)
            for (const std::int64_t zero : zeros) {
                Group g;
                g.base = LayoutKey{t, p, v, d, ep, 1, zero, false, Recompute::None};
                g.microBatches = runnable;
                const std::int64_t n = candidatesOf(g, e.choices);
                if (n == 0)
                    continue;
                e.candidates += n;
                e.stageWork += n * p;
                e.groups.push_back(std::move(g));
                if (e.candidates > o.maxCandidates || e.stageWork > o.maxStageWork) {
                    e.refusal = "more than " + str(o.maxCandidates) + " candidates or "
                        + str(o.maxStageWork) + " pipeline stages to evaluate";
                    return false;
                }
            }
    }
    return true;
}

Enumeration enumerate(const PlanInputs& plan, const LayoutSearchOptions& o)
{
    Enumeration e(plan);
    Work work{0, o.maxDivisorWork};
    const SearchKeep& keep = plan.searchKeep;
    const std::int64_t tMax = std::min(plan.hardware.gpusPerNode, plan.gpus);
    for (const std::int64_t t : divisors(plan.model.heads, tMax, work)) {
        if (plan.gpus % t != 0 || (keep.tensorParallel && t != plan.tensorParallel))
            continue;
        for (const std::int64_t p : divisors(plan.gpus / t, plan.model.layers, work)) {
            if (keep.pipelineParallel && p != plan.pipelineParallel)
                continue;
            if (!addGroups(plan, o, t, p, work, e))
                return e;
        }
    }
    if (work.over())
        e.refusal = "more than " + str(o.maxDivisorWork) + " trial divisions to find the divisors";
    return e;
}

/// What one group of candidates gives: every point in enumeration order, the fitting ones
/// timed, and the candidates the plan refused (a byte count past 2^63).
struct GroupResult {
    std::vector<LayoutPoint> points;
    std::vector<bool> lowerBound; ///< per point: memory is the pruning bound, not exact
    std::vector<RankedLayout> fitting;
    std::vector<LayoutFailure> refused;
    std::int64_t pruned = 0;
};

/// The pruning bound of a group: the largest model-state bytes of any stage. Model state
/// (weights, gradients, optimizer state after ZeRO sharding) depends on t, p, v, d, ep, the
/// ZeRO stage and the byte sizes only, never on the micro-batch, SP or recomputation, so one
/// plan gives it for the whole group. Every stage's total is its model state plus activations
/// (>= 0), and the peak is the largest total, so peak >= this bound for every candidate of the
/// group: if the bound is over the capacity, no candidate of the group fits, and pruning it
/// never drops a fitting layout. The comparison leaves a 10^-9 relative margin so that rounding
/// the exact fraction to a double cannot prune a layout at the boundary.
double modelStateBound(const PlanInputs& plan, const Group& g)
{
    LayoutKey key = g.base;
    key.microBatch = g.microBatches.front();
    key.recompute = Recompute::Full;
    const PlanResult r = computePlan(withLayout(plan, key));
    double bound = 0;
    for (const PlanStage& st : r.stages)
        bound = std::max(bound, st.modelStateBytes.value());
    return bound;
}

/// Exact memory and, when it fits, step time of one candidate, appended to `out`.
void evaluateOne(const PlanInputs& plan, const LayoutKey& key, GroupResult& out)
{
    LayoutPoint pt{key, 0, 0, false};
    try {
        const PlanInputs in = withLayout(plan, key);
        const PlanResult r = computePlan(in);
        pt.memoryBytes = r.peakBytesPerGpu.value();
        pt.fits = r.fits;
        if (r.fits) {
            const StepTime st = stepTimeUnchecked(in);
            pt.stepSeconds = st.total;
            out.fitting.push_back(RankedLayout{key, pt.memoryBytes, st, {}, 0, {}, 0});
        }
    } catch (const InputError& error) {
        pt.memoryBytes = std::numeric_limits<double>::infinity();
        out.refused.push_back(LayoutFailure{key, error.field(), error.what(), 0, 0, 0});
    }
    out.points.push_back(pt);
    out.lowerBound.push_back(false);
}

GroupResult evaluateGroup(const PlanInputs& plan, const Group& g, const Choices& choices,
                          double capacity, bool pruning)
{
    GroupResult out;
    double bound = 0;
    try {
        bound = pruning ? modelStateBound(plan, g) : 0;
    } catch (const InputError&) {
        bound = 0; // each candidate then reports its own refusal
    }
    const bool prune = bound > capacity * (1 + 1e-9);
    for (const std::int64_t mb : g.microBatches)
        for (const bool sp : choices.sequenceParallel) {
            if (sp && g.base.t == 1)
                continue;
            for (const Recompute rc : choices.recompute) {
                LayoutKey key = g.base;
                key.microBatch = mb;
                key.sequenceParallel = sp;
                key.recompute = rc;
                if (prune) {
                    out.points.push_back(LayoutPoint{key, bound, 0, false});
                    out.lowerBound.push_back(true);
                    ++out.pruned;
                    continue;
                }
                evaluateOne(plan, key, out);
            }
        }
    return out;
}

/// Evaluates every group on `threads` threads; thread k takes groups k, k + n, ..., each result
/// lands in its group's slot, so the merged result does not depend on the thread count.
std::vector<GroupResult> evaluateAll(const PlanInputs& plan, const Enumeration& e, double capacity,
                                     const LayoutSearchOptions& o)
{
    const std::vector<Group>& groups = e.groups;
    const std::int64_t threads = o.threads;
    std::vector<GroupResult> results(groups.size());
    const auto n = static_cast<std::size_t>(
        std::clamp<std::int64_t>(threads, 1, std::max<std::int64_t>(1, std::ssize(groups))));
    std::vector<std::exception_ptr> errors(n);
    const auto work = [&](std::size_t k) {
        try {
            for (std::size_t i = k; i < groups.size(); i += n)
                results[i] = evaluateGroup(plan, groups[i], e.choices, capacity, o.prune);
        } catch (...) {
            errors[k] = std::current_exception();
        }
    };
    detail::runOnThreads(n, work);
    for (const std::exception_ptr& error : errors)
        if (error)
            std::rethrow_exception(error);
    return results;
}

struct Term {
    const char* name;
    double StepTime::*member;
};

constexpr Term kTerms[] = {
    {"forward", &StepTime::forward},
    {"backward", &StepTime::backward},
    {"recompute", &StepTime::recompute},
    {"tensor_parallel", &StepTime::tensorParallel},
    {"expert", &StepTime::expert},
    {"bubble", &StepTime::bubble},
    {"pipeline_sends", &StepTime::pipelineSends},
    {"data_parallel_exposed", &StepTime::dataParallelExposed},
};

/// Names the largest term of each of the first kExplainedLayouts, and the term that differs
/// most from the next layout's (the first such term on a tie; "none" when all are equal).
void explain(std::vector<RankedLayout>& ranked)
{
    const std::size_t n = std::min(ranked.size(), kExplainedLayouts);
    for (std::size_t i = 0; i < n; ++i) {
        RankedLayout& r = ranked[i];
        for (const Term& term : kTerms)
            if (r.largestTerm.empty() || r.time.*term.member > r.largestSeconds) {
                r.largestTerm = term.name;
                r.largestSeconds = r.time.*term.member;
            }
        if (i + 1 >= ranked.size())
            continue;
        const StepTime& next = ranked[i + 1].time;
        r.differingTerm = "none"; // every term equal (a ZeRO stage that changes no time)
        for (const Term& term : kTerms) {
            const double diff = r.time.*term.member - next.*term.member;
            if (std::abs(diff) > std::abs(r.differingSeconds)) {
                r.differingTerm = term.name;
                r.differingSeconds = diff;
            }
        }
    }
}

/// Exact memory and step time of a point whose memory is the pruning bound or that was not
/// timed (it does not fit).
void completePoint(const PlanInputs& plan, LayoutPoint& pt)
{
    try {
        const PlanInputs in = withLayout(plan, pt.key);
        pt.memoryBytes = computePlan(in).peakBytesPerGpu.value();
        pt.stepSeconds = stepTimeUnchecked(in).total;
    } catch (const InputError&) {
        // A byte count past 2^63 for this micro-batch: the point keeps its bound, untimed.
    }
}

bool pointLess(const LayoutPoint& a, const LayoutPoint& b)
{
    if (a.memoryBytes != b.memoryBytes)
        return a.memoryBytes < b.memoryBytes;
    return keyLess(a.key, b.key);
}

LayoutFailure memoryFailure(const LayoutPoint& pt, double capacity)
{
    LayoutFailure f{pt.key, "memory", {}, pt.memoryBytes, capacity, pt.memoryBytes - capacity};
    f.reason = "needs " + gib(pt.memoryBytes) + " per GPU, " + gib(f.overBytes) + " over the "
        + gib(capacity) + " of plan.gpu_memory_gib";
    return f;
}

/// The kClosestFailures non-fitting candidates of least exact memory. Pruned points carry a
/// lower bound, so they are walked by bound and made exact until no bound left can beat the
/// last of the closest.
std::vector<LayoutFailure> closestByMemory(const PlanInputs& plan, std::vector<LayoutPoint> pts,
                                           std::vector<bool> lowerBound, double capacity)
{
    std::vector<std::size_t> order(pts.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return pointLess(pts[a], pts[b]); });
    std::vector<LayoutPoint> best;
    for (const std::size_t i : order) {
        if (!std::isfinite(pts[i].memoryBytes))
            break;
        if (best.size() >= kClosestFailures && pts[i].memoryBytes > best.back().memoryBytes)
            break;
        if (lowerBound[i])
            completePoint(plan, pts[i]);
        best.push_back(pts[i]);
        std::sort(best.begin(), best.end(), pointLess);
        if (best.size() > kClosestFailures)
            best.pop_back();
    }
    std::vector<LayoutFailure> out;
    for (const LayoutPoint& pt : best)
        out.push_back(memoryFailure(pt, capacity));
    return out;
}

/// Every fitting point, then every k-th of the others in enumeration order (k chosen so at
/// most `cap` are kept), made exact and timed.
void fillScatter(const PlanInputs& plan, const std::vector<LayoutPoint>& pts,
                 const std::vector<bool>& lowerBound, std::int64_t cap, LayoutSearchResult& out)
{
    std::vector<std::size_t> others;
    for (std::size_t i = 0; i < pts.size(); ++i) {
        if (pts[i].fits)
            out.scatter.push_back(pts[i]);
        else if (std::isfinite(pts[i].memoryBytes))
            others.push_back(i);
    }
    if (cap <= 0 || others.empty())
        return;
    const std::size_t stride =
        (others.size() + static_cast<std::size_t>(cap) - 1) / static_cast<std::size_t>(cap);
    for (std::size_t j = 0; j < others.size(); j += stride) {
        LayoutPoint pt = pts[others[j]];
        if (lowerBound[others[j]] || pt.stepSeconds == 0)
            completePoint(plan, pt);
        out.scatter.push_back(pt);
    }
}

/// One key a search can keep: its flag, its scenario name and how a layout's value reads.
struct KeptKey {
    bool SearchKeep::*kept;
    const char* name;
    std::string (*value)(const LayoutKey&);
};

constexpr KeptKey kKeptKeys[] = {
    {&SearchKeep::tensorParallel, "tensor_parallel",
     [](const LayoutKey& k) {
         return str(k.t);
     }},
    {&SearchKeep::pipelineParallel, "pipeline_parallel",
     [](const LayoutKey& k) {
         return str(k.p);
     }},
    {&SearchKeep::virtualStages, "virtual_stages",
     [](const LayoutKey& k) {
         return str(k.v);
     }},
    {&SearchKeep::dataParallel, "data_parallel",
     [](const LayoutKey& k) {
         return str(k.d);
     }},
    {&SearchKeep::expertParallel, "expert_parallel",
     [](const LayoutKey& k) {
         return str(k.ep);
     }},
    {&SearchKeep::microBatch, "micro_batch",
     [](const LayoutKey& k) {
         return str(k.microBatch);
     }},
    {&SearchKeep::zeroStage, "zero_stage",
     [](const LayoutKey& k) {
         return str(k.zeroStage);
     }},
    {&SearchKeep::sequenceParallel, "sequence_parallel",
     [](const LayoutKey& k) {
         return std::string(k.sequenceParallel ? "true" : "false");
     }},
    {&SearchKeep::recompute, "recompute",
     [](const LayoutKey& k) {
         return std::string(recomputeName(k.recompute));
     }},
};

/// Why a search that keeps some keys has nothing to try: no layout of the search's rules has
/// the kept values.
LayoutFailure keepFailure(const PlanInputs& plan)
{
    LayoutFailure f;
    f.key = layoutOf(plan);
    f.constraint = "plan.search_keep";
    std::string kept;
    for (const KeptKey& k : kKeptKeys)
        if (plan.searchKeep.*k.kept)
            kept += (kept.empty() ? "" : ", ") + std::string(k.name) + " " + k.value(f.key);
    f.reason = "no layout the search tries keeps this plan's " + kept
        + " (t divides the heads and is at most gpus_per_node, p the layers, d = gpus / (t p) "
          "divides global_batch, v cuts the layers evenly, SP needs t > 1)";
    return f;
}

} // namespace

bool keptBy(const PlanInputs& plan, const LayoutKey& key)
{
    const SearchKeep& k = plan.searchKeep;
    const LayoutKey own = layoutOf(plan);
    return (!k.tensorParallel || key.t == own.t) && (!k.pipelineParallel || key.p == own.p)
        && (!k.virtualStages || key.v == own.v) && (!k.dataParallel || key.d == own.d)
        && (!k.expertParallel || key.ep == own.ep)
        && (!k.microBatch || key.microBatch == own.microBatch)
        && (!k.zeroStage || key.zeroStage == own.zeroStage)
        && (!k.sequenceParallel || key.sequenceParallel == own.sequenceParallel)
        && (!k.recompute || key.recompute == own.recompute);
}

PlanInputs searchScope(const PlanInputs& plan)
{
    const SearchKeep& k = plan.searchKeep;
    const LayoutKey own = layoutOf(plan);
    LayoutKey key; // the defaults, where the search does not keep the plan's own
    if (k.tensorParallel || k.dataParallel)
        key.t = own.t;
    if (k.pipelineParallel || k.dataParallel)
        key.p = own.p;
    if (k.virtualStages)
        key.v = own.v;
    if (k.expertParallel)
        key.ep = own.ep;
    if (k.microBatch)
        key.microBatch = own.microBatch;
    if (k.zeroStage)
        key.zeroStage = own.zeroStage;
    if (k.sequenceParallel)
        key.sequenceParallel = own.sequenceParallel;
    if (k.recompute)
        key.recompute = own.recompute;
    return withLayout(plan, key);
}

std::vector<std::string> keptKeyNames(const SearchKeep& keep)
{
    std::vector<std::string> out;
    for (const KeptKey& k : kKeptKeys)
        if (keep.*k.kept)
            out.emplace_back(k.name);
    return out;
}

PlanInputs withLayout(const PlanInputs& plan, const LayoutKey& key)
{
    PlanInputs in = plan;
    in.tensorParallel = key.t;
    in.pipelineParallel = key.p;
    in.virtualStages = key.v;
    in.expertParallel = key.ep;
    in.microBatch = key.microBatch;
    in.zeroStage = key.zeroStage;
    in.sequenceParallel = key.sequenceParallel;
    in.recompute = key.recompute;
    return in;
}

LayoutKey layoutOf(const PlanInputs& plan)
{
    const std::int64_t tp = plan.tensorParallel * plan.pipelineParallel;
    return LayoutKey{
        plan.tensorParallel, plan.pipelineParallel, plan.virtualStages, tp > 0 ? plan.gpus / tp : 0,
        plan.expertParallel, plan.microBatch,       plan.zeroStage,     plan.sequenceParallel,
        plan.recompute};
}

bool keyLess(const LayoutKey& a, const LayoutKey& b)
{
    const auto tie = [](const LayoutKey& k) {
        return std::make_tuple(k.t, k.p, k.v, k.ep, k.microBatch, k.zeroStage, k.sequenceParallel,
                               static_cast<int>(k.recompute));
    };
    return tie(a) < tie(b);
}

const char* recomputeName(Recompute r)
{
    switch (r) {
    case Recompute::None:
        return "none";
    case Recompute::Selective:
        return "selective";
    case Recompute::Full:
        break;
    }
    return "full";
}

LayoutSearchResult searchLayouts(const PlanInputs& plan, const LayoutSearchOptions& options)
{
    validate(plan.model);
    validate(plan.hardware);
    LayoutSearchResult out;
    const Enumeration e = enumerate(plan, options);
    if (!e.refusal.empty()) {
        out.refused = true;
        out.refusal = "the search would need " + e.refusal;
        return out;
    }
    out.enumerated = e.candidates;
    const double capacity = std::ldexp(plan.gpuMemoryGib, 30);
    std::vector<GroupResult> results = evaluateAll(plan, e, capacity, options);
    std::vector<LayoutPoint> points;
    std::vector<bool> lowerBound;
    std::vector<LayoutFailure> refused;
    // Sized once: growing these by doubling copied the ranked layouts several times over.
    std::size_t pointCount = 0, fittingCount = 0;
    for (const GroupResult& r : results) {
        pointCount += r.points.size();
        fittingCount += r.fitting.size();
    }
    points.reserve(pointCount);
    lowerBound.reserve(pointCount);
    out.ranked.reserve(fittingCount);
    for (GroupResult& r : results) {
        out.pruned += r.pruned;
        points.insert(points.end(), r.points.begin(), r.points.end());
        lowerBound.insert(lowerBound.end(), r.lowerBound.begin(), r.lowerBound.end());
        std::move(r.fitting.begin(), r.fitting.end(), std::back_inserter(out.ranked));
        std::move(r.refused.begin(), r.refused.end(), std::back_inserter(refused));
    }
    out.fitting = std::ssize(out.ranked);
    std::sort(out.ranked.begin(), out.ranked.end(),
              [](const RankedLayout& a, const RankedLayout& b) {
                  if (a.time.total != b.time.total)
                      return a.time.total < b.time.total;
                  return keyLess(a.key, b.key);
              });
    explain(out.ranked);
    fillScatter(plan, points, lowerBound, options.scatterNonFitting, out);
    if (out.fitting == 0) {
        out.closest = closestByMemory(plan, points, lowerBound, capacity);
        if (out.closest.empty()) {
            // Nothing to try: the keep first when it left nothing, then the pairs whose d
            // does not divide the batch.
            if (e.candidates == 0 && !keptKeyNames(plan.searchKeep).empty())
                out.closest.push_back(keepFailure(plan));
            out.closest.insert(out.closest.end(), e.divisibility.begin(), e.divisibility.end());
        }
        for (LayoutFailure& f : refused)
            if (out.closest.size() < kClosestFailures)
                out.closest.push_back(std::move(f));
    }
    return out;
}

} // namespace scalelab::core
