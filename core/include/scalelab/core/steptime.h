#pragma once

// Time per optimizer step for a training plan: an analytical model, term by term, with the
// assumptions and their sources in docs/STEPTIME.md. Everything here is a pure function of
// PlanInputs (the hardware is PlanInputs::hardware) that allocates nothing, so a layout search
// can time thousands of candidates.

#include "scalelab/core/plan.h"

#include <cstdint>

namespace scalelab::core {

/// Datasheet figures of one GPU type (dense tensor-core throughput, no 2:4 sparsity).
struct GpuSpec {
    const char* name = "";
    double bf16Flops = 0; ///< peak dense BF16 FLOP/s
    double fp8Flops = 0; ///< peak dense FP8 FLOP/s; 0 when the GPU has no FP8 tensor cores
    double memoryGB = 0; ///< HBM in GB (10^9 bytes), as sold
};

/// The preset of a GPU type (sources next to each figure in steptime.cpp).
GpuSpec gpuSpec(GpuType gpu);

/// The JSON name of a GPU type ("a100_40gb", "a100_80gb", "h100_80gb", "h200_141gb").
const char* gpuTypeName(GpuType gpu);

/// Peak FLOP/s of the plan's GPU in the plan's precision.
double peakFlops(const HardwareInputs& hw);

/// Throws InputError naming the `plan.hardware.*` field out of range (and FP8 on an A100).
void validate(const HardwareInputs& hw);

/// The two global constants of the GEMM efficiency curve, calibrated once (docs/STEPTIME.md).
inline constexpr double kGemmEfficiencyMax = 0.76; ///< the plateau for very large GEMMs
inline constexpr double kGemmHalfSize = 1270.0; ///< the GEMM size at half the plateau

/// The size of the matrix multiplies one GPU runs, by which their efficiency is read: the
/// arithmetic intensity of the MLP's first GEMM on the GPU's slice, x = h n / (h + n) with
/// n = ffn_hidden / tensor_parallel. Per token it reads h numbers, writes n and does h n
/// multiply-adds, so x is multiply-adds per number moved. It grows with both widths and is
/// set by the smaller: splitting over more GPUs shrinks n, and with it x, less than in
/// proportion (t = 8 on a 4h MLP gives x = h/3, t = 1 gives 4h/5).
double gemmSize(std::int64_t hidden, std::int64_t ffnHidden, std::int64_t tensorParallel);

/// Achievable fraction of peak for the layers' matrix multiplies at GEMM size x (gemmSize):
/// e(x) = kGemmEfficiencyMax x / (x + kGemmHalfSize). It rises with the size and saturates,
/// as a GEMM's throughput does with its arithmetic intensity.
double gemmEfficiency(double size);

/// Forward FLOPs of the whole model for one token of a sequence of `sequence` tokens, by part
/// (2 FLOPs per multiply-add). Backward is twice the forward.
struct TokenFlops {
    double denseLayer = 0; ///< one dense layer: projections, attention scores, MLP
    double moeLayer = 0; ///< one MoE layer: projections, scores, router, top_k + shared experts
    double attentionScores = 0; ///< of each layer: Q K^T and scores x V, 4 s h
    double logits = 0; ///< the output layer, 2 h V
    double model = 0; ///< all layers and the logits: the forward of the whole model
};

/// Per-token forward FLOPs of the plan's model (the shape and plan.sequence).
TokenFlops tokenFlops(const PlanInputs& in);

/// Which link a parallel group's collectives use: Megatron-LM's rank order puts the t
/// tensor-parallel ranks next to each other, then the data-parallel ranks (the expert-parallel
/// groups inside them), then the pipeline stages. A group stays within one node of
/// gpus_per_node GPUs when the consecutive ranks it spans fit in one: t for tensor parallel,
/// t d for data parallel, t ep for expert parallel, and t d p (the whole job) for the pipeline.
struct GroupLinks {
    bool tensorInterNode = false; ///< t > gpus_per_node
    bool dataInterNode = false; ///< t d > gpus_per_node
    bool expertInterNode = false; ///< t ep > gpus_per_node
    bool pipelineInterNode = false; ///< t d p > gpus_per_node
};

GroupLinks groupLinks(const PlanInputs& in);

/// Time per optimizer step, in seconds, term by term, on the critical pipeline stage.
struct StepTime {
    double forward = 0; ///< forward compute of the stage, all microbatches
    double backward = 0; ///< backward compute, twice the forward
    double recompute = 0; ///< forward work repeated in backward (selective: scores; full: all)
    double tensorParallel = 0; ///< TP all-reduces (or all-gather + reduce-scatter with SP)
    double expert = 0; ///< expert all-to-alls (dispatch and combine)
    double bubble = 0; ///< pipelineBubbleOverBusy(p, m, v) of the busy time (the five above)
    double pipelineSends = 0; ///< point-to-point sends of activations and gradients
    double dataParallel = 0; ///< the whole data-parallel / ZeRO collective time
    double dataParallelExposed = 0; ///< the part not hidden behind the backward pass
    double total = 0; ///< busy + bubble + pipeline sends + exposed data parallel
    std::int64_t criticalStage = 0; ///< the stage whose time the step is

    double modelFlops = 0; ///< per step, whole cluster: 3 x forward FLOPs of every token
    double hardwareFlops = 0; ///< modelFlops plus the recomputed forward FLOPs
    double tokensPerSecond = 0;
    double mfu = 0; ///< modelFlops / (total x gpus x peak)
    double hfu = 0; ///< hardwareFlops / (total x gpus x peak)
    double tflopsPerGpu = 0; ///< modelFlops / (total x gpus) / 10^12
    double trainingDays = 0; ///< plan.train_tokens / tokensPerSecond / 86400
    double gemmEfficiency = 0; ///< e(gemmSize) used for the compute terms
    double peakFlops = 0; ///< per GPU, in the plan's precision
};

/// The step time of a plan. No validation and no allocation: call validate(PlanInputs) first
/// (the search calls it on candidates that are known to be valid).
StepTime stepTimeUnchecked(const PlanInputs& in);

/// Validates the plan (and its hardware), then stepTimeUnchecked.
StepTime computeStepTime(const PlanInputs& in);

} // namespace scalelab::core
