// Tests of the FP8 training experiments: the limited accumulator and the scaling policies.
// Expected values are worked by hand, come from an independent float32 computation (fmaf), or
// from the error model derived next to each test.

#include "scalelab/core/error.h"
#include "scalelab/core/fp8.h"
#include "scalelab/core/fp8_training.h"
#include "scalelab/core/random.h"
#include "testhelpers.h"

#include <QTest>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace scalelab::core;
using scalelab::test::throwsInputError;

namespace {

constexpr auto kNearest = AccumulatorRounding::Nearest;
constexpr auto kTruncate = AccumulatorRounding::Truncate;
constexpr int kFloat32 = static_cast<int>(AccumulationMode::Float32);
constexpr int kLimited = static_cast<int>(AccumulationMode::Limited);
constexpr int kPromoted = static_cast<int>(AccumulationMode::Promoted);

bool sameBits(double a, double b)
{
    return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

/// The accumulator's rounding of x + y, with the error of x + y worked out here (Knuth).
double roundSum(double x, double y, int bits, AccumulatorRounding r)
{
    const double s = x + y;
    const double yv = s - x;
    const double err = (x - (s - yv)) + (y - yv);
    return roundToAccumulator(s, err, bits, r);
}

Fp8AccumulationResult run(const Fp8AccumulationInputs& in)
{
    return fp8Accumulation(in, Fp8Format::E4M3, 16, Fp8Overflow::Saturate);
}

/// The rounding-to-nearest error model of a running sum of K products with zero-mean signs.
/// Each addition to a partial sum s_k errs by a uniform amount in +-ulp(s_k)/2: variance
/// ulp^2 / 12. With ulp(s) = 2^(floor(log2 |s|) - bits), E[(ulp / |s|)^2] = 2^(-2 bits) x 3/(8 ln
/// 2) over a log-uniform mantissa. A sum of k products of variance v has E[s_k^2] = k v, so the K
/// additions add up to a variance of 2^(-2 bits) x 3/(8 ln 2) x v K^2 / 24, against E[R^2] = K v: a
/// relative RMS error of 2^-bits sqrt(3/(8 ln 2) x K / 24) ~= 0.15 x 2^-bits sqrt(K). Promoted
/// every N_C products, each block starts from zero: K / N_C blocks of N_C, each with the variance
/// above for K = N_C, so 0.15 x 2^-bits sqrt(N_C), the same at every K.
double predictedRms(std::int64_t terms, int bits)
{
    return std::ldexp(1.0, -bits) * std::sqrt(3.0 / (8.0 * std::log(2.0)) * double(terms) / 24.0);
}

} // namespace

class TstFp8Training : public QObject {
    Q_OBJECT

private slots:
    void roundingByHand();
    void roundingAtTheEdges();
    void bits23NearestIsFloat32Fma();
    void limited23EqualsFloat32();
    void promotionEveryProductEqualsFloat32();
    void errorGrowsWithoutPromotionAndStaysFlatWithIt();
    void truncationGrowsFasterThanRounding();
    void alignedBlockIsLimited();
    void alignedBlockFollowsItsDefinition();
    void kValues();
    void accumulationRefusesBadInput();
    void scalesFollowThePolicies();
    void delayedSaturatesAtTheSpikeCurrentDoesNot();
    void delayedRemembersTheSpikeForItsHistory();
    void growthOutrunsDelayedScaling();
    void policyRefusesBadInput();
};

void TstFp8Training::roundingByHand()
{
    // Two fraction bits: in [1, 2) the values are 1, 1.25, 1.5, 1.75.
    QCOMPARE(roundToAccumulator(1.125, 0.0, 2, kNearest), 1.0); // a tie: to the even 1.0
    QCOMPARE(roundToAccumulator(1.375, 0.0, 2, kNearest), 1.5); // a tie: to the even 1.5
    QCOMPARE(roundToAccumulator(1.375, 0.0, 2, kTruncate), 1.25);
    QCOMPARE(roundToAccumulator(1.7, 0.0, 2, kTruncate), 1.5);
    QCOMPARE(roundToAccumulator(1.7, 0.0, 2, kNearest), 1.75);
    QCOMPARE(roundToAccumulator(-1.375, 0.0, 2, kTruncate), -1.25); // toward zero
    QCOMPARE(roundToAccumulator(-1.375, 0.0, 2, kNearest), -1.5);
    // A tie that is not one: the error below hi decides.
    QCOMPARE(roundToAccumulator(1.125, 0x1p-60, 2, kNearest), 1.25);
    QCOMPARE(roundToAccumulator(1.125, -0x1p-60, 2, kNearest), 1.0);
    // On a kept value, a negative error drops truncation to the value below.
    QCOMPARE(roundToAccumulator(1.25, -0x1p-60, 2, kTruncate), 1.0);
    QCOMPARE(roundToAccumulator(1.25, 0x1p-60, 2, kTruncate), 1.25);
    // Just below a power of two the step is the smaller binade's: 2 - tiny cuts to 1.75.
    QCOMPARE(roundToAccumulator(2.0, -0x1p-60, 2, kTruncate), 1.75);
    QCOMPARE(roundToAccumulator(2.0, -0x1p-60, 2, kNearest), 2.0);
    // 13 bits: 1 + 2^-14 is half a step above 1, a tie to the even 1.
    QCOMPARE(roundToAccumulator(1.0 + 0x1p-14, 0.0, 13, kNearest), 1.0);
    QCOMPARE(roundToAccumulator(1.0 + 3 * 0x1p-14, 0.0, 13, kNearest), 1.0 + 0x1p-12);
    QCOMPARE(roundToAccumulator(0.0, 0.0, 13, kNearest), 0.0);
}

void TstFp8Training::roundingAtTheEdges()
{
    // float32's subnormal step 2^-149 is the floor: 1.5 x 2^-149 is a tie, to the even 2^-148.
    QCOMPARE(roundToAccumulator(1.5 * 0x1p-149, 0.0, 23, kNearest), 0x1p-148);
    QCOMPARE(roundToAccumulator(1.5 * 0x1p-149, 0.0, 23, kTruncate), 0x1p-149);
    QCOMPARE(roundToAccumulator(1.5 * 0x1p-149, 0.0, 23, kNearest),
             double(static_cast<float>(1.5 * 0x1p-149)));
    // Past float32's largest value: nearest overflows, truncation stops at the largest value.
    const double fmax = std::numeric_limits<float>::max();
    const double halfUlp = 0x1p103; // half of FLT_MAX's ulp (2^104)
    QVERIFY(std::isinf(roundToAccumulator(fmax + halfUlp, 0.0, 23, kNearest)));
    QCOMPARE(roundToAccumulator(fmax + halfUlp, 0.0, 23, kTruncate), fmax);
    QCOMPARE(roundToAccumulator(fmax + halfUlp / 2, 0.0, 23, kNearest), fmax);
}

void TstFp8Training::bits23NearestIsFloat32Fma()
{
    // Every step of a float32 fused multiply-add chain, against an independent fmaf, bit for bit,
    // over products and sums of every size (cancellations included).
    Rng rng(7);
    float acc = 0.0f;
    int checked = 0;
    for (int i = 0; i < 200000; ++i) {
        const auto draw = [&] {
            const double m = rng.uniform() * 2.0 - 1.0;
            const int e = static_cast<int>(rng.below(40)) - 20;
            return static_cast<float>(std::ldexp(m, e));
        };
        const float a = draw();
        const float b = draw();
        if (i % 1000 == 0)
            acc = draw();
        const float expected = std::fma(a, b, acc);
        const double got = roundSum(double(acc), double(a) * double(b), 23, kNearest);
        if (!sameBits(got, double(expected)))
            QFAIL(qPrintable(QString("fmaf(%1, %2, %3) = %4, accumulator gives %5")
                                 .arg(double(a), 0, 'g', 9)
                                 .arg(double(b), 0, 'g', 9)
                                 .arg(double(acc), 0, 'g', 9)
                                 .arg(double(expected), 0, 'g', 9)
                                 .arg(got, 0, 'g', 17)));
        acc = expected;
        ++checked;
    }
    QCOMPARE(checked, 200000);
}

void TstFp8Training::limited23EqualsFloat32()
{
    Fp8AccumulationInputs in;
    in.kMin = 64;
    in.kMax = 4096;
    in.accumulatorBits = 23;
    in.rounding = kNearest;
    in.outputs = 8;
    for (std::int64_t seed : {1, 2, 3}) {
        in.seed = seed;
        const Fp8AccumulationResult r = run(in);
        QCOMPARE(r.points.size(), std::size_t(7));
        for (const Fp8AccumulationPoint& p : r.points) {
            QVERIFY(sameBits(p.maxRelativeError[kLimited], p.maxRelativeError[kFloat32]));
            QVERIFY(sameBits(p.rmsRelativeError[kLimited], p.rmsRelativeError[kFloat32]));
            // From K = 1024 on float32 does round: the match is not of two exact sums.
            if (p.k >= 1024)
                QVERIFY(p.rmsRelativeError[kFloat32] > 0);
        }
    }
}

void TstFp8Training::promotionEveryProductEqualsFloat32()
{
    // A product of two E4M3 values with power-of-two scales has at most 8 significant bits, so an
    // accumulator of >= 7 fraction bits takes it exactly; promoted at once, it is fmaf's sum.
    for (AccumulatorRounding r : {kNearest, kTruncate, AccumulatorRounding::AlignedBlock})
        for (std::int64_t bits : {7, 13}) {
            Fp8AccumulationInputs in;
            in.kMin = 256;
            in.kMax = 2048;
            in.accumulatorBits = bits;
            in.promotionInterval = 1;
            in.rounding = r;
            in.outputs = 8;
            for (const Fp8AccumulationPoint& p : run(in).points) {
                QVERIFY(sameBits(p.maxRelativeError[kPromoted], p.maxRelativeError[kFloat32]));
                QVERIFY(sameBits(p.rmsRelativeError[kPromoted], p.rmsRelativeError[kFloat32]));
                // ... while the same accumulator without promotion is far worse.
                QVERIFY(p.rmsRelativeError[kLimited] > 100 * p.rmsRelativeError[kFloat32]);
            }
        }
}

void TstFp8Training::errorGrowsWithoutPromotionAndStaysFlatWithIt()
{
    Fp8AccumulationInputs in;
    in.kMin = 256;
    in.kMax = 16384;
    in.accumulatorBits = 13;
    in.promotionInterval = 128;
    in.rounding = kNearest;
    in.outputs = 16;
    for (std::int64_t seed : {1, 5}) {
        in.seed = seed;
        const Fp8AccumulationResult r = run(in);
        QCOMPARE(r.points.size(), std::size_t(7));
        for (const Fp8AccumulationPoint& p : r.points) {
            // Within a factor of 3 of the model (predictedRms): 256 outputs are a small sample,
            // and the partial sums' sizes are not exactly log-uniform.
            const double limited = p.rmsRelativeError[kLimited] / predictedRms(p.k, 13);
            const double promoted = p.rmsRelativeError[kPromoted] / predictedRms(128, 13);
            QVERIFY2(limited > 1.0 / 3 && limited < 3,
                     qPrintable(QString("K %1: limited %2 x the model").arg(p.k).arg(limited)));
            QVERIFY2(promoted > 1.0 / 3 && promoted < 3,
                     qPrintable(QString("K %1: promoted %2 x the model").arg(p.k).arg(promoted)));
        }
        // sqrt(K): 64 times the products, 8 times the error; promoted it stays where it was.
        const Fp8AccumulationPoint& first = r.points.front();
        const Fp8AccumulationPoint& last = r.points.back();
        QVERIFY(last.rmsRelativeError[kLimited] > 4 * first.rmsRelativeError[kLimited]);
        QVERIFY(last.rmsRelativeError[kPromoted] < 2 * first.rmsRelativeError[kPromoted]);
        QVERIFY(last.rmsRelativeError[kPromoted] > first.rmsRelativeError[kPromoted] / 2);
        QVERIFY(last.maxRelativeError[kLimited] > 4 * first.maxRelativeError[kLimited]);
    }
}

void TstFp8Training::truncationGrowsFasterThanRounding()
{
    // Cut toward zero after every product, each addition errs by up to a whole step, always
    // toward zero: the errors add up instead of cancelling, so the error grows like K, not
    // sqrt(K): from K = 256 to 16384 by far more than the 8 times of rounding to nearest.
    Fp8AccumulationInputs in;
    in.accumulatorBits = 13;
    in.rounding = kTruncate;
    in.outputs = 16;
    const Fp8AccumulationResult cut = run(in);
    in.rounding = kNearest;
    const Fp8AccumulationResult nearest = run(in);
    const double cutGrowth = cut.points.back().rmsRelativeError[kLimited]
        / cut.points.front().rmsRelativeError[kLimited];
    QVERIFY2(cutGrowth > 30, qPrintable(QString::number(cutGrowth)));
    QVERIFY(cut.points.back().rmsRelativeError[kLimited]
            > 10 * nearest.points.back().rmsRelativeError[kLimited]);
}

void TstFp8Training::alignedBlockIsLimited()
{
    // The H100-like accumulator loses precision like the others (13 bits: errors near 2^-13
    // relative, far above float32's 2^-24) and promotion helps it the same way.
    Fp8AccumulationInputs in;
    in.kMin = in.kMax = 4096;
    const Fp8AccumulationResult r = run(in);
    QCOMPARE(r.points.size(), std::size_t(1));
    const Fp8AccumulationPoint& p = r.points.front();
    QVERIFY(p.maxRelativeError[kLimited] > 0x1p-13);
    QVERIFY(p.maxRelativeError[kLimited] < 0.05);
    QVERIFY(p.rmsRelativeError[kPromoted] < p.rmsRelativeError[kLimited] / 3);
    QVERIFY(p.rmsRelativeError[kFloat32] < 0x1p-20);
}

namespace {

/// The operand of the experiment as docs/CLI.md defines it: standard normals scaled per 1 x 16
/// block by a power of two and rounded to E4M3.
MatrixF operand(std::int64_t outputs, std::int64_t k, std::int64_t seed)
{
    Fp8Inputs gen;
    gen.rows = outputs;
    gen.cols = k;
    gen.seed = seed;
    gen.blockSize = 1;
    Fp8Scaling scaling;
    scaling.blockRows = 1;
    scaling.blockCols = 16;
    scaling.powerOfTwoScale = true;
    return fp8BlockQuantize(fp8NormalMatrix(gen), Fp8Format::E4M3, scaling, Fp8Overflow::Saturate)
        .dequantized;
}

/// One AlignedBlock step by its definition: align to the largest exponent of the accumulator and
/// the products, cut each to `bits` fraction bits of it, add, and let the accumulator keep the sum
/// cut toward zero (roundToAccumulator's Truncate on an exact sum).
double alignedStep(double acc, const std::vector<double>& products, int bits)
{
    double largest = std::abs(acc);
    for (double p : products)
        largest = std::max(largest, std::abs(p));
    if (largest == 0)
        return 0;
    const int step = std::max(std::ilogb(largest) - bits, -149);
    const auto cut = [step](double x) {
        return std::trunc(std::ldexp(x, -step));
    };
    double sum = cut(acc);
    for (double p : products)
        sum += cut(p);
    return roundToAccumulator(std::ldexp(sum, step), 0.0, bits, kTruncate);
}

} // namespace

namespace {

/// One output of the AlignedBlock experiment worked from the definitions: float32 fmaf, the
/// limited accumulator over blocks of 32 products, the same accumulator restarted and added into
/// float32 every `interval` products, and the float64 reference as TwoSum gives it.
std::array<double, 4> alignedOutput(const float* a, const float* b, std::int64_t k, int bits,
                                    std::int64_t interval)
{
    float plain = 0, promoted = 0;
    double limited = 0, block = 0, hi = 0, lo = 0;
    std::vector<double> limitedBlock, promotedBlock;
    for (std::int64_t x = 0; x < k; ++x) {
        plain = std::fmaf(a[x], b[x], plain);
        const double product = double(a[x]) * double(b[x]);
        limitedBlock.push_back(product);
        promotedBlock.push_back(product);
        if (limitedBlock.size() == 32) {
            limited = alignedStep(limited, limitedBlock, bits);
            limitedBlock.clear();
        }
        if (promotedBlock.size() == 32) {
            block = alignedStep(block, promotedBlock, bits);
            promotedBlock.clear();
        }
        if ((x + 1) % interval == 0 || x + 1 == k) {
            if (!promotedBlock.empty())
                block = alignedStep(block, promotedBlock, bits);
            promotedBlock.clear();
            promoted += static_cast<float>(block);
            block = 0;
        }
        const double s = hi + product;
        const double bv = s - hi;
        lo += (hi - (s - bv)) + (product - bv);
        hi = s;
    }
    if (!limitedBlock.empty())
        limited = alignedStep(limited, limitedBlock, bits);
    return {plain, limited, promoted, hi + lo};
}

} // namespace

void TstFp8Training::alignedBlockFollowsItsDefinition()
{
    // Every mode of the AlignedBlock experiment, output by output, worked here from the public
    // rounding and compared bit for bit. Six outputs: on a processor with AVX2 the program takes
    // four of each row at once, the other two one by one. K = 256 and 1000 (not a whole number
    // of blocks), 8 and 13 bits, promotion every 128 products (four blocks) and every 100 (the
    // blocks and the promotions out of step).
    for (const int bits : {8, 13})
        for (const std::int64_t k : {256, 1000})
            for (const std::int64_t interval : {128, 100}) {
                Fp8AccumulationInputs in;
                in.kMin = in.kMax = k;
                in.accumulatorBits = bits;
                in.outputs = 6;
                in.promotionInterval = interval;
                const MatrixF a = operand(in.outputs, k, in.seed);
                const MatrixF bt = operand(in.outputs, k, in.seed + 1);
                std::array<double, 3> maxError{}, errorSquares{};
                double maxReference = 0, referenceSquares = 0;
                for (Eigen::Index i = 0; i < in.outputs; ++i)
                    for (Eigen::Index j = 0; j < in.outputs; ++j) {
                        const std::array<double, 4> o =
                            alignedOutput(a.row(i).data(), bt.row(j).data(), k, bits, interval);
                        for (int m = 0; m < 3; ++m) {
                            const double e = o[static_cast<std::size_t>(m)] - o[3];
                            maxError[static_cast<std::size_t>(m)] =
                                std::max(maxError[static_cast<std::size_t>(m)], std::abs(e));
                            errorSquares[static_cast<std::size_t>(m)] += e * e;
                        }
                        maxReference = std::max(maxReference, std::abs(o[3]));
                        referenceSquares += o[3] * o[3];
                    }
                const Fp8AccumulationPoint p = run(in).points.front();
                for (int m : {kFloat32, kLimited, kPromoted}) {
                    const auto at = static_cast<std::size_t>(m);
                    QVERIFY(sameBits(p.maxRelativeError[at], maxError[at] / maxReference));
                    QVERIFY(sameBits(p.rmsRelativeError[at],
                                     std::sqrt(errorSquares[at] / referenceSquares)));
                }
                QVERIFY(p.rmsRelativeError[kLimited] > p.rmsRelativeError[kPromoted]);
            }
}

void TstFp8Training::kValues()
{
    Fp8AccumulationInputs in;
    QCOMPARE(accumulationKValues(in),
             (std::vector<std::int64_t>{256, 512, 1024, 2048, 4096, 8192, 16384}));
    in.kMin = 100;
    in.kMax = 1000;
    QCOMPARE(accumulationKValues(in), (std::vector<std::int64_t>{100, 200, 400, 800}));
    in.kMax = 100;
    QCOMPARE(accumulationKValues(in), (std::vector<std::int64_t>{100}));
}

void TstFp8Training::accumulationRefusesBadInput()
{
    const auto refuses = [](auto edit, const std::string& field) {
        Fp8AccumulationInputs in;
        edit(in);
        return throwsInputError([&] { run(in); }, field);
    };
    QVERIFY(refuses([](auto& in) { in.kMin = 0; }, "fp8.accumulation.k_min"));
    QVERIFY(refuses([](auto& in) { in.kMax = 100; }, "fp8.accumulation.k_max"));
    QVERIFY(refuses([](auto& in) { in.kMax = kMaxAccumulationK * 2; }, "fp8.accumulation.k_max"));
    QVERIFY(
        refuses([](auto& in) { in.accumulatorBits = 24; }, "fp8.accumulation.accumulator_bits"));
    QVERIFY(
        refuses([](auto& in) { in.promotionInterval = 0; }, "fp8.accumulation.promotion_interval"));
    QVERIFY(refuses([](auto& in) { in.outputs = 65; }, "fp8.accumulation.outputs"));
    // 64 x 64 outputs of K up to 65536: 2^12 x 2^17 products, past the 2^26 limit.
    QVERIFY(refuses(
        [](auto& in) {
            in.outputs = 64;
            in.kMax = kMaxAccumulationK;
        },
        "fp8.accumulation.outputs"));
    QVERIFY(refuses([](auto& in) { in.seed = -1; }, "fp8.accumulation.seed"));
}

void TstFp8Training::scalesFollowThePolicies()
{
    Fp8PolicyInputs in;
    in.steps = 40;
    in.history = 5;
    in.spikeStep = 20;
    const Fp8PolicyResult r = fp8Policy(in, Fp8Format::E4M3, 16, Fp8Overflow::Saturate);
    QCOMPARE(r.amax.size(), std::size_t(40));
    const float maxValue = 448.0f;
    for (std::size_t s = 0; s < 40; ++s) {
        float window = 0.0f;
        for (std::size_t h = s >= 5 ? s - 5 : 0; h < s; ++h)
            window = std::max(window, r.amax[h]);
        const float delayed = (s == 0 ? r.amax[0] : window) / maxValue;
        QCOMPARE(r.steps[0][s].scale, delayed);
        QCOMPARE(r.steps[1][s].scale, r.amax[s] / maxValue);
        // The fine tiles' largest scale is the tile that holds the tensor's amax.
        QCOMPARE(r.steps[2][s].scale, r.amax[s] / maxValue);
    }
    QVERIFY(r.amax[20] > 1000 * r.amax[19]); // the spike of 10000 on 16 values
}

void TstFp8Training::delayedSaturatesAtTheSpikeCurrentDoesNot()
{
    Fp8PolicyInputs in;
    const Fp8PolicyResult r = fp8Policy(in, Fp8Format::E4M3, 16, Fp8Overflow::Saturate);
    const auto spike = static_cast<std::size_t>(in.spikeStep);
    // The 16 spiked values are about 10000 sigma against a scale made for about 4 sigma.
    QVERIFY(r.steps[0][spike].saturated >= 12);
    QVERIFY(r.steps[0][spike].saturated <= kPolicySpikeValues);
    QVERIFY(r.steps[0][spike].relativeError > 0.5);
    for (std::size_t s = 0; s < r.amax.size(); ++s) {
        // A scale of max|x| / max_value maps the largest value onto max_value: none passes it.
        QCOMPARE(r.steps[1][s].saturated, std::int64_t(0));
        QCOMPARE(r.steps[2][s].saturated, std::int64_t(0));
    }
    // With the NaN rule the saturated values become NaN: the error is no number at all.
    const Fp8PolicyResult nan = fp8Policy(in, Fp8Format::E4M3, 16, Fp8Overflow::NaN);
    QCOMPARE(nan.steps[0][spike].saturated, r.steps[0][spike].saturated);
    QVERIFY(std::isnan(nan.steps[0][spike].relativeError));
    QVERIFY(!std::isnan(nan.steps[1][spike].relativeError));
}

void TstFp8Training::delayedRemembersTheSpikeForItsHistory()
{
    // After the spike, delayed scaling's window holds the spike's amax for `history` steps: a
    // scale about 2500 times too large, so the ordinary values (|x / scale| about 0.013 for
    // x = 1) sit in E4M3's subnormals, where the step stays 2^-9, and the smallest (|x| below
    // about 0.05) are flushed: some 4 % of the values. They are the small ones, with little of
    // the tensor's energy, so the relative error rises by about a quarter (0.026 to 0.033 on
    // this seed). Then the spike leaves the window: as before.
    Fp8PolicyInputs in;
    in.history = 8;
    const Fp8PolicyResult r = fp8Policy(in, Fp8Format::E4M3, 16, Fp8Overflow::Saturate);
    const auto spike = static_cast<std::size_t>(in.spikeStep);
    for (std::size_t s = spike + 1; s <= spike + 8; ++s) {
        QVERIFY(r.steps[0][s].flushed > 100);
        QVERIFY(r.steps[0][s].relativeError > 1.15 * r.steps[1][s].relativeError);
        QCOMPARE(r.steps[1][s].flushed, std::int64_t(0));
    }
    for (std::size_t s = spike + 9; s < r.amax.size(); ++s)
        QVERIFY(r.steps[0][s].relativeError < 2 * r.steps[1][s].relativeError);
    // Per tensor, the spike step itself costs the rest of that tensor the same way; the fine
    // tiles keep it to the spiked tile.
    QVERIFY(r.steps[1][spike].flushed > 100);
    QCOMPARE(r.steps[2][spike].flushed, std::int64_t(0));
}

void TstFp8Training::growthOutrunsDelayedScaling()
{
    // Growing 10 % a step, this step's largest value is typically 1.1 times the window's
    // (the last step's): past 464 / 448 = 1.036 it saturates. The largest of 4096 normals
    // varies by a few per cent from step to step too, so most steps saturate, not all.
    // Current scaling never does.
    Fp8PolicyInputs in;
    in.spike = 1;
    in.drift = 0.1;
    const Fp8PolicyResult r = fp8Policy(in, Fp8Format::E4M3, 16, Fp8Overflow::Saturate);
    int saturatedSteps = 0;
    for (std::size_t s = 1; s < r.amax.size(); ++s) {
        saturatedSteps += r.steps[0][s].saturated > 0;
        QCOMPARE(r.steps[1][s].saturated, std::int64_t(0));
    }
    QVERIFY2(saturatedSteps > 32, qPrintable(QString::number(saturatedSteps)));
}

void TstFp8Training::policyRefusesBadInput()
{
    const auto refuses = [](auto edit, const std::string& field) {
        Fp8PolicyInputs in;
        edit(in);
        return throwsInputError([&] { fp8Policy(in, Fp8Format::E4M3, 16, Fp8Overflow::Saturate); },
                                field);
    };
    QVERIFY(refuses([](auto& in) { in.steps = 0; }, "fp8.policy.steps"));
    QVERIFY(refuses([](auto& in) { in.spike = 0.5; }, "fp8.policy.spike"));
    QVERIFY(refuses([](auto& in) { in.spike = std::nan(""); }, "fp8.policy.spike"));
    QVERIFY(refuses([](auto& in) { in.drift = 2; }, "fp8.policy.drift"));
    QVERIFY(refuses([](auto& in) { in.history = 0; }, "fp8.policy.history"));
    QVERIFY(refuses([](auto& in) { in.cols = 0; }, "fp8.policy.cols"));
    QVERIFY(refuses(
        [](auto& in) {
            in.steps = 4096;
            in.rows = 4096;
        },
        "fp8.policy.steps"));
    // A spike step past the last step is no spike at all, not an error.
    Fp8PolicyInputs late;
    late.spikeStep = 100;
    const Fp8PolicyResult r = fp8Policy(late, Fp8Format::E4M3, 16, Fp8Overflow::Saturate);
    for (const Fp8PolicyStep& st : r.steps[0])
        QVERIFY(st.relativeError < 0.1);
}

QTEST_APPLESS_MAIN(TstFp8Training)
#include "tst_fp8training.moc"
