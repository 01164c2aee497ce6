// Tests of the FP8 formats and block scaling. Expected values come from the OCP format
// definitions (written out below, independently of core's tables), from a brute-force
// nearest-value search, or from hand-worked small cases.

#include "scalelab/core/error.h"
#include "scalelab/core/fp8.h"
#include "scalelab/core/random.h"
#include "testhelpers.h"

#include <QTest>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

using namespace scalelab::core;

Q_DECLARE_METATYPE(scalelab::core::Fp8Format)
Q_DECLARE_METATYPE(scalelab::core::Fp8Overflow)
using Action = std::function<void()>;
Q_DECLARE_METATYPE(Action)

namespace {

std::uint32_t bitsOf(float f)
{
    return std::bit_cast<std::uint32_t>(f);
}
float floatOf(std::uint32_t b)
{
    return std::bit_cast<float>(b);
}

/// Exact equality of doubles (QCOMPARE on floating point is fuzzy): same bits, or both NaN.
bool sameDouble(double a, double b)
{
    return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b)
        || (std::isnan(a) && std::isnan(b));
}

QString describe(double a)
{
    return QString::number(a, 'g', 17);
}

/// Same shape and the same bits in every entry.
bool sameMatrix(const MatrixF& a, const MatrixF& b)
{
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return false;
    for (Eigen::Index k = 0; k < a.size(); ++k)
        if (std::bit_cast<std::uint32_t>(a.data()[k]) != std::bit_cast<std::uint32_t>(b.data()[k]))
            return false;
    return true;
}

/// A sum of float64 terms in the order the quantizer documents (Fp8Stats): chunks of 4096
/// terms, inside a chunk 8 lanes (term j in lane j mod 8) each added in index order, the lanes
/// added lane 0 first, then the chunks in order.
double documentedSum(const std::vector<double>& terms)
{
    double total = 0.0;
    for (std::size_t c = 0; c < terms.size(); c += 4096) {
        double lanes[8] = {};
        for (std::size_t j = c; j < std::min(terms.size(), c + 4096); ++j)
            lanes[(j - c) % 8] += terms[j];
        double chunk = 0.0;
        for (double lane : lanes)
            chunk += lane;
        total += chunk;
    }
    return total;
}

constexpr float kFloatMax = std::numeric_limits<float>::max();
constexpr float kInf = std::numeric_limits<float>::infinity();

/// The format definitions, written out on their own: bit widths, bias, and which codes are
/// special. Nothing here is taken from core.
struct Def {
    int mantBits;
    int bias;
    bool e5m2;
    int maxCode; // magnitude code of the largest finite value (0x7E / 0x7B)
    double beyond; // the value one step past the largest finite, had the range gone on
    int beyondCode; // its code-shaped index, whose parity is that of its mantissa
    int nanSatCode; // the NaN code NaN mode gives on overflow (E4M3) or infinity code (E5M2)
};

Def defOf(Fp8Format f)
{
    if (f == Fp8Format::E4M3)
        return {3, 7, false, 0x7E, 480.0, 0x7F, 0x7F}; // 480 = 1.111b * 2^8, odd mantissa
    return {2, 15, true, 0x7B, 65536.0, 0x7C, 0x7C}; // 65536 = 1.00b * 2^16, even mantissa
}

/// Value of a code straight from the definition: (-1)^s 2^(E-bias) (1 + m / 2^M), subnormals
/// m / 2^M * 2^(1-bias); E4M3 S.1111.111 is NaN; E5M2 exponent 31 is infinity (m = 0) or NaN.
double refValue(int code, Fp8Format f)
{
    const Def d = defOf(f);
    const double sign = (code & 0x80) ? -1.0 : 1.0;
    const int mag = code & 0x7F;
    const int e = mag >> d.mantBits;
    const int m = mag & ((1 << d.mantBits) - 1);
    const int eAllOnes = (1 << (7 - d.mantBits)) - 1;
    if (!d.e5m2 && mag == 0x7F)
        return std::numeric_limits<double>::quiet_NaN();
    if (d.e5m2 && e == eAllOnes)
        return m == 0 ? sign * std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::quiet_NaN();
    if (e == 0)
        return sign * std::ldexp(m, 1 - d.bias - d.mantBits);
    return sign * std::ldexp((1 << d.mantBits) + m, e - d.bias - d.mantBits);
}

/// The magnitudes 0..beyondCode (the last one standing for "past the maximum"), built once.
const std::vector<double>& refMagnitudes(Fp8Format f)
{
    static const auto build = [](Fp8Format g) {
        const Def d = defOf(g);
        std::vector<double> t;
        for (int k = 0; k < d.beyondCode; ++k)
            t.push_back(refValue(k, g));
        t.push_back(d.beyond);
        return t;
    };
    static const std::vector<double> e4m3 = build(Fp8Format::E4M3);
    static const std::vector<double> e5m2 = build(Fp8Format::E5M2);
    return f == Fp8Format::E4M3 ? e4m3 : e5m2;
}

/// Brute-force encoder for non-NaN input: the nearest of all finite magnitudes (plus the value
/// just past the maximum, which stands for overflow), ties to the even code.
int refEncode(float x, Fp8Format f, Fp8Overflow mode)
{
    const Def d = defOf(f);
    const int sign = std::signbit(x) ? 0x80 : 0x00;
    const double ax = std::fabs(static_cast<double>(x));
    int best = -1;
    if (ax >= d.beyond) {
        best = d.beyondCode;
    } else {
        // Distances to the two neighbours are exact in double (Sterbenz), so ties are found.
        const std::vector<double>& table = refMagnitudes(f);
        double bestDist = std::numeric_limits<double>::infinity();
        for (int k = 0; k <= d.beyondCode; ++k) {
            const double v = table[static_cast<std::size_t>(k)];
            const double dist = std::fabs(ax - v);
            if (dist < bestDist || (dist == bestDist && k % 2 == 0)) {
                bestDist = dist;
                best = k;
            }
        }
    }
    if (best == d.beyondCode) {
        if (std::isinf(x) && d.e5m2)
            return sign | 0x7C;
        return sign | (mode == Fp8Overflow::Saturate ? d.maxCode : d.nanSatCode);
    }
    return sign | best;
}

float refQuantize(float x, Fp8Format f)
{
    return static_cast<float>(refValue(refEncode(x, f, Fp8Overflow::Saturate), f));
}

bool isPowerOfTwo(float f)
{
    const std::uint32_t b = bitsOf(f);
    if (b == 0 || (b >> 31))
        return false;
    if ((b >> 23) == 0)
        return std::has_single_bit(b); // float32 subnormal
    return (b & 0x7FFFFF) == 0 && (b >> 23) != 0xFF;
}

MatrixF rowOf(std::initializer_list<float> values)
{
    MatrixF m(1, static_cast<Eigen::Index>(values.size()));
    Eigen::Index j = 0;
    for (float v : values)
        m(0, j++) = v;
    return m;
}

void addFormatRows()
{
    QTest::addColumn<Fp8Format>("format");
    QTest::newRow("e4m3") << Fp8Format::E4M3;
    QTest::newRow("e5m2") << Fp8Format::E5M2;
}

} // namespace

#define VERIFY_SAME_DOUBLE(got, expected)                                                          \
    QVERIFY2(sameDouble((got), (expected)),                                                        \
             qPrintable(describe(got) + QStringLiteral(" != ") + describe(expected)))

class TstFp8 : public QObject {
    Q_OBJECT

private slots:
    void roundTripAllCodes_data();
    void roundTripAllCodes();
    void decodeMatchesDefinition_data() { addFormatRows(); }
    void decodeMatchesDefinition();
    void decodeTable_data();
    void decodeTable();
    void decodeNaNAndNegativeZero_data() { addFormatRows(); }
    void decodeNaNAndNegativeZero();
    void formatConstants();
    void tiesToEven_data() { addFormatRows(); }
    void tiesToEven();
    void overflow_data();
    void overflow();
    void smallestSubnormals_data() { addFormatRows(); }
    void smallestSubnormals();
    void nanEncoding_data();
    void nanEncoding();
    void encodeMatchesBruteForce_data() { addFormatRows(); }
    void encodeMatchesBruteForce();
    void matrixRoundTripMatchesScalar_data() { addFormatRows(); }
    void matrixRoundTripMatchesScalar();
    void quantizeIntoReusesBuffers();
    void blockErrorsOfManyBlocks();

    void chapterExample();
    void outlierBlockUnderflowsPerTensor();
    void tinyAndZeroTiles();
    void statsMatchDefinition();
    void generatedMatrix();
    void normalChunksDoNotDependOnShape();
    void severalScalingsAtOnce();
    void orderByMagnitudeOfManyBlocks();
    void groupedTilesMatchScalar();
    void outlierBlocksAndCopies();
    void workspaceMatchesFreeFunctions();
    void workspaceOrdersAsTheFullSort();
    void workspaceOutlierListIsTheGenerators();
    void bandMaximaFindTheLargestValue();
    void errorPictureMatchesBoth();
    void generatedAlwaysHasAnOutlier();
    void perTensorVsPerBlock_data();
    void perTensorVsPerBlock();
    void tileShapes_data();
    void tileShapes();
    void powerOfTwoScales_data();
    void powerOfTwoScales();
    void powerOfTwoScaleTiles();
    void doubleToFloatRounding();
    void minNormal();
    void plainCast_data();
    void plainCast();
    void scaledGrid();
    void blockErrorsAndOrder();
    void statsExcludingBlocks();
    void absErrorMap();

    void badInputsNameTheirFields_data();
    void badInputsNameTheirFields();
    void goodInputsPass();
};

void TstFp8::roundTripAllCodes_data()
{
    QTest::addColumn<Fp8Format>("format");
    QTest::addColumn<Fp8Overflow>("mode");
    QTest::newRow("e4m3 saturate") << Fp8Format::E4M3 << Fp8Overflow::Saturate;
    QTest::newRow("e4m3 nan-mode") << Fp8Format::E4M3 << Fp8Overflow::NaN;
    QTest::newRow("e5m2 saturate") << Fp8Format::E5M2 << Fp8Overflow::Saturate;
    QTest::newRow("e5m2 nan-mode") << Fp8Format::E5M2 << Fp8Overflow::NaN;
}

void TstFp8::roundTripAllCodes()
{
    QFETCH(Fp8Format, format);
    QFETCH(Fp8Overflow, mode);
    // Every code, NaNs and infinities included, decodes and re-encodes to itself.
    for (int code = 0; code < 256; ++code) {
        const auto c = static_cast<std::uint8_t>(code);
        QCOMPARE(int(fp8Encode(fp8Decode(c, format), format, mode)), code);
    }
}

void TstFp8::decodeMatchesDefinition()
{
    QFETCH(Fp8Format, format);
    for (int code = 0; code < 256; ++code) {
        const double expected = refValue(code, format);
        const float got = fp8Decode(static_cast<std::uint8_t>(code), format);
        VERIFY_SAME_DOUBLE(static_cast<double>(got), expected);
        // The sign bit is the code's sign bit, for zeros and NaNs too.
        QCOMPARE(std::signbit(got), (code & 0x80) != 0);
    }
}

void TstFp8::decodeTable_data()
{
    QTest::addColumn<Fp8Format>("format");
    QTest::addColumn<int>("code");
    QTest::addColumn<double>("expected");
    const auto e4 = Fp8Format::E4M3;
    const auto e5 = Fp8Format::E5M2;
    // E4M3: S EEEE MMM, bias 7. Subnormal step 2^-6 / 8 = 2^-9.
    QTest::newRow("e4m3 zero") << e4 << 0x00 << 0.0;
    QTest::newRow("e4m3 smallest subnormal") << e4 << 0x01 << 0.001953125; // 2^-9
    QTest::newRow("e4m3 largest subnormal") << e4 << 0x07 << 0.013671875; // 7 * 2^-9
    QTest::newRow("e4m3 smallest normal") << e4 << 0x08 << 0.015625; // 2^-6
    QTest::newRow("e4m3 one") << e4 << 0x38 << 1.0; // 0 0111 000
    QTest::newRow("e4m3 1.125") << e4 << 0x39 << 1.125; // 0 0111 001
    QTest::newRow("e4m3 largest finite") << e4 << 0x7E << 448.0; // 0 1111 110
    QTest::newRow("e4m3 1111.000") << e4 << 0x78 << 256.0; // a normal code
    QTest::newRow("e4m3 minus one") << e4 << 0xB8 << -1.0;
    QTest::newRow("e4m3 minus largest") << e4 << 0xFE << -448.0;
    QTest::newRow("e4m3 minus smallest subnormal") << e4 << 0x81 << -0.001953125;
    // E5M2: S EEEEE MM, bias 15. Subnormal step 2^-14 / 4 = 2^-16.
    QTest::newRow("e5m2 zero") << e5 << 0x00 << 0.0;
    QTest::newRow("e5m2 smallest subnormal") << e5 << 0x01 << 1.52587890625e-05; // 2^-16
    QTest::newRow("e5m2 largest subnormal") << e5 << 0x03 << 4.57763671875e-05; // 3 * 2^-16
    QTest::newRow("e5m2 smallest normal") << e5 << 0x04 << 6.103515625e-05; // 2^-14
    QTest::newRow("e5m2 one") << e5 << 0x3C << 1.0; // 0 01111 00
    QTest::newRow("e5m2 1.25") << e5 << 0x3D << 1.25;
    QTest::newRow("e5m2 largest finite") << e5 << 0x7B << 57344.0; // 0 11110 11
    QTest::newRow("e5m2 minus 1.5") << e5 << 0xBE << -1.5;
    QTest::newRow("e5m2 infinity") << e5 << 0x7C << std::numeric_limits<double>::infinity();
    QTest::newRow("e5m2 minus infinity") << e5 << 0xFC << -std::numeric_limits<double>::infinity();
}

