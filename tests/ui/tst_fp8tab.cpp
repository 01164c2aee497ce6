// The FP8 tab: controls drive the scenario, every series and table cell is core's figure, the
// small blocks' loss under one scale shows where it is real, and big matrices stay off the GUI
// thread.

#include "chartexport.h"
#include "chartpanel.h"
#include "format.h"
#include "parametercontrol.h"
#include "scalelab/core/fp8.h"
#include "fp8tab.h"
#include "testhelpers.h"
#include "heatmappairpanel.h"
#include "heatmappanel.h"

#include <QAbstractButton>
#include <QAreaSeries>
#include <QChart>
#include <QComboBox>
#include <QImage>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QScatterSeries>
#include <QSlider>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

using namespace scalelab;
using namespace scalelab::ui;
using namespace scalelab::test;

namespace {

/// How long settle() waits for this tab's results; Debug builds are slow, nothing is timed.
constexpr int kWorkerTimeoutMs = 120000;

/// Points (x, y) of a float row at height y, as the grid chart draws them.
QList<QPointF> rowAt(const std::vector<float>& xs, double y)
{
    QList<QPointF> out;
    for (float x : xs)
        out.append({static_cast<double>(x), y});
    return out;
}

std::vector<float> slice(const core::MatrixF& m, std::int64_t first, std::int64_t count)
{
    return {m.data() + first, m.data() + first + count};
}

QString percent(double fraction)
{
    return formatNumber(100.0 * fraction) + " %";
}

int indexOfData(QComboBox* box, qlonglong value)
{
    return box->findData(QVariant::fromValue<qlonglong>(value));
}

QList<qlonglong> offered(QComboBox* box)
{
    QList<qlonglong> out;
    for (int i = 0; i < box->count(); ++i)
        out << box->itemData(i).toLongLong();
    return out;
}

} // namespace

