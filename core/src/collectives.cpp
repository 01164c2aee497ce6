#include "scalelab/core/collectives.h"

#include "scalelab/core/random.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace scalelab::core {

Ratio ringAllReduceBytes(std::int64_t sizeBytes, std::int64_t ranks)
{
    // Ring all-reduce: 2(n-1)/n of the tensor per rank.
    require(ranks >= 1, "zero.ranks", "a whole number >= 1");
    const std::int64_t twoNMinusOne = checkedMul(2, ranks - 1, "zero.ranks");
    return makeRatio(checkedMul(twoNMinusOne, sizeBytes, "zero.parameters"), ranks);
}

std::vector<std::int64_t> arraySplitSizes(std::int64_t size, std::int64_t parts)
{
    std::vector<std::int64_t> sizes(static_cast<std::size_t>(parts), size / parts);
    for (std::int64_t i = 0; i < size % parts; ++i)
        ++sizes[static_cast<std::size_t>(i)];
    return sizes;
}

RingAllReduceResult ringAllReduce(const Eigen::MatrixXd& inputs, std::int64_t bytesPerValue)
{
    const auto n = static_cast<int>(inputs.rows());
    const auto size = static_cast<std::int64_t>(inputs.cols());
    require(n >= 1, "zero.ranks", "at least one rank");
    require(static_cast<std::int64_t>(n) * size <= kMaxRingValues, "zero.ranks",
            "at most " + std::to_string(kMaxRingValues) + " values in the simulated ring");

    RingAllReduceResult out;
    out.chunkSizes = arraySplitSizes(size, n);
    std::vector<std::int64_t> offsets(static_cast<std::size_t>(n) + 1, 0);
    for (int c = 0; c < n; ++c)
        offsets[static_cast<std::size_t>(c) + 1] =
            offsets[static_cast<std::size_t>(c)] + out.chunkSizes[static_cast<std::size_t>(c)];
    const auto chunkOf = [&](int c) {
        const auto i = static_cast<std::size_t>(((c % n) + n) % n);
        return std::pair<Eigen::Index, Eigen::Index>(offsets[i], out.chunkSizes[i]);
    };
    const auto mod = [n](int c) {
        return ((c % n) + n) % n;
    };

    Eigen::MatrixXd buffers = inputs;
    std::vector<std::int64_t> sent(static_cast<std::size_t>(n), 0);
    out.steps.push_back({RingStep::Phase::Start, 0, buffers, std::vector<int>(n, -1), sent});

    // Every rank sends to its right-hand neighbour at once, so each step reads the buffers as
    // they were before it (the messages in flight) and writes into a copy.
    const auto runPhase = [&](RingStep::Phase phase, int chunkShift) {
        for (int t = 1; t < n; ++t) {
            const Eigen::MatrixXd before = buffers;
            std::vector<int> chunks(static_cast<std::size_t>(n));
            for (int r = 0; r < n; ++r) {
                const int c = mod(r - t + chunkShift);
                chunks[static_cast<std::size_t>(r)] = c;
                const auto [start, length] = chunkOf(c);
                const int to = (r + 1) % n;
                if (phase == RingStep::Phase::ReduceScatter)
                    buffers.row(to).segment(start, length) += before.row(r).segment(start, length);
                else
                    buffers.row(to).segment(start, length) = before.row(r).segment(start, length);
                sent[static_cast<std::size_t>(r)] += length * bytesPerValue;
            }
            out.steps.push_back({phase, t, buffers, chunks, sent});
        }
    };
    // Reduce-scatter: after n-1 steps rank r holds the full sum of chunk r+1.
    runPhase(RingStep::Phase::ReduceScatter, 1);
    // All-gather: rank r starts by passing on the chunk it completed, r+1.
    runPhase(RingStep::Phase::AllGather, 2);

    out.result = buffers;
    out.bytesSent = sent;
    return out;
}

int ringContributors(int ranks, RingStep::Phase phase, int index, int rank, int chunk)
{
    const int n = ranks;
    if (phase == RingStep::Phase::Start || n <= 1)
        return 1;
    // Chunk c reached rank r in reduce-scatter step s = (r - c) mod n carrying s + 1 inputs
    // (each hop adds the receiver's own); s = 0 is the rank's own chunk, never received.
    const int s = ((rank - chunk) % n + n) % n;
    if (phase == RingStep::Phase::ReduceScatter)
        return s >= 1 && s <= index ? s + 1 : 1;
    // All-gather: rank r owns chunk r + 1 (s = n - 1) and has received the finished chunks
    // r, r - 1, ..., r - index + 1, that is s = 0 .. index - 1.
    if (s == n - 1 || s <= index - 1)
        return n;
    return s + 1; // still what reduce-scatter left there
}