void TstFp8::decodeTable()
{
    QFETCH(Fp8Format, format);
    QFETCH(int, code);
    QFETCH(double, expected);
    const float got = fp8Decode(static_cast<std::uint8_t>(code), format);
    VERIFY_SAME_DOUBLE(static_cast<double>(got), expected);
}

void TstFp8::decodeNaNAndNegativeZero()
{
    QFETCH(Fp8Format, format);
    const float negZero = fp8Decode(0x80, format);
    QCOMPARE(bitsOf(negZero), 0x80000000u);
    const std::vector<int> nans = (format == Fp8Format::E4M3)
        ? std::vector<int>{0x7F, 0xFF}
        : std::vector<int>{0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF};
    for (int n : nans) {
        const float v = fp8Decode(static_cast<std::uint8_t>(n), format);
        QVERIFY(std::isnan(v));
        QCOMPARE(std::signbit(v), (n & 0x80) != 0);
    }
    // E4M3 has no infinity: 0 1111 000 is the finite 256 (checked above), not infinity.
}

void TstFp8::formatConstants()
{
    QCOMPARE(bitsOf(fp8MaxValue(Fp8Format::E4M3)), bitsOf(448.0f));
    QCOMPARE(bitsOf(fp8MaxValue(Fp8Format::E5M2)), bitsOf(57344.0f));
    QCOMPARE(bitsOf(fp8MinSubnormal(Fp8Format::E4M3)), bitsOf(std::ldexp(1.0f, -9)));
    QCOMPARE(bitsOf(fp8MinSubnormal(Fp8Format::E5M2)), bitsOf(std::ldexp(1.0f, -16)));
}

void TstFp8::tiesToEven()
{
    QFETCH(Fp8Format, format);
    const Def d = defOf(format);
    for (int c = 0; c < d.maxCode; ++c) {
        const double lo = refValue(c, format);
        const double hi = refValue(c + 1, format);
        const double mid = (lo + hi) / 2.0;
        const auto midF = static_cast<float>(mid);
        QCOMPARE(static_cast<double>(midF), mid); // two FP8 steps fit in float32's 24 bits
        const int even = (c % 2 == 0) ? c : c + 1; // the code's last bit is the mantissa's
        const float above = std::nextafter(midF, kInf);
        const float below = std::nextafter(midF, 0.0f);
        for (int sign : {0x00, 0x80}) {
            const float s = sign ? -1.0f : 1.0f;
            for (Fp8Overflow mode : {Fp8Overflow::Saturate, Fp8Overflow::NaN}) {
                QCOMPARE(int(fp8Encode(s * midF, format, mode)), sign | even);
                QCOMPARE(int(fp8Encode(s * above, format, mode)), sign | (c + 1));
                QCOMPARE(int(fp8Encode(s * below, format, mode)), sign | c);
            }
            const float q = fp8Quantize(s * midF, format);
            QCOMPARE(bitsOf(q), bitsOf(static_cast<float>(refValue(sign | even, format))));
        }
    }
}

void TstFp8::overflow_data()
{
    QTest::addColumn<Fp8Format>("format");
    QTest::addColumn<Fp8Overflow>("mode");
    QTest::addColumn<float>("input");
    QTest::addColumn<int>("expected");
    const auto e4 = Fp8Format::E4M3;
    const auto e5 = Fp8Format::E5M2;
    const auto sat = Fp8Overflow::Saturate;
    const auto nan = Fp8Overflow::NaN;
    // E4M3: max 448 (0x7E); the step there is 32, so 464 is the midpoint to the (missing) 480.
    // 448 has the even mantissa 110, so 464 rounds down to it; past 464 is overflow.
    QTest::newRow("e4m3 449 sat") << e4 << sat << 449.0f << 0x7E;
    QTest::newRow("e4m3 449 nan") << e4 << nan << 449.0f << 0x7E;
    QTest::newRow("e4m3 just below 464 nan") << e4 << nan << std::nextafter(464.0f, 0.0f) << 0x7E;
    QTest::newRow("e4m3 464 tie nan") << e4 << nan << 464.0f << 0x7E;
    QTest::newRow("e4m3 just above 464 nan") << e4 << nan << std::nextafter(464.0f, kInf) << 0x7F;
    QTest::newRow("e4m3 just above 464 sat") << e4 << sat << std::nextafter(464.0f, kInf) << 0x7E;
    QTest::newRow("e4m3 500 sat") << e4 << sat << 500.0f << 0x7E;
    QTest::newRow("e4m3 1e30 sat") << e4 << sat << 1e30f << 0x7E;
    QTest::newRow("e4m3 1e30 nan") << e4 << nan << 1e30f << 0x7F;
    QTest::newRow("e4m3 float max sat") << e4 << sat << kFloatMax << 0x7E;
    QTest::newRow("e4m3 float max nan") << e4 << nan << kFloatMax << 0x7F;
    QTest::newRow("e4m3 inf sat") << e4 << sat << kInf << 0x7E;
    QTest::newRow("e4m3 inf nan") << e4 << nan << kInf << 0x7F;
    QTest::newRow("e4m3 -inf sat") << e4 << sat << -kInf << 0xFE;
    QTest::newRow("e4m3 -inf nan") << e4 << nan << -kInf << 0xFF;
    QTest::newRow("e4m3 -1e30 sat") << e4 << sat << -1e30f << 0xFE;
    QTest::newRow("e4m3 -1e30 nan") << e4 << nan << -1e30f << 0xFF;
    // E5M2: max 57344 = 1.11b * 2^15, step 8192; the midpoint 61440 ties to the even 65536,
    // which does not exist: overflow.
    QTest::newRow("e5m2 60000 sat") << e5 << sat << 60000.0f << 0x7B;
    QTest::newRow("e5m2 60000 nan") << e5 << nan << 60000.0f << 0x7B;
    QTest::newRow("e5m2 below 61440 nan") << e5 << nan << std::nextafter(61440.0f, 0.0f) << 0x7B;
    QTest::newRow("e5m2 61440 tie sat") << e5 << sat << 61440.0f << 0x7B;
    QTest::newRow("e5m2 61440 tie nan") << e5 << nan << 61440.0f << 0x7C;
    QTest::newRow("e5m2 1e30 sat") << e5 << sat << 1e30f << 0x7B;
    QTest::newRow("e5m2 1e30 nan") << e5 << nan << 1e30f << 0x7C;
    QTest::newRow("e5m2 float max sat") << e5 << sat << kFloatMax << 0x7B;
    QTest::newRow("e5m2 -float max nan") << e5 << nan << -kFloatMax << 0xFC;
    QTest::newRow("e5m2 inf sat") << e5 << sat << kInf << 0x7C;
    QTest::newRow("e5m2 inf nan") << e5 << nan << kInf << 0x7C;
    QTest::newRow("e5m2 -inf sat") << e5 << sat << -kInf << 0xFC;
}

void TstFp8::overflow()
{
    QFETCH(Fp8Format, format);
    QFETCH(Fp8Overflow, mode);
    QFETCH(float, input);
    QFETCH(int, expected);
    QCOMPARE(int(fp8Encode(input, format, mode)), expected);
    // fp8Quantize is the decode of the same code.
    const float q = fp8Quantize(input, format, mode);
    VERIFY_SAME_DOUBLE(static_cast<double>(q), refValue(expected, format));
}

void TstFp8::smallestSubnormals()
{
    QFETCH(Fp8Format, format);
    const int minExp = (format == Fp8Format::E4M3) ? -9 : -16;
    const float tiny = std::ldexp(1.0f, minExp);
    const float half = std::ldexp(1.0f, minExp - 1);
    QCOMPARE(int(fp8Encode(tiny, format)), 0x01);
    QCOMPARE(int(fp8Encode(-tiny, format)), 0x81);
    QCOMPARE(bitsOf(fp8Quantize(tiny, format)), bitsOf(tiny));
    // Exactly half the smallest subnormal is a tie between 0 (even) and 0x01: zero, signed.
    QCOMPARE(int(fp8Encode(half, format)), 0x00);
    QCOMPARE(int(fp8Encode(-half, format)), 0x80);
    QCOMPARE(bitsOf(fp8Quantize(-half, format)), 0x80000000u);
    // Just above half rounds up; just below stays zero.
    QCOMPARE(int(fp8Encode(std::nextafter(half, 1.0f), format)), 0x01);
    QCOMPARE(int(fp8Encode(-std::nextafter(half, 1.0f), format)), 0x81);
    QCOMPARE(int(fp8Encode(std::nextafter(half, 0.0f), format)), 0x00);
    // Three quarters of the step rounds up, one and a half is a tie to the even 2 (0x02).
    QCOMPARE(int(fp8Encode(0.75f * tiny, format)), 0x01);
    QCOMPARE(int(fp8Encode(1.5f * tiny, format)), 0x02);
    // float32 subnormals are far below: zero with their sign.
    const float denormMin = std::numeric_limits<float>::denorm_min();
    QCOMPARE(int(fp8Encode(denormMin, format)), 0x00);
    QCOMPARE(int(fp8Encode(-denormMin, format)), 0x80);
    // Signed zeros.
    QCOMPARE(int(fp8Encode(0.0f, format)), 0x00);
    QCOMPARE(int(fp8Encode(-0.0f, format)), 0x80);
    QCOMPARE(bitsOf(fp8Decode(0x80, format)), 0x80000000u);
    QCOMPARE(bitsOf(fp8Quantize(-0.0f, format)), 0x80000000u);
}

void TstFp8::nanEncoding_data()
{
    QTest::addColumn<Fp8Format>("format");
    QTest::addColumn<quint32>("inputBits");
    QTest::addColumn<int>("expected");
    const auto e4 = Fp8Format::E4M3;
    const auto e5 = Fp8Format::E5M2;
    // E4M3 has one NaN per sign.
    QTest::newRow("e4m3 quiet") << e4 << 0x7FC00000u << 0x7F;
    QTest::newRow("e4m3 -quiet") << e4 << 0xFFC00000u << 0xFF;
    QTest::newRow("e4m3 signalling") << e4 << 0x7F800001u << 0x7F;
    // E5M2 keeps the float's top two mantissa bits (as float16 conversion does); the default
    // quiet NaN (top bits 10) gives 0x7E, and a NaN with 00 there becomes the quiet 0x7E too.
    QTest::newRow("e5m2 quiet") << e5 << 0x7FC00000u << 0x7E;
    QTest::newRow("e5m2 -quiet") << e5 << 0xFFC00000u << 0xFE;
    QTest::newRow("e5m2 payload 01") << e5 << 0x7FA00000u << 0x7D;
    QTest::newRow("e5m2 payload 11") << e5 << 0x7FE00001u << 0x7F;
    QTest::newRow("e5m2 -payload 11") << e5 << 0xFFE00000u << 0xFF;
    QTest::newRow("e5m2 low payload only") << e5 << 0x7F800001u << 0x7E;
}

void TstFp8::nanEncoding()
{
    QFETCH(Fp8Format, format);
    QFETCH(quint32, inputBits);
    QFETCH(int, expected);
    const float x = floatOf(inputBits);
    QVERIFY(std::isnan(x));
    for (Fp8Overflow mode : {Fp8Overflow::Saturate, Fp8Overflow::NaN})
        QCOMPARE(int(fp8Encode(x, format, mode)), expected);
    const float q = fp8Quantize(x, format);
    QVERIFY(std::isnan(q));
    QCOMPARE(std::signbit(q), (inputBits >> 31) != 0);
}

