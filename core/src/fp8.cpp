#include "scalelab/core/fp8.h"

#include "scalelab/core/error.h"
#include "scalelab/core/random.h"
#include "threads.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h> // the AVX kernels' widening
#endif
#if defined(__linux__)
#include <sys/mman.h> // madvise, for the large matrices' pages
#endif

namespace scalelab::core {

namespace {

constexpr std::uint32_t kSignBit = 0x80000000u;
constexpr std::uint32_t kAbsMask = 0x7FFFFFFFu;
constexpr std::uint32_t kFloatInf = 0x7F800000u;
constexpr std::uint32_t kFloatQuietNaN = 0x7FC00000u;
constexpr int kFloatMantBits = 23;
constexpr int kFloatBias = 127;

/// The constants that define one FP8 format; everything else is derived from them.
struct Spec {
    int mantBits; // M
    int bias; // B
    bool hasInfinity; // E5M2 keeps IEEE infinities, E4M3FN has none
    std::uint8_t maxFiniteCode; // magnitude code of the largest finite value
    std::uint8_t nanCode; // magnitude code produced for NaN (E5M2: the quiet one, 0x7E)

    constexpr int minNormalExp() const { return 1 - bias; }
    constexpr int minSubnormalExp() const { return minNormalExp() - mantBits; }
};

constexpr Spec kE4M3{3, 7, false, 0x7E, 0x7F};
constexpr Spec kE5M2{2, 15, true, 0x7B, 0x7E};

constexpr const Spec& specOf(Fp8Format format)
{
    return format == Fp8Format::E4M3 ? kE4M3 : kE5M2;
}

/// float32 bits of 2^k for a k in the normal float32 range.
constexpr std::uint32_t powerOfTwoBits(int k)
{
    return static_cast<std::uint32_t>(k + kFloatBias) << kFloatMantBits;
}

/// float32 bits of the magnitude of an FP8 code (sign handled by the caller).
constexpr std::uint32_t decodeMagnitude(unsigned mag, const Spec& s)
{
    const unsigned expField = mag >> s.mantBits;
    const unsigned mant = mag & ((1u << s.mantBits) - 1);
    const unsigned allOnes = (1u << (7 - s.mantBits)) - 1;
    if (s.hasInfinity && expField == allOnes) {
        // Infinity, or a NaN whose code mantissa sits in the float's top mantissa bits.
        return kFloatInf | (mant << (kFloatMantBits - s.mantBits));
    }
    if (!s.hasInfinity && mag == 0x7F)
        return kFloatQuietNaN;
    if (expField == 0) {
        if (mant == 0)
            return 0;
        // Subnormal FP8 values are normal in float32: value = mant * 2^minSubnormalExp.
        const int top = std::bit_width(mant) - 1;
        const std::uint32_t frac = (mant - (1u << top)) << (kFloatMantBits - top);
        return powerOfTwoBits(s.minSubnormalExp() + top) | frac;
    }
    const int exp = static_cast<int>(expField) - s.bias;
    return powerOfTwoBits(exp) | (mant << (kFloatMantBits - s.mantBits));
}

/// All 256 decodings of a format as float32 bits, built at compile time.
constexpr std::array<std::uint32_t, 256> makeDecodeTable(const Spec& s)
{
    std::array<std::uint32_t, 256> table{};
    for (unsigned code = 0; code < 256; ++code) {
        const std::uint32_t sign = (code & 0x80u) ? kSignBit : 0u;
        table[code] = sign | decodeMagnitude(code & 0x7Fu, s);
    }
    return table;
}

constexpr auto kDecodeE4M3 = makeDecodeTable(kE4M3);
constexpr auto kDecodeE5M2 = makeDecodeTable(kE5M2);

constexpr std::uint32_t kMaxFiniteBitsE4M3 = decodeMagnitude(kE4M3.maxFiniteCode, kE4M3);
constexpr std::uint32_t kMaxFiniteBitsE5M2 = decodeMagnitude(kE5M2.maxFiniteCode, kE5M2);
static_assert(kMaxFiniteBitsE4M3 == 0x43E00000u, "E4M3 largest finite must be 448");
static_assert(kMaxFiniteBitsE5M2 == 0x47600000u, "E5M2 largest finite must be 57344");
static_assert(kDecodeE4M3[0x01] == powerOfTwoBits(-9), "E4M3 smallest subnormal is 2^-9");
static_assert(kDecodeE5M2[0x01] == powerOfTwoBits(-16), "E5M2 smallest subnormal is 2^-16");

constexpr std::uint32_t maxFiniteBits(const Spec& s)
{
    return s.mantBits == kE4M3.mantBits ? kMaxFiniteBitsE4M3 : kMaxFiniteBitsE5M2;
}

/// Rounds the magnitude bits `a` of a finite float32 to the FP8 grid, nearest with ties to even,
/// as if the exponent range had no top: the result may lie past the largest finite value, and
/// the caller decides what overflow means. Returns float32 magnitude bits.
constexpr std::uint32_t roundMagnitude(std::uint32_t a, const Spec& s)
{
    const int exp = static_cast<int>(a >> kFloatMantBits) - kFloatBias; // float subnormals: -127
    const int q = s.minSubnormalExp();
    if (exp < q - 1)
        return 0; // below half the smallest subnormal (float32 subnormals land here too)
    if (exp == q - 1) {
        // In [2^(q-1), 2^q): exactly half is a tie that goes to the even zero.
        return a > powerOfTwoBits(q - 1) ? powerOfTwoBits(q) : 0;
    }
    // Keep mantBits fraction bits, fewer below the normal range where the step is fixed at 2^q.
    // The implicit bit is a multiple of the step, so rounding the raw bits is exact, and a carry
    // out of the mantissa lands in the exponent field: rounding up into the next binade.
    const int shift = kFloatMantBits - s.mantBits + std::max(0, s.minNormalExp() - exp);
    // The parity that breaks ties is the significand's (implicit bit included: at shift 23 the
    // raw bit there would be the exponent field's).
    const std::uint32_t significand = (a & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t lsb = (significand >> shift) & 1u;
    const std::uint32_t half = 1u << (shift - 1);
    return (a + half - 1u + lsb) & ~((1u << shift) - 1u);
}

/// FP8 magnitude code of rounded float32 magnitude bits that lie within the finite range.
constexpr std::uint8_t codeOfRounded(std::uint32_t r, const Spec& s)
{
    if (r == 0)
        return 0;
    const int exp = static_cast<int>(r >> kFloatMantBits) - kFloatBias;
    if (exp >= s.minNormalExp()) {
        const auto expField = static_cast<std::uint32_t>(exp + s.bias);
        const std::uint32_t mant = (r >> (kFloatMantBits - s.mantBits)) & ((1u << s.mantBits) - 1);
        return static_cast<std::uint8_t>((expField << s.mantBits) | mant);
    }
    // Subnormal: the value is k * 2^q; k is the significand shifted down to that step.
    const std::uint32_t significand = (r & 0x7FFFFFu) | 0x800000u;
    return static_cast<std::uint8_t>(significand >> (kFloatMantBits - (exp - s.minSubnormalExp())));
}

std::uint8_t encode(float value, const Spec& s, Fp8Overflow overflow)
{
    const auto bits = std::bit_cast<std::uint32_t>(value);
    const std::uint8_t sign = (bits & kSignBit) ? 0x80 : 0x00;
    const std::uint32_t a = bits & kAbsMask;
    const auto nanCode = static_cast<std::uint8_t>(sign | s.nanCode);
    const std::uint8_t overflowCode = (overflow == Fp8Overflow::Saturate)
        ? static_cast<std::uint8_t>(sign | s.maxFiniteCode)
        : (s.hasInfinity ? static_cast<std::uint8_t>(sign | (s.maxFiniteCode + 1)) : nanCode);

    if (a > kFloatInf) {
        if (!s.hasInfinity)
            return nanCode;
        // Keep the float's top mantissa bits as the NaN's payload; 00 would read as infinity.
        const std::uint32_t payload =
            (a >> (kFloatMantBits - s.mantBits)) & ((1u << s.mantBits) - 1);
        const std::uint32_t mant = payload != 0 ? payload : (1u << (s.mantBits - 1));
        return static_cast<std::uint8_t>(sign | (s.maxFiniteCode + 1) | mant);
    }
    if (a == kFloatInf) {
        if (s.hasInfinity)
            return static_cast<std::uint8_t>(sign | (s.maxFiniteCode + 1));
        return overflowCode;
    }
    const std::uint32_t r = roundMagnitude(a, s);
    if (r > maxFiniteBits(s))
        return overflowCode;
    return static_cast<std::uint8_t>(sign | codeOfRounded(r, s));
}

float decode(std::uint8_t code, const Spec& s)
{
    const auto& table = (s.mantBits == kE4M3.mantBits) ? kDecodeE4M3 : kDecodeE5M2;
    return std::bit_cast<float>(table[code]);
}

/// fp8Quantize for one format: finite values within range never need the code.
template <Fp8Format F> inline float quantizeFast(float value, Fp8Overflow overflow)
{
    constexpr const Spec& s = specOf(F);
    const auto bits = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t a = bits & kAbsMask;
    if (a < kFloatInf) {
        const std::uint32_t r = roundMagnitude(a, s);
        if (r <= maxFiniteBits(s))
            return std::bit_cast<float>((bits & kSignBit) | r);
    }
    return decode(encode(value, s, overflow), s);
}

/// Marsaglia and Tsang's ziggurat for the standard normal, 256 layers of equal area. Layer 0 is
/// the base strip [0, r] x [0, f(r)] plus the tail beyond r; layer i >= 1 is the rectangle
/// [0, x[i]] x [f(x[i]), f(x[i+1])], with f(x) = exp(-x^2 / 2) and x[256] = 0. A point drawn
/// uniformly in a layer that lies left of the layer above is accepted at once (about 99 % of
/// draws); the rest are settled by one exp() against the curve, or by the tail's two logs.
class Ziggurat {
public:
    Ziggurat()
    {
        // r and the layer area v for 256 layers (Marsaglia & Tsang, 2000).
        constexpr double r = 3.6541528853610088;
        constexpr double v = 4.92867323399e-3;
        m_x[0] = v / f(r); // the base strip's width if it were a rectangle of area v
        m_x[1] = r;
        for (int i = 1; i < 255; ++i)
            m_x[i + 1] = std::sqrt(-2.0 * std::log(v / m_x[i] + f(m_x[i])));
        m_x[256] = 0.0;
        for (int i = 0; i < 256; ++i) {
            m_f[i] = f(m_x[i]);
            m_width[i] = m_x[i] * 0x1.0p-53;
            // u * x[i] < x[i+1] is u < x[i+1] / x[i], compared on the 53-bit integer u.
            m_inner[i] = static_cast<std::uint64_t>(m_x[i + 1] / m_x[i] * 0x1.0p53);
        }
        m_f[256] = 1.0;
    }

    /// One standard-normal value; the fast path uses one 64-bit draw: bits 0-7 pick the layer,
    /// bit 8 the sign, the top 53 bits the position across the layer. Inline, so that a caller
    /// can interleave independent streams; the rare rest is out of line.
    double operator()(Rng& rng) const
    {
        const std::uint64_t bits = rng.next();
        const auto i = static_cast<int>(bits & 0xFF);
        const std::uint64_t u = bits >> 11;
        if (u < m_inner[i]) [[likely]] {
            // u < 2^53: converted through int64_t, exactly, in one instruction. The sign bit is
            // set without a branch (it is a coin toss, which no predictor guesses).
            const double x = static_cast<double>(static_cast<std::int64_t>(u)) * m_width[i];
            return std::bit_cast<double>(std::bit_cast<std::uint64_t>(x) ^ ((bits & 0x100) << 55));
        }
        // The generator's state goes through memory only here, so that the fast path keeps it
        // in registers.
        Rng state = rng;
        const double x = rest(state, bits);
        rng = state;
        return x;
    }

private:
    /// The draws the fast path did not settle, starting with `bits`, and any further ones.
    [[gnu::noinline]] double rest(Rng& rng, std::uint64_t bits) const
    {
        for (bool first = true;; first = false) {
            if (!first)
                bits = rng.next();
            const auto i = static_cast<int>(bits & 0xFF);
            const bool negative = (bits & 0x100) != 0;
            const std::uint64_t u = bits >> 11;
            const double x = static_cast<double>(u) * m_width[i];
            if (u < m_inner[i])
                return negative ? -x : x;
            if (i == 0) {
                // The tail beyond r (Marsaglia, 1964): r + a with a exponential, accepted when
                // a second exponential b passes a^2 / 2.
                constexpr double r = 3.6541528853610088;
                double a = 0.0, b = 0.0;
                do {
                    a = -std::log(1.0 - rng.uniform()) / r;
                    b = -std::log(1.0 - rng.uniform());
                } while (b + b < a * a);
                return negative ? -(r + a) : r + a;
            }
            // Between x[i+1] and x[i]: under the curve with probability (f(x) - f(x[i])) /
            // (f(x[i+1]) - f(x[i])).
            const double y = m_f[i] + rng.uniform() * (m_f[i + 1] - m_f[i]);
            if (y < f(x))
                return negative ? -x : x;
        }
    }

    static double f(double x) { return std::exp(-0.5 * x * x); }

    double m_x[257]{};
    double m_f[257]{};
    double m_width[256]{};
    std::uint64_t m_inner[256]{};
};

/// Asks the system to back a matrix just allocated, and not yet written, with large pages
/// where it can (Linux's transparent huge pages): a 64 MB matrix then costs a few dozen page
/// faults when first written instead of 16384. Only a hint; nothing changes where it is ignored.
void adviseLargePages([[maybe_unused]] MatrixF& m)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::uintptr_t kLarge = std::uintptr_t{1} << 21; // 2 MB
    const auto begin = reinterpret_cast<std::uintptr_t>(m.data());
    const std::uintptr_t end = begin + static_cast<std::uintptr_t>(m.size()) * sizeof(float);
    const std::uintptr_t first = (begin + kLarge - 1) & ~(kLarge - 1);
    const std::uintptr_t last = end & ~(kLarge - 1);
    if (last > first)
        madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
}

/// Values per stream of the normal generator: each chunk of a matrix draws from its own Rng, so
/// chunks can be filled on several threads and the matrix does not depend on how many there are.
constexpr std::int64_t kNormalChunk = 1 << 16;

/// Threads worth starting for `work` values: one per core, none for small matrices.
int threadsFor(std::int64_t work)
{
    constexpr std::int64_t kMinPerThread = 1 << 18;
    const auto cores = static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
    return static_cast<int>(
        std::clamp<std::int64_t>(work / kMinPerThread, 1, std::min<std::int64_t>(cores, 8)));
}

/// Runs task(i) for i in [0, count) on `threads` threads (the calling one included), each
/// taking the next index not yet taken: a thread that a busy machine slows down does less, and
/// nobody waits for it at the end. Every task writes only its own results, so which thread ran
/// it changes nothing. Exceptions must not escape task.
template <typename Task> void runSpread(std::int64_t count, int threads, const Task& task)
{
    threads = static_cast<int>(std::min<std::int64_t>(threads, count));
    if (threads <= 1) {
        for (std::int64_t i = 0; i < count; ++i)
            task(i);
        return;
    }
    std::atomic<std::int64_t> next{0};
    const auto work = [&task, &next, count] {
        for (std::int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < count;
             i = next.fetch_add(1, std::memory_order_relaxed))
            task(i);
    };
    detail::runOnThreads(static_cast<std::size_t>(threads), [&work](std::size_t) { work(); });
}

std::string valueField(std::int64_t row, std::int64_t col)
{
    return "fp8.values[" + std::to_string(row) + "][" + std::to_string(col) + "]";
}

const std::string kRowsExpected = "a whole number >= 1";
const std::string kSizeExpected =
    "at most " + std::to_string(kMaxFp8Elements) + " values in all (rows x cols)";

/// rows x cols / blockSize scales at most kMaxFp8Scales (blockSize divides cols).
void requireFewEnoughScales(std::int64_t rows, std::int64_t cols, std::int64_t blockSize)
{
    require(rows <= kMaxFp8Scales / (cols / blockSize), "fp8.block_size",
            "large enough that the matrix has at most " + std::to_string(kMaxFp8Scales)
                + " scales (rows x cols / block_size)");
}

/// Checks the keys the generator uses; `cols` is the width block_size must divide.
void validateGeneratorKeys(const Fp8Inputs& in, bool checkBlockAgainstCols)
{
    require(in.rows >= 1, "fp8.rows", kRowsExpected);
    require(in.cols >= 1, "fp8.cols", kRowsExpected);
    // Division, not multiplication, so huge inputs cannot overflow the check itself.
    require(in.rows <= kMaxFp8Elements / in.cols, "fp8.rows", kSizeExpected);
    require(std::isfinite(in.outlierScale) && in.outlierScale > 0.0, "fp8.outlier_scale",
            "a finite number > 0");
    require(in.seed >= 0, "fp8.seed", "a whole number >= 0");
    if (checkBlockAgainstCols) {
        require(in.blockSize >= 1 && in.cols % in.blockSize == 0, "fp8.block_size",
                "a whole number >= 1 that divides the columns (" + std::to_string(in.cols) + ")");
        requireFewEnoughScales(in.rows, in.cols, in.blockSize);
    }
}

/// float32 bits of the MXFP8-style scale 2^ceil(log2(m / maxValue)) for finite m > 0, computed
/// from the exponent and mantissa of m (maxValue is 1.75 * 2^E in both formats).
std::uint32_t powerOfTwoScaleBits(std::uint32_t m, const Spec& s)
{
    int exp = 0;
    std::uint32_t frac = 0;
    if (m < 0x800000u) {
        // A float32 subnormal: normalise it by hand.
        const int top = std::bit_width(m) - 1;
        exp = top - 149;
        frac = (m << (kFloatMantBits - top)) & 0x7FFFFFu;
    } else {
        exp = static_cast<int>(m >> kFloatMantBits) - kFloatBias;
        frac = m & 0x7FFFFFu;
    }
    const std::uint32_t maxBits = maxFiniteBits(s);
    const int maxExp = static_cast<int>(maxBits >> kFloatMantBits) - kFloatBias;
    const std::uint32_t maxFrac = maxBits & 0x7FFFFFu;
    // m / maxValue = (1.f / 1.75) * 2^(exp - maxExp), and 1.f / 1.75 lies in (0.5, 8/7): the
    // ceiling of its log2 is 1 exactly when the significand of m passes 1.75.
    int k = exp - maxExp + (frac > maxFrac ? 1 : 0);
    k = std::clamp(k, -149, 127);
    if (k >= -126)
        return powerOfTwoBits(k);
    return 1u << (k + 149); // a float32 subnormal power of two
}

struct TileShape {
    std::int64_t rows;
    std::int64_t cols;
    std::int64_t tileRows;
    std::int64_t tileCols;
    std::int64_t gridRows;
    std::int64_t gridCols;
};

TileShape tileShapeOf(const MatrixF& values, const Fp8Scaling& scaling)
{
    require(values.rows() >= 1 && values.cols() >= 1, "fp8.values",
            "a matrix with at least one value");
    require(scaling.blockRows >= 0, "fp8.block_rows", "a whole number >= 0 (0 = every row)");
    require(scaling.blockCols >= 0, "fp8.block_size", "a whole number >= 0 (0 = every column)");
    TileShape t{};
    t.rows = values.rows();
    t.cols = values.cols();
    t.tileRows = (scaling.blockRows == 0) ? t.rows : std::min(scaling.blockRows, t.rows);
    t.tileCols = (scaling.blockCols == 0) ? t.cols : std::min(scaling.blockCols, t.cols);
    t.gridRows = (t.rows + t.tileRows - 1) / t.tileRows;
    t.gridCols = (t.cols + t.tileCols - 1) / t.tileCols;
    return t;
}

/// How a tile's scale is chosen.
enum class ScaleRule {
    MaxOverFormat, ///< the chapter: max|tile| / max_value
    PowerOfTwo, ///< MXFP8's E8M0: the smallest power of two at or above that
    Unit, ///< no scaling at all: the plain cast
};

/// Error sums of a round trip, or of one chunk of it.
struct ErrorSums {
    double signal = 0.0;
    double error = 0.0;
    double maxAbs = 0.0;
    std::int64_t underflow = 0;