RingDemo ringDemo(int ranks, int valuesPerRank, std::int64_t bytesPerValue, std::uint64_t seed)
{
    require(ranks >= 1, "zero.ranks", "at least one rank");
    require(valuesPerRank >= 1, "zero.ranks", "at least one value per rank");
    RingDemo demo;
    Rng rng(seed);
    demo.inputs.resize(ranks, valuesPerRank);
    for (int r = 0; r < ranks; ++r)
        for (int i = 0; i < valuesPerRank; ++i)
            demo.inputs(r, i) = static_cast<double>(1 + rng.below(9));
    demo.plainSum = demo.inputs.colwise().sum();
    demo.ring = ringAllReduce(demo.inputs, bytesPerValue);
    return demo;
}

void validate(const ZeroInputs& in)
{
    require(in.parameters >= 1, "zero.parameters", "a whole number >= 1");
    require(in.ranks >= 1, "zero.ranks", "a whole number >= 1");
    require(in.weightBytes >= 0, "zero.weight_bytes", "a whole number >= 0");
    require(in.gradBytes >= 0, "zero.grad_bytes", "a whole number >= 0");
    require(in.optimizerBytes >= 0, "zero.optimizer_bytes", "a whole number >= 0");
    (void)computeZeroUnchecked(in);
}

ZeroResult computeZeroUnchecked(const ZeroInputs& in)
{
    // The chapter's (41.3) with byte sizes w, g, o instead of 2, 2, 12. Each figure is kept as
    // an exact fraction over n: (replicated bytes * n + sharded bytes) / n.
    const std::string field = "zero.parameters";
    const std::int64_t p = in.parameters;
    const std::int64_t n = in.ranks;
    const std::int64_t w = checkedMul(p, in.weightBytes, field);
    const std::int64_t g = checkedMul(p, in.gradBytes, field);
    const std::int64_t o = checkedMul(p, in.optimizerBytes, field);
    const auto perRank = [&](std::int64_t replicated, std::int64_t sharded) {
        return makeRatio(checkedAdd(checkedMul(replicated, n, field), sharded, field), n);
    };
    ZeroResult r;
    const std::int64_t all = checkedAdd(checkedAdd(w, g, field), o, field);
    r.dp = makeRatio(all, 1);
    r.zero1 = perRank(checkedAdd(w, g, field), o);
    r.zero2 = perRank(w, checkedAdd(g, o, field));
    r.zero3 = makeRatio(all, n);
    r.ringAllReduceBytesPerRank = ringAllReduceBytes(g, n);
    return r;
}

ZeroResult computeZero(const ZeroInputs& in)
{
    validate(in);
    return computeZeroUnchecked(in);
}

namespace {

/// Bytes of weights, gradients and optimizer state, and which of them a stage shards.
struct StateBytes {
    std::int64_t w, g, o;
    bool shardW, shardG, shardO;
};

StateBytes stateBytes(const ZeroInputs& in, ZeroStage stage)
{
    const std::string field = "zero.parameters";
    return {checkedMul(in.parameters, in.weightBytes, field),
            checkedMul(in.parameters, in.gradBytes, field),
            checkedMul(in.parameters, in.optimizerBytes, field),
            stage == ZeroStage::Zero3,
            stage == ZeroStage::Zero2 || stage == ZeroStage::Zero3,
            stage != ZeroStage::DataParallel};
}

/// The bytes every rank keeps whole (first) and the bytes split over the ranks (second).
std::pair<std::int64_t, std::int64_t> replicatedAndSharded(const StateBytes& b)
{
    const std::string field = "zero.parameters";
    std::int64_t replicated = 0, sharded = 0;
    for (const auto& [bytes, isSharded] :
         {std::pair{b.w, b.shardW}, std::pair{b.g, b.shardG}, std::pair{b.o, b.shardO}}) {
        std::int64_t& sum = isSharded ? sharded : replicated;
        sum = checkedAdd(sum, bytes, field);
    }
    return {replicated, sharded};
}

} // namespace

