#include "scalelab/core/tensor_parallel.h"

#include "scalelab/core/collectives.h"
#include "scalelab/core/random.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <type_traits>

namespace scalelab::core {

void validate(const TensorParallelInputs& in)
{
    require(in.tokens >= 1, "tensor_parallel.tokens", "a whole number >= 1");
    require(in.dModel >= 1, "tensor_parallel.d_model", "a whole number >= 1");
    require(in.dFf >= 1, "tensor_parallel.d_ff", "a whole number >= 1");
    require(in.ranks >= 1 && in.ranks <= std::min(in.dFf, kMaxTensorParallelRanks),
            "tensor_parallel.ranks",
            "a whole number in 1..d_ff (1.." + std::to_string(in.dFf) + "), at most "
                + std::to_string(kMaxTensorParallelRanks));
    require(in.bytesPerValue >= 1, "tensor_parallel.bytes_per_value", "a whole number >= 1");
    require(in.seed >= 0, "tensor_parallel.seed", "a whole number >= 0");
    // Keep the float64 matrices within memory: the largest is one of these products.
    const std::string limit = "small enough that each matrix holds at most "
        + std::to_string(kMaxTensorParallelValues) + " values";
    const auto fits = [](std::int64_t a, std::int64_t b) {
        return a <= kMaxTensorParallelValues / b;
    };
    require(fits(in.tokens, in.dFf), "tensor_parallel.tokens", limit);
    require(fits(in.tokens, in.dModel), "tensor_parallel.tokens", limit);
    require(fits(in.dModel, in.dFf), "tensor_parallel.d_ff", limit);
    // And the time: one pass of the MLP is tokens x d_model x d_ff multiply-adds per layer.
    require(in.tokens * in.dModel <= kMaxTensorParallelMultiplyAdds / in.dFf,
            "tensor_parallel.tokens",
            "small enough that tokens x d_model x d_ff is at most "
                + std::to_string(kMaxTensorParallelMultiplyAdds));
    (void)checkedMul(checkedMul(in.tokens, in.dModel, "tensor_parallel.tokens"), in.bytesPerValue,
                     "tensor_parallel.bytes_per_value");
}

namespace {

template <typename Scalar> using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;

template <typename Scalar> Matrix<Scalar> geluOf(const Matrix<Scalar>& x)
{
    // The chapter's tanh approximation of GELU, every operation in Scalar.
    const auto c = static_cast<Scalar>(std::sqrt(2.0 / std::numbers::pi));
    const auto half = static_cast<Scalar>(0.5);
    const auto cubic = static_cast<Scalar>(0.044715);
    return x.unaryExpr([c, half, cubic](Scalar v) {
        return half * v * (Scalar(1) + std::tanh(c * (v + cubic * v * v * v)));
    });
}

template <typename Weights> auto mlpOf(const Weights& w)
{
    using M = std::decay_t<decltype(w.x)>;
    const M pre = (w.x * w.w1).rowwise() + w.b1;
    return M((geluOf(pre) * w.w2).rowwise() + w.b2);
}

/// Calls `use(partial)` with each rank's partial output in turn, so that only one is held at a
/// time. Rank r holds columns [offset, offset+width) of W1 and b1 and the same rows of W2:
/// H_r = GELU(X W1_r + b1_r), O_r = H_r W2_r.
template <typename Weights, typename Use>
void forEachPartial(const Weights& w, std::int64_t ranks, Use use)
{
    using M = std::decay_t<decltype(w.x)>;
    Eigen::Index offset = 0;
    for (const std::int64_t width : arraySplitSizes(w.w1.cols(), ranks)) {
        const auto cols = static_cast<Eigen::Index>(width);
        const M pre = (w.x * w.w1.middleCols(offset, cols)).rowwise() + w.b1.segment(offset, cols);
        use(M(geluOf(pre) * w.w2.middleRows(offset, cols)));
        offset += cols;
    }
}

template <typename Weights> auto partialsOf(const Weights& w, std::int64_t ranks)
{
    using M = std::decay_t<decltype(w.x)>;
    std::vector<M> partials;
    partials.reserve(static_cast<std::size_t>(ranks));
    forEachPartial(w, ranks, [&partials](M partial) { partials.push_back(std::move(partial)); });
    return partials;
}

template <typename Weights> auto shardedOf(const Weights& w, std::int64_t ranks)
{
    // Summing the partial outputs is the all-reduce; b2 is added once, after it. The sum is
    // taken as each partial is made, in rank order, so memory does not grow with the ranks.
    using M = std::decay_t<decltype(w.x)>;
    M sum = M::Zero(w.x.rows(), w.w2.cols());
    forEachPartial(w, ranks, [&sum](const M& partial) { sum += partial; });
    return M(sum.rowwise() + w.b2);
}

template <typename Weights>
auto wrongSplitOf(const Weights& w, std::int64_t ranks, WrongSplit split)
{
    using M = std::decay_t<decltype(w.x)>;
    require(ranks >= 1, "tensor_parallel.ranks", "a whole number >= 1");
    const Eigen::Index tokens = w.x.rows(), dModel = w.x.cols(), dFf = w.w1.cols();
    if (split == WrongSplit::W2ByColumns) {
        // Each rank keeps only the block of W2 where its hidden columns meet its output
        // columns: the terms H_s W2[rows s, columns r] of the other ranks s never arrive.
        M out(tokens, dModel);
        const std::vector<std::int64_t> hidden = arraySplitSizes(dFf, ranks);
        const std::vector<std::int64_t> outputs = arraySplitSizes(dModel, ranks);
        Eigen::Index h0 = 0, o0 = 0;
        for (std::size_t r = 0; r < hidden.size(); ++r) {
            const auto hw = static_cast<Eigen::Index>(hidden[r]);
            const auto ow = static_cast<Eigen::Index>(outputs[r]);
            if (ow > 0) {
                if (hw > 0) {
                    const M pre = (w.x * w.w1.middleCols(h0, hw)).rowwise() + w.b1.segment(h0, hw);
                    out.middleCols(o0, ow) = geluOf(pre) * w.w2.block(h0, o0, hw, ow);
                } else {
                    out.middleCols(o0, ow).setZero();
                }
                out.middleCols(o0, ow).rowwise() += w.b2.segment(o0, ow);
            }
            h0 += hw;
            o0 += ow;
        }
        return out;
    }
    // W1 by rows: GELU of each partial pre-activation, then the sum. The sum of GELU(P_r) W2
    // over ranks is formed as (sum_r GELU(P_r)) W2, the same sum with one product.
    M hidden = M::Zero(tokens, dFf);
    Eigen::Index offset = 0;
    bool first = true;
    for (const std::int64_t width : arraySplitSizes(dModel, ranks)) {
        const auto rows = static_cast<Eigen::Index>(width);
        M pre = rows > 0 ? M(w.x.middleCols(offset, rows) * w.w1.middleRows(offset, rows))
                         : M(M::Zero(tokens, dFf));
        if (first)
            pre.rowwise() += w.b1; // a bias is added once, by one rank
        hidden += geluOf(pre);
        first = false;
        offset += rows;
    }
    return M((hidden * w.w2).rowwise() + w.b2);
}

template <typename M> double maxAbsDifferenceOf(const M& a, const M& b)
{
    if (a.size() == 0)
        return 0.0;
    return static_cast<double>((a - b).cwiseAbs().maxCoeff());
}

} // namespace

Eigen::MatrixXd gelu(const Eigen::MatrixXd& x)
{
    return geluOf(x);
}

Eigen::MatrixXf gelu(const Eigen::MatrixXf& x)
{
    return geluOf(x);
}

MlpWeights makeMlpWeights(std::int64_t tokens, std::int64_t dModel, std::int64_t dFf,
                          std::uint64_t seed)
{
    Rng rng(seed);
    const auto fill = [&rng](Eigen::Index rows, Eigen::Index cols, double scale) {
        Eigen::MatrixXd m(rows, cols);
        for (Eigen::Index i = 0; i < rows; ++i)
            for (Eigen::Index j = 0; j < cols; ++j)
                m(i, j) = rng.normal() * scale;
        return m;
    };
    // Weights scaled by 1/sqrt(fan-in) keep every layer's outputs of order one.
    MlpWeights w;
    w.x = fill(tokens, dModel, 1.0);
    w.w1 = fill(dModel, dFf, 1.0 / std::sqrt(static_cast<double>(dModel)));
    w.b1 = fill(1, dFf, 0.1);
    w.w2 = fill(dFf, dModel, 1.0 / std::sqrt(static_cast<double>(dFf)));
    w.b2 = fill(1, dModel, 0.1);
    return w;
}

MlpWeightsF toFloat(const MlpWeights& w)
{
    // Eigen's cast rounds each double to the nearest float.
    return {w.x.cast<float>(), w.w1.cast<float>(), w.b1.cast<float>(), w.w2.cast<float>(),
            w.b2.cast<float>()};
}

Eigen::MatrixXd mlp(const MlpWeights& w)
{
    return mlpOf(w);
}

Eigen::MatrixXf mlp(const MlpWeightsF& w)
{
    return mlpOf(w);
}

std::vector<Eigen::MatrixXd> tensorParallelPartials(const MlpWeights& w, std::int64_t ranks)
{
    return partialsOf(w, ranks);
}

std::vector<Eigen::MatrixXf> tensorParallelPartials(const MlpWeightsF& w, std::int64_t ranks)
{
    return partialsOf(w, ranks);
}

Eigen::MatrixXd tensorParallelMlp(const MlpWeights& w, std::int64_t ranks)
{
    return shardedOf(w, ranks);
}

Eigen::MatrixXf tensorParallelMlp(const MlpWeightsF& w, std::int64_t ranks)
{
    return shardedOf(w, ranks);
}

Eigen::MatrixXd wrongSplitMlp(const MlpWeights& w, std::int64_t ranks, WrongSplit split)
{
    return wrongSplitOf(w, ranks, split);
}

Eigen::MatrixXf wrongSplitMlp(const MlpWeightsF& w, std::int64_t ranks, WrongSplit split)
{
    return wrongSplitOf(w, ranks, split);
}

double maxAbsDifference(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b)
{
    return maxAbsDifferenceOf(a, b);
}

double maxAbsDifference(const Eigen::MatrixXf& a, const Eigen::MatrixXf& b)
{
    return maxAbsDifferenceOf(a, b);
}

namespace {

// The cost of a rank holding `width` hidden columns; `in` already validated.
TensorParallelRankCost costOfWidth(const TensorParallelInputs& in, std::int64_t width)
{
    const std::string bytesField = "tensor_parallel.bytes_per_value";
    TensorParallelRankCost c;
    c.width = width;
    c.parameters = 2 * in.dModel * width + width + in.dModel;
    c.parameterBytes = checkedMul(c.parameters, in.bytesPerValue, bytesField);
    c.multiplyAdds = 2 * in.tokens * in.dModel * width;
    c.activationBytes =
        checkedMul(in.tokens * in.dModel + 2 * in.tokens * width, in.bytesPerValue, bytesField);
    // Ring all-reduce of the partial output: 2(n-1)/n of the tensor per rank.
    c.allReduceBytes = ringAllReduceBytes(in.tokens * in.dModel * in.bytesPerValue, in.ranks);
    return c;
}

} // namespace

TensorParallelRankCost tensorParallelRankCost(const TensorParallelInputs& in, std::int64_t rank)
{
    validate(in);
    require(rank >= 0 && rank < in.ranks, "tensor_parallel.ranks",
            "more ranks than rank index " + std::to_string(rank));
    // array_split: the first d_ff mod ranks shards are one column wider.
    const std::int64_t width = in.dFf / in.ranks + (rank < in.dFf % in.ranks ? 1 : 0);
    return costOfWidth(in, width);
}

std::vector<TensorParallelRankCost> widestRankCosts(const TensorParallelInputs& in)
{
    validate(in);
    std::vector<TensorParallelRankCost> costs;
    costs.reserve(static_cast<std::size_t>(in.ranks));
    TensorParallelInputs each = in;
    for (std::int64_t n = 1; n <= in.ranks; ++n) {
        each.ranks = n;
        costs.push_back(costOfWidth(each, in.dFf / n + (in.dFf % n != 0 ? 1 : 0)));
    }
    return costs;
}

std::vector<std::int64_t> sampleRankCounts(std::int64_t ranks, std::int64_t maxPoints)
{
    require(ranks >= 1, "tensor_parallel.ranks", "a whole number >= 1");
    maxPoints = std::max<std::int64_t>(maxPoints, 2);
    std::vector<std::int64_t> counts;
    if (ranks <= maxPoints) {
        for (std::int64_t n = 1; n <= ranks; ++n)
            counts.push_back(n);
        return counts;
    }
    const auto push = [&counts](std::int64_t n) {
        if (counts.empty() || n > counts.back())
            counts.push_back(n);
    };
    const double octaves = std::log2(static_cast<double>(ranks));
    const auto perOctave =
        static_cast<std::int64_t>(std::floor(static_cast<double>(maxPoints - 2) / octaves));
    if (perOctave >= 1) {
        // A grid fixed per octave, so neighbouring rank counts share most of their samples.
        for (std::int64_t k = 0;; ++k) {
            const double v = std::exp2(static_cast<double>(k) / static_cast<double>(perOctave));
            const std::int64_t n = std::llround(v);
            if (n >= ranks)
                break;
            push(n);
        }
    } else {
        for (std::int64_t i = 0; i + 1 < maxPoints; ++i)
            push(std::llround(
                std::pow(static_cast<double>(ranks),
                         static_cast<double>(i) / static_cast<double>(maxPoints - 1))));
    }
    push(ranks);
    return counts;
}

TensorParallelResult computeTensorParallel(const TensorParallelInputs& in)
{
    validate(in);
    const MlpWeights w =
        makeMlpWeights(in.tokens, in.dModel, in.dFf, static_cast<std::uint64_t>(in.seed));
    TensorParallelResult r;
    r.unsharded = mlp(w);
    r.sharded = tensorParallelMlp(w, in.ranks);
    r.maxAbsDifference = (r.sharded - r.unsharded).cwiseAbs().maxCoeff();
    r.shardWidths = arraySplitSizes(in.dFf, in.ranks);
    r.allReduceBytesPerRank =
        ringAllReduceBytes(in.tokens * in.dModel * in.bytesPerValue, in.ranks);
    return r;
}

} // namespace scalelab::core