    /// A later chunk's sums, added after this one's.
    void append(const ErrorSums& later)
    {
        signal += later.signal;
        error += later.error;
        maxAbs = std::max(maxAbs, later.maxAbs);
        underflow += later.underflow;
    }

    Fp8Stats stats(std::int64_t count) const
    {
        Fp8Stats out;
        out.maxAbsError = maxAbs;
        // No values at all (every block excluded) has no error.
        out.rmse = count == 0 ? 0.0 : std::sqrt(error / static_cast<double>(count));
        out.relativeError = (error == 0.0) ? 0.0 : std::sqrt(error / signal);
        // No error at all (an all-zero matrix included) is an infinite signal-to-noise ratio.
        out.snrDb = (error == 0.0) ? std::numeric_limits<double>::infinity()
                                   : 10.0 * std::log10(signal / error);
        out.underflowCount = underflow;
        return out;
    }
};

// How a round trip adds up its error terms (docs/CLI.md describes it for readers): the values are
// cut, row-major, into chunks of kSumChunk; inside a chunk the value at offset j goes to lane
// j mod kSumLanes, each lane a float64 sum in index order; the lanes are added lane 0 first, and
// the chunks in chunk order. Each term is the same float64 number as ever; only the order of the
// additions is fixed this way, so that the compiler can keep the lanes in vector registers and
// the chunks can be shared among threads without the figures depending on how many there are.
constexpr std::int64_t kSumChunk = 4096;
constexpr int kSumLanes = 8;
/// Chunks a thread of a round trip takes at once (256 KB of values): each thread then reads
/// long runs of memory that the processor's prefetcher follows, instead of every other 16 KB.
constexpr std::int64_t kBatchChunks = 16;

/// Which values of a chunk count for a round trip's `small` sums (ChunkWork::keep, groupKeep).
enum class SmallMask { None, PerValue, PerGroup };

/// One chunk of one round trip for the kernels below. Without `scale` or `groupScale` the
/// dequantized values are read from `out` instead of computed.
struct ChunkWork {
    const float* values = nullptr;
    const float* scale = nullptr; ///< the scale of every value, or null
    /// The scale of every group of kSumLanes values (each group within one tile), or null.
    const float* groupScale = nullptr;
    /// With groupScale: each group's 1 / scale where every one of them is exact (powers of two
    /// from 2^-126 up), so that a multiplication gives the quotient; else null.
    const float* groupReciprocal = nullptr;
    float* out = nullptr; ///< where the dequantized values go (or come from); may be null
    std::int64_t n = 0; ///< values, at most kSumChunk
    std::int32_t overflowBits = 0; ///< overflowBitsOf(format, overflow)
    /// Per value all ones (-1) when it counts for `small`, else 0; null: no `small`.
    const std::int32_t* keep = nullptr;
    /// Instead of `keep` where every group of kSumLanes values lies within one block: per group
    /// 1 when its values count for `small`, else 0. A group left out then skips the small sums,
    /// which is what adding its +0 terms would do to them, bit for bit (the sums of squares are
    /// never -0), at the cost of a branch instead of a choice per value.
    const std::uint8_t* groupKeep = nullptr;
    ErrorSums* all = nullptr;
    ErrorSums* small = nullptr;
    /// Where the sum of the values' squares goes (and, with `keep`, of the kept ones'), or null.
    double* signal = nullptr;
    double* signalKept = nullptr;
    /// The values of the chunk that this thread takes next, to be brought into cache while this
    /// one runs (a hint only: the results never depend on it), or null; and how many there are.
    const float* prefetch = nullptr;
    std::int64_t prefetchCount = 0;
};

namespace baseline {
#define SCALELAB_KERNELS_AVX2 0
#define SCALELAB_KERNELS_AVX512 0
#include "fp8_kernels.inc"
#undef SCALELAB_KERNELS_AVX2
#undef SCALELAB_KERNELS_AVX512
} // namespace baseline

// The kernels again for AVX2 and for AVX-512 (the same 256-bit vectors, with 32 registers
// instead of 16 and mask registers for the choices, so that the masked sums spill nothing),
// chosen once at run time by what the processor has. SCALELAB_NO_AVX2_KERNELS builds the
// baseline kernels only (to test them on an AVX2 machine).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)                                \
    && !defined(SCALELAB_NO_AVX2_KERNELS)
#define SCALELAB_HAVE_AVX2_KERNELS 1
#pragma GCC push_options
#pragma GCC target("avx2")
namespace avx2 {
#define SCALELAB_KERNELS_AVX2 1
#define SCALELAB_KERNELS_AVX512 0
#include "fp8_kernels.inc"
#undef SCALELAB_KERNELS_AVX2
#undef SCALELAB_KERNELS_AVX512
} // namespace avx2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq")
// GCC 12 takes the undefined pass-through vector inside its own 512-bit intrinsics for an
// uninitialised variable of ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace avx512 {
#define SCALELAB_KERNELS_AVX2 1
#define SCALELAB_KERNELS_AVX512 1
#include "fp8_kernels.inc"
#undef SCALELAB_KERNELS_AVX2
#undef SCALELAB_KERNELS_AVX512
} // namespace avx512
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

/// The kernels' instruction set, found once.
enum class Isa { Baseline, Avx2, Avx512 };

[[maybe_unused]] Isa kernelIsa()
{
#ifdef SCALELAB_HAVE_AVX2_KERNELS
    static const Isa isa = [] {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
            && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
            return Isa::Avx512;
        return __builtin_cpu_supports("avx2") ? Isa::Avx2 : Isa::Baseline;
    }();
    return isa;
#else
    return Isa::Baseline;
#endif
}

// Each entry point calls the copy of kernelIsa().
#ifdef SCALELAB_HAVE_AVX2_KERNELS
#define SCALELAB_KERNEL_CALL(call)                                                                 \
    switch (kernelIsa()) {                                                                         \
    case Isa::Avx512:                                                                              \
        return avx512::call;                                                                       \
    case Isa::Avx2:                                                                                \
        return avx2::call;                                                                         \
    case Isa::Baseline:                                                                            \
        break;                                                                                     \
    }                                                                                              \
    return baseline::call
#else
#define SCALELAB_KERNEL_CALL(call) return baseline::call
#endif

template <Fp8Format F> void roundTripChunk(const ChunkWork& w)
{
    SCALELAB_KERNEL_CALL(roundTrip<F>(w));
}

void blockSumsOfEight(const float* v, const float* d, std::int64_t bs, std::int32_t* maxAbs,
                      double* signal, double* error)
{
    SCALELAB_KERNEL_CALL(blockSums8(v, d, bs, maxAbs, signal, error));
}

void blockSumsOfEightPair(const float* v, const float* d, const float* e, std::int64_t bs,
                          std::int32_t* maxAbs, double* signal, double* errorD, double* errorE)
{
    SCALELAB_KERNEL_CALL(blockSums8Pair(v, d, e, bs, maxAbs, signal, errorD, errorE));
}

void absErrorMaxRow(const float* v, const float* d, std::int64_t n, std::int64_t* top)
{
    SCALELAB_KERNEL_CALL(absErrorMax(v, d, n, top));
}

void tileScalesOf(const float* row, std::int64_t cols, std::int64_t tileCols, std::int64_t t0,
                  std::int64_t t1, float maxValue, std::uint32_t* maxOut, float* scaleOut)
{
    SCALELAB_KERNEL_CALL(scales(row, cols, tileCols, t0, t1, maxValue, maxOut, scaleOut));
}

/// float32 magnitude bits of what a finite value past the largest finite one becomes.
std::int32_t overflowBitsOf(const Spec& s, Fp8Overflow overflow)
{
    if (overflow == Fp8Overflow::Saturate)
        return static_cast<std::int32_t>(maxFiniteBits(s));
    // NaN mode: E4M3's NaN code decodes to the quiet NaN, E5M2's overflow code to infinity.
    return static_cast<std::int32_t>(s.hasInfinity ? kFloatInf : kFloatQuietNaN);
}

/// The scale of a tile whose largest magnitude has float32 bits maxBits (finite).
float scaleOf(std::uint32_t maxBits, ScaleRule rule, const Spec& s)
{
    if (maxBits == 0 || rule == ScaleRule::Unit)
        return 1.0f;
    if (rule == ScaleRule::PowerOfTwo)
        return std::bit_cast<float>(powerOfTwoScaleBits(maxBits, s));
    // The chapter: scale = max|block| / max_value in float32, 1 where that is 0.
    const float scale = std::bit_cast<float>(maxBits) / std::bit_cast<float>(maxFiniteBits(s));
    return scale == 0.0f ? 1.0f : scale;
}

/// Largest magnitude bits of n floats; any at or past infinity's mean a non-finite value.
std::uint32_t maxMagnitudeBits(const float* p, std::int64_t n)
{
    // Magnitudes fit in 31 bits, so a signed maximum orders them as well.
    std::int32_t m = 0;
    for (std::int64_t i = 0; i < n; ++i)
        m = std::max(m, std::bit_cast<std::int32_t>(p[i]) & static_cast<std::int32_t>(kAbsMask));
    return static_cast<std::uint32_t>(m);
}

/// Checks that a round trip's two matrices match and are not empty.
void requireSameShape(const MatrixF& values, const MatrixF& dequantized)
{
    require(values.rows() >= 1 && values.cols() >= 1, "fp8.values",
            "a matrix with at least one value");
    require(dequantized.rows() == values.rows() && dequantized.cols() == values.cols(),
            "fp8.values", "the same shape as the dequantized matrix");
}

/// Number of 1 x blockSize blocks, after checking that blockSize divides the columns.
std::int64_t blockCountOf(const MatrixF& values, std::int64_t blockSize)
{
    require(blockSize >= 1 && values.cols() % blockSize == 0, "fp8.block_size",
            "a whole number >= 1 that divides the columns (" + std::to_string(values.cols()) + ")");
    return values.size() / blockSize;
}

/// One round trip of a matrix: its tiles and their scales, where the dequantized values go (if
/// anywhere), and its sums per chunk.
struct RoundTrip {
    TileShape t{};
    ScaleRule rule = ScaleRule::MaxOverFormat;
    /// gridRows x gridCols, row-major: the caller's matrix when it keeps them (no copy of a
    /// million scales afterwards), else ownScales (placeScales).
    float* scales = nullptr;
    std::vector<float> ownScales;
    float* dequantized = nullptr; ///< rows x cols, or null when only the stats are wanted
    std::vector<ErrorSums> all; ///< per chunk, every value
    std::vector<ErrorSums> small; ///< per chunk, the values of blocks not excluded
};

/// Points job.scales at `keep`, shaped to the job's grid (its memory reused when the shape is
/// already right), or at the job's own buffer when `keep` is null.
void placeScales(RoundTrip& job, MatrixF* keep)
{
    const TileShape& t = job.t;
    if (keep) {
        if (keep->rows() != t.gridRows || keep->cols() != t.gridCols)
            keep->resize(t.gridRows, t.gridCols);
        job.scales = keep->data();
        return;
    }
    job.ownScales.resize(static_cast<std::size_t>(t.gridRows * t.gridCols));
    job.scales = job.ownScales.data();
}

/// Whether a round trip's scales are found chunk by chunk during the round trip itself (tiles of
/// one row, several of them): the values are then read once, while in cache.
bool scalesInLoop(const TileShape& t)
{
    return t.tileRows == 1 && t.gridRows * t.gridCols > 1;
}

/// Throws InputError naming the first non-finite value, looking tile by tile (row-major over the
/// tiles) and row-major inside the tile, as the quantizer always has.
void requireFiniteTiles(const MatrixF& values, const TileShape& t)
{
    for (std::int64_t gi = 0; gi < t.gridRows; ++gi)
        for (std::int64_t gj = 0; gj < t.gridCols; ++gj)
            for (std::int64_t r = gi * t.tileRows; r < std::min(t.rows, (gi + 1) * t.tileRows); ++r)
                for (std::int64_t c = gj * t.tileCols; c < std::min(t.cols, (gj + 1) * t.tileCols);
                     ++c)
                    require(std::isfinite(values(r, c)), valueField(r, c), "a finite number");
}

/// Finds every tile's scale before the round trip (for tiles of several rows, or one tile for
/// the whole matrix, whose largest magnitude is globalMax). Returns false when a tile holds a
/// value that is not finite; its scale is then meaningless.
bool findScales(const MatrixF& values, RoundTrip& job, const Spec& s, std::uint32_t globalMax)
{
    const TileShape& t = job.t;
    if (!job.scales)
        placeScales(job, nullptr);
    std::fill_n(job.scales, t.gridRows * t.gridCols, 1.0f);
    if (scalesInLoop(t))
        return true;
    if (t.gridRows * t.gridCols == 1) {
        job.scales[0] = globalMax < kFloatInf ? scaleOf(globalMax, job.rule, s) : 1.0f;
        return globalMax < kFloatInf;
    }
    // Tile rows are independent: one per task, each finishing its row of scales.
    std::vector<std::uint8_t> finite(static_cast<std::size_t>(t.gridRows), 1);
    runSpread(t.gridRows, threadsFor(values.size()), [&](std::int64_t gi) {
        std::vector<std::uint32_t> grid(static_cast<std::size_t>(t.gridCols), 0);
        for (std::int64_t r = gi * t.tileRows; r < std::min(t.rows, (gi + 1) * t.tileRows); ++r) {
            const float* row = values.data() + r * t.cols;
            for (std::int64_t gj = 0; gj < t.gridCols; ++gj) {
                const std::int64_t c0 = gj * t.tileCols;
                const std::int64_t c1 = std::min(t.cols, c0 + t.tileCols);
                auto& m = grid[static_cast<std::size_t>(gj)];
                m = std::max(m, maxMagnitudeBits(row + c0, c1 - c0));
            }
        }
        for (std::int64_t gj = 0; gj < t.gridCols; ++gj) {
            const std::uint32_t m = grid[static_cast<std::size_t>(gj)];
            if (m >= kFloatInf)
                finite[static_cast<std::size_t>(gi)] = 0;
            else
                job.scales[static_cast<std::size_t>(gi * t.gridCols + gj)] =
                    scaleOf(m, job.rule, s);
        }
    });
    return std::all_of(finite.begin(), finite.end(), [](std::uint8_t f) { return f != 0; });
}

/// Largest magnitude bits of the whole matrix, found by all cores.
std::uint32_t globalMaxBits(const MatrixF& values)
{
    const std::int64_t n = values.size();
    const std::int64_t chunks = (n + kNormalChunk - 1) / kNormalChunk;
    std::vector<std::uint32_t> part(static_cast<std::size_t>(chunks), 0);
    runSpread(chunks, threadsFor(n), [&](std::int64_t c) {
        const std::int64_t k0 = c * kNormalChunk;
        part[static_cast<std::size_t>(c)] =
            maxMagnitudeBits(values.data() + k0, std::min(n, k0 + kNormalChunk) - k0);
    });
    return part.empty() ? 0 : *std::max_element(part.begin(), part.end());
}

/// The scale of each value of the chunk [k0, k1) of a round trip, spread into `scale`, so that
/// the kernel is one long loop however small the tiles are. When the scales are found in the
/// loop (scalesInLoop), each tile touching the chunk is measured whole here, and the chunk that
/// holds a tile's first value records its scale. Returns false for a tile with a value that is
/// not finite.
bool spreadScales(const MatrixF& values, RoundTrip& job, const Spec& s, std::int64_t k0,
                  std::int64_t k1, float* scale)
{
    const TileShape& t = job.t;
    const bool inLoop = scalesInLoop(t);
    bool finite = true;
    std::int64_t r = k0 / t.cols;
    std::int64_t c = k0 % t.cols;
    for (std::int64_t k = k0; k < k1;) {
        // A piece: the rest of this tile in this row, or of the chunk.
        const std::int64_t gj = c / t.tileCols;
        const std::int64_t tileEnd = std::min(t.cols, (gj + 1) * t.tileCols);
        const std::int64_t piece = std::min(tileEnd - c, k1 - k);
        const auto g = static_cast<std::size_t>((r / t.tileRows) * t.gridCols + gj);
        float sc = 1.0f;
        if (inLoop) {
            const std::int64_t tileStart = gj * t.tileCols;
            const std::uint32_t m =
                maxMagnitudeBits(values.data() + r * t.cols + tileStart, tileEnd - tileStart);
            finite = finite && m < kFloatInf;
            sc = m < kFloatInf ? scaleOf(m, job.rule, s) : 1.0f;
            if (c == tileStart)
                job.scales[g] = sc;
        } else {
            sc = job.scales[g];
        }
        std::fill_n(scale + (k - k0), piece, sc);
        k += piece;
        c += piece;
        if (c == t.cols) {
            c = 0;
            ++r;
        }
    }
    return finite;
}

/// Whether every group of kSumLanes values lies within one tile of the shape (groups start at
/// multiples of kSumLanes, row-major), so that a chunk needs one scale per group only.
bool groupsInTiles(const TileShape& t)
{
    return t.cols % kSumLanes == 0 && t.tileCols % kSumLanes == 0;
}

/// Whole tiles only (the usual case): each of `count` tiles' scale recorded at `scales` and
/// spread over its `per` groups of `out` (`groups` in all, the last tile perhaps cut at the row's
/// end after `whole` whole ones) without the general case's bookkeeping. Returns whether every
/// tile's maximum is finite.
bool spreadWholeTiles(const std::uint32_t* maxima, const float* tileScale, std::int64_t count,
                      std::int64_t whole, std::int64_t per, std::int64_t groups, float* out,
                      float* scales)
{
    std::uint32_t top = 0;
    for (std::int64_t i = 0; i < count; ++i)
        top = std::max(top, maxima[i]);
    std::copy_n(tileScale, count, scales);
    if (per == 2) {
        // The chapter's 1 x 16 blocks: two groups per tile.
        for (std::int64_t i = 0; i < whole; ++i) {
            out[2 * i] = tileScale[i];
            out[2 * i + 1] = tileScale[i];
        }
    } else {
        for (std::int64_t i = 0; i < whole; ++i)
            std::fill_n(out + i * per, per, tileScale[i]);
    }
    std::fill(out + whole * per, out + groups, tileScale[count - 1]);
    return top < kFloatInf;
}

/// Fills the kernel's groupScale for the chunk [k0, k1) (groupsInTiles holds): the scale of each
/// group of kSumLanes values. Row tiles are measured here, whole, as spreadScales does; the chunk
/// that holds a tile's first value records its scale. Returns false for a tile with a value that
/// is not finite.
bool groupScales(const MatrixF& values, RoundTrip& job, const Spec& s, std::int64_t k0,
                 std::int64_t k1, float* groupScale, float* groupReciprocal, bool& exact)
{
    // Reciprocals are worth finding where every scale is a power of two.
    exact = job.rule != ScaleRule::MaxOverFormat;
    const TileShape& t = job.t;
    const bool inLoop = scalesInLoop(t);
    bool finite = true;
    // A row's piece of a chunk touches at most kSumChunk / tileCols + 2 tiles, tileCols >= 8.
    // Written before they are read (no zero-filling them on every call).
    std::array<std::uint32_t, kSumChunk / kSumLanes + 2> maxima;
    std::array<float, kSumChunk / kSumLanes + 2> tileScale;
    // The chapter's scales are found with the maxima, eight tiles at a time.
    const bool chapter = job.rule == ScaleRule::MaxOverFormat;
    const float maxValue = chapter ? std::bit_cast<float>(maxFiniteBits(s)) : 0.0f;
    for (std::int64_t k = k0; k < k1;) {
        const std::int64_t r = k / t.cols;
        const std::int64_t c0 = k - r * t.cols;
        const std::int64_t c1 = std::min(t.cols, c0 + (k1 - k));
        const std::int64_t g0 = c0 / t.tileCols;
        const std::int64_t g1 = (c1 + t.tileCols - 1) / t.tileCols;
        const std::int64_t rowBase = (r / t.tileRows) * t.gridCols;
        if (inLoop)
            tileScalesOf(values.data() + r * t.cols, t.cols, t.tileCols, g0, g1, maxValue,
                         maxima.data(), tileScale.data());
        float* out = groupScale + (k - k0) / kSumLanes;
        if (inLoop && chapter && c0 == g0 * t.tileCols && c1 == std::min(t.cols, g1 * t.tileCols)) {
            const std::int64_t count = g1 - g0;
            const std::int64_t whole = g1 * t.tileCols <= t.cols ? count : count - 1;
            finite = spreadWholeTiles(maxima.data(), tileScale.data(), count, whole,
                                      t.tileCols / kSumLanes, (c1 - c0) / kSumLanes, out,
                                      job.scales + rowBase + g0)
                && finite;
            k += c1 - c0;
            continue;
        }
        for (std::int64_t g = g0; g < g1; ++g) {
            const std::int64_t from = std::max(c0, g * t.tileCols);
            const std::int64_t to = std::min(c1, (g + 1) * t.tileCols);
            float sc = 1.0f;
            if (inLoop) {
                const std::uint32_t m = maxima[static_cast<std::size_t>(g - g0)];
                finite = finite && m < kFloatInf;
                if (chapter)
                    sc = tileScale[static_cast<std::size_t>(g - g0)];
                else
                    sc = m < kFloatInf ? scaleOf(m, job.rule, s) : 1.0f;
                if (from == g * t.tileCols)
                    job.scales[static_cast<std::size_t>(rowBase + g)] = sc;
            } else {
                sc = job.scales[static_cast<std::size_t>(rowBase + g)];
            }
            std::fill(out + (from - c0) / kSumLanes, out + (to - c0) / kSumLanes, sc);
            if (exact) {
                // 2^k for k >= -126 has the exact reciprocal 2^-k (at most 2^126).
                const auto bits = std::bit_cast<std::uint32_t>(sc);
                exact = bits >= powerOfTwoBits(-126) && (bits & 0x7FFFFFu) == 0;
                const float inverse = exact ? std::bit_cast<float>(powerOfTwoBits(
                                          -(static_cast<int>(bits >> kFloatMantBits) - kFloatBias)))
                                            : 1.0f;
                float* inv = groupReciprocal + (k - k0) / kSumLanes;
                std::fill(inv + (from - c0) / kSumLanes, inv + (to - c0) / kSumLanes, inverse);
            }
        }
        k += c1 - c0;
    }
    return finite;
}

/// The small-block mask of the chunk [k0, k1) from `skip` (one flag per block of blockSize
/// values): with `perGroup` (blocks are whole groups of kSumLanes) one flag per group in
/// groupKeep, 1 where its block counts; else all ones per value in keep where it counts, 0 where
/// it does not.
void fillChunkMask(const std::vector<std::uint8_t>& skip, std::int64_t blockSize, std::int64_t k0,
                   std::int64_t k1, bool perGroup, std::int32_t* keep, std::uint8_t* groupKeep)
{
    if (perGroup) {
        for (std::int64_t g = 0; g < (k1 - k0) / kSumLanes; ++g)
            groupKeep[g] = skip[static_cast<std::size_t>((k0 + g * kSumLanes) / blockSize)] == 0;
        return;
    }
    for (std::int64_t k = k0; k < k1;) {
        const std::int64_t b = k / blockSize;
        const std::int64_t e = std::min(k1, (b + 1) * blockSize);
        std::fill(keep + (k - k0), keep + (e - k0),
                  skip[static_cast<std::size_t>(b)] == 0 ? -1 : 0);
        k = e;
    }
}

/// Runs round trips of one matrix, all chunks on all cores: scales first, then per chunk every
/// job. `skip` (one flag per 1 x blockSize block, or empty) asks for the small-block sums too.
/// Fills each job's sums over every value and over the small blocks; returns false when a value
/// that is not finite was met (the sums are then meaningless).
template <Fp8Format F>
bool runRoundTrips(const MatrixF& values, std::vector<RoundTrip>& jobs, Fp8Overflow overflow,
                   const std::vector<std::uint8_t>& skip, std::int64_t blockSize,
                   std::vector<ErrorSums>& signal, StopFlag stop)
{
    std::atomic<bool> nonFinite{false};
    constexpr const Spec& s = specOf(F);
    const std::int32_t overflowBits = overflowBitsOf(s, overflow);
    const std::int64_t n = values.size();
    const std::int64_t chunks = (n + kSumChunk - 1) / kSumChunk;
    const bool masked = !skip.empty();
    signal.assign(static_cast<std::size_t>(chunks) * (masked ? 2 : 1), ErrorSums{});
    for (RoundTrip& job : jobs) {
        job.all.assign(static_cast<std::size_t>(chunks), ErrorSums{});
        job.small.assign(masked ? static_cast<std::size_t>(chunks) : 0, ErrorSums{});
    }
    const auto work = n * static_cast<std::int64_t>(std::max<std::size_t>(1, jobs.size()));
    const auto oneChunk = [&](std::int64_t c, bool last) {
        const std::int64_t k0 = c * kSumChunk;
        const std::int64_t k1 = std::min(n, k0 + kSumChunk);
        const auto ci = static_cast<std::size_t>(c);
        std::array<float, kSumChunk> scale;
        std::array<float, kSumChunk / kSumLanes> groupScale;
        std::array<float, kSumChunk / kSumLanes> groupReciprocal;
        std::array<std::int32_t, kSumChunk> keep; // the kernels' mask: all ones = counts
        std::array<std::uint8_t, kSumChunk / kSumLanes> groupKeep; // or one flag per group
        const bool perGroup = masked && blockSize % kSumLanes == 0;
        if (masked)
            fillChunkMask(skip, blockSize, k0, k1, perGroup, keep.data(), groupKeep.data());
        // Every job on this chunk while it is in cache; the first also adds up the signal.
        for (std::size_t j = 0; j < jobs.size(); ++j) {
            RoundTrip& job = jobs[j];
            ChunkWork w;
            bool finite = true;
            if (groupsInTiles(job.t)) {
                bool exact = false;
                finite = groupScales(values, job, s, k0, k1, groupScale.data(),
                                     groupReciprocal.data(), exact);
                w.groupScale = groupScale.data();
                w.groupReciprocal = exact ? groupReciprocal.data() : nullptr;
            } else {
                finite = spreadScales(values, job, s, k0, k1, scale.data());
                w.scale = scale.data();
            }
            if (!finite)
                nonFinite.store(true, std::memory_order_relaxed);
            w.values = values.data() + k0;
            w.out = job.dequantized ? job.dequantized + k0 : nullptr;
            w.n = k1 - k0;
            w.overflowBits = overflowBits;
            w.keep = masked && !perGroup ? keep.data() : nullptr;
            w.groupKeep = perGroup ? groupKeep.data() : nullptr;
            w.all = &job.all[ci];
            w.small = masked ? &job.small[ci] : nullptr;
            if (j == 0) {
                w.signal = &signal[ci].signal;
                w.signalKept =
                    masked ? &signal[static_cast<std::size_t>(chunks) + ci].signal : nullptr;
                w.prefetch = last ? nullptr : values.data() + k1;
                w.prefetchCount = std::min(n - k1, kSumChunk);
            }
            roundTripChunk<F>(w);
        }
    };
    const std::int64_t batches = (chunks + kBatchChunks - 1) / kBatchChunks;
    runSpread(batches, threadsFor(work), [&](std::int64_t b) {
        if (stopAsked(stop))
            return; // every batch left is skipped; the caller throws
        const std::int64_t end = std::min(chunks, (b + 1) * kBatchChunks);
        for (std::int64_t c = b * kBatchChunks; c < end; ++c)
            oneChunk(c, c + 1 == end);
    });
    throwIfStopAsked(stop);
    return !nonFinite.load();
}

/// Adds a job's chunk sums, chunk by chunk, with the signal's.
ErrorSums totalOf(const std::vector<ErrorSums>& errors, const std::vector<ErrorSums>& signal,
                  std::size_t signalOffset)
{
    ErrorSums total;
    for (std::size_t c = 0; c < errors.size(); ++c) {
        ErrorSums chunk = errors[c];
        chunk.signal = signal[signalOffset + c].signal;
        total.append(chunk);
    }
    return total;
}

/// The round trips of `jobs` (shapes already checked): stats over every value, and over the
/// blocks not skipped when `skip` is not empty. Throws for a non-finite value, for the first job.
std::vector<std::pair<Fp8Stats, Fp8Stats>>
roundTrips(const MatrixF& values, Fp8Format format, Fp8Overflow overflow,
           std::vector<RoundTrip>& jobs, const std::vector<std::uint8_t>& skip,
           std::int64_t blockSize, StopFlag stop = nullptr)
{
    const Spec& s = specOf(format);
    const bool wholeMatrixTile = std::any_of(jobs.begin(), jobs.end(), [](const RoundTrip& j) {
        return j.t.gridRows * j.t.gridCols == 1;
    });
    const std::uint32_t globalMax = wholeMatrixTile ? globalMaxBits(values) : 0;
    bool finite = true;
    for (RoundTrip& job : jobs) {
        throwIfStopAsked(stop);
        finite = findScales(values, job, s, globalMax) && finite;
    }
    std::vector<ErrorSums> signal;
    if (finite) {
        finite = (format == Fp8Format::E4M3)
            ? runRoundTrips<Fp8Format::E4M3>(values, jobs, overflow, skip, blockSize, signal, stop)
            : runRoundTrips<Fp8Format::E5M2>(values, jobs, overflow, skip, blockSize, signal, stop);
    }
    // A value that is not finite spoils every round trip; the first job names it, as a caller
    // running the jobs one at a time would have been told.
    if (!finite) {
        requireFiniteTiles(values, jobs.front().t);
        require(false, "fp8.values", "finite numbers"); // not reached: some value failed
    }
    std::int64_t smallCount = 0;
    for (std::uint8_t f : skip)
        smallCount += f == 0 ? blockSize : 0;
    const std::size_t chunks = jobs.empty() ? 0 : jobs.front().all.size();
    std::vector<std::pair<Fp8Stats, Fp8Stats>> out;
    for (const RoundTrip& job : jobs) {
        out.emplace_back(totalOf(job.all, signal, 0).stats(values.size()), Fp8Stats{});
        if (!skip.empty())
            out.back().second = totalOf(job.small, signal, chunks).stats(smallCount);
    }
    return out;
}

/// A round trip of one scaling, its scales and dequantized values written where asked.
Fp8Stats roundTripOne(const MatrixF& values, Fp8Format format, const TileShape& t, ScaleRule rule,
                      Fp8Overflow overflow, MatrixF* scalesOut, MatrixF* dequantizedOut)
{
    std::vector<RoundTrip> jobs(1);
    jobs[0].t = t;
    jobs[0].rule = rule;
    if (dequantizedOut) {
        if (dequantizedOut->rows() != t.rows || dequantizedOut->cols() != t.cols) {
            dequantizedOut->resize(t.rows, t.cols);
            adviseLargePages(*dequantizedOut);
        }
        jobs[0].dequantized = dequantizedOut->data();
    }
    placeScales(jobs[0], scalesOut);
    return roundTrips(values, format, overflow, jobs, {}, 0).front().first;
}

ScaleRule ruleOf(const Fp8Scaling& scaling)
{
    return scaling.powerOfTwoScale ? ScaleRule::PowerOfTwo : ScaleRule::MaxOverFormat;
}

/// A double rounded to the nearest float32, clamped to +-FLT_MAX first (out-of-range
/// conversions are undefined behaviour).
float toFloatClamped(double v)
{
    constexpr double kMax = std::numeric_limits<float>::max();
    return static_cast<float>(std::clamp(v, -kMax, kMax));
}

} // namespace

