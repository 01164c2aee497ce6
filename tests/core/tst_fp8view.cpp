// Tests of the FP8 view: the one computation behind the FP8 tab and the report's fp8 section.
// Every figure is checked against core's one-at-a-time calls, which the view must reproduce
// bit for bit (the batch of round trips adds its sums in the same fixed order).

#include "scalelab/core/error.h"
#include "scalelab/core/fp8.h"
#include "scalelab/core/fp8_view.h"

#include <QTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

using namespace scalelab::core;

namespace {

std::vector<float> slice(const MatrixF& m, std::int64_t first, std::int64_t count)
{
    return {m.data() + first, m.data() + first + count};
}

bool sameStats(const Fp8Stats& a, const Fp8Stats& b)
{
    const auto same = [](double x, double y) {
        return (std::isnan(x) && std::isnan(y)) || x == y;
    };
    return same(a.maxAbsError, b.maxAbsError) && same(a.rmse, b.rmse) && same(a.snrDb, b.snrDb)
        && a.underflowCount == b.underflowCount && same(a.relativeError, b.relativeError);
}

bool sameMap(const std::shared_ptr<const Eigen::MatrixXd>& a,
             const std::shared_ptr<const Eigen::MatrixXd>& b)
{
    return a && b ? *a == *b : a == b;
}

/// Every figure of two views is the same, bit for bit.
bool sameView(const Fp8View& a, const Fp8View& b)
{
    bool same = a.table.size() == b.table.size() && a.excluded == b.excluded
        && a.tensorScale == b.tensorScale && a.blockScales == b.blockScales
        && a.blockDequantized == b.blockDequantized && a.outliersOnTop == b.outliersOnTop
        && a.tensorMax == b.tensorMax && a.tensorPoints == b.tensorPoints
        && a.blockPoints == b.blockPoints && a.shownBlock == b.shownBlock
        && a.shownRank == b.shownRank && a.shownTensorError == b.shownTensorError
        && a.shownBlockError == b.shownBlockError && a.shownScale == b.shownScale
        && a.shownValues == b.shownValues && a.shownTensorDeq == b.shownTensorDeq
        && a.shownBlockDeq == b.shownBlockDeq && a.tensorGrid == b.tensorGrid
        && a.blockGrid == b.blockGrid && sameMap(a.tensorMap, b.tensorMap)
        && sameMap(a.blockMap, b.blockMap);
    for (std::size_t i = 0; same && i < a.table.size(); ++i)
        same = sameStats(a.table[i].all, b.table[i].all)
            && sameStats(a.table[i].small, b.table[i].small)
            && a.table[i].scales == b.table[i].scales;
    return same;
}

Fp8Inputs chapterInputs()
{
    Fp8Inputs in;
    MatrixF row(1, 8);
    row << 0.5f, -1.25f, 3.0f, 0.001f, 0.01f, 0.02f, 0.03f, 0.04f;
    in.values = row;
    in.blockSize = 4;
    return in;
}

const Fp8Scaling kScalings[kFp8TableRows] = {{0, 0, false},   {0, 0, false},     {1, 0, false},
                                             {1, 128, false}, {128, 128, false}, {1, 16, false},
                                             {1, 32, true}};

} // namespace

Q_DECLARE_METATYPE(scalelab::core::Fp8Inputs)

class TstFp8View : public QObject {
    Q_OBJECT

private slots:
    void everyFigureIsCoresOwn_data()
    {
        QTest::addColumn<Fp8Inputs>("in");
        QTest::addColumn<double>("percentile");
        QTest::newRow("defaults") << Fp8Inputs{} << 50.0;
        Fp8Inputs e5m2;
        e5m2.format = Fp8Format::E5M2;
        e5m2.outlierScale = 1e9;
        e5m2.rows = 100;
        e5m2.cols = 96;
        e5m2.blockSize = 32;
        QTest::newRow("e5m2, ragged tiles") << e5m2 << 90.0;
        Fp8Inputs nan;
        nan.overflow = Fp8Overflow::NaN;
        nan.outlierScale = 1e5;
        QTest::newRow("nan overflow") << nan << 0.0;
        QTest::newRow("chapter") << chapterInputs() << 50.0;
    }