void TstFp8::encodeMatchesBruteForce()
{
    QFETCH(Fp8Format, format);
    const Def d = defOf(format);
    const int minExp = 1 - d.bias - d.mantBits; // exponent of the smallest subnormal
    Rng rng(2024);
    // Random floats whose exponents span from below half the smallest subnormal to past the
    // overflow point, both signs, all mantissas.
    const int lowExp = minExp - 3;
    const int highExp = (format == Fp8Format::E4M3) ? 9 : 16;
    for (int i = 0; i < 20000; ++i) {
        const auto e =
            static_cast<int>(rng.below(static_cast<std::uint64_t>(highExp - lowExp + 1))) + lowExp;
        const auto mant = static_cast<std::uint32_t>(rng.below(1u << 23));
        const std::uint32_t sign = rng.below(2) ? 0x80000000u : 0u;
        const float x = floatOf(sign | (static_cast<std::uint32_t>(e + 127) << 23) | mant);
        for (Fp8Overflow mode : {Fp8Overflow::Saturate, Fp8Overflow::NaN}) {
            const int expected = refEncode(x, format, mode);
            const int got = fp8Encode(x, format, mode);
            if (got != expected)
                QFAIL(qPrintable(QStringLiteral("x = %1 (bits %2): got %3, expected %4")
                                     .arg(static_cast<double>(x), 0, 'g', 9)
                                     .arg(bitsOf(x), 8, 16)
                                     .arg(got, 2, 16)
                                     .arg(expected, 2, 16)));
        }
    }
    // fp8Quantize takes a shortcut for in-range values; it must agree with decode(encode) on
    // any bit pattern at all.
    for (int i = 0; i < 200000; ++i) {
        const float x = floatOf(static_cast<std::uint32_t>(rng.next()));
        const float viaCode = fp8Decode(fp8Encode(x, format), format);
        const float q = fp8Quantize(x, format);
        if (std::isnan(x))
            QVERIFY(std::isnan(q) && std::signbit(q) == std::signbit(x));
        else if (bitsOf(q) != bitsOf(viaCode))
            QFAIL(qPrintable(QStringLiteral("quantize of bits %1").arg(bitsOf(x), 8, 16)));
    }
}

void TstFp8::matrixRoundTripMatchesScalar()
{
    // The matrix round trips round many values at once without branches; each value must come
    // out as the one-value fp8Quantize gives it, bit for bit, around every rounding threshold.
    QFETCH(Fp8Format, format);
    Rng rng(77);
    std::vector<float> xs;
    // Every exponent from float32 subnormals to the largest, with mantissas on, just below and
    // just above the halfway points of both formats' steps.
    for (std::uint32_t e = 0; e < 255; ++e)
        for (std::uint32_t top = 0; top < 8; ++top)
            for (std::uint32_t low : {0x0u, 0x1u, 0x7FFFFu, 0x80000u, 0x80001u, 0xFFFFFu, 0x3FFFFFu,
                                      0x400000u, 0x400001u})
                for (std::uint32_t sign : {0u, 0x80000000u})
                    xs.push_back(floatOf(sign | (e << 23) | (top << 20) | (low & 0x7FFFFFu)));
    while (xs.size() % 16 != 0 || xs.size() < 60000) {
        const float x = floatOf(static_cast<std::uint32_t>(rng.next()));
        if (std::isfinite(x))
            xs.push_back(x);
    }
    MatrixF m(static_cast<Eigen::Index>(xs.size() / 16), 16);
    std::copy(xs.begin(), xs.end(), m.data());
    for (Fp8Overflow mode : {Fp8Overflow::Saturate, Fp8Overflow::NaN}) {
        const Fp8Result cast = fp8Cast(m, format, mode);
        const Fp8Result rows = fp8BlockQuantize(m, format, {1, 0, false}, mode);
        for (Eigen::Index k = 0; k < m.size(); ++k) {
            const float x = m.data()[k];
            const float scale = rows.scales(k / 16, 0);
            const float wantCast = fp8Quantize(x, format, mode);
            const float wantRow = fp8Quantize(x / scale, format, mode) * scale;
            const bool castOk = bitsOf(cast.dequantized.data()[k]) == bitsOf(wantCast);
            const bool rowOk = bitsOf(rows.dequantized.data()[k]) == bitsOf(wantRow);
            if (!castOk || !rowOk)
                QFAIL(qPrintable(QStringLiteral("value bits %1 (%2)")
                                     .arg(bitsOf(x), 8, 16)
                                     .arg(castOk ? "scaled per row" : "plain cast")));
        }
    }
}

void TstFp8::quantizeIntoReusesBuffers()
{
    Fp8Inputs in;
    in.rows = 64;
    in.cols = 256;
    const MatrixF x = fp8Generate(in).values;
    MatrixF scales, dequantized;
    for (const Fp8Scaling scaling : {Fp8Scaling{1, 16, false}, Fp8Scaling{128, 128, false}}) {
        const Fp8Result r = fp8BlockQuantize(x, Fp8Format::E4M3, scaling);
        const Fp8Stats s = fp8BlockQuantizeInto(x, Fp8Format::E4M3, scaling, Fp8Overflow::Saturate,
                                                scales, dequantized);
        QVERIFY(sameMatrix(scales, r.scales));
        QVERIFY(sameMatrix(dequantized, r.dequantized));
        VERIFY_SAME_DOUBLE(s.rmse, r.stats.rmse);
        VERIFY_SAME_DOUBLE(s.snrDb, r.stats.snrDb);
        VERIFY_SAME_DOUBLE(s.maxAbsError, r.stats.maxAbsError);
        QCOMPARE(s.underflowCount, r.stats.underflowCount);
    }
    // The same shape again: the matrices are reused, not allocated anew.
    const float* before = dequantized.data();
    fp8BlockQuantizeInto(x, Fp8Format::E5M2, {1, 16, false}, Fp8Overflow::Saturate, scales,
                         dequantized);
    QCOMPARE(dequantized.data(), before);
}

void TstFp8::blockErrorsOfManyBlocks()
{
    // Enough blocks for the four-at-a-time path and a ragged end (1001 blocks of 8); each block's
    // figures are its own sums in index order, so they are compared exactly.
    Fp8Inputs in;
    in.rows = 7;
    in.cols = 1144;
    in.blockSize = 8;
    in.outlierScale = 1e5;
    const MatrixF x = fp8Generate(in).values;
    const Fp8Result r = fp8BlockQuantize(x, Fp8Format::E4M3, {0, 0, false});
    const std::vector<Fp8BlockError> e = fp8BlockErrors(x, r.dequantized, 8);
    QCOMPARE(e.size(), std::size_t(1001));
    for (std::size_t b = 0; b < e.size(); ++b) {
        float maxAbs = 0.0f;
        double error = 0.0;
        double signal = 0.0;
        for (std::size_t k = 8 * b; k < 8 * b + 8; ++k) {
            const double d = static_cast<double>(r.dequantized.data()[k]) - x.data()[k];
            maxAbs = std::max(maxAbs, std::fabs(x.data()[k]));
            error += d * d;
            signal += static_cast<double>(x.data()[k]) * x.data()[k];
        }
        QCOMPARE(bitsOf(e[b].maxAbs), bitsOf(maxAbs));
        VERIFY_SAME_DOUBLE(e[b].relativeError, error == 0.0 ? 0.0 : std::sqrt(error / signal));
    }
}

void TstFp8::chapterExample()
{
    Fp8Inputs in;
    in.format = Fp8Format::E4M3;
    in.blockSize = 4;
    in.values = rowOf({0.5f, -1.25f, 3.0f, 0.001f, 0.01f, 0.02f, 0.03f, 0.04f});
    validate(in);
    const MatrixF x = fp8InputMatrix(in);
    QVERIFY(sameMatrix(x, *in.values));

    const Fp8Result block = fp8BlockQuantize(x, in.format, {1, in.blockSize, false});
    QCOMPARE(block.scales.rows(), Eigen::Index(1));
    QCOMPARE(block.scales.cols(), Eigen::Index(2));
    // The chapter's scales: max|block| / 448 in float32 (a single float division).
    const float s0 = 3.0f / 448.0f;
    const float s1 = 0.04f / 448.0f;
    QCOMPARE(bitsOf(block.scales(0, 0)), bitsOf(s0));
    QCOMPARE(bitsOf(block.scales(0, 1)), bitsOf(s1));
    // Every value: the brute-force quantizer applied to x / scale, times scale, in float32.
    for (Eigen::Index j = 0; j < 8; ++j) {
        const float s = j < 4 ? s0 : s1;
        const float expected = refQuantize(x(0, j) / s, in.format) * s;
        QCOMPARE(bitsOf(block.dequantized(0, j)), bitsOf(expected));
    }
    QVERIFY(sameMatrix(block.values, x));

    const Fp8Result tensor = fp8BlockQuantize(x, in.format, {0, 0, false});
    QCOMPARE(tensor.scales.size(), Eigen::Index(1));
    QCOMPARE(bitsOf(tensor.scales(0, 0)), bitsOf(s0));
    for (Eigen::Index j = 0; j < 8; ++j) {
        const float expected = refQuantize(x(0, j) / s0, in.format) * s0;
        QCOMPARE(bitsOf(tensor.dequantized(0, j)), bitsOf(expected));
    }
    // The first block holds the tensor's maximum, so both schemes treat it alike.
    for (Eigen::Index j = 0; j < 4; ++j)
        QCOMPARE(bitsOf(block.dequantized(0, j)), bitsOf(tensor.dequantized(0, j)));
    // Here 3.0 / 0.01 is only 300x, well inside E4M3's range of normal numbers (448 / 2^-6), so
    // the small block keeps 3 significant bits under either scale and neither scheme wins by
    // much (per-block is even a little worse: 0.03 / s1 = 336 ties down to 320). Block scaling
    // pays off when the spread passes the format's range: see outlierBlockUnderflowsPerTensor.
    QCOMPARE(block.stats.underflowCount, std::int64_t(0));
    QCOMPARE(tensor.stats.underflowCount, std::int64_t(0));
}

void TstFp8::outlierBlockUnderflowsPerTensor()
{
    // One 1000 next to values of 0.001..0.004: per tensor the scale is 1000/448 = 2.23, so the
    // small values map to 4.5e-4..1.8e-3, around E4M3's smallest subnormal 2^-9 = 1.95e-3.
    // 0.001 and 0.002 map below 2^-10 and vanish; 0.003 and 0.004 become 2^-9 * scale.
    const Fp8Format f = Fp8Format::E4M3;
    const MatrixF x = rowOf({0.5f, -1.25f, 3.0f, 1000.0f, 0.001f, 0.002f, 0.003f, 0.004f});
    const Fp8Result block = fp8BlockQuantize(x, f, {1, 4, false});
    const Fp8Result tensor = fp8BlockQuantize(x, f, {0, 0, false});
    QCOMPARE(tensor.stats.underflowCount, std::int64_t(2));
    QCOMPARE(bitsOf(tensor.dequantized(0, 4)), 0u);
    QCOMPARE(bitsOf(tensor.dequantized(0, 5)), 0u);
    const float st = 1000.0f / 448.0f;
    const float subnormalBack = std::ldexp(1.0f, -9) * st;
    QCOMPARE(bitsOf(tensor.dequantized(0, 6)), bitsOf(subnormalBack));
    QCOMPARE(bitsOf(tensor.dequantized(0, 7)), bitsOf(subnormalBack));
    // Per block the small block gets its own scale 0.004/448: x / s = 112, 224, 336, 448, all
    // normal; only 336 (a tie between 320 and 352) is off, by 16 steps of s.
    QCOMPARE(block.stats.underflowCount, std::int64_t(0));
    double blockErr = 0.0;
    double tensorErr = 0.0;
    for (Eigen::Index j = 4; j < 8; ++j) {
        const double v = x(0, j);
        blockErr += std::pow(block.dequantized(0, j) - v, 2);
        tensorErr += std::pow(tensor.dequantized(0, j) - v, 2);
    }
    // Per tensor loses whole values (error ~1e-3 each), per block at most 16 * 0.004/448 ~ 1.4e-4.
    QVERIFY2(tensorErr > 25.0 * blockErr,
             qPrintable(QStringLiteral("%1 vs %2").arg(tensorErr).arg(blockErr)));
}

void TstFp8::tinyAndZeroTiles()
{
    const Fp8Format f = Fp8Format::E4M3;
    // An all-zero tile gets scale 1, and zeros come back with their signs.
    const MatrixF zeros = rowOf({0.0f, -0.0f, 0.0f, -0.0f});
    const Fp8Result z = fp8BlockQuantize(zeros, f, {1, 2, false});
    QCOMPARE(bitsOf(z.scales(0, 0)), bitsOf(1.0f));
    QCOMPARE(bitsOf(z.scales(0, 1)), bitsOf(1.0f));
    for (Eigen::Index j = 0; j < 4; ++j)
        QCOMPARE(bitsOf(z.dequantized(0, j)), bitsOf(zeros(0, j)));
    VERIFY_SAME_DOUBLE(z.stats.rmse, 0.0);
    VERIFY_SAME_DOUBLE(z.stats.maxAbsError, 0.0);
    VERIFY_SAME_DOUBLE(z.stats.snrDb, std::numeric_limits<double>::infinity()); // no error
    QCOMPARE(z.stats.underflowCount, std::int64_t(0));

    // A tile whose max / 448 underflows float32 to 0 also gets scale 1; its values +-2^-149 are
    // far below E4M3's range, so they quantize to zeros of their sign: two underflows, and SNR
    // 0 dB (the error is the whole signal).
    const float denormMin = std::numeric_limits<float>::denorm_min();
    const MatrixF tiny = rowOf({denormMin, -denormMin});
    const Fp8Result t = fp8BlockQuantize(tiny, f, {1, 0, false});
    QCOMPARE(bitsOf(t.scales(0, 0)), bitsOf(1.0f));
    QCOMPARE(bitsOf(t.dequantized(0, 0)), 0u);
    QCOMPARE(bitsOf(t.dequantized(0, 1)), 0x80000000u);
    QCOMPARE(t.stats.underflowCount, std::int64_t(2));
    VERIFY_SAME_DOUBLE(t.stats.maxAbsError, static_cast<double>(denormMin));
    VERIFY_SAME_DOUBLE(t.stats.snrDb, 0.0);
}

