#include "scalelab/core/steptime.h"

#include "scalelab/core/collectives.h"
#include "scalelab/core/pipeline.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace scalelab::core {

namespace {

const std::string kGpu = "plan.hardware.gpu";
const std::string kPrecision = "plan.hardware.precision";
const std::string kGpusPerNode = "plan.hardware.gpus_per_node";
const std::string kNvlinkBandwidth = "plan.hardware.nvlink_bandwidth";
const std::string kNvlinkLatency = "plan.hardware.nvlink_latency";
const std::string kIbBandwidth = "plan.hardware.ib_bandwidth";
const std::string kIbLatency = "plan.hardware.ib_latency";
const std::string kDpOverlap = "plan.hardware.dp_overlap";

constexpr double kTera = 1e12;

LinkModel nvlinkOf(const HardwareInputs& hw)
{
    return {hw.nvlinkBandwidthGBs * 1e9, hw.nvlinkLatencyUs * 1e-6};
}

LinkModel infinibandOf(const HardwareInputs& hw)
{
    return {hw.ibBandwidthGBs * 1e9, hw.ibLatencyUs * 1e-6};
}

LinkModel linkFor(const HardwareInputs& hw, bool interNode)
{
    return interNode ? infinibandOf(hw) : nvlinkOf(hw);
}

/// Transformer layers and MoE layers on one pipeline stage: the layers are cut into p v chunks
/// as stageLayers() cuts them (the first L mod (p v) chunks one longer), and stage i holds
/// chunks i, i + p, ... . Counted in place, without the vector stageLayers() returns.
struct StageCount {
    std::int64_t layers = 0;
    std::int64_t moeLayers = 0;
};

StageCount stageCount(const PlanInputs& in, std::int64_t stage)
{
    const std::int64_t chunks = in.pipelineParallel * in.virtualStages;
    const std::int64_t base = in.model.layers / chunks;
    const std::int64_t extra = in.model.layers % chunks;
    const std::int64_t firstMoe = in.model.experts > 0 ? in.model.denseLayers : in.model.layers;
    StageCount out;
    for (std::int64_t c = stage; c < chunks; c += in.pipelineParallel) {
        const std::int64_t size = base + (c < extra ? 1 : 0);
        const std::int64_t start = c * base + std::min(c, extra);
        out.layers += size;
        out.moeLayers += std::max<std::int64_t>(0, start + size - std::max(start, firstMoe));
    }
    return out;
}

/// Weights one GPU of a stage holds, split into what every data-parallel rank holds a copy of
/// and the routed experts (copies on d / ep ranks); the counting of PlanStage::parameters.
struct StageWeights {
    double shared = 0;
    double experts = 0;
};

StageWeights stageWeights(const PlanInputs& in, std::int64_t stage, const StageCount& count)
{
    const ModelShape& m = in.model;
    const auto t = static_cast<double>(in.tensorParallel);
    const auto h = static_cast<double>(m.hidden);
    const double kvWidth = h * static_cast<double>(kvHeadsOf(m)) / static_cast<double>(m.heads);
    const double mats = m.gatedMlp ? 3.0 : 2.0;
    const double attention = (2.0 * h * h + 2.0 * h * kvWidth) / t + 2.0 * h; // with 2 norms
    const double denseMlp = mats * h * static_cast<double>(m.ffnHidden) / t;
    const double oneExpert = mats * h * static_cast<double>(expertFfnHiddenOf(m)) / t;
    const double moeLocal =
        static_cast<double>(m.sharedExperts) * oneExpert + h * static_cast<double>(m.experts);
    const double routed =
        static_cast<double>(m.experts) / static_cast<double>(in.expertParallel) * oneExpert;
    const double vocabShare = static_cast<double>(m.vocab) * h / t;
    const auto layers = static_cast<double>(count.layers);
    const auto moe = static_cast<double>(count.moeLayers);
    StageWeights w;
    w.shared = layers * attention + (layers - moe) * denseMlp + moe * moeLocal;
    w.experts = moe * routed;
    if (stage == 0)
        w.shared += vocabShare;
    if (stage == in.pipelineParallel - 1)
        w.shared += h + (!m.tiedEmbeddings || in.pipelineParallel > 1 ? vocabShare : 0.0);
    return w;
}

/// Alpha-beta time of what one rank sends for the gradients of `params` weights replicated on
/// `ranks` ranks in a step of `microbatches` microbatches, each collective a ring (the formulas
/// of zeroTraffic). Plain data parallelism and ZeRO-1 keep every gradient whole while the
/// microbatches accumulate, so they communicate once a step: an all-reduce (2(n-1) messages,
/// 2(n-1)/n P g bytes), or a reduce-scatter and an all-gather of the weights (2(n-1) messages,
/// (n-1)/n P (g + w)). ZeRO-2 keeps only its shard of the gradients, so each microbatch's
/// gradients are reduce-scattered as its backward makes them (m (n-1) messages, m (n-1)/n P g)
/// before the one all-gather of the weights. ZeRO-3 keeps only its shard of the weights too,
/// so each microbatch gathers them for its forward and again for its backward besides its
/// reduce-scatter (3 m (n-1) messages, m (n-1)/n P (2w + g)).
double dataParallelSeconds(const PlanInputs& in, double params, std::int64_t ranks,
                           std::int64_t microbatches, const LinkModel& link)
{
    if (ranks <= 1 || params <= 0)
        return 0.0;
    const auto n = static_cast<double>(ranks);
    const auto m = static_cast<double>(microbatches);
    const auto w = static_cast<double>(in.weightBytes);
    const auto g = static_cast<double>(in.gradBytes);
    const double share = (n - 1.0) / n * params; // what a ring moves per byte of each weight
    double bytes = 0;
    double messages = 0;
    switch (in.zeroStage) {
    case 0:
        bytes = 2.0 * share * g;
        messages = 2.0 * (n - 1.0);
        break;
    case 1:
        bytes = share * (g + w);
        messages = 2.0 * (n - 1.0);
        break;
    case 2:
        bytes = m * share * g + share * w;
        messages = (m + 1.0) * (n - 1.0);
        break;
    default:
        bytes = m * share * (2.0 * w + g);
        messages = 3.0 * m * (n - 1.0);
        break;
    }
    return messages * link.latency + bytes / link.bandwidth;
}

/// Everything the step time needs that does not depend on the stage.
struct Common {
    TokenFlops flops;
    GroupLinks links;
    double rate = 0; ///< achieved FLOP/s: peak x e(gemmSize)
    double efficiency = 0;
    std::int64_t d = 1;
    std::int64_t m = 1;
    double tokens = 0; ///< tokens one data-parallel rank runs per step: m b s
    double activationBytes = 0; ///< one microbatch's 2 s b h activation tensor
};

Common commonOf(const PlanInputs& in)
{
    Common c;
    c.flops = tokenFlops(in);
    c.links = groupLinks(in);
    c.efficiency = gemmEfficiency(gemmSize(in.model.hidden, in.model.ffnHidden, in.tensorParallel));
    c.rate = peakFlops(in.hardware) * c.efficiency;
    c.d = in.gpus / (in.tensorParallel * in.pipelineParallel);
    c.m = in.globalBatch / (in.microBatch * c.d);
    c.tokens = static_cast<double>(c.m * in.microBatch * in.sequence);
    c.activationBytes = 2.0 * static_cast<double>(in.sequence * in.microBatch * in.model.hidden);
    return c;
}

/// Compute terms of one stage: forward, backward (2 x forward) and recomputation.
void stageCompute(const PlanInputs& in, const Common& c, std::int64_t stage,
                  const StageCount& count, StepTime& st)
{
    const auto dense = static_cast<double>(count.layers - count.moeLayers);
    const auto moe = static_cast<double>(count.moeLayers);
    const double layerFlops = dense * c.flops.denseLayer + moe * c.flops.moeLayer;
    const double last = stage == in.pipelineParallel - 1 ? c.flops.logits : 0.0;
    const double perGpu = c.tokens / static_cast<double>(in.tensorParallel) / c.rate;
    st.forward = (layerFlops + last) * perGpu;
    st.backward = 2.0 * st.forward;
    st.recompute = 0.0;
    if (in.recompute == Recompute::Selective)
        st.recompute = static_cast<double>(count.layers) * c.flops.attentionScores * perGpu;
    else if (in.recompute == Recompute::Full)
        st.recompute = layerFlops * perGpu;
}

/// Communication terms of one stage: tensor parallel, expert all-to-alls, pipeline sends and
/// the data-parallel collectives with the part the backward pass hides.
void stageCommunication(const PlanInputs& in, const Common& c, std::int64_t stage,
                        const StageCount& count, StepTime& st)
{
    const HardwareInputs& hw = in.hardware;
    const std::int64_t t = in.tensorParallel;
    const std::int64_t p = in.pipelineParallel;
    const std::int64_t v = in.virtualStages;
    const std::int64_t ep = in.expertParallel;
    const auto m = static_cast<double>(c.m);
    const double passes = in.recompute == Recompute::Full ? 6.0 : 4.0; // collectives per layer
    const double split = in.sequenceParallel ? static_cast<double>(t) : 1.0;
    st.tensorParallel = 0;
    if (t > 1)
        st.tensorParallel = passes * static_cast<double>(count.layers) * m
            * ringAllReduceSeconds(c.activationBytes, t, linkFor(hw, c.links.tensorInterNode));
    st.expert = 0;
    if (in.model.experts > 0 && ep > 1) {
        const LinkModel link = linkFor(hw, c.links.expertInterNode);
        const double leaving = c.activationBytes * static_cast<double>(in.model.topK) / split
            * static_cast<double>(ep - 1) / static_cast<double>(ep);
        const double oneAllToAll =
            static_cast<double>(ep - 1) * link.latency + leaving / link.bandwidth;
        st.expert = passes * static_cast<double>(count.moeLayers) * m * oneAllToAll;
    }
    st.pipelineSends = 0;
    if (p > 1) {
        const LinkModel link = linkFor(hw, c.links.pipelineInterNode);
        const auto sends =
            static_cast<double>((v - (stage == p - 1 ? 1 : 0)) + (v - (stage == 0 ? 1 : 0)));
        st.pipelineSends = sends * m * (link.latency + c.activationBytes / split / link.bandwidth);
    }
    const StageWeights w = stageWeights(in, stage, count);
    const LinkModel dpLink = linkFor(hw, c.links.dataInterNode);
    st.dataParallel = dataParallelSeconds(in, w.shared, c.d, c.m, dpLink)
        + dataParallelSeconds(in, w.experts, c.d / ep, c.m, dpLink);
    st.dataParallelExposed =
        st.dataParallel - std::min(hw.dpOverlap * st.dataParallel, st.backward);
}

/// Per-step figures from the critical stage's total.
void figures(const PlanInputs& in, const Common& c, StepTime& st)
{
    const auto tokensPerStep = static_cast<double>(in.globalBatch * in.sequence);
    const auto layers = static_cast<double>(in.model.layers);
    st.modelFlops = 3.0 * c.flops.model * tokensPerStep;
    double recomputed = 0;
    if (in.recompute == Recompute::Selective)
        recomputed = layers * c.flops.attentionScores * tokensPerStep;
    else if (in.recompute == Recompute::Full)
        recomputed = (c.flops.model - c.flops.logits) * tokensPerStep;
    st.hardwareFlops = st.modelFlops + recomputed;
    st.peakFlops = peakFlops(in.hardware);
    st.gemmEfficiency = c.efficiency;
    const double gpuSeconds = st.total * static_cast<double>(in.gpus);
    st.tokensPerSecond = tokensPerStep / st.total;
    st.mfu = st.modelFlops / (gpuSeconds * st.peakFlops);
    st.hfu = st.hardwareFlops / (gpuSeconds * st.peakFlops);
    st.tflopsPerGpu = st.modelFlops / gpuSeconds / kTera;
    st.trainingDays = in.trainTokens / st.tokensPerSecond / 86400.0;
}

} // namespace