    void everyFigureIsCoresOwn()
    {
        QFETCH(Fp8Inputs, in);
        QFETCH(double, percentile);
        Fp8ViewOptions options;
        options.shownPercentile = percentile;
        const Fp8View v = computeFp8View(in, options);
        const MatrixF x = fp8InputMatrix(in);
        const std::int64_t b = in.blockSize;
        const Fp8Result tensor = fp8BlockQuantize(x, in.format, {0, 0, false}, in.overflow);
        const Fp8Result block = fp8BlockQuantize(x, in.format, {1, b, false}, in.overflow);
        const auto tErr = fp8BlockErrors(x, tensor.dequantized, b);
        const auto bErr = fp8BlockErrors(x, block.dequantized, b);
        const auto order = fp8OrderByMagnitude(tErr);
        const auto n = static_cast<std::int64_t>(tErr.size());
        QCOMPARE(v.blockCount, n);
        QCOMPARE(v.tensorScale, tensor.scales(0, 0));
        QVERIFY(v.blockScales == block.scales);
        QCOMPARE(v.blockDequantized.size(), in.values ? block.dequantized.size() : 0);
        QCOMPARE(v.tensorMax, tErr[std::size_t(order.back())].maxAbs);

        // The excluded blocks: the generator's outliers, or the blocks holding the largest value.
        std::vector<std::int64_t> excluded;
        if (in.values) {
            for (std::size_t i = 0; i < tErr.size(); ++i)
                if (tErr[i].maxAbs == tErr[std::size_t(order.back())].maxAbs)
                    excluded.push_back(std::int64_t(i));
        } else {
            excluded = fp8Generate(in).outlierBlocks;
        }
        QCOMPARE(v.excluded, excluded);

        // The table, row by row.
        QCOMPARE(int(v.table.size()), kFp8TableRows);
        for (int r = 0; r < kFp8TableRows; ++r) {
            const Fp8Scaling s = r == kFp8ChapterRow ? Fp8Scaling{1, b, false} : kScalings[r];
            const Fp8Result q = r == kFp8CastRow ? fp8Cast(x, in.format, in.overflow)
                                                 : fp8BlockQuantize(x, in.format, s, in.overflow);
            const Fp8Granularity& g = v.table[std::size_t(r)];
            QCOMPARE(g.plainCast, r == kFp8CastRow);
            QCOMPARE(g.scales, g.plainCast ? 0 : std::int64_t(q.scales.size()));
            QVERIFY2(sameStats(g.all, q.stats), qPrintable(QString::number(r)));
            QVERIFY2(sameStats(g.small, fp8StatsExcludingBlocks(x, q.dequantized, b, excluded)),
                     qPrintable(QString::number(r)));
        }

        // The error series: one point per block (or an even sample), smallest block first.
        const auto ranks = fp8PlottedRanks(n, kFp8MaxPlotPoints);
        std::vector<Fp8ErrorPoint> tPoints, bPoints;
        for (std::int64_t r : ranks) {
            const auto i = std::size_t(order[std::size_t(r)]);
            if (std::isfinite(tErr[i].relativeError))
                tPoints.push_back({double(r + 1), 100.0 * tErr[i].relativeError});
            if (std::isfinite(bErr[i].relativeError))
                bPoints.push_back({double(r + 1), 100.0 * bErr[i].relativeError});
        }
        QVERIFY(v.tensorPoints == tPoints);
        QVERIFY(v.blockPoints == bPoints);

        // The shown block and its grids.
        const std::int64_t rank = fp8RankAtPercentile(n, percentile);
        const std::int64_t shown = order[std::size_t(rank)];
        QCOMPARE(v.shownRank, rank);
        QCOMPARE(v.shownBlock, shown);
        QCOMPARE(v.shownValues, slice(x, shown * b, b));
        QCOMPARE(v.shownTensorDeq, slice(tensor.dequantized, shown * b, b));
        QCOMPARE(v.shownBlockDeq, slice(block.dequantized, shown * b, b));
        const std::int64_t perRow = x.cols() / b;
        QCOMPARE(v.shownScale, block.scales(shown / perRow, shown % perRow));
        const auto [lo, hi] = std::minmax_element(v.shownValues.begin(), v.shownValues.end());
        QCOMPARE(v.tensorGrid, fp8ScaledGrid(in.format, tensor.scales(0, 0), *lo, *hi));
        QCOMPARE(v.blockGrid, fp8ScaledGrid(in.format, v.shownScale, *lo, *hi));

        // The maps.
        QVERIFY(*v.tensorMap == fp8AbsErrorMap(x, tensor.dequantized, kFp8MapSide, kFp8MapSide));
        QVERIFY(*v.blockMap == fp8AbsErrorMap(x, block.dequantized, kFp8MapSide, kFp8MapSide));
    }

