#include "scalelab/core/fp8_training.h"

#include "scalelab/core/error.h"
#include "threads.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace scalelab::core {

namespace {

constexpr int kFloatFractionBits = 23;
constexpr int kFloatMinExponent = -149; ///< the exponent of float32's smallest subnormal step
constexpr int kFloatMaxExponent = 127;
constexpr int kDoubleFractionBits = 52;
constexpr int kDoubleBias = 1023;
constexpr std::uint64_t kDoubleFractionMask = (std::uint64_t(1) << kDoubleFractionBits) - 1;

/// 2^k, exactly, for k in -1022..1023, from its bits (std::ldexp is a library call).
double powerOfTwo(int k)
{
    return std::bit_cast<double>(static_cast<std::uint64_t>(k + kDoubleBias)
                                 << kDoubleFractionBits);
}

/// The exact sum a + b as hi + lo (Knuth's TwoSum): hi is the rounded sum, lo its error.
struct TwoSum {
    double hi;
    double lo;
};

TwoSum twoSum(double a, double b)
{
    const double hi = a + b;
    const double bVirtual = hi - a;
    const double aVirtual = hi - bVirtual;
    return {hi, (a - aVirtual) + (b - bVirtual)};
}

/// The quantized operand: outputs x k values, float32, with power-of-two scales along k.
MatrixF quantizedOperand(std::int64_t outputs, std::int64_t k, std::int64_t seed, Fp8Format format,
                         std::int64_t blockSize, Fp8Overflow overflow)
{
    Fp8Inputs gen;
    gen.rows = outputs;
    gen.cols = k;
    gen.seed = seed;
    gen.blockSize = 1;
    const MatrixF normals = fp8NormalMatrix(gen);
    Fp8Scaling scaling;
    scaling.blockRows = 1;
    scaling.blockCols = std::min(blockSize, k);
    scaling.powerOfTwoScale = true;
    // Into the caller's matrices: fp8BlockQuantize would also copy the normals into its result.
    MatrixF scales, dequantized;
    fp8BlockQuantizeInto(normals, format, scaling, overflow, scales, dequantized);
    return dequantized;
}

/// x cut toward zero to a multiple of 2^stepExponent (exact: a scaling by a power of two and a
/// truncation).
double cutToStep(double x, int stepExponent)
{
    // |x| / 2^stepExponent < 2^(bits + 1): the conversion to an integer truncates exactly.
    const auto steps = static_cast<std::int64_t>(x * powerOfTwo(-stepExponent));
    return static_cast<double>(steps) * powerOfTwo(stepExponent);
}

/// std::ilogb(x) for x != 0, from the exponent field where x is a normal double (the library
/// call, which the AlignedBlock fold made once per block, only for a subnormal or non-finite x).
int exponentOf(double x)
{
    const auto field =
        static_cast<int>((std::bit_cast<std::uint64_t>(x) >> kDoubleFractionBits) & 0x7FF);
    return field != 0 && field != 0x7FF ? field - kDoubleBias : std::ilogb(x);
}

/// The AlignedBlock step: the accumulator and `count` products aligned to the largest exponent
/// among them, each cut to `bits` fraction bits of that exponent, added exactly (at most 33
/// terms of bits + 1 bits: well inside a double), the sum cut to `bits` fraction bits.
double foldAligned(double accumulator, const double* products, int count, int bits)
{
    double largest = std::abs(accumulator);
    for (int i = 0; i < count; ++i)
        largest = std::max(largest, std::abs(products[i]));
    if (largest == 0.0)
        return 0.0;
    const int step = std::max(exponentOf(largest) - bits, kFloatMinExponent);
    double sum = cutToStep(accumulator, step);
    for (int i = 0; i < count; ++i)
        sum += cutToStep(products[i], step);
    // roundToAccumulator(sum, 0, bits, Truncate), for an exact sum: cut toward zero to `bits`
    // fraction bits of its own exponent, then held to the largest the accumulator can hold.
    if (sum == 0.0)
        return sum;
    const double cut = cutToStep(sum, std::max(exponentOf(sum) - bits, kFloatMinExponent));
    const double most = (powerOfTwo(bits + 1) - 1.0) * powerOfTwo(kFloatMaxExponent - bits);
    return std::abs(cut) > most ? std::copysign(most, cut) : cut;
}

/// A limited accumulator of either kind: one rounding per product, or one aligned block of
/// products at a time.
class LimitedAccumulator {
public:
    LimitedAccumulator(int bits, AccumulatorRounding rounding)
        : m_bits(bits)
        , m_rounding(rounding)
    {
    }

