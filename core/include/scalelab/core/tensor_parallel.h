#pragma once

#include "scalelab/core/error.h"

#include <Eigen/Core>
#include <cstdint>
#include <vector>

namespace scalelab::core {

/// The weights and input of one MLP GELU(X W1 + b1) W2 + b2, in float64.
struct MlpWeights {
    Eigen::MatrixXd x; ///< tokens x d_model
    Eigen::MatrixXd w1; ///< d_model x d_ff
    Eigen::RowVectorXd b1; ///< d_ff
    Eigen::MatrixXd w2; ///< d_ff x d_model
    Eigen::RowVectorXd b2; ///< d_model
};

/// The same MLP with every value rounded to the nearest float32: the single-precision path.
struct MlpWeightsF {
    Eigen::MatrixXf x; ///< tokens x d_model
    Eigen::MatrixXf w1; ///< d_model x d_ff
    Eigen::RowVectorXf b1; ///< d_ff
    Eigen::MatrixXf w2; ///< d_ff x d_model
    Eigen::RowVectorXf b2; ///< d_model
};

/// Inputs of the tensor-parallel MLP (scenario section `tensor_parallel`).
struct TensorParallelInputs {
    std::int64_t tokens = 8;
    std::int64_t dModel = 16;
    std::int64_t dFf = 64;
    std::int64_t ranks = 4; ///< 1..d_ff; uneven splits allowed
    std::int64_t bytesPerValue = 2;
    std::int64_t seed = 1;