    void withoutChartsTheTableIsTheSame()
    {
        for (const Fp8Inputs& in : {Fp8Inputs{}, chapterInputs()}) {
            const Fp8View full = computeFp8View(in);
            Fp8ViewOptions options;
            options.charts = false;
            const Fp8View table = computeFp8View(in, options);
            QCOMPARE(table.excluded, full.excluded);
            QCOMPARE(table.tensorScale, full.tensorScale);
            QVERIFY(table.blockScales == full.blockScales);
            QVERIFY(table.blockDequantized == full.blockDequantized);
            for (int r = 0; r < kFp8TableRows; ++r) {
                QVERIFY(sameStats(table.table[std::size_t(r)].all, full.table[std::size_t(r)].all));
                QVERIFY(
                    sameStats(table.table[std::size_t(r)].small, full.table[std::size_t(r)].small));
            }
            QVERIFY(table.tensorPoints.empty());
            QVERIFY(!table.tensorMap && !table.blockMap);
            QVERIFY(!table.normals && !table.generated);
        }
    }

    void heapBytesCountWhatTheViewOwns()
    {
        // 256 x 256 in blocks of 16: 4,096 blocks. The view owns its scales (4,096 floats) and
        // maps (two of mapSide x mapSide doubles at most), and shares the order (4,096 indices);
        // without charts only the table's parts are left.
        Fp8Inputs in;
        in.rows = in.cols = 256;
        in.blockSize = 16;
        const Fp8View full = computeFp8View(in);
        const std::size_t scales = 4096 * sizeof(float);
        const std::size_t order = 4096 * sizeof(std::int64_t);
        const std::size_t maps = std::size_t(full.tensorMap->size() + full.blockMap->size()) * 8;
        QVERIFY(maps > 0);
        const std::size_t counted = fp8ViewHeapBytes(full);
        QVERIFY(counted >= scales + order + maps);
        QVERIFY(counted < scales + order + maps + 256 * 1024); // the rest is small vectors
        Fp8ViewOptions options;
        options.charts = false;
        const Fp8View table = computeFp8View(in, options);
        QVERIFY(fp8ViewHeapBytes(table) >= scales);
        QVERIFY(fp8ViewHeapBytes(table) < scales + order);
    }

    void tilesThatDoNotDivideAreDescribed()
    {
        Fp8Inputs in;
        in.rows = 100;
        in.cols = 96;
        in.blockSize = 32;
        const Fp8View v = computeFp8View(in);
        // 1 x 128 on 96 columns: clipped to 1 x 96.
        const Fp8Tiling& t = v.table[kFp8Tile128Row].tiling;
        QVERIFY(!t.even);
        QCOMPARE(t.wantCols, std::int64_t(128));
        QCOMPARE(t.tileCols, std::int64_t(96));
        QCOMPARE(t.edgeCols, std::int64_t(96));
        // 128 x 128 on 100 x 96: one clipped tile.
        const Fp8Tiling& big = v.table[kFp8Block128Row].tiling;
        QVERIFY(!big.even);
        QCOMPARE(big.tileRows, std::int64_t(100));
        QCOMPARE(big.tileCols, std::int64_t(96));
        QVERIFY(v.table[kFp8ChapterRow].tiling.even);
        QVERIFY(v.table[kFp8CastRow].tiling.even);
        QVERIFY(v.table[kFp8PerRowRow].tiling.even);
        // 1 x 32 E8M0 on 100 columns would leave 4: a shorter last tile.
        in.cols = 100;
        in.blockSize = 25;
        const Fp8View ragged = computeFp8View(in);
        const Fp8Tiling& mx = ragged.table[kFp8MxRow].tiling;
        QVERIFY(!mx.even);
        QCOMPARE(mx.tileCols, std::int64_t(32));
        QCOMPARE(mx.edgeCols, std::int64_t(4));
    }

