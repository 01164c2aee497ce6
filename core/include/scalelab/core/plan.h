#pragma once

#include "scalelab/core/error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace scalelab::core {

/// What the backward pass finds saved, and what it recomputes (Korthikanti et al. 2022).
enum class Recompute {
    None, ///< every activation of Table 2 is kept
    Selective, ///< the attention scores (the 5 a s^2 b term) are recomputed, the rest kept
    Full, ///< only each layer's input is kept; the whole layer runs forward again in backward
};

/// The shape of a decoder-only transformer (scenario keys `plan.model.*`). No biases. Widths
/// are in values, not bytes.
struct ModelShape {
    std::int64_t layers = 32; ///< L
    std::int64_t hidden = 4096; ///< h, the residual width
    std::int64_t heads = 32; ///< a, query heads; divides hidden (head width h / a)
    /// Key/value heads; absent means as many as query heads. Fewer is grouped-query attention.
    std::optional<std::int64_t> kvHeads;
    std::int64_t ffnHidden = 14336; ///< MLP width of the dense layers
    std::int64_t vocab = 128256; ///< v
    bool gatedMlp = true; ///< three MLP matrices (SwiGLU) when true, two when false
    bool tiedEmbeddings = false; ///< one vocab x hidden matrix for input and output
    std::int64_t experts = 0; ///< routed experts per MoE layer; 0 = dense model
    std::int64_t topK = 2; ///< routed experts per token (MoE only)
    /// MLP width of each expert (routed and shared); absent means ffnHidden. MoE only.
    std::optional<std::int64_t> expertFfnHidden;
    std::int64_t sharedExperts = 0; ///< experts every token passes through (MoE only)
    std::int64_t denseLayers = 0; ///< leading layers that keep a dense MLP (MoE only)

    bool operator==(const ModelShape&) const = default;
};

/// GPU types with a preset of peak throughput and memory (core/steptime.h, gpuSpec).
enum class GpuType { A100_40GB, A100_80GB, H100_80GB, H200_141GB };

/// The number format the matrix multiplies run in; it picks the preset's peak FLOP/s.
enum class ComputePrecision { Bf16, Fp8 };

/// The machine the plan runs on, for the step time (scenario keys `plan.hardware.*`). Links
/// follow the alpha-beta model of the ring tab: a message of m bytes takes latency + m /
/// bandwidth. Bandwidths are what one GPU sends per second in one direction.
struct HardwareInputs {
    GpuType gpu = GpuType::H100_80GB;
    ComputePrecision precision = ComputePrecision::Bf16;
    std::int64_t gpusPerNode = 8; ///< GPUs joined by NVLink in one server
    double nvlinkBandwidthGBs = 450.0; ///< GB/s per GPU per direction (H100 NVLink 4)
    double nvlinkLatencyUs = 2.0; ///< microseconds per message inside a node
    double ibBandwidthGBs = 50.0; ///< GB/s per GPU between nodes (one 400 Gb/s NIC per GPU)
    double ibLatencyUs = 10.0; ///< microseconds per message between nodes
    /// Fraction of the data-parallel (and ZeRO) collectives hidden behind the backward pass.
    double dpOverlap = 0.8;

    bool operator==(const HardwareInputs&) const = default;
};

/// The layout keys the layout search holds at the plan's own values, so that it searches only
/// what a framework or a cluster allows (docs/STEPTIME.md, "Search"). The memory plan and the
/// step time ignore it; all false searches every layout.
struct SearchKeep {
    bool tensorParallel = false;
    bool pipelineParallel = false;
    bool virtualStages = false;
    bool dataParallel = false; ///< d = gpus / (t p)
    bool expertParallel = false;
    bool microBatch = false;
    bool zeroStage = false;
    bool sequenceParallel = false;
    bool recompute = false;

    bool operator==(const SearchKeep&) const = default;
};

