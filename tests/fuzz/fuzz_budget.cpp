#include "fuzz_budget.h"

#include "scalelab/core/fp8_training.h"

#include <algorithm>
#include <cstdint>

namespace scalelab::fuzz {

namespace {

// The fuzzer's sizes: each section a few milliseconds under the sanitizers, yet past the sizes
// where its code changes path (noted per constant).
constexpr std::int64_t kAccumulationOutputs = 3; // still spread over two threads
constexpr std::int64_t kAccumulationK = 512; // past a 32-product block, the default N_C of 128
constexpr std::int64_t kPolicySteps = 40; // past the default spike step (32) and history (16)
constexpr std::int64_t kPolicyRows = 2;
constexpr std::int64_t kPolicyCols = 64; // past the 16 spiked values
constexpr std::int64_t kFp8Values = 1 << 20; // several threads and chunks, large pages (fp8.cpp)
constexpr std::int64_t kPipelineStages = 32; // even: a dual schedule stays valid
constexpr std::int64_t kPipelinePasses = 4'096;
constexpr std::int64_t kTensorParallelWeights = 1 << 16; // d_model x d_ff
constexpr std::int64_t kTensorParallelMultiplyAdds = 1 << 18;
constexpr std::int64_t kExpertRanks = 64;
constexpr std::int64_t kExpertSlots = 1 << 14;
constexpr std::int64_t kPlanStages = 64;

using Wide = __int128; // products of validated sizes, wide enough not to wrap in the check

std::string decimal(Wide v)
{
    std::string digits;
    do {
        digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
        v /= 10;
    } while (v > 0);
    return digits;
}

/// Sizes are never negative once validated, so `value` is >= 0.
std::string over(const char* what, Wide value, std::int64_t limit)
{
    return std::string(what) + " = " + decimal(value) + " passes the documented limit "
        + std::to_string(limit);
}

std::string pipelineLimit(const core::PipelineInputs& in)
{
    const Wide chunks = in.schedule == core::Schedule::Interleaved ? in.virtualStages : 1;
    const Wide passes = Wide(in.stages) * in.microbatches * chunks;
    if (in.stages > core::kMaxPipelineStages)
        return over("pipeline.stages", in.stages, core::kMaxPipelineStages);
    if (passes > core::kMaxPipelinePasses)
        return over("pipeline passes", passes, core::kMaxPipelinePasses);
    return {};
}

std::string tensorParallelLimit(const core::TensorParallelInputs& in)
{
    const Wide values =
        std::max({Wide(in.tokens) * in.dModel, Wide(in.tokens) * in.dFf, Wide(in.dModel) * in.dFf});
    if (values > core::kMaxTensorParallelValues)
        return over("a tensor-parallel matrix", values, core::kMaxTensorParallelValues);
    const Wide multiplyAdds = Wide(in.tokens) * in.dModel * in.dFf;
    if (multiplyAdds > core::kMaxTensorParallelMultiplyAdds)
        return over("tensor-parallel multiply-adds", multiplyAdds,
                    core::kMaxTensorParallelMultiplyAdds);
    if (in.ranks > core::kMaxTensorParallelRanks)
        return over("tensor_parallel.ranks", in.ranks, core::kMaxTensorParallelRanks);
    return {};
}

std::string expertsLimit(const core::ExpertsInputs& in)
{
    if (in.ranks > core::kMaxExpertRanks)
        return over("experts.ranks", in.ranks, core::kMaxExpertRanks);
    if (in.experts > core::kMaxExperts)
        return over("experts.experts", in.experts, core::kMaxExperts);
    const Wide routed = Wide(in.ranks) * in.tokensPerRank * in.topK;
    if (!in.assignments && routed > core::kMaxRoutedSlots)
        return over("routed expert slots", routed, core::kMaxRoutedSlots);
    return {};
}

std::string fp8Limit(const core::Fp8Inputs& in)
{
    const Wide rows = in.values ? in.values->rows() : in.rows;
    const Wide cols = in.values ? in.values->cols() : in.cols;
    if (rows * cols > core::kMaxFp8Elements)
        return over("the FP8 matrix's values", rows * cols, core::kMaxFp8Elements);
    if (rows * cols / in.blockSize > core::kMaxFp8Scales)
        return over("FP8 scales", rows * cols / in.blockSize, core::kMaxFp8Scales);
    Wide sumK = 0;
    for (const std::int64_t k : core::accumulationKValues(in.accumulation))
        sumK += k;
    const Wide outputs = in.accumulation.outputs;
    if (outputs * outputs * sumK > core::kMaxAccumulationProducts)
        return over("FP8 accumulation products", outputs * outputs * sumK,
                    core::kMaxAccumulationProducts);
    const core::Fp8PolicyInputs& p = in.policy;
    const Wide values = Wide(p.steps) * p.rows * p.cols;
    if (values > core::kMaxPolicyValues)
        return over("FP8 policy values", values, core::kMaxPolicyValues);
    return {};
}

void shrinkFp8(core::Fp8Inputs& in)
{
    // Fewer rows keep block_size dividing the columns and the scales within their limit.
    if (!in.values && in.rows > kFp8Values / in.cols)
        in.rows = std::max<std::int64_t>(1, kFp8Values / in.cols);
    core::Fp8AccumulationInputs& a = in.accumulation;
    a.outputs = std::min(a.outputs, kAccumulationOutputs);
    a.kMin = std::min(a.kMin, kAccumulationK);
    a.kMax = std::min(a.kMax, kAccumulationK); // still >= kMin
    core::Fp8PolicyInputs& p = in.policy;
    p.steps = std::min(p.steps, kPolicySteps);
    p.rows = std::min(p.rows, kPolicyRows);
    p.cols = std::min(p.cols, kPolicyCols);
}

/// Fewer stages, microbatches and chunks, keeping what each schedule requires of them.
void shrinkPipeline(core::PipelineInputs& in)
{
    using core::Schedule;
    in.stages = std::min(in.stages, kPipelineStages);
    const std::int64_t p = in.stages;
    const bool interleaved = in.schedule == Schedule::Interleaved;
    std::int64_t least = 1;
    if (interleaved || in.schedule == Schedule::DualPipeV)
        least = p;
    else if (in.schedule == Schedule::DualPipe)
        least = 2 * p;
    std::int64_t m = std::min(in.microbatches, std::max(least, kPipelinePasses / p));
    if (interleaved)
        m -= m % p; // a multiple of the stages
    else if (in.schedule == Schedule::DualPipe)
        m -= m % 2; // even
    in.microbatches = std::max(least, m);
    // The comparison runs every schedule, interleaved too, with the scenario's chunks.
    in.virtualStages = std::min(in.virtualStages,
                                std::max<std::int64_t>(1, kPipelinePasses / (p * in.microbatches)));
}

void shrinkExperts(core::ExpertsInputs& in)
{
    // The ranks x ranks counts: fewer ranks where the owners allow it (explicit assignments
    // hold one list per rank and stay as they are).
    if (!in.assignments && in.ranks > kExpertRanks) {
        if (in.expertToRank) {
            std::int64_t needed = kExpertRanks;
            for (const std::int64_t owner : *in.expertToRank)
                needed = std::max(needed, owner + 1);
            in.ranks = std::min(in.ranks, needed);
        } else {
            std::int64_t r = kExpertRanks;
            while (in.experts % r != 0) // the largest divisor of experts up to kExpertRanks
                --r;
            in.ranks = r;
        }
    }
    // Only the router reads tokens_per_rank (and only there is top_k <= experts, 2^16).
    if (!in.assignments)
        in.tokensPerRank = std::min(in.tokensPerRank,
                                    std::max<std::int64_t>(1, kExpertSlots / (in.ranks * in.topK)));
}

void shrinkTensorParallel(core::TensorParallelInputs& in)
{
    // The weights first (d_ff stays >= ranks), then the tokens that go through them.
    in.dModel = std::min(in.dModel, std::max<std::int64_t>(1, kTensorParallelWeights / in.dFf));
    in.dFf = std::min(in.dFf, std::max(in.ranks, kTensorParallelWeights / in.dModel));
    in.tokens = std::min(
        in.tokens, std::max<std::int64_t>(1, kTensorParallelMultiplyAdds / (in.dModel * in.dFf)));
}

void shrinkPlan(core::PlanInputs& in)
{
    // Fewer pipeline stages with the same t and d: gpus stays t p d, the batch still divides.
    if (in.pipelineParallel > kPlanStages) {
        const std::int64_t d = in.gpus / (in.tensorParallel * in.pipelineParallel);
        in.pipelineParallel = kPlanStages;
        in.gpus = in.tensorParallel * kPlanStages * d;
    }
}

} // namespace

std::string passedLimit(const core::Scenario& s)
{
    for (const std::string& passed :
         {pipelineLimit(s.pipeline), tensorParallelLimit(s.tensorParallel), expertsLimit(s.experts),
          fp8Limit(s.fp8)})
        if (!passed.empty())
            return passed;
    if (s.plan.model.layers > core::kMaxPlanLayers)
        return over("plan.model.layers", s.plan.model.layers, core::kMaxPlanLayers);
    return {};
}

core::Scenario shrunkForFuzzing(core::Scenario s)
{
    shrinkFp8(s.fp8);
    shrinkPipeline(s.pipeline);
    shrinkExperts(s.experts);
    shrinkTensorParallel(s.tensorParallel);
    shrinkPlan(s.plan);
    return s;
}

} // namespace scalelab::fuzz
