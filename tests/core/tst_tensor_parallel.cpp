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
};

QTEST_GUILESS_MAIN(TstTensorParallel)
#include "tst_tensor_parallel.moc"