void TstFp8::statsMatchDefinition()
{
    Fp8Inputs in;
    in.rows = 6;
    in.cols = 32;
    in.blockSize = 8;
    in.seed = 7;
    const MatrixF x = fp8Generate(in).values;
    for (Fp8Format f : {Fp8Format::E4M3, Fp8Format::E5M2}) {
        const Fp8Result r = fp8BlockQuantize(x, f, {1, 8, false});
        double sumSq = 0.0;
        double signal = 0.0;
        double maxAbs = 0.0;
        for (Eigen::Index i = 0; i < x.rows(); ++i) {
            for (Eigen::Index j = 0; j < x.cols(); ++j) {
                const double e = static_cast<double>(r.dequantized(i, j)) - x(i, j);
                sumSq += e * e;
                signal += static_cast<double>(x(i, j)) * x(i, j);
                maxAbs = std::max(maxAbs, std::fabs(e));
            }
        }
        VERIFY_SAME_DOUBLE(r.stats.maxAbsError, maxAbs); // a max is exact whatever the order
        // Sums may be taken in another order: allow a few ulps of a double.
        const double rmse = std::sqrt(sumSq / static_cast<double>(x.size()));
        QVERIFY(std::fabs(r.stats.rmse - rmse) <= 1e-12 * rmse);
        const double snr = 10.0 * std::log10(signal / sumSq);
        QVERIFY(std::fabs(r.stats.snrDb - snr) <= 1e-9);
        QVERIFY(r.stats.snrDb > 20.0); // 3 or 2 mantissa bits: roughly 6 dB a bit and then some

        // The stats-only entry point computes the very same figures.
        const Fp8Stats s = fp8BlockQuantizeStats(x, f, {1, 8, false});
        VERIFY_SAME_DOUBLE(s.maxAbsError, r.stats.maxAbsError);
        VERIFY_SAME_DOUBLE(s.rmse, r.stats.rmse);
        VERIFY_SAME_DOUBLE(s.snrDb, r.stats.snrDb);
        QCOMPARE(s.underflowCount, r.stats.underflowCount);
    }
}

void TstFp8::generatedMatrix()
{
    Fp8Inputs in; // the defaults: 64 x 256, blocks of 16, outliers x100, seed 1
    const Fp8Generated g = fp8Generate(in);
    QCOMPARE(g.values.rows(), Eigen::Index(64));
    QCOMPARE(g.values.cols(), Eigen::Index(256));
    QVERIFY(sameMatrix(fp8InputMatrix(in), g.values));

    const std::int64_t blocks = 64 * (256 / 16);
    // About one block in 16 (expect 64, sd ~7.7); a wide margin, the seed is fixed anyway.
    QVERIFY(g.outlierBlocks.size() >= 30 && g.outlierBlocks.size() <= 100);
    for (std::size_t k = 1; k < g.outlierBlocks.size(); ++k)
        QVERIFY(g.outlierBlocks[k - 1] < g.outlierBlocks[k]);
    QVERIFY(g.outlierBlocks.front() >= 0 && g.outlierBlocks.back() < blocks);

    // The normal part does not depend on block size or outlier scale; outlier blocks are it
    // times 100 (rounded once from double), every other entry is it unchanged.
    const MatrixF normals = fp8NormalMatrix(in);
    Fp8Inputs other = in;
    other.blockSize = 4;
    other.outlierScale = 3.0;
    QVERIFY(sameMatrix(fp8NormalMatrix(other), normals));
    std::vector<bool> isOutlier(static_cast<std::size_t>(blocks), false);
    for (std::int64_t b : g.outlierBlocks)
        isOutlier[static_cast<std::size_t>(b)] = true;
    // Box-Muller with u1 >= 2^-53 gives |z| <= sqrt(-2 ln 2^-53) = 8.57.
    const float normalBound = 8.58f;
    for (std::int64_t b = 0; b < blocks; ++b) {
        for (std::int64_t j = 0; j < 16; ++j) {
            const std::int64_t idx = b * 16 + j;
            const float n = normals.data()[idx];
            const float v = g.values.data()[idx];
            QVERIFY(std::fabs(n) <= normalBound);
            const float expected = isOutlier[static_cast<std::size_t>(b)]
                ? static_cast<float>(static_cast<double>(n) * 100.0)
                : n;
            QCOMPARE(bitsOf(v), bitsOf(expected));
        }
    }
    // Standard normal entries: mean 0 and variance 1 within 5 standard errors (n = 16384).
    const double n = static_cast<double>(normals.size());
    const double mean = normals.cast<double>().sum() / n;
    const double var = normals.cast<double>().array().square().sum() / n - mean * mean;
    QVERIFY(std::fabs(mean) < 5.0 / std::sqrt(n));
    QVERIFY(std::fabs(var - 1.0) < 5.0 * std::sqrt(2.0 / n));

    // Same seed, same matrix; another seed, another one.
    QVERIFY(sameMatrix(fp8Generate(in).values, g.values));
    Fp8Inputs seed2 = in;
    seed2.seed = 2;
    QVERIFY(!sameMatrix(fp8Generate(seed2).values, g.values));
}

void TstFp8::generatedAlwaysHasAnOutlier()
{
    // A single 1 x 1 block is chosen with probability 1/16 only; the fallback makes it an
    // outlier every time.
    for (std::int64_t seed = 0; seed < 64; ++seed) {
        Fp8Inputs in;
        in.rows = 1;
        in.cols = 1;
        in.blockSize = 1;
        in.seed = seed;
        const Fp8Generated g = fp8Generate(in);
        QCOMPARE(g.outlierBlocks.size(), std::size_t(1));
        QCOMPARE(g.outlierBlocks[0], std::int64_t(0));
    }
    // Two rows of three blocks: whatever the seed, at least one.
    for (std::int64_t seed = 0; seed < 64; ++seed) {
        Fp8Inputs in;
        in.rows = 2;
        in.cols = 6;
        in.blockSize = 2;
        in.seed = seed;
        QVERIFY(!fp8Generate(in).outlierBlocks.empty());
    }
}

void TstFp8::perTensorVsPerBlock_data()
{
    QTest::addColumn<Fp8Format>("format");
    QTest::addColumn<double>("outlierScale");
    QTest::addColumn<double>("minRatio");
    QTest::addColumn<double>("maxRatio");
    // With outliers ~1e5 x the rest, one E4M3 scale (max ~4e5 / 448 ~ 900) maps the normal
    // blocks below 2^-6, into the subnormals, whose fixed step 2^-9 is coarse there: the small
    // blocks' RMSE grows many times. E5M2 reaches 2^-16, so it needs ~1e9 for the same.
    QTest::newRow("e4m3 x1e5") << Fp8Format::E4M3 << 1e5 << 5.0 << 1e9;
    QTest::newRow("e5m2 x1e9") << Fp8Format::E5M2 << 1e9 << 5.0 << 1e9;
    // At the default x100 every block stays in the normal range under either scale, where a
    // floating-point format's relative step does not depend on the scale: about the same RMSE.
    QTest::newRow("e4m3 x100") << Fp8Format::E4M3 << 100.0 << 0.7 << 2.0;
    QTest::newRow("e5m2 x100") << Fp8Format::E5M2 << 100.0 << 0.7 << 2.0;
}

void TstFp8::perTensorVsPerBlock()
{
    QFETCH(Fp8Format, format);
    QFETCH(double, outlierScale);
    QFETCH(double, minRatio);
    QFETCH(double, maxRatio);
    Fp8Inputs in;
    in.format = format;
    in.outlierScale = outlierScale;
    const Fp8Generated g = fp8Generate(in);
    const Fp8Result block = fp8BlockQuantize(g.values, format, {1, in.blockSize, false});
    const Fp8Result tensor = fp8BlockQuantize(g.values, format, {0, 0, false});

    std::vector<bool> isOutlier(static_cast<std::size_t>(g.values.size() / in.blockSize), false);
    for (std::int64_t b : g.outlierBlocks)
        isOutlier[static_cast<std::size_t>(b)] = true;
    double blockSq = 0.0;
    double tensorSq = 0.0;
    for (Eigen::Index idx = 0; idx < g.values.size(); ++idx) {
        if (isOutlier[static_cast<std::size_t>(idx / in.blockSize)])
            continue;
        const double v = g.values.data()[idx];
        blockSq += std::pow(block.dequantized.data()[idx] - v, 2);
        tensorSq += std::pow(tensor.dequantized.data()[idx] - v, 2);
    }
    const double ratio = std::sqrt(tensorSq / blockSq);
    QVERIFY2(ratio >= minRatio && ratio <= maxRatio, qPrintable(QString::number(ratio)));
}

void TstFp8::tileShapes_data()
{
    QTest::addColumn<qint64>("tileRows");
    QTest::addColumn<qint64>("tileCols");
    QTest::addColumn<qint64>("gridRows");
    QTest::addColumn<qint64>("gridCols");
    // A 256 x 384 matrix.
    QTest::newRow("per tensor") << qint64(0) << qint64(0) << qint64(1) << qint64(1);
    QTest::newRow("per row") << qint64(1) << qint64(0) << qint64(256) << qint64(1);
    QTest::newRow("per column") << qint64(0) << qint64(1) << qint64(1) << qint64(384);
    QTest::newRow("chapter 1x16") << qint64(1) << qint64(16) << qint64(256) << qint64(24);
    QTest::newRow("deepseek 1x128") << qint64(1) << qint64(128) << qint64(256) << qint64(3);
    QTest::newRow("deepseek 128x128") << qint64(128) << qint64(128) << qint64(2) << qint64(3);
    QTest::newRow("ragged 100x100") << qint64(100) << qint64(100) << qint64(3) << qint64(4);
    QTest::newRow("larger than matrix") << qint64(1000) << qint64(1000) << qint64(1) << qint64(1);
}

void TstFp8::tileShapes()
{
    QFETCH(qint64, tileRows);
    QFETCH(qint64, tileCols);
    QFETCH(qint64, gridRows);
    QFETCH(qint64, gridCols);
    Fp8Inputs in;
    in.rows = 256;
    in.cols = 384;
    in.seed = 11;
    const MatrixF x = fp8Generate(in).values;
    const Fp8Format f = Fp8Format::E4M3;
    const Fp8Result r = fp8BlockQuantize(x, f, {tileRows, tileCols, false});
    QCOMPARE(qint64(r.scales.rows()), gridRows);
    QCOMPARE(qint64(r.scales.cols()), gridCols);
    QCOMPARE(r.dequantized.rows(), x.rows());
    QCOMPARE(r.dequantized.cols(), x.cols());
    const qint64 tr = tileRows == 0 ? x.rows() : std::min<qint64>(tileRows, x.rows());
    const qint64 tc = tileCols == 0 ? x.cols() : std::min<qint64>(tileCols, x.cols());
    for (qint64 gi = 0; gi < gridRows; ++gi) {
        for (qint64 gj = 0; gj < gridCols; ++gj) {
            const qint64 r0 = gi * tr;
            const qint64 c0 = gj * tc;
            const qint64 h = std::min<qint64>(tr, x.rows() - r0);
            const qint64 w = std::min<qint64>(tc, x.cols() - c0);
            const float m = x.block(r0, c0, h, w).cwiseAbs().maxCoeff();
            const float s = m / 448.0f;
            QCOMPARE(bitsOf(r.scales(gi, gj)), bitsOf(s));
            for (qint64 i = r0; i < r0 + h; ++i)
                for (qint64 j = c0; j < c0 + w; ++j)
                    QCOMPARE(bitsOf(r.dequantized(i, j)), bitsOf(fp8Quantize(x(i, j) / s, f) * s));
        }
    }
}