ZeroStageBytes zeroStageBytes(const ZeroInputs& in, ZeroStage stage)
{
    require(in.ranks >= 1, "zero.ranks", "a whole number >= 1");
    const StateBytes b = stateBytes(in, stage);
    const std::int64_t n = in.ranks;
    const auto part = [n](std::int64_t bytes, bool sharded) {
        return sharded ? ZeroPart{makeRatio(0, 1), makeRatio(bytes, n)}
                       : ZeroPart{makeRatio(bytes, 1), makeRatio(0, 1)};
    };
    ZeroStageBytes out;
    out.weights = part(b.w, b.shardW);
    out.gradients = part(b.g, b.shardG);
    out.optimizer = part(b.o, b.shardO);
    // Replicated bytes R and sharded bytes S: R + S/n as one exact fraction (R n + S) / n.
    const std::string field = "zero.parameters";
    const auto [replicated, sharded] = replicatedAndSharded(b);
    out.total = makeRatio(checkedAdd(checkedMul(replicated, n, field), sharded, field), n);
    out.onOtherRanks = makeRatio(checkedMul(sharded, n - 1, field), n);
    return out;
}

std::optional<std::int64_t> fewestRanksThatFit(const ZeroInputs& in, ZeroStage stage,
                                               std::int64_t capacityBytes)
{
    const auto [replicated, sharded] = replicatedAndSharded(stateBytes(in, stage));
    // R + S/n <= C  <=>  S <= (C - R) n: impossible when R > C, or when R == C and S > 0.
    if (replicated > capacityBytes)
        return std::nullopt;
    const std::int64_t room = capacityBytes - replicated;
    if (sharded == 0)
        return 1;
    if (room == 0)
        return std::nullopt;
    return std::max<std::int64_t>(1, sharded / room + (sharded % room != 0 ? 1 : 0));
}

void validate(const LinkModel& link)
{
    require(std::isfinite(link.bandwidth) && link.bandwidth > 0, "zero.link_bandwidth",
            "a finite number > 0 (bytes per second)");
    require(std::isfinite(link.latency) && link.latency >= 0, "zero.link_latency",
            "a finite number >= 0 (seconds)");
}

double ringAllReduceSeconds(double sizeBytes, std::int64_t ranks, const LinkModel& link)
{
    // Alpha-beta ring all-reduce: 2(n-1) messages of size/n, t = 2(n-1)(alpha + size/(n beta)).
    if (ranks <= 1)
        return 0.0;
    const auto n = static_cast<double>(ranks);
    return 2.0 * (n - 1.0) * (link.latency + sizeBytes / (n * link.bandwidth));
}

double busBandwidth(double algorithmBandwidth, std::int64_t ranks)
{
    // NCCL tests' convention for all-reduce: busbw = algbw x 2(n-1)/n.
    const auto n = static_cast<double>(ranks);
    return algorithmBandwidth * 2.0 * (n - 1.0) / n;
}

ZeroTraffic zeroTraffic(const ZeroInputs& in, const LinkModel& link)
{
    validate(link);
    require(in.ranks >= 1, "zero.ranks", "a whole number >= 1");
    const std::string field = "zero.parameters";
    const std::int64_t n = in.ranks;
    const std::int64_t w = checkedMul(in.parameters, in.weightBytes, field);
    const std::int64_t g = checkedMul(in.parameters, in.gradBytes, field);
    // One ring reduce-scatter or all-gather of T bytes: each rank sends n-1 chunks of T/n.
    const std::int64_t hops = n - 1;
    const auto step = [&](std::int64_t tensorBytes, std::int64_t collectives) {
        StepTraffic t;
        t.bytes = makeRatio(checkedMul(hops, tensorBytes, field), n);
        t.messages = checkedMul(collectives, hops, "zero.ranks");
        // Alpha-beta: every message pays the latency, every byte the inverse bandwidth.
        t.seconds =
            static_cast<double>(t.messages) * link.latency + t.bytes.value() / link.bandwidth;
        if (t.seconds > 0) {
            t.algorithmBandwidth = static_cast<double>(g) / t.seconds;
            t.busBandwidth = t.bytes.value() / t.seconds;
        }
        return t;
    };
    ZeroTraffic out;
    // DP: the ring all-reduce is a reduce-scatter and an all-gather of the same gradients.
    out.dp = step(checkedMul(2, g, field), 2);
    out.dp.seconds = ringAllReduceSeconds(static_cast<double>(g), n, link);
    if (out.dp.seconds > 0) {
        out.dp.algorithmBandwidth = static_cast<double>(g) / out.dp.seconds;
        out.dp.busBandwidth = busBandwidth(out.dp.algorithmBandwidth, n);
    }
    // ZeRO-1/2: gradients reduce-scattered to their owners, updated weights all-gathered.
    out.zero12 = step(checkedAdd(g, w, field), 2);
    // ZeRO-3: weights gathered for forward and again for backward, gradients reduce-scattered.
    out.zero3 = step(checkedAdd(checkedMul(2, w, field), g, field), 3);
    return out;
}

} // namespace scalelab::core