    bool operator==(const TensorParallelInputs&) const = default;
};

struct TensorParallelResult {
    Eigen::MatrixXd unsharded; ///< tokens x d_model
    Eigen::MatrixXd sharded; ///< sum of the partial outputs plus b2
    double maxAbsDifference = 0.0;
    std::vector<std::int64_t> shardWidths; ///< columns of W1 (rows of W2) per rank
    Ratio allReduceBytesPerRank; ///< ring all-reduce of the tokens x d_model partial outputs
};

/// Largest tokens x d_ff, d_model x d_ff and tokens x d_model accepted (2^21: 16 MB a matrix in
/// float64), largest tokens x d_model x d_ff (the multiply-adds of one layer), and most ranks: the
/// sizes whose report and export finish within 30 s and 2 GB (docs/CLI.md, Limits).
inline constexpr std::int64_t kMaxTensorParallelValues = 2'097'152;
inline constexpr std::int64_t kMaxTensorParallelMultiplyAdds = 268'435'456; // 2^28
inline constexpr std::int64_t kMaxTensorParallelRanks = 1024;

/// Throws InputError naming the field (`tensor_parallel.ranks`, ...).
void validate(const TensorParallelInputs& in);

/// The chapter's tanh GELU, elementwise (the float32 overload computes in float32).
Eigen::MatrixXd gelu(const Eigen::MatrixXd& x);
Eigen::MatrixXf gelu(const Eigen::MatrixXf& x);
/// GELU of an Eigen expression, evaluated in its own scalar type (keeps `gelu(X * W1)` from
/// being ambiguous between the two overloads above).
template <typename Derived> auto gelu(const Eigen::MatrixBase<Derived>& x)
{
    using Scalar = typename Derived::Scalar;
    return gelu(Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>(x));
}

/// Seeded random X, W1, b1, W2, b2 with weights scaled by 1/sqrt(fan-in).
MlpWeights makeMlpWeights(std::int64_t tokens, std::int64_t dModel, std::int64_t dFf,
                          std::uint64_t seed);

/// Every value of `w` rounded to the nearest float32.
MlpWeightsF toFloat(const MlpWeights& w);

/// GELU(X W1 + b1) W2 + b2 (float32 overload: every operation in float32).
Eigen::MatrixXd mlp(const MlpWeights& w);
Eigen::MatrixXf mlp(const MlpWeightsF& w);

/// Rank r's partial output GELU(X W1_r + b1_r) W2_r, W1 split by columns and W2 by the matching
/// rows as numpy.array_split does.
std::vector<Eigen::MatrixXd> tensorParallelPartials(const MlpWeights& w, std::int64_t ranks);
std::vector<Eigen::MatrixXf> tensorParallelPartials(const MlpWeightsF& w, std::int64_t ranks);

/// The column-then-row sharded MLP: the sum of the partial outputs plus b2.
Eigen::MatrixXd tensorParallelMlp(const MlpWeights& w, std::int64_t ranks);
Eigen::MatrixXf tensorParallelMlp(const MlpWeightsF& w, std::int64_t ranks);

/// Two splits that do not rebuild the MLP, for showing why only the matching one works.
enum class WrongSplit {
    /// W1 by columns as it should be, but W2 by columns too: rank r holds only H_r, so it can
    /// use only the rows of its W2 column shard that meet its own hidden columns. Output column
    /// block r is H_r W2[rows r, columns r] + b2, the blocks concatenated (an all-gather); the
    /// other ranks' terms are missing.
    W2ByColumns,
    /// W1 by rows (and X by the matching columns): rank r holds a partial pre-activation
    /// P_r = X[:, rows r] W1[rows r, :], b1 added on rank 0 only, applies GELU to it before
    /// any reduction, then W2; the all-reduce sums sum_r GELU(P_r) W2 + b2. Right only if GELU
    /// were linear.
    W1ByRows,
};

/// What the wrong split would compute over `ranks` ranks (array_split shards; ranks beyond
/// the split dimension get empty shards). With one rank both equal the MLP.
Eigen::MatrixXd wrongSplitMlp(const MlpWeights& w, std::int64_t ranks, WrongSplit split);
Eigen::MatrixXf wrongSplitMlp(const MlpWeightsF& w, std::int64_t ranks, WrongSplit split);

/// max |a - b| over all entries, in float64 (0 for empty matrices); a and b of equal shape.
double maxAbsDifference(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b);
double maxAbsDifference(const Eigen::MatrixXf& a, const Eigen::MatrixXf& b);

/// What one rank of the column-then-row split holds, computes and sends in one forward pass.
struct TensorParallelRankCost {
    std::int64_t width = 0; ///< hidden columns of W1 (rows of W2) on this rank
    /// W1_r (d_model x width), b1_r (width), W2_r (width x d_model) and b2 (d_model, every
    /// rank keeps a copy): 2 d_model width + width + d_model values.
    std::int64_t parameters = 0;
    std::int64_t parameterBytes = 0; ///< parameters x bytes_per_value
    /// X W1_r and H_r W2_r: 2 tokens d_model width multiply-adds (GELU and biases not counted).
    std::int64_t multiplyAdds = 0;
    /// Activations kept for the backward pass, in bytes: the whole input X (tokens x d_model,
    /// every rank has it), the pre-activation X W1_r + b1_r and H_r (tokens x width each).
    std::int64_t activationBytes = 0;
    /// Bytes this rank sends in the ring all-reduce of its tokens x d_model partial output:
    /// 2(n-1)/n of tokens d_model bytes_per_value.
    Ratio allReduceBytes;
};

/// Rank `rank`'s cost (0-based; the first d_ff mod ranks ranks are one column wider).
/// Validates first; throws InputError naming `tensor_parallel.ranks` for a rank outside
/// 0..ranks-1.
TensorParallelRankCost tensorParallelRankCost(const TensorParallelInputs& in, std::int64_t rank);

/// Rank 0's cost (the widest shard) for every rank count 1..in.ranks, the other inputs kept:
/// element i is the cost with i + 1 ranks. Validates once.
std::vector<TensorParallelRankCost> widestRankCosts(const TensorParallelInputs& in);

/// Rank counts at which to sample 1..ranks when each sample is expensive: all of them when
/// there are at most `maxPoints` (at least 2), otherwise 1, `ranks` and whole numbers spread
/// evenly in log between them, ascending without repeats and at most `maxPoints` in all.
std::vector<std::int64_t> sampleRankCounts(std::int64_t ranks, std::int64_t maxPoints);

/// Builds the MLP from the inputs and compares both forms. Validates first.
TensorParallelResult computeTensorParallel(const TensorParallelInputs& in);

} // namespace scalelab::core