    void anEarlierMatrixIsReused()
    {
        Fp8Inputs in;
        auto first = std::make_shared<const Fp8View>(computeFp8View(in));
        QVERIFY(first->normals && first->generated);
        // Only the format changes: the same generated matrix.
        in.format = Fp8Format::E5M2;
        Fp8ViewOptions options;
        options.previous = first;
        const Fp8View second = computeFp8View(in, options);
        QCOMPARE(second.generated, first->generated);
        QCOMPARE(second.excluded, first->excluded);
        // A new outlier scale: the normals are reused, the matrix is built again.
        in.outlierScale = 1e4;
        options.previous = nullptr;
        options.normals = first->normals;
        const Fp8View third = computeFp8View(in, options);
        QCOMPARE(third.normals, first->normals);
        QVERIFY(third.generated != first->generated);
        QVERIFY(*third.generated == fp8Generate(in).values);
    }

    void aWorkspaceChangesNoFigure()
    {
        // A tab's changes one after the other, each view through one workspace and the previous
        // view, against a fresh computation: 66 blocks a row (not a multiple of eight), 1 x 32
        // tiles, and 128-column tiles cut at the edge.
        Fp8Inputs in;
        in.rows = 40;
        in.cols = 1056;
        in.blockSize = 16;
        Fp8ViewOptions options;
        options.workspace = std::make_shared<Fp8Workspace>();
        const auto steps = std::vector<std::function<void(Fp8Inputs&)>>{
            [](Fp8Inputs&) {},
            [](Fp8Inputs& x) { x.outlierScale = 1e4; },
            [](Fp8Inputs& x) { x.outlierScale = 100; },
            [](Fp8Inputs& x) { x.outlierScale = 3; },
            [](Fp8Inputs& x) { x.format = Fp8Format::E5M2; },
            [](Fp8Inputs& x) { x.overflow = Fp8Overflow::NaN; },
            [](Fp8Inputs& x) { x.seed = 9; },
            [](Fp8Inputs& x) { x.blockSize = 32; },
            [](Fp8Inputs& x) { x.rows = 7; },
            [](Fp8Inputs& x) { x.outlierScale = 1e5; },
            [](Fp8Inputs& x) { x.values = fp8Generate(x).values; },
            [](Fp8Inputs& x) { x.values.reset(); },
        };
        std::shared_ptr<const Fp8View> previous;
        for (std::size_t i = 0; i < steps.size(); ++i) {
            steps[i](in);
            options.previous = previous;
            auto view = std::make_shared<const Fp8View>(computeFp8View(in, options));
            QVERIFY2(sameView(*view, computeFp8View(in)), qPrintable(QString::number(i)));
            // The workspace keeps the generated matrix; the view does not hold it.
            QVERIFY(!view->generated);
            previous = view;
        }
    }

    void withoutMapsEveryOtherFigureIsTheSame()
    {
        // mapSide 0 (what a preview asks of its sample): the block errors without the maps.
        Fp8Inputs in;
        in.rows = 96;
        in.cols = 400;
        in.blockSize = 16;
        Fp8ViewOptions options;
        options.mapSide = 0;
        const Fp8View without = computeFp8View(in, options);
        QVERIFY(!without.tensorMap);
        QVERIFY(!without.blockMap);
        Fp8View with = computeFp8View(in);
        QVERIFY(with.tensorMap && with.blockMap);
        with.tensorMap.reset();
        with.blockMap.reset();
        QVERIFY(sameView(without, with));
        QCOMPARE(without.blockCount, with.blockCount);
    }

