// The FP8 tab: controls drive the scenario document (saved and undoable), every series and table
// cell is core's figure, the small blocks' loss under one scale shows where it is real, and big
// matrices stay off the GUI thread. The block size follows the columns by the document's rule,
// tested here without widgets too.

#include "chartexport.h"
#include "chartpanel.h"
#include "fields.h"
#include "format.h"
#include "fp8tab.h"
#include "heatmappairpanel.h"
#include "heatmappanel.h"
#include "parametercontrol.h"
#include "pointcloud.h"
#include "scalelab/core/fp8.h"
#include "scalelab/core/fp8_training.h"
#include "scalelab/core/fp8_view.h"
#include "scenariodocument.h"
#include "scenariojson.h"
#include "tablepanel.h"
#include "testhelpers.h"

#include <QAbstractButton>
#include <QApplication>
#include <QAreaSeries>
#include <QChart>
#include <QComboBox>
#include <QGraphicsSimpleTextItem>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSlider>
#include <QTabBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

using namespace scalelab;
using namespace scalelab::ui;
using namespace scalelab::test;

namespace {

/// How long settle() waits for this tab's results; Debug builds are slow, nothing is timed.
constexpr int kWorkerTimeoutMs = 120000;
/// A settle interval no test waits out: the slider rests only when a test lets it go.
constexpr int kNeverMs = 3600 * 1000;

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
    /// What core gives for the tab's current inputs, one call at a time.
    struct Expected {
        core::Fp8Inputs in;
        core::MatrixF x;
        std::int64_t b = 0;
        core::Fp8Result tensor, block;
        std::vector<core::Fp8BlockError> tErr, bErr;
        std::vector<std::int64_t> order;
        std::int64_t n = 0;
        std::int64_t shown = 0; ///< the block of the grid chart
        std::int64_t shownRank = 0;
        std::vector<std::int64_t> excluded;
    };

    static Expected expectedFor(const core::Fp8Inputs& in, double percentile)
    {
        Expected e;
        e.in = in;
        e.x = core::fp8InputMatrix(in);
        e.b = in.blockSize;
        e.tensor = core::fp8BlockQuantize(e.x, in.format, {0, 0, false}, in.overflow);
        e.block = core::fp8BlockQuantize(e.x, in.format, {1, e.b, false}, in.overflow);
        e.tErr = core::fp8BlockErrors(e.x, e.tensor.dequantized, e.b);
        e.bErr = core::fp8BlockErrors(e.x, e.block.dequantized, e.b);
        e.order = core::fp8OrderByMagnitude(e.tErr);
        e.n = static_cast<std::int64_t>(e.tErr.size());
        e.shownRank = static_cast<std::int64_t>(
            std::floor(percentile / 100.0 * static_cast<double>(e.n - 1)));
        e.shown = e.order[static_cast<std::size_t>(e.shownRank)];
        if (in.values) {
            for (std::size_t i = 0; i < e.tErr.size(); ++i)
                if (e.tErr[i].maxAbs == e.tErr[std::size_t(e.order.back())].maxAbs)
                    e.excluded.push_back(std::int64_t(i));
        } else {
            e.excluded = core::fp8Generate(in).outlierBlocks;
        }
        return e;
    }

    /// Every series, map and table cell against core, for the tab's current inputs.
    void checkAgainstCore(Fp8Tab& tab)
    {
        const core::Fp8Inputs in = tab.inputs();
        const auto view = tab.view();
        QVERIFY(view);
        QCOMPARE(view->inputs.outlierScale, in.outlierScale);
        QCOMPARE(view->inputs.blockSize, in.blockSize);
        const Expected e = expectedFor(in, tab.shownPercentile());
        for (const auto check :
             {&TstFp8Tab::checkErrorChart, &TstFp8Tab::checkGridChart, &TstFp8Tab::checkHeatmap,
              &TstFp8Tab::checkTable, &TstFp8Tab::checkFigures}) {
            (this->*check)(tab, e);
            if (QTest::currentTestFailed())
                return;
        }
    }

    /// fp8-block-error: one point per block (or an even sample), smallest block first, and the
    /// ringed block: the percentile's rank among the blocks ordered by magnitude.
    void checkErrorChart(Fp8Tab& tab, const Expected& e)
    {
        QChart* ec = tab.blockErrorChart()->chart();
        // Their points are drawn by one item each, not by the series (PointCloud).
        const PointCloud* tc = PointCloud::of(seriesNamed<QScatterSeries>(ec, "Per tensor"));
        const PointCloud* bc =
            PointCloud::of(seriesNamed<QScatterSeries>(ec, QString("Per 1 x %1 block").arg(e.b)));
        QVERIFY(tc && bc);
        QCOMPARE(tc->series()->count(), 0);
        QCOMPARE(bc->series()->count(), 0);
        const QList<QPointF>& ts = tc->points();
        const QList<QPointF>& bs = bc->points();
        QCOMPARE(ts.size(), qsizetype(std::min<std::int64_t>(e.n, Fp8Tab::kMaxPlotPoints)));
        QCOMPARE(bs.size(), ts.size());
        for (qsizetype i = 0; i < ts.size(); ++i) {
            const auto rank = static_cast<std::int64_t>(ts[i].x()) - 1;
            QCOMPARE(bs[i].x(), ts[i].x());
            const auto blk = static_cast<std::size_t>(e.order[static_cast<std::size_t>(rank)]);
            QCOMPARE(ts[i].y(), 100.0 * e.tErr[blk].relativeError);
            QCOMPARE(bs[i].y(), 100.0 * e.bErr[blk].relativeError);
        }
        QCOMPARE(ts.first().x(), 1.0);
        QCOMPARE(ts.last().x(), double(e.n));
        // The rank axis ends one rank past the last block, at a whole tick step; the error
        // axis starts at 0 and holds every point.
        auto* ranks = qobject_cast<QValueAxis*>(ec->axes(Qt::Horizontal).first());
        auto* errors = qobject_cast<QValueAxis*>(ec->axes(Qt::Vertical).first());
        QVERIFY(ranks && errors);
        QCOMPARE(ranks->min(), 0.0);
        QCOMPARE(ranks->max(), double(e.n + 1));
        QCOMPARE(ranks->tickInterval(), std::round(ranks->tickInterval()));
        QCOMPARE(errors->min(), 0.0);
        for (const QList<QPointF>* series : {&ts, &bs})
            for (const QPointF& p : *series)
                QVERIFY(p.y() <= errors->max());
        auto* ring = seriesNamed<QScatterSeries>(ec, "Shown block");
        QVERIFY(ring);
        const auto shown = std::size_t(e.shown);
        const double x = double(e.shownRank + 1);
        QCOMPARE(ring->points(),
                 (QList<QPointF>{{x, 100.0 * e.tErr[shown].relativeError},
                                 {x, 100.0 * e.bErr[shown].relativeError}}));
    }