    void add(double product)
    {
        if (m_rounding == AccumulatorRounding::AlignedBlock) {
            m_pending[m_count++] = product;
            if (m_count == kAlignedBlockProducts)
                flush();
            return;
        }
        const TwoSum s = twoSum(m_value, product);
        m_value = roundToAccumulator(s.hi, s.lo, m_bits, m_rounding);
    }

    /// The value, once every product added has been taken in.
    double value()
    {
        flush();
        return m_value;
    }

    void reset()
    {
        m_value = 0.0;
        m_count = 0;
    }

private:
    void flush()
    {
        if (m_count > 0)
            m_value = foldAligned(m_value, m_pending.data(), m_count, m_bits);
        m_count = 0;
    }

    int m_bits;
    AccumulatorRounding m_rounding;
    double m_value = 0.0;
    std::array<double, kAlignedBlockProducts> m_pending{};
    int m_count = 0;
};

/// One output of the experiment at every mode, and its float64 reference.
struct OutputSums {
    std::array<double, kAccumulationModes> value{};
    double reference = 0.0;
};

OutputSums accumulateOutput(const float* a, const float* b, std::int64_t k, int bits,
                            std::int64_t interval, AccumulatorRounding rounding)
{
    float plain = 0.0f;
    LimitedAccumulator limited(bits, rounding);
    LimitedAccumulator block(bits, rounding);
    float promoted = 0.0f;
    double refHi = 0.0;
    double refLo = 0.0;
    std::int64_t inBlock = 0;
    for (std::int64_t i = 0; i < k; ++i) {
        plain = std::fma(a[i], b[i], plain);
        // Exact: two float32 significands of at most 24 bits each fit in a double's 53.
        const double product = static_cast<double>(a[i]) * static_cast<double>(b[i]);
        limited.add(product);
        block.add(product);
        if (++inBlock == interval) {
            // One float32 addition; the block's value has at most 23 fraction bits and lies in
            // float32's range, so the conversion itself is exact.
            promoted += static_cast<float>(block.value());
            block.reset();
            inBlock = 0;
        }
        const TwoSum r = twoSum(refHi, product);
        refHi = r.hi;
        refLo += r.lo;
    }
    if (inBlock > 0)
        promoted += static_cast<float>(block.value());
    OutputSums out;
    out.value[static_cast<int>(AccumulationMode::Float32)] = plain;
    out.value[static_cast<int>(AccumulationMode::Limited)] = limited.value();
    out.value[static_cast<int>(AccumulationMode::Promoted)] = promoted;
    out.reference = refHi + refLo;
    return out;
}

// The AlignedBlock experiment four outputs at a time, one output per vector lane, for processors
// with AVX2 and FMA (found at run time). Every lane does the IEEE operations accumulateOutput
// does, in the same order, so each output's sums are the same bits: fmaf is one fused
// multiply-add, the float64 products are exact, truncating a scaled value toward zero is what
// the conversion to an integer and back does, and maximums of finite values are exact.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)                                \
    && !defined(SCALELAB_NO_AVX2_KERNELS)
#define SCALELAB_HAVE_AVX2_ACCUMULATION 1
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {

constexpr int kLanes = 4;

/// 2^e for four exponents in -1022..1023, from their bits.
__m256d powersOfTwo(__m256i e)
{
    return _mm256_castsi256_pd(
        _mm256_slli_epi64(_mm256_add_epi64(e, _mm256_set1_epi64x(kDoubleBias)), 52));
}

/// Each lane's exponent field minus the bias: its ilogb for a normal double.
__m256i exponentsOf(__m256d magnitude)
{
    return _mm256_sub_epi64(_mm256_srli_epi64(_mm256_castpd_si256(magnitude), kDoubleFractionBits),
                            _mm256_set1_epi64x(kDoubleBias));
}

/// The larger of each lane's e - bits and float32's smallest step.
__m256i stepsOf(__m256i e, int bits)
{
    const __m256i step = _mm256_sub_epi64(e, _mm256_set1_epi64x(bits));
    const __m256i floor = _mm256_set1_epi64x(kFloatMinExponent);
    return _mm256_blendv_epi8(step, floor, _mm256_cmpgt_epi64(floor, step));
}

/// Each lane cut toward zero to a multiple of 2^step (cutToStep).
__m256d cutToSteps(__m256d x, __m256d down, __m256d up)
{
    return _mm256_mul_pd(
        _mm256_round_pd(_mm256_mul_pd(x, down), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), up);
}

/// foldAligned on four lanes at once. A lane whose largest magnitude is not a normal double
/// (never, for products of E4M3 values with float32 scales) takes the scalar fold.
__m256d foldAligned4(__m256d acc, const __m256d* products, int count, int bits)
{
    const __m256d sign = _mm256_set1_pd(-0.0);
    __m256d largest = _mm256_andnot_pd(sign, acc);
    for (int i = 0; i < count; ++i)
        largest = _mm256_max_pd(largest, _mm256_andnot_pd(sign, products[i]));
    const __m256d zero = _mm256_setzero_pd();
    const __m256d smallestNormal = _mm256_set1_pd(std::numeric_limits<double>::min());
    const __m256d notNormal = _mm256_andnot_pd(
        _mm256_cmp_pd(largest, zero, _CMP_EQ_OQ),
        _mm256_or_pd(_mm256_cmp_pd(largest, smallestNormal, _CMP_LT_OQ),
                     _mm256_cmp_pd(largest, _mm256_set1_pd(std::numeric_limits<double>::max()),
                                   _CMP_GT_OQ)));
    if (_mm256_movemask_pd(notNormal) != 0) {
        alignas(32) double lanes[kLanes];
        alignas(32) double column[kLanes][kAlignedBlockProducts];
        _mm256_store_pd(lanes, acc);
        for (int i = 0; i < count; ++i) {
            alignas(32) double p[kLanes];
            _mm256_store_pd(p, products[i]);
            for (int l = 0; l < kLanes; ++l)
                column[l][i] = p[l];
        }
        for (int l = 0; l < kLanes; ++l)
            lanes[l] = foldAligned(lanes[l], column[l], count, bits);
        return _mm256_load_pd(lanes);
    }
    const __m256i step = stepsOf(exponentsOf(largest), bits);
    const __m256d down = powersOfTwo(_mm256_sub_epi64(_mm256_setzero_si256(), step));
    const __m256d up = powersOfTwo(step);
    __m256d sum = cutToSteps(acc, down, up);
    for (int i = 0; i < count; ++i)
        sum = _mm256_add_pd(sum, cutToSteps(products[i], down, up));
    // The exact sum cut to `bits` fraction bits of its own exponent (it is a nonzero multiple
    // of 2^-149, so a normal double, or zero), then held to the accumulator's largest value.
    const __m256i sumStep = stepsOf(exponentsOf(_mm256_andnot_pd(sign, sum)), bits);
    const __m256d cut = cutToSteps(
        sum, powersOfTwo(_mm256_sub_epi64(_mm256_setzero_si256(), sumStep)), powersOfTwo(sumStep));
    const __m256d most =
        _mm256_set1_pd((powerOfTwo(bits + 1) - 1.0) * powerOfTwo(kFloatMaxExponent - bits));
    const __m256d held =
        _mm256_blendv_pd(cut, _mm256_or_pd(most, _mm256_and_pd(sign, cut)),
                         _mm256_cmp_pd(_mm256_andnot_pd(sign, cut), most, _CMP_GT_OQ));
    const __m256d kept = _mm256_blendv_pd(held, sum, _mm256_cmp_pd(sum, zero, _CMP_EQ_OQ));
    return _mm256_blendv_pd(kept, zero, _mm256_cmp_pd(largest, zero, _CMP_EQ_OQ));
}

/// One AlignedBlock accumulator of four lanes, as LimitedAccumulator keeps one. (No member
/// initializers: GCC would make the constructor outside the AVX target.)
struct Aligned4 {
    __m256d value;
    __m256d pending[kAlignedBlockProducts];
    int count;

    void add(__m256d product, int bits)
    {
        pending[count++] = product;
        if (count == kAlignedBlockProducts) {
            value = foldAligned4(value, pending, count, bits);
            count = 0;
        }
    }
    __m256d take(int bits)
    {
        if (count > 0)
            value = foldAligned4(value, pending, count, bits);
        count = 0;
        return value;
    }
};

/// accumulateOutput for AlignedBlock, outputs j..j+3 of row i: `a` is A's row, `b` B's four
/// columns interleaved (k x 4: b[4 x + l] is column j + l's value x).
void accumulateFour(const float* a, const float* b, std::int64_t k, int bits, std::int64_t interval,
                    OutputSums* out)
{
    __m128 plain = _mm_setzero_ps();
    __m128 promoted = _mm_setzero_ps();
    Aligned4 limited;
    Aligned4 block;
    limited.value = block.value = _mm256_setzero_pd();
    limited.count = block.count = 0;
    __m256d refHi = _mm256_setzero_pd();
    __m256d refLo = _mm256_setzero_pd();
    std::int64_t inBlock = 0;
    for (std::int64_t x = 0; x < k; ++x) {
        const __m128 av = _mm_set1_ps(a[x]);
        const __m128 bv = _mm_loadu_ps(b + kLanes * x);
        plain = _mm_fmadd_ps(av, bv, plain);
        const __m256d product = _mm256_mul_pd(_mm256_cvtps_pd(av), _mm256_cvtps_pd(bv));
        limited.add(product, bits);
        block.add(product, bits);
        if (++inBlock == interval) {
            promoted = _mm_add_ps(promoted, _mm256_cvtpd_ps(block.take(bits)));
            block.value = _mm256_setzero_pd();
            inBlock = 0;
        }
        // TwoSum, as twoSum does it.
        const __m256d hi = _mm256_add_pd(refHi, product);
        const __m256d bVirtual = _mm256_sub_pd(hi, refHi);
        const __m256d aVirtual = _mm256_sub_pd(hi, bVirtual);
        const __m256d lo =
            _mm256_add_pd(_mm256_sub_pd(refHi, aVirtual), _mm256_sub_pd(product, bVirtual));
        refHi = hi;
        refLo = _mm256_add_pd(refLo, lo);
    }
    if (inBlock > 0)
        promoted = _mm_add_ps(promoted, _mm256_cvtpd_ps(block.take(bits)));
    alignas(32) float plainLanes[kLanes], promotedLanes[kLanes];
    alignas(32) double limitedLanes[kLanes], hiLanes[kLanes], loLanes[kLanes];
    _mm_store_ps(plainLanes, plain);
    _mm_store_ps(promotedLanes, promoted);
    _mm256_store_pd(limitedLanes, limited.take(bits));
    _mm256_store_pd(hiLanes, refHi);
    _mm256_store_pd(loLanes, refLo);
    for (int l = 0; l < kLanes; ++l) {
        out[l].value[static_cast<int>(AccumulationMode::Float32)] = plainLanes[l];
        out[l].value[static_cast<int>(AccumulationMode::Limited)] = limitedLanes[l];
        out[l].value[static_cast<int>(AccumulationMode::Promoted)] = promotedLanes[l];
        out[l].reference = hiLanes[l] + loLanes[l];
    }
}

} // namespace avx2
#pragma GCC pop_options
#endif

/// Whether accumulateFour can run here.
bool fourAtOnce([[maybe_unused]] AccumulatorRounding rounding)
{
#ifdef SCALELAB_HAVE_AVX2_ACCUMULATION
    static const bool supported = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }();
    return supported && rounding == AccumulatorRounding::AlignedBlock;
#else
    return false;
#endif
}

