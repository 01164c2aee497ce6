// The column-then-row tensor-parallel MLP equals the unsharded one.

#include "scalelab/core/random.h"
#include "scalelab/core/tensor_parallel.h"
#include "testhelpers.h"

#include <QTest>
#include <cmath>

using namespace scalelab::core;

class TstTensorParallel : public QObject {
    Q_OBJECT

private slots:
    void geluMatchesTheFormula()
    {
        Eigen::MatrixXd x(1, 4);
        x << -3.0, -0.5, 0.0, 2.0;
        const Eigen::MatrixXd y = gelu(x);
        QCOMPARE(y(0, 2), 0.0);
        // 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))) at x = 2, written out.
        const double two = 0.5 * 2.0 * (1.0 + std::tanh(0.7978845608028654 * (2.0 + 0.35772)));
        QVERIFY(std::abs(y(0, 3) - two) < 1e-15);
        QVERIFY(y(0, 0) < 0.0 && y(0, 0) > -0.01); // GELU is slightly negative far left
    }

    void shardedEqualsUnsharded()
    {
        // Many random shapes and rank counts, uneven splits included. Float64 sums of order-one
        // terms in a different order differ by a few ulps; 1e-12 leaves ample room.
        Rng pick(2024);
        int checked = 0;
        for (int trial = 0; trial < 200; ++trial) {
            const auto tokens = static_cast<std::int64_t>(1 + pick.below(12));
            const auto dModel = static_cast<std::int64_t>(1 + pick.below(24));
            const auto dFf = static_cast<std::int64_t>(1 + pick.below(80));
            const auto ranks =
                static_cast<std::int64_t>(1 + pick.below(static_cast<std::uint64_t>(dFf)));
            const MlpWeights w =
                makeMlpWeights(tokens, dModel, dFf, 100 + static_cast<std::uint64_t>(trial));
            const Eigen::MatrixXd a = mlp(w);
            const Eigen::MatrixXd b = tensorParallelMlp(w, ranks);
            QCOMPARE(b.rows(), a.rows());
            QCOMPARE(b.cols(), a.cols());
            const double diff = (a - b).cwiseAbs().maxCoeff();
            if (diff > 1e-12)
                QFAIL(qPrintable(QString("tokens %1 d_model %2 d_ff %3 ranks %4: difference %5")
                                     .arg(tokens)
                                     .arg(dModel)
                                     .arg(dFf)
                                     .arg(ranks)
                                     .arg(diff)));
            ++checked;
        }
        QCOMPARE(checked, 200);
    }

    void partialsHaveFullOutputWidth()
    {
        const MlpWeights w = makeMlpWeights(3, 5, 10, 9);
        const auto partials = tensorParallelPartials(w, 4);
        QCOMPARE(partials.size(), std::size_t(4));
        for (const auto& p : partials) {
            QCOMPARE(p.rows(), Eigen::Index(3));
            QCOMPARE(p.cols(), Eigen::Index(5));
        }
    }

    void aWrongSplitIsNotEqual()
    {
        // Splitting W2 by columns instead of rows does not rebuild H W2: the check above could
        // fail if the sharded form were wrong.
        const MlpWeights w = makeMlpWeights(4, 6, 12, 3);
        Eigen::MatrixXd wrong = Eigen::MatrixXd::Zero(4, 6);
        const Eigen::MatrixXd h = gelu((w.x * w.w1).rowwise() + w.b1);
        wrong.leftCols(3) = h.leftCols(6) * w.w2.topRows(6).leftCols(3);
        wrong.rightCols(3) = h.rightCols(6) * w.w2.bottomRows(6).rightCols(3);
        wrong = wrong.rowwise() + w.b2;
        QVERIFY((wrong - mlp(w)).cwiseAbs().maxCoeff() > 1e-3);
    }

    void weightsAreOfOrderOne()
    {
        const MlpWeights w = makeMlpWeights(64, 256, 1024, 5);
        const Eigen::MatrixXd out = mlp(w);
        const double rms = std::sqrt(out.squaredNorm() / static_cast<double>(out.size()));
        QVERIFY2(rms > 0.05 && rms < 5.0, qPrintable(QString::number(rms)));
        QCOMPARE(makeMlpWeights(2, 3, 4, 5).w1, makeMlpWeights(2, 3, 4, 5).w1); // seeded
        QVERIFY(makeMlpWeights(2, 3, 4, 5).w1 != makeMlpWeights(2, 3, 4, 6).w1);
    }

