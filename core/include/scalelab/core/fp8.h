#pragma once

#include "scalelab/core/error.h"

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace scalelab::core {

enum class Fp8Format {
    E4M3, ///< OCP E4M3FN: bias 7, no infinities, NaN = S.1111.111, largest finite 448
    E5M2, ///< OCP E5M2: bias 15, IEEE-like infinities and NaNs, largest finite 57344
};

/// What a finite value past the largest finite one becomes.
enum class Fp8Overflow {
    Saturate, ///< the largest finite value of the same sign (ScaleLab's default)
    NaN, ///< NaN (E4M3) or infinity (E5M2), as non-saturating casts do
};

using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Largest finite value of the format: 448 or 57344.
float fp8MaxValue(Fp8Format format);
/// Smallest positive (subnormal) value of the format: 2^-9 or 2^-16.
float fp8MinSubnormal(Fp8Format format);
/// Smallest positive normal value of the format: 2^-6 or 2^-14. Below it the step stays at
/// fp8MinSubnormal instead of shrinking with the value, so the relative error grows.
float fp8MinNormal(Fp8Format format);

/// Rounds a float32 to the nearest FP8 code, ties to even; overflow as chosen; zero keeps its
/// sign; NaN stays NaN.
///
/// Works on the float's bits with integer arithmetic, so the result does not depend on the
/// floating-point rounding mode. Rounding treats the format as if its exponent range went on:
/// a finite value overflows only when it rounds past the largest finite value (E4M3: from just
/// above 464, E5M2: from 61440, a tie that goes to the even 65536). Infinities stay infinities in
/// E5M2; in E4M3 they saturate to +-448 (Saturate) or become NaN (NaN mode). A NaN becomes a NaN
/// code of the same sign: E4M3 has one (0x7F / 0xFF); for E5M2 the top two bits of the float's
/// mantissa become the code's mantissa (10, the quiet NaN, when both are 0), the way float16
/// conversion keeps them, so every E5M2 NaN code survives fp8Encode(fp8Decode(code)).
std::uint8_t fp8Encode(float value, Fp8Format format, Fp8Overflow overflow = Fp8Overflow::Saturate);
/// The exact float32 value of an FP8 code. E4M3's NaN codes give the default quiet NaN with the
/// code's sign; an E5M2 NaN code with mantissa m gives the float NaN whose top mantissa bits are m
/// (for m = 01 that is a signalling-NaN bit pattern; arithmetic on it may quieten it to 11).
float fp8Decode(std::uint8_t code, Fp8Format format);
/// fp8Decode(fp8Encode(value)): the chapter's FP8 emulator, exact.
float fp8Quantize(float value, Fp8Format format, Fp8Overflow overflow = Fp8Overflow::Saturate);

/// How the limited accumulator rounds the exact sum of its value and the next product.
enum class AccumulatorRounding {
    Nearest, ///< to the nearest value with the kept bits, ties to even (IEEE's default)
    Truncate, ///< toward zero: the bits below the kept ones are dropped
    /// A model of Hopper's FP8 tensor cores (Khattak and Mikaitis 2025): every
    /// kAlignedBlockProducts products and the accumulator are aligned to the largest exponent
    /// among them, each cut toward zero to the kept bits below it, added exactly, and the sum
    /// cut toward zero to the kept bits.
    AlignedBlock,
};

/// Products an AlignedBlock accumulator adds in one step (an H100 FP8 wgmma's 32).
inline constexpr int kAlignedBlockProducts = 32;

/// Inputs of the accumulation experiment (scenario object `fp8.accumulation`). The format,
/// block size and overflow rule are the FP8 section's own.
struct Fp8AccumulationInputs {
    std::int64_t kMin = 256; ///< the smallest inner dimension K; then 2 kMin, 4 kMin, ... <= kMax
    std::int64_t kMax = 16384;
    /// Fraction (mantissa) bits the accumulator keeps after every addition; 23 is float32.
    std::int64_t accumulatorBits = 13;
    /// N_C: the limited accumulator is added into a float32 sum, and starts again from zero,
    /// after every this many products.
    std::int64_t promotionInterval = 128;
    AccumulatorRounding rounding = AccumulatorRounding::AlignedBlock;
    std::int64_t outputs =
        16; ///< the product is outputs x outputs: A is outputs x K, B is K x outputs
    std::int64_t seed = 1;
    bool operator==(const Fp8AccumulationInputs&) const = default;
};

/// Throws InputError naming `fp8.accumulation.<key>` (limits in fp8_training.h).
void validate(const Fp8AccumulationInputs& in);

/// Inputs of the scaling-policy experiment (scenario object `fp8.policy`).
struct Fp8PolicyInputs {
    std::int64_t steps = 64; ///< training steps simulated
    /// At spikeStep the first kPolicySpikeValues values of row 0 are this many times larger
    /// (1: no spike).
    double spike = 10000.0;
    std::int64_t spikeStep = 32;
    /// Every step the whole tensor grows by this fraction: step s is scaled by (1 + drift)^s.
    double drift = 0.0;
    /// Delayed scaling's window: the scale of step s comes from the largest amax of steps
    /// s - history ... s - 1.
    std::int64_t history = 16;
    std::int64_t rows = 16; ///< the tensor of every step is rows x cols
    std::int64_t cols = 256;
    std::int64_t seed = 1;
    bool operator==(const Fp8PolicyInputs&) const = default;
};

/// Throws InputError naming `fp8.policy.<key>` (limits in fp8_training.h).
void validate(const Fp8PolicyInputs& in);

/// Inputs of the block-scaling calculator (scenario section `fp8`).
struct Fp8Inputs {
    Fp8Format format = Fp8Format::E4M3;
    std::int64_t blockSize = 16; ///< columns per block (blocks are 1 x blockSize)
    std::optional<MatrixF> values; ///< explicit matrix; when absent one is generated
    std::int64_t rows = 64;
    std::int64_t cols = 256;
    /// How much the few outlier blocks of a generated matrix are scaled up.
    double outlierScale = 100.0;
    std::int64_t seed = 1;
    Fp8Overflow overflow = Fp8Overflow::Saturate;
    Fp8AccumulationInputs accumulation; ///< the accumulation experiment (fp8_training.h)
    Fp8PolicyInputs policy; ///< the scaling-policy experiment (fp8_training.h)
};

/// Whether a and b hold the same block-scaling inputs (all but accumulation and policy).
bool sameBlockInputs(const Fp8Inputs& a, const Fp8Inputs& b);

/// Largest rows * cols accepted: a 4096 x 4096 matrix, the largest the tab redraws live.
inline constexpr std::int64_t kMaxFp8Elements = 4096LL * 4096LL;
/// Most scales a matrix may have (rows * cols / block_size): the report prints every one, and
/// 2^20 of them is already 4096 x 4096 in blocks of 16.
inline constexpr std::int64_t kMaxFp8Scales = 1LL << 20;

/// In a generated matrix each block is an outlier with probability 1 / kFp8OutlierOdds.
inline constexpr std::int64_t kFp8OutlierOdds = 16;

/// The shape of the tiles that share one scale, and how the scale is stored.
///
/// Common shapes: per tensor {0, 0}; per row {1, 0}; the chapter's blocks {1, block_size};
/// DeepSeek-V3 uses {1, 128} for activations and {128, 128} for weights. A tile that does not fit
/// the matrix evenly is cut at the matrix's last row or column (a smaller edge tile with its own
/// scale), as tiled kernels do with ragged edges.
struct Fp8Scaling {
    std::int64_t blockRows = 1; ///< rows per tile; 0 = every row (whole column span)
    std::int64_t blockCols = 16; ///< columns per tile; 0 = every column
    /// E8M0 scales as in MXFP8: the scale is 2^ceil(log2(max|tile| / max_value)), found exactly
    /// from the float's bits, so it is the smallest power of two that keeps the tile within the
    /// format (tile / scale never passes max_value, so nothing saturates). Dividing and
    /// multiplying by it are exact (away from float32 subnormals). Clamped to 2^-149..2^127, the
    /// float32 powers of two; an all-zero tile gets 1.
    bool powerOfTwoScale = false;
};

/// Error of a quantize-dequantize round trip. Each term is computed in float64; the sums are
/// taken row-major over the values in a fixed order that does not depend on the tiles or on the
/// number of threads: chunks of 4096 values, inside a chunk 8 interleaved float64 lanes (value j
/// of the chunk in lane j mod 8), lanes added lane 0 first, then the chunks in order.
struct Fp8Stats {
    double maxAbsError = 0.0; ///< max |dequantized - values|, in float64
    double rmse = 0.0; ///< sqrt(mean (dequantized - values)^2), in float64
    /// 10 log10(sum values^2 / sum error^2), in dB; +inf when the error is 0 (which includes an
    /// all-zero matrix: zeros come back exactly).
    double snrDb = 0.0;
    std::int64_t underflowCount = 0; ///< non-zero values that became zero
    /// sqrt(sum error^2 / sum values^2): the error relative to the values' own size, in float64;
    /// 0 when the error is 0.
    double relativeError = 0.0;
};

struct Fp8Result {
    MatrixF values; ///< the input matrix (generated or explicit)
    MatrixF scales; ///< one float32 scale per tile, ceil(rows / tileRows) x ceil(cols / tileCols)
    MatrixF dequantized; ///< after quantize and dequantize
    Fp8Stats stats;
};

/// Throws InputError naming the field (`fp8.block_size`, `fp8.values[1]`, ...). Checks every
/// key, also `rows`, `cols`, `outlier_scale` and `seed` when explicit values make them unused.
/// With explicit values block_size must divide the columns of the values, else `cols`.
void validate(const Fp8Inputs& in);

/// Checks one explicit value as read from the scenario (a double) before it becomes a float32:
/// it must be finite with |v| <= FLT_MAX (3.4028234663852886e38). Throws InputError naming
/// `fp8.values[row][col]`.
void validateFp8Value(double value, std::int64_t row, std::int64_t col);

/// Turns the scenario's explicit rows (doubles) into the float32 matrix of Fp8Inputs::values.
/// Each value is checked by validateFp8Value and rounded to the nearest float32, ties to even
/// (an ordinary double-to-float conversion in the default rounding mode; tiny values may become
/// float32 subnormals or zero). Throws InputError naming `fp8.values` (no rows, or more than
/// kMaxFp8Elements values), `fp8.values[i]` (an empty first row, or a row whose length differs
/// from the first) or `fp8.values[i][j]`.
MatrixF fp8ValuesFromRows(const std::vector<std::vector<double>>& rows);

/// A generated matrix and where its outliers are.
struct Fp8Generated {
    MatrixF values;
    /// Row-major indices of the scaled-up 1 x blockSize blocks: block b covers row
    /// b / (cols / blockSize), columns (b mod (cols / blockSize)) * blockSize onwards. Ascending.
    std::vector<std::int64_t> outlierBlocks;
};

/// Seed offset of the generator's second stream, the one that picks the outlier blocks.
inline constexpr std::uint64_t kFp8OutlierStream = 0x6F75746C69657273ULL; // "outliers"

/// The standard-normal part of a generated matrix: rows x cols entries, row-major, each a
/// standard normal from Marsaglia and Tsang's ziggurat (256 layers) rounded to the nearest
/// float32. The entries come in chunks of 65536 (the last one shorter); chunk c draws from
/// Rng(k + c), where k = Rng(seed).next(), so chunks may be filled on any number of threads and
/// the matrix is the same. It depends on rows, cols and seed only (not on block_size or
/// outlier_scale), so a tab may cache it while those two change. Validates rows, cols and seed.
MatrixF fp8NormalMatrix(const Fp8Inputs& in);

/// The outlier blocks of a generated matrix: row-major indices of 1 x blockSize blocks,
/// ascending. They come from a second stream, Rng(seed XOR kFp8OutlierStream):
///  1. one draw per 1 x blockSize block, row-major: the block is an outlier when
///     below(kFp8OutlierOdds) is 0 (about 1 block in 16);
///  2. when that chose none, one more draw, below(block count), picks the only outlier.
/// They depend on rows, cols, block_size and seed only (not on outlier_scale). Validates the
/// generation keys.
std::vector<std::int64_t> fp8OutlierBlocks(const Fp8Inputs& in);

/// Scales the outlier blocks of `normals` (as fp8NormalMatrix gives it for `in`; the blocks are
/// fp8OutlierBlocks(in)) by outlierScale.
/// An outlier entry is float32(double(entry) * outlierScale), rounded once to the nearest, clamped
/// to +-FLT_MAX (normals beyond 10 are rarer than 1 in 10^22, so clamping needs an
/// outlierScale past about 3e37).
/// Validates the generation keys; throws InputError naming `fp8.rows` / `fp8.cols` when
/// `normals` has another shape. The matrix given as an rvalue is scaled in place; a const one is
/// copied (on all cores).
Fp8Generated fp8ApplyOutliers(MatrixF&& normals, const Fp8Inputs& in);
Fp8Generated fp8ApplyOutliers(const MatrixF& normals, const Fp8Inputs& in);

/// Block `block` (1 x blockSize, row-major index as in Fp8Generated::outlierBlocks) of the
/// matrix fp8ApplyOutliers makes from `normals` for `in`, without making the matrix: the
/// normals' entries, each scaled as an outlier entry is when `outlier`. Throws InputError naming
/// `fp8.shown_block` for a block outside the matrix, and as fp8ApplyOutliers for the shapes.
std::vector<float> fp8GeneratedBlock(const MatrixF& normals, const Fp8Inputs& in,
                                     std::int64_t block, bool outlier);

/// Per band of `bandRows` rows of a generated matrix (whole bands only, from the first row):
/// the largest |normal| outside the outlier blocks and the largest inside them. The largest
/// |value| of band k of the matrix is then the larger of normal[k] and that outlier normal
/// scaled as an outlier entry is, for any outlier_scale (rounding and clamping keep order).
struct Fp8BandMaxima {
    std::vector<float> normal, outlier; ///< 0 where a band has no such block
};

/// The band maxima of the matrix fp8ApplyOutliers makes from `normals` with the outlier list
/// `outlierBlocks` (ascending, 1 x blockSize blocks as in Fp8Generated), in one pass on every
/// core. Throws InputError naming `fp8.block_size` when blockSize does not divide the columns.
Fp8BandMaxima fp8BandMaxima(const MatrixF& normals, std::int64_t blockSize,
                            const std::vector<std::int64_t>& outlierBlocks, std::int64_t bandRows);

/// fp8ApplyOutliers(fp8NormalMatrix(in), in): the generated matrix of the inputs (explicit values
/// are ignored; block_size must divide cols).
Fp8Generated fp8Generate(const Fp8Inputs& in);

/// The generated (or explicit) matrix of the inputs. Validates first.
MatrixF fp8InputMatrix(const Fp8Inputs& in);

/// Scales each tile by max|tile| / max_value in float32 (1 where that is 0), quantizes,
/// dequantizes, and measures the error. Edge tiles may be smaller (see Fp8Scaling); 0 = whole
/// extent. Throws InputError for an empty matrix (`fp8.values`), a non-finite value
/// (`fp8.values[i][j]`) or a negative tile size (`fp8.block_rows`, `fp8.block_size`).
///
/// Arithmetic is the chapter's in float32: scale = max|tile| / max_value, quantize(x / scale) *
/// scale. Within a half FP8 step of FLT_MAX the dequantized value can round past float32's range
/// to infinity, as the same NumPy code would.
Fp8Result fp8BlockQuantize(const MatrixF& values, Fp8Format format, const Fp8Scaling& scaling,
                           Fp8Overflow overflow = Fp8Overflow::Saturate);

/// fp8BlockQuantize into the caller's matrices (identical figures): `scales` and `dequantized`
/// are resized only when their shape differs, and the input is not copied, so calls that reuse
/// the same matrices allocate nothing large.
Fp8Stats fp8BlockQuantizeInto(const MatrixF& values, Fp8Format format, const Fp8Scaling& scaling,
                              Fp8Overflow overflow, MatrixF& scales, MatrixF& dequantized);

/// The stats of fp8BlockQuantize (identical figures) without keeping the matrices: what a
/// per-tensor comparison needs.
Fp8Stats fp8BlockQuantizeStats(const MatrixF& values, Fp8Format format, const Fp8Scaling& scaling,
                               Fp8Overflow overflow = Fp8Overflow::Saturate);

/// The plain cast: every value rounded to FP8 as it is (scale 1), overflow as chosen. What
/// "FP8 without a scaling policy" gives; scales is one 1 x 1 entry of 1. Same checks as
/// fp8BlockQuantize.
Fp8Result fp8Cast(const MatrixF& values, Fp8Format format,
                  Fp8Overflow overflow = Fp8Overflow::Saturate);

/// One round trip of fp8QuantizeScalings, and what to keep of it besides the stats.
struct Fp8ScalingJob {
    Fp8Scaling scaling;
    bool plainCast = false; ///< fp8Cast instead (scaling is then not used)
    bool keepScales = false; ///< fill Fp8ScalingOutcome::scales
    bool keepDequantized = false; ///< fill Fp8ScalingOutcome::dequantized
};

/// What fp8QuantizeScalings found for one job.
struct Fp8ScalingOutcome {
    Fp8Stats all; ///< bit for bit fp8BlockQuantize's (or fp8Cast's) stats
    /// Bit for bit fp8StatsExcludingBlocks over the job's round trip (when a blockSize was given).
    Fp8Stats small;
    std::int64_t scaleCount = 0; ///< tiles, hence scales (1 for the plain cast)
    MatrixF scales; ///< as Fp8Result::scales, when kept; else empty
    MatrixF dequantized; ///< as Fp8Result::dequantized, when kept; else empty
};

/// Several round trips of one matrix at once: every job's figures are exactly those of the
/// one-at-a-time calls (the sums are added in the same fixed order, see Fp8Stats), but all jobs
/// share the cores chunk by chunk, the sum of the values' squares is taken once, and no matrix
/// is copied or kept unless asked. With blockSize >= 1 each job also measures the 1 x blockSize
/// blocks not in excludedBlocks (Fp8ScalingOutcome::small). Throws as those calls would, for the
/// first failing job.
std::vector<Fp8ScalingOutcome>
fp8QuantizeScalings(const MatrixF& values, Fp8Format format, Fp8Overflow overflow,
                    const std::vector<Fp8ScalingJob>& jobs, std::int64_t blockSize = 0,
                    const std::vector<std::int64_t>& excludedBlocks = {});

/// The grid a tile with this scale is rounded onto: every finite FP8 value times `scale` (one
/// float32 multiply each, as fp8BlockQuantize dequantizes) that lies in [lo, hi], plus the
/// nearest one below lo and the nearest one above hi when there are such. Ascending, each value
/// once (+0 and -0 are one 0); products that overflow float32 are left out. Throws InputError
/// naming `fp8.grid` unless scale is finite and > 0 and lo <= hi.
std::vector<float> fp8ScaledGrid(Fp8Format format, float scale, float lo, float hi);

/// The error of one 1 x blockSize block after a round trip.
struct Fp8BlockError {
    float maxAbs = 0.0f; ///< max |value| in the block (the chapter's scale is this / max_value)
    /// sqrt(sum (dequantized - value)^2 / sum value^2) over the block, in float64: the error
    /// relative to the block's own size. 0 for an all-zero block (zeros come back exactly).
    double relativeError = 0.0;
};

/// One entry per 1 x blockSize block of a round trip from `values` to `dequantized`, row-major
/// (block b covers row b / (cols / blockSize), as in Fp8Generated::outlierBlocks). Throws
/// InputError naming `fp8.values` when the shapes differ or are empty, `fp8.block_size` when
/// blockSize does not divide the columns, `fp8.values[i][j]` for a value that is not finite.
std::vector<Fp8BlockError> fp8BlockErrors(const MatrixF& values, const MatrixF& dequantized,
                                          std::int64_t blockSize);

/// fp8BlockErrors and fp8AbsErrorMap of one round trip, together.
struct Fp8ErrorPicture {
    std::vector<Fp8BlockError> blocks; ///< fp8BlockErrors(values, dequantized, blockSize)
    Eigen::MatrixXd map; ///< fp8AbsErrorMap(values, dequantized, maxRows, maxCols)
};

/// Both pictures of a round trip's error from one pass over the two matrices (each band of rows
/// is read once, while in cache, instead of once per function): the same figures bit for bit.
/// Throws InputError as those two would, in this order: the shapes (`fp8.values`),
/// `fp8.block_size`, `fp8.map`, then the first value that is not finite.
Fp8ErrorPicture fp8ErrorPicture(const MatrixF& values, const MatrixF& dequantized,
                                std::int64_t blockSize, std::int64_t maxRows, std::int64_t maxCols);

/// fp8ErrorPicture into `out`, whose block list and map keep their memory when their size fits.
void fp8ErrorPictureInto(const MatrixF& values, const MatrixF& dequantized, std::int64_t blockSize,
                         std::int64_t maxRows, std::int64_t maxCols, Fp8ErrorPicture& out);

/// fp8ErrorPictureInto for `dequantized` into `out` and, with both `other` and `otherOut`, for
/// another round trip of the same values into `otherOut`: one pass over the values for both
/// (their magnitudes and squares found once), the same figures bit for bit as two calls.
/// Throws as fp8ErrorPicture, the shapes of both round trips checked first; throws Stopped,
/// with the pictures half written, when `stop` asks for it (read once per band of rows).
void fp8ErrorPicturesInto(const MatrixF& values, const MatrixF& dequantized, const MatrixF* other,
                          std::int64_t blockSize, std::int64_t maxRows, std::int64_t maxCols,
                          Fp8ErrorPicture& out, Fp8ErrorPicture* otherOut, StopFlag stop = nullptr);

/// What a view that recomputes on every input change keeps between recomputes, so that a
/// change costs only what it changes: the standard normals by (rows, cols, seed), the outlier
/// blocks by (rows, cols, block_size, seed), the generated matrix by all five generation keys,
/// and the large matrices' memory (a generated matrix nobody holds any more, and the round trips'
/// dequantized matrices, are written again in place: fresh 64 MB matrices cost more to have the
/// system clear than to fill). Every figure is exactly that of the free functions.
/// The calls are serialised by a mutex; results are valid as documented per call.
class Fp8Workspace {
public:
    /// fp8Generate(in), shared: the same object again while the generation keys stay the same.
    /// An outlier_scale change reuses the normals and the outlier list; a block_size change the
    /// normals. Validates the generation keys (explicit values are ignored).
    std::shared_ptr<const Fp8Generated> generate(const Fp8Inputs& in);

    /// fp8NormalMatrix(in), shared and cached the same way.
    std::shared_ptr<const MatrixF> normals(const Fp8Inputs& in);

    /// fp8OutlierBlocks(in), cached the same way (the list generate uses); validates as
    /// generate does.
    std::vector<std::int64_t> outlierBlocks(const Fp8Inputs& in);

    /// fp8QuantizeScalings (identical figures), the outcomes kept here: the reference stays
    /// valid, and the matrices in it unchanged, until the next quantizeScalings or clear. Kept
    /// dequantized matrices of the same shape reuse their memory. Throws Stopped when `stop`
    /// asks for it (read between pieces of about 65,536 values): the outcomes are then half
    /// written, and valid again after the next call.
    const std::vector<Fp8ScalingOutcome>&
    quantizeScalings(const MatrixF& values, Fp8Format format, Fp8Overflow overflow,
                     const std::vector<Fp8ScalingJob>& jobs, std::int64_t blockSize = 0,
                     const std::vector<std::int64_t>& excludedBlocks = {}, StopFlag stop = nullptr);

    /// fp8ErrorPicture (identical figures) into the workspace's picture number `slot` (0 or 1),
    /// whose block list keeps its memory from call to call. The reference stays valid until the
    /// next errorPicture for the same slot or clear; the caller may take the map out of it.
    Fp8ErrorPicture& errorPicture(int slot, const MatrixF& values, const MatrixF& dequantized,
                                  std::int64_t blockSize, std::int64_t maxRows,
                                  std::int64_t maxCols);

    /// fp8OrderByMagnitude(blocks), the same order, cheaper where `blocks` are the per-block
    /// errors (any round trip's: maxAbs depends on the values only) of `values`, the matrix the
    /// last generate returned: the blocks outside its outlier list hold the normals, so their
    /// order is kept while the normals and the list stay, and an outlier_scale change sorts only
    /// the outliers again and merges them in; the same matrix again (a format change) gets the
    /// order found last. Any other matrix is sorted whole.
    std::shared_ptr<const std::vector<std::int64_t>>
    orderByMagnitude(const MatrixF& values, const std::vector<Fp8BlockError>& blocks);

    /// Both pictures of errorPicture at once, `first`'s into slot 0 and `second`'s into slot 1,
    /// through fp8ErrorPicturesInto (the same figures, the values read once). Read them with
    /// picture(slot); valid as errorPicture's. Stops as fp8ErrorPicturesInto does.
    void errorPictures(const MatrixF& values, const MatrixF& first, const MatrixF& second,
                       std::int64_t blockSize, std::int64_t maxRows, std::int64_t maxCols,
                       StopFlag stop = nullptr);

    /// The picture in slot 0 or 1, as the last errorPicture or errorPictures left it.
    Fp8ErrorPicture& picture(int slot) { return m_pictures[slot == 0 ? 0 : 1]; }

    /// Lets go of everything cached.
    void clear();

private:
    /// A generated matrix kept for reuse, and what it was generated from.
    struct Spare {
        std::shared_ptr<Fp8Generated> generated;
        std::uint64_t normalsId = 0; ///< m_normalsId of the normals it was copied from
        std::uint64_t outliersId = 0; ///< m_outliersId of its outlier list
    };
    /// Makes m_outliers the outlier list of `in` unless it is already (the lock held).
    void keepOutliersOf(const Fp8Inputs& in);
    /// A generated matrix of the inputs' shape that no caller holds (made when there is none).
    Spare& spareFor(const Fp8Inputs& in);
    /// orderByMagnitude for blocks of m_generated (the lock held): outliers merged into the
    /// kept order of the rest, or everything sorted (kept for next time) when the rest changed.
    std::vector<std::int64_t> orderOfCurrent(const std::vector<Fp8BlockError>& blocks);

    std::mutex m_mutex;
    Fp8Inputs m_normalsKey, m_outliersKey, m_generatedKey;
    std::shared_ptr<const MatrixF> m_normals;
    std::uint64_t m_normalsId = 0; ///< changes whenever m_normals is drawn again
    std::vector<std::int64_t> m_outliers;
    std::uint64_t m_outliersId = 0; ///< changes whenever m_outliers is drawn again
    std::shared_ptr<const Fp8Generated> m_generated;
    /// The normals and outlier list m_generated was made from (m_normalsId, m_outliersId then).
    std::uint64_t m_generatedNormalsId = 0, m_generatedOutliersId = 0;
    /// Counts the matrices generate has written (a spare written again counts anew).
    std::uint64_t m_generations = 0;
    /// The last order orderByMagnitude found for m_generated, and m_generations then.
    std::shared_ptr<const std::vector<std::int64_t>> m_order;
    std::uint64_t m_orderGeneration = 0;
    std::vector<Spare> m_pool; ///< generated matrices, to be reused
    std::vector<Fp8ScalingOutcome> m_outcomes;
    Fp8ErrorPicture m_pictures[2];
    /// The sort items (magnitudeItem) of the blocks outside the outlier list, in order, and the
    /// normals and list they were made for (as m_generatedNormalsId and m_generatedOutliersId;
    /// 0: none).
    std::vector<std::uint64_t> m_restItems;
    std::uint64_t m_restNormalsId = 0, m_restOutliersId = 0;
};

/// Block indices ordered by maxAbs, smallest first; equal magnitudes keep their index order.
std::vector<std::int64_t> fp8OrderByMagnitude(const std::vector<Fp8BlockError>& blocks);

/// Fp8Stats of a round trip over the 1 x blockSize blocks not listed in `excludedBlocks` (any
/// order, duplicates allowed; e.g. Fp8Generated::outlierBlocks): how the small blocks fare.
/// Sums run in the chunks and lanes of Fp8Stats (an excluded value adds +0), so with nothing
/// excluded they match fp8BlockQuantize's bit for bit. With every block excluded: all figures 0 and
/// snrDb +inf. Throws as fp8BlockErrors, and InputError naming `fp8.outlier_blocks` for an index
/// out of range.
Fp8Stats fp8StatsExcludingBlocks(const MatrixF& values, const MatrixF& dequantized,
                                 std::int64_t blockSize,
                                 const std::vector<std::int64_t>& excludedBlocks);

/// |dequantized - values| in float64, max-pooled to at most maxRows x maxCols cells: cell (i, j)
/// holds the largest error of rows i*pr .. i*pr+pr-1 and columns j*pc .. j*pc+pc-1, with
/// pr = ceil(rows / maxRows) and pc = ceil(cols / maxCols) (edge cells cover what is left), so
/// one bad value still shows. A NaN error counts as +infinity. Throws as fp8BlockErrors (without
/// the block check) and InputError naming `fp8.map` when maxRows or maxCols is < 1.
Eigen::MatrixXd fp8AbsErrorMap(const MatrixF& values, const MatrixF& dequantized,
                               std::int64_t maxRows, std::int64_t maxCols);

} // namespace scalelab::core