    void aStoppedComparisonLeavesNothingStale()
    {
        // A newer request stops a comparison part way: it throws Stopped at whichever check it
        // reaches, and the workspace's next comparison is still exactly a fresh one.
        Fp8Inputs in;
        in.rows = 256;
        in.cols = 512;
        Fp8ViewOptions options;
        options.workspace = std::make_shared<Fp8Workspace>();
        options.previous = std::make_shared<const Fp8View>(computeFp8View(in, options));
        in.outlierScale = 1e4;
        std::atomic<bool> stop{true};
        options.stop = &stop;
        QVERIFY_THROWS_EXCEPTION(Stopped, computeFp8View(in, options));
        // Within the round trips and the error pictures (the steps the view reaches later).
        const MatrixF& values = options.workspace->generate(in)->values;
        const std::vector<Fp8ScalingJob> jobs{{Fp8Scaling{1, 16, false}, false, true, true}};
        QVERIFY_THROWS_EXCEPTION(Stopped,
                                 options.workspace->quantizeScalings(values, in.format, in.overflow,
                                                                     jobs, 16, {}, &stop));
        QVERIFY_THROWS_EXCEPTION(
            Stopped, options.workspace->errorPictures(values, values, values, 16, 64, 64, &stop));
        stop = false;
        QVERIFY(sameView(computeFp8View(in, options), computeFp8View(in)));

        // Stopped from another thread at different moments of a larger comparison: finished
        // or stopped, the next one is exact.
        in.rows = in.cols = 1024;
        options.previous.reset();
        for (int delayUs : {0, 200, 1000, 3000, 10000}) {
            stop = false;
            in.outlierScale = delayUs % 2000 == 0 ? 100 : 3000;
            std::thread stopper([&stop, delayUs] {
                std::this_thread::sleep_for(std::chrono::microseconds(delayUs));
                stop = true;
            });
            try {
                computeFp8View(in, options);
            } catch (const Stopped&) {
            }
            stopper.join();
            stop = false;
            QVERIFY2(sameView(computeFp8View(in, options), computeFp8View(in)),
                     qPrintable(QString::number(delayUs)));
        }
    }

    void badInputIsRefusedByName()
    {
        Fp8Inputs in;
        in.blockSize = 3; // 256 columns
        try {
            computeFp8View(in);
            QFAIL("no InputError");
        } catch (const InputError& e) {
            QVERIFY(QString(e.what()).contains("fp8.block_size"));
        }
    }

    void anotherShownBlockIsTheWholeComputation_data()
    {
        QTest::addColumn<Fp8Inputs>("in");
        QTest::addColumn<bool>("workspace");
        QTest::newRow("defaults") << Fp8Inputs{} << false;
        QTest::newRow("defaults, workspace") << Fp8Inputs{} << true;
        Fp8Inputs e5m2;
        e5m2.format = Fp8Format::E5M2;
        e5m2.outlierScale = 1e9;
        e5m2.rows = 100;
        e5m2.cols = 96;
        e5m2.blockSize = 12; // blocks not a multiple of eight values
        QTest::newRow("e5m2, blocks of 12, workspace") << e5m2 << true;
        Fp8Inputs nan; // outlier blocks whose per-tensor errors are not finite
        nan.overflow = Fp8Overflow::NaN;
        nan.outlierScale = 3e37;
        QTest::newRow("nan overflow, clamped outliers, workspace") << nan << true;
        QTest::newRow("chapter") << chapterInputs() << true;
        Fp8Inputs zeros = chapterInputs();
        zeros.values->leftCols(4).setZero();
        QTest::newRow("an all-zero block") << zeros << false;
    }

    void anotherShownBlockIsTheWholeComputation()
    {
        // Moving the shown block keeps the view but for that block: each step's view must be the
        // one a whole computation gives, whether it came from a workspace (the view then keeps
        // the normals, not the matrix) or holds its matrix.
        QFETCH(Fp8Inputs, in);
        QFETCH(bool, workspace);
        Fp8ViewOptions options;
        if (workspace)
            options.workspace = std::make_shared<Fp8Workspace>();
        const Fp8View first = computeFp8View(in, options);
        QCOMPARE(first.generated == nullptr, workspace || in.values.has_value());
        const Fp8View* from = &first;
        Fp8View step;
        for (double percentile : {0.0, 12.5, 50.0, 93.75, 99.9, 100.0, 50.0}) {
            step = fp8ViewShowingBlock(*from, percentile);
            Fp8ViewOptions whole;
            whole.shownPercentile = percentile;
            const Fp8View expected = computeFp8View(in, whole);
            QVERIFY2(sameView(step, expected), qPrintable(QString::number(percentile)));
            QCOMPARE(step.shownRank, fp8RankAtPercentile(expected.blockCount, percentile));
            // Nothing large is copied: the maps and the order are the first view's.
            QCOMPARE(step.tensorMap, first.tensorMap);
            QCOMPARE(step.order, first.order);
            from = &step;
        }
        // The largest block is an outlier of a generated matrix, and the last ones must be shown
        // from the outlier list (a non-outlier there would come back unscaled).
        if (!in.values) {
            const Fp8View top = fp8ViewShowingBlock(first, 100);
            QVERIFY(
                std::binary_search(first.excluded.begin(), first.excluded.end(), top.shownBlock));
        }
    }