/// Inputs of the training plan (scenario section `plan`). The defaults describe a
/// Llama-3-8B-shaped model on 64 GPUs (the table of docs/CLI.md).
struct PlanInputs {
    ModelShape model;
    std::int64_t sequence = 4096; ///< s, tokens per sequence
    std::int64_t microBatch = 1; ///< b, sequences per microbatch
    std::int64_t globalBatch = 512; ///< sequences per optimizer step
    std::int64_t gpus = 64;
    std::int64_t tensorParallel = 8; ///< t
    std::int64_t pipelineParallel = 1; ///< p, pipeline stages
    std::int64_t virtualStages = 1; ///< v, model chunks per stage (interleaved 1F1B when > 1)
    std::int64_t expertParallel = 1; ///< ep, ranks the routed experts are spread over
    bool sequenceParallel = true;
    Recompute recompute = Recompute::Selective;
    std::int64_t zeroStage = 1; ///< 0 (plain data parallelism) .. 3
    std::int64_t weightBytes = 2; ///< per parameter
    std::int64_t gradBytes = 2; ///< per parameter
    std::int64_t optimizerBytes = 12; ///< per parameter: master weights and both Adam moments
    double gpuMemoryGib = 80.0; ///< one GPU's memory in GiB (2^30 bytes)
    HardwareInputs hardware; ///< for the step time only; the memory plan ignores it
    double trainTokens = 1e12; ///< tokens of the whole training run (days to train)
    SearchKeep searchKeep; ///< for the layout search only

    bool operator==(const PlanInputs&) const = default;
};

/// Largest `plan.model.layers` accepted: the plan keeps one entry per stage and walks every
/// model chunk, so this bounds its memory and time. Real models have a few hundred layers.
inline constexpr std::int64_t kMaxPlanLayers = 100'000;

/// Throws InputError naming the field (`plan.model.kv_heads`, `plan.global_batch`, ...) and
/// why, for every value out of range and every layout that does not divide; nothing is
/// rounded. Also refuses inputs whose byte counts would pass 2^63.
void validate(const PlanInputs& in);

/// Throws InputError naming the `plan.model.*` field for a shape out of range.
void validate(const ModelShape& shape);

/// The shape's key/value heads and expert MLP width with their defaults applied.
std::int64_t kvHeadsOf(const ModelShape& shape);
std::int64_t expertFfnHiddenOf(const ModelShape& shape);

/// Every weight of the model, by kind (whole model, not per GPU).
struct ParameterCount {
    std::int64_t attention = 0; ///< all layers: q and o h x h, k and v h x (h kv / a)
    std::int64_t denseMlp = 0; ///< the dense layers' 2 or 3 h x ffn matrices
    std::int64_t routedExperts = 0; ///< all routed experts of all MoE layers
    std::int64_t sharedExperts = 0; ///< all shared experts of all MoE layers
    std::int64_t routers = 0; ///< h x experts per MoE layer
    std::int64_t norms = 0; ///< two of width h per layer and the final one
    std::int64_t embedding = 0; ///< v x h
    std::int64_t outputLayer = 0; ///< v x h, or 0 when tied to the embedding
    std::int64_t total = 0; ///< the sum of the above
    /// What one token uses: everything but the routed experts it is not sent to (top_k of
    /// them per MoE layer). Both embedding matrices count, as Mixtral's 12.9B does.
    std::int64_t active = 0;
};

/// Counts the weights of a shape (docs/CLI.md, `parameters`). Validates the shape first.
ParameterCount countParameters(const ModelShape& shape);

/// The five layouts of Korthikanti et al. 2022, Table 2, and full recomputation.
enum class ActivationVariant {
    NoParallelism, ///< sbh (34 + 5as/h): t = 1
    TensorParallel, ///< sbh (10 + 24/t + 5as/(ht))
    TensorSequenceParallel, ///< sbh (34/t + 5as/(ht))
    TensorSelective, ///< sbh (10 + 24/t)
    TensorSequenceSelective, ///< sbh (34/t)
    FullRecompute, ///< 2sbh: the layer's input only
};

/// All six variants in the order above, for charts that show them side by side.
std::vector<ActivationVariant> allActivationVariants();

/// A short name for the variant ("tensor + sequence parallel", ...).
std::string activationVariantName(ActivationVariant variant);

/// Activation bytes one GPU keeps for one layer and one microbatch of `in.sequence` x
/// `in.microBatch` tokens under the plan's own tensor_parallel, sequence_parallel and
/// recompute. `moeLayer` picks the MoE layer's MLP (experts must be > 0). Exact. See
/// activationScalingNote() for how shapes other than Table 2's are scaled. No range checks.
Ratio layerActivationBytes(const PlanInputs& in, bool moeLayer = false);

/// The same for a Table 2 variant, whatever the plan's recipe: NoParallelism uses t = 1, the
/// others the plan's tensor_parallel; FullRecompute is the table's 2sbh (no sequence split).
Ratio layerActivationBytes(const PlanInputs& in, ActivationVariant variant, bool moeLayer = false);

