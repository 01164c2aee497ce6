// Ring all-reduce (bytes and a step-by-step simulation) and ZeRO stage memory.

#include "scalelab/core/collectives.h"
#include "scalelab/core/random.h"
#include "testhelpers.h"

#include <QTest>
#include <cmath>
#include <numeric>
#include <vector>

using namespace scalelab::core;

namespace {

Eigen::MatrixXd randomInputs(int ranks, int size, std::uint64_t seed)
{
    Rng rng(seed);
    Eigen::MatrixXd m(ranks, size);
    for (int r = 0; r < ranks; ++r)
        for (int i = 0; i < size; ++i)
            m(r, i) = static_cast<double>(rng.below(2001)) - 1000.0; // integers: sums are exact
    return m;
}

} // namespace

class TstCollectives : public QObject {
    Q_OBJECT

private slots:
    void exerciseZero()
    {
        // Exercise 41.2: P = 1000, n = 4 with the 16-byte accounting (2 + 2 + 12).
        ZeroInputs in;
        in.parameters = 1000;
        in.ranks = 4;
        const ZeroResult r = computeZero(in);
        QCOMPARE(r.dp, makeRatio(16'000, 1));
        QCOMPARE(r.zero1, makeRatio(7'000, 1));
        QCOMPARE(r.zero2, makeRatio(5'500, 1));
        QCOMPARE(r.zero3, makeRatio(4'000, 1));
        // Ring all-reduce of 2000 gradient bytes over 4 ranks: 2 * 3/4 * 2000.
        QCOMPARE(r.ringAllReduceBytesPerRank, makeRatio(3'000, 1));
    }

    void zeroFractions()
    {
        // P = 1000, n = 3: 12000/3 = 4000 is whole, but 14000/3 is not.
        ZeroInputs in;
        in.parameters = 1000;
        in.ranks = 3;
        const ZeroResult r = computeZero(in);
        QCOMPARE(r.zero1, makeRatio(4'000 * 3 + 12'000, 3));
        QVERIFY(r.zero1.isWhole());
        QCOMPARE(r.zero2, makeRatio(2'000 * 3 + 14'000, 3));
        QVERIFY(!r.zero2.isWhole());
        QCOMPARE(r.zero2.value(), 2000.0 + 14000.0 / 3.0);
    }

    void zeroOneRankIsDataParallel()
    {
        ZeroInputs in;
        in.ranks = 1;
        const ZeroResult r = computeZero(in);
        QCOMPARE(r.zero1, r.dp);
        QCOMPARE(r.zero2, r.dp);
        QCOMPARE(r.zero3, r.dp);
        QCOMPARE(r.ringAllReduceBytesPerRank, makeRatio(0, 1));
    }

    void ringBytes_data()
    {
        QTest::addColumn<qint64>("size");
        QTest::addColumn<qint64>("ranks");
        QTest::addColumn<qint64>("num");
        QTest::addColumn<qint64>("den");
        QTest::newRow("n=1 sends nothing") << 1000LL << 1LL << 0LL << 1LL;
        QTest::newRow("n=2 sends the tensor once") << 1000LL << 2LL << 1000LL << 1LL;
        QTest::newRow("n=4") << 1000LL << 4LL << 1500LL << 1LL;
        QTest::newRow("n=3, not whole") << 1000LL << 3LL << 4000LL << 3LL;
    }

    void ringBytes()
    {
        QFETCH(qint64, size);
        QFETCH(qint64, ranks);
        QFETCH(qint64, num);
        QFETCH(qint64, den);
        QCOMPARE(ringAllReduceBytes(size, ranks), makeRatio(num, den));
    }

    void arraySplitMatchesNumpy()
    {
        // numpy.array_split(range(10), 4) has lengths 3, 3, 2, 2.
        QCOMPARE(arraySplitSizes(10, 4), (std::vector<std::int64_t>{3, 3, 2, 2}));
        QCOMPARE(arraySplitSizes(3, 5), (std::vector<std::int64_t>{1, 1, 1, 0, 0}));
        QCOMPARE(arraySplitSizes(8, 4), (std::vector<std::int64_t>{2, 2, 2, 2}));
    }

    void ringSimulation_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("size");
        QTest::newRow("1 rank") << 1 << 5;
        QTest::newRow("2 ranks") << 2 << 6;
        QTest::newRow("4 ranks, divides") << 4 << 16;
        QTest::newRow("4 ranks, uneven") << 4 << 10;
        QTest::newRow("5 ranks, uneven") << 5 << 13;
        QTest::newRow("7 ranks, fewer values than ranks") << 7 << 4;
        QTest::newRow("16 ranks") << 16 << 100;
    }

    void ringSimulation()
    {
        QFETCH(int, ranks);
        QFETCH(int, size);
        const Eigen::MatrixXd in = randomInputs(ranks, size, 42 + static_cast<std::uint64_t>(size));
        const std::int64_t bytesPerValue = 4;
        const RingAllReduceResult out = ringAllReduce(in, bytesPerValue);

        // Every rank ends with the plain sum. The inputs are small integers, so the sums are
        // exact whatever order the ring adds them in.
        const Eigen::RowVectorXd sum = in.colwise().sum();
        for (int r = 0; r < ranks; ++r)
            QCOMPARE(Eigen::RowVectorXd(out.result.row(r)), sum);

        // Each rank sends 2(n-1) chunks; summed over the chunks it sent, exactly 2(n-1)/n of
        // the tensor when n divides the size, and the array_split chunk sizes otherwise.
        QCOMPARE(static_cast<int>(out.steps.size()), 1 + 2 * (ranks - 1));
        for (int r = 0; r < ranks; ++r) {
            std::int64_t expected = 0;
            for (std::size_t s = 1; s < out.steps.size(); ++s) {
                const int chunk = out.steps[s].sentChunk[static_cast<std::size_t>(r)];
                QVERIFY(chunk >= 0 && chunk < ranks);
                expected += out.chunkSizes[static_cast<std::size_t>(chunk)] * bytesPerValue;
            }
            QCOMPARE(out.bytesSent[static_cast<std::size_t>(r)], expected);
        }
        std::int64_t total = 0;
        for (std::int64_t b : out.bytesSent)
            total += b;
        // Over all ranks every chunk crosses 2(n-1) links: 2(n-1) x the tensor in total.
        QCOMPARE(total, std::int64_t(2) * (ranks - 1) * size * bytesPerValue);
        if (size % ranks == 0)
            for (std::int64_t b : out.bytesSent)
                QCOMPARE(makeRatio(b, 1), ringAllReduceBytes(size * bytesPerValue, ranks));
    }

    void ringStepsFollowTheAlgorithm()
    {
        // After reduce-scatter rank r holds the full sum of chunk (r + 1) mod n.
        const int n = 4, size = 10;
        const Eigen::MatrixXd in = randomInputs(n, size, 7);
        const RingAllReduceResult out = ringAllReduce(in);
        const RingStep& afterReduceScatter = out.steps[static_cast<std::size_t>(n - 1)];
        QCOMPARE(afterReduceScatter.phase, RingStep::Phase::ReduceScatter);
        QCOMPARE(afterReduceScatter.index, n - 1);
        const Eigen::RowVectorXd sum = in.colwise().sum();
        std::int64_t offset = 0;
        std::vector<std::int64_t> offsets;
        for (std::int64_t c : out.chunkSizes) {
            offsets.push_back(offset);
            offset += c;
        }
        for (int r = 0; r < n; ++r) {
            const auto c = static_cast<std::size_t>((r + 1) % n);
            QCOMPARE(Eigen::RowVectorXd(
                         afterReduceScatter.buffers.row(r).segment(offsets[c], out.chunkSizes[c])),
                     Eigen::RowVectorXd(sum.segment(offsets[c], out.chunkSizes[c])));
        }
        QCOMPARE(out.steps.back().phase, RingStep::Phase::AllGather);
        QCOMPARE(out.steps.front().buffers, in);
    }

    void ringContributorsMatchTheSimulation_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("size");
        QTest::newRow("1 rank") << 1 << 3;
        QTest::newRow("2 ranks") << 2 << 4;
        QTest::newRow("3 ranks, one value a chunk") << 3 << 3;
        QTest::newRow("4 ranks, uneven") << 4 << 9;
        QTest::newRow("7 ranks") << 7 << 14;
        QTest::newRow("16 ranks") << 16 << 16;
    }

    void ringContributorsMatchTheSimulation()
    {
        // With every input 1, each value of a buffer counts the ranks summed into it.
        QFETCH(int, ranks);
        QFETCH(int, size);
        const RingAllReduceResult out = ringAllReduce(Eigen::MatrixXd::Ones(ranks, size));
        std::vector<int> chunkOfValue;
        for (int c = 0; c < ranks; ++c)
            for (std::int64_t i = 0; i < out.chunkSizes[static_cast<std::size_t>(c)]; ++i)
                chunkOfValue.push_back(c);
        for (const RingStep& step : out.steps)
            for (int r = 0; r < ranks; ++r)
                for (int i = 0; i < size; ++i)
                    QCOMPARE(ringContributors(ranks, step.phase, step.index, r,
                                              chunkOfValue[static_cast<std::size_t>(i)]),
                             static_cast<int>(step.buffers(r, i)));
    }

    void ringDemoIsSmallWholeNumbersThatSum()
    {
        const RingDemo demo = ringDemo(5, 10, 2, 3);
        QCOMPARE(demo.inputs.rows(), Eigen::Index(5));
        QCOMPARE(demo.inputs.cols(), Eigen::Index(10));
        QVERIFY(demo.inputs.minCoeff() >= 1 && demo.inputs.maxCoeff() <= 9);
        QVERIFY((demo.inputs.array() == demo.inputs.array().round()).all());
        QCOMPARE(demo.plainSum, Eigen::RowVectorXd(demo.inputs.colwise().sum()));
        for (int r = 0; r < 5; ++r)
            QCOMPARE(Eigen::RowVectorXd(demo.ring.result.row(r)), demo.plainSum);
        // Two bytes a value: each rank sends 2(n-1)/n of the 20-byte tensor, 32 bytes.
        for (std::int64_t b : demo.ring.bytesSent)
            QCOMPARE(b, std::int64_t(32));
        QCOMPARE(ringDemo(5, 10, 2, 3).inputs, demo.inputs); // the seed reproduces it
        QVERIFY(ringDemo(5, 10, 2, 4).inputs != demo.inputs);
        SCALELAB_VERIFY_INPUT_ERROR(ringDemo(0, 4, 2, 1), "zero.ranks");
        SCALELAB_VERIFY_INPUT_ERROR(ringDemo(3, 0, 2, 1), "zero.ranks");
    }

    void stageBytesAddUpToTheStageFigures_data()
    {
        QTest::addColumn<qint64>("parameters");
        QTest::addColumn<qint64>("ranks");
        QTest::addColumn<qint64>("w");
        QTest::addColumn<qint64>("g");
        QTest::addColumn<qint64>("o");
        QTest::newRow("exercise") << 1000LL << 4LL << 2LL << 2LL << 12LL;
        QTest::newRow("uneven") << 1001LL << 3LL << 2LL << 4LL << 12LL;
        QTest::newRow("default") << 7'500'000'000LL << 64LL << 2LL << 2LL << 12LL;
        QTest::newRow("one rank") << 999LL << 1LL << 1LL << 0LL << 8LL;
    }

    void stageBytesAddUpToTheStageFigures()
    {
        QFETCH(qint64, parameters);
        QFETCH(qint64, ranks);
        QFETCH(qint64, w);
        QFETCH(qint64, g);
        QFETCH(qint64, o);
        const ZeroInputs in{parameters, ranks, w, g, o};
        const ZeroResult r = computeZero(in);
        const std::pair<ZeroStage, Ratio> stages[] = {{ZeroStage::DataParallel, r.dp},
                                                      {ZeroStage::Zero1, r.zero1},
                                                      {ZeroStage::Zero2, r.zero2},
                                                      {ZeroStage::Zero3, r.zero3}};
        for (const auto& [stage, total] : stages) {
            const ZeroStageBytes b = zeroStageBytes(in, stage);
            QCOMPARE(b.total, total);
            // The parts add up to the total, as fractions over n.
            double sum = 0;
            for (const ZeroPart& p : {b.weights, b.gradients, b.optimizer}) {
                QVERIFY(p.replicated.numerator == 0 || p.sharded.numerator == 0);
                sum += p.replicated.value() + p.sharded.value();
            }
            QCOMPARE(sum, total.value());
            // What the other ranks keep completes the data-parallel figure, exactly.
            const Ratio& other = b.onOtherRanks;
            QCOMPARE(
                makeRatio(total.numerator * other.denominator + other.numerator * total.denominator,
                          total.denominator * other.denominator),
                r.dp);
        }
    }

    void eachStageShardsItsPart()
    {
        // Exercise 41.2 again: P = 1000, n = 4, 2 + 2 + 12 bytes.
        const ZeroInputs in{1000, 4, 2, 2, 12};
        const ZeroStageBytes dp = zeroStageBytes(in, ZeroStage::DataParallel);
        QCOMPARE(dp.optimizer.replicated, makeRatio(12'000, 1));
        const ZeroStageBytes z1 = zeroStageBytes(in, ZeroStage::Zero1);
        QCOMPARE(z1.gradients.replicated, makeRatio(2'000, 1));
        QCOMPARE(z1.optimizer.sharded, makeRatio(3'000, 1));
        const ZeroStageBytes z2 = zeroStageBytes(in, ZeroStage::Zero2);
        QCOMPARE(z2.weights.replicated, makeRatio(2'000, 1));
        QCOMPARE(z2.gradients.sharded, makeRatio(500, 1));
        const ZeroStageBytes z3 = zeroStageBytes(in, ZeroStage::Zero3);
        QCOMPARE(z3.weights.sharded, makeRatio(500, 1));
        QCOMPARE(z3.weights.replicated, makeRatio(0, 1));
    }

    void fewestRanksThatFit_data()
    {
        // P = 1000 with 2 + 2 + 12 bytes: 16,000 bytes of model state.
        QTest::addColumn<int>("stage");
        QTest::addColumn<qint64>("capacity");
        QTest::addColumn<qint64>("expected"); // -1: never fits
        const auto dp = int(ZeroStage::DataParallel), z1 = int(ZeroStage::Zero1),
                   z2 = int(ZeroStage::Zero2), z3 = int(ZeroStage::Zero3);
        QTest::newRow("DP fits exactly") << dp << 16'000LL << 1LL;
        QTest::newRow("DP one byte short") << dp << 15'999LL << -1LL;
        QTest::newRow("ZeRO-1: 4000 + 12000/n <= 7000") << z1 << 7'000LL << 4LL;
        QTest::newRow("ZeRO-1: rounds up") << z1 << 6'999LL << 5LL;
        QTest::newRow("ZeRO-1: replicated part fills it") << z1 << 4'000LL << -1LL;
        QTest::newRow("ZeRO-2: 2000 + 14000/n <= 3000") << z2 << 3'000LL << 14LL;
        QTest::newRow("ZeRO-3: 16000/n <= 4000") << z3 << 4'000LL << 4LL;
        QTest::newRow("ZeRO-3: 16000/n <= 3999") << z3 << 3'999LL << 5LL;
        QTest::newRow("ZeRO-3: nothing fits in 0") << z3 << 0LL << -1LL;
        QTest::newRow("ZeRO-3: everything fits in a lot") << z3 << 1'000'000LL << 1LL;
    }

    void fewestRanksThatFit()
    {
        QFETCH(int, stage);
        QFETCH(qint64, capacity);
        QFETCH(qint64, expected);
        const ZeroInputs in{1000, 1, 2, 2, 12};
        const auto n = scalelab::core::fewestRanksThatFit(in, ZeroStage(stage), capacity);
        QCOMPARE(n.has_value(), expected > 0);
        if (!n)
            return;
        QCOMPARE(*n, expected);
        // It fits at n and, unless n is 1, not at n - 1.
        const auto bytesAt = [&](std::int64_t ranks) {
            ZeroInputs at = in;
            at.ranks = ranks;
            return zeroStageBytes(at, ZeroStage(stage)).total.value();
        };
        QVERIFY(bytesAt(*n) <= double(capacity));
        if (*n > 1)
            QVERIFY(bytesAt(*n - 1) > double(capacity));
    }

    void ringTimeAndBandwidths()
    {
        // 2000 bytes over 4 ranks, 1000 bytes/s, 0.5 s a message: 2*3*(0.5 + 2000/4000) = 6 s.
        const LinkModel link{1000.0, 0.5};
        QCOMPARE(ringAllReduceSeconds(2000.0, 4, link), 6.0);
        QCOMPARE(ringAllReduceSeconds(2000.0, 1, link), 0.0);
        QCOMPARE(busBandwidth(100.0, 4), 150.0);
        QCOMPARE(busBandwidth(100.0, 1), 0.0);
        QCOMPARE(busBandwidth(100.0, 2), 100.0);
    }

    void stepTraffic()
    {
        // P = 1000, w = g = 2: the gradient tensor is 2000 bytes; n = 4.
        const ZeroInputs in{1000, 4, 2, 2, 12};
        const LinkModel link{1000.0, 0.5};
        const ZeroTraffic t = zeroTraffic(in, link);
        QCOMPARE(t.dp.bytes, ringAllReduceBytes(2000, 4));
        QCOMPARE(t.dp.bytes, makeRatio(3'000, 1));
        QCOMPARE(t.dp.messages, std::int64_t(6));
        QCOMPARE(t.dp.seconds, 6.0);
        QCOMPARE(t.dp.algorithmBandwidth, 2000.0 / 6.0);
        QCOMPARE(t.dp.busBandwidth, busBandwidth(2000.0 / 6.0, 4));
        // Reduce-scatter + all-gather: DP's volume and time when w = g.
        QCOMPARE(t.zero12.bytes, t.dp.bytes);
        QCOMPARE(t.zero12.messages, std::int64_t(6));
        QCOMPARE(t.zero12.seconds, 6.0 * 0.5 + 3000.0 / 1000.0);
        // ZeRO-3: 1.5x DP's volume in 3(n-1) messages.
        QCOMPARE(t.zero3.bytes, makeRatio(4'500, 1));
        QCOMPARE(t.zero3.messages, std::int64_t(9));
        QCOMPARE(t.zero3.seconds, 9.0 * 0.5 + 4500.0 / 1000.0);
        QCOMPARE(t.zero3.algorithmBandwidth, 2000.0 / 9.0);
        QCOMPARE(t.zero3.busBandwidth, 4500.0 / 9.0);
        // One rank sends nothing: no time, and no bandwidth to speak of.
        const ZeroTraffic one = zeroTraffic(ZeroInputs{1000, 1, 2, 2, 12}, link);
        QCOMPARE(one.zero3.bytes, makeRatio(0, 1));
        QCOMPARE(one.dp.seconds, 0.0);
        QCOMPARE(one.dp.busBandwidth, 0.0);
    }

    void zero3IsOneAndAHalfTimesDp_data()
    {
        QTest::addColumn<qint64>("ranks");
        for (qint64 n : {2, 3, 7, 64, 1000})
            QTest::addRow("n=%lld", n) << n;
    }

    void zero3IsOneAndAHalfTimesDp()
    {
        QFETCH(qint64, ranks);
        const ZeroTraffic t = zeroTraffic(ZeroInputs{7'500'000'001, ranks, 2, 2, 12}, LinkModel{});
        QCOMPARE(makeRatio(t.zero3.bytes.numerator * 2, t.zero3.bytes.denominator),
                 makeRatio(t.dp.bytes.numerator * 3, t.dp.bytes.denominator));
        // With wider weights than gradients the ZeRO stages move more than DP.
        const ZeroTraffic wide = zeroTraffic(ZeroInputs{1000, ranks, 4, 2, 12}, LinkModel{});
        QVERIFY(wide.zero12.bytes.value() > wide.dp.bytes.value());
    }

    void ratiosReduceByTheGreatestCommonDivisor()
    {
        // makeRatio's own gcd against the standard one: powers of two on both sides, odd
        // factors, equal values, 1, 0 and the largest magnitudes.
        std::vector<std::int64_t> values{0,         1,
                                         2,         3,
                                         12,        18,
                                         1000,      1LL << 40,
                                         3LL << 40, (1LL << 62) + 1,
                                         INT64_MAX, INT64_MAX - 1};
        Rng rng(5);
        for (int i = 0; i < 400; ++i)
            values.push_back(static_cast<std::int64_t>(rng.below(1ULL << 30)) << rng.below(33));
        for (const std::int64_t a : values)
            for (const std::int64_t b : {std::int64_t(1), std::int64_t(6), std::int64_t(1) << 20,
                                         std::int64_t(96'000), INT64_MAX, values[50]})
                for (const std::int64_t n : {a, -a}) {
                    const Ratio r = makeRatio(n, b);
                    const std::int64_t g = std::gcd(n, b);
                    QCOMPARE(r, (Ratio{n / g, b / g}));
                }
        QCOMPARE(makeRatio(0, 7), (Ratio{0, 1}));
        QCOMPARE(makeRatio(0, 0), (Ratio{0, 1}));
    }

    void badInput()
    {
        ZeroInputs in;
        in.ranks = 0;
        SCALELAB_VERIFY_INPUT_ERROR(computeZero(in), "zero.ranks");
        in = ZeroInputs{};
        in.parameters = 0;
        SCALELAB_VERIFY_INPUT_ERROR(computeZero(in), "zero.parameters");
        in = ZeroInputs{};
        in.weightBytes = -1;
        SCALELAB_VERIFY_INPUT_ERROR(computeZero(in), "zero.weight_bytes");
        in = ZeroInputs{};
        in.gradBytes = -2;
        SCALELAB_VERIFY_INPUT_ERROR(computeZero(in), "zero.grad_bytes");
        in = ZeroInputs{};
        in.optimizerBytes = -3;
        SCALELAB_VERIFY_INPUT_ERROR(computeZero(in), "zero.optimizer_bytes");
        in = ZeroInputs{};
        in.parameters = 1LL << 53;
        in.ranks = 1LL << 20; // P (w+g) n overflows: refused, not wrapped
        SCALELAB_VERIFY_INPUT_ERROR(computeZero(in), "zero.parameters");
        SCALELAB_VERIFY_INPUT_ERROR(ringAllReduce(Eigen::MatrixXd(0, 4)), "zero.ranks");
        SCALELAB_VERIFY_INPUT_ERROR(zeroTraffic(ZeroInputs{}, LinkModel{0.0, 1e-6}),
                                    "zero.link_bandwidth");
        SCALELAB_VERIFY_INPUT_ERROR(zeroTraffic(ZeroInputs{}, LinkModel{1e9, -1.0}),
                                    "zero.link_latency");
        SCALELAB_VERIFY_INPUT_ERROR(zeroTraffic(ZeroInputs{}, LinkModel{1e9, std::nan("")}),
                                    "zero.link_latency");
        SCALELAB_VERIFY_INPUT_ERROR(zeroTraffic(ZeroInputs{1000, 0, 2, 2, 12}, LinkModel{}),
                                    "zero.ranks");
        in = ZeroInputs{};
        in.parameters = 1LL << 60; // P g overflows
        SCALELAB_VERIFY_INPUT_ERROR(zeroTraffic(in, LinkModel{}), "zero.parameters");
        SCALELAB_VERIFY_INPUT_ERROR(zeroStageBytes(in, ZeroStage::Zero1), "zero.parameters");
    }
};

QTEST_GUILESS_MAIN(TstCollectives)
#include "tst_collectives.moc"