void TstFp8::powerOfTwoScales_data()
{
    QTest::addColumn<Fp8Format>("format");
    QTest::addColumn<float>("maxAbs");
    QTest::addColumn<float>("expectedScale");
    const auto e4 = Fp8Format::E4M3;
    const auto e5 = Fp8Format::E5M2;
    // The smallest 2^k with maxAbs / 2^k <= max_value.
    QTest::newRow("e4m3 448") << e4 << 448.0f << 1.0f;
    QTest::newRow("e4m3 just above 448") << e4 << std::nextafter(448.0f, kInf) << 2.0f;
    QTest::newRow("e4m3 449") << e4 << 449.0f << 2.0f;
    QTest::newRow("e4m3 224") << e4 << 224.0f << 0.5f;
    QTest::newRow("e4m3 225") << e4 << 225.0f << 1.0f;
    QTest::newRow("e4m3 1.0") << e4 << 1.0f << std::ldexp(1.0f, -8); // 448 / 256 = 1.75 >= 1
    QTest::newRow("e4m3 1.75") << e4 << 1.75f << std::ldexp(1.0f, -8);
    QTest::newRow("e4m3 1.8") << e4 << 1.8f << std::ldexp(1.0f, -7);
    QTest::newRow("e4m3 -3.0") << e4 << -3.0f << std::ldexp(1.0f, -7); // |x| is what counts
    QTest::newRow("e4m3 float max") << e4 << kFloatMax << std::ldexp(1.0f, 120);
    // A float32 subnormal maximum, and one whose scale would be below 2^-149 (clamped).
    QTest::newRow("e4m3 1.75*2^-132") << e4 << std::ldexp(1.75f, -132) << std::ldexp(1.0f, -140);
    QTest::newRow("e4m3 denorm min") << e4 << std::numeric_limits<float>::denorm_min()
                                     << std::numeric_limits<float>::denorm_min();
    QTest::newRow("e5m2 57344") << e5 << 57344.0f << 1.0f;
    QTest::newRow("e5m2 57345") << e5 << 57345.0f << 2.0f;
    QTest::newRow("e5m2 1.0") << e5 << 1.0f << std::ldexp(1.0f, -15);
}

void TstFp8::powerOfTwoScales()
{
    QFETCH(Fp8Format, format);
    QFETCH(float, maxAbs);
    QFETCH(float, expectedScale);
    const MatrixF x = rowOf({maxAbs, maxAbs / 3.0f, 0.0f});
    const Fp8Result r = fp8BlockQuantize(x, format, {0, 0, true});
    QCOMPARE(bitsOf(r.scales(0, 0)), bitsOf(expectedScale));
    QVERIFY(isPowerOfTwo(r.scales(0, 0)));
}

void TstFp8::powerOfTwoScaleTiles()
{
    Fp8Inputs in;
    in.rows = 128;
    in.cols = 256;
    in.seed = 5;
    in.outlierScale = 1000.0;
    const MatrixF x = fp8Generate(in).values;
    for (Fp8Format f : {Fp8Format::E4M3, Fp8Format::E5M2}) {
        const double maxValue = fp8MaxValue(f);
        for (Fp8Scaling sc : {Fp8Scaling{1, 16, true}, Fp8Scaling{128, 128, true},
                              Fp8Scaling{0, 0, true}, Fp8Scaling{1, 0, true}}) {
            const Fp8Result r = fp8BlockQuantize(x, f, sc);
            const qint64 tr = sc.blockRows == 0 ? x.rows() : sc.blockRows;
            const qint64 tc = sc.blockCols == 0 ? x.cols() : sc.blockCols;
            QCOMPARE(qint64(r.scales.rows()), x.rows() / tr);
            QCOMPARE(qint64(r.scales.cols()), x.cols() / tc);
            for (Eigen::Index gi = 0; gi < r.scales.rows(); ++gi) {
                for (Eigen::Index gj = 0; gj < r.scales.cols(); ++gj) {
                    const float s = r.scales(gi, gj);
                    QVERIFY(isPowerOfTwo(s));
                    const double m = x.block(gi * tr, gj * tc, tr, tc).cwiseAbs().maxCoeff();
                    // Fits (never overflows), and half the scale would not: the smallest such.
                    QVERIFY(m <= maxValue * s);
                    QVERIFY(m > maxValue * s / 2.0);
                    for (Eigen::Index i = gi * tr; i < (gi + 1) * tr; ++i) {
                        for (Eigen::Index j = gj * tc; j < (gj + 1) * tc; ++j) {
                            // Division by a power of two is exact here, so x / s is in range
                            // and the code never saturates.
                            const float y = x(i, j) / s;
                            VERIFY_SAME_DOUBLE(static_cast<double>(y),
                                               static_cast<double>(x(i, j)) / s);
                            QVERIFY(std::fabs(y) <= maxValue);
                            QCOMPARE(bitsOf(r.dequantized(i, j)), bitsOf(fp8Quantize(y, f) * s));
                        }
                    }
                }
            }
        }
    }
}

void TstFp8::doubleToFloatRounding()
{
    const double tieDown = 1.0 + std::ldexp(1.0, -24); // halfway 1 and 1+2^-23: to even 1
    const double tieUp = 1.0 + 3.0 * std::ldexp(1.0, -24); // halfway 1+2^-23 and 1+2^-22: up
    const double floatMax = std::numeric_limits<float>::max();
    const MatrixF m = fp8ValuesFromRows({{0.5, tieDown, tieUp}, {1e-50, -1e-50, -floatMax}});
    QCOMPARE(m.rows(), Eigen::Index(2));
    QCOMPARE(m.cols(), Eigen::Index(3));
    QCOMPARE(bitsOf(m(0, 0)), 0x3F000000u);
    QCOMPARE(bitsOf(m(0, 1)), 0x3F800000u);
    QCOMPARE(bitsOf(m(0, 2)), 0x3F800002u);
    QCOMPARE(bitsOf(m(1, 0)), 0x00000000u); // below half of 2^-149: zero, signed
    QCOMPARE(bitsOf(m(1, 1)), 0x80000000u);
    QCOMPARE(bitsOf(m(1, 2)), 0xFF7FFFFFu);
}

void TstFp8::badInputsNameTheirFields_data()
{
    QTest::addColumn<Action>("action");
    QTest::addColumn<QString>("field");
    const auto with = [](std::function<void(Fp8Inputs&)> change) {
        return Action([change] {
            Fp8Inputs in;
            change(in);
            validate(in);
        });
    };
    const auto withValues = [](MatrixF v, std::int64_t blockSize) {
        return Action([v, blockSize] {
            Fp8Inputs in;
            in.values = v;
            in.blockSize = blockSize;
            validate(in);
        });
    };
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const std::int64_t big = std::int64_t(1) << 53;

    QTest::newRow("block 0") << with([](Fp8Inputs& in) { in.blockSize = 0; }) << "fp8.block_size";
    QTest::newRow("block -4") << with([](Fp8Inputs& in) { in.blockSize = -4; }) << "fp8.block_size";
    QTest::newRow("block 3 of 256")
        << with([](Fp8Inputs& in) { in.blockSize = 3; }) << "fp8.block_size";
    QTest::newRow("block past cols")
        << with([](Fp8Inputs& in) { in.blockSize = 512; }) << "fp8.block_size";
    QTest::newRow("block 2^53") << with([big](Fp8Inputs& in) { in.blockSize = big; })
                                << "fp8.block_size";
    QTest::newRow("rows 0") << with([](Fp8Inputs& in) { in.rows = 0; }) << "fp8.rows";
    QTest::newRow("rows -1") << with([](Fp8Inputs& in) { in.rows = -1; }) << "fp8.rows";
    QTest::newRow("cols 0") << with([](Fp8Inputs& in) { in.cols = 0; }) << "fp8.cols";
    QTest::newRow("too many") << with([](Fp8Inputs& in) {
        in.rows = 8193;
        in.cols = 8192;
    }) << "fp8.rows";
    QTest::newRow("2^53 squared") << with([big](Fp8Inputs& in) {
        in.rows = big;
        in.cols = big;
    }) << "fp8.rows";
    QTest::newRow("outlier 0") << with([](Fp8Inputs& in) { in.outlierScale = 0.0; })
                               << "fp8.outlier_scale";
    QTest::newRow("outlier -1") << with([](Fp8Inputs& in) { in.outlierScale = -1.0; })
                                << "fp8.outlier_scale";
    QTest::newRow("outlier nan") << with([nan](Fp8Inputs& in) { in.outlierScale = nan; })
                                 << "fp8.outlier_scale";
    QTest::newRow("outlier inf") << with([inf](Fp8Inputs& in) { in.outlierScale = inf; })
                                 << "fp8.outlier_scale";
    QTest::newRow("seed -1") << with([](Fp8Inputs& in) { in.seed = -1; }) << "fp8.seed";

    // Explicit values.
    QTest::newRow("values no rows") << withValues(MatrixF(0, 0), 4) << "fp8.values";
    QTest::newRow("values empty row") << withValues(MatrixF(1, 0), 4) << "fp8.values[0]";
    QTest::newRow("values block 3 of 8") << withValues(MatrixF::Ones(1, 8), 3) << "fp8.block_size";
    MatrixF withNaN = MatrixF::Ones(2, 4);
    withNaN(1, 2) = std::numeric_limits<float>::quiet_NaN();
    QTest::newRow("values nan") << withValues(withNaN, 4) << "fp8.values[1][2]";
    MatrixF withInf = MatrixF::Ones(3, 2);
    withInf(2, 0) = -kInf;
    QTest::newRow("values -inf") << withValues(withInf, 2) << "fp8.values[2][0]";

    // The scenario's rows of doubles.
    const auto fromRows = [](std::vector<std::vector<double>> rows) {
        return Action([rows] { fp8ValuesFromRows(rows); });
    };
    QTest::newRow("rows none") << fromRows({}) << "fp8.values";
    QTest::newRow("rows first empty") << fromRows({{}}) << "fp8.values[0]";
    QTest::newRow("rows ragged") << fromRows({{1, 2}, {3, 4}, {5}}) << "fp8.values[2]";
    QTest::newRow("rows longer") << fromRows({{1, 2}, {3, 4, 5}}) << "fp8.values[1]";
    QTest::newRow("rows nan") << fromRows({{1, nan}}) << "fp8.values[0][1]";
    QTest::newRow("rows inf") << fromRows({{1, 2}, {3, -inf}}) << "fp8.values[1][1]";
    QTest::newRow("rows 1e39") << fromRows({{1e39}}) << "fp8.values[0][0]";
    QTest::newRow("rows just past float max")
        << fromRows({{1.0, std::nextafter(double(kFloatMax), inf)}}) << "fp8.values[0][1]";
    QTest::newRow("value helper") << Action([] { validateFp8Value(-1e300, 2, 5); })
                                  << "fp8.values[2][5]";

    // The block-scaling call itself.
    QTest::newRow("quantize empty") << Action([] {
        fp8BlockQuantize(MatrixF(0, 0), Fp8Format::E4M3, {0, 0, false});
    }) << "fp8.values";
    QTest::newRow("quantize nan") << Action([withNaN] {
        fp8BlockQuantize(withNaN, Fp8Format::E4M3, {1, 2, false});
    }) << "fp8.values[1][2]";
    QTest::newRow("quantize inf stats") << Action([withInf] {
        fp8BlockQuantizeStats(withInf, Fp8Format::E5M2, {0, 0, true});
    }) << "fp8.values[2][0]";
    QTest::newRow("quantize tile rows -1") << Action([] {
        fp8BlockQuantize(MatrixF::Ones(2, 2), Fp8Format::E4M3, {-1, 2, false});
    }) << "fp8.block_rows";
    QTest::newRow("quantize tile cols -1") << Action([] {
        fp8BlockQuantize(MatrixF::Ones(2, 2), Fp8Format::E4M3, {1, -1, false});
    }) << "fp8.block_size";

    // Generation keys are checked by the generator too.
    QTest::newRow("generate block 5") << Action([] {
        Fp8Inputs in;
        in.blockSize = 5;
        fp8Generate(in);
    }) << "fp8.block_size";
    QTest::newRow("normals seed -3") << Action([] {
        Fp8Inputs in;
        in.seed = -3;
        fp8NormalMatrix(in);
    }) << "fp8.seed";
    QTest::newRow("outliers wrong shape") << Action([] {
        Fp8Inputs in;
        fp8ApplyOutliers(MatrixF::Zero(3, 256), in);
    }) << "fp8.rows";
    QTest::newRow("input matrix checks") << Action([] {
        Fp8Inputs in;
        in.cols = 0;
        fp8InputMatrix(in);
    }) << "fp8.cols";
}

void TstFp8::badInputsNameTheirFields()
{
    QFETCH(Action, action);
    QFETCH(QString, field);
    SCALELAB_VERIFY_INPUT_ERROR(action(), field.toStdString());
}

