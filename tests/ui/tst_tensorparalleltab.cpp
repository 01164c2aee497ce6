// The tensor-parallel tab: the picture shows core's shards, the error chart the real MLP's
// max |sharded - unsharded| in float64 and float32, the cost chart core's per-rank figures.

#include "chartexport.h"
#include "chartpanel.h"
#include "explanationpanel.h"
#include "fields.h"
#include "format.h"
#include "parametercontrol.h"
#include "scalelab/core/collectives.h"
#include "scalelab/core/tensor_parallel.h"
#include "scenariodocument.h"
#include "scenariojson.h"
#include "shardingpanel.h"
#include "tensorparallelsweep.h"
#include "tensorparalleltab.h"
#include "testhelpers.h"

#include <QChart>
#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QJsonObject>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QScatterSeries>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace scalelab;
using namespace scalelab::ui;
using namespace scalelab::test;
using Split = core::MlpSplit;

namespace {

/// Debug builds of Eigen are slow; the worker's result still comes, only later.
constexpr int kWorkerTimeoutMs = 60000;

core::TensorParallelInputs withRanks(core::TensorParallelInputs in, std::int64_t ranks)
{
    in.ranks = ranks;
    return in;
}

/// Each sample of `errors` is core's figure for its rank count, bit for bit.
void checkSweepAgainstCore(const ErrorSweep& errors, const core::TensorParallelInputs& in,
                           Split split)
{
    const core::MlpWeights w =
        core::makeMlpWeights(in.tokens, in.dModel, in.dFf, static_cast<std::uint64_t>(in.seed));
    const core::MlpWeightsF f = core::toFloat(w);
    const Eigen::MatrixXd y = core::mlp(w);
    const Eigen::MatrixXf yf = core::mlp(f);
    QCOMPARE(errors.outputMagnitude, y.cwiseAbs().maxCoeff());
    for (const ErrorSample& s : errors.samples) {
        QVERIFY(s.float64 == core::computeTensorParallel(withRanks(in, s.ranks)).maxAbsDifference);
        QVERIFY(s.float32 == core::maxAbsDifference(core::tensorParallelMlp(f, s.ranks), yf));
        QCOMPARE(s.wrong.has_value(), split != Split::Correct);
        if (s.wrong) {
            const core::WrongSplit wrong = split == Split::W2ByColumns
                ? core::WrongSplit::W2ByColumns
                : core::WrongSplit::W1ByRows;
            QVERIFY(*s.wrong == core::maxAbsDifference(core::wrongSplitMlp(w, s.ranks, wrong), y));
        }
    }
}

void chooseSplit(TensorParallelTab& tab, Split split)
{
    auto* box = tab.findChild<QComboBox*>("tensor_parallel.split");
    QVERIFY(box);
    box->setCurrentIndex(static_cast<int>(split));
}

} // namespace

class TstTensorParallelTab : public QObject {
    Q_OBJECT

private:
    /// Every figure the tab shows against core, for its current inputs.
    void checkAgainstCore(TensorParallelTab& tab)
    {
        checkPicture(tab);
        if (!QTest::currentTestFailed())
            checkErrorChart(tab);
        if (!QTest::currentTestFailed())
            checkCostChart(tab);
    }

    /// The picture: W1's column shards, H's, W2's row shards are core's array_split.
    void checkPicture(TensorParallelTab& tab)
    {
        const core::TensorParallelInputs in = tab.inputs();
        const std::vector<std::int64_t> hidden = core::arraySplitSizes(in.dFf, in.ranks);
        const ShardingPanel::Picture& p = tab.shardingChart()->picture();
        QCOMPARE(p.blocks.size(), std::size_t(6));
        QCOMPARE(p.ranks, in.ranks);
        if (tab.split() == Split::Correct) {
            QCOMPARE(p.blocks[1].shards, hidden);
            QCOMPARE(p.blocks[1].rows, in.dModel);
            QCOMPARE(p.blocks[1].cols, in.dFf);
            QCOMPARE(p.blocks[2].shards, hidden);
            QCOMPARE(p.blocks[3].shards, hidden);
            QCOMPARE(p.blocks[3].split, ShardingPanel::Split::Rows);
            QCOMPARE(p.blocks[4].items, in.ranks);
            QCOMPARE(p.blocks[4].rows, in.tokens);
            QCOMPARE(p.blocks[4].cols, in.dModel);
        }
    }

