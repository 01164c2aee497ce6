#pragma once

// DualPipe and DualPipeV: the order each device runs and its timing. Private to core; the
// public entry points are in scalelab/core/pipeline.h.

#include "scalelab/core/pipeline.h"

#include <vector>

namespace scalelab::core::detail {

/// The order of every device's passes (see pipelineOrder), device 0 first, times zero.
std::vector<PipelineEvent> dualPipeOrder(const PipelineInputs& in);

/// Times `order` and measures it (see simulatePipelineOrder). Throws std::invalid_argument for
/// an order that is not every pass once on the device holding its stage, std::logic_error when
/// it deadlocks.
PipelineResult simulateDualOrder(const PipelineInputs& in, std::vector<PipelineEvent> order);

} // namespace scalelab::core::detail
