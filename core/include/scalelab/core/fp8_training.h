#pragma once

// FP8 training is more than a cast: a scaling policy (when each scale is chosen) and an
// accumulation (how the products of a matrix multiply are added up). Both are simulated here,
// bit-exact to the rules written in docs/CLI.md.

#include "scalelab/core/fp8.h"

#include <array>
#include <cstdint>
#include <vector>

namespace scalelab::core {

/// Limits of the accumulation experiment (docs/CLI.md, Limits).
inline constexpr std::int64_t kMaxAccumulationK = 65536;
inline constexpr std::int64_t kMaxAccumulationOutputs = 64;
/// Most products simulated (outputs^2 x the sum of the K values): about a second on one core.
inline constexpr std::int64_t kMaxAccumulationProducts = 1LL << 26;

/// The three ways of adding the products, in the order of the result's arrays.
enum class AccumulationMode { Float32, Limited, Promoted };
inline constexpr int kAccumulationModes = 3;

/// One K of the experiment: the output's error against a float64 sum of the same products.
struct Fp8AccumulationPoint {
    std::int64_t k = 0;
    /// max |C - R| over the outputs, over max |R|, per AccumulationMode.
    std::array<double, kAccumulationModes> maxRelativeError{};
    /// sqrt(sum (C - R)^2 / sum R^2) over the outputs, per AccumulationMode.
    std::array<double, kAccumulationModes> rmsRelativeError{};
};

struct Fp8AccumulationResult {
    std::vector<Fp8AccumulationPoint> points; ///< one per K, K ascending
};

/// The K values of the sweep: kMin, 2 kMin, ... while <= kMax.
std::vector<std::int64_t> accumulationKValues(const Fp8AccumulationInputs& in);

/// Rounds the exact value hi + lo to `bits` fraction bits (1..52) in float32's exponent range:
/// the step is 2^(e - bits) for a value in [2^e, 2^(e+1)), never below 2^-149 (float32's
/// subnormal step). `lo` is the rounding error of hi (|lo| <= half an ulp of hi, as TwoSum gives
/// it), so the result is rounded once from the exact value. Nearest overflows to infinity past
/// float32's range, as float32 does; Truncate stops at the largest finite value. With bits = 23
/// and Nearest it is the float32 rounding of hi + lo.
double roundToAccumulator(double hi, double lo, int bits, AccumulatorRounding rounding);

/// The accumulation experiment. For each K: A (outputs x K) and B (K x outputs) hold standard
/// normals (as fp8NormalMatrix draws them, B from the stream seeded seed + 1, as its transpose),
/// quantized with `format` in 1 x blockSize tiles along K (the last tile cut at K) with
/// power-of-two (E8M0) scales, so that every product of two quantized values is exact in any
/// accumulator of at least 7 fraction bits, as the product of two FP8 codes is inside a tensor
/// core. Each output adds its K products in order:
///  - Float32: s = fmaf(a, b, s), one float32 rounding per product;
///  - Limited: s = round(s + a b) to accumulatorBits fraction bits (roundToAccumulator);
///  - Promoted: the limited accumulator, added into a float32 sum (one float32 addition) after
///    every promotionInterval products and after the last, and started again from zero.
/// The reference R is the float64 sum of the same products (compensated, so exact to float64).
Fp8AccumulationResult fp8Accumulation(const Fp8AccumulationInputs& in, Fp8Format format,
                                      std::int64_t blockSize, Fp8Overflow overflow);

/// How many values the spike scales up (row 0, columns 0 onwards; fewer when cols is smaller).
inline constexpr std::int64_t kPolicySpikeValues = 16;
/// Most values simulated (steps x rows x cols).
inline constexpr std::int64_t kMaxPolicyValues = 1LL << 24;

/// The three scaling policies, in the order of the result's arrays.
enum class ScalingPolicy { Delayed, PerTensor, Fine };
inline constexpr int kScalingPolicies = 3;

/// One step of one policy.
struct Fp8PolicyStep {
    std::int64_t saturated = 0; ///< values past the format's largest finite one (saturated or NaN)
    std::int64_t flushed = 0; ///< non-zero values that became zero
    /// sqrt(sum (dequantized - x)^2 / sum x^2) in float64; NaN when a value became NaN or
    /// infinity (overflow "nan").
    double relativeError = 0.0;
    float scale = 1.0f; ///< the scale used (for Fine: the largest tile scale)
};

struct Fp8PolicyResult {
    std::vector<float> amax; ///< max |x| of each step's tensor
    /// steps entries per policy (ScalingPolicy order).
    std::array<std::vector<Fp8PolicyStep>, kScalingPolicies> steps;
};

/// The scaling-policy experiment. Step s's tensor: standard normals (fp8NormalMatrix, seed
/// seed + s) times (1 + drift)^s, in float32, with the spike at spikeStep. Each policy divides
/// by a float32 scale, rounds to FP8 (fp8Quantize, with `overflow`) and multiplies back, as
/// fp8BlockQuantize does; only the scale differs:
///  - Delayed: max of the amax history (the previous `history` steps' max |x|) / max_value, as
///    Transformer Engine's delayed recipe; step 0, with no history, uses its own amax;
///  - PerTensor: this step's max |x| / max_value;
///  - Fine: each 1 x blockSize tile's own max / max_value (fp8BlockQuantize's scales).
/// A scale of 0 (an all-zero tensor or tile) is 1, as everywhere.
Fp8PolicyResult fp8Policy(const Fp8PolicyInputs& in, Fp8Format format, std::int64_t blockSize,
                          Fp8Overflow overflow);

} // namespace scalelab::core