float fp8MaxValue(Fp8Format format)
{
    return std::bit_cast<float>(maxFiniteBits(specOf(format)));
}

float fp8MinSubnormal(Fp8Format format)
{
    return std::bit_cast<float>(powerOfTwoBits(specOf(format).minSubnormalExp()));
}

float fp8MinNormal(Fp8Format format)
{
    return std::bit_cast<float>(powerOfTwoBits(specOf(format).minNormalExp()));
}

std::uint8_t fp8Encode(float value, Fp8Format format, Fp8Overflow overflow)
{
    return encode(value, specOf(format), overflow);
}

float fp8Decode(std::uint8_t code, Fp8Format format)
{
    return decode(code, specOf(format));
}

float fp8Quantize(float value, Fp8Format format, Fp8Overflow overflow)
{
    if (format == Fp8Format::E4M3)
        return quantizeFast<Fp8Format::E4M3>(value, overflow);
    return quantizeFast<Fp8Format::E5M2>(value, overflow);
}

void validate(const Fp8Inputs& in)
{
    validateGeneratorKeys(in, !in.values.has_value());
    if (!in.values)
        return;
    const MatrixF& v = *in.values;
    require(v.rows() >= 1, "fp8.values", "a list of at least one row");
    require(v.cols() >= 1, "fp8.values[0]", "a non-empty row of numbers");
    require(v.rows() <= kMaxFp8Elements / v.cols(), "fp8.values", kSizeExpected);
    require(in.blockSize >= 1 && v.cols() % in.blockSize == 0, "fp8.block_size",
            "a whole number >= 1 that divides the columns of fp8.values ("
                + std::to_string(v.cols()) + ")");
    requireFewEnoughScales(v.rows(), v.cols(), in.blockSize);
    for (Eigen::Index i = 0; i < v.rows(); ++i)
        for (Eigen::Index j = 0; j < v.cols(); ++j)
            require(std::isfinite(v(i, j)), valueField(i, j), "a finite number");
}