    /// fp8-grid: the block's values, each scale's grid and where the values land.
    void checkGridChart(Fp8Tab& tab, const Expected& e)
    {
        const std::int64_t b = e.b;
        const std::int64_t perRow = e.x.cols() / b;
        const std::vector<float> values = slice(e.x, e.shown * b, b);
        const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
        const float ownScale = e.block.scales(e.shown / perRow, e.shown % perRow);
        const core::Fp8Format f = e.in.format;
        QChart* gc = tab.gridChart()->chart();
        QCOMPARE(seriesNamed<QScatterSeries>(gc, "Values")->points(), rowAt(values, 1));
        QCOMPARE(seriesNamed<QScatterSeries>(gc, "Per-tensor grid")->points(),
                 rowAt(core::fp8ScaledGrid(f, e.tensor.scales(0, 0), *lo, *hi), 0));
        QCOMPARE(seriesNamed<QScatterSeries>(gc, "Own grid")->points(),
                 rowAt(core::fp8ScaledGrid(f, ownScale, *lo, *hi), 2));
        QCOMPARE(seriesNamed<QScatterSeries>(gc, "Rounded, per tensor")->points(),
                 rowAt(slice(e.tensor.dequantized, e.shown * b, b), 0));
        QCOMPARE(seriesNamed<QScatterSeries>(gc, "Rounded, own scale")->points(),
                 rowAt(slice(e.block.dequantized, e.shown * b, b), 2));
    }

    /// fp8-heatmap: core's pooled |error| maps, on one colour range.
    void checkHeatmap(Fp8Tab& tab, const Expected& e)
    {
        constexpr int side = Fp8Tab::kMapSide;
        HeatmapPairPanel* pair = tab.heatmap();
        QVERIFY(pair->left()->matrix()
                == core::fp8AbsErrorMap(e.x, e.tensor.dequantized, side, side));
        QVERIFY(pair->right()->matrix()
                == core::fp8AbsErrorMap(e.x, e.block.dequantized, side, side));
        QCOMPARE(pair->left()->colorRange(), pair->right()->colorRange());
        QCOMPARE(pair->left()->colorRange(), pair->sharedRange());
        // The range (found on the tab's worker) runs from the smallest positive error of either
        // map to the largest finite one, scanned here afresh.
        double lo = std::numeric_limits<double>::infinity(), hi = 0;
        for (const Eigen::MatrixXd* m : {&pair->left()->matrix(), &pair->right()->matrix()})
            for (Eigen::Index i = 0; i < m->size(); ++i)
                if (const double v = m->data()[i]; std::isfinite(v) && v > 0) {
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                }
        if (!std::isfinite(lo))
            lo = hi = 1; // no positive error (an all-zero block): a decade from 1
        QCOMPARE(pair->sharedRange(), std::make_pair(lo, hi > lo ? hi : 10 * lo));
    }