    void computeDefaults()
    {
        const TensorParallelResult r = computeTensorParallel(TensorParallelInputs{});
        QVERIFY(r.maxAbsDifference < 1e-12);
        QCOMPARE(r.shardWidths, (std::vector<std::int64_t>{16, 16, 16, 16}));
        // 8 x 16 partial outputs at 2 bytes, ring over 4 ranks: 2 * 3/4 * 256 = 384.
        QCOMPARE(r.allReduceBytesPerRank, makeRatio(384, 1));
        TensorParallelInputs uneven;
        uneven.dFf = 10;
        uneven.ranks = 4;
        QCOMPARE(computeTensorParallel(uneven).shardWidths,
                 (std::vector<std::int64_t>{3, 3, 2, 2}));
    }

    void float32PathRoundsTheSameWeights()
    {
        const MlpWeights w = makeMlpWeights(5, 7, 20, 11);
        const MlpWeightsF f = toFloat(w);
        QCOMPARE(f.w1(2, 3), static_cast<float>(w.w1(2, 3)));
        QCOMPARE(f.b2(4), static_cast<float>(w.b2(4)));
        // GELU in float32 is the same formula evaluated with float operations.
        Eigen::MatrixXf x(1, 1);
        x << 2.0f;
        const float c = static_cast<float>(std::sqrt(2.0 / 3.14159265358979323846));
        QCOMPARE(gelu(x)(0, 0),
                 0.5f * 2.0f * (1.0f + std::tanh(c * (2.0f + 0.044715f * 2.0f * 2.0f * 2.0f))));
        // Float32 results sit within float32 rounding of the float64 ones, and the sharded
        // float32 layer within float32 rounding of the unsharded one: order-one outputs, sums
        // of a few dozen terms, so 1e-4 is loose for float32 and far too tight for a bug.
        const Eigen::MatrixXf single = mlp(f);
        QVERIFY((single.cast<double>() - mlp(w)).cwiseAbs().maxCoeff() < 1e-4);
        for (std::int64_t ranks : {1, 3, 7, 20}) {
            const double diff = maxAbsDifference(tensorParallelMlp(f, ranks), single);
            QVERIFY2(diff < 1e-5, qPrintable(QString::number(diff)));
        }
        QCOMPARE(tensorParallelPartials(f, 3).size(), std::size_t(3));
    }

    void float32ErrorIsLargerThanFloat64()
    {
        // Rounding in float32 is about 2^29 times coarser; over a realistic width the sharded
        // layer differs from the unsharded one by far more in float32 than in float64.
        const MlpWeights w = makeMlpWeights(32, 64, 256, 4);
        const double d64 = maxAbsDifference(tensorParallelMlp(w, 8), mlp(w));
        const MlpWeightsF f = toFloat(w);
        const double d32 = maxAbsDifference(tensorParallelMlp(f, 8), mlp(f));
        QVERIFY2(d64 < 1e-13, qPrintable(QString::number(d64)));
        QVERIFY2(d32 > 1e-9 && d32 < 1e-4, qPrintable(QString::number(d32)));
        // The same figure computeTensorParallel reports.
        TensorParallelInputs in;
        in.tokens = 32;
        in.dModel = 64;
        in.dFf = 256;
        in.ranks = 8;
        in.seed = 4;
        QCOMPARE(computeTensorParallel(in).maxAbsDifference, d64);
    }

    void maxAbsDifferenceOfMatrices()
    {
        Eigen::MatrixXd a(2, 2), b(2, 2);
        a << 1, 2, 3, 4;
        b << 1, 2.5, 1, 4;
        QCOMPARE(maxAbsDifference(a, b), 2.0);
        QCOMPARE(maxAbsDifference(Eigen::MatrixXd(0, 3), Eigen::MatrixXd(0, 3)), 0.0);
        QCOMPARE(
            maxAbsDifference(Eigen::MatrixXf(a.cast<float>()), Eigen::MatrixXf(b.cast<float>())),
            2.0);
    }

    void wrongSplitsMatchTheirDefinitions()
    {
        const MlpWeights w = makeMlpWeights(4, 6, 12, 3);
        const Eigen::MatrixXd h = gelu((w.x * w.w1).rowwise() + w.b1);
        // W2 by columns over 2 ranks: each output half sees only its own half of H.
        Eigen::MatrixXd cols(4, 6);
        cols.leftCols(3) = h.leftCols(6) * w.w2.topRows(6).leftCols(3);
        cols.rightCols(3) = h.rightCols(6) * w.w2.bottomRows(6).rightCols(3);
        cols = cols.rowwise() + w.b2;
        QVERIFY(maxAbsDifference(wrongSplitMlp(w, 2, WrongSplit::W2ByColumns), cols) < 1e-14);
        // W1 by rows over 2 ranks: GELU of each half of the pre-activation, b1 on rank 0.
        const Eigen::MatrixXd p0 = (w.x.leftCols(3) * w.w1.topRows(3)).rowwise() + w.b1;
        const Eigen::MatrixXd p1 = w.x.rightCols(3) * w.w1.bottomRows(3);
        const Eigen::MatrixXd rows = ((gelu(p0) + gelu(p1)) * w.w2).rowwise() + w.b2;
        QVERIFY(maxAbsDifference(wrongSplitMlp(w, 2, WrongSplit::W1ByRows), rows) < 1e-14);
        // One rank: nothing is split, so both are the MLP itself.
        for (WrongSplit split : {WrongSplit::W2ByColumns, WrongSplit::W1ByRows})
            QVERIFY(maxAbsDifference(wrongSplitMlp(w, 1, split), mlp(w)) < 1e-14);
    }

