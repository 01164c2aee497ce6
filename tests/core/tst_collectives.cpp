// Ring all-reduce (bytes and a step-by-step simulation) and ZeRO stage memory.

#include "scalelab/core/collectives.h"
#include "scalelab/core/random.h"
#include "testhelpers.h"

#include <QTest>

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
    }
};

QTEST_GUILESS_MAIN(TstCollectives)
#include "tst_collectives.moc"
