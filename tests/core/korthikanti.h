#pragma once

// The GPT shapes of Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
// Transformer Models", Table 3), shared by the plan and step-time tests.

#include "scalelab/core/plan.h"

#include <cstdint>

namespace scalelab::test {

/// A Table 3 model on a t x p (x v chunks) layout: 4h MLP without gating, vocab 51200,
/// sequence 2048, tied embeddings. The other plan inputs keep their defaults.
inline core::PlanInputs korthikantiShape(std::int64_t layers, std::int64_t hidden,
                                         std::int64_t heads, std::int64_t t, std::int64_t p,
                                         std::int64_t v, std::int64_t globalBatch,
                                         std::int64_t microBatch)
{
    core::PlanInputs in;
    in.model.layers = layers;
    in.model.hidden = hidden;
    in.model.heads = heads;
    in.model.ffnHidden = 4 * hidden;
    in.model.vocab = 51200;
    in.model.gatedMlp = false;
    in.model.tiedEmbeddings = true;
    in.sequence = 2048;
    in.microBatch = microBatch;
    in.globalBatch = globalBatch;
    in.tensorParallel = t;
    in.pipelineParallel = p;
    in.virtualStages = v;
    return in;
}

} // namespace scalelab::test