    void wrongSplitsMissByTheOutputsOwnSize()
    {
        // The error of a wrong split is not rounding: it is a sizeable part of the output.
        const MlpWeights w = makeMlpWeights(16, 32, 128, 8);
        const Eigen::MatrixXd y = mlp(w);
        const double size = y.cwiseAbs().maxCoeff();
        const MlpWeightsF f = toFloat(w);
        for (WrongSplit split : {WrongSplit::W2ByColumns, WrongSplit::W1ByRows})
            for (std::int64_t ranks : {2, 4, 32, 128}) {
                const double err = maxAbsDifference(wrongSplitMlp(w, ranks, split), y);
                QVERIFY2(err > 0.1 * size, qPrintable(QString("%1 of %2").arg(err).arg(size)));
                const double err32 = maxAbsDifference(wrongSplitMlp(f, ranks, split), mlp(f));
                QVERIFY(std::abs(err32 - err) < 1e-4);
            }
        // More ranks than output columns (or input features): the extra ranks get empty
        // shards and the result is still defined.
        const Eigen::MatrixXd many = wrongSplitMlp(w, 100, WrongSplit::W2ByColumns);
        QVERIFY(many.allFinite());
        QVERIFY(wrongSplitMlp(w, 100, WrongSplit::W1ByRows).allFinite());
        SCALELAB_VERIFY_INPUT_ERROR(wrongSplitMlp(w, 0, WrongSplit::W1ByRows),
                                    "tensor_parallel.ranks");
    }

    void rankCosts()
    {
        // d_model 16, d_ff 10 over 4 ranks: widths 3, 3, 2, 2; 8 tokens at 2 bytes.
        TensorParallelInputs in;
        in.dFf = 10;
        in.ranks = 4;
        const TensorParallelRankCost wide = tensorParallelRankCost(in, 0);
        QCOMPARE(wide.width, std::int64_t(3));
        QCOMPARE(wide.parameters, std::int64_t(2 * 16 * 3 + 3 + 16)); // 115
        QCOMPARE(wide.parameterBytes, std::int64_t(230));
        QCOMPARE(wide.multiplyAdds, std::int64_t(2 * 8 * 16 * 3)); // 768
        QCOMPARE(wide.activationBytes, std::int64_t((8 * 16 + 2 * 8 * 3) * 2)); // 352
        QCOMPARE(wide.allReduceBytes, makeRatio(384, 1)); // 2 * 3/4 * 256
        const TensorParallelRankCost narrow = tensorParallelRankCost(in, 3);
        QCOMPARE(narrow.width, std::int64_t(2));
        QCOMPARE(narrow.multiplyAdds, std::int64_t(512));
        // Over all ranks the split holds every hidden column once and does the layer's work.
        std::int64_t width = 0, macs = 0;
        for (std::int64_t r = 0; r < in.ranks; ++r) {
            width += tensorParallelRankCost(in, r).width;
            macs += tensorParallelRankCost(in, r).multiplyAdds;
        }
        QCOMPARE(width, in.dFf);
        QCOMPARE(macs, 2 * in.tokens * in.dModel * in.dFf);
        SCALELAB_VERIFY_INPUT_ERROR(tensorParallelRankCost(in, 4), "tensor_parallel.ranks");
        SCALELAB_VERIFY_INPUT_ERROR(tensorParallelRankCost(in, -1), "tensor_parallel.ranks");
        in.ranks = 0;
        SCALELAB_VERIFY_INPUT_ERROR(tensorParallelRankCost(in, 0), "tensor_parallel.ranks");
    }

    void widestRankCostsFollowTheRankCount()
    {
        TensorParallelInputs in;
        in.dFf = 10;
        in.ranks = 4;
        const std::vector<TensorParallelRankCost> costs = widestRankCosts(in);
        QCOMPARE(costs.size(), std::size_t(4));
        const std::int64_t widths[] = {10, 5, 4, 3};
        for (std::int64_t n = 1; n <= 4; ++n) {
            TensorParallelInputs each = in;
            each.ranks = n;
            const TensorParallelRankCost c = tensorParallelRankCost(each, 0);
            const TensorParallelRankCost& got = costs[static_cast<std::size_t>(n - 1)];
            QCOMPARE(got.width, widths[n - 1]);
            QCOMPARE(got.width, c.width);
            QCOMPARE(got.parameters, c.parameters);
            QCOMPARE(got.multiplyAdds, c.multiplyAdds);
            QCOMPARE(got.activationBytes, c.activationBytes);
            QCOMPARE(got.allReduceBytes, c.allReduceBytes);
        }
        QCOMPARE(costs[0].allReduceBytes, makeRatio(0, 1)); // one rank sends nothing
    }