void validateFp8Value(double value, std::int64_t row, std::int64_t col)
{
    require(std::isfinite(value)
                && std::abs(value) <= static_cast<double>(std::numeric_limits<float>::max()),
            valueField(row, col), "a finite number within float32's range (|v| <= 3.4028235e38)");
}

MatrixF fp8ValuesFromRows(const std::vector<std::vector<double>>& rows)
{
    require(!rows.empty(), "fp8.values", "a list of at least one row");
    const auto cols = static_cast<std::int64_t>(rows.front().size());
    require(cols >= 1, "fp8.values[0]", "a non-empty row of numbers");
    const auto rowCount = static_cast<std::int64_t>(rows.size());
    require(rowCount <= kMaxFp8Elements / cols, "fp8.values", kSizeExpected);
    MatrixF out(rowCount, cols);
    for (std::int64_t i = 0; i < rowCount; ++i) {
        const auto& row = rows[static_cast<std::size_t>(i)];
        require(static_cast<std::int64_t>(row.size()) == cols,
                "fp8.values[" + std::to_string(i) + "]",
                "a row of " + std::to_string(cols) + " numbers, as long as the first row");
        for (std::int64_t j = 0; j < cols; ++j) {
            const double v = row[static_cast<std::size_t>(j)];
            validateFp8Value(v, i, j);
            out(i, j) = static_cast<float>(v); // round to nearest, ties to even
        }
    }
    return out;
}