/// The paragraph the tab shows on how Table 2 is scaled for gated MLPs, other widths,
/// grouped-query attention and experts, and what the figures leave out.
std::string activationScalingNote();

/// The paragraph the tab shows next to the communication figures: each axis's formula.
std::string communicationNote();

/// Layers on each pipeline stage: layers are cut into p v chunks as evenly as possible (the
/// first layers mod (p v) chunks one layer longer), and stage i holds chunks i, i + p, ...
std::vector<std::int64_t> stageLayers(std::int64_t layers, std::int64_t pipelineParallel,
                                      std::int64_t virtualStages = 1);

/// Bytes one GPU sends per optimizer step, by parallel axis.
struct CommunicationBytes {
    Ratio tensorParallel;
    Ratio dataParallel;
    Ratio pipeline;
    Ratio expert;
};

/// One GPU of one pipeline stage.
struct PlanStage {
    std::int64_t layers = 0; ///< transformer layers on the stage (all its chunks)
    std::int64_t moeLayers = 0; ///< of which MoE layers
    /// Weights this GPU holds: its layers' tensor-parallel share (norms and routers whole on
    /// every tensor-parallel rank), routed experts / expert_parallel, the embedding's share on
    /// the first stage, the final norm and output layer's share on the last (with tied
    /// embeddings and p > 1 the last stage keeps its own copy, as Megatron-LM does).
    std::int64_t parameters = 0;
    /// The routed experts' part of `parameters`. They are replicated over d / ep ranks only,
    /// so ZeRO shards them over d / ep ranks; the rest is sharded over d.
    std::int64_t expertParameters = 0;
    Ratio weightBytes; ///< weights held after ZeRO sharding
    Ratio gradBytes; ///< gradients held after ZeRO sharding
    Ratio optimizerBytes; ///< optimizer state held after ZeRO sharding
    Ratio modelStateBytes; ///< the three above; the `zero` section's figure for the stage
    std::int64_t inFlight = 0; ///< microbatches whose activations are held at the peak
    Ratio activationBytes; ///< held at the 1F1B peak, embedding and output terms included
    Ratio totalBytes; ///< modelStateBytes + activationBytes
    CommunicationBytes communication; ///< what this GPU sends per step
};

/// Everything the plan tab and report show.
struct PlanResult {
    ParameterCount parameters; ///< whole model
    std::int64_t dataParallel = 0; ///< d = gpus / (t p)
    std::int64_t microbatches = 0; ///< m = global_batch / (micro_batch d)
    Ratio denseLayerActivationBytes; ///< per GPU, per dense layer, per microbatch
    Ratio moeLayerActivationBytes; ///< the same for an MoE layer (zero for a dense model)
    std::vector<PlanStage> stages; ///< one per pipeline stage
    std::int64_t peakStage = 0; ///< the first stage with the largest totalBytes
    Ratio peakBytesPerGpu; ///< its totalBytes
    bool fits = false; ///< peakBytesPerGpu <= gpu_memory_gib x 2^30
    /// The idle share of the step: (p-1)/(v m+p-1), v = 1 without interleaving; with fewer
    /// microbatches than stages, from pipelineBubbleOverBusy.
    double bubbleFraction = 0.0;
    /// Per axis, the most any GPU sends per step (each axis has its own links, so each is the
    /// busiest GPU on that axis; they may be different stages).
    CommunicationBytes communication;
};

/// The whole plan. Validates first.
PlanResult computePlan(const PlanInputs& in);

/// One Table 2 variant applied to the whole plan: what each stage would hold.
struct VariantActivations {
    ActivationVariant variant = ActivationVariant::TensorParallel;
    Ratio denseLayerBytes; ///< one dense layer, one microbatch, one GPU
    Ratio moeLayerBytes; ///< one MoE layer, one microbatch, one GPU (zero for a dense model)
    std::vector<Ratio> stageBytes; ///< per stage, as PlanStage::activationBytes
    Ratio peakBytes; ///< the largest of stageBytes
};

/// Activation bytes each pipeline stage would hold at its 1F1B peak under each of
/// allActivationVariants(), for the plan's shape, layout and microbatches (the chart of the
/// recomputation choices). The embedding and output terms follow each variant's t and
/// sequence split. Validates first.
std::vector<VariantActivations> activationVariants(const PlanInputs& in);

} // namespace scalelab::core
