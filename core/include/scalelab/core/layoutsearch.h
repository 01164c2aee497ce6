#pragma once

// The layout search: every way to lay a plan's model out on its GPUs (t, p, v, d, ep,
// micro-batch, ZeRO stage, sequence parallelism, recomputation), which of them fit in memory,
// and which is fastest by the step-time model. Pure, Qt-free; docs/STEPTIME.md, "Search".

#include "scalelab/core/plan.h"
#include "scalelab/core/steptime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace scalelab::core {

/// The keys that make one layout; the rest of the plan (model, gpus, global batch, hardware,
/// sequence, byte sizes, GPU memory) is the search's fixed input.
struct LayoutKey {
    std::int64_t t = 1; ///< tensor parallel
    std::int64_t p = 1; ///< pipeline stages
    std::int64_t v = 1; ///< model chunks per stage (interleaving)
    std::int64_t d = 1; ///< data parallel, gpus / (t p)
    std::int64_t ep = 1; ///< expert parallel
    std::int64_t microBatch = 1;
    std::int64_t zeroStage = 0;
    bool sequenceParallel = false;
    Recompute recompute = Recompute::None;

    bool operator==(const LayoutKey&) const = default;
};

/// The plan with a layout's keys put in.
PlanInputs withLayout(const PlanInputs& plan, const LayoutKey& key);

/// The layout keys of a plan (d from gpus / (t p)).
LayoutKey layoutOf(const PlanInputs& plan);

/// Whether `key` agrees with the plan's own layout on every key `plan.searchKeep` holds.
bool keptBy(const PlanInputs& plan, const LayoutKey& key);

/// What a search of `plan` depends on: the plan with every layout key the search does not keep
/// put back to its default, so two plans with equal scopes search the same layouts. Keeping d
/// keeps t and p too (d is gpus / (t p)).
PlanInputs searchScope(const PlanInputs& plan);

/// The scenario names of the kept keys ("tensor_parallel", ..., "data_parallel", ...,
/// "recompute"), in the order of the keys of a layout.
std::vector<std::string> keptKeyNames(const SearchKeep& keep);

/// A strict total order on keys (t, p, v, ep, micro-batch, ZeRO, SP, recompute ascending):
/// the tie-break of the ranking.
bool keyLess(const LayoutKey& a, const LayoutKey& b);

/// One point of the scatter: exact peak memory per GPU and step time.
struct LayoutPoint {
    LayoutKey key;
    double memoryBytes = 0; ///< peak bytes per GPU
    double stepSeconds = 0;
    bool fits = false;
};

/// One of the fitting layouts, ranked by step time.
struct RankedLayout {
    LayoutKey key;
    double memoryBytes = 0;
    StepTime time;
    /// The largest of the terms that add up to the step time ("forward", "backward",
    /// "recompute", "tensor_parallel", "expert", "bubble", "pipeline_sends",
    /// "data_parallel_exposed"); set for the first kExplainedLayouts.
    std::string largestTerm;
    double largestSeconds = 0;
    /// The term that differs most from the next layout's (this minus next, seconds); "none"
    /// when every term is equal; empty for the last one and past kExplainedLayouts.
    std::string differingTerm;
    double differingSeconds = 0;
};

/// A layout that does not fit, with the constraint it breaks, for a search that found none.
struct LayoutFailure {
    LayoutKey key;
    /// "memory" (memoryBytes over capacityBytes by overBytes) or the validate field that does
    /// not divide (for example "plan.global_batch").
    std::string constraint;
    std::string reason; ///< one sentence with the numbers
    double memoryBytes = 0;
    double capacityBytes = 0;
    double overBytes = 0;
};

/// Limits of a search. A search whose enumeration passes maxCandidates, whose candidates hold
/// more than maxStageWork pipeline stages in all (the memory plan walks every stage), or
/// whose divisor search passes maxDivisorWork trial divisions stops before timing anything and
/// says so.
struct LayoutSearchOptions {
    std::int64_t maxCandidates = 1'000'000;
    std::int64_t maxStageWork = 100'000'000;
    std::int64_t maxDivisorWork = 10'000'000;
    std::int64_t threads = 2; ///< worker threads; results do not depend on it
    std::int64_t scatterNonFitting = 2000; ///< non-fitting points kept in the scatter, at most
    bool prune = true; ///< false computes every candidate's memory (tests compare the two)
};

inline constexpr std::size_t kExplainedLayouts = 10;
inline constexpr std::size_t kClosestFailures = 5;

struct LayoutSearchResult {
    bool refused = false; ///< over a limit of the options: nothing below is filled
    std::string refusal; ///< why, with the count
    std::int64_t enumerated = 0; ///< candidates that pass every divisibility rule
    std::int64_t pruned = 0; ///< of those, ruled out by the memory lower bound, untimed
    std::int64_t fitting = 0;
    std::vector<LayoutPoint> scatter; ///< every fitting one, then a sample of the others
    std::vector<RankedLayout> ranked; ///< every fitting one, ascending step time
    /// When nothing fits: the kClosestFailures smallest in memory, or, when no layout passes
    /// the divisibility rules, which rule failed for each (t, p) (the first 20, by t then p).
    std::vector<LayoutFailure> closest;
};

/// Enumerates, prunes, computes memory and times every layout of the plan's model on its GPUs
/// and global batch that keeps the keys of `plan.searchKeep` (keptBy). Validates the shape and
/// hardware first (the plan's own layout need not be valid).
LayoutSearchResult searchLayouts(const PlanInputs& plan, const LayoutSearchOptions& options = {});

/// "none", "selective", "full": the scenario's recompute names.
const char* recomputeName(Recompute r);

} // namespace scalelab::core