/// Every output of row i: four at a time where they can be, each on its own otherwise.
void accumulateRow(const Fp8AccumulationInputs& in, const MatrixF& a, const MatrixF& bt,
                   [[maybe_unused]] const std::vector<float>& interleaved, std::int64_t i,
                   OutputSums* row)
{
    const std::int64_t k = a.cols();
    const int bits = static_cast<int>(in.accumulatorBits);
    std::int64_t j = 0;
#ifdef SCALELAB_HAVE_AVX2_ACCUMULATION
    if (!interleaved.empty())
        for (; j + avx2::kLanes <= in.outputs; j += avx2::kLanes)
            avx2::accumulateFour(a.row(i).data(), interleaved.data() + j * k, k, bits,
                                 in.promotionInterval, row + j);
#endif
    for (; j < in.outputs; ++j)
        row[j] = accumulateOutput(a.row(i).data(), bt.row(j).data(), k, bits, in.promotionInterval,
                                  in.rounding);
}

/// B's columns in groups of four, each group's four values of every x side by side, for
/// accumulateFour (empty when it does not run).
std::vector<float> interleaveColumns(const MatrixF& bt, AccumulatorRounding rounding)
{
    constexpr std::int64_t lanes = 4;
    std::vector<float> out;
    if (!fourAtOnce(rounding) || bt.rows() < lanes)
        return out;
    const std::int64_t k = bt.cols();
    const std::int64_t groups = bt.rows() / lanes;
    out.resize(static_cast<std::size_t>(groups * lanes * k));
    for (std::int64_t g = 0; g < groups; ++g)
        for (std::int64_t x = 0; x < k; ++x)
            for (std::int64_t l = 0; l < lanes; ++l)
                out[static_cast<std::size_t>((g * k + x) * lanes + l)] = bt(g * lanes + l, x);
    return out;
}

