#pragma once

#include "scalelab/core/error.h"

#include <Eigen/Core>
#include <cstdint>
#include <vector>

namespace scalelab::core {

/// Bytes one rank sends in a ring all-reduce of `sizeBytes` over `ranks` ranks:
/// 2(n-1)/n of the tensor (reduce-scatter and all-gather each move (n-1)/n). Exact.
Ratio ringAllReduceBytes(std::int64_t sizeBytes, std::int64_t ranks);

/// Chunk sizes of numpy.array_split(size, parts): the first size % parts chunks one larger.
std::vector<std::int64_t> arraySplitSizes(std::int64_t size, std::int64_t parts);

/// The ring's data after one step: what every rank holds.
struct RingStep {
    enum class Phase { Start, ReduceScatter, AllGather };
    Phase phase = Phase::Start;
    int index = 0; ///< 1-based step within its phase (0 for the start)
    /// ranks x size: each rank's buffer after the step.
    Eigen::MatrixXd buffers;
    /// For each rank, the chunk it sent in this step (-1 at the start).
    std::vector<int> sentChunk;
    /// For each rank, bytes sent so far (values x bytesPerValue).
    std::vector<std::int64_t> bytesSent;
};

struct RingAllReduceResult {
    Eigen::MatrixXd result; ///< ranks x size: every row equals the plain sum
    std::vector<std::int64_t> bytesSent; ///< per rank, in total
    std::vector<std::int64_t> chunkSizes; ///< array_split of size into n chunks
    std::vector<RingStep> steps; ///< the start, n-1 reduce-scatter, n-1 all-gather steps
};

/// Largest ranks x size the step-by-step simulation accepts.
inline constexpr std::int64_t kMaxRingValues = 1'000'000;

/// A real ring all-reduce over the rows of `inputs` (one row per rank), step by step. In
/// reduce-scatter step t (1..n-1) rank r sends chunk (r - t + 1) mod n to rank r+1, which adds
/// it to its own; afterwards rank r owns the full sum of chunk (r + 1) mod n. In all-gather step
/// t rank r sends chunk (r - t + 2) mod n, which the next rank copies. Throws InputError naming
/// `zero.ranks` for fewer than one row or too many values.
RingAllReduceResult ringAllReduce(const Eigen::MatrixXd& inputs, std::int64_t bytesPerValue = 8);

/// Inputs of the ZeRO memory model (scenario section `zero`): bytes per parameter.
struct ZeroInputs {
    std::int64_t parameters = 7'500'000'000; ///< P
    std::int64_t ranks = 64; ///< n, data-parallel ranks
    std::int64_t weightBytes = 2;
    std::int64_t gradBytes = 2;
    std::int64_t optimizerBytes = 12; ///< master weights + both moments
};

/// Per-rank model-state bytes, exact.
struct ZeroResult {
    Ratio dp; ///< P (w + g + o)
    Ratio zero1; ///< P (w + g) + P o / n: optimizer state sharded
    Ratio zero2; ///< P w + P (g + o) / n: gradients sharded too
    Ratio zero3; ///< P (w + g + o) / n: parameters sharded too
    Ratio ringAllReduceBytesPerRank; ///< ring all-reduce of the P g gradient bytes
};

/// Throws InputError naming the field (`zero.ranks`, ...).
void validate(const ZeroInputs& in);

/// ZeRO stage memory (the chapter's 41.3 with the byte sizes as parameters). Validates first.
ZeroResult computeZero(const ZeroInputs& in);

/// computeZero without the range checks (overflow is still refused); for charts that sweep the
/// rank count of inputs already validated.
ZeroResult computeZeroUnchecked(const ZeroInputs& in);

} // namespace scalelab::core