class TstFp8Tab : public QObject {
    Q_OBJECT

private:
    /// Every series, map and table cell against core, for the tab's current inputs.
    void checkAgainstCore(Fp8Tab& tab)
    {
        const core::Fp8Inputs in = tab.inputs();
        const auto view = tab.view();
        QVERIFY(view);
        QCOMPARE(view->inputs.outlierScale, in.outlierScale);
        QCOMPARE(view->inputs.blockSize, in.blockSize);
        const core::MatrixF x = core::fp8InputMatrix(in);
        const std::int64_t b = in.blockSize;
        const core::Fp8Result tensor =
            core::fp8BlockQuantize(x, in.format, {0, 0, false}, in.overflow);
        const core::Fp8Result block =
            core::fp8BlockQuantize(x, in.format, {1, b, false}, in.overflow);
        const auto tErr = core::fp8BlockErrors(x, tensor.dequantized, b);
        const auto bErr = core::fp8BlockErrors(x, block.dequantized, b);
        const auto order = core::fp8OrderByMagnitude(tErr);
        const auto n = static_cast<std::int64_t>(tErr.size());

        // fp8-block-error: one point per block (or an even sample), smallest block first.
        QChart* ec = tab.blockErrorChart()->chart();
        auto* ts = seriesNamed<QScatterSeries>(ec, "Per tensor");
        auto* bs = seriesNamed<QScatterSeries>(ec, QString("Per 1 x %1 block").arg(b));
        QVERIFY(ts && bs);
        QCOMPARE(ts->count(), int(std::min<std::int64_t>(n, Fp8Tab::kMaxPlotPoints)));
        QCOMPARE(bs->count(), ts->count());
        for (int i = 0; i < ts->count(); ++i) {
            const auto rank = static_cast<std::int64_t>(ts->at(i).x()) - 1;
            QCOMPARE(bs->at(i).x(), ts->at(i).x());
            const auto blk = static_cast<std::size_t>(order[static_cast<std::size_t>(rank)]);
            QCOMPARE(ts->at(i).y(), 100.0 * tErr[blk].relativeError);
            QCOMPARE(bs->at(i).y(), 100.0 * bErr[blk].relativeError);
        }
        QCOMPARE(ts->at(0).x(), 1.0);
        QCOMPARE(ts->at(ts->count() - 1).x(), double(n));

        // The ringed block: the percentile's rank among the blocks ordered by magnitude.
        const auto rank = static_cast<std::int64_t>(
            std::floor(tab.shownPercentile() / 100.0 * static_cast<double>(n - 1)));
        const std::int64_t shown = order[static_cast<std::size_t>(rank)];
        auto* ring = seriesNamed<QScatterSeries>(ec, "Shown block");
        QVERIFY(ring);
        QCOMPARE(
            ring->points(),
            (QList<QPointF>{{double(rank + 1), 100.0 * tErr[std::size_t(shown)].relativeError},
                            {double(rank + 1), 100.0 * bErr[std::size_t(shown)].relativeError}}));

        // fp8-grid: the block's values, each scale's grid and where the values land.
        const std::int64_t perRow = x.cols() / b;
        const std::vector<float> values = slice(x, shown * b, b);
        const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
        const float ownScale = block.scales(shown / perRow, shown % perRow);
        QChart* gc = tab.gridChart()->chart();
        QCOMPARE(seriesNamed<QScatterSeries>(gc, "Values")->points(), rowAt(values, 1));
        QCOMPARE(seriesNamed<QScatterSeries>(gc, "Per-tensor grid")->points(),
                 rowAt(core::fp8ScaledGrid(in.format, tensor.scales(0, 0), *lo, *hi), 0));
        QCOMPARE(seriesNamed<QScatterSeries>(gc, "Own grid")->points(),
                 rowAt(core::fp8ScaledGrid(in.format, ownScale, *lo, *hi), 2));
        QCOMPARE(seriesNamed<QScatterSeries>(gc, "Rounded, per tensor")->points(),
                 rowAt(slice(tensor.dequantized, shown * b, b), 0));
        QCOMPARE(seriesNamed<QScatterSeries>(gc, "Rounded, own scale")->points(),
                 rowAt(slice(block.dequantized, shown * b, b), 2));

        // fp8-heatmap: core's pooled |error| maps, on one colour range.
        HeatmapPairPanel* pair = tab.heatmap();
        QVERIFY(pair->left()->matrix()
                == core::fp8AbsErrorMap(x, tensor.dequantized, Fp8Tab::kMapSide, Fp8Tab::kMapSide));
        QVERIFY(pair->right()->matrix()
                == core::fp8AbsErrorMap(x, block.dequantized, Fp8Tab::kMapSide, Fp8Tab::kMapSide));
        QCOMPARE(pair->left()->colorRange(), pair->right()->colorRange());
        QCOMPARE(pair->left()->colorRange(), pair->sharedRange());

        // The table: every granularity's figures as core gives them.
        std::vector<std::int64_t> excluded;
        if (in.values) {
            for (std::size_t i = 0; i < tErr.size(); ++i)
                if (tErr[i].maxAbs == tErr[std::size_t(order.back())].maxAbs)
                    excluded.push_back(std::int64_t(i));
        } else {
            excluded = core::fp8Generate(in).outlierBlocks;
        }
        const core::Fp8Scaling scalings[] = {{0, 0, false},   {0, 0, false},     {1, 0, false},
                                             {1, 128, false}, {128, 128, false}, {1, b, false},
                                             {1, 32, true}};
        QTableWidget* table = tab.granularityTable();
        QCOMPARE(table->rowCount(), 7);
        for (int r = 0; r < 7; ++r) {
            const core::Fp8Result q = r == Fp8Tab::kCastRow
                ? core::fp8Cast(x, in.format, in.overflow)
                : core::fp8BlockQuantize(x, in.format, scalings[r], in.overflow);
            const core::Fp8Stats small =
                core::fp8StatsExcludingBlocks(x, q.dequantized, b, excluded);
            const auto text = [&](double v) {
                return std::isnan(v) ? QString("NaN")
                                     : (std::isinf(v) ? QString("∞") : formatNumber(v));
            };
            QCOMPARE(table->item(r, 1)->text(),
                     r == Fp8Tab::kCastRow ? QString("none") : formatWhole(q.scales.size()));
            QCOMPARE(table->item(r, 2)->text(), text(q.stats.rmse));
            QCOMPARE(table->item(r, 3)->text(), text(q.stats.maxAbsError));
            QCOMPARE(table->item(r, 4)->text(), text(q.stats.snrDb));
            QCOMPARE(table->item(r, 5)->text(), formatWhole(q.stats.underflowCount));
            QCOMPARE(table->item(r, 6)->text(),
                     std::isnan(small.relativeError) ? QString("NaN %")
                                                     : percent(small.relativeError));
        }

        // The figures line names the per-tensor scale and both small-block errors.
        const QString figures = tab.figuresLabel()->text();
        QVERIFY(figures.contains(formatNumber(tensor.scales(0, 0))));
        QVERIFY(figures.contains(percent(
            core::fp8StatsExcludingBlocks(x, tensor.dequantized, b, excluded).relativeError)));
        QVERIFY(figures.contains(percent(
            core::fp8StatsExcludingBlocks(x, block.dequantized, b, excluded).relativeError)));
    }

