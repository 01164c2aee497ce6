#pragma once

#include "scalelab/core/collectives.h"
#include "scalelab/core/experts.h"
#include "scalelab/core/fp8.h"
#include "scalelab/core/memory.h"
#include "scalelab/core/pipeline.h"
#include "scalelab/core/plan.h"
#include "scalelab/core/tensor_parallel.h"

#include <array>
#include <string>
#include <string_view>

namespace scalelab::core {

/// Every tab's inputs. Default-constructed, it holds the defaults the window shows on first
/// start (the table of docs/CLI.md). One Scenario drives the window, the report and the export.
struct Scenario {
    /// What the scenario is and where its numbers come from (a preset's, or the user's words);
    /// empty when the file has none. Kept through opening and saving, never computed with.
    std::string title;
    std::string source;
    MemoryInputs memory;
    ZeroInputs zero;
    TensorParallelInputs tensorParallel;
    PipelineInputs pipeline;
    ExpertsInputs experts;
    Fp8Inputs fp8;
    PlanInputs plan;
};

/// The section names, which are also the tab names, in the order the window shows them.
inline constexpr std::array<std::string_view, 7> kSectionNames = {
    "memory", "zero", "tensor_parallel", "pipeline", "experts", "fp8", "plan"};

/// Validates every section; throws the first InputError found.
void validate(const Scenario& scenario);

} // namespace scalelab::core