Fp8AccumulationPoint accumulationPoint(const Fp8AccumulationInputs& in, std::int64_t k,
                                       Fp8Format format, std::int64_t blockSize,
                                       Fp8Overflow overflow)
{
    const MatrixF a = quantizedOperand(in.outputs, k, in.seed, format, blockSize, overflow);
    // B's columns, stored as rows (B transposed), so that both walk along K in memory.
    const MatrixF bt = quantizedOperand(in.outputs, k, in.seed + 1, format, blockSize, overflow);
    const std::vector<float> interleaved = interleaveColumns(bt, in.rounding);
    // Every output on its own; rows of outputs spread over the cores, then gathered in order,
    // so the figures do not depend on the number of threads.
    std::vector<OutputSums> sums(static_cast<std::size_t>(in.outputs * in.outputs));
    const auto threads = static_cast<std::int64_t>(std::min<unsigned>(
        std::max(1u, std::thread::hardware_concurrency()), static_cast<unsigned>(in.outputs)));
    detail::runOnThreads(static_cast<std::size_t>(threads), [&](std::size_t first) {
        for (auto i = static_cast<std::int64_t>(first); i < in.outputs; i += threads)
            accumulateRow(in, a, bt, interleaved, i, sums.data() + i * in.outputs);
    });
    std::array<double, kAccumulationModes> maxError{};
    std::array<double, kAccumulationModes> sumSquares{};
    double maxReference = 0.0;
    double referenceSquares = 0.0;
    for (const OutputSums& s : sums) {
        maxReference = std::max(maxReference, std::abs(s.reference));
        referenceSquares += s.reference * s.reference;
        for (int m = 0; m < kAccumulationModes; ++m) {
            const double e = s.value[m] - s.reference;
            maxError[m] = std::max(maxError[m], std::abs(e));
            sumSquares[m] += e * e;
        }
    }
    Fp8AccumulationPoint p;
    p.k = k;
    for (int m = 0; m < kAccumulationModes; ++m) {
        p.maxRelativeError[m] = maxReference > 0 ? maxError[m] / maxReference : 0.0;
        p.rmsRelativeError[m] =
            referenceSquares > 0 ? std::sqrt(sumSquares[m] / referenceSquares) : 0.0;
    }
    return p;
}

} // namespace

