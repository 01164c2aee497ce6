#include "scalelab/core/collectives.h"

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

} // namespace scalelab::core