    static QComboBox* combo(Fp8Tab& tab, const char* name)
    {
        return tab.findChild<QComboBox*>(name);
    }

    static void choosePreset(Fp8Tab& tab, const QString& prefix)
    {
        QComboBox* preset = combo(tab, "fp8.preset");
        const int i = preset->findText(prefix, Qt::MatchStartsWith);
        QVERIFY(i >= 0);
        preset->setCurrentIndex(i);
        emit preset->activated(i); // what a user's choice sends
        settle(tab, kWorkerTimeoutMs);
    }

private slots:
    void opensOnTheScenarioDefaults()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        const core::Fp8Inputs d;
        QCOMPARE(tab.inputs().format, d.format);
        QCOMPARE(tab.inputs().blockSize, d.blockSize);
        QCOMPARE(tab.inputs().rows, d.rows);
        QCOMPARE(tab.inputs().cols, d.cols);
        QCOMPARE(tab.inputs().outlierScale, d.outlierScale);
        QCOMPARE(tab.inputs().seed, d.seed);
        QVERIFY(!tab.inputs().values);
        QCOMPARE(combo(tab, "fp8.preset")->currentIndex(), 0);
        QCOMPARE(tab.charts().size(), 3);
        QCOMPARE(tab.charts()[0]->name(), QString("fp8-block-error"));
        QCOMPARE(tab.charts()[1]->name(), QString("fp8-heatmap"));
        QCOMPARE(tab.charts()[2]->name(), QString("fp8-grid"));
        checkAgainstCore(tab);
    }

    void keyPressesOnASliderChangeTheChartsToo_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("qtKey");
        QTest::newRow("outlier scale, page up") << "fp8.outlier_scale" << int(Qt::Key_PageUp);
        QTest::newRow("shown block, right") << "fp8.shown_block" << int(Qt::Key_Right);
        QTest::newRow("shown block, home") << "fp8.shown_block" << int(Qt::Key_Home);
        QTest::newRow("seed, right") << "fp8.seed" << int(Qt::Key_Right);
        QTest::newRow("rows, page down") << "fp8.rows" << int(Qt::Key_PageDown);
        QTest::newRow("columns, end") << "fp8.cols" << int(Qt::Key_End);
    }

    void keyPressesOnASliderChangeTheChartsToo()
    {
        QFETCH(QString, key);
        QFETCH(int, qtKey);
        Fp8Tab tab;
        tab.resize(1600, 1000);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        settle(tab, kWorkerTimeoutMs);
        ParameterControl* control = tab.control(key);
        QVERIFY(control);
        const double before = control->value();
        control->slider()->setFocus();
        QTest::keyClick(control->slider(), Qt::Key(qtKey));
        QVERIFY(control->value() != before);
        settle(tab, kWorkerTimeoutMs);
        core::Scenario s;
        tab.writeScenario(s);
        if (key == "fp8.shown_block")
            QCOMPARE(tab.shownPercentile(), control->value());
        else if (key == "fp8.outlier_scale")
            QCOMPARE(s.fp8.outlierScale, control->value());
        else if (key == "fp8.seed")
            QCOMPARE(s.fp8.seed, control->wholeValue());
        else if (key == "fp8.rows")
            QCOMPARE(s.fp8.rows, control->wholeValue());
        else
            QCOMPARE(s.fp8.cols, control->wholeValue());
        QVERIFY(s.fp8.cols % s.fp8.blockSize == 0);
        checkAgainstCore(tab);
    }

    void blockSizesAreTheDivisorsOfTheColumns()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        QComboBox* box = combo(tab, "fp8.block_size");
        QCOMPARE(offered(box), (QList<qlonglong>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
        QCOMPARE(box->currentData().toLongLong(), 16);
        box->setCurrentIndex(indexOfData(box, 64));
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.inputs().blockSize, std::int64_t(64));
        checkAgainstCore(tab);
        // 100 columns: 64 divides nothing, so the largest divisor below it is offered.
        tab.control("fp8.cols")->setValue(100);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(offered(box), (QList<qlonglong>{1, 2, 4, 5, 10, 20, 25, 50, 100}));
        QCOMPARE(tab.inputs().blockSize, std::int64_t(50));
        checkAgainstCore(tab);
        // Back to 256: the choice of 64 comes back.
        tab.control("fp8.cols")->setValue(256);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.inputs().blockSize, std::int64_t(64));
        QCOMPARE(Fp8Tab::blockSizeChoices(97), (std::vector<std::int64_t>{1, 97}));
        QCOMPARE(Fp8Tab::blockSizeChoices(1), (std::vector<std::int64_t>{1}));
    }

    void smallBlocksLoseUnderOneScaleOnlyPastTheSubnormals_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<double>("minRatio");
        QTest::addColumn<double>("maxRatio");
        QTest::addColumn<bool>("tensorUnderflows");
        // E4M3 with outliers x1e5: one scale (~4e5 / 448) puts the small blocks below 2^-6,
        // into the subnormals: their error is many times the per-block error (~20x here).
        QTest::newRow("e4m3 x1e5") << "Outliers x10^5: subnormals" << 10.0 << 1e6 << true;
        QTest::newRow("e5m2 x1e9") << "Outliers x10^9 in E5M2" << 4.0 << 1e6 << true;
        // The honest other half: at the default x100, and for E5M2 at x1e5, every small value
        // stays in the normal range under either scale, where a float format's relative step
        // does not depend on the scale. One scale costs little (~1.2x).
        QTest::newRow("e4m3 x100") << "Outliers x100" << 1.0 << 1.5 << true;
        QTest::newRow("e5m2 x1e5") << "Outliers x10^5 in E5M2" << 1.0 << 1.5 << false;
    }

    void smallBlocksLoseUnderOneScaleOnlyPastTheSubnormals()
    {
        QFETCH(QString, preset);
        QFETCH(double, minRatio);
        QFETCH(double, maxRatio);
        QFETCH(bool, tensorUnderflows);
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        choosePreset(tab, preset);
        checkAgainstCore(tab);
        const auto view = tab.view();
        const Fp8Granularity& t = view->table[Fp8Tab::kTensorRow];
        const Fp8Granularity& b = view->table[Fp8Tab::kChapterRow];
        const double ratio = t.small.relativeError / b.small.relativeError;
        QVERIFY2(ratio >= minRatio && ratio <= maxRatio, qPrintable(QString::number(ratio)));
        QCOMPARE(t.small.underflowCount > 0, tensorUnderflows);
        QCOMPARE(b.small.underflowCount, std::int64_t(0));
        // The chart shows it block by block: left of the outlier band, the per-tensor points
        // sit that many times above the per-block ones on average.
        QVERIFY(view->outliersOnTop);
        const double firstOutlier =
            double(view->blockCount - std::int64_t(view->excluded.size())) + 0.5;
        double sumT = 0, sumB = 0;
        for (int i = 0; i < view->tensorPoints.size(); ++i)
            if (view->tensorPoints[i].x() < firstOutlier) {
                sumT += view->tensorPoints[i].y();
                sumB += view->blockPoints[i].y();
            }
        QVERIFY2(sumT >= 0.9 * minRatio * sumB, qPrintable(QString::number(sumT / sumB)));
        auto* band = seriesNamed<QAreaSeries>(tab.blockErrorChart()->chart(), "Outliers (x");
        QVERIFY(band && band->isVisible());
        QCOMPARE(band->upperSeries()->at(0).x(), firstOutlier);
        QVERIFY(tab.figuresLabel()->text().contains(ratio < 1.5 ? "Why so little?"
                                                                : "One big block sets the scale"));
    }

    void theChaptersExampleAndBack()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        choosePreset(tab, "Chapter's 1 x 8 example");
        QVERIFY(tab.inputs().values);
        QCOMPARE(tab.inputs().values->cols(), Eigen::Index(8));
        QCOMPARE(tab.inputs().blockSize, std::int64_t(4));
        QCOMPARE(offered(combo(tab, "fp8.block_size")), (QList<qlonglong>{1, 2, 4, 8}));
        QVERIFY(!tab.control("fp8.rows")->isEnabled());
        checkAgainstCore(tab);
        // The chapter's spread stays inside E4M3's normal range: no value is lost either way.
        const auto view = tab.view();
        QCOMPARE(view->table[Fp8Tab::kTensorRow].all.underflowCount, std::int64_t(0));
        QCOMPARE(view->excluded, (std::vector<std::int64_t>{0})); // the block holding 3.0
        // The median block of two is the small one. Here one scale serves it better than its
        // own: 0.03 / (0.04 / 448) = 336 is a tie that rounds down to 320.
        QCOMPARE(view->shownBlock, std::int64_t(1));
        QVERIFY(view->shownTensorError < view->shownBlockError);
        core::Scenario s;
        tab.writeScenario(s);
        QVERIFY(s.fp8.values && *s.fp8.values == *tab.inputs().values);

        auto* generate = tab.findChild<QPushButton*>("fp8.generate");
        QVERIFY(generate && generate->isVisibleTo(&tab));
        generate->click();
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(!tab.inputs().values);
        QVERIFY(tab.control("fp8.rows")->isEnabled());
        QCOMPARE(tab.inputs().blockSize, std::int64_t(4)); // 4 divides 256 too
        checkAgainstCore(tab);
    }

    void anAllZeroBlockIsShown()
    {
        // Explicit values with a block of zeros, shown in the grid chart (the smallest block).
        core::Scenario s;
        s.fp8.blockSize = 4;
        core::MatrixF x(1, 8);
        x << 0, 0, -0.0f, 0, 1, 2, 3, 4;
        s.fp8.values = x;
        Fp8Tab tab;
        tab.setScenario(s);
        tab.control("fp8.shown_block")->setValue(0);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(!tab.messageLabel()->isVisibleTo(&tab));
        checkAgainstCore(tab);
        QCOMPARE(tab.view()->shownBlock, std::int64_t(0));
        QCOMPARE(tab.view()->shownTensorError, 0.0);
        // The axis spans the grid points next to zero, not a range of width zero.
        auto* axis =
            qobject_cast<QValueAxis*>(tab.gridChart()->chart()->axes(Qt::Horizontal).first());
        QVERIFY(axis && axis->max() > axis->min() && axis->max() - axis->min() < 1);
    }

    void overflowModeShowsInThePlainCast()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        choosePreset(tab, "Outliers x10^5: subnormals");
        QComboBox* overflow = combo(tab, "fp8.overflow");
        const QString saturated = tab.granularityTable()->item(Fp8Tab::kCastRow, 2)->text();
        QVERIFY(saturated != "NaN");
        overflow->setCurrentIndex(1);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.inputs().overflow, core::Fp8Overflow::NaN);
        checkAgainstCore(tab);
        // Outliers past 448 become NaN without a scale; every scaled row is untouched, since a
        // scale of max|tile| / 448 never lets a value past the largest finite one.
        QCOMPARE(tab.granularityTable()->item(Fp8Tab::kCastRow, 2)->text(), QString("NaN"));
        for (int r = 1; r < 7; ++r)
            QVERIFY(tab.granularityTable()->item(r, 2)->text() != "NaN");
    }

    void formatSwitch()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        combo(tab, "fp8.format")->setCurrentIndex(1);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.inputs().format, core::Fp8Format::E5M2);
        checkAgainstCore(tab);
        QVERIFY(tab.figuresLabel()->text().contains("E5M2"));
    }

    void scenarioValuesAreKept()
    {
        core::Scenario s;
        s.fp8.outlierScale = 1e15; // past the slider's 1e12
        s.fp8.rows = 5000; // past the slider's 4096
        s.fp8.cols = 32;
        s.fp8.blockSize = 8;
        s.fp8.seed = 123456;
        s.fp8.format = core::Fp8Format::E5M2;
        Fp8Tab tab;
        tab.setScenario(s);
        settle(tab, kWorkerTimeoutMs);
        core::Scenario back;
        tab.writeScenario(back);
        QCOMPARE(back.fp8.outlierScale, 1e15);
        QCOMPARE(back.fp8.rows, std::int64_t(5000));
        QCOMPARE(back.fp8.cols, std::int64_t(32));
        QCOMPARE(back.fp8.blockSize, std::int64_t(8));
        QCOMPARE(back.fp8.seed, std::int64_t(123456));
        QCOMPARE(back.fp8.format, core::Fp8Format::E5M2);
        QCOMPARE(combo(tab, "fp8.preset")->currentText(), QString("Custom"));
        checkAgainstCore(tab);
    }

    void aBlockSizeThatDividesNothingIsNamed()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        const auto good = tab.view();
        core::Scenario s;
        s.fp8.blockSize = 3; // 256 columns
        tab.setScenario(s);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.inputs().blockSize, std::int64_t(3)); // not quietly changed
        QVERIFY(tab.messageLabel()->isVisibleTo(&tab));
        QVERIFY(tab.messageLabel()->text().contains("fp8.block_size"));
        QCOMPARE(tab.view(), good); // the last good charts stay
        // Choosing a real size clears it.
        QComboBox* box = combo(tab, "fp8.block_size");
        box->setCurrentIndex(indexOfData(box, 32));
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(!tab.messageLabel()->isVisibleTo(&tab));
        checkAgainstCore(tab);
    }

    void aHugeMatrixDoesNotBlockTheSliders()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        tab.control("fp8.rows")->setValue(4096);
        tab.control("fp8.cols")->setValue(4096);
        // Let the zero-delay timer hand the work to the worker thread.
        QTRY_VERIFY(tab.view()->inputs.cols != 4096 && tab.refreshPending());
        QCoreApplication::processEvents();
        // While 16.8 million values are generated and quantized, the GUI thread still answers:
        // a slider moves and the event loop runs.
        ParameterControl* shown = tab.control("fp8.shown_block");
        const double before = shown->value();
        QTest::keyClick(shown->slider(), Qt::Key_Right);
        QCOMPARE(shown->value(), before + 1);
        QVERIFY(tab.refreshPending());
        settle(tab, kWorkerTimeoutMs);
        const auto view = tab.view();
        QCOMPARE(view->inputs.rows, std::int64_t(4096));
        QCOMPARE(view->inputs.cols, std::int64_t(4096));
        QCOMPARE(view->blockCount, std::int64_t(4096 * 4096 / 16));
        QCOMPARE(tab.shownPercentile(), before + 1);
        // The chart draws an even sample, the maps are pooled 4 x 4.
        QCOMPARE(view->tensorPoints.size(), Fp8Tab::kMaxPlotPoints);
        QCOMPARE(view->tensorMap.rows(), Eigen::Index(1024));
        QCOMPARE(view->poolCols, std::int64_t(4));
        // The generator's normal matrix is kept: a new outlier scale reuses it.
        const auto normals = view->normals;
        tab.control("fp8.outlier_scale")->setValue(1e5);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.view()->normals, normals);
    }

    void plottedRanksAndPercentiles()
    {
        QCOMPARE(Fp8Tab::plottedRanks(3, 5), (std::vector<std::int64_t>{0, 1, 2}));
        QCOMPARE(Fp8Tab::plottedRanks(9, 5), (std::vector<std::int64_t>{0, 2, 4, 6, 8}));
        QCOMPARE(Fp8Tab::rankAtPercentile(1024, 0), std::int64_t(0));
        QCOMPARE(Fp8Tab::rankAtPercentile(1024, 100), std::int64_t(1023));
        QCOMPARE(Fp8Tab::rankAtPercentile(1024, 50), std::int64_t(511)); // 511.5 rounds down
        QCOMPARE(Fp8Tab::rankAtPercentile(2, 50), std::int64_t(0));
        QCOMPARE(Fp8Tab::rankAtPercentile(1, 50), std::int64_t(0));
    }

    void exportsFillTheCanvas_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::newRow("default") << "Outliers x100";
        QTest::newRow("x1e5") << "Outliers x10^5: subnormals";
        QTest::newRow("chapter") << "Chapter's 1 x 8 example";
    }

    void exportsFillTheCanvas()
    {
        QFETCH(QString, preset);
        Fp8Tab tab; // never shown: export lays every chart out itself
        settle(tab, kWorkerTimeoutMs);
        choosePreset(tab, preset);
        QTemporaryDir dir;
        // SCALELAB_PNG_DIR keeps copies to look at.
        const QString keep = qEnvironmentVariable("SCALELAB_PNG_DIR");
        for (ChartPanel* chart : tab.charts()) {
            const QString path = dir.filePath(chart->name() + ".png");
            QCOMPARE(exportCharts({ExportJob{chart, path, ImageFormat::Png, {1600, 1000}}}),
                     QString());
            const QImage image(path);
            QCOMPARE(image.size(), QSize(1600, 1000));
            const QSizeF span = drawnSpan(image);
            QVERIFY2(span.width() > 0.9 && span.height() > 0.9,
                     qPrintable(QString("%1: %2 x %3")
                                    .arg(chart->name())
                                    .arg(span.width())
                                    .arg(span.height())));
            if (!keep.isEmpty())
                image.save(
                    QString("%1/%2-%3.png").arg(keep, chart->name(), QTest::currentDataTag()));
        }
    }
};

QTEST_MAIN(TstFp8Tab)
#include "tst_fp8tab.moc"