    /// The error chart: each sample is the real MLP's error, exactly as core computes it
    /// (float64 exactly as `scalelab report` computes max_abs_difference).
    void checkErrorChart(TensorParallelTab& tab)
    {
        const core::TensorParallelInputs in = tab.inputs();
        const auto& samples = tab.errorSamples();
        QVERIFY(!samples.empty());
        QCOMPARE(samples.front().ranks, std::int64_t(1));
        QCOMPARE(samples.back().ranks, in.ranks);
        const core::MlpWeights w =
            core::makeMlpWeights(in.tokens, in.dModel, in.dFf, static_cast<std::uint64_t>(in.seed));
        const core::MlpWeightsF f = core::toFloat(w);
        const Eigen::MatrixXd y = core::mlp(w);
        const Eigen::MatrixXf yf = core::mlp(f);
        QCOMPARE(tab.outputMagnitude(), y.cwiseAbs().maxCoeff());
        QChart* chart = tab.errorChart()->chart();
        auto* f64 = seriesNamed<QLineSeries>(chart, "float64");
        auto* f32 = seriesNamed<QLineSeries>(chart, "float32");
        auto* zeros = seriesNamed<QScatterSeries>(chart, "Exactly 0");
        QVERIFY(f64 && f32 && zeros);
        const auto* axis = qobject_cast<QLogValueAxis*>(chart->axes(Qt::Vertical).first());
        QVERIFY(axis);
        const QList<QPointF> p64 = f64->points(), p32 = f32->points(), p0 = zeros->points();
        // Zeros sit in the middle of the lowest band of the log axis.
        const double zeroAt = axis->min() * std::sqrt(axis->base());
        for (std::size_t i = 0; i < samples.size(); ++i) {
            const auto& s = samples[i];
            if (i > 0)
                QVERIFY(s.ranks > samples[i - 1].ranks);
            // Bit for bit: the same computation, not merely a close one.
            QVERIFY(s.float64
                    == core::computeTensorParallel(withRanks(in, s.ranks)).maxAbsDifference);
            QVERIFY(s.float32 == core::maxAbsDifference(core::tensorParallelMlp(f, s.ranks), yf));
            const auto x = double(s.ranks);
            QVERIFY(s.float64 > 0 ? p64.contains(QPointF(x, s.float64))
                                  : p0.contains(QPointF(x, zeroAt)));
            QVERIFY(s.float32 > 0 ? p32.contains(QPointF(x, s.float32))
                                  : p0.contains(QPointF(x, zeroAt)));
            // Every positive value lies above the band kept for zeros.
            for (double v : {s.float64, s.float32})
                QVERIFY(v == 0 || v >= axis->min() * axis->base());
            // Rounding only: float64 near 1e-15, float32 near 1e-6, for order-one outputs.
            QVERIFY(s.float64 < 1e-12);
            QVERIFY(s.float32 < 1e-4);
        }
        qsizetype n64 = 0, n32 = 0, n0 = 0;
        for (const auto& s : samples) {
            n64 += s.float64 > 0;
            n32 += s.float32 > 0;
            n0 += (s.float64 == 0) + (s.float32 == 0) + (s.wrong && *s.wrong == 0);
        }
        QCOMPARE(p64.size(), n64);
        QCOMPARE(p32.size(), n32);
        QCOMPARE(p0.size(), n0);
        const auto& last = samples.back();
        const double live = tab.split() != Split::Correct ? *last.wrong
            : tab.float32()                               ? last.float32
                                                          : last.float64;
        QVERIFY(tab.currentDifference());
        QCOMPARE(*tab.currentDifference(), live);
        QVERIFY2(tab.figuresLabel()->text().contains(live == 0 ? QString("exactly 0")
                                                               : formatNumber(live, 3)),
                 qPrintable(tab.figuresLabel()->text()));
    }

    /// The cost chart: rank 0's figures for every rank count 1..ranks.
    void checkCostChart(TensorParallelTab& tab)
    {
        const core::TensorParallelInputs in = tab.inputs();
        const std::vector<core::TensorParallelRankCost> costs = core::widestRankCosts(in);
        QChart* cost = tab.costChart()->chart();
        auto* params = seriesNamed<QLineSeries>(cost, "Parameters");
        auto* acts = seriesNamed<QLineSeries>(cost, "Activations");
        auto* reduce = seriesNamed<QLineSeries>(cost, "All-reduce");
        auto* macs = seriesNamed<QLineSeries>(cost, "Multiply-adds");
        QVERIFY(params && acts && reduce && macs);
        QCOMPARE(params->count(), qsizetype(in.ranks));
        const double bytes = tab.costBytesUnit(), count = tab.costCountUnit();
        for (std::int64_t n = 1; n <= in.ranks; ++n) {
            const core::TensorParallelRankCost& c = costs[std::size_t(n - 1)];
            const auto i = qsizetype(n - 1);
            QCOMPARE(params->at(i), QPointF(double(n), double(c.parameterBytes) / bytes));
            QCOMPARE(acts->at(i), QPointF(double(n), double(c.activationBytes) / bytes));
            QCOMPARE(reduce->at(i), QPointF(double(n), c.allReduceBytes.value() / bytes));
            QCOMPARE(macs->at(i), QPointF(double(n), double(c.multiplyAdds) / count));
        }
        const core::TensorParallelRankCost here = core::tensorParallelRankCost(in, 0);
        QVERIFY2(tab.figuresLabel()->text().contains(formatWhole(here.parameters)),
                 qPrintable(tab.figuresLabel()->text()));
    }

private slots:
    void opensOnTheDefaults()
    {
        TensorParallelTab tab;
        // At the default sizes the error takes microseconds: computed in place, not pending.
        QVERIFY(!tab.refreshPending());
        const core::TensorParallelInputs d;
        QCOMPARE(tab.inputs().tokens, d.tokens);
        QCOMPARE(tab.inputs().dModel, d.dModel);
        QCOMPARE(tab.inputs().dFf, d.dFf);
        QCOMPARE(tab.inputs().ranks, d.ranks);
        QCOMPARE(tab.errorSamples().size(), std::size_t(4)); // every rank count 1..4
        checkAgainstCore(tab);
        // The explanation substitutes today's numbers, the report's float64 figure among them.
        QVERIFY(tab.explanation());
        const QString html = tab.explanation()->html();
        QVERIFY2(!html.contains("{{"), qPrintable(html));
        QVERIFY(html.contains("widths 16, 16, 16, 16"));
        QVERIFY(html.contains(formatNumber(core::computeTensorParallel(d).maxAbsDifference, 3)));
        QVERIFY(html.contains("<b>384 bytes</b>"));
    }

