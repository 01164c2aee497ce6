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

/// Explicit values compare element by element (Eigen has no operator== that returns bool).
bool operator==(const Fp8Inputs& a, const Fp8Inputs& b);

/// The settings a tab shows beside its section's computed inputs: how its figures are read and
/// what they are drawn against. No computation reads them; they are saved, opened and undone
/// like every other input (scenario keys in docs/CLI.md).
struct MemoryDisplay {
    std::int64_t batch =
        1; ///< B, sequences; divides memory.tokens (sequence length T = tokens / B)
    bool checkpointing = true; ///< whether the budget counts checkpointed activations
    bool gib = false; ///< figures in GiB (2^30 bytes) rather than GB (10^9)
    double acceleratorGb = 80; ///< the accelerator's memory the budget is drawn against
    bool operator==(const MemoryDisplay&) const = default;
};

struct ZeroDisplay {
    double acceleratorGb = 80; ///< the memory the "fewest ranks that fit" figures aim at
    double linkBandwidthGBps = 50; ///< alpha-beta link: bytes per second, in GB/s
    double linkLatencyUs = 10; ///< alpha-beta link: fixed cost per message, in microseconds
    bool operator==(const ZeroDisplay&) const = default;
};

/// Which weight split the tensor-parallel tab draws; the wrong ones show why only one works.
enum class MlpSplit { Correct, W2ByColumns, W1ByRows };

struct TensorParallelDisplay {
    MlpSplit split = MlpSplit::Correct;
    bool float32 = false; ///< compute in float32 rather than float64
    bool operator==(const TensorParallelDisplay&) const = default;
};

struct PipelineDisplay {
    /// Bubble as (p-1)/m over the ideal time (Megatron-LM) rather than the chapter's idle share.
    bool megatronBubble = false;
    bool operator==(const PipelineDisplay&) const = default;
};

struct ExpertsDisplay {
    std::int64_t hidden = 4096; ///< values per token slot on the wire
    std::int64_t bytesPerValue = 2; ///< bytes per value on the wire
    bool operator==(const ExpertsDisplay&) const = default;
};

/// Which experiment the FP8 tab shows.
enum class Fp8Part {
    Blocks, ///< block scaling: the granularity of the scales
    Accumulation, ///< how the products of a matrix multiply are added up
    Policy, ///< when each scale is chosen, over training steps
};

struct Fp8Display {
    Fp8Part part = Fp8Part::Blocks;
    double shownBlock = 50; ///< the block drawn: this percentage of blocks have a smaller max
    /// The block size chosen last while fp8.block_size is held below it because the columns
    /// do not allow it (0: none, fp8.block_size is the choice). Not saved: it only lets a
    /// column count pass through a prime and back without losing the choice (an edit's memory,
    /// undone with it).
    std::int64_t preferredBlockSize = 0;
    bool operator==(const Fp8Display&) const = default;
};

/// Which view the training-plan tab shows.
enum class PlanPart {
    Memory, ///< what each GPU holds and sends, the published figures
    Time, ///< the step time, and the search over every layout
};

struct PlanDisplay {
    PlanPart part = PlanPart::Memory;
    bool operator==(const PlanDisplay&) const = default;
};

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

    MemoryDisplay memoryDisplay;
    ZeroDisplay zeroDisplay;
    TensorParallelDisplay tensorParallelDisplay;
    PipelineDisplay pipelineDisplay;
    ExpertsDisplay expertsDisplay;
    Fp8Display fp8Display;
    PlanDisplay planDisplay;

    bool operator==(const Scenario&) const = default;
};

/// The sections of a scenario, which are also the tabs, in the order the window shows them.
enum class Section { Memory, Zero, TensorParallel, Pipeline, Experts, Fp8, Plan };

/// The section names, which are also the tab names, in the order the window shows them.
inline constexpr std::array<std::string_view, 7> kSectionNames = {
    "memory", "zero", "tensor_parallel", "pipeline", "experts", "fp8", "plan"};

inline constexpr std::string_view sectionName(Section section)
{
    return kSectionNames[static_cast<std::size_t>(section)];
}

/// Whether `a` and `b` hold the same inputs and display settings in `section`.
bool sameSection(const Scenario& a, const Scenario& b, Section section);

/// Copies `section` (inputs and display settings) from `from` into `into`.
void copySection(const Scenario& from, Scenario& into, Section section);

/// Validates every section; throws the first InputError found.
void validate(const Scenario& scenario);

/// Throws InputError naming the display setting out of range (`memory.batch`, ...).
void validateDisplay(const Scenario& scenario);

} // namespace scalelab::core