void TstFp8::goodInputsPass()
{
    Fp8Inputs in;
    validate(in); // the defaults
    in.rows = 4096;
    in.cols = 4096; // exactly kMaxFp8Elements
    in.blockSize = 16; // exactly kMaxFp8Scales
    validate(in);
    QCOMPARE(in.rows * in.cols, kMaxFp8Elements);
    QCOMPARE(in.rows * in.cols / in.blockSize, kMaxFp8Scales);
    // One more row, or smaller blocks, is refused. (8192 x 8192 in blocks of 1 once took 45 s
    // and printed a 2.6 GB report.)
    in.rows += 1;
    SCALELAB_VERIFY_INPUT_ERROR(validate(in), "fp8.rows");
    in.rows = 4096;
    in.blockSize = 8;
    SCALELAB_VERIFY_INPUT_ERROR(validate(in), "fp8.block_size");
    // With explicit values block_size must divide their columns, not `cols`.
    Fp8Inputs explicitValues;
    explicitValues.cols = 3;
    explicitValues.blockSize = 4;
    explicitValues.values = MatrixF::Ones(2, 8);
    validate(explicitValues);
    QVERIFY(sameMatrix(fp8InputMatrix(explicitValues), *explicitValues.values));
    // Float32's extremes are within range.
    validateFp8Value(double(kFloatMax), 0, 0);
    validateFp8Value(-double(kFloatMax), 0, 0);
    validateFp8Value(0.0, 0, 0);
    validateFp8Value(1e-300, 0, 0); // rounds to zero, still a valid number
}

void TstFp8::minNormal()
{
    // The smallest normal value is the code with exponent field 1 and mantissa 0.
    QCOMPARE(bitsOf(fp8MinNormal(Fp8Format::E4M3)), bitsOf(std::ldexp(1.0f, -6)));
    QCOMPARE(bitsOf(fp8MinNormal(Fp8Format::E5M2)), bitsOf(std::ldexp(1.0f, -14)));
    QCOMPARE(bitsOf(fp8Decode(0x08, Fp8Format::E4M3)), bitsOf(fp8MinNormal(Fp8Format::E4M3)));
    QCOMPARE(bitsOf(fp8Decode(0x04, Fp8Format::E5M2)), bitsOf(fp8MinNormal(Fp8Format::E5M2)));
}

void TstFp8::plainCast_data()
{
    QTest::addColumn<Fp8Format>("format");
    QTest::addColumn<Fp8Overflow>("overflow");
    QTest::newRow("e4m3 saturate") << Fp8Format::E4M3 << Fp8Overflow::Saturate;
    QTest::newRow("e4m3 nan") << Fp8Format::E4M3 << Fp8Overflow::NaN;
    QTest::newRow("e5m2 saturate") << Fp8Format::E5M2 << Fp8Overflow::Saturate;
    QTest::newRow("e5m2 nan") << Fp8Format::E5M2 << Fp8Overflow::NaN;
}

void TstFp8::plainCast()
{
    QFETCH(Fp8Format, format);
    QFETCH(Fp8Overflow, overflow);
    // Without a scale every value is rounded as it is: 1e5 is past both formats' largest finite
    // value, 1e-6 is below both formats' smallest subnormal (half of it, even).
    const MatrixF x = rowOf({1.0f, 0.3f, -1e5f, 1e-6f, 100.0f, 0.0f});
    const Fp8Result r = fp8Cast(x, format, overflow);
    QCOMPARE(r.scales.size(), Eigen::Index(1));
    QCOMPARE(bitsOf(r.scales(0, 0)), bitsOf(1.0f));
    QVERIFY(sameMatrix(r.values, x));
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
        const auto expected =
            static_cast<float>(refValue(refEncode(x(0, j), format, overflow), format));
        QVERIFY2(bitsOf(r.dequantized(0, j)) == bitsOf(expected)
                     || (std::isnan(expected) && std::isnan(r.dequantized(0, j))),
                 qPrintable(describe(x(0, j))));
    }
    QCOMPARE(r.stats.underflowCount, std::int64_t(1)); // 1e-6
    if (overflow == Fp8Overflow::Saturate) {
        QCOMPARE(r.dequantized(0, 2), -fp8MaxValue(format));
        QVERIFY(std::isfinite(r.stats.rmse));
    } else {
        // A NaN (E4M3) or an infinity (E5M2) poisons the sums: this is why FP8 needs a scale.
        QVERIFY(!std::isfinite(r.dequantized(0, 2)));
        QVERIFY(!std::isfinite(r.stats.rmse));
    }
    // The stats are those of a round trip with scale 1, taken by definition.
    double error = 0.0;
    double signal = 0.0;
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
        const double e = static_cast<double>(r.dequantized(0, j)) - x(0, j);
        error += e * e;
        signal += static_cast<double>(x(0, j)) * x(0, j);
    }
    VERIFY_SAME_DOUBLE(r.stats.rmse, std::sqrt(error / static_cast<double>(x.size())));
    VERIFY_SAME_DOUBLE(r.stats.relativeError, std::sqrt(error / signal));
}

void TstFp8::scaledGrid()
{
    const Fp8Format f = Fp8Format::E4M3;
    // Around 1 E4M3 steps by 1/16 below and 1/8 above: 0.95..1.1 holds only 1, and the nearest
    // neighbours outside are 0.9375 and 1.125.
    QCOMPARE(fp8ScaledGrid(f, 1.0f, 0.95f, 1.1f), (std::vector<float>{0.9375f, 1.0f, 1.125f}));
    // Scale 2 near zero: the subnormal step 2^-9 becomes 2^-8; -0 and +0 are one 0.
    const float s = std::ldexp(1.0f, -8);
    QCOMPARE(fp8ScaledGrid(f, 2.0f, 0.0f, 0.01f), (std::vector<float>{-s, 0.0f, s, 2 * s, 3 * s}));
    // The whole finite range: 126 positive values, their negatives and zero; nothing beyond.
    const std::vector<float> all = fp8ScaledGrid(f, 1.0f, -448.0f, 448.0f);
    QCOMPARE(all.size(), std::size_t(253));
    QCOMPARE(all.front(), -448.0f);
    QCOMPARE(all.back(), 448.0f);
    QVERIFY(std::is_sorted(all.begin(), all.end()));
    const std::vector<float> e5 = fp8ScaledGrid(Fp8Format::E5M2, 1.0f, -1e30f, 1e30f);
    QCOMPARE(e5.size(), std::size_t(247)); // 123 positive finite values, their negatives, zero
    // Each point is what the round trip gives back: q * scale in float32.
    const float scale = 0.7934f;
    for (float g : fp8ScaledGrid(f, scale, -3.0f, 3.0f)) {
        const float q = g / scale;
        QCOMPARE(bitsOf(fp8Quantize(q, f) * scale), bitsOf(g));
    }
    // A scale so large that products overflow keeps only the finite ones.
    const std::vector<float> huge = fp8ScaledGrid(f, 1e37f, -1e38f, 1e38f);
    for (float g : huge)
        QVERIFY(std::isfinite(g));
    SCALELAB_VERIFY_INPUT_ERROR(fp8ScaledGrid(f, 0.0f, 0.0f, 1.0f), "fp8.grid");
    SCALELAB_VERIFY_INPUT_ERROR(fp8ScaledGrid(f, kInf, 0.0f, 1.0f), "fp8.grid");
    SCALELAB_VERIFY_INPUT_ERROR(fp8ScaledGrid(f, 1.0f, 2.0f, 1.0f), "fp8.grid");
}

void TstFp8::blockErrorsAndOrder()
{
    const Fp8Format f = Fp8Format::E4M3;
    // The chapter's row, plus a block of zeros.
    const MatrixF x =
        rowOf({0.5f, -1.25f, 3.0f, 0.001f, 0.01f, 0.02f, 0.03f, 0.04f, 0.0f, 0.0f, -0.0f, 0.0f});
    for (const Fp8Scaling scaling : {Fp8Scaling{0, 0, false}, Fp8Scaling{1, 4, false}}) {
        const Fp8Result r = fp8BlockQuantize(x, f, scaling);
        const std::vector<Fp8BlockError> e = fp8BlockErrors(x, r.dequantized, 4);
        QCOMPARE(e.size(), std::size_t(3));
        for (std::size_t b = 0; b < 3; ++b) {
            float maxAbs = 0.0f;
            double error = 0.0;
            double signal = 0.0;
            for (Eigen::Index j = 4 * Eigen::Index(b); j < 4 * Eigen::Index(b) + 4; ++j) {
                const double d = static_cast<double>(r.dequantized(0, j)) - x(0, j);
                maxAbs = std::max(maxAbs, std::fabs(x(0, j)));
                error += d * d;
                signal += static_cast<double>(x(0, j)) * x(0, j);
            }
            QCOMPARE(bitsOf(e[b].maxAbs), bitsOf(maxAbs));
            VERIFY_SAME_DOUBLE(e[b].relativeError, b == 2 ? 0.0 : std::sqrt(error / signal));
        }
        // Smallest block first: the zeros, then 0.04, then 3.
        QCOMPARE(fp8OrderByMagnitude(e), (std::vector<std::int64_t>{2, 1, 0}));
    }
    // Equal magnitudes keep their index order.
    const MatrixF same = rowOf({1.0f, -2.0f, 2.0f, 0.5f, -2.0f, 1.0f});
    const std::vector<Fp8BlockError> e = fp8BlockErrors(same, same, 2);
    QCOMPARE(fp8OrderByMagnitude(e), (std::vector<std::int64_t>{0, 1, 2}));
    QCOMPARE(e[1].relativeError, 0.0);

    SCALELAB_VERIFY_INPUT_ERROR(fp8BlockErrors(x, MatrixF::Zero(1, 8), 4), "fp8.values");
    SCALELAB_VERIFY_INPUT_ERROR(fp8BlockErrors(x, x, 5), "fp8.block_size");
    SCALELAB_VERIFY_INPUT_ERROR(fp8BlockErrors(x, x, 0), "fp8.block_size");
    MatrixF bad = x;
    bad(0, 6) = std::numeric_limits<float>::quiet_NaN();
    SCALELAB_VERIFY_INPUT_ERROR(fp8BlockErrors(bad, x, 4), "fp8.values[0][6]");
}

void TstFp8::statsExcludingBlocks()
{
    Fp8Inputs in;
    in.outlierScale = 1e5;
    const Fp8Generated g = fp8Generate(in);
    const Fp8Result r = fp8BlockQuantize(g.values, in.format, {1, in.blockSize, false});
    // Nothing excluded: the same sums in the same order as the quantizer's own.
    const Fp8Stats all = fp8StatsExcludingBlocks(g.values, r.dequantized, in.blockSize, {});
    VERIFY_SAME_DOUBLE(all.rmse, r.stats.rmse);
    VERIFY_SAME_DOUBLE(all.snrDb, r.stats.snrDb);
    VERIFY_SAME_DOUBLE(all.maxAbsError, r.stats.maxAbsError);
    VERIFY_SAME_DOUBLE(all.relativeError, r.stats.relativeError);
    QCOMPARE(all.underflowCount, r.stats.underflowCount);

    // Without the outlier blocks: the definition over the remaining values, row-major.
    const Fp8Result t = fp8BlockQuantize(g.values, in.format, {0, 0, false});
    const Fp8Stats small =
        fp8StatsExcludingBlocks(g.values, t.dequantized, in.blockSize, g.outlierBlocks);
    std::vector<bool> outlier(static_cast<std::size_t>(g.values.size() / in.blockSize), false);
    for (std::int64_t b : g.outlierBlocks)
        outlier[static_cast<std::size_t>(b)] = true;
    // The sums in the documented order, an excluded value adding +0: exact, so compared exactly.
    std::vector<double> errorTerms, signalTerms;
    double maxAbs = 0.0;
    std::int64_t count = 0;
    std::int64_t underflow = 0;
    for (Eigen::Index k = 0; k < g.values.size(); ++k) {
        const bool excluded = outlier[static_cast<std::size_t>(k / in.blockSize)];
        const float v = g.values.data()[k];
        const float d = t.dequantized.data()[k];
        const double e = static_cast<double>(d) - v;
        errorTerms.push_back(excluded ? 0.0 : e * e);
        signalTerms.push_back(excluded ? 0.0 : static_cast<double>(v) * v);
        if (excluded)
            continue;
        maxAbs = std::max(maxAbs, std::fabs(e));
        underflow += (v != 0.0f && d == 0.0f) ? 1 : 0;
        ++count;
    }
    QVERIFY(g.values.size() > 4096); // more than one chunk
    const double error = documentedSum(errorTerms);
    const double signal = documentedSum(signalTerms);
    VERIFY_SAME_DOUBLE(small.rmse, std::sqrt(error / static_cast<double>(count)));
    VERIFY_SAME_DOUBLE(small.relativeError, std::sqrt(error / signal));
    VERIFY_SAME_DOUBLE(small.snrDb, 10.0 * std::log10(signal / error));
    VERIFY_SAME_DOUBLE(small.maxAbsError, maxAbs);
    QCOMPARE(small.underflowCount, underflow);
    QVERIFY(small.underflowCount > 0); // x1e5 pushes the small blocks into the subnormals

    // Everything excluded leaves nothing to measure.
    std::vector<std::int64_t> every(static_cast<std::size_t>(g.values.size() / in.blockSize));
    for (std::size_t b = 0; b < every.size(); ++b)
        every[b] = static_cast<std::int64_t>(b);
    const Fp8Stats none = fp8StatsExcludingBlocks(g.values, t.dequantized, in.blockSize, every);
    VERIFY_SAME_DOUBLE(none.rmse, 0.0);
    VERIFY_SAME_DOUBLE(none.snrDb, std::numeric_limits<double>::infinity());
    QCOMPARE(none.underflowCount, std::int64_t(0));

    SCALELAB_VERIFY_INPUT_ERROR(fp8StatsExcludingBlocks(g.values, t.dequantized, in.blockSize,
                                                        {std::int64_t(every.size())}),
                                "fp8.outlier_blocks");
    SCALELAB_VERIFY_INPUT_ERROR(fp8StatsExcludingBlocks(g.values, t.dequantized, 3, {}),
                                "fp8.block_size");
}