MatrixF fp8NormalMatrix(const Fp8Inputs& in)
{
    validateGeneratorKeys(in, false);
    static const Ziggurat ziggurat;
    // Chunk c draws from Rng(key + c); Rng's constructor mixes its seed, so neighbouring keys
    // give unrelated streams.
    const std::uint64_t key = Rng(static_cast<std::uint64_t>(in.seed)).next();
    MatrixF out(in.rows, in.cols);
    adviseLargePages(out);
    float* data = out.data();
    const std::int64_t count = in.rows * in.cols;
    const std::int64_t chunks = (count + kNormalChunk - 1) / kNormalChunk;
    // Four chunks side by side on each thread: their streams are independent, so the processor
    // overlaps one draw's arithmetic with the others'.
    constexpr std::int64_t kSide = 4;
    const std::int64_t groups = (chunks + kSide - 1) / kSide;
    runSpread(groups, threadsFor(count), [data, count, chunks, key](std::int64_t g) {
        std::array<float*, kSide> at{};
        std::array<std::int64_t, kSide> size{};
        std::array<Rng, kSide> rng{Rng(0), Rng(0), Rng(0), Rng(0)};
        for (std::int64_t s = 0; s < kSide; ++s) {
            const std::int64_t c = std::min(kSide * g + s, chunks - 1);
            at[static_cast<std::size_t>(s)] = data + c * kNormalChunk;
            // A chunk past the end (the last group's) repeats the last one with no values.
            size[static_cast<std::size_t>(s)] = kSide * g + s < chunks
                ? std::min(count, (c + 1) * kNormalChunk) - c * kNormalChunk
                : 0;
            rng[static_cast<std::size_t>(s)] = Rng(key + static_cast<std::uint64_t>(c));
        }
        const std::int64_t all = *std::min_element(size.begin(), size.end());
        for (std::int64_t i = 0; i < all; ++i) {
            at[0][i] = static_cast<float>(ziggurat(rng[0])); // nearest float32, ties to even
            at[1][i] = static_cast<float>(ziggurat(rng[1]));
            at[2][i] = static_cast<float>(ziggurat(rng[2]));
            at[3][i] = static_cast<float>(ziggurat(rng[3]));
        }
        for (std::size_t s = 0; s < kSide; ++s)
            for (std::int64_t i = all; i < size[s]; ++i)
                at[s][i] = static_cast<float>(ziggurat(rng[s]));
    });
    return out;
}

std::vector<std::int64_t> fp8OutlierBlocks(const Fp8Inputs& in)
{
    validateGeneratorKeys(in, true);
    const std::int64_t blockCount = in.rows * (in.cols / in.blockSize);
    const auto odds = static_cast<std::uint64_t>(kFp8OutlierOdds);
    Rng rng(static_cast<std::uint64_t>(in.seed) ^ kFp8OutlierStream);
    std::vector<std::int64_t> out;
    out.reserve(static_cast<std::size_t>(blockCount / kFp8OutlierOdds + 64));
    for (std::int64_t b = 0; b < blockCount; ++b)
        if (rng.below(odds) == 0)
            out.push_back(b);
    if (out.empty())
        out.push_back(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(blockCount))));
    return out;
}

namespace {

/// Checks that `normals` has the shape of the inputs.
void requireNormalShape(const MatrixF& normals, const Fp8Inputs& in)
{
    require(normals.rows() == in.rows, "fp8.rows",
            "the row count of the normal matrix (" + std::to_string(normals.rows()) + ")");
    require(normals.cols() == in.cols, "fp8.cols",
            "the column count of the normal matrix (" + std::to_string(normals.cols()) + ")");
}

/// An outlier entry: the normal times outlierScale, rounded once to float32, clamped.
float outlierEntry(float normal, double outlierScale)
{
    return toFloatClamped(static_cast<double>(normal) * outlierScale);
}

/// Writes the listed 1 x blockSize blocks of `source` times outlierScale (rounded once, clamped)
/// into the same places of `data` (which may be `source`), on all cores: the blocks are disjoint,
/// so each thread takes its share of the list.
void scaleOutliers(const float* source, float* data, const std::vector<std::int64_t>& blocks,
                   const Fp8Inputs& in)
{
    const auto count = static_cast<std::int64_t>(blocks.size());
    constexpr std::int64_t kPerTask = 1 << 12;
    const std::int64_t tasks = (count + kPerTask - 1) / kPerTask;
    runSpread(tasks, threadsFor(count * in.blockSize), [&](std::int64_t t) {
        const std::int64_t end = std::min(count, (t + 1) * kPerTask);
        for (std::int64_t i = t * kPerTask; i < end; ++i) {
            // Row-major 1 x blockSize blocks are contiguous.
            const std::int64_t first = blocks[static_cast<std::size_t>(i)] * in.blockSize;
            const float* from = source + first;
            float* block = data + first;
            for (std::int64_t j = 0; j < in.blockSize; ++j)
                block[j] = outlierEntry(from[j], in.outlierScale);
        }
    });
}

} // namespace