    void sampledRankCounts()
    {
        QCOMPARE(sampleRankCounts(4, 64), (std::vector<std::int64_t>{1, 2, 3, 4}));
        QCOMPARE(sampleRankCounts(1, 64), (std::vector<std::int64_t>{1}));
        QCOMPARE(sampleRankCounts(3, 0), (std::vector<std::int64_t>{1, 3})); // 0 reads as 2
        QCOMPARE(sampleRankCounts(16, 3), (std::vector<std::int64_t>{1, 4, 16}));
        for (const auto& [ranks, most] : {std::pair<std::int64_t, std::int64_t>{4096, 64},
                                          {4096, 6},
                                          {100, 10},
                                          {17, 16},
                                          {65536, 40},
                                          {5, 2}}) {
            const std::vector<std::int64_t> c = sampleRankCounts(ranks, most);
            QVERIFY(std::int64_t(c.size()) <= std::max<std::int64_t>(most, 2));
            QCOMPARE(c.front(), std::int64_t(1));
            QCOMPARE(c.back(), ranks);
            for (std::size_t i = 1; i < c.size(); ++i)
                QVERIFY(c[i] > c[i - 1]);
            QVERIFY(c.size() >= std::size_t(2));
        }
        // The fine grid keeps many points when it may.
        QVERIFY(sampleRankCounts(4096, 64).size() >= 40);
    }

    void badInput()
    {
        TensorParallelInputs in;
        in.ranks = in.dFf + 1;
        SCALELAB_VERIFY_INPUT_ERROR(computeTensorParallel(in), "tensor_parallel.ranks");
        in = TensorParallelInputs{};
        in.ranks = 0;
        SCALELAB_VERIFY_INPUT_ERROR(computeTensorParallel(in), "tensor_parallel.ranks");
        in = TensorParallelInputs{};
        in.tokens = 0;
        SCALELAB_VERIFY_INPUT_ERROR(computeTensorParallel(in), "tensor_parallel.tokens");
        in = TensorParallelInputs{};
        in.dModel = 0;
        SCALELAB_VERIFY_INPUT_ERROR(computeTensorParallel(in), "tensor_parallel.d_model");
        in = TensorParallelInputs{};
        in.dFf = 0;
        SCALELAB_VERIFY_INPUT_ERROR(computeTensorParallel(in), "tensor_parallel.d_ff");
        in = TensorParallelInputs{};
        in.bytesPerValue = 0;
        SCALELAB_VERIFY_INPUT_ERROR(computeTensorParallel(in), "tensor_parallel.bytes_per_value");
        in = TensorParallelInputs{};
        in.seed = -1;
        SCALELAB_VERIFY_INPUT_ERROR(computeTensorParallel(in), "tensor_parallel.seed");
        in = TensorParallelInputs{};
        in.tokens = 1LL << 40; // would need terabytes: refused before allocating
        SCALELAB_VERIFY_INPUT_ERROR(computeTensorParallel(in), "tensor_parallel.tokens");
    }

    void sizeLimits()
    {
        // The largest accepted inputs are exactly at each limit; one more is refused, naming
        // the key. (Once 8000 x 8000 x 8000 with 8000 ranks was accepted and ran for minutes.)
        TensorParallelInputs in;
        in.tokens = 1;
        in.dModel = 1;
        in.dFf = kMaxTensorParallelRanks + 1;
        in.ranks = kMaxTensorParallelRanks;
        validate(in);
        in.ranks = kMaxTensorParallelRanks + 1;
        SCALELAB_VERIFY_INPUT_ERROR(validate(in), "tensor_parallel.ranks");

        in = TensorParallelInputs{};
        in.dFf = in.dModel;
        in.tokens = kMaxTensorParallelValues / in.dModel;
        validate(in);
        in.tokens += 1;
        SCALELAB_VERIFY_INPUT_ERROR(validate(in), "tensor_parallel.tokens");

        in = TensorParallelInputs{};
        in.tokens = 256; // 256 x 1024 x 1024 = 2^28 multiply-adds
        in.dModel = 1024;
        in.dFf = 1024;
        QCOMPARE(in.tokens * in.dModel * in.dFf, kMaxTensorParallelMultiplyAdds);
        validate(in);
        in.tokens += 1;
        SCALELAB_VERIFY_INPUT_ERROR(validate(in), "tensor_parallel.tokens");
    }
};

QTEST_GUILESS_MAIN(TstTensorParallel)
#include "tst_tensor_parallel.moc"