void TstFp8::absErrorMap()
{
    // Errors 1..15 placed by hand in a 3 x 5 matrix of zeros.
    const MatrixF x = MatrixF::Zero(3, 5);
    MatrixF d(3, 5);
    for (Eigen::Index i = 0; i < 3; ++i)
        for (Eigen::Index j = 0; j < 5; ++j)
            d(i, j) = static_cast<float>(i * 5 + j + 1) * ((i + j) % 2 ? -1.0f : 1.0f);
    // No pooling when the cells fit: |error| itself.
    const Eigen::MatrixXd full = fp8AbsErrorMap(x, d, 3, 5);
    QCOMPARE(full.rows(), Eigen::Index(3));
    QCOMPARE(full.cols(), Eigen::Index(5));
    for (Eigen::Index i = 0; i < 3; ++i)
        for (Eigen::Index j = 0; j < 5; ++j)
            QCOMPARE(full(i, j), double(i * 5 + j + 1));
    // At most 2 x 2 cells: pools of 2 rows x 3 columns, the last row and columns what is left.
    const Eigen::MatrixXd pooled = fp8AbsErrorMap(x, d, 2, 2);
    QCOMPARE(pooled.rows(), Eigen::Index(2));
    QCOMPARE(pooled.cols(), Eigen::Index(2));
    QCOMPARE(pooled(0, 0), 8.0); // rows 0-1, columns 0-2
    QCOMPARE(pooled(0, 1), 10.0); // rows 0-1, columns 3-4
    QCOMPARE(pooled(1, 0), 13.0); // row 2, columns 0-2
    QCOMPARE(pooled(1, 1), 15.0); // row 2, columns 3-4
    // A NaN error counts as the worst.
    d(0, 0) = std::numeric_limits<float>::quiet_NaN();
    QCOMPARE(fp8AbsErrorMap(x, d, 2, 2)(0, 0), std::numeric_limits<double>::infinity());

    SCALELAB_VERIFY_INPUT_ERROR(fp8AbsErrorMap(x, d, 0, 2), "fp8.map");
    SCALELAB_VERIFY_INPUT_ERROR(fp8AbsErrorMap(x, MatrixF::Zero(3, 4), 2, 2), "fp8.values");
}

void TstFp8::normalChunksDoNotDependOnShape()
{
    // The normals come in chunks of 65536 by row-major position: a small matrix (one thread) is
    // the start of a large one (filled on every core), whatever the shape.
    Fp8Inputs small;
    small.rows = 3;
    small.cols = 1000;
    Fp8Inputs large = small;
    large.rows = 1024;
    large.cols = 1024;
    const MatrixF a = fp8NormalMatrix(small);
    const MatrixF b = fp8NormalMatrix(large);
    for (Eigen::Index k = 0; k < a.size(); ++k)
        QCOMPARE(bitsOf(a.data()[k]), bitsOf(b.data()[k]));
    // Mean 0 and variance 1 within 5 standard errors over a million values.
    const double n = static_cast<double>(b.size());
    const double mean = b.cast<double>().sum() / n;
    const double var = b.cast<double>().array().square().sum() / n - mean * mean;
    QVERIFY(std::fabs(mean) < 5.0 / std::sqrt(n));
    QVERIFY(std::fabs(var - 1.0) < 5.0 * std::sqrt(2.0 / n));
    // The tails: about 0.27 % beyond 3 (the ziggurat's layers and its tail both show here).
    const auto beyond3 = (b.array().abs() > 3.0f).count();
    QVERIFY(std::fabs(static_cast<double>(beyond3) / n - 0.0026998) < 0.0003);
}

void TstFp8::severalScalingsAtOnce()
{
    // Big enough to run on several threads; 128 x 128 tiles are not visited row by row. Blocks
    // of 16 and 24 are whole groups of eight (the kernel's per-group mask; 24 does not divide a
    // chunk of 4096 values), blocks of 4 are not (its per-value mask). fp8StatsExcludingBlocks
    // always takes the per-value mask, so both masks are held to the same figures.
    for (const std::int64_t blockSize : {16, 24, 4}) {
        Fp8Inputs in;
        in.rows = 300;
        in.cols = 1536;
        in.blockSize = blockSize;
        in.outlierScale = 1e5;
        in.seed = 3;
        const Fp8Generated g = fp8Generate(in);
        const std::vector<Fp8ScalingJob> jobs = {
            {{0, 0, false}, true, false, false}, // the plain cast
            {{0, 0, false}, false, true, true},   {{1, 0, false}, false, false, false},
            {{1, 16, false}, false, true, true},  {{128, 128, false}, false, true, false},
            {{1, 32, true}, false, false, false},
        };
        for (Fp8Format f : {Fp8Format::E4M3, Fp8Format::E5M2}) {
            const auto got = fp8QuantizeScalings(g.values, f, Fp8Overflow::NaN, jobs, blockSize,
                                                 g.outlierBlocks);
            QCOMPARE(got.size(), jobs.size());
            for (std::size_t j = 0; j < jobs.size(); ++j) {
                const Fp8Result r = jobs[j].plainCast
                    ? fp8Cast(g.values, f, Fp8Overflow::NaN)
                    : fp8BlockQuantize(g.values, f, jobs[j].scaling, Fp8Overflow::NaN);
                const Fp8Stats small =
                    fp8StatsExcludingBlocks(g.values, r.dequantized, blockSize, g.outlierBlocks);
                for (const auto& [a, b] :
                     {std::pair{got[j].all, r.stats}, std::pair{got[j].small, small}}) {
                    VERIFY_SAME_DOUBLE(a.rmse, b.rmse);
                    VERIFY_SAME_DOUBLE(a.maxAbsError, b.maxAbsError);
                    VERIFY_SAME_DOUBLE(a.snrDb, b.snrDb);
                    VERIFY_SAME_DOUBLE(a.relativeError, b.relativeError);
                    QCOMPARE(a.underflowCount, b.underflowCount);
                }
                // The outliers are left out: the small blocks' figures differ from all of them.
                QVERIFY(got[j].small.maxAbsError < got[j].all.maxAbsError);
                QCOMPARE(got[j].scaleCount, static_cast<std::int64_t>(r.scales.size()));
                QCOMPARE(got[j].scales.size() != 0, jobs[j].keepScales);
                if (jobs[j].keepScales)
                    QVERIFY(sameMatrix(got[j].scales, r.scales));
                QCOMPARE(got[j].dequantized.size() != 0, jobs[j].keepDequantized);
                if (jobs[j].keepDequantized)
                    QVERIFY(sameMatrix(got[j].dequantized, r.dequantized));
            }
        }
    }
}

void TstFp8::orderByMagnitudeOfManyBlocks()
{
    // The radix sort agrees with a stable sort, ties (and -0 against +0) in index order.
    Rng rng(9);
    std::vector<Fp8BlockError> blocks(5000);
    for (Fp8BlockError& b : blocks) {
        const auto pick = rng.below(5);
        b.maxAbs = pick == 0 ? 0.0f : pick == 1 ? -0.0f : static_cast<float>(rng.below(40)) * 0.25f;
    }
    blocks[7].maxAbs = std::numeric_limits<float>::denorm_min();
    blocks[8].maxAbs = std::numeric_limits<float>::max();
    std::vector<std::int64_t> expected(blocks.size());
    std::iota(expected.begin(), expected.end(), 0);
    std::stable_sort(expected.begin(), expected.end(), [&](std::int64_t a, std::int64_t b) {
        return blocks[static_cast<std::size_t>(a)].maxAbs
            < blocks[static_cast<std::size_t>(b)].maxAbs;
    });
    QCOMPARE(fp8OrderByMagnitude(blocks), expected);
}

void TstFp8::groupedTilesMatchScalar()
{
    // Tiles of whole groups of eight take one scale per group (and powers of two a reciprocal);
    // each value must still be fp8Quantize(x / scale) * scale. 4104 columns: rows cross the
    // 4096-value chunks, and 1 x 24 tiles end in a cut tile of 0 (4104 = 171 * 24) or, for 1 x 16
    // (4104 = 256 * 16 + 8), of 8.
    Rng rng(5);
    MatrixF m(3, 4104);
    for (Eigen::Index k = 0; k < m.size(); ++k) {
        // Magnitudes from float32 subnormals to 2^100, some tiles all tiny.
        const auto e = static_cast<std::uint32_t>(rng.below(228));
        const std::uint32_t bits = (e << 23) | static_cast<std::uint32_t>(rng.below(1u << 23));
        m.data()[k] = floatOf(bits | (rng.below(2) ? 0x80000000u : 0u));
    }
    for (Eigen::Index k = 0; k < 64; ++k)
        m.data()[k] = floatOf(static_cast<std::uint32_t>(rng.below(1u << 20))); // subnormals
    for (Fp8Format f : {Fp8Format::E4M3, Fp8Format::E5M2})
        for (Fp8Overflow mode : {Fp8Overflow::Saturate, Fp8Overflow::NaN})
            for (const Fp8Scaling s :
                 {Fp8Scaling{1, 16, false}, Fp8Scaling{1, 24, false}, Fp8Scaling{1, 8, true},
                  Fp8Scaling{1, 32, true}, Fp8Scaling{2, 0, false}, Fp8Scaling{0, 0, false}}) {
                const Fp8Result r = fp8BlockQuantize(m, f, s, mode);
                const std::int64_t tileRows = s.blockRows == 0 ? m.rows() : s.blockRows;
                const std::int64_t tileCols = s.blockCols == 0 ? m.cols() : s.blockCols;
                std::vector<double> terms, signalTerms;
                double maxAbs = 0.0;
                std::int64_t underflow = 0;
                for (Eigen::Index i = 0; i < m.rows(); ++i)
                    for (Eigen::Index j = 0; j < m.cols(); ++j) {
                        const float x = m(i, j);
                        const float scale = r.scales(i / tileRows, j / tileCols);
                        const float want = fp8Quantize(x / scale, f, mode) * scale;
                        if (bitsOf(r.dequantized(i, j)) != bitsOf(want))
                            QFAIL(qPrintable(QStringLiteral("value %1, %2 of tiles %3 x %4")
                                                 .arg(i)
                                                 .arg(j)
                                                 .arg(tileRows)
                                                 .arg(tileCols)));
                        const double d = static_cast<double>(want) - x;
                        terms.push_back(d * d);
                        signalTerms.push_back(static_cast<double>(x) * x);
                        maxAbs = std::max(maxAbs, std::fabs(d)); // a NaN error never wins
                        underflow += (x != 0.0f && want == 0.0f) ? 1 : 0;
                    }
                // Every figure is its definition, the sums in the documented order.
                const double error = documentedSum(terms);
                VERIFY_SAME_DOUBLE(r.stats.rmse,
                                   std::sqrt(error / static_cast<double>(terms.size())));
                VERIFY_SAME_DOUBLE(r.stats.relativeError,
                                   std::sqrt(error / documentedSum(signalTerms)));
                VERIFY_SAME_DOUBLE(r.stats.maxAbsError, maxAbs);
                QCOMPARE(r.stats.underflowCount, underflow);
            }
}

void TstFp8::outlierBlocksAndCopies()
{
    Fp8Inputs in;
    in.rows = 100;
    in.cols = 2000;
    in.blockSize = 8;
    in.seed = 11;
    const Fp8Generated g = fp8Generate(in);
    QCOMPARE(fp8OutlierBlocks(in), g.outlierBlocks);
    // The outliers do not depend on the outlier scale.
    Fp8Inputs other = in;
    other.outlierScale = 7.0;
    QCOMPARE(fp8OutlierBlocks(other), g.outlierBlocks);
    // A const matrix is copied, an rvalue scaled in place: the same result.
    const MatrixF normals = fp8NormalMatrix(in);
    const Fp8Generated copied = fp8ApplyOutliers(normals, in);
    QVERIFY(sameMatrix(copied.values, g.values));
    QCOMPARE(copied.outlierBlocks, g.outlierBlocks);
    QVERIFY(sameMatrix(normals, fp8NormalMatrix(in))); // untouched
}

