#pragma once

#include "scalelab/core/error.h"

#include <Eigen/Core>
#include <cstdint>
#include <optional>
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

/// How many ranks' inputs are summed into chunk `chunk` of rank `rank`'s buffer after the given
/// step of ringAllReduce over `ranks` ranks (1 at the start; `ranks` once the chunk is complete).
/// Closed form of the schedule above: reduce-scatter step s hands rank r chunk (r - s) mod n
/// with s + 1 contributions; all-gather step t hands it the finished chunk (r - t + 1) mod n.
int ringContributors(int ranks, RingStep::Phase phase, int index, int rank, int chunk);

/// A small ring all-reduce to watch: whole numbers 1..9 from `seed` (so every partial sum is
/// exact and short enough to read), the plain column sum to compare with, and the simulation.
struct RingDemo {
    Eigen::MatrixXd inputs; ///< ranks x valuesPerRank
    Eigen::RowVectorXd plainSum; ///< inputs summed over ranks, without the ring
    RingAllReduceResult ring;
};

/// Throws InputError naming `zero.ranks` for fewer than one rank or one value.
RingDemo ringDemo(int ranks, int valuesPerRank, std::int64_t bytesPerValue, std::uint64_t seed);

/// Inputs of the ZeRO memory model (scenario section `zero`): bytes per parameter.
struct ZeroInputs {
    std::int64_t parameters = 7'500'000'000; ///< P
    std::int64_t ranks = 64; ///< n, data-parallel ranks
    std::int64_t weightBytes = 2;
    std::int64_t gradBytes = 2;
    std::int64_t optimizerBytes = 12; ///< master weights + both moments

    bool operator==(const ZeroInputs&) const = default;
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

/// Plain data parallelism and the three ZeRO stages.
enum class ZeroStage { DataParallel, Zero1, Zero2, Zero3 };

/// One kind of model state on one rank: the bytes every rank keeps whole, and this rank's share
/// of the bytes that are sharded (already divided by n). One of the two is zero.
struct ZeroPart {
    Ratio replicated;
    Ratio sharded;
};

/// What one rank holds under a stage, kind by kind; `total` equals the stage's ZeroResult figure.
struct ZeroStageBytes {
    ZeroPart weights; ///< P w: sharded by ZeRO-3 only
    ZeroPart gradients; ///< P g: sharded from ZeRO-2 on
    ZeroPart optimizer; ///< P o: sharded from ZeRO-1 on
    Ratio total;
    /// The rest of the sharded bytes, (n-1)/n of them, kept by the other ranks: total plus this
    /// is the plain data-parallel figure (sharding moves state, it does not drop it).
    Ratio onOtherRanks;
};

/// The breakdown behind (41.3): which part each stage shards. Like computeZeroUnchecked, no
/// range checks (overflow is refused).
ZeroStageBytes zeroStageBytes(const ZeroInputs& in, ZeroStage stage);

/// The fewest ranks (>= 1) at which a stage's per-rank model state is at most `capacityBytes`,
/// or nothing when no rank count is enough (the replicated part alone is too big). The stage
/// holds R + S/n bytes, so it fits from n = ceil(S / (C - R)) when C > R. Exact integers.
std::optional<std::int64_t> fewestRanksThatFit(const ZeroInputs& in, ZeroStage stage,
                                               std::int64_t capacityBytes);

/// The alpha-beta link model: a message of m bytes takes latency + m / bandwidth seconds.
struct LinkModel {
    double bandwidth = 50e9; ///< bytes per second each rank can send (50e9: a 400 Gb/s NIC)
    double latency = 10e-6; ///< alpha, seconds per message
};

/// Throws InputError naming `zero.link_bandwidth` (finite, > 0) or `zero.link_latency`
/// (finite, >= 0). Neither is a scenario key: they are the window's link settings.
void validate(const LinkModel& link);

/// Ring all-reduce time in the alpha-beta model: 2(n-1) messages of size/n each,
/// t = 2(n-1) (alpha + size / (n bandwidth)). Zero for one rank.
double ringAllReduceSeconds(double sizeBytes, std::int64_t ranks, const LinkModel& link);

/// Bus bandwidth of an all-reduce, the convention of NCCL's tests (doc/PERFORMANCE.md of
/// nccl-tests): busbw = algbw x 2(n-1)/n, where algbw = size / time. It equals the bytes one
/// rank sends over the time, so it can be compared with the link's own bandwidth.
double busBandwidth(double algorithmBandwidth, std::int64_t ranks);

/// What one rank sends in one training step for the gradients to be synchronized.
struct StepTraffic {
    Ratio bytes; ///< bytes one rank sends per step
    std::int64_t messages = 0; ///< messages one rank sends per step (ring: n-1 per collective)
    double seconds = 0; ///< alpha-beta time: messages x latency + bytes / bandwidth
    /// P g / seconds: how fast the step synchronizes the gradient tensor (0 when nothing moves)
    double algorithmBandwidth = 0;
    /// bytes / seconds: how busy each rank's link is (NCCL's busbw; 0 when nothing moves)
    double busBandwidth = 0;
};

/// Per-rank traffic of one step, each collective a ring (Rajbhandari et al. 2019, section 7):
/// - DP: all-reduce of the gradients, 2(n-1)/n P g in 2(n-1) messages;
/// - ZeRO-1 and ZeRO-2: reduce-scatter of the gradients ((n-1)/n P g) and all-gather of the
///   updated weights ((n-1)/n P w): the same volume as DP when w = g;
/// - ZeRO-3: the weights all-gathered in forward and again in backward plus the gradient
///   reduce-scatter, (n-1)/n P (2w + g): 1.5x DP when w = g.
struct ZeroTraffic {
    StepTraffic dp;
    StepTraffic zero12;
    StepTraffic zero3;
};

/// Like computeZeroUnchecked, no range checks on `in` (overflow is refused); validates `link`.
ZeroTraffic zeroTraffic(const ZeroInputs& in, const LinkModel& link);

} // namespace scalelab::core