void validate(const Fp8AccumulationInputs& in)
{
    const std::string at = "fp8.accumulation.";
    require(in.kMin >= 1 && in.kMin <= kMaxAccumulationK, at + "k_min",
            "a whole number in 1.." + std::to_string(kMaxAccumulationK));
    require(in.kMax >= in.kMin && in.kMax <= kMaxAccumulationK, at + "k_max",
            "a whole number in k_min.." + std::to_string(kMaxAccumulationK));
    require(in.accumulatorBits >= 1 && in.accumulatorBits <= kFloatFractionBits,
            at + "accumulator_bits", "a whole number of fraction bits in 1..23 (23: float32)");
    require(in.promotionInterval >= 1 && in.promotionInterval <= kMaxAccumulationK,
            at + "promotion_interval",
            "a whole number of products in 1.." + std::to_string(kMaxAccumulationK));
    require(in.outputs >= 1 && in.outputs <= kMaxAccumulationOutputs, at + "outputs",
            "a whole number in 1.." + std::to_string(kMaxAccumulationOutputs));
    require(in.seed >= 0 && in.seed < (std::int64_t(1) << 53), at + "seed", "a whole number >= 0");
    std::int64_t sumK = 0;
    for (std::int64_t k : accumulationKValues(in))
        sumK += k;
    require(sumK <= kMaxAccumulationProducts / (in.outputs * in.outputs), at + "outputs",
            "at most " + std::to_string(kMaxAccumulationProducts)
                + " products in all (outputs^2 x the sum of the K values); fewer outputs or a "
                  "smaller k_max");
}