GpuSpec gpuSpec(GpuType gpu)
{
    switch (gpu) {
    case GpuType::A100_40GB:
        // NVIDIA A100 Tensor Core GPU datasheet (SXM): BF16 312 TFLOP/s dense (624 with
        // sparsity); no FP8 tensor cores (Ampere); 40 GB HBM2.
        return {"A100 40GB", 312e12, 0.0, 40.0};
    case GpuType::A100_80GB:
        // The same datasheet, the 80 GB HBM2e SXM part: same tensor cores, 312 TFLOP/s BF16.
        return {"A100 80GB", 312e12, 0.0, 80.0};
    case GpuType::H100_80GB:
        // NVIDIA H100 Tensor Core GPU datasheet (SXM5): BF16 1979 and FP8 3958 TFLOP/s *with
        // sparsity*; the dense figures are half: 989 and 1979 TFLOP/s. 80 GB HBM3.
        return {"H100 80GB", 989e12, 1979e12, 80.0};
    case GpuType::H200_141GB:
        // NVIDIA H200 Tensor Core GPU datasheet (SXM): the H100's tensor cores (BF16 989, FP8
        // 1979 TFLOP/s dense, half the sparse figures the sheet lists) with 141 GB HBM3e.
        return {"H200 141GB", 989e12, 1979e12, 141.0};
    }
    return {};
}