Fp8Generated fp8ApplyOutliers(MatrixF&& normals, const Fp8Inputs& in)
{
    validateGeneratorKeys(in, true);
    requireNormalShape(normals, in);
    Fp8Generated out;
    out.outlierBlocks = fp8OutlierBlocks(in);
    out.values = std::move(normals);
    scaleOutliers(out.values.data(), out.values.data(), out.outlierBlocks, in);
    return out;
}

Fp8Generated fp8ApplyOutliers(const MatrixF& normals, const Fp8Inputs& in)
{
    validateGeneratorKeys(in, true);
    requireNormalShape(normals, in);
    Fp8Generated out;
    out.outlierBlocks = fp8OutlierBlocks(in);
    // The copy on all cores too: the new matrix's pages are first written there.
    out.values.resize(in.rows, in.cols);
    adviseLargePages(out.values);
    const std::int64_t n = normals.size();
    const std::int64_t chunks = (n + kNormalChunk - 1) / kNormalChunk;
    runSpread(chunks, threadsFor(n), [&](std::int64_t c) {
        const std::int64_t k0 = c * kNormalChunk;
        const std::int64_t k1 = std::min(n, k0 + kNormalChunk);
        std::memcpy(out.values.data() + k0, normals.data() + k0,
                    static_cast<std::size_t>(k1 - k0) * sizeof(float));
    });
    scaleOutliers(out.values.data(), out.values.data(), out.outlierBlocks, in);
    return out;
}

Fp8BandMaxima fp8BandMaxima(const MatrixF& normals, std::int64_t blockSize,
                            const std::vector<std::int64_t>& outlierBlocks, std::int64_t bandRows)
{
    require(blockSize >= 1 && normals.cols() % blockSize == 0, "fp8.block_size",
            "a divisor of the columns (" + std::to_string(normals.cols()) + ")");
    require(bandRows >= 1, "fp8.rows", "bands of at least one row");
    const std::int64_t bands = normals.rows() / bandRows;
    const std::int64_t perBand = bandRows * (normals.cols() / blockSize);
    Fp8BandMaxima out;
    out.normal.assign(static_cast<std::size_t>(bands), 0.0f);
    out.outlier.assign(static_cast<std::size_t>(bands), 0.0f);
    runSpread(bands, threadsFor(normals.size()), [&](std::int64_t k) {
        // The band's outliers, in order: each block is an outlier or not as the list says.
        auto next = std::lower_bound(outlierBlocks.begin(), outlierBlocks.end(), k * perBand);
        float normal = 0, outlier = 0;
        for (std::int64_t block = k * perBand; block < (k + 1) * perBand; ++block) {
            const float* x = normals.data() + block * blockSize;
            float m = 0;
            for (std::int64_t j = 0; j < blockSize; ++j)
                m = std::max(m, std::abs(x[j]));
            if (next != outlierBlocks.end() && *next == block) {
                outlier = std::max(outlier, m);
                ++next;
            } else {
                normal = std::max(normal, m);
            }
        }
        out.normal[static_cast<std::size_t>(k)] = normal;
        out.outlier[static_cast<std::size_t>(k)] = outlier;
    });
    return out;
}

std::vector<float> fp8GeneratedBlock(const MatrixF& normals, const Fp8Inputs& in,
                                     std::int64_t block, bool outlier)
{
    validateGeneratorKeys(in, true);
    requireNormalShape(normals, in);
    require(block >= 0 && block < normals.size() / in.blockSize, "fp8.shown_block",
            "a block of the matrix (0 to " + std::to_string(normals.size() / in.blockSize - 1)
                + ")");
    const float* first = normals.data() + block * in.blockSize;
    std::vector<float> out(first, first + in.blockSize);
    if (outlier)
        for (float& x : out)
            x = outlierEntry(x, in.outlierScale);
    return out;
}

Fp8Generated fp8Generate(const Fp8Inputs& in)
{
    validateGeneratorKeys(in, true);
    return fp8ApplyOutliers(fp8NormalMatrix(in), in);
}

MatrixF fp8InputMatrix(const Fp8Inputs& in)
{
    validate(in);
    if (in.values)
        return *in.values;
    return fp8Generate(in).values;
}

Fp8Result fp8BlockQuantize(const MatrixF& values, Fp8Format format, const Fp8Scaling& scaling,
                           Fp8Overflow overflow)
{
    Fp8Result out;
    out.stats =
        fp8BlockQuantizeInto(values, format, scaling, overflow, out.scales, out.dequantized);
    out.values = values;
    return out;
}

Fp8Stats fp8BlockQuantizeInto(const MatrixF& values, Fp8Format format, const Fp8Scaling& scaling,
                              Fp8Overflow overflow, MatrixF& scales, MatrixF& dequantized)
{
    const TileShape t = tileShapeOf(values, scaling);
    return roundTripOne(values, format, t, ruleOf(scaling), overflow, &scales, &dequantized);
}

Fp8Stats fp8BlockQuantizeStats(const MatrixF& values, Fp8Format format, const Fp8Scaling& scaling,
                               Fp8Overflow overflow)
{
    const TileShape t = tileShapeOf(values, scaling);
    return roundTripOne(values, format, t, ruleOf(scaling), overflow, nullptr, nullptr);
}

Fp8Result fp8Cast(const MatrixF& values, Fp8Format format, Fp8Overflow overflow)
{
    const TileShape t = tileShapeOf(values, Fp8Scaling{0, 0, false});
    Fp8Result out;
    out.stats =
        roundTripOne(values, format, t, ScaleRule::Unit, overflow, &out.scales, &out.dequantized);
    out.values = values;
    return out;
}

namespace {

/// fp8QuantizeScalings into `out`, whose matrices are reused where their shape fits.
void quantizeScalingsInto(const MatrixF& values, Fp8Format format, Fp8Overflow overflow,
                          const std::vector<Fp8ScalingJob>& jobs, std::int64_t blockSize,
                          const std::vector<std::int64_t>& excludedBlocks,
                          std::vector<Fp8ScalingOutcome>& out, StopFlag stop = nullptr)
{
    // Every check before any work, in the order the one-at-a-time calls would make them.
    std::vector<RoundTrip> trips(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        trips[i].t =
            tileShapeOf(values, jobs[i].plainCast ? Fp8Scaling{0, 0, false} : jobs[i].scaling);
        trips[i].rule = jobs[i].plainCast ? ScaleRule::Unit : ruleOf(jobs[i].scaling);
    }
    std::vector<std::uint8_t> skip;
    if (blockSize != 0) {
        requireSameShape(values, values);
        const std::int64_t blocks = blockCountOf(values, blockSize);
        skip.assign(static_cast<std::size_t>(blocks), 0);
        for (std::int64_t b : excludedBlocks) {
            require(b >= 0 && b < blocks, "fp8.outlier_blocks",
                    "block indices in 0.." + std::to_string(blocks - 1));
            skip[static_cast<std::size_t>(b)] = 1;
        }
    }

    // Only the matrices asked for are kept; the others are rounded chunk by chunk into a small
    // buffer. Every job visits each chunk while it is in cache.
    out.resize(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        placeScales(trips[i], jobs[i].keepScales ? &out[i].scales : nullptr);
        MatrixF& d = out[i].dequantized;
        if (!jobs[i].keepDequantized) {
            d.resize(0, 0);
            continue;
        }
        if (d.rows() != trips[i].t.rows || d.cols() != trips[i].t.cols) {
            d.resize(trips[i].t.rows, trips[i].t.cols);
            adviseLargePages(d);
        }
        trips[i].dequantized = d.data();
    }
    const auto stats = roundTrips(values, format, overflow, trips, skip, blockSize, stop);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const TileShape& t = trips[i].t;
        out[i].all = stats[i].first;
        out[i].small = stats[i].second;
        out[i].scaleCount = t.gridRows * t.gridCols;
        if (!jobs[i].keepScales)
            out[i].scales.resize(0, 0); // the scales were the job's own
    }
}

} // namespace

std::vector<Fp8ScalingOutcome> fp8QuantizeScalings(const MatrixF& values, Fp8Format format,
                                                   Fp8Overflow overflow,
                                                   const std::vector<Fp8ScalingJob>& jobs,
                                                   std::int64_t blockSize,
                                                   const std::vector<std::int64_t>& excludedBlocks)
{
    std::vector<Fp8ScalingOutcome> out;
    quantizeScalingsInto(values, format, overflow, jobs, blockSize, excludedBlocks, out);
    return out;
}

namespace {

/// A block's sort item: a key that orders like its magnitude (-0 as +0) in the high half, its
/// index in the low half, so that items order as a stable sort by magnitude orders the blocks.
std::uint64_t magnitudeItem(const Fp8BlockError& block, std::size_t index)
{
    const float m = block.maxAbs == 0.0f ? 0.0f : block.maxAbs;
    const auto bits = std::bit_cast<std::uint32_t>(m);
    const std::uint32_t key = (bits & kSignBit) ? ~bits : (bits | kSignBit);
    return (static_cast<std::uint64_t>(key) << 32) | index;
}

} // namespace

Fp8Workspace::Spare& Fp8Workspace::spareFor(const Fp8Inputs& in)
{
    // A matrix no caller holds any more is written again: its pages are already there, and a
    // fresh 64 MB matrix costs more to have the system clear than to fill. One generated from
    // the same normals and outlier list is taken first: only its outlier blocks differ.
    Spare* pick = nullptr;
    for (Spare& spare : m_pool) {
        const Fp8Generated& g = *spare.generated;
        if (spare.generated.use_count() != 1 || g.values.rows() != in.rows
            || g.values.cols() != in.cols)
            continue;
        if (!pick || (spare.normalsId == m_normalsId && spare.outliersId == m_outliersId))
            pick = &spare;
    }
    if (pick)
        return *pick;
    // Spares of another shape are let go; two of this shape are enough for a caller that holds
    // the last result while the next is computed.
    std::erase_if(m_pool, [&in](const Spare& p) {
        return p.generated.use_count() == 1
            && (p.generated->values.rows() != in.rows || p.generated->values.cols() != in.cols);
    });
    Spare fresh;
    fresh.generated = std::make_shared<Fp8Generated>();
    fresh.generated->values.resize(in.rows, in.cols);
    adviseLargePages(fresh.generated->values);
    m_pool.push_back(std::move(fresh));
    return m_pool.back();
}