    void keyPressesOnASliderChangeTheScenarioAndTheCharts_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("qtKey");
        QTest::newRow("ranks, right") << "tensor_parallel.ranks" << int(Qt::Key_Right);
        QTest::newRow("ranks, end") << "tensor_parallel.ranks" << int(Qt::Key_End);
        QTest::newRow("ranks, page up") << "tensor_parallel.ranks" << int(Qt::Key_PageUp);
        QTest::newRow("d_ff, page down") << "tensor_parallel.d_ff" << int(Qt::Key_PageDown);
        QTest::newRow("tokens, page up") << "tensor_parallel.tokens" << int(Qt::Key_PageUp);
        QTest::newRow("d_model, page down") << "tensor_parallel.d_model" << int(Qt::Key_PageDown);
        QTest::newRow("bytes, right") << "tensor_parallel.bytes_per_value" << int(Qt::Key_Right);
        QTest::newRow("seed, right") << "tensor_parallel.seed" << int(Qt::Key_Right);
    }

    void keyPressesOnASliderChangeTheScenarioAndTheCharts()
    {
        QFETCH(QString, key);
        QFETCH(int, qtKey);
        TensorParallelTab tab;
        tab.resize(1500, 950);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        settle(tab, kWorkerTimeoutMs);
        ParameterControl* control = tab.control(key);
        QVERIFY(control);
        const double before = control->value();
        const core::TensorParallelInputs old = tab.document()->scenario().tensorParallel;
        control->slider()->setFocus();
        QTest::keyClick(control->slider(), Qt::Key(qtKey));
        QVERIFY(control->value() != before);
        settle(tab, kWorkerTimeoutMs);
        const core::TensorParallelInputs& now = tab.document()->scenario().tensorParallel;
        QVERIFY(!(
            std::tie(now.tokens, now.dModel, now.dFf, now.ranks, now.bytesPerValue, now.seed)
            == std::tie(old.tokens, old.dModel, old.dFf, old.ranks, old.bytesPerValue, old.seed)));
        checkAgainstCore(tab);
    }

    void ranksFollowTheHiddenWidth()
    {
        TensorParallelTab tab;
        tab.control("tensor_parallel.d_ff")->setValue(10);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.control("tensor_parallel.ranks")->spec().maximum, 10.0);
        QCOMPARE(tab.inputs().ranks, std::int64_t(4));
        // Uneven: array_split gives the first two ranks one column more.
        QCOMPARE(tab.shardingChart()->picture().blocks[1].shards,
                 (std::vector<std::int64_t>{3, 3, 2, 2}));
        checkAgainstCore(tab);
        tab.control("tensor_parallel.d_ff")->setValue(3);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.inputs().ranks, std::int64_t(3)); // clamped to the hidden width
        checkAgainstCore(tab);
    }

    void wrongSplitMissesByTheOutputsSize_data()
    {
        QTest::addColumn<int>("split");
        QTest::newRow("W2 by columns") << int(Split::W2ByColumns);
        QTest::newRow("W1 by rows") << int(Split::W1ByRows);
    }

    void wrongSplitMissesByTheOutputsSize()
    {
        QFETCH(int, split);
        const auto mode = Split(split);
        TensorParallelTab tab;
        settle(tab, kWorkerTimeoutMs);
        const QString matchingText = tab.explanationLabel()->text();
        chooseSplit(tab, mode);
        QCOMPARE(tab.split(), mode);
        settle(tab, kWorkerTimeoutMs);
        checkAgainstCore(tab);

        const core::TensorParallelInputs in = tab.inputs();
        const core::MlpWeights w =
            core::makeMlpWeights(in.tokens, in.dModel, in.dFf, static_cast<std::uint64_t>(in.seed));
        const Eigen::MatrixXd y = core::mlp(w);
        const core::WrongSplit wrong =
            mode == Split::W2ByColumns ? core::WrongSplit::W2ByColumns : core::WrongSplit::W1ByRows;
        auto* series = seriesNamed<QLineSeries>(tab.errorChart()->chart(), "Wrong");
        QVERIFY(series && series->isVisible());
        for (const auto& s : tab.errorSamples()) {
            QVERIFY(s.wrong);
            QVERIFY(*s.wrong == core::maxAbsDifference(core::wrongSplitMlp(w, s.ranks, wrong), y));
            if (s.ranks == 1) {
                QVERIFY(*s.wrong < 1e-12); // one rank: nothing is split
            } else {
                // Not rounding: of the order of the output itself.
                QVERIFY2(*s.wrong > 0.1 * tab.outputMagnitude(),
                         qPrintable(QString("%1 vs %2").arg(*s.wrong).arg(tab.outputMagnitude())));
                QVERIFY(series->points().contains(QPointF(double(s.ranks), *s.wrong)));
                QVERIFY(*s.wrong <= tab.errorChart()
                                        ->chart()
                                        ->axes(Qt::Vertical)
                                        .first()
                                        ->property("max")
                                        .toDouble());
            }
        }
        QVERIFY(*tab.currentDifference() > 0.1 * tab.outputMagnitude());
        QVERIFY(tab.figuresLabel()->text().contains("Wrong split"));
        // The sentence says why: GELU and whole features (or the missing hidden values).
        const QString why = tab.explanationLabel()->text();
        QVERIFY(why != matchingText);
        QVERIFY(why.contains(mode == Split::W1ByRows ? "GELU(a + b)" : "H<sub>r</sub>"));
        // The picture shows the wrong split.
        const ShardingPanel::Picture& p = tab.shardingChart()->picture();
        if (mode == Split::W2ByColumns) {
            QCOMPARE(p.blocks[3].split, ShardingPanel::Split::BlockDiagonal);
            QCOMPARE(p.blocks[3].columnShards, core::arraySplitSizes(in.dModel, in.ranks));
        } else {
            QCOMPARE(p.blocks[1].split, ShardingPanel::Split::Rows);
            QCOMPARE(p.blocks[1].shards, core::arraySplitSizes(in.dModel, in.ranks));
        }

        chooseSplit(tab, Split::Correct);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(!series->isVisible());
        QVERIFY(*tab.currentDifference() < 1e-12);
        QCOMPARE(tab.explanationLabel()->text(), matchingText);
    }

    void precisionSwitchChangesTheLiveFigure()
    {
        TensorParallelTab tab;
        settle(tab, kWorkerTimeoutMs);
        auto* box = tab.findChild<QComboBox*>("tensor_parallel.precision");
        QVERIFY(box);
        box->setCurrentIndex(1);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(tab.float32());
        QVERIFY(tab.figuresLabel()->text().contains("in float32"));
        checkAgainstCore(tab);
        // Float32 rounding is coarser by orders of magnitude than float64.
        QVERIFY(*tab.currentDifference() > 1e3 * tab.errorSamples().back().float64);
    }

    void aBiggerLayerStillMatchesCore()
    {
        // Large enough that Eigen's blocked matrix products (not its small-size path) run.
        core::Scenario s;
        s.tensorParallel.tokens = 96;
        s.tensorParallel.dModel = 160;
        s.tensorParallel.dFf = 600;
        s.tensorParallel.ranks = 7;
        TensorParallelTab tab;
        tab.setScenario(s);
        tab.refreshNow();
        // The picture and the cost follow at once; the error follows from the worker thread.
        QVERIFY(tab.refreshPending());
        QCOMPARE(tab.shardingChart()->picture().blocks[1].cols, std::int64_t(600));
        auto* params = seriesNamed<QLineSeries>(tab.costChart()->chart(), "Parameters");
        QVERIFY(params);
        QCOMPARE(params->count(), 7);
        settle(tab, kWorkerTimeoutMs);
        checkAgainstCore(tab);
    }

    void aStaleResultNeverOverwritesANewerOne()
    {
        // A large request goes to the worker; before it is done the inputs shrink again and
        // the small result is computed in place. The large one must not land on top of it.
        TensorParallelTab tab;
        core::Scenario big;
        big.tensorParallel.tokens = 96;
        big.tensorParallel.dModel = 160;
        big.tensorParallel.dFf = 600;
        tab.setScenario(big);
        tab.refreshNow();
        QVERIFY(tab.refreshPending());
        tab.setScenario(core::Scenario{});
        tab.refreshNow();
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.inputs().dFf, std::int64_t(64));
        checkAgainstCore(tab);
    }

    void refusedInputKeepsItsMessage()
    {
        TensorParallelTab tab;
        settle(tab, kWorkerTimeoutMs);
        const auto before = tab.errorSamples().size();
        // 4096 tokens x 32768 hidden values is more than core accepts in one matrix.
        tab.control("tensor_parallel.d_ff")->setValue(32768);
        tab.control("tensor_parallel.tokens")->setValue(4096);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(tab.messageLabel()->isVisibleTo(&tab));
        QVERIFY2(tab.messageLabel()->text().startsWith("tensor_parallel.tokens"),
                 qPrintable(tab.messageLabel()->text()));
        QCOMPARE(tab.errorSamples().size(), before); // the last good charts stay
        tab.control("tensor_parallel.tokens")->setValue(8);
        tab.control("tensor_parallel.d_ff")->setValue(64);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(!tab.messageLabel()->isVisibleTo(&tab));
        checkAgainstCore(tab);
    }

    void scenarioValuesBeyondTheSliderAreKept()
    {
        core::Scenario s;
        s.tensorParallel.dFf = 40000; // the slider stops at 32768; a file may ask for more
        s.tensorParallel.ranks = 35000;
        TensorParallelTab tab;
        tab.setScenario(s);
        const core::Scenario& back = tab.document()->scenario();
        QCOMPARE(back.tensorParallel.dFf, std::int64_t(40000));
        QCOMPARE(back.tensorParallel.ranks, std::int64_t(35000));
    }

    // The split and the precision were combo boxes only; now they are scenario inputs: saved,
    // opened and undone like the sliders.
    void splitAndPrecisionAreScenarioInputs_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("index");
        QTest::addColumn<QString>("json");
        QTest::newRow("split, W2 by columns") << "tensor_parallel.split" << 1 << "w2_columns";
        QTest::newRow("split, W1 by rows") << "tensor_parallel.split" << 2 << "w1_rows";
        QTest::newRow("precision, float32") << "tensor_parallel.precision" << 1 << "float32";
    }

    void splitAndPrecisionAreScenarioInputs()
    {
        QFETCH(QString, key);
        QFETCH(int, index);
        QFETCH(QString, json);
        TensorParallelTab tab;
        settle(tab, kWorkerTimeoutMs);
        auto* box = tab.findChild<QComboBox*>(key);
        QVERIFY(box);
        QCOMPARE(box->currentIndex(), 0);
        const core::Scenario before = tab.document()->scenario();
        box->setCurrentIndex(index);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.document()->value(key), double(index));
        QVERIFY(!(tab.document()->scenario() == before));
        checkAgainstCore(tab);

        // Saved under its key in the scenario file and read back to the same scenario.
        const QJsonObject object = document::scenarioToJson(tab.document()->scenario());
        QCOMPARE(object["tensor_parallel"].toObject()[key.section('.', 1)].toString(), json);
        QVERIFY(document::scenarioFromJson(object) == tab.document()->scenario());
        // A view opened on that document shows it.
        TensorParallelTab other(tab.document());
        QCOMPARE(other.findChild<QComboBox*>(key)->currentIndex(), index);

        // One undo step brings the box, the scenario and the charts back.
        QCOMPARE(tab.document()->undoStack()->count(), 1);
        tab.document()->undoStack()->undo();
        QCOMPARE(box->currentIndex(), 0);
        QCOMPARE(other.findChild<QComboBox*>(key)->currentIndex(), 0);
        QVERIFY(tab.document()->scenario() == before);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.split(), Split::Correct);
        QVERIFY(!tab.float32());
        checkAgainstCore(tab);
        tab.document()->undoStack()->redo();
        QCOMPARE(box->currentIndex(), index);
    }

    void oneSliderDragIsOneUndoStep()
    {
        TensorParallelTab tab;
        ParameterControl* ranks = tab.control("tensor_parallel.ranks");
        for (int n : {5, 6, 7, 8})
            ranks->setValue(n);
        QCOMPARE(tab.inputs().ranks, std::int64_t(8));
        QCOMPARE(tab.document()->undoStack()->count(), 1);
        tab.document()->undoStack()->undo();
        QCOMPARE(tab.inputs().ranks, std::int64_t(4));
        QCOMPARE(ranks->value(), 4.0);
    }

    // The section's rule, without widgets: ranks never pass the hidden width.
    void ranksNeverPassTheHiddenWidth()
    {
        const document::Field* dFf = document::findField(u"tensor_parallel.d_ff");
        const document::Field* ranks = document::findField(u"tensor_parallel.ranks");
        QVERIFY(dFf && ranks);
        const core::Scenario before;
        core::Scenario after = before;
        after.tensorParallel.dFf = 3;
        after.tensorParallelDisplay.split = Split::W1ByRows;
        document::normalizeSection(before, after, core::Section::TensorParallel, dFf);
        QCOMPARE(after.tensorParallel.ranks, std::int64_t(3));
        QCOMPARE(after.tensorParallelDisplay.split, Split::W1ByRows); // the split is free
        QCOMPARE(ranks->maximumIn(after), 3.0);
        // A wider hidden layer leaves the ranks alone and widens their range, past the slider
        // of d_ff itself (a file may ask for more).
        after.tensorParallel.dFf = 40000;
        after.tensorParallel.ranks = 35000;
        document::normalizeSection(before, after, core::Section::TensorParallel, dFf);
        QCOMPARE(after.tensorParallel.ranks, std::int64_t(35000));
        QCOMPARE(ranks->maximumIn(after), 40000.0);

        // Through the document: the clamp is part of the edit, and one undo takes both back.
        document::ScenarioDocument doc;
        QVERIFY(doc.setValue("tensor_parallel.d_ff", 3));
        QCOMPARE(doc.scenario().tensorParallel.ranks, std::int64_t(3));
        doc.undoStack()->undo();
        QCOMPARE(doc.scenario().tensorParallel.dFf, std::int64_t(64));
        QCOMPARE(doc.scenario().tensorParallel.ranks, std::int64_t(4));
    }

    // The error sweep without a tab: core's figures, a cache per weights, the newest request.
    void sweepGivesCoresFigures_data()
    {
        QTest::addColumn<int>("split");
        QTest::newRow("correct") << int(Split::Correct);
        QTest::newRow("W2 by columns") << int(Split::W2ByColumns);
        QTest::newRow("W1 by rows") << int(Split::W1ByRows);
    }

    void sweepGivesCoresFigures()
    {
        QFETCH(int, split);
        const auto mode = Split(split);
        core::TensorParallelInputs in;
        in.dFf = 30;
        in.ranks = 6;
        TensorParallelSweep sweep;
        const TensorParallelSweep::Job job = sweep.request(in, mode);
        QCOMPARE(job.counts(),
                 core::sampleRankCounts(in.ranks, TensorParallelSweep::maxSamples(in, mode)));
        const double all = job.missingWork();
        QVERIFY(all > 0);
        const std::optional<ErrorSweep> errors = job.run();
        QVERIFY(errors);
        QCOMPARE(errors->samples.size(), job.counts().size());
        for (std::size_t i = 0; i < job.counts().size(); ++i)
            QCOMPARE(errors->samples[i].ranks, job.counts()[i]);
        checkSweepAgainstCore(*errors, in, mode);

        // Fewer ranks on the same weights: all known, nothing to compute, done in place, and the
        // same figures.
        const TensorParallelSweep::Job again = sweep.request(withRanks(in, 3), mode);
        QCOMPARE(again.missingWork(), 0.0);
        QVERIFY(again.runsInline());
        QVERIFY(!sweep.isCurrent(job.generation()));
        QVERIFY(sweep.isCurrent(again.generation()));
        const std::optional<ErrorSweep> fewer = again.run();
        QVERIFY(fewer);
        for (const ErrorSample& s : fewer->samples)
            QVERIFY(std::find(errors->samples.begin(), errors->samples.end(), s)
                    != errors->samples.end());
        // Another seed is other weights: everything again.
        core::TensorParallelInputs reseeded = in;
        reseeded.seed = 2;
        QCOMPARE(sweep.request(reseeded, mode).missingWork(), all);
    }

    void sweepKeepsTheFiguresOfEarlierWeights()
    {
        // A size stepped back and forth (tokens 8, 9, 8): the second visit computes nothing,
        // builds no weights, and shows what the first showed.
        core::TensorParallelInputs in;
        in.tokens = 8;
        core::TensorParallelInputs other = in;
        other.tokens = 9;
        TensorParallelSweep sweep;
        const TensorParallelSweep::Job first = sweep.request(in, Split::Correct);
        const double all = first.missingWork();
        const std::optional<ErrorSweep> before = first.run();
        QVERIFY(before);
        QVERIFY(sweep.request(other, Split::Correct).run());
        const TensorParallelSweep::Job back = sweep.request(in, Split::Correct);
        QCOMPARE(back.missingWork(), 0.0);
        const std::optional<ErrorSweep> again = back.run();
        QVERIFY(again);
        QCOMPARE(again->samples, before->samples);
        QCOMPARE(again->outputMagnitude, before->outputMagnitude);
        // A wrong split on those weights needs them again, and says so.
        QVERIFY(sweep.request(in, Split::W2ByColumns).missingWork() > 0);
        // Only the latest few weights are remembered.
        for (std::int64_t t = 10; t < 10 + std::int64_t(TensorParallelSweep::kRecentWeights) + 1;
             ++t) {
            core::TensorParallelInputs step = in;
            step.tokens = t;
            QVERIFY(sweep.request(step, Split::Correct).run());
        }
        QCOMPARE(sweep.request(in, Split::Correct).missingWork(), all);
    }

    void sweepKeepsWhatAnotherSplitComputed()
    {
        core::TensorParallelInputs in;
        TensorParallelSweep sweep;
        const TensorParallelSweep::Job wrong = sweep.request(in, Split::W1ByRows);
        const double all = wrong.missingWork();
        QVERIFY(wrong.run());
        // float64 and float32 are known; only the other wrong split is missing.
        const double other = sweep.request(in, Split::W2ByColumns).missingWork();
        QVERIFY(other > 0 && other < all);
        QCOMPARE(sweep.request(in, Split::Correct).missingWork(), 0.0);
    }

    void aSupersededSweepShowsNothing()
    {
        core::TensorParallelInputs in;
        TensorParallelSweep sweep;
        const TensorParallelSweep::Job first = sweep.request(in, Split::Correct);
        const TensorParallelSweep::Job second = sweep.request(withRanks(in, 2), Split::Correct);
        QVERIFY(!first.run()); // cancelled by the newer request
        QVERIFY(second.run());
        const TensorParallelSweep::Job third = sweep.request(in, Split::Correct);
        sweep.cancel(); // the inputs moved on (or the view is gone)
        QVERIFY(!third.run());
    }

    void sweepSamplesFewerRankCountsForBiggerLayers()
    {
        core::TensorParallelInputs in;
        QCOMPARE(TensorParallelSweep::maxSamples(in, Split::Correct), std::int64_t(64));
        in.tokens = 512;
        in.dModel = 1024;
        in.dFf = 4096;
        QCOMPARE(TensorParallelSweep::maxSamples(in, Split::Correct), std::int64_t(3));
        in.tokens = 64;
        in.dModel = 512;
        in.dFf = 2048;
        const std::int64_t correct = TensorParallelSweep::maxSamples(in, Split::Correct);
        const std::int64_t w2 = TensorParallelSweep::maxSamples(in, Split::W2ByColumns);
        const std::int64_t w1 = TensorParallelSweep::maxSamples(in, Split::W1ByRows);
        QVERIFY2(correct > w2 && w2 > w1 && w1 >= 3,
                 qPrintable(QString("%1 %2 %3").arg(correct).arg(w2).arg(w1)));
    }

    void errorAxisKeepsTheLowestBandForZeros_data()
    {
        QTest::addColumn<double>("float64");
        QTest::addColumn<double>("float32");
        QTest::addColumn<double>("wrong");
        QTest::addColumn<double>("output");
        QTest::newRow("rounding") << 1e-16 << 1e-7 << 0.0 << 2.0;
        QTest::newRow("few decades") << 0.0 << 1e-3 << 0.0 << 1.0;
        QTest::newRow("wrong split") << 2e-17 << 3e-8 << 0.7 << 1.5;
        QTest::newRow("all zero") << 0.0 << 0.0 << 0.0 << 0.0;
        QTest::newRow("tiny") << 1e-300 << 1e-200 << 0.0 << 1e10;
    }

    void errorAxisKeepsTheLowestBandForZeros()
    {
        QFETCH(double, float64);
        QFETCH(double, float32);
        QFETCH(double, wrong);
        QFETCH(double, output);
        ErrorSample s;
        s.ranks = 2;
        s.float64 = float64;
        s.float32 = float32;
        if (wrong > 0)
            s.wrong = wrong;
        const ErrorAxis axis = errorAxis({s}, output);
        QVERIFY(axis.base == 10 || axis.base == 100 || axis.base == 1000);
        QCOMPARE(axis.zeroAt, axis.min * std::sqrt(axis.base));
        for (double v : {float64, float32, wrong, output})
            if (v > 0) {
                // Above the zeros' band (up to the rounding of the powers of ten).
                QVERIFY2(v >= axis.min * axis.base * (1 - 1e-12), qPrintable(QString::number(v)));
                QVERIFY(v <= axis.max);
            }
    }

    void errorAxisExactly()
    {
        ErrorSample s;
        s.ranks = 1;
        s.float32 = 1e-3;
        const ErrorAxis axis = errorAxis({s}, 1.0);
        // 1e-3 .. 1: one decade a label, then one band below for the zero.
        QCOMPARE(axis.base, 10.0);
        QCOMPARE(axis.min, 1e-4);
        QCOMPARE(axis.max, 10.0);
        QCOMPARE(axis.zeroAt, std::pow(10.0, -3.5));
    }

    void liveDifferenceIsTheChosenFigure()
    {
        ErrorSample one{1, 1e-17, 1e-8, std::nullopt};
        ErrorSample four{4, 2e-16, 3e-7, std::nullopt};
        QCOMPARE(liveDifference({one, four}, 4, false), std::optional<double>(2e-16));
        QCOMPARE(liveDifference({one, four}, 4, true), std::optional<double>(3e-7));
        QCOMPARE(liveDifference({one, four}, 3, true), std::optional<double>());
        four.wrong = 0.5; // a wrong split's error, whatever the precision
        QCOMPARE(liveDifference({one, four}, 4, true), std::optional<double>(0.5));
        QCOMPARE(liveDifference({}, 1, false), std::optional<double>());
    }

    void labelsNeverOverlap_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("split");
        for (int r : {1, 4, 7, 16, 33, 300, 4096})
            for (Split s : {Split::Correct, Split::W2ByColumns, Split::W1ByRows})
                QTest::addRow("%d ranks, split %d", r, int(s)) << r << int(s);
    }

    void labelsNeverOverlap()
    {
        // Four-digit shapes make the widest labels; the canvas sizes run from an export down
        // to a narrow window.
        QFETCH(int, ranks);
        QFETCH(int, split);
        core::TensorParallelInputs in;
        in.tokens = 512;
        in.dModel = 1024;
        in.dFf = 4096;
        in.ranks = ranks;
        ShardingPanel panel("test-sharding");
        panel.setPicture(TensorParallelTab::shardingPicture(in, Split(split)));
        QCOMPARE(panel.picture().ranks, std::int64_t(ranks));
        for (const QSizeF size : {QSizeF(1000, 625), QSizeF(1100, 360), QSizeF(640, 330)}) {
            const QList<QRectF> blocks = panel.blockRects(size);
            const QList<QList<QRectF>> labels = panel.labelRects(size);
            const QRectF canvas(QPointF(0, 0), size);
            QCOMPARE(blocks.size(), 6);
            for (qsizetype i = 0; i < blocks.size(); ++i) {
                QVERIFY(blocks[i].width() > 0 && blocks[i].height() > 0);
                QVERIFY2(canvas.contains(blocks[i]),
                         qPrintable(QString("block %1 leaves the %2 x %3 canvas")
                                        .arg(i)
                                        .arg(size.width())
                                        .arg(size.height())));
                for (qsizetype j = 0; j < i; ++j) // one row or two, never on top of each other
                    QVERIFY(!blocks[i].intersects(blocks[j]));
                // Labels sit on their own block (the "⋮ n more" of a stack may be wider than
                // the stack), clear of each other and of every other block.
                const bool stack =
                    panel.picture().blocks[std::size_t(i)].split == ShardingPanel::Split::Stack;
                for (qsizetype a = 0; a < labels[i].size(); ++a) {
                    const QRectF& label = labels[i][a];
                    QVERIFY(stack ? canvas.contains(label) && label.top() >= blocks[i].top() - 1
                                    && label.bottom() <= blocks[i].bottom() + 1
                                  : blocks[i].adjusted(-1, -1, 1, 1).contains(label));
                    for (qsizetype b = a + 1; b < labels[i].size(); ++b)
                        QVERIFY(!label.intersects(labels[i][b]));
                    for (qsizetype j = 0; j < blocks.size(); ++j)
                        QVERIFY(j == i || !label.intersects(blocks[j]));
                }
            }
        }
        // Export at slide size for a look (SCALELAB_PNG_DIR).
        if (qEnvironmentVariableIsSet("SCALELAB_PNG_DIR") && (ranks == 16 || ranks == 4096)) {
            const QString path =
                QDir(qEnvironmentVariable("SCALELAB_PNG_DIR"))
                    .filePath(
                        QString("tensor_parallel-sharding-big-%1-%2.png").arg(ranks).arg(split));
            QCOMPARE(exportCharts({ExportJob{&panel, path, ImageFormat::Png, QSize(1600, 1000)}}),
                     QString());
            QImage narrow(QSize(640, 330), QImage::Format_RGB32);
            QPainter painter(&narrow);
            panel.render(painter, QRectF(0, 0, 640, 330));
            painter.end();
            narrow.save(QString(path).replace(".png", "-narrow.png"));
        }
    }

    void blocksAreColouredByRank()
    {
        TensorParallelTab tab;
        settle(tab, kWorkerTimeoutMs);
        ShardingPanel* panel = tab.shardingChart();
        const QSize size(1000, 625);
        QImage image(size, QImage::Format_RGB32);
        {
            QPainter painter(&image);
            panel->render(painter, QRectF(QPointF(0, 0), size));
        }
        const QList<QRectF> blocks = panel->blockRects(size);
        const auto& p = panel->picture();
        // W1 (columns), H (columns): stripe r in rank r's colour, just off its centre line so
        // the rank number does not get in the way; W2 (rows) likewise.
        for (int b : {1, 2, 3}) {
            const QRectF r = blocks[b];
            const bool cols = p.blocks[std::size_t(b)].split == ShardingPanel::Split::Columns;
            for (int rank = 0; rank < 4; ++rank) {
                const double t = (rank + 0.5) / 4.0;
                const QPointF at = cols ? QPointF(r.left() + t * r.width(), r.top() + 3)
                                        : QPointF(r.left() + 3, r.top() + t * r.height());
                QCOMPARE(QColor(image.pixel(at.toPoint())), rankColor(rank));
            }
        }
        QCOMPARE(rankColor(9), rankColor(2)); // seven colours, repeating
    }

    void exportsFillTheCanvas_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("dFf");
        QTest::addColumn<int>("split");
        QTest::newRow("defaults") << 4 << 64 << int(Split::Correct);
        QTest::newRow("uneven 7 of 10") << 7 << 10 << int(Split::Correct);
        QTest::newRow("16 ranks") << 16 << 64 << int(Split::Correct);
        QTest::newRow("W2 by columns") << 4 << 64 << int(Split::W2ByColumns);
        QTest::newRow("W1 by rows") << 16 << 64 << int(Split::W1ByRows);
    }

    void exportsFillTheCanvas()
    {
        QFETCH(int, ranks);
        QFETCH(int, dFf);
        QFETCH(int, split);
        core::Scenario s;
        s.tensorParallel.dFf = dFf;
        s.tensorParallel.ranks = ranks;
        TensorParallelTab tab; // never shown: the export lays the charts out itself
        tab.setScenario(s);
        chooseSplit(tab, Split(split));
        tab.waitForIdle();
        QVERIFY(!tab.refreshPending());
        QTemporaryDir temp;
        // SCALELAB_PNG_DIR keeps the images for a look.
        const QString dir = qEnvironmentVariableIsSet("SCALELAB_PNG_DIR")
            ? qEnvironmentVariable("SCALELAB_PNG_DIR")
            : temp.path();
        QDir().mkpath(dir);
        const QString tag = QString(QTest::currentDataTag()).replace(' ', '_');
        QCOMPARE(tab.charts().size(), 3);
        for (ChartPanel* chart : tab.charts()) {
            const QString path = QDir(dir).filePath(chart->name() + '-' + tag + ".png");
            QCOMPARE(exportCharts({ExportJob{chart, path, ImageFormat::Png, QSize(1600, 1000)}}),
                     QString());
            const QImage image(path);
            QCOMPARE(image.size(), QSize(1600, 1000));
            const QSizeF span = drawnSpan(image);
            QVERIFY2(
                span.width() > 0.9 && span.height() > 0.9,
                qPrintable(QString("%1: %2 x %3").arg(path).arg(span.width()).arg(span.height())));
        }
    }
};

QTEST_MAIN(TstTensorParallelTab)
#include "tst_tensorparalleltab.moc"
