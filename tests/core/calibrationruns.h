#pragma once

// The published end-to-end runs the step-time model is calibrated against (docs/STEPTIME.md),
// as plans: tst_steptime times them, tst_plantab checks that the published-figures rows
// (resources/published/figures.json) load the same plans.

#include "korthikanti.h"
#include "scalelab/core/plan.h"

#include <cstdint>

namespace scalelab::test {

/// A Table 3 model on `gpus` DGX A100 GPUs, as Korthikanti et al. and Narayanan et al. ran:
/// A100 80GB with NVLink 3 (300 GB/s per direction) and 200 Gb/s HDR InfiniBand per GPU
/// (25 GB/s), with the given recipe and no ZeRO.
inline core::PlanInputs onDgxA100(core::PlanInputs in, std::int64_t gpus, bool sequenceParallel,
                                  core::Recompute recompute)
{
    in.gpus = gpus;
    in.sequenceParallel = sequenceParallel;
    in.recompute = recompute;
    in.zeroStage = 0;
    in.hardware.gpu = core::GpuType::A100_80GB;
    in.hardware.nvlinkBandwidthGBs = 300;
    in.hardware.ibBandwidthGBs = 25;
    return in;
}

/// Korthikanti et al. 2022, Table 3 shapes: 4h MLP, vocab 51200, s = 2048, t = 8, tied
/// embeddings; sequence parallelism with selective recomputation ("present work"); A100 80GB
/// with NVLink 3 (300 GB/s per direction) and 200 Gb/s HDR InfiniBand per GPU (25 GB/s). The
/// presets resources/presets/korthikanti-*.json are these plans.
inline core::PlanInputs korthikanti(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                    std::int64_t gpus, std::int64_t p, std::int64_t v,
                                    std::int64_t batch, std::int64_t microBatch)
{
    return onDgxA100(korthikantiShape(layers, hidden, heads, 8, p, v, batch, microBatch), gpus,
                     true, core::Recompute::Selective);
}

/// Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU Clusters
/// Using Megatron-LM", SC21), Table 1: a GPT model of the Table 3 shape (4h MLP, vocab 51200,
/// s = 2048) on t x p of `gpus` A100 80GB GPUs (DGX A100 nodes: NVLink 3, 200 Gb/s InfiniBand
/// per GPU) with full activation recomputation, which the paper's FLOP count includes. Its
/// micro-batch size and interleaving are not in the table: ScaleLab assumes micro-batch 1, no
/// interleaving, no sequence parallelism (it came a year later) and no ZeRO.
inline core::PlanInputs narayanan(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                  std::int64_t t, std::int64_t p, std::int64_t gpus,
                                  std::int64_t batch)
{
    return onDgxA100(korthikantiShape(layers, hidden, heads, t, p, 1, batch, 1), gpus, false,
                     core::Recompute::Full);
}

/// Llama 3 405B (Llama 3 paper, Table 3 shape; Table 4 layout): 126 layers, h 16384, 128
/// heads, 8 key/value heads, SwiGLU 53248, vocab 128256; t = 8, p = 16, s = 8192, 16M tokens
/// (2048 sequences) per step on H100s. Micro-batch 1, interleaving v = 4 and ZeRO-1 are
/// ScaleLab's assumptions (the paper names an interleaved schedule and FSDP-style sharding
/// without these numbers). No recomputation is assumed for the 8K-context stage. The preset
/// resources/presets/llama3-405b.json is this plan at 8,192 GPUs.
inline core::PlanInputs llama405b(std::int64_t gpus)
{
    core::PlanInputs in;
    in.model.layers = 126;
    in.model.hidden = 16384;
    in.model.heads = 128;
    in.model.kvHeads = 8;
    in.model.ffnHidden = 53248;
    in.model.vocab = 128256;
    in.model.gatedMlp = true;
    in.model.tiedEmbeddings = false;
    in.sequence = 8192;
    in.microBatch = 1;
    in.globalBatch = 2048;
    in.gpus = gpus;
    in.tensorParallel = 8;
    in.pipelineParallel = 16;
    in.virtualStages = 4;
    in.sequenceParallel = true;
    in.recompute = core::Recompute::None;
    in.zeroStage = 1;
    in.hardware.gpu = core::GpuType::H100_80GB;
    return in;
}

} // namespace scalelab::test
