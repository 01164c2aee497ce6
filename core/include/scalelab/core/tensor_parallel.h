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

/// Inputs of the tensor-parallel MLP (scenario section `tensor_parallel`).
struct TensorParallelInputs {
    std::int64_t tokens = 8;
    std::int64_t dModel = 16;
    std::int64_t dFf = 64;
    std::int64_t ranks = 4; ///< 1..d_ff; uneven splits allowed
    std::int64_t bytesPerValue = 2;
    std::int64_t seed = 1;
};

struct TensorParallelResult {
    Eigen::MatrixXd unsharded; ///< tokens x d_model
    Eigen::MatrixXd sharded; ///< sum of the partial outputs plus b2
    double maxAbsDifference = 0.0;
    std::vector<std::int64_t> shardWidths; ///< columns of W1 (rows of W2) per rank
    Ratio allReduceBytesPerRank; ///< ring all-reduce of the tokens x d_model partial outputs
};

/// Largest tokens x d_ff, d_model x d_ff and tokens x d_model accepted.
inline constexpr std::int64_t kMaxTensorParallelValues = 64'000'000;

/// Throws InputError naming the field (`tensor_parallel.ranks`, ...).
void validate(const TensorParallelInputs& in);

/// The chapter's tanh GELU, elementwise.
Eigen::MatrixXd gelu(const Eigen::MatrixXd& x);

/// Seeded random X, W1, b1, W2, b2 with weights scaled by 1/sqrt(fan-in).
MlpWeights makeMlpWeights(std::int64_t tokens, std::int64_t dModel, std::int64_t dFf,
                          std::uint64_t seed);

/// GELU(X W1 + b1) W2 + b2.
Eigen::MatrixXd mlp(const MlpWeights& w);

/// Rank r's partial output GELU(X W1_r + b1_r) W2_r, W1 split by columns and W2 by the matching
/// rows as numpy.array_split does.
std::vector<Eigen::MatrixXd> tensorParallelPartials(const MlpWeights& w, std::int64_t ranks);

/// The column-then-row sharded MLP: the sum of the partial outputs plus b2.
Eigen::MatrixXd tensorParallelMlp(const MlpWeights& w, std::int64_t ranks);

/// Builds the MLP from the inputs and compares both forms. Validates first.
TensorParallelResult computeTensorParallel(const TensorParallelInputs& in);

} // namespace scalelab::core