std::shared_ptr<const Fp8Generated> Fp8Workspace::generate(const Fp8Inputs& in)
{
    validateGeneratorKeys(in, true);
    const std::lock_guard lock(m_mutex);
    const auto sameShape = [&in](const Fp8Inputs& a) {
        return a.rows == in.rows && a.cols == in.cols && a.seed == in.seed;
    };
    if (m_generated && sameShape(m_generatedKey) && m_generatedKey.blockSize == in.blockSize
        && m_generatedKey.outlierScale == in.outlierScale)
        return m_generated;
    if (!m_normals || !sameShape(m_normalsKey)) {
        m_normals.reset(); // its memory back before the new one is drawn
        m_normals = std::make_shared<const MatrixF>(fp8NormalMatrix(in));
        m_normalsKey = in;
        ++m_normalsId;
    }
    keepOutliersOf(in);
    m_generated.reset();
    Spare& spare = spareFor(in);
    Fp8Generated& target = *spare.generated;
    const MatrixF& normals = *m_normals;
    if (spare.normalsId != m_normalsId || spare.outliersId != m_outliersId) {
        // Everything from the normals; else the blocks outside the list hold them already.
        const std::int64_t n = normals.size();
        const std::int64_t chunks = (n + kNormalChunk - 1) / kNormalChunk;
        runSpread(chunks, threadsFor(n), [&](std::int64_t c) {
            const std::int64_t k0 = c * kNormalChunk;
            const std::int64_t k1 = std::min(n, k0 + kNormalChunk);
            std::memcpy(target.values.data() + k0, normals.data() + k0,
                        static_cast<std::size_t>(k1 - k0) * sizeof(float));
        });
        target.outlierBlocks = m_outliers;
        spare.normalsId = m_normalsId;
        spare.outliersId = m_outliersId;
    }
    scaleOutliers(normals.data(), target.values.data(), target.outlierBlocks, in);
    m_generated = spare.generated;
    ++m_generations;
    m_generatedNormalsId = spare.normalsId;
    m_generatedOutliersId = spare.outliersId;
    m_generatedKey = in;
    return m_generated;
}

void Fp8Workspace::keepOutliersOf(const Fp8Inputs& in)
{
    if (m_outliers.empty() || m_outliersKey.rows != in.rows || m_outliersKey.cols != in.cols
        || m_outliersKey.seed != in.seed || m_outliersKey.blockSize != in.blockSize) {
        m_outliers = fp8OutlierBlocks(in);
        m_outliersKey = in;
        ++m_outliersId;
    }
}

std::vector<std::int64_t> Fp8Workspace::outlierBlocks(const Fp8Inputs& in)
{
    validateGeneratorKeys(in, true);
    const std::lock_guard lock(m_mutex);
    keepOutliersOf(in);
    return m_outliers;
}

std::shared_ptr<const MatrixF> Fp8Workspace::normals(const Fp8Inputs& in)
{
    validateGeneratorKeys(in, false);
    const std::lock_guard lock(m_mutex);
    if (!m_normals || m_normalsKey.rows != in.rows || m_normalsKey.cols != in.cols
        || m_normalsKey.seed != in.seed) {
        m_normals.reset();
        m_normals = std::make_shared<const MatrixF>(fp8NormalMatrix(in));
        m_normalsKey = in;
        ++m_normalsId;
    }
    return m_normals;
}

const std::vector<Fp8ScalingOutcome>&
Fp8Workspace::quantizeScalings(const MatrixF& values, Fp8Format format, Fp8Overflow overflow,
                               const std::vector<Fp8ScalingJob>& jobs, std::int64_t blockSize,
                               const std::vector<std::int64_t>& excludedBlocks, StopFlag stop)
{
    const std::lock_guard lock(m_mutex);
    quantizeScalingsInto(values, format, overflow, jobs, blockSize, excludedBlocks, m_outcomes,
                         stop);
    return m_outcomes;
}

Fp8ErrorPicture& Fp8Workspace::errorPicture(int slot, const MatrixF& values,
                                            const MatrixF& dequantized, std::int64_t blockSize,
                                            std::int64_t maxRows, std::int64_t maxCols)
{
    const std::lock_guard lock(m_mutex);
    Fp8ErrorPicture& out = m_pictures[slot == 0 ? 0 : 1];
    fp8ErrorPictureInto(values, dequantized, blockSize, maxRows, maxCols, out);
    return out;
}

std::shared_ptr<const std::vector<std::int64_t>>
Fp8Workspace::orderByMagnitude(const MatrixF& values, const std::vector<Fp8BlockError>& blocks)
{
    const std::lock_guard lock(m_mutex);
    const bool current = m_generated && &values == &m_generated->values
        && m_generatedKey.blockSize >= 1
        && static_cast<std::int64_t>(blocks.size()) == values.size() / m_generatedKey.blockSize;
    if (!current)
        return std::make_shared<const std::vector<std::int64_t>>(fp8OrderByMagnitude(blocks));
    if (m_order && m_orderGeneration == m_generations && m_order->size() == blocks.size())
        return m_order;
    m_order = std::make_shared<const std::vector<std::int64_t>>(orderOfCurrent(blocks));
    m_orderGeneration = m_generations;
    return m_order;
}

std::vector<std::int64_t> Fp8Workspace::orderOfCurrent(const std::vector<Fp8BlockError>& blocks)
{
    const std::vector<std::int64_t>& outliers = m_generated->outlierBlocks;
    const bool finiteOutliers =
        std::none_of(outliers.begin(), outliers.end(), [&blocks](std::int64_t b) {
            return std::isnan(blocks[static_cast<std::size_t>(b)].maxAbs);
        });
    if (!finiteOutliers)
        return fp8OrderByMagnitude(blocks);
    // Outside the outlier list the blocks hold the normals: their items stay while the normals
    // and the list do, and are sorted once (the full order with the outliers taken out).
    if (m_restNormalsId != m_generatedNormalsId || m_restOutliersId != m_generatedOutliersId) {
        std::vector<std::int64_t> all = fp8OrderByMagnitude(blocks);
        if (std::any_of(all.begin(), all.end(), [&blocks](std::int64_t b) {
                return std::isnan(blocks[static_cast<std::size_t>(b)].maxAbs);
            }))
            return all;
        std::vector<std::uint8_t> outlier(blocks.size(), 0);
        for (std::int64_t b : outliers)
            outlier[static_cast<std::size_t>(b)] = 1;
        m_restItems.clear();
        m_restItems.reserve(blocks.size() - outliers.size());
        for (std::int64_t b : all)
            if (outlier[static_cast<std::size_t>(b)] == 0)
                m_restItems.push_back(magnitudeItem(blocks[static_cast<std::size_t>(b)],
                                                    static_cast<std::size_t>(b)));
        m_restNormalsId = m_generatedNormalsId;
        m_restOutliersId = m_generatedOutliersId;
        return all;
    }
    // The outliers sorted afresh and merged in: items never tie (their indices differ), so the
    // merge gives exactly the stable sort's order.
    std::vector<std::uint64_t> moved;
    moved.reserve(outliers.size());
    for (std::int64_t b : outliers)
        moved.push_back(
            magnitudeItem(blocks[static_cast<std::size_t>(b)], static_cast<std::size_t>(b)));
    std::sort(moved.begin(), moved.end());
    std::vector<std::int64_t> order(blocks.size());
    std::size_t i = 0, j = 0, k = 0;
    while (i < m_restItems.size() && j < moved.size())
        order[k++] = static_cast<std::int64_t>(
            (m_restItems[i] < moved[j] ? m_restItems[i++] : moved[j++]) & 0xFFFFFFFFu);
    for (; i < m_restItems.size(); ++i)
        order[k++] = static_cast<std::int64_t>(m_restItems[i] & 0xFFFFFFFFu);
    for (; j < moved.size(); ++j)
        order[k++] = static_cast<std::int64_t>(moved[j] & 0xFFFFFFFFu);
    return order;
}

void Fp8Workspace::errorPictures(const MatrixF& values, const MatrixF& first, const MatrixF& second,
                                 std::int64_t blockSize, std::int64_t maxRows, std::int64_t maxCols,
                                 StopFlag stop)
{
    const std::lock_guard lock(m_mutex);
    fp8ErrorPicturesInto(values, first, &second, blockSize, maxRows, maxCols, m_pictures[0],
                         &m_pictures[1], stop);
}

void Fp8Workspace::clear()
{
    const std::lock_guard lock(m_mutex);
    for (Fp8ErrorPicture& p : m_pictures)
        p = Fp8ErrorPicture{};
    m_normals.reset();
    m_outliers.clear();
    m_generated.reset();
    m_pool.clear();
    m_outcomes.clear();
    m_restItems.clear();
    m_restNormalsId = m_restOutliersId = 0;
    m_order.reset();
}