const char* gpuTypeName(GpuType gpu)
{
    switch (gpu) {
    case GpuType::A100_40GB:
        return "a100_40gb";
    case GpuType::A100_80GB:
        return "a100_80gb";
    case GpuType::H100_80GB:
        return "h100_80gb";
    case GpuType::H200_141GB:
        return "h200_141gb";
    }
    return "";
}

double peakFlops(const HardwareInputs& hw)
{
    const GpuSpec spec = gpuSpec(hw.gpu);
    return hw.precision == ComputePrecision::Fp8 ? spec.fp8Flops : spec.bf16Flops;
}

void validate(const HardwareInputs& hw)
{
    const auto g = static_cast<int>(hw.gpu);
    require(g >= 0 && g <= static_cast<int>(GpuType::H200_141GB), kGpu,
            "one of \"a100_40gb\", \"a100_80gb\", \"h100_80gb\", \"h200_141gb\"");
    require(hw.precision == ComputePrecision::Bf16 || hw.precision == ComputePrecision::Fp8,
            kPrecision, "one of \"bf16\", \"fp8\"");
    require(peakFlops(hw) > 0, kPrecision, "\"bf16\" on an A100, which has no FP8 tensor cores");
    require(hw.gpusPerNode >= 1, kGpusPerNode, "a whole number >= 1");
    const auto positive = [](double x) {
        return std::isfinite(x) && x > 0;
    };
    const auto nonNegative = [](double x) {
        return std::isfinite(x) && x >= 0;
    };
    require(positive(hw.nvlinkBandwidthGBs), kNvlinkBandwidth, "a finite number > 0 (GB/s)");
    require(nonNegative(hw.nvlinkLatencyUs), kNvlinkLatency, "a finite number >= 0 (us)");
    require(positive(hw.ibBandwidthGBs), kIbBandwidth, "a finite number > 0 (GB/s)");
    require(nonNegative(hw.ibLatencyUs), kIbLatency, "a finite number >= 0 (us)");
    require(std::isfinite(hw.dpOverlap) && hw.dpOverlap >= 0 && hw.dpOverlap <= 1, kDpOverlap,
            "a number in 0..1");
}