    void aGeneratedBlockIsTheMatrixs()
    {
        Fp8Inputs in;
        in.rows = 64;
        in.cols = 96;
        in.blockSize = 32;
        in.outlierScale = 5e37; // clamped to FLT_MAX where |normal| > 6.8
        const MatrixF normals = fp8NormalMatrix(in);
        const Fp8Generated g = fp8Generate(in);
        const std::int64_t blocks = g.values.size() / in.blockSize;
        for (std::int64_t b = 0; b < blocks; ++b) {
            const bool outlier =
                std::binary_search(g.outlierBlocks.begin(), g.outlierBlocks.end(), b);
            QCOMPARE(fp8GeneratedBlock(normals, in, b, outlier), slice(g.values, b * 32, 32));
        }
        for (std::int64_t b : {std::int64_t(-1), blocks}) {
            try {
                fp8GeneratedBlock(normals, in, b, false);
                QFAIL("no InputError");
            } catch (const InputError& e) {
                QVERIFY(QString(e.what()).contains("fp8.shown_block"));
            }
        }
        // A view without its charts has no order to pick a block from.
        Fp8ViewOptions table;
        table.charts = false;
        try {
            fp8ViewShowingBlock(computeFp8View(in, table), 50);
            QFAIL("no InputError");
        } catch (const InputError& e) {
            QVERIFY(QString(e.what()).contains("fp8.shown_block"));
        }
    }

    void previewBandsSpreadOverTheMatrix()
    {
        using Bands = std::vector<std::int64_t>;
        QCOMPARE(fp8PreviewBands(4096, 4096), Bands{0}); // 128 x 4096 = 2^19 values
        QCOMPARE(fp8PreviewBands(2048, 2048), (Bands{0, 8}));
        QCOMPARE(fp8PreviewBands(2048, 1024), (Bands{0, 4, 8, 12}));
        QCOMPARE(fp8PreviewBands(8192, 512), (Bands{0, 8, 16, 24, 32, 40, 48, 56}));
        QCOMPARE(fp8PreviewBands(1024, 2048), (Bands{0, 4})); // 4 x 2^19 values exactly
        QCOMPARE(fp8PreviewBands(1024, 1024), Bands{}); // small enough to compare whole
        QCOMPARE(fp8PreviewBands(1023, 2048), Bands{}); // one row short of 4 x 2^19 values
        QCOMPARE(fp8PreviewBands(64, 65536), Bands{}); // not one whole band
        QCOMPARE(fp8PreviewBands(256, 16384), Bands{}); // one band of two: no saving
        QCOMPARE(fp8PreviewBands(0, 4096), Bands{});
    }