std::vector<float> fp8ScaledGrid(Fp8Format format, float scale, float lo, float hi)
{
    require(std::isfinite(scale) && scale > 0.0f, "fp8.grid", "a finite scale > 0");
    require(lo <= hi, "fp8.grid", "a range whose low end is at most its high end");
    std::vector<float> all;
    all.reserve(256);
    for (unsigned code = 0; code < 256; ++code) {
        const float q = fp8Decode(static_cast<std::uint8_t>(code), format);
        if (!std::isfinite(q))
            continue;
        const float v = q * scale; // as the dequantization multiplies
        if (std::isfinite(v))
            all.push_back(v == 0.0f ? 0.0f : v); // -0 joins +0
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    // The values in range, widened by one neighbour on each side.
    auto first = std::lower_bound(all.begin(), all.end(), lo);
    auto last = std::upper_bound(all.begin(), all.end(), hi);
    if (first != all.begin())
        --first;
    if (last != all.end())
        ++last;
    return {first, last};
}

namespace {

/// The entries of fp8BlockErrors for the blocks [b0, b1) of bs values each (v, d at the matrix's
/// start); returns the largest magnitude bits met. Each block's sums run in index order; eight
/// blocks go side by side, one per vector lane. With `e` (another round trip of the same values)
/// also its entries, into outE, the values' own terms found once for both.
std::int32_t blockErrorsOf(const float* v, const float* d, std::int64_t bs, std::int64_t b0,
                           std::int64_t b1, Fp8BlockError* out, const float* e = nullptr,
                           Fp8BlockError* outE = nullptr)
{
    constexpr std::int64_t kSide = 8;
    std::int32_t top = 0;
    for (std::int64_t b = b0; b < b1; b += kSide) {
        std::int32_t maxAbs[kSide] = {};
        double signal[kSide] = {};
        double error[kSide] = {};
        double errorE[kSide] = {};
        const std::int64_t side = std::min(kSide, b1 - b);
        if (side == kSide && e) {
            blockSumsOfEightPair(v + b * bs, d + b * bs, e + b * bs, bs, maxAbs, signal, error,
                                 errorE);
        } else if (side == kSide) {
            blockSumsOfEight(v + b * bs, d + b * bs, bs, maxAbs, signal, error);
        } else {
            for (std::int64_t j = 0; j < side; ++j) {
                for (std::int64_t k = (b + j) * bs; k < (b + j + 1) * bs; ++k) {
                    const double x = v[k];
                    const double diff = static_cast<double>(d[k]) - x;
                    maxAbs[j] = std::max(maxAbs[j],
                                         std::bit_cast<std::int32_t>(v[k])
                                             & static_cast<std::int32_t>(kAbsMask));
                    signal[j] += x * x;
                    error[j] += diff * diff;
                    if (e) {
                        const double diffE = static_cast<double>(e[k]) - x;
                        errorE[j] += diffE * diffE;
                    }
                }
            }
        }
        const auto relative = [&signal](double err, std::int64_t j) {
            return (err == 0.0) ? 0.0 : std::sqrt(err / signal[j]);
        };
        for (std::int64_t j = 0; j < side; ++j) {
            Fp8BlockError& entry = out[b + j];
            entry.maxAbs = std::bit_cast<float>(maxAbs[j]);
            entry.relativeError = relative(error[j], j);
            if (e) {
                outE[b + j].maxAbs = entry.maxAbs;
                outE[b + j].relativeError = relative(errorE[j], j);
            }
            top = std::max(top, maxAbs[j]);
        }
    }
    return top;
}

/// A NaN magnitude would leave no order to sort the blocks by. The blocks' maxima (`largest`)
/// tell whether any value is not finite; only then a search for the first culprit.
void requireFiniteBlocks(const MatrixF& values, const std::vector<std::int32_t>& largest)
{
    if (*std::max_element(largest.begin(), largest.end()) >= static_cast<std::int32_t>(kFloatInf)) {
        for (Eigen::Index k = 0; k < values.size(); ++k)
            require(std::isfinite(values.data()[k]),
                    valueField(k / values.cols(), k % values.cols()), "a finite number");
    }
}

/// The cell grid of an error map: pr x pc values per cell, cellRows x cellCols cells.
struct MapShape {
    std::int64_t pr, pc, cellRows, cellCols;
};

MapShape mapShapeOf(const MatrixF& values, std::int64_t maxRows, std::int64_t maxCols)
{
    require(maxRows >= 1 && maxCols >= 1, "fp8.map", "at least one row and one column of cells");
    MapShape m{};
    m.pr = (values.rows() + maxRows - 1) / maxRows;
    m.pc = (values.cols() + maxCols - 1) / maxCols;
    m.cellRows = (values.rows() + m.pr - 1) / m.pr;
    m.cellCols = (values.cols() + m.pc - 1) / m.pc;
    return m;
}

/// Row i of the error map from the column maxima of its band of rows.
void mapRowFromColumns(const std::int64_t* top, std::int64_t cols, const MapShape& m,
                       std::int64_t i, Eigen::MatrixXd& out)
{
    for (std::int64_t j = 0; j < m.cellCols; ++j) {
        const std::int64_t end = std::min(cols, (j + 1) * m.pc);
        std::int64_t best = 0;
        for (std::int64_t c = j * m.pc; c < end; ++c)
            best = std::max(best, top[c]);
        out(i, j) = std::bit_cast<double>(best);
    }
}

} // namespace

std::vector<Fp8BlockError> fp8BlockErrors(const MatrixF& values, const MatrixF& dequantized,
                                          std::int64_t blockSize)
{
    requireSameShape(values, dequantized);
    const std::int64_t blocks = blockCountOf(values, blockSize);
    std::vector<Fp8BlockError> out(static_cast<std::size_t>(blocks));
    constexpr std::int64_t kPerTask = 1 << 14;
    const std::int64_t tasks = (blocks + kPerTask - 1) / kPerTask;
    std::vector<std::int32_t> largest(static_cast<std::size_t>(tasks), 0);
    runSpread(tasks, threadsFor(values.size()), [&](std::int64_t task) {
        largest[static_cast<std::size_t>(task)] =
            blockErrorsOf(values.data(), dequantized.data(), blockSize, task * kPerTask,
                          std::min(blocks, (task + 1) * kPerTask), out.data());
    });
    requireFiniteBlocks(values, largest);
    return out;
}

Fp8ErrorPicture fp8ErrorPicture(const MatrixF& values, const MatrixF& dequantized,
                                std::int64_t blockSize, std::int64_t maxRows, std::int64_t maxCols)
{
    Fp8ErrorPicture out;
    fp8ErrorPictureInto(values, dequantized, blockSize, maxRows, maxCols, out);
    return out;
}

void fp8ErrorPictureInto(const MatrixF& values, const MatrixF& dequantized, std::int64_t blockSize,
                         std::int64_t maxRows, std::int64_t maxCols, Fp8ErrorPicture& out)
{
    fp8ErrorPicturesInto(values, dequantized, nullptr, blockSize, maxRows, maxCols, out, nullptr);
}

void fp8ErrorPicturesInto(const MatrixF& values, const MatrixF& dequantized, const MatrixF* other,
                          std::int64_t blockSize, std::int64_t maxRows, std::int64_t maxCols,
                          Fp8ErrorPicture& out, Fp8ErrorPicture* otherOut, StopFlag stop)
{
    requireSameShape(values, dequantized);
    if (other)
        requireSameShape(values, *other);
    const std::int64_t blocks = blockCountOf(values, blockSize);
    const MapShape m = mapShapeOf(values, maxRows, maxCols);
    const std::int64_t cols = values.cols();
    const std::int64_t perRow = cols / blockSize;
    // Every entry and cell is written below: resizing to the same size keeps the memory.
    const bool both = other && otherOut;
    for (Fp8ErrorPicture* p : {&out, both ? otherOut : nullptr}) {
        if (p) {
            p->blocks.resize(static_cast<std::size_t>(blocks));
            p->map.resize(m.cellRows, m.cellCols);
        }
    }
    const float* e = both ? other->data() : nullptr;
    Fp8BlockError* outE = both ? otherOut->blocks.data() : nullptr;
    // One band of rows (a row of cells) per task: its blocks and its column maxima while the
    // rows are in cache.
    std::vector<std::int32_t> largest(static_cast<std::size_t>(m.cellRows), 0);
    runSpread(m.cellRows, threadsFor(values.size()), [&](std::int64_t i) {
        if (stopAsked(stop))
            return; // every band left is skipped; thrown below
        std::vector<std::int64_t> columnBits(static_cast<std::size_t>(cols), 0);
        std::vector<std::int64_t> columnBitsE(both ? static_cast<std::size_t>(cols) : 0, 0);
        std::int32_t top = 0;
        for (std::int64_t r = i * m.pr; r < std::min(values.rows(), (i + 1) * m.pr); ++r) {
            top = std::max(top,
                           blockErrorsOf(values.data(), dequantized.data(), blockSize, r * perRow,
                                         (r + 1) * perRow, out.blocks.data(), e, outE));
            absErrorMaxRow(values.data() + r * cols, dequantized.data() + r * cols, cols,
                           columnBits.data());
            if (both)
                absErrorMaxRow(values.data() + r * cols, e + r * cols, cols, columnBitsE.data());
        }
        largest[static_cast<std::size_t>(i)] = top;
        mapRowFromColumns(columnBits.data(), cols, m, i, out.map);
        if (both)
            mapRowFromColumns(columnBitsE.data(), cols, m, i, otherOut->map);
    });
    throwIfStopAsked(stop);
    requireFiniteBlocks(values, largest);
}

std::vector<std::int64_t> fp8OrderByMagnitude(const std::vector<Fp8BlockError>& blocks)
{
    std::vector<std::int64_t> order(blocks.size());
    const bool anyNaN = std::any_of(blocks.begin(), blocks.end(),
                                    [](const Fp8BlockError& e) { return std::isnan(e.maxAbs); });
    if (anyNaN || blocks.size() < 2) {
        for (std::size_t i = 0; i < order.size(); ++i)
            order[i] = static_cast<std::int64_t>(i);
        std::stable_sort(order.begin(), order.end(), [&blocks](std::int64_t a, std::int64_t b) {
            return blocks[static_cast<std::size_t>(a)].maxAbs
                < blocks[static_cast<std::size_t>(b)].maxAbs;
        });
        return order;
    }
    // A stable radix sort on keys that order like the floats: four passes of 8 bits, the lowest
    // first (256 buckets: few enough write streams for the caches), each key travelling with its
    // index in one 64-bit item (so that a pass reads nothing at random), a pass skipped where every
    // key has the same digit there. -0 counts as +0, as the float comparison has it.
    const std::size_t n = blocks.size();
    // The result's own memory serves as the second buffer (a signed and an unsigned integer
    // type may name the same object): one 8 MB allocation fewer for a million blocks.
    std::vector<std::uint64_t> own(n);
    std::uint64_t* items = own.data();
    std::uint64_t* scratch = reinterpret_cast<std::uint64_t*>(order.data());
    constexpr int kDigits = 4;
    constexpr int kShift[kDigits] = {32, 40, 48, 56};
    constexpr std::uint64_t kBuckets = 1u << 8;
    std::vector<std::size_t> counts(kDigits * kBuckets, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t item = magnitudeItem(blocks[i], i);
        items[i] = item;
        for (int d = 0; d < kDigits; ++d)
            ++counts[d * kBuckets + ((item >> kShift[d]) & (kBuckets - 1))];
    }
    for (int d = 0; d < kDigits; ++d) {
        std::size_t* start = counts.data() + d * kBuckets;
        if (std::find(start, start + kBuckets, n) != start + kBuckets)
            continue; // one digit for every key: this pass would change nothing
        std::size_t sum = 0;
        for (std::uint64_t k = 0; k < kBuckets; ++k)
            sum += std::exchange(start[k], sum);
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t item = items[i];
            scratch[start[(item >> kShift[d]) & (kBuckets - 1)]++] = item;
        }
        std::swap(items, scratch);
    }
    // Wherever the sorted items are, their indices go to the result, in place or copied.
    std::uint64_t* result = reinterpret_cast<std::uint64_t*>(order.data());
    for (std::size_t i = 0; i < n; ++i)
        result[i] = items[i] & 0xFFFFFFFFu;
    return order;
}
Fp8Stats fp8StatsExcludingBlocks(const MatrixF& values, const MatrixF& dequantized,
                                 std::int64_t blockSize,
                                 const std::vector<std::int64_t>& excludedBlocks)
{
    requireSameShape(values, dequantized);
    const std::int64_t blocks = blockCountOf(values, blockSize);
    std::vector<std::uint8_t> keep(static_cast<std::size_t>(blocks), 1);
    for (std::int64_t b : excludedBlocks) {
        require(b >= 0 && b < blocks, "fp8.outlier_blocks",
                "block indices in 0.." + std::to_string(blocks - 1));
        keep[static_cast<std::size_t>(b)] = 0;
    }
    // The chunks and lanes of the quantizer's own sums, so that with nothing excluded the figures
    // are its figures bit for bit.
    const std::int64_t n = values.size();
    const std::int64_t chunks = (n + kSumChunk - 1) / kSumChunk;
    std::vector<ErrorSums> sums(static_cast<std::size_t>(chunks));
    runSpread(chunks, threadsFor(n), [&](std::int64_t c) {
        const std::int64_t k0 = c * kSumChunk;
        const std::int64_t k1 = std::min(n, k0 + kSumChunk);
        std::array<std::int32_t, kSumChunk> flags; // the kernels' mask: all ones = counts
        for (std::int64_t k = k0; k < k1;) {
            const std::int64_t b = k / blockSize;
            const std::int64_t e = std::min(k1, (b + 1) * blockSize);
            std::fill(flags.data() + (k - k0), flags.data() + (e - k0),
                      keep[static_cast<std::size_t>(b)] != 0 ? -1 : 0);
            k = e;
        }
        // The kernel reads the dequantized values (no scale) and keeps only the small sums.
        ErrorSums everything;
        ErrorSums& s = sums[static_cast<std::size_t>(c)];
        double all = 0.0;
        ChunkWork w;
        w.values = values.data() + k0;
        w.out = const_cast<float*>(dequantized.data() + k0); // read, never written
        w.n = k1 - k0;
        w.keep = flags.data();
        w.all = &everything;
        w.small = &s;
        w.signal = &all;
        w.signalKept = &s.signal;
        roundTripChunk<Fp8Format::E4M3>(w); // the format plays no part without a scale
    });
    ErrorSums total;
    for (const ErrorSums& s : sums)
        total.append(s);
    std::int64_t count = 0;
    for (std::uint8_t f : keep)
        count += f != 0 ? blockSize : 0;
    return total.stats(count);
}

Eigen::MatrixXd fp8AbsErrorMap(const MatrixF& values, const MatrixF& dequantized,
                               std::int64_t maxRows, std::int64_t maxCols)
{
    requireSameShape(values, dequantized);
    const MapShape m = mapShapeOf(values, maxRows, maxCols);
    const std::int64_t rows = values.rows();
    const std::int64_t cols = values.cols();
    Eigen::MatrixXd out(m.cellRows, m.cellCols);
    // Errors are >= 0 (a NaN counts as +infinity), and such doubles order like their bits, so the
    // maxima are taken on integers: first down each column of a band of rows, then across each
    // cell's columns.
    runSpread(m.cellRows, threadsFor(values.size()), [&](std::int64_t i) {
        std::vector<std::int64_t> columnBits(static_cast<std::size_t>(cols), 0);
        for (std::int64_t r = i * m.pr; r < std::min(rows, (i + 1) * m.pr); ++r)
            absErrorMaxRow(values.data() + r * cols, dequantized.data() + r * cols, cols,
                           columnBits.data());
        mapRowFromColumns(columnBits.data(), cols, m, i, out);
    });
    return out;
}

} // namespace scalelab::core