double gemmSize(std::int64_t hidden, std::int64_t ffnHidden, std::int64_t tensorParallel)
{
    const auto h = static_cast<double>(hidden);
    const double n = static_cast<double>(ffnHidden) / static_cast<double>(tensorParallel);
    return h * n / (h + n);
}

double gemmEfficiency(double size)
{
    return kGemmEfficiencyMax * size / (size + kGemmHalfSize);
}

TokenFlops tokenFlops(const PlanInputs& in)
{
    // Per token, 2 FLOPs per multiply-add of every matrix it goes through. For Table 2's shape
    // (4h MLP, as many key/value heads as query heads) a layer is 24 h^2 + 4 s h, which is
    // Korthikanti et al.'s 24 B s l h^2 (1 + s/(6h)) per B s tokens; here each matrix keeps its
    // own width: the key and value projections shrink by kv_heads/heads (grouped-query
    // attention), a gated MLP has three h x ffn matrices instead of two.
    const ModelShape& m = in.model;
    const auto h = static_cast<double>(m.hidden);
    const auto s = static_cast<double>(in.sequence);
    const double kvWidth = h * static_cast<double>(kvHeadsOf(m)) / static_cast<double>(m.heads);
    const double mats = m.gatedMlp ? 3.0 : 2.0;
    const double projections = 2.0 * (2.0 * h * h + 2.0 * h * kvWidth); // q, o; k, v
    TokenFlops f;
    f.attentionScores = 4.0 * s * h; // Q K^T and scores x V over all query heads
    f.denseLayer =
        projections + f.attentionScores + 2.0 * mats * h * static_cast<double>(m.ffnHidden);
    const double experts = static_cast<double>(m.topK + m.sharedExperts);
    f.moeLayer = projections + f.attentionScores + 2.0 * h * static_cast<double>(m.experts)
        + experts * 2.0 * mats * h * static_cast<double>(expertFfnHiddenOf(m));
    f.logits = 2.0 * h * static_cast<double>(m.vocab);
    const std::int64_t moeLayers =
        m.experts > 0 ? std::max<std::int64_t>(0, m.layers - m.denseLayers) : 0;
    f.model = static_cast<double>(m.layers - moeLayers) * f.denseLayer
        + static_cast<double>(moeLayers) * f.moeLayer + f.logits;
    return f;
}