    void aPreviewComparesItsBandsAlone()
    {
        Fp8Inputs in;
        in.rows = 2048;
        in.cols = 1024; // 2048 x 1024: four bands of 128 rows, 2^19 values
        in.outlierScale = 1e3;
        auto exact = std::make_shared<const Fp8View>(computeFp8View(in));
        QVERIFY(!exact->preview);
        in.outlierScale = 1e4; // the step a dragged slider makes
        Fp8ViewOptions options;
        options.preview = true;
        options.previous = exact;
        const Fp8View p = computeFp8View(in, options);
        QVERIFY(p.preview);
        QCOMPARE(p.previewRows, std::int64_t(512));

        // The sample, made here from the whole matrix: bands 0, 4, 8 and 12 of 128 rows, the
        // nearest of them exchanged for the band of the largest |value| unless one holds it
        // (with seed 0 that is band 5, which takes band 4's place).
        const Fp8Generated whole = fp8Generate(in);
        Eigen::Index topRow = 0, topCol = 0;
        whole.values.cwiseAbs().maxCoeff(&topRow, &topCol);
        std::vector<std::int64_t> bands = {0, 4, 8, 12};
        const std::int64_t topBand = topRow / 128;
        if (topBand % 4 != 0) { // the nearest goes, the lower one of two as near
            std::size_t nearest = 0;
            for (std::size_t j = 1; j < bands.size(); ++j)
                if (std::abs(bands[j] - topBand) < std::abs(bands[nearest] - topBand))
                    nearest = j;
            bands[nearest] = topBand;
        }
        std::sort(bands.begin(), bands.end());
        qInfo("largest value in band %lld: bands %lld %lld %lld %lld",
              static_cast<long long>(topBand), static_cast<long long>(bands[0]),
              static_cast<long long>(bands[1]), static_cast<long long>(bands[2]),
              static_cast<long long>(bands[3]));
        const std::int64_t perRow = in.cols / in.blockSize;
        MatrixF sample(512, in.cols);
        std::vector<std::int64_t> sampleOutliers;
        for (std::int64_t i = 0; i < 512; ++i) {
            const std::int64_t row = bands[static_cast<std::size_t>(i / 128)] * 128 + i % 128;
            sample.row(i) = whole.values.row(row);
            for (std::int64_t c = 0; c < perRow; ++c)
                if (std::binary_search(whole.outlierBlocks.begin(), whole.outlierBlocks.end(),
                                       row * perRow + c))
                    sampleOutliers.push_back(i * perRow + c);
        }
        std::vector<Fp8ScalingJob> jobs;
        for (int r = 0; r < kFp8TableRows; ++r)
            jobs.push_back({kScalings[r], r == kFp8CastRow, false, false});
        const std::vector<Fp8ScalingOutcome> own =
            fp8QuantizeScalings(sample, in.format, in.overflow, jobs, in.blockSize, sampleOutliers);
        for (int r = 0; r < kFp8TableRows; ++r) {
            const Fp8Granularity& g = p.table[static_cast<std::size_t>(r)];
            const Fp8ScalingOutcome& o = own[static_cast<std::size_t>(r)];
            // The sample's errors; its counts of values rounded to 0 four times over (the
            // whole matrix has four rows for each of the sample's).
            QCOMPARE(g.all.rmse, o.all.rmse);
            QCOMPARE(g.all.maxAbsError, o.all.maxAbsError);
            QCOMPARE(g.all.snrDb, o.all.snrDb);
            QCOMPARE(g.small.relativeError, o.small.relativeError);
            QCOMPARE(g.all.underflowCount, 4 * o.all.underflowCount);
            QCOMPARE(g.small.underflowCount, 4 * o.small.underflowCount);
            // The scales and tiles are the whole matrix's.
            const Fp8Granularity& e = exact->table[static_cast<std::size_t>(r)];
            QCOMPARE(g.scales, e.scales);
            QCOMPARE(g.tiling.tileRows, e.tiling.tileRows);
            QCOMPARE(g.tiling.tileCols, e.tiling.tileCols);
        }
        QCOMPARE(p.blockCount, exact->blockCount);
        // The per-tensor scale is the whole matrix's.
        const auto again = std::make_shared<const Fp8View>(computeFp8View(in));
        QCOMPARE(p.tensorScale, again->tensorScale);
        QCOMPARE(p.tensorMax, again->tensorMax);
        QCOMPARE(p.excluded, whole.outlierBlocks);
        // The shown block lies in a band, and its values are the matrix's own.
        const std::int64_t shownRow = p.shownBlock / perRow;
        QVERIFY(std::binary_search(bands.begin(), bands.end(), shownRow / 128));
        QCOMPARE(p.shownValues, slice(whole.values, p.shownBlock * in.blockSize, in.blockSize));
        // The series span the whole matrix's ranks; the maps are the exact view's.
        QCOMPARE(p.tensorPoints.back().rank, static_cast<double>(p.blockCount));
        QCOMPARE(p.blockPoints.front().rank, 4.0);
        QCOMPARE(p.tensorMap, exact->tensorMap);
        QCOMPARE(p.blockMap, exact->blockMap);
        QVERIFY(!p.order);
        QVERIFY_THROWS_EXCEPTION(InputError, fp8ViewShowingBlock(p, 30));

        // Through a workspace (the tab's way), the same preview.
        options.workspace = std::make_shared<Fp8Workspace>();
        const Fp8View w = computeFp8View(in, options);
        QVERIFY(w.preview);
        QVERIFY(sameView(w, p));
        QCOMPARE(w.shownBlock, p.shownBlock);
        QCOMPARE(w.excluded, p.excluded);
    }

