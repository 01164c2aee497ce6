#include "scalelab/core/tensor_parallel.h"

#include "scalelab/core/collectives.h"
#include "scalelab/core/random.h"

#include <cmath>
#include <numbers>
#include <string>

namespace scalelab::core {

void validate(const TensorParallelInputs& in)
{
    require(in.tokens >= 1, "tensor_parallel.tokens", "a whole number >= 1");
    require(in.dModel >= 1, "tensor_parallel.d_model", "a whole number >= 1");
    require(in.dFf >= 1, "tensor_parallel.d_ff", "a whole number >= 1");
    require(in.ranks >= 1 && in.ranks <= in.dFf, "tensor_parallel.ranks",
            "a whole number in 1..d_ff (1.." + std::to_string(in.dFf) + ")");
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
    (void)checkedMul(checkedMul(in.tokens, in.dModel, "tensor_parallel.tokens"), in.bytesPerValue,
                     "tensor_parallel.bytes_per_value");
}

Eigen::MatrixXd gelu(const Eigen::MatrixXd& x)
{
    // The chapter's tanh approximation of GELU.
    const double c = std::sqrt(2.0 / std::numbers::pi);
    return x.unaryExpr(
        [c](double v) { return 0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v))); });
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

Eigen::MatrixXd mlp(const MlpWeights& w)
{
    const Eigen::MatrixXd pre = (w.x * w.w1).rowwise() + w.b1;
    return (gelu(pre) * w.w2).rowwise() + w.b2;
}

std::vector<Eigen::MatrixXd> tensorParallelPartials(const MlpWeights& w, std::int64_t ranks)
{
    // Rank r holds columns [offset, offset+width) of W1 and b1 and the same rows of W2:
    // H_r = GELU(X W1_r + b1_r), O_r = H_r W2_r.
    std::vector<Eigen::MatrixXd> partials;
    partials.reserve(static_cast<std::size_t>(ranks));
    Eigen::Index offset = 0;
    for (const std::int64_t width : arraySplitSizes(w.w1.cols(), ranks)) {
        const auto cols = static_cast<Eigen::Index>(width);
        const Eigen::MatrixXd pre =
            (w.x * w.w1.middleCols(offset, cols)).rowwise() + w.b1.segment(offset, cols);
        partials.push_back(gelu(pre) * w.w2.middleRows(offset, cols));
        offset += cols;
    }
    return partials;
}

Eigen::MatrixXd tensorParallelMlp(const MlpWeights& w, std::int64_t ranks)
{
    // Summing the partial outputs is the all-reduce; b2 is added once, after it.
    Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(w.x.rows(), w.w2.cols());
    for (const Eigen::MatrixXd& partial : tensorParallelPartials(w, ranks))
        sum += partial;
    return sum.rowwise() + w.b2;
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