std::vector<std::int64_t> accumulationKValues(const Fp8AccumulationInputs& in)
{
    std::vector<std::int64_t> ks;
    if (in.kMin < 1)
        return ks;
    for (std::int64_t k = in.kMin; k <= in.kMax; k *= 2)
        ks.push_back(k);
    return ks;
}

double roundToAccumulator(double hi, double lo, int bits, AccumulatorRounding rounding)
{
    if (hi == 0.0 || !std::isfinite(hi))
        return hi + lo; // lo is 0 when hi is: a zero sum is exact
    const bool negative = hi < 0;
    const double mag = std::abs(hi);
    const double low = negative ? -lo : lo; // the error, for the magnitude
    const auto word = std::bit_cast<std::uint64_t>(mag);
    const auto field = static_cast<int>(word >> kDoubleFractionBits);
    int e = field != 0 ? field - kDoubleBias : std::ilogb(mag);
    // hi may have rounded up onto a power of two that the exact value stays below.
    if (low < 0 && field != 0 && (word & kDoubleFractionMask) == 0)
        --e;
    const int stepExponent = std::max(e - bits, kFloatMinExponent);
    // Exact: a power-of-two scaling, to below 2^(bits + 2): well inside an int64.
    const double scaled = mag * powerOfTwo(-stepExponent);
    const auto whole = static_cast<std::int64_t>(scaled); // floor: scaled > 0
    const double fraction = scaled - static_cast<double>(whole); // exact
    std::int64_t n = whole;
    if (rounding == AccumulatorRounding::Truncate) {
        // Below a whole step the exact value drops to the step under it.
        if (fraction == 0.0 && low < 0)
            n = whole - 1;
    } else if (fraction > 0.5 || (fraction == 0.5 && (low > 0 || (low == 0 && (whole & 1))))) {
        // |lo| is far below a step (bits <= 50), so only an exact half leaves it to lo.
        n = whole + 1;
    }
    double result = static_cast<double>(n) * powerOfTwo(stepExponent);
    const double largest = (powerOfTwo(bits + 1) - 1.0) * powerOfTwo(kFloatMaxExponent - bits);
    if (result > largest)
        result = rounding == AccumulatorRounding::Nearest ? std::numeric_limits<double>::infinity()
                                                          : largest;
    return negative ? -result : result;
}