    void anExactViewPassesThePreviewsBandMaximaOn()
    {
        // The first key press after the exact figures came must not read the whole matrix
        // again for its band maxima: the exact view keeps the preview's.
        Fp8Inputs in;
        in.rows = 2048;
        in.cols = 1024;
        Fp8ViewOptions options;
        options.workspace = std::make_shared<Fp8Workspace>();
        options.previous = std::make_shared<const Fp8View>(computeFp8View(in, options));
        QVERIFY(!options.previous->previewMaxima); // no preview yet
        options.preview = true;
        in.outlierScale = 1e3;
        auto preview = std::make_shared<const Fp8View>(computeFp8View(in, options));
        QVERIFY(preview->preview);
        QVERIFY(preview->previewMaxima);

        options.preview = false;
        options.previous = preview;
        auto exact = std::make_shared<const Fp8View>(computeFp8View(in, options));
        QVERIFY(!exact->preview);
        QCOMPARE(exact->previewMaxima, preview->previewMaxima);

        options.preview = true;
        options.previous = exact;
        in.outlierScale = 1e4;
        const Fp8View next = computeFp8View(in, options);
        QCOMPARE(next.previewMaxima, preview->previewMaxima);
        // The same preview as one that found its maxima afresh.
        Fp8ViewOptions fresh;
        fresh.preview = true;
        Fp8View without = *exact;
        without.previewMaxima.reset();
        fresh.previous = std::make_shared<const Fp8View>(std::move(without));
        const Fp8View again = computeFp8View(in, fresh);
        QVERIFY(again.preview);
        QVERIFY(again.previewMaxima != next.previewMaxima);
        QVERIFY(sameView(next, again));
        QCOMPARE(next.shownBlock, again.shownBlock);

        // Another block size has other maxima: they are not passed on.
        in.blockSize = 32;
        options.preview = false;
        const Fp8View other = computeFp8View(in, options);
        QVERIFY(!other.previewMaxima);
    }

    void withoutAPictureToKeepThereIsNoPreview()
    {
        Fp8Inputs in;
        in.rows = 2048;
        in.cols = 2048;
        Fp8ViewOptions options;
        options.preview = true; // but nothing earlier to show the maps of
        const Fp8View first = computeFp8View(in, options);
        QVERIFY(!first.preview);
        QVERIFY(sameView(first, computeFp8View(in)));
        // A small matrix is compared whole.
        Fp8Inputs small;
        options.previous = std::make_shared<const Fp8View>(computeFp8View(small));
        small.outlierScale = 7;
        const Fp8View v = computeFp8View(small, options);
        QVERIFY(!v.preview);
        QVERIFY(sameView(v, computeFp8View(small)));
    }

    void blockSizesRanksAndPercentiles()
    {
        QCOMPARE(fp8BlockSizeChoices(256),
                 (std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
        QCOMPARE(fp8BlockSizeChoices(97), (std::vector<std::int64_t>{1, 97}));
        QCOMPARE(fp8BlockSizeChoices(1), (std::vector<std::int64_t>{1}));
        QCOMPARE(fp8BlockSizeFor(100, 64), std::int64_t(50));
        QCOMPARE(fp8BlockSizeFor(256, 64), std::int64_t(64));
        QCOMPARE(fp8BlockSizeFor(97, 64), std::int64_t(1));
        QCOMPARE(fp8BlockSizeFor(256, 0), std::int64_t(1));
        QCOMPARE(fp8PlottedRanks(3, 5), (std::vector<std::int64_t>{0, 1, 2}));
        QCOMPARE(fp8PlottedRanks(9, 5), (std::vector<std::int64_t>{0, 2, 4, 6, 8}));
        QCOMPARE(fp8RankAtPercentile(1024, 0), std::int64_t(0));
        QCOMPARE(fp8RankAtPercentile(1024, 100), std::int64_t(1023));
        QCOMPARE(fp8RankAtPercentile(1024, 50), std::int64_t(511)); // 511.5 rounds down
        QCOMPARE(fp8RankAtPercentile(2, 50), std::int64_t(0));
        QCOMPARE(fp8RankAtPercentile(1, 50), std::int64_t(0));
    }
};

QTEST_GUILESS_MAIN(TstFp8View)
#include "tst_fp8view.moc"