    /// The table: every granularity's figures as core gives them.
    void checkTable(Fp8Tab& tab, const Expected& e)
    {
        const core::Fp8Inputs& in = e.in;
        const core::Fp8Scaling scalings[] = {{0, 0, false},   {0, 0, false},     {1, 0, false},
                                             {1, 128, false}, {128, 128, false}, {1, e.b, false},
                                             {1, 32, true}};
        QTableWidget* table = tab.granularityTable();
        QCOMPARE(table->rowCount(), 7);
        for (int r = 0; r < 7; ++r) {
            const core::Fp8Result q = r == Fp8Tab::kCastRow
                ? core::fp8Cast(e.x, in.format, in.overflow)
                : core::fp8BlockQuantize(e.x, in.format, scalings[r], in.overflow);
            const core::Fp8Stats small =
                core::fp8StatsExcludingBlocks(e.x, q.dequantized, e.b, e.excluded);
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
    }

    /// The figures line names the per-tensor scale and both small-block errors.
    void checkFigures(Fp8Tab& tab, const Expected& e)
    {
        const QString figures = tab.figuresLabel()->text();
        QVERIFY(figures.contains(formatNumber(e.tensor.scales(0, 0))));
        for (const core::Fp8Result* q : {&e.tensor, &e.block})
            QVERIFY(figures.contains(
                percent(core::fp8StatsExcludingBlocks(e.x, q->dequantized, e.b, e.excluded)
                            .relativeError)));
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
        QCOMPARE(tab.charts().size(), 6);
        QCOMPARE(tab.charts()[0]->name(), QString("fp8-block-error"));
        QCOMPARE(tab.charts()[1]->name(), QString("fp8-heatmap"));
        QCOMPARE(tab.charts()[2]->name(), QString("fp8-grid"));
        QCOMPARE(tab.charts()[3]->name(), QString("fp8-accumulation"));
        QCOMPARE(tab.charts()[4]->name(), QString("fp8-policy-error"));
        QCOMPARE(tab.charts()[5]->name(), QString("fp8-policy-lost"));
        QCOMPARE(tab.part(), Fp8Tab::Part::BlockScaling);
        checkAgainstCore(tab);
    }

    void eachPartShowsItsOwnChartsAndControls()
    {
        Fp8Tab tab;
        tab.resize(1600, 1000);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        settle(tab, kWorkerTimeoutMs);
        using Part = Fp8Tab::Part;
        // Walked there and back: a second setCharts forgets the charts of the part before.
        for (const Part part : {Part::Accumulation, Part::Policy, Part::BlockScaling, Part::Policy,
                                Part::Accumulation, Part::BlockScaling}) {
            tab.partBar()->setCurrentIndex(static_cast<int>(part));
            QCOMPARE(tab.part(), part);
            QApplication::processEvents();
            QList<ChartPanel*> shown = tab.partCharts(part);
            if (part == Part::BlockScaling)
                shown << tab.heatmap(); // the maps and the table stay with block scaling
            for (ChartPanel* chart : tab.charts())
                QVERIFY2(chart->isVisible() == shown.contains(chart),
                         qPrintable(chart->name() + " in part "
                                    + QString::number(static_cast<int>(part))));
            QCOMPARE(tab.granularityTable()->isVisible(), part == Part::BlockScaling);
            QCOMPARE(tab.control("fp8.accumulation.accumulator_bits")->isVisible(),
                     part == Part::Accumulation);
            QCOMPARE(tab.control("fp8.policy.spike")->isVisible(), part == Part::Policy);
            QCOMPARE(tab.control("fp8.outlier_scale")->isVisible(), part == Part::BlockScaling);
            // Format and block size serve every part.
            QVERIFY(combo(tab, "fp8.block_size")->isVisible());
        }
        // The selector takes the keyboard: Right goes to the next part.
        tab.partBar()->setFocus(Qt::TabFocusReason);
        QTest::keyClick(tab.partBar(), Qt::Key_Right);
        QCOMPARE(tab.part(), Part::Accumulation);
        QVERIFY(tab.accumulationChart()->isVisible());
        QVERIFY(!tab.blockErrorChart()->isVisible());
        // A lesson step outlining a chart or control of another part brings that part.
        tab.reveal(tab.policyLostChart());
        QCOMPARE(tab.part(), Part::Policy);
        tab.reveal(tab.control("fp8.accumulation.k_min"));
        QCOMPARE(tab.part(), Part::Accumulation);
        tab.reveal(tab.heatmap());
        QCOMPARE(tab.part(), Part::BlockScaling);
        tab.reveal(combo(tab, "fp8.block_size")); // in every part: nothing changes
        QCOMPARE(tab.part(), Part::BlockScaling);
    }

    void anAccumulationChangeLeavesTheBlockViewAlone()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        const auto view = tab.view();
        const auto accumulation = tab.accumulation();
        const auto policy = tab.policy();
        QVERIFY(view && accumulation && policy);
        tab.document()->setValue("fp8.accumulation.accumulator_bits", 10);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.view().get(), view.get());
        QCOMPARE(tab.policy().get(), policy.get());
        QVERIFY(tab.accumulation().get() != accumulation.get());
        // The chart shows core's sweep for the new accumulator.
        core::Fp8Inputs in = tab.inputs();
        QCOMPARE(in.accumulation.accumulatorBits, std::int64_t(10));
        const core::Fp8AccumulationResult expected =
            core::fp8Accumulation(in.accumulation, in.format, in.blockSize, in.overflow);
        for (int m = 0; m < core::kAccumulationModes; ++m) {
            const QList<QPointF> points = tab.accumulationMaxSeries(m)->points();
            QCOMPARE(points.size(), qsizetype(expected.points.size()));
            for (qsizetype i = 0; i < points.size(); ++i) {
                const auto& p = expected.points[static_cast<std::size_t>(i)];
                QCOMPARE(points[i].x(), std::log2(static_cast<double>(p.k)));
                QCOMPARE(points[i].y(), 100.0 * p.maxRelativeError[static_cast<std::size_t>(m)]);
            }
        }
        // A block-scaling input leaves the sweep and the policy run alone.
        const auto sweep = tab.accumulation();
        tab.document()->setValue("fp8.outlier_scale", 1000);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(tab.view().get() != view.get());
        QCOMPARE(tab.accumulation().get(), sweep.get());
        QCOMPARE(tab.policy().get(), policy.get());
        // The block size serves all three.
        tab.document()->setValue("fp8.block_size", 32);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(tab.accumulation().get() != sweep.get());
        QVERIFY(tab.policy().get() != policy.get());
    }

    void newErrorMapsAreTheViewsOwn()
    {
        // The maps are shown as the worker made them, not copied on the GUI thread.
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        HeatmapPairPanel* pair = tab.heatmap();
        QCOMPARE(&pair->left()->matrix(), tab.view()->tensorMap.get());
        QCOMPARE(&pair->right()->matrix(), tab.view()->blockMap.get());
        const Eigen::MatrixXd before = pair->right()->matrix();
        tab.document()->setValue("fp8.outlier_scale", 1000);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(pair->right()->matrix() != before);
        QCOMPARE(&pair->left()->matrix(), tab.view()->tensorMap.get());
        QCOMPARE(&pair->right()->matrix(), tab.view()->blockMap.get());
    }

    void thePartShownIsTheScenarios()
    {
        // fp8.part: chosen on the bar, it is the document's (saved, undone, opened).
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.part(), Fp8Tab::Part::BlockScaling);
        tab.partBar()->setCurrentIndex(2);
        QCOMPARE(tab.scenario().fp8Display.part, core::Fp8Part::Policy);
        QCOMPARE(tab.part(), Fp8Tab::Part::Policy);
        QVERIFY(tab.partCharts(Fp8Tab::Part::Policy).first()->isVisibleTo(&tab));
        // Undo takes the choice back.
        tab.document()->undoStack()->undo();
        QCOMPARE(tab.part(), Fp8Tab::Part::BlockScaling);
        QCOMPARE(tab.partBar()->currentIndex(), 0);
        tab.document()->undoStack()->redo();
        QCOMPARE(tab.part(), Fp8Tab::Part::Policy);
        // Another edit keeps the part.
        tab.document()->setValue("fp8.policy.history", 4);
        QCOMPARE(tab.part(), Fp8Tab::Part::Policy);
        // A scenario that asks for the accumulation part opens on it.
        core::Scenario s;
        s.fp8Display.part = core::Fp8Part::Accumulation;
        tab.setScenario(s);
        QCOMPARE(tab.part(), Fp8Tab::Part::Accumulation);
        QCOMPARE(tab.partBar()->currentIndex(), 1);
        QVERIFY(!tab.partCharts(Fp8Tab::Part::BlockScaling).first()->isVisibleTo(&tab));
    }

    void thePublishedFigureIsInTheAccumulationFigures()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        tab.choosePart(Fp8Tab::Part::Accumulation);
        const QString figures = tab.figuresLabel()->text();
        QVERIFY2(figures.contains("Published (DeepSeek-V3)"), qPrintable(figures));
        QVERIFY(figures.contains("nearly 2 % max relative error"));
        const core::Fp8AccumulationPoint* p = tab.publishedPoint();
        QVERIFY(p);
        QCOMPARE(p->k, Fp8Tab::kPublishedK);
        const auto limited = static_cast<std::size_t>(core::AccumulationMode::Limited);
        QVERIFY2(figures.contains("ScaleLab: " + percent(p->maxRelativeError[limited])),
                 qPrintable(figures));
        QVERIFY(tab.explanationValues().contains("acc_limited"));
        // Back to block scaling: its own figures again.
        tab.choosePart(Fp8Tab::Part::BlockScaling);
        QVERIFY(!tab.figuresLabel()->text().contains("Published"));
    }

    void onlyDelayedScalingSaturatesAtTheSpike()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        QComboBox* preset = combo(tab, "fp8.policy.preset");
        const int i = preset->findText("A loss spike", Qt::MatchStartsWith);
        QVERIFY(i >= 0);
        preset->setCurrentIndex(i);
        emit preset->activated(i);
        settle(tab, kWorkerTimeoutMs);
        const core::Fp8PolicyInputs& in = tab.inputs().policy;
        QVERIFY(in.spike > 1 && in.spikeStep < in.steps);
        const auto at = static_cast<double>(in.spikeStep);
        const auto saturatedAt = [&](int policy) {
            for (const QPointF& p : tab.saturatedSeries(policy)->points())
                if (p.x() == at)
                    return p.y();
            return -1.0;
        };
        QVERIFY(saturatedAt(static_cast<int>(core::ScalingPolicy::Delayed)) > 0);
        for (const auto policy : {core::ScalingPolicy::PerTensor, core::ScalingPolicy::Fine})
            for (const QPointF& p : tab.saturatedSeries(static_cast<int>(policy))->points())
                QCOMPARE(p.y(), 0.0);
        // The same as core's run, and the figures say so at the spike step.
        const core::Fp8Inputs f = tab.inputs();
        const core::Fp8PolicyResult r = core::fp8Policy(in, f.format, f.blockSize, f.overflow);
        const auto d = static_cast<std::size_t>(core::ScalingPolicy::Delayed);
        QCOMPARE(saturatedAt(static_cast<int>(d)),
                 static_cast<double>(r.steps[d][static_cast<std::size_t>(in.spikeStep)].saturated));
        tab.choosePart(Fp8Tab::Part::Policy);
        const QString figures = tab.figuresLabel()->text();
        QVERIFY2(figures.contains(QString("At the spike (step %1)").arg(in.spikeStep)),
                 qPrintable(figures));
        QVERIFY(tab.stepsWorseAfterSpike() > 0);
        QVERIFY(tab.stepsWorseAfterSpike() <= in.history);
    }

    void badTrainingInputIsNamed()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        const auto sweep = tab.accumulation();
        core::Scenario s = tab.document()->scenario();
        s.fp8.accumulation.kMin = 4096;
        s.fp8.accumulation.kMax = 1024;
        tab.setScenario(s);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.failure(), Tab::Failure::BadInput);
        QVERIFY2(tab.failureMessage().contains("fp8.accumulation.k_max"),
                 qPrintable(tab.failureMessage()));
        QCOMPARE(tab.accumulation().get(), sweep.get());
    }

    void accumulatorPresetsSetTheAccumulator()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        QComboBox* preset = combo(tab, "fp8.accumulation.preset");
        QVERIFY(preset->currentText().startsWith("DeepSeek-V3 on H800")); // the defaults
        const int i = preset->findText("float32 accumulation", Qt::MatchStartsWith);
        preset->setCurrentIndex(i);
        emit preset->activated(i);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.inputs().accumulation.accumulatorBits, std::int64_t(23));
        QCOMPARE(preset->currentIndex(), i);
        tab.document()->setValue("fp8.accumulation.accumulator_bits", 12);
        QCOMPARE(preset->currentText(), QString("Custom"));
        tab.document()->undoStack()->undo();
        tab.document()->undoStack()->undo();
        QCOMPARE(tab.inputs().accumulation.accumulatorBits, std::int64_t(13));
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
        const std::shared_ptr<const Eigen::MatrixXd> map = tab.view()->tensorMap;
        control->slider()->setFocus();
        QTest::keyClick(control->slider(), Qt::Key(qtKey));
        QVERIFY(control->value() != before);
        settle(tab, kWorkerTimeoutMs);
        const core::Scenario& s = tab.document()->scenario();
        if (key == "fp8.shown_block") {
            QCOMPARE(tab.shownPercentile(), control->value());
            // Only the shown block was worked out again: the view kept its error maps.
            QCOMPARE(tab.view()->tensorMap, map);
        } else if (key == "fp8.outlier_scale")
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
        QCOMPARE(core::fp8BlockSizeChoices(97), (std::vector<std::int64_t>{1, 97}));
        QCOMPARE(core::fp8BlockSizeChoices(1), (std::vector<std::int64_t>{1}));
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
        const core::Fp8Granularity& t = view->table[Fp8Tab::kTensorRow];
        const core::Fp8Granularity& b = view->table[Fp8Tab::kChapterRow];
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
        for (std::size_t i = 0; i < view->tensorPoints.size(); ++i)
            if (view->tensorPoints[i].rank < firstOutlier) {
                sumT += view->tensorPoints[i].percent;
                sumB += view->blockPoints[i].percent;
            }
        QVERIFY2(sumT >= 0.9 * minRatio * sumB, qPrintable(QString::number(sumT / sumB)));
        auto* band = seriesNamed<QAreaSeries>(tab.blockErrorChart()->chart(), "Outlier blocks (");
        QVERIFY(band && band->isVisible());
        QCOMPARE(band->name(),
                 QString("Outlier blocks (%1)")
                     .arg(ui::formatWhole(std::int64_t(view->excluded.size()))));
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
        const core::Scenario& s = tab.document()->scenario();
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

    void aSmallOutlierStepKeepsTheErrorChartsScales()
    {
        // 101 -> 104, as the redraw benchmark steps it: the errors move within the scale they
        // have, so neither axis changes (a new range lays the chart out again).
        Fp8Tab tab;
        tab.control("fp8.outlier_scale")->setValue(101);
        settle(tab, kWorkerTimeoutMs);
        QChart* ec = tab.blockErrorChart()->chart();
        auto* ranks = qobject_cast<QValueAxis*>(ec->axes(Qt::Horizontal).first());
        auto* errors = qobject_cast<QValueAxis*>(ec->axes(Qt::Vertical).first());
        QSignalSpy rankRanges(ranks, &QValueAxis::rangeChanged);
        QSignalSpy errorRanges(errors, &QValueAxis::rangeChanged);
        const PointCloud* cloud = PointCloud::of(seriesNamed<QScatterSeries>(ec, "Per tensor"));
        QVERIFY(cloud);
        const QList<QPointF> before = cloud->points();
        tab.control("fp8.outlier_scale")->setValue(104);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(cloud->points() != before);
        QCOMPARE(rankRanges.count(), 0);
        QCOMPARE(errorRanges.count(), 0);
        checkAgainstCore(tab);
    }

    void aNewScaleLaysTheGridChartOutNoMore()
    {
        // The grid chart names its rows with their scales, which change at every outlier step:
        // the names are the chart's own items, so a step lays the chart out no more (its axis
        // labels only hold their room), and the names show the new scales.
        Fp8Tab tab;
        tab.resize(1600, 950);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        tab.control("fp8.outlier_scale")->setValue(101);
        settle(tab, kWorkerTimeoutMs);
        QTest::qWait(50);
        QChart* gc = tab.gridChart()->chart();
        const auto scaleNames = [gc] {
            QStringList names;
            for (QGraphicsItem* item : gc->childItems())
                if (auto* text = dynamic_cast<QGraphicsSimpleTextItem*>(item);
                    text && text->text().startsWith("("))
                    names << text->text();
            return names;
        };
        const QStringList before = scaleNames();
        QCOMPARE(before.size(), 2);
        int layouts = 0;
        scalelab::test::EventSpy spy(gc, QEvent::LayoutRequest, [&layouts] { ++layouts; });
        for (const int outliers : {104, 101, 104}) {
            tab.control("fp8.outlier_scale")->setValue(outliers);
            settle(tab, kWorkerTimeoutMs);
            QTest::qWait(20);
        }
        QCOMPARE(layouts, 0);
        const QStringList after = scaleNames();
        QCOMPARE(after.size(), 2);
        QVERIFY2(after[0] != before[0] || after[1] != before[1], qPrintable(after.join(", ")));
        // The per-tensor name reads the view's scale, to the three figures it shows.
        const QString tensor = after.filter("(scale ").value(0);
        bool ok = false;
        const double shown = tensor.mid(7).chopped(1).toDouble(&ok);
        QVERIFY2(ok, qPrintable(tensor));
        QVERIFY2(std::abs(shown / tab.view()->tensorScale - 1) < 5e-3, qPrintable(tensor));
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
        const core::Scenario& back = tab.document()->scenario();
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
        QCOMPARE(int(view->tensorPoints.size()), Fp8Tab::kMaxPlotPoints);
        QCOMPARE(view->tensorMap->rows(), Eigen::Index(1024));
        QCOMPARE(view->poolCols, std::int64_t(4));
        // The generator's normal matrix is kept: a new outlier scale reuses it.
        const auto normals = view->normals;
        tab.control("fp8.outlier_scale")->setValue(1e5);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.view()->normals, normals);
    }

    void aMovedSliderPreviewsALargeMatrixUntilItRests()
    {
        Fp8Tab tab;
        // The slider rests only when the test says so (a slow build must not see it rest).
        tab.setSettleInterval(kNeverMs);
        tab.resize(1600, 1000);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        tab.control("fp8.rows")->setValue(2048);
        tab.control("fp8.cols")->setValue(1024); // four bands of 128 rows make a preview
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(!tab.view()->preview);
        const std::shared_ptr<const Eigen::MatrixXd> map = tab.view()->tensorMap;
        QTableWidgetItem* header = tab.granularityTable()->horizontalHeaderItem(0);
        QCOMPARE(header->text(), QString("Scaling"));

        // Dragged: each step is worked out from four bands of 128 rows, and the error maps
        // stay the last exact ones.
        QSlider* slider = tab.control("fp8.outlier_scale")->slider();
        slider->setSliderDown(true);
        for (int step = 1; step <= 3; ++step) {
            slider->setSliderPosition(slider->value() + 1); // what a mouse move does
            settle(tab, kWorkerTimeoutMs);
            QVERIFY(tab.refinementPending());
            const auto preview = tab.view();
            QVERIFY(preview->preview);
            QCOMPARE(preview->previewRows, std::int64_t(512));
            QCOMPARE(preview->inputs.outlierScale, tab.inputs().outlierScale);
            QCOMPARE(preview->tensorMap, map);
            QCOMPARE(header->text(), QString("Scaling\n(preview)"));
            QVERIFY(tab.heatmap()->title().contains("(last full result)"));
            QVERIFY(tab.figuresLabel()->text().contains("Preview from 512 of 2,048 rows"));
        }
        // Let go: the exact figures of the whole matrix, as core gives them.
        slider->setSliderDown(false);
        QVERIFY(tab.refreshPending());
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(!tab.refinementPending());
        QVERIFY(!tab.view()->preview);
        QVERIFY(tab.view()->tensorMap != map);
        QCOMPARE(header->text(), QString("Scaling"));
        QVERIFY(!tab.figuresLabel()->text().contains("Preview"));
        QCOMPARE(tab.heatmap()->title(), QString("|error| per value (matrix units)"));
        checkAgainstCore(tab);

        // A key press previews as well, until the slider rests; an export or a test that waits
        // for the tab gets the exact figures at once.
        slider->setFocus();
        QTest::keyClick(slider, Qt::Key_PageUp);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(tab.view()->preview);
        QVERIFY(tab.refinementPending());
        tab.waitForIdle();
        QVERIFY(!tab.view()->preview);
        QVERIFY(!tab.refinementPending());
        QVERIFY(!tab.refreshPending());
        checkAgainstCore(tab);

        // At rest: kSettleMs after the last key the exact figures replace the preview alone.
        tab.setSettleInterval(Fp8Tab::kSettleMs);
        QTest::keyClick(slider, Qt::Key_PageDown);
        QTest::keyClick(slider, Qt::Key_PageDown);
        QTRY_VERIFY_WITH_TIMEOUT(!tab.refreshPending() && !tab.refinementPending(),
                                 kWorkerTimeoutMs);
        QVERIFY(!tab.view()->preview);
        checkAgainstCore(tab);
    }

    void theTablesColumnsOnlyWidenWhileASliderMoves()
    {
        Fp8Tab tab;
        tab.setSettleInterval(kNeverMs); // the slider rests when the test says so
        tab.resize(1600, 1000);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        settle(tab, kWorkerTimeoutMs);
        QTableWidget* table = tab.granularityTable();
        QHeaderView* header = table->horizontalHeader();
        const int rmse = 2;
        QCOMPARE(table->horizontalHeaderItem(rmse)->text(), QString("RMSE"));
        const auto column = [table](int c) {
            QStringList texts;
            for (int r = 0; r < table->rowCount(); ++r)
                texts << table->item(r, c)->text();
            return texts;
        };
        // Qt's own measures of a column's cells and header, which resizing to contents takes.
        const auto fitted = [table, header](int c) {
            return std::max(static_cast<QAbstractItemView*>(table)->sizeHintForColumn(c),
                            header->sectionSizeHint(c));
        };
        QSlider* slider = tab.control("fp8.outlier_scale")->slider();
        slider->setFocus();
        const auto step = [&] {
            const QStringList before = column(rmse);
            QTest::keyClick(slider, Qt::Key_Right);
            settle(tab, kWorkerTimeoutMs);
            QVERIFY(column(rmse) != before); // new figures in the column
        };

        // Left wider than its figures by an earlier step: it keeps its width while the slider
        // moves, so the figures do not jump sideways. (Not so much wider that the last column,
        // which takes what is left, no longer fits its own figures: then every column fits.)
        const int wide = fitted(rmse) + 8;
        header->resizeSection(rmse, wide);
        QList<QTableWidgetItem*> last;
        for (int r = 0; r < table->rowCount(); ++r)
            last << table->item(r, table->columnCount() - 1);
        QVERIFY(cellsFitTheirColumns(table, last));
        step();
        QCOMPARE(header->sectionSize(rmse), wide);
        // Too narrow for the new figures: it widens at once.
        header->resizeSection(rmse, 20);
        step();
        QCOMPARE(header->sectionSize(rmse), fitted(rmse));
        // At rest, or when the figures are waited for (an export), it fits them again.
        header->resizeSection(rmse, wide);
        step();
        QCOMPARE(header->sectionSize(rmse), wide);
        tab.waitForIdle();
        QCOMPARE(header->sectionSize(rmse), fitted(rmse));
        // The last column, which takes what is left, still shows its figures whole.
        QVERIFY(cellsFitTheirColumns(table, last));
        header->resizeSection(rmse, wide);
        step();
        tab.setSettleInterval(Fp8Tab::kSettleMs);
        QTest::keyClick(slider, Qt::Key_Left);
        QTRY_COMPARE_WITH_TIMEOUT(header->sectionSize(rmse), fitted(rmse), kWorkerTimeoutMs);
        QVERIFY(header->sectionSize(rmse) < wide);
        // Larger type (projector mode): every column fits it at once.
        const int before = header->sectionSize(rmse);
        QFont large = tab.font();
        large.setPointSizeF(large.pointSizeF() * 2);
        tab.setFont(large);
        QVERIFY(header->sectionSize(rmse) > before);
        for (int c = 0; c + 1 < table->columnCount(); ++c)
            QCOMPARE(header->sectionSize(c), fitted(c));
    }

    void theTableGoesBelowTheMapsWhenBesideThemItWouldBeCut()
    {
        Fp8Tab tab;
        tab.setExplanationVisible(false);
        tab.resize(2400, 1400);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        settle(tab, kWorkerTimeoutMs);
        QTableWidget* table = tab.granularityTable();
        const auto beside = [&] {
            return table->mapTo(&tab, QPoint(0, 0)).x()
                > tab.heatmap()->mapTo(&tab, QPoint(tab.heatmap()->width(), 0)).x() - 1;
        };
        const auto whole = [table] {
            return table->horizontalHeader()->length() <= table->viewport()->width();
        };
        // Wide: beside the maps, every column whole.
        QTRY_VERIFY(beside());
        QVERIFY(whole());
        // Narrow: half the row would cut the table, so it goes below the maps, whole.
        tab.resize(1000, 1400);
        QTRY_VERIFY(!beside());
        QVERIFY(table->mapTo(&tab, QPoint(0, 0)).y()
                >= tab.heatmap()->mapTo(&tab, QPoint(0, tab.heatmap()->height())).y());
        QTRY_VERIFY(whole());
        // and every row shows.
        QTRY_VERIFY(table->verticalHeader()->length() <= table->viewport()->height());
        // Wide again: beside them.
        tab.resize(2400, 1400);
        QTRY_VERIFY(beside());
        QVERIFY(whole());
    }

    void plottedRanksAndPercentiles()
    {
        QCOMPARE(core::fp8PlottedRanks(3, 5), (std::vector<std::int64_t>{0, 1, 2}));
        QCOMPARE(core::fp8PlottedRanks(9, 5), (std::vector<std::int64_t>{0, 2, 4, 6, 8}));
        QCOMPARE(core::fp8RankAtPercentile(1024, 0), std::int64_t(0));
        QCOMPARE(core::fp8RankAtPercentile(1024, 100), std::int64_t(1023));
        QCOMPARE(core::fp8RankAtPercentile(1024, 50), std::int64_t(511)); // 511.5 rounds down
        QCOMPARE(core::fp8RankAtPercentile(2, 50), std::int64_t(0));
        QCOMPARE(core::fp8RankAtPercentile(1, 50), std::int64_t(0));
    }

    // --- The document: every input is saved and undoable, the block size follows the columns.

    void widgetOnlyInputsAreInTheDocumentAndUndoable_data()
    {
        QTest::addColumn<QString>("key");
        QTest::newRow("format") << "fp8.format";
        QTest::newRow("overflow") << "fp8.overflow";
        QTest::newRow("block size") << "fp8.block_size";
        QTest::newRow("shown block") << "fp8.shown_block";
    }

    void widgetOnlyInputsAreInTheDocumentAndUndoable()
    {
        QFETCH(QString, key);
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        const core::Scenario before = tab.document()->scenario();
        const auto moved = [&] {
            return !(tab.document()->scenario() == before);
        };
        if (key == "fp8.shown_block") {
            tab.control(key)->setValue(90);
            QCOMPARE(tab.document()->scenario().fp8Display.shownBlock, 90.0);
        } else {
            QComboBox* box = combo(tab, qPrintable(key));
            QVERIFY(box);
            const int index = key == "fp8.block_size" ? indexOfData(box, 64) : 1;
            box->setCurrentIndex(index);
            if (key == "fp8.format")
                QCOMPARE(tab.document()->scenario().fp8.format, core::Fp8Format::E5M2);
            else if (key == "fp8.overflow")
                QCOMPARE(tab.document()->scenario().fp8.overflow, core::Fp8Overflow::NaN);
            else
                QCOMPARE(tab.document()->scenario().fp8.blockSize, std::int64_t(64));
        }
        QVERIFY(moved());
        settle(tab, kWorkerTimeoutMs);
        checkAgainstCore(tab);
        // One undo step brings the document and the control back.
        tab.document()->undoStack()->undo();
        QVERIFY(!moved());
        if (key == "fp8.shown_block")
            QCOMPARE(tab.control(key)->value(), 50.0);
        else if (key == "fp8.block_size")
            QCOMPARE(combo(tab, "fp8.block_size")->currentData().toLongLong(), 16);
        else
            QCOMPARE(combo(tab, qPrintable(key))->currentIndex(), 0);
        settle(tab, kWorkerTimeoutMs);
        checkAgainstCore(tab);
    }

    void aSituationIsOneUndoStep()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        const core::Scenario before = tab.document()->scenario();
        choosePreset(tab, "Chapter's 1 x 8 example");
        QVERIFY(tab.inputs().values);
        QCOMPARE(tab.document()->undoStack()->count(), 1);
        tab.document()->undoStack()->undo();
        QVERIFY(tab.document()->scenario() == before);
        QCOMPARE(combo(tab, "fp8.preset")->currentIndex(), 0);
        QCOMPARE(offered(combo(tab, "fp8.block_size")),
                 (QList<qlonglong>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
        QVERIFY(tab.control("fp8.rows")->isEnabled());
        settle(tab, kWorkerTimeoutMs);
        checkAgainstCore(tab);
    }

    void blockSizeFollowsTheColumnsWithoutWidgets()
    {
        using document::normalizeSection;
        const document::Field* cols = document::findField(u"fp8.cols");
        const document::Field* block = document::findField(u"fp8.block_size");
        QVERIFY(cols && block);
        const auto edit = [](const core::Scenario& s, const document::Field* f, double v) {
            core::Scenario after = s;
            f->set(after, v);
            normalizeSection(s, after, core::Section::Fp8, f);
            return after;
        };
        core::Scenario s;
        s = edit(s, block, 64);
        QCOMPARE(s.fp8.blockSize, std::int64_t(64));
        QCOMPARE(s.fp8Display.preferredBlockSize, std::int64_t(0));
        // 100 columns: the largest divisor below 64, with 64 remembered.
        s = edit(s, cols, 100);
        QCOMPARE(s.fp8.blockSize, std::int64_t(50));
        QCOMPARE(s.fp8Display.preferredBlockSize, std::int64_t(64));
        // Through a prime and back: the choice comes back and is no longer held.
        s = edit(s, cols, 97);
        QCOMPARE(s.fp8.blockSize, std::int64_t(1));
        s = edit(s, cols, 256);
        QCOMPARE(s.fp8.blockSize, std::int64_t(64));
        QCOMPARE(s.fp8Display.preferredBlockSize, std::int64_t(0));
        // A block size chosen while held is the new choice.
        s = edit(s, cols, 100);
        s = edit(s, block, 10);
        QCOMPARE(s.fp8Display.preferredBlockSize, std::int64_t(0));
        s = edit(s, cols, 256);
        QCOMPARE(s.fp8.blockSize, std::int64_t(8));
        // Other edits leave a size that divides nothing alone, for core to refuse by name.
        s.fp8.blockSize = 3;
        s = edit(s, document::findField(u"fp8.seed"), 5);
        QCOMPARE(s.fp8.blockSize, std::int64_t(3));
        // Explicit values bring their own columns; dropping them brings the generated ones.
        core::Scenario chapter = s;
        chapter.fp8.blockSize = 4;
        chapter.fp8.values = core::MatrixF::Ones(1, 8);
        normalizeSection(s, chapter, core::Section::Fp8, nullptr);
        QCOMPARE(chapter.fp8.blockSize, std::int64_t(4)); // chosen by the edit itself
        core::Scenario generated = chapter;
        generated.fp8.values.reset();
        normalizeSection(chapter, generated, core::Section::Fp8, nullptr);
        QCOMPARE(generated.fp8.blockSize, std::int64_t(4)); // 4 divides 256 too
        generated.fp8.cols = 250;
        core::Scenario fewer = generated;
        normalizeSection(generated, fewer, core::Section::Fp8, nullptr);
        QCOMPARE(fewer.fp8.blockSize, std::int64_t(4)); // no column change: nothing to do
    }

    void aColumnEditAndItsBlockSizeAreOneUndoStep()
    {
        Fp8Tab tab;
        settle(tab, kWorkerTimeoutMs);
        QComboBox* box = combo(tab, "fp8.block_size");
        box->setCurrentIndex(indexOfData(box, 64));
        tab.document()->undoStack()->clear(); // the block size chosen long ago
        tab.control("fp8.cols")->setValue(100);
        QCOMPARE(tab.inputs().blockSize, std::int64_t(50));
        QCOMPARE(box->currentData().toLongLong(), 50);
        tab.document()->undoStack()->undo();
        QCOMPARE(tab.inputs().cols, std::int64_t(256));
        QCOMPARE(tab.inputs().blockSize, std::int64_t(64));
        QCOMPARE(box->currentData().toLongLong(), 64);
        QCOMPARE(offered(box), (QList<qlonglong>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
    }

    void displayInputsGoThroughAScenarioFile()
    {
        // What the tab's widgets set is saved and read back; the remembered block size is not
        // (it is the memory of an edit, and a file's block size is the choice).
        Fp8Tab tab;
        tab.control("fp8.shown_block")->setValue(75);
        combo(tab, "fp8.overflow")->setCurrentIndex(1);
        combo(tab, "fp8.format")->setCurrentIndex(1);
        QComboBox* box = combo(tab, "fp8.block_size");
        box->setCurrentIndex(indexOfData(box, 64));
        tab.document()->undoStack()->clear(); // the block size chosen long ago
        tab.control("fp8.cols")->setValue(100);
        const core::Scenario& s = tab.document()->scenario();
        QCOMPARE(s.fp8Display.preferredBlockSize, std::int64_t(64));
        const QJsonObject json = document::scenarioToJson(s);
        const QJsonObject fp8 = json.value("fp8").toObject();
        QCOMPARE(fp8.value("overflow").toString(), QString("nan"));
        QCOMPARE(fp8.value("format").toString(), QString("e5m2"));
        QCOMPARE(fp8.value("shown_block").toDouble(), 75.0);
        QCOMPARE(fp8.value("block_size").toInteger(), qint64(50));
        QVERIFY(!fp8.contains("preferred_block_size"));
        const core::Scenario back = document::scenarioFromJson(json);
        QCOMPARE(back.fp8, s.fp8);
        QCOMPARE(back.fp8Display.shownBlock, 75.0);
        QCOMPARE(back.fp8Display.preferredBlockSize, std::int64_t(0));
        // A fresh tab on the file shows every control as it was.
        Fp8Tab fresh;
        fresh.setScenario(back);
        QCOMPARE(fresh.control("fp8.shown_block")->value(), 75.0);
        QCOMPARE(combo(fresh, "fp8.overflow")->currentIndex(), 1);
        QCOMPARE(combo(fresh, "fp8.format")->currentIndex(), 1);
        QCOMPARE(combo(fresh, "fp8.block_size")->currentData().toLongLong(), 50);
        QCOMPARE(fresh.control("fp8.cols")->wholeValue(), std::int64_t(100));
    }

    void tileNotesNameTheCut()
    {
        QCOMPARE(Fp8Tab::tileNote(core::Fp8Tiling{}, 64, 256), QString());
        core::Fp8Tiling t{128, 128, 100, 96, 100, 96, false};
        QCOMPARE(Fp8Tab::tileNote(t, 100, 96),
                 QString("128 x 128 does not divide 100 x 96: tiles of 100 x 96"));
        core::Fp8Tiling mx{1, 32, 1, 32, 1, 4, false};
        QCOMPARE(Fp8Tab::tileNote(mx, 64, 100),
                 QString("1 x 32 does not divide 64 x 100: tiles of 1 x 32, the last ones 1 x 4"));
        QCOMPARE(Fp8Tab::granularityName(Fp8Tab::kChapterRow, 16), QString("1 x 16 (chapter)"));
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