Fp8AccumulationResult fp8Accumulation(const Fp8AccumulationInputs& in, Fp8Format format,
                                      std::int64_t blockSize, Fp8Overflow overflow)
{
    validate(in);
    require(blockSize >= 1, "fp8.block_size", "a whole number >= 1");
    Fp8AccumulationResult result;
    for (std::int64_t k : accumulationKValues(in))
        result.points.push_back(accumulationPoint(in, k, format, blockSize, overflow));
    return result;
}

void validate(const Fp8PolicyInputs& in)
{
    const std::string at = "fp8.policy.";
    require(in.steps >= 1 && in.steps <= 4096, at + "steps", "a whole number in 1..4096");
    require(std::isfinite(in.spike) && in.spike >= 1 && in.spike <= 1e12, at + "spike",
            "a factor in 1..1e12 (1: no spike)");
    require(in.spikeStep >= 0 && in.spikeStep <= 4095, at + "spike_step",
            "a step in 0..4095 (from steps on: no spike)");
    require(std::isfinite(in.drift) && in.drift >= -0.5 && in.drift <= 1, at + "drift",
            "a growth per step in -0.5..1 (0.02: 2 % larger every step)");
    require(in.history >= 1 && in.history <= 4096, at + "history",
            "a whole number of steps in 1..4096");
    require(in.rows >= 1 && in.rows <= 4096, at + "rows", "a whole number in 1..4096");
    require(in.cols >= 1 && in.cols <= 4096, at + "cols", "a whole number in 1..4096");
    require(in.rows * in.cols <= kMaxPolicyValues / in.steps, at + "steps",
            "at most " + std::to_string(kMaxPolicyValues) + " values in all (steps x rows x cols)");
    require(in.seed >= 0 && in.seed < (std::int64_t(1) << 53) - 4096, at + "seed",
            "a whole number >= 0");
}