void TstFp8::workspaceOutlierListIsTheGenerators()
{
    // The list a preview takes without making the matrix: fp8OutlierBlocks', the same before
    // and after a generation, and a new one for a new block size or seed.
    Fp8Workspace ws;
    Fp8Inputs in;
    in.rows = 64;
    in.cols = 256;
    QCOMPARE(ws.outlierBlocks(in), fp8OutlierBlocks(in));
    QCOMPARE(ws.generate(in)->outlierBlocks, ws.outlierBlocks(in));
    in.outlierScale = 7; // the list does not depend on it
    QCOMPARE(ws.outlierBlocks(in), ws.generate(in)->outlierBlocks);
    in.blockSize = 32;
    QCOMPARE(ws.outlierBlocks(in), fp8OutlierBlocks(in));
    in.seed = 9;
    QCOMPARE(ws.outlierBlocks(in), fp8OutlierBlocks(in));
    QVERIFY(fp8OutlierBlocks(in) != ws.generate(Fp8Inputs{})->outlierBlocks);
    in.blockSize = 3; // divides nothing: refused by name, as generate refuses it
    QVERIFY_THROWS_EXCEPTION(InputError, ws.outlierBlocks(in));
}

void TstFp8::bandMaximaFindTheLargestValue()
{
    // 300 rows in bands of 128: two whole bands, the last 44 rows in none. Each band's largest
    // |value| of the generated matrix, for outlier scales above and below 1, is the larger of
    // its two maxima once the outlier one is scaled.
    Fp8Inputs in;
    in.rows = 300;
    in.cols = 64;
    in.blockSize = 16;
    const MatrixF normals = fp8NormalMatrix(in);
    const std::vector<std::int64_t> outliers = fp8OutlierBlocks(in);
    const Fp8BandMaxima m = fp8BandMaxima(normals, in.blockSize, outliers, 128);
    QCOMPARE(m.normal.size(), std::size_t(2));
    QCOMPARE(m.outlier.size(), std::size_t(2));
    for (const double scale : {100.0, 0.01}) {
        in.outlierScale = scale;
        const Fp8Generated g = fp8Generate(in);
        for (std::size_t k = 0; k < 2; ++k) {
            const float largest =
                g.values.middleRows(static_cast<Eigen::Index>(k) * 128, 128).cwiseAbs().maxCoeff();
            const float outlier = static_cast<float>(static_cast<double>(m.outlier[k]) * scale);
            QCOMPARE(std::max(m.normal[k], outlier), largest);
        }
    }
    // Without outliers the normal maxima are the bands' own.
    const Fp8BandMaxima none = fp8BandMaxima(normals, in.blockSize, {}, 128);
    QCOMPARE(none.normal[1], normals.middleRows(128, 128).cwiseAbs().maxCoeff());
    QCOMPARE(none.outlier[1], 0.0f);
    QVERIFY_THROWS_EXCEPTION(InputError, fp8BandMaxima(normals, 3, outliers, 128));
}

void TstFp8::workspaceOrdersAsTheFullSort()
{
    // The workspace sorts only the outliers again after an outlier-scale change and merges them
    // into the kept order of the other blocks: the result is the full stable sort's, through
    // outlier scales that tie outliers with each other (all clamped to the largest float) or
    // with the normals (scale 1), and after block size, seed and shape changes.
    Fp8Workspace ws;
    Fp8Inputs in;
    in.rows = 64;
    in.cols = 256;
    in.blockSize = 16;
    const auto check = [&ws](const Fp8Inputs& x) {
        const std::shared_ptr<const Fp8Generated> g = ws.generate(x);
        const std::vector<Fp8BlockError> blocks = fp8BlockErrors(g->values, g->values, x.blockSize);
        return *ws.orderByMagnitude(g->values, blocks) == fp8OrderByMagnitude(blocks);
    };
    int merged = 0;
    for (const double scale : {100.0, 50.0, 1.0, 1e39, 1e39, 0.5, 100.0}) {
        in.outlierScale = scale;
        QVERIFY2(check(in), qPrintable(QString("outlier scale %1").arg(scale)));
        ++merged;
    }
    QCOMPARE(merged, 7);
    // The same matrix again (a format change): the order found last, not a new one; a new
    // outlier scale writes the matrix again and orders it anew.
    {
        const std::shared_ptr<const Fp8Generated> g = ws.generate(in);
        const std::vector<Fp8BlockError> blocks = fp8BlockErrors(g->values, g->values, 16);
        const auto first = ws.orderByMagnitude(g->values, blocks);
        QCOMPARE(ws.orderByMagnitude(g->values, blocks).get(), first.get());
        Fp8Inputs scaled = in;
        scaled.outlierScale = 7.0;
        const std::shared_ptr<const Fp8Generated> h = ws.generate(scaled);
        const std::vector<Fp8BlockError> moved = fp8BlockErrors(h->values, h->values, 16);
        const auto second = ws.orderByMagnitude(h->values, moved);
        QVERIFY(second.get() != first.get());
        QCOMPARE(*second, fp8OrderByMagnitude(moved));
    }
    in.blockSize = 8;
    QVERIFY(check(in));
    in.outlierScale = 3.0;
    QVERIFY(check(in));
    in.seed = 11;
    QVERIFY(check(in));
    in.rows = 32;
    QVERIFY(check(in));
    in.outlierScale = 1e6;
    QVERIFY(check(in));
    // A matrix the workspace did not generate is sorted whole.
    const Fp8Generated other = fp8Generate(in);
    const std::vector<Fp8BlockError> blocks =
        fp8BlockErrors(other.values, other.values, in.blockSize);
    QCOMPARE(*ws.orderByMagnitude(other.values, blocks), fp8OrderByMagnitude(blocks));
}

void TstFp8::workspaceMatchesFreeFunctions()
{
    Fp8Workspace ws;
    Fp8Inputs in;
    in.rows = 300;
    in.cols = 1024;
    in.blockSize = 16;
    const std::vector<Fp8ScalingJob> jobs = {
        {{0, 0, false}, true, false, false},  {{0, 0, false}, false, true, true},
        {{1, 16, false}, false, true, true},  {{128, 128, false}, false, false, false},
        {{1, 32, true}, false, false, false},
    };
    // QVERIFY returns from the lambda on a failure; the caller stops then.
    const auto check = [&](const Fp8Inputs& x, std::shared_ptr<const Fp8Generated>& g) {
        g = ws.generate(x);
        const Fp8Generated want = fp8Generate(x);
        QVERIFY(sameMatrix(g->values, want.values));
        QCOMPARE(g->outlierBlocks, want.outlierBlocks);
        QVERIFY(sameMatrix(*ws.normals(x), fp8NormalMatrix(x)));
        const auto& got = ws.quantizeScalings(g->values, x.format, x.overflow, jobs, x.blockSize,
                                              g->outlierBlocks);
        const auto expected = fp8QuantizeScalings(g->values, x.format, x.overflow, jobs,
                                                  x.blockSize, g->outlierBlocks);
        QCOMPARE(got.size(), expected.size());
        for (std::size_t j = 0; j < jobs.size(); ++j) {
            VERIFY_SAME_DOUBLE(got[j].all.rmse, expected[j].all.rmse);
            VERIFY_SAME_DOUBLE(got[j].small.rmse, expected[j].small.rmse);
            VERIFY_SAME_DOUBLE(got[j].all.maxAbsError, expected[j].all.maxAbsError);
            QCOMPARE(got[j].all.underflowCount, expected[j].all.underflowCount);
            QVERIFY(sameMatrix(got[j].scales, expected[j].scales));
            QVERIFY(sameMatrix(got[j].dequantized, expected[j].dequantized));
        }
    };
    std::shared_ptr<const Fp8Generated> first, second, third, other;
    check(in, first);
    if (QTest::currentTestFailed())
        return;
    // Unchanged keys: the same object, not a new matrix.
    QCOMPARE(ws.generate(in).get(), first.get());
    const float* deq = ws.quantizeScalings(first->values, in.format, in.overflow, jobs, 16,
                                           first->outlierBlocks)[2]
                           .dequantized.data();
    // An outlier-scale change while the first result is held: a second matrix.
    Fp8Inputs scaled = in;
    scaled.outlierScale = 3.0;
    check(scaled, second);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(second.get() != first.get());
    QCOMPARE(second->values.data() == first->values.data(), false);
    // Once the first is let go its memory is written again, still with the right values.
    const float* firstData = first->values.data();
    first.reset();
    Fp8Inputs again = in;
    again.outlierScale = 50.0;
    check(again, third);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(third->values.data(), firstData);
    // The dequantized matrices of the same shape keep their memory.
    QCOMPARE(ws.quantizeScalings(third->values, in.format, in.overflow, jobs, 16,
                                 third->outlierBlocks)[2]
                 .dequantized.data(),
             deq);
    // Block size, seed, shape and format changes.
    Fp8Inputs blocks = again;
    blocks.blockSize = 8;
    check(blocks, other);
    if (QTest::currentTestFailed())
        return;
    Fp8Inputs seed = blocks;
    seed.seed = 9;
    seed.format = Fp8Format::E5M2;
    check(seed, other);
    if (QTest::currentTestFailed())
        return;
    Fp8Inputs shape = seed;
    shape.rows = 17;
    shape.cols = 64;
    check(shape, other);
    if (QTest::currentTestFailed())
        return;
    ws.clear();
    check(in, other);
    if (QTest::currentTestFailed())
        return;
}

void TstFp8::errorPictureMatchesBoth()
{
    Fp8Inputs in;
    in.rows = 203;
    in.cols = 1080;
    in.blockSize = 8;
    in.outlierScale = 1e4;
    const MatrixF x = fp8Generate(in).values;
    const Fp8Result r = fp8BlockQuantize(x, Fp8Format::E4M3, {0, 0, false});
    // Blocks of 8 (four at a time), of 12 and 5 (the one-by-one path); maps that do and do not
    // divide the matrix.
    for (std::int64_t bs : {8, 12, 5})
        for (const auto& [mr, mc] : {std::pair{64, 64}, std::pair{203, 1080}, std::pair{7, 1}}) {
            const Fp8ErrorPicture p = fp8ErrorPicture(x, r.dequantized, bs, mr, mc);
            const std::vector<Fp8BlockError> e = fp8BlockErrors(x, r.dequantized, bs);
            QCOMPARE(p.blocks.size(), e.size());
            for (std::size_t b = 0; b < e.size(); ++b) {
                QCOMPARE(bitsOf(p.blocks[b].maxAbs), bitsOf(e[b].maxAbs));
                VERIFY_SAME_DOUBLE(p.blocks[b].relativeError, e[b].relativeError);
            }
            const Eigen::MatrixXd map = fp8AbsErrorMap(x, r.dequantized, mr, mc);
            QCOMPARE(p.map.rows(), map.rows());
            QCOMPARE(p.map.cols(), map.cols());
            for (Eigen::Index k = 0; k < map.size(); ++k)
                VERIFY_SAME_DOUBLE(p.map.data()[k], map.data()[k]);
        }
    // Two round trips at once (the tab's pair): each picture exactly as alone, in both paths.
    const Fp8Result chapter = fp8BlockQuantize(x, Fp8Format::E4M3, {1, 8, false});
    for (std::int64_t bs : {8, 5}) {
        Fp8ErrorPicture first, second;
        fp8ErrorPicturesInto(x, r.dequantized, &chapter.dequantized, bs, 64, 64, first, &second);
        for (const auto& [got, deq] :
             {std::pair{&first, &r.dequantized}, std::pair{&second, &chapter.dequantized}}) {
            const Fp8ErrorPicture alone = fp8ErrorPicture(x, *deq, bs, 64, 64);
            QCOMPARE(got->blocks.size(), alone.blocks.size());
            for (std::size_t b = 0; b < alone.blocks.size(); ++b) {
                QCOMPARE(bitsOf(got->blocks[b].maxAbs), bitsOf(alone.blocks[b].maxAbs));
                VERIFY_SAME_DOUBLE(got->blocks[b].relativeError, alone.blocks[b].relativeError);
            }
            QCOMPARE(got->map.rows(), alone.map.rows());
            QCOMPARE(got->map.cols(), alone.map.cols());
            for (Eigen::Index k = 0; k < alone.map.size(); ++k)
                VERIFY_SAME_DOUBLE(got->map.data()[k], alone.map.data()[k]);
        }
        // The two differ (per tensor against per block): the pair is not one picture twice.
        QVERIFY(first.map != second.map);
    }
    const MatrixF narrow = x.leftCols(1072);
    Fp8ErrorPicture one, two;
    SCALELAB_VERIFY_INPUT_ERROR(
        fp8ErrorPicturesInto(x, r.dequantized, &narrow, 8, 64, 64, one, &two), "fp8.values");
    // A value that is not finite is named, as fp8BlockErrors names it.
    MatrixF bad = x;
    bad(150, 7) = std::numeric_limits<float>::quiet_NaN();
    try {
        fp8ErrorPicture(bad, r.dequantized, 8, 64, 64);
        QFAIL("no error");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.field()), QStringLiteral("fp8.values[150][7]"));
    }
}

QTEST_GUILESS_MAIN(TstFp8)
#include "tst_fp8.moc"