GroupLinks groupLinks(const PlanInputs& in)
{
    const std::int64_t node = in.hardware.gpusPerNode;
    const std::int64_t t = in.tensorParallel;
    const std::int64_t td = in.gpus / in.pipelineParallel;
    return {t > node, td > node, t * in.expertParallel > node, in.gpus > node};
}

StepTime stepTimeUnchecked(const PlanInputs& in)
{
    const Common c = commonOf(in);
    const std::int64_t p = in.pipelineParallel;
    const double bubbleShare = pipelineBubbleOverBusy(p, c.m, in.virtualStages);
    StepTime best;
    best.total = -1;
    for (std::int64_t stage = 0; stage < p; ++stage) {
        StepTime st;
        const StageCount count = stageCount(in, stage);
        stageCompute(in, c, stage, count, st);
        stageCommunication(in, c, stage, count, st);
        const double busy = st.forward + st.backward + st.recompute + st.tensorParallel + st.expert;
        st.bubble = bubbleShare * busy;
        st.total = busy + st.bubble + st.pipelineSends + st.dataParallelExposed;
        st.criticalStage = stage;
        if (st.total > best.total)
            best = st;
    }
    figures(in, c, best);
    return best;
}

StepTime computeStepTime(const PlanInputs& in)
{
    validate(in);
    return stepTimeUnchecked(in);
}

} // namespace scalelab::core