namespace {

/// The tensor of step s, in float32.
MatrixF policyTensor(const Fp8PolicyInputs& in, std::int64_t step)
{
    Fp8Inputs gen;
    gen.rows = in.rows;
    gen.cols = in.cols;
    gen.seed = in.seed + step;
    gen.blockSize = 1;
    MatrixF x = fp8NormalMatrix(gen);
    // Capped so that a zero stays zero (0 x infinity would be NaN); anything this large is
    // past float32's range anyway and is clamped to it below.
    const double growth = std::min(std::pow(1.0 + in.drift, static_cast<double>(step)), 1e300);
    const double spike = step == in.spikeStep ? in.spike : 1.0;
    const float max = std::numeric_limits<float>::max();
    for (Eigen::Index i = 0; i < x.rows(); ++i)
        for (Eigen::Index j = 0; j < x.cols(); ++j) {
            const double f =
                (i == 0 && j < kPolicySpikeValues) ? std::min(growth * spike, 1e300) : growth;
            const double v = static_cast<double>(x(i, j)) * f;
            x(i, j) = static_cast<float>(
                std::clamp(v, -static_cast<double>(max), static_cast<double>(max)));
        }
    return x;
}

float amaxOf(const MatrixF& x)
{
    return x.size() ? x.cwiseAbs().maxCoeff() : 0.0f;
}

/// The step's figures for values x rounded with one float32 scale per 1 x tileCols tile
/// (scales(i, t) for row i, tile t).
Fp8PolicyStep measure(const MatrixF& x, const MatrixF& scales, std::int64_t tileCols,
                      Fp8Format format, Fp8Overflow overflow)
{
    Fp8PolicyStep out;
    double errorSquares = 0.0;
    double valueSquares = 0.0;
    bool broken = false;
    for (Eigen::Index i = 0; i < x.rows(); ++i)
        for (Eigen::Index j = 0; j < x.cols(); ++j) {
            const float v = x(i, j);
            const float scale = scales(i, j / tileCols);
            const float scaled = v / scale;
            const float q = fp8Quantize(scaled, format, overflow);
            const float back = q * scale;
            // Past the largest finite value: what a non-saturating cast turns into NaN or
            // infinity (a value just above max_value that rounds back to it is not).
            if (!std::isnan(scaled)
                && !std::isfinite(fp8Quantize(scaled, format, Fp8Overflow::NaN)))
                ++out.saturated;
            if (v != 0.0f && q == 0.0f)
                ++out.flushed;
            if (!std::isfinite(back))
                broken = true;
            const double e = static_cast<double>(back) - static_cast<double>(v);
            errorSquares += e * e;
            valueSquares += static_cast<double>(v) * static_cast<double>(v);
        }
    out.relativeError = broken ? std::numeric_limits<double>::quiet_NaN()
                               : (valueSquares > 0 ? std::sqrt(errorSquares / valueSquares) : 0.0);
    out.scale = scales.maxCoeff();
    return out;
}

float scaleFor(float amax, Fp8Format format)
{
    const float s = amax / fp8MaxValue(format);
    return s == 0.0f ? 1.0f : s;
}

} // namespace

Fp8PolicyResult fp8Policy(const Fp8PolicyInputs& in, Fp8Format format, std::int64_t blockSize,
                          Fp8Overflow overflow)
{
    validate(in);
    require(blockSize >= 1, "fp8.block_size", "a whole number >= 1");
    Fp8PolicyResult result;
    const std::int64_t tile = std::min(blockSize, in.cols);
    const std::int64_t tiles = (in.cols + tile - 1) / tile;
    for (std::int64_t s = 0; s < in.steps; ++s) {
        const MatrixF x = policyTensor(in, s);
        const float amax = amaxOf(x);
        float history = 0.0f;
        for (std::int64_t h = std::max<std::int64_t>(0, s - in.history); h < s; ++h)
            history = std::max(history, result.amax[static_cast<std::size_t>(h)]);
        result.amax.push_back(amax);
        const float delayedAmax = s == 0 ? amax : history;
        const MatrixF delayed = MatrixF::Constant(x.rows(), 1, scaleFor(delayedAmax, format));
        const MatrixF current = MatrixF::Constant(x.rows(), 1, scaleFor(amax, format));
        MatrixF fine(x.rows(), tiles);
        for (Eigen::Index i = 0; i < x.rows(); ++i)
            for (std::int64_t t = 0; t < tiles; ++t) {
                const std::int64_t width = std::min(tile, in.cols - t * tile);
                fine(i, t) = scaleFor(amaxOf(x.block(i, t * tile, 1, width)), format);
            }
        const auto at = [](ScalingPolicy p) {
            return static_cast<std::size_t>(p);
        };
        result.steps[at(ScalingPolicy::Delayed)].push_back(
            measure(x, delayed, in.cols, format, overflow));
        result.steps[at(ScalingPolicy::PerTensor)].push_back(
            measure(x, current, in.cols, format, overflow));
        result.steps[at(ScalingPolicy::Fine)].push_back(measure(x, fine, tile, format, overflow));
    }
    return result;
}

} // namespace scalelab::core
