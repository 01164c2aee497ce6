// The ZeRO tab: controls drive the scenario, every series shows the core's figures, the ring
// plays to the plain sum, and every chart exports filling its canvas.

#include "chartexport.h"
#include "chartpanel.h"
#include "fields.h"
#include "format.h"
#include "parametercontrol.h"
#include "ringpanel.h"
#include "scalelab/core/collectives.h"
#include "scalelab/core/error.h"
#include "scenariodocument.h"
#include "scenariojson.h"
#include "testhelpers.h"
#include "zeropresenter.h"
#include "zerotab.h"

#include <QAbstractButton>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QComboBox>
#include <QDir>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QImage>
#include <QJsonObject>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPushButton>
#include <QScatterSeries>
#include <QScrollArea>
#include <QSlider>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace scalelab;
using namespace scalelab::ui;
using namespace scalelab::test;
using core::ZeroStage;

namespace {

constexpr double kGB = 1e9;
constexpr ZeroStage kStages[] = {ZeroStage::DataParallel, ZeroStage::Zero1, ZeroStage::Zero2,
                                 ZeroStage::Zero3};

core::ZeroInputs withRanks(core::ZeroInputs in, std::int64_t ranks)
{
    in.ranks = ranks;
    return in;
}

/// How the tab writes bytes: in GB, below a megabyte in bytes.
QString bytesText(double bytes)
{
    if (bytes < 1e6)
        return (bytes == std::floor(bytes) ? formatWhole(std::int64_t(bytes))
                                           : formatNumber(bytes, 6))
            + " bytes";
    return formatBytes(bytes, ByteUnit::GB);
}

double stageBytes(const core::ZeroResult& r, int stage)
{
    const core::Ratio figures[] = {r.dp, r.zero1, r.zero2, r.zero3};
    return figures[stage].value();
}

} // namespace

class TstZeroTab : public QObject {
    Q_OBJECT

private:
    /// Every series of the three Qt charts and every cell of the table against core.
    void checkAgainstCore(ZeroTab& tab)
    {
        const QList<std::int64_t> ranks = zeroSweptRanks(tab.inputs().ranks);
        QVERIFY(ranks.contains(tab.inputs().ranks));
        for (const auto& check : {&TstZeroTab::checkMemoryChart, &TstZeroTab::checkBreakdownChart,
                                  &TstZeroTab::checkTrafficChart, &TstZeroTab::checkTable}) {
            (this->*check)(tab, ranks);
            if (QTest::currentTestFailed())
                return;
        }
    }

    void checkMemoryChart(ZeroTab& tab, const QList<std::int64_t>& ranks)
    {
        const core::ZeroInputs in = tab.inputs();
        const double limit = double(tab.acceleratorBytes()) / kGB;
        // Memory against ranks: one line per stage, sampled at the swept rank counts.
        QChart* memory = tab.memoryChart()->chart();
        const QStringList names = {"DP", "ZeRO-1", "ZeRO-2", "ZeRO-3"};
        for (int s = 0; s < 4; ++s) {
            QLineSeries* line = nullptr;
            for (QAbstractSeries* a : memory->series())
                if (a->name() == names[s])
                    line = qobject_cast<QLineSeries*>(a);
            QVERIFY2(line, qPrintable(names[s]));
            QCOMPARE(line->count(), int(ranks.size()));
            for (int i = 0; i < ranks.size(); ++i) {
                const core::ZeroResult r = core::computeZeroUnchecked(withRanks(in, ranks[i]));
                QCOMPARE(line->at(i), QPointF(double(ranks[i]), stageBytes(r, s) / kGB));
            }
        }
        const core::ZeroResult now = core::computeZero(in);
        auto* atCurrent = seriesNamed<QScatterSeries>(memory, "At your n");
        QVERIFY(atCurrent);
        QCOMPARE(atCurrent->count(), 4);
        for (int s = 0; s < 4; ++s)
            QCOMPARE(atCurrent->at(s), QPointF(double(in.ranks), stageBytes(now, s) / kGB));
        auto* limitLine = seriesNamed<QLineSeries>(memory, "Accelerator");
        QVERIFY(limitLine);
        QCOMPARE(limitLine->at(0).y(), limit);
        auto* yours = seriesNamed<QLineSeries>(memory, "Your n");
        QCOMPARE(yours->at(0).x(), double(in.ranks));
        // Where each stage starts to fit, for the stages that do within the axis.
        auto* fits = seriesNamed<QScatterSeries>(memory, "Fits from here");
        QVERIFY(fits);
        QList<QPointF> expectedFits;
        for (ZeroStage stage : kStages)
            if (const auto from = core::fewestRanksThatFit(in, stage, tab.acceleratorBytes());
                from && *from <= zeroRankAxisEnd(in.ranks))
                expectedFits << QPointF(
                    double(*from),
                    core::zeroStageBytes(withRanks(in, *from), stage).total.value() / kGB);
        QCOMPARE(fits->points(), expectedFits);
    }

    void checkBreakdownChart(ZeroTab& tab, const QList<std::int64_t>&)
    {
        const core::ZeroInputs in = tab.inputs();
        // Breakdown: replicated and sharded part of each kind, per stage.
        auto* bars = qobject_cast<QHorizontalStackedBarSeries*>(
            tab.breakdownChart()->chart()->series().at(0));
        QVERIFY(bars);
        const QList<QBarSet*> sets = bars->barSets();
        QCOMPARE(sets.size(), 7);
        for (int s = 0; s < 4; ++s) {
            const int row = ZeroTab::breakdownRow(kStages[s]);
            QCOMPARE(sets[6]->at(row),
                     core::zeroStageBytes(in, kStages[s]).onOtherRanks.value() / kGB);
            const core::ZeroStageBytes b = core::zeroStageBytes(in, kStages[s]);
            const core::ZeroPart parts[] = {b.weights, b.gradients, b.optimizer};
            for (int k = 0; k < 3; ++k) {
                QCOMPARE(sets[2 * k]->at(row), parts[k].replicated.value() / kGB);
                QCOMPARE(sets[2 * k + 1]->at(row), parts[k].sharded.value() / kGB);
            }
        }
    }

    void checkTrafficChart(ZeroTab& tab, const QList<std::int64_t>& ranks)
    {
        const core::ZeroInputs in = tab.inputs();
        const core::LinkModel link = tab.link();
        // Traffic against ranks, and the DP bandwidths from two ranks on.
        QChart* traffic = tab.trafficChart()->chart();
        const QStringList prefixes = {"DP", "ZeRO-1", "ZeRO-2", "ZeRO-3"};
        QList<QLineSeries*> lines;
        for (const QString& p : prefixes)
            lines << seriesNamed<QLineSeries>(traffic, p);
        auto* algbw = seriesNamed<QLineSeries>(traffic, "algbw");
        auto* busbw = seriesNamed<QLineSeries>(traffic, "busbw");
        QVERIFY(!lines.contains(nullptr) && algbw && busbw);
        int bandwidthPoint = 0;
        for (int i = 0; i < ranks.size(); ++i) {
            const core::ZeroTraffic t = core::zeroTraffic(withRanks(in, ranks[i]), link);
            const double x = double(ranks[i]);
            QCOMPARE(lines[0]->at(i), QPointF(x, t.dp.bytes.value() / kGB));
            QCOMPARE(lines[1]->at(i), QPointF(x, t.zero12.bytes.value() / kGB));
            QCOMPARE(lines[2]->at(i), QPointF(x, t.zero12.bytes.value() / kGB));
            QCOMPARE(lines[3]->at(i), QPointF(x, t.zero3.bytes.value() / kGB));
            if (ranks[i] >= 2) {
                QCOMPARE(algbw->at(bandwidthPoint), QPointF(x, t.dp.algorithmBandwidth / kGB));
                QCOMPARE(busbw->at(bandwidthPoint), QPointF(x, t.dp.busBandwidth / kGB));
                ++bandwidthPoint;
            }
        }
        QCOMPARE(algbw->count(), bandwidthPoint);
        // The ring's asymptote: twice the gradient tensor.
        auto* twice = seriesNamed<QLineSeries>(traffic, "2 x gradients");
        QVERIFY(twice);
        QCOMPARE(twice->at(0).y(), 2.0 * double(in.parameters) * double(in.gradBytes) / kGB);
    }

    void checkTable(ZeroTab& tab, const QList<std::int64_t>&)
    {
        const core::ZeroInputs in = tab.inputs();
        const core::ZeroResult now = core::computeZero(in);
        const core::ZeroTraffic t = core::zeroTraffic(in, tab.link());
        // The table: bytes, messages and bandwidths of the current n.
        QTableWidget* table = tab.figuresTable();
        QCOMPARE(table->rowCount(), 4);
        const core::StepTraffic* perStage[] = {&t.dp, &t.zero12, &t.zero12, &t.zero3};
        for (int s = 0; s < 4; ++s) {
            QCOMPARE(table->item(s, 0)->text(), bytesText(stageBytes(now, s)));
            QCOMPARE(table->item(s, 2)->text(),
                     bytesText(perStage[s]->bytes.value()) + " in "
                         + formatWhole(perStage[s]->messages) + " msgs");
            if (perStage[s]->seconds > 0)
                QCOMPARE(table->item(s, 4)->text(),
                         formatNumber(perStage[s]->algorithmBandwidth / kGB) + " / "
                             + formatNumber(perStage[s]->busBandwidth / kGB) + " GB/s");
        }
    }

    static QString tempDir()
    {
        // Set SCALELAB_PNG_DIR to keep the exported images for a look.
        const QString keep = qEnvironmentVariable("SCALELAB_PNG_DIR");
        if (!keep.isEmpty())
            QDir().mkpath(keep);
        return keep;
    }

private slots:
    void opensOnTheDefaults()
    {
        ZeroTab tab;
        QCOMPARE(tab.inputs().parameters, core::ZeroInputs{}.parameters);
        QCOMPARE(tab.inputs().ranks, core::ZeroInputs{}.ranks);
        QCOMPARE(tab.inputs().optimizerBytes, core::ZeroInputs{}.optimizerBytes);
        QCOMPARE(tab.acceleratorBytes(), std::int64_t(80'000'000'000));
        QCOMPARE(tab.charts().size(), 4);
        const QStringList names = {"zero-memory", "zero-breakdown", "zero-ring", "zero-traffic"};
        for (int i = 0; i < 4; ++i)
            QCOMPARE(tab.charts()[i]->name(), names[i]);
        checkAgainstCore(tab);
        // 64 ranks: too many to draw, said so, and nothing to play.
        QVERIFY(tab.ringPanel()->showsNote());
        QVERIFY(!tab.ringPanel()->stepSlider()->isEnabled());
        QVERIFY(tab.figuresLabel()->text().contains("120 GB"));
    }

    void keyPressesOnASliderChangeEverySeries_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("qtKey");
        QTest::newRow("ranks, page down") << "zero.ranks" << int(Qt::Key_PageDown);
        QTest::newRow("ranks, end") << "zero.ranks" << int(Qt::Key_End);
        QTest::newRow("ranks, home") << "zero.ranks" << int(Qt::Key_Home);
        QTest::newRow("parameters, page up") << "zero.parameters" << int(Qt::Key_PageUp);
        QTest::newRow("parameters, home") << "zero.parameters" << int(Qt::Key_Home);
        QTest::newRow("weights, right") << "zero.weight_bytes" << int(Qt::Key_Right);
        QTest::newRow("gradients, left") << "zero.grad_bytes" << int(Qt::Key_Left);
        QTest::newRow("optimizer, end") << "zero.optimizer_bytes" << int(Qt::Key_End);
        QTest::newRow("bandwidth, page up") << "zero.link_bandwidth" << int(Qt::Key_PageUp);
        QTest::newRow("latency, end") << "zero.link_latency" << int(Qt::Key_End);
        QTest::newRow("accelerator, left") << "zero.accelerator_gb" << int(Qt::Key_Left);
    }

    void keyPressesOnASliderChangeEverySeries()
    {
        QFETCH(QString, key);
        QFETCH(int, qtKey);
        ZeroTab tab;
        tab.resize(1500, 950);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        ParameterControl* control = tab.control(key);
        QVERIFY(control);
        const double before = control->value();
        const core::ZeroInputs oldInputs = tab.inputs();
        const core::LinkModel oldLink = tab.link();
        const std::int64_t oldLimit = tab.acceleratorBytes();
        control->slider()->setFocus();
        QTest::keyClick(control->slider(), Qt::Key(qtKey));
        QVERIFY(control->value() != before);
        settle(tab);
        const core::ZeroInputs in = tab.inputs();
        const bool changed =
            std::tie(in.parameters, in.ranks, in.weightBytes, in.gradBytes, in.optimizerBytes)
                != std::tie(oldInputs.parameters, oldInputs.ranks, oldInputs.weightBytes,
                            oldInputs.gradBytes, oldInputs.optimizerBytes)
            || tab.link().bandwidth != oldLink.bandwidth || tab.link().latency != oldLink.latency
            || tab.acceleratorBytes() != oldLimit;
        QVERIFY(changed);
        const core::Scenario& scenario = tab.document()->scenario();
        QCOMPARE(scenario.zero.ranks, in.ranks);
        QCOMPARE(scenario.zero.parameters, in.parameters);
        checkAgainstCore(tab);
    }

    void exerciseScenario()
    {
        // Exercise 41.2: P = 1000, n = 4 with 2 + 2 + 12 bytes.
        core::Scenario s;
        s.zero.parameters = 1000;
        s.zero.ranks = 4;
        ZeroTab tab;
        tab.setScenario(s);
        settle(tab);
        const core::Scenario& back = tab.document()->scenario();
        QCOMPARE(back.zero.parameters, std::int64_t(1000));
        QCOMPARE(back.zero.ranks, std::int64_t(4));
        checkAgainstCore(tab);
        QTableWidget* table = tab.figuresTable();
        QCOMPARE(table->item(0, 0)->text(), QString("16,000 bytes"));
        QCOMPARE(table->item(1, 0)->text(), QString("7,000 bytes"));
        QCOMPARE(table->item(2, 0)->text(), QString("5,500 bytes"));
        QCOMPARE(table->item(3, 0)->text(), QString("4,000 bytes"));
        QCOMPARE(table->item(0, 2)->text(), QString("3,000 bytes in 6 msgs")); // 2 x 3/4 x 2000
        QCOMPARE(table->item(3, 2)->text(), QString("4,500 bytes in 9 msgs")); // 1.5 x DP
        // The stacked parts of ZeRO-2: 2000 replicated weight bytes, 500 + 3000 of shards.
        auto* bars = qobject_cast<QHorizontalStackedBarSeries*>(
            tab.breakdownChart()->chart()->series().at(0));
        const int zero2 = ZeroTab::breakdownRow(ZeroStage::Zero2);
        QCOMPARE(zero2, 1); // DP at the top: rows run ZeRO-3, ZeRO-2, ZeRO-1, DP upwards
        double total = 0;
        for (QBarSet* set : bars->barSets().mid(0, 6))
            total += set->at(zero2);
        QCOMPARE(total * kGB, 5500.0);
        // The other three ranks keep 3/4 of the 14,000 sharded bytes.
        QCOMPARE(bars->barSets()[6]->at(zero2) * kGB, 10500.0);
        // Four ranks are drawn.
        QVERIFY(!tab.ringPanel()->showsNote());
        QCOMPARE(tab.ringPanel()->demo().inputs.rows(), Eigen::Index(4));
    }

    void steppingTheRingToTheEndShowsTheSum()
    {
        ZeroTab tab;
        tab.resize(1500, 950);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        tab.control("zero.ranks")->setValue(4);
        settle(tab);
        RingPanel* ring = tab.ringPanel();
        QVERIFY(!ring->showsNote());
        QSlider* slider = ring->stepSlider();
        QVERIFY(slider->isEnabled());
        QCOMPARE(slider->maximum(), 6); // 3 reduce-scatter + 3 all-gather steps
        QCOMPARE(ring->step(), 0);
        QCOMPARE(ring->phaseText(), QString("Start"));
        const core::RingDemo& demo = ring->demo();
        QCOMPARE(demo.inputs.cols(), Eigen::Index(8)); // two values a chunk
        // The demo is the core's, for this rank count, gradient bytes and the fixed seed.
        const core::RingDemo expected = core::ringDemo(4, 8, tab.inputs().gradBytes, 1);
        QCOMPARE(demo.inputs, expected.inputs);
        QCOMPARE(ring->currentStep()->buffers, demo.inputs);

        slider->setFocus();
        QTest::keyClick(slider, Qt::Key_Right);
        QTest::keyClick(slider, Qt::Key_Right);
        QCOMPARE(ring->step(), 2);
        QCOMPARE(ring->phaseText(), QString("Reduce-scatter step 2 of 3"));
        QCOMPARE(ring->currentStep()->buffers, expected.ring.steps[2].buffers);
        QVERIFY(ring->currentStep()->buffers.row(0) != demo.plainSum);

        QTest::keyClick(slider, Qt::Key_End);
        QCOMPARE(ring->step(), 6);
        QCOMPARE(ring->phaseText(), QString("All-gather step 3 of 3"));
        for (int r = 0; r < 4; ++r)
            QCOMPARE(Eigen::RowVectorXd(ring->currentStep()->buffers.row(r)), demo.plainSum);
        QCOMPARE(demo.plainSum, Eigen::RowVectorXd(demo.inputs.colwise().sum()));
        // Bytes sent so far: 2(n-1)/n of the tensor, as core's formula says.
        const std::int64_t tensor = demo.inputs.cols() * tab.inputs().gradBytes;
        for (std::int64_t b : ring->currentStep()->bytesSent)
            QCOMPARE(core::makeRatio(b, 1), core::ringAllReduceBytes(tensor, 4));

        // Another parameter count leaves the ring where it is; another rank count restarts it.
        tab.control("zero.parameters")->setValue(1e9);
        settle(tab);
        QCOMPARE(ring->step(), 6);
        tab.control("zero.ranks")->setValue(3);
        settle(tab);
        QCOMPARE(ring->step(), 0);
        QCOMPARE(slider->maximum(), 4);
    }

    void playingStepsOnlyWhenAsked()
    {
        ZeroTab tab;
        tab.control("zero.ranks")->setValue(2);
        settle(tab);
        RingPanel* ring = tab.ringPanel();
        QVERIFY(!ring->isPlaying()); // nothing moves by itself
        QCOMPARE(ring->step(), 0);
        QAbstractButton* play = ring->playButton();
        QVERIFY(play->isEnabled());
        play->click();
        QVERIFY(ring->isPlaying());
        QCOMPARE(play->text(), QString("Pause"));
        // Two ranks: one reduce-scatter and one all-gather step, then it stops at the sum.
        QTRY_COMPARE_WITH_TIMEOUT(ring->step(), 2, 10000);
        QTRY_VERIFY(!ring->isPlaying());
        QCOMPARE(play->text(), QString("Play"));
        for (int r = 0; r < 2; ++r)
            QCOMPARE(Eigen::RowVectorXd(ring->currentStep()->buffers.row(r)),
                     ring->demo().plainSum);
        // Play at the end starts again from the start; pause holds the step.
        play->click();
        QCOMPARE(ring->step(), 0);
        play->click();
        QVERIFY(!ring->isPlaying());
        QCOMPARE(ring->step(), 0);
    }

    void tooManyRanksShowANoteAndAWayBack()
    {
        ZeroTab tab;
        tab.control("zero.ranks")->setValue(17);
        settle(tab);
        RingPanel* ring = tab.ringPanel();
        QVERIFY(ring->showsNote());
        QVERIFY(!ring->playButton()->isEnabled());
        QVERIFY(ring->currentStep() == nullptr);
        auto* fewer = ring->findChild<QPushButton*>("zero.ring_fewer");
        QVERIFY(fewer);
        fewer->click();
        settle(tab);
        QCOMPARE(tab.inputs().ranks, std::int64_t(8));
        QVERIFY(!ring->showsNote());
        QCOMPARE(ring->demo().inputs.rows(), Eigen::Index(8));
        tab.control("zero.ranks")->setValue(16);
        settle(tab);
        QVERIFY(!ring->showsNote());
        QCOMPARE(ring->demo().inputs.cols(), Eigen::Index(16)); // one value a chunk
        QCOMPARE(ring->stepSlider()->maximum(), 30);
    }

    void acceleratorPresetMovesTheLineAndTheFits()
    {
        ZeroTab tab;
        auto* preset = tab.findChild<QComboBox*>("zero.accelerator");
        QVERIFY(preset);
        preset->setCurrentIndex(0);
        emit preset->activated(0); // what a user's choice sends
        settle(tab);
        QCOMPARE(tab.acceleratorBytes(), std::int64_t(24'000'000'000));
        checkAgainstCore(tab);
        // 24 GB: DP (120 GB) and ZeRO-1 (30 GB replicated) never fit; ZeRO-3 fits from 5.
        QCOMPARE(tab.figuresTable()->item(0, 1)->text(), QString("no: never"));
        QCOMPARE(tab.figuresTable()->item(1, 1)->text(), QString("no: never"));
        QCOMPARE(tab.figuresTable()->item(3, 1)->text(), QString("yes"));
        auto* fits = seriesNamed<QScatterSeries>(tab.memoryChart()->chart(), "Fits from here");
        QCOMPARE(fits->count(), 2);
        QCOMPARE(fits->at(1).x(), 5.0);
    }

    void acceleratorStepRepaintsTheHeaderAndNoCell()
    {
        // A step of the accelerator's slider changes the fits column's header only (at 80 and
        // 81 GB every stage fits, or not, alike): the header is painted again with the new
        // capacity, and the cells, which say the same, are not. Wide enough for the table's
        // columns of equal width (with columns each of its own width, Qt paints the cells once
        // again on a new header).
        ZeroTab tab;
        tab.resize(1920, 1000);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        settle(tab);
        QTableWidget* table = tab.figuresTable();
        QCOMPARE(table->horizontalHeaderItem(1)->text(), QString("Fits 80 GB\nat this n?"));
        // The table scrolls with the charts, under them: brought into view, as a user would.
        for (QWidget* w = table->parentWidget(); w; w = w->parentWidget())
            if (auto* area = qobject_cast<QScrollArea*>(w)) {
                area->ensureWidgetVisible(table);
                break;
            }
        QCoreApplication::processEvents();
        QStringList headersPainted;
        int cellPaints = 0;
        EventSpy header(table->horizontalHeader()->viewport(), QEvent::Paint, [&] {
            headersPainted << table->model()->headerData(1, Qt::Horizontal).toString();
        });
        EventSpy cells(table->viewport(), QEvent::Paint, [&] { ++cellPaints; });
        QStringList fitsBefore;
        for (int row = 0; row < table->rowCount(); ++row)
            fitsBefore << table->item(row, 1)->text();
        ParameterControl* control = tab.control("zero.accelerator_gb");
        control->slider()->setFocus();
        QTest::keyClick(control->slider(), Qt::Key_Right);
        QCOMPARE(control->value(), 81.0);
        settle(tab);
        QTRY_VERIFY(!headersPainted.isEmpty());
        // A table told of a new header lays its items out again on a zero timer, and paints
        // every cell after: time for both to come, had they been asked for.
        QTest::qWait(100);
        QCOMPARE(headersPainted.last(), QString("Fits 81 GB\nat this n?"));
        for (int row = 0; row < table->rowCount(); ++row)
            QCOMPARE(table->item(row, 1)->text(), fitsBefore[row]);
        QCOMPARE(cellPaints, 0);
        checkAgainstCore(tab);
    }

    void scenarioValuesBeyondTheSliderAreKept()
    {
        core::Scenario s;
        s.zero.ranks = 5000; // the slider stops at 1024; a file may ask for more
        s.zero.parameters = 20'000'000'000'000;
        ZeroTab tab;
        tab.setScenario(s);
        settle(tab);
        const core::Scenario& back = tab.document()->scenario();
        QCOMPARE(back.zero.ranks, std::int64_t(5000));
        QCOMPARE(back.zero.parameters, std::int64_t(20'000'000'000'000));
        QCOMPARE(zeroRankAxisEnd(5000), std::int64_t(8192));
        checkAgainstCore(tab);
    }

    void sweptRanksAreWholeAndIncreasing()
    {
        for (std::int64_t n : {1, 7, 64, 100, 1000, 1024, 5000}) {
            const QList<std::int64_t> r = zeroSweptRanks(n);
            QCOMPARE(r.front(), std::int64_t(1));
            QCOMPARE(r.back(), zeroRankAxisEnd(n));
            QVERIFY(r.contains(n));
            for (int i = 1; i < r.size(); ++i)
                QVERIFY(r[i] > r[i - 1]);
        }
    }

    void displayInputsAreSavedAndUndoable_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<double>("value");
        QTest::newRow("accelerator") << "zero.accelerator_gb" << 141.0;
        QTest::newRow("bandwidth") << "zero.link_bandwidth" << 400.0;
        QTest::newRow("latency") << "zero.link_latency" << 2.5;
    }

    void displayInputsAreSavedAndUndoable()
    {
        QFETCH(QString, key);
        QFETCH(double, value);
        ZeroTab tab;
        ParameterControl* control = tab.control(key);
        QVERIFY(control);
        const double before = control->value();
        QVERIFY(before != value);
        control->setValue(value);
        settle(tab);
        // In the document, so saved, opened and shown by the charts.
        const core::ZeroDisplay& shown = tab.document()->scenario().zeroDisplay;
        const double stored = key == "zero.accelerator_gb" ? shown.acceleratorGb
            : key == "zero.link_bandwidth"                 ? shown.linkBandwidthGBps
                                                           : shown.linkLatencyUs;
        QCOMPARE(stored, value);
        QCOMPARE(tab.document()->value(key), value);
        checkAgainstCore(tab);
        QCOMPARE(tab.document()->undoStack()->count(), 1);
        tab.document()->undoStack()->undo();
        settle(tab);
        QCOMPARE(control->value(), before);
        QCOMPARE(tab.document()->scenario().zeroDisplay, core::ZeroDisplay{});
        checkAgainstCore(tab);
    }

    void displayInputsTravelInTheScenarioFile()
    {
        // Moved off their defaults, saved, opened in a fresh tab: every control shows its value.
        ZeroTab tab;
        tab.control("zero.accelerator_gb")->setValue(40);
        tab.control("zero.link_bandwidth")->setValue(400);
        tab.control("zero.link_latency")->setValue(2.5);
        tab.control("zero.ranks")->setValue(12);
        settle(tab);
        const QJsonObject saved = document::scenarioToJson(tab.document()->scenario());
        const QJsonObject zero = saved.value("zero").toObject();
        QCOMPARE(zero.value("accelerator_gb").toDouble(), 40.0);
        QCOMPARE(zero.value("link_bandwidth").toDouble(), 400.0);
        QCOMPARE(zero.value("link_latency").toDouble(), 2.5);
        ZeroTab opened;
        opened.setScenario(document::scenarioFromJson(saved));
        settle(opened);
        for (const char* key :
             {"zero.accelerator_gb", "zero.link_bandwidth", "zero.link_latency", "zero.ranks"})
            QCOMPARE(opened.control(key)->value(), tab.control(key)->value());
        QCOMPARE(opened.link().bandwidth, 400e9);
        QCOMPARE(opened.acceleratorBytes(), std::int64_t(40'000'000'000));
        QCOMPARE(opened.figuresTable()->item(3, 1)->text(), tab.figuresTable()->item(3, 1)->text());
    }

    void linkAndAcceleratorFollowTheDocument()
    {
        ZeroTab tab;
        core::Scenario s;
        s.zeroDisplay.linkBandwidthGBps = 25;
        s.zeroDisplay.linkLatencyUs = 0;
        s.zeroDisplay.acceleratorGb = 40;
        tab.setScenario(s);
        settle(tab);
        QCOMPARE(tab.link().bandwidth, 25e9);
        QCOMPARE(tab.link().latency, 0.0);
        QCOMPARE(tab.acceleratorBytes(), std::int64_t(40'000'000'000));
        QCOMPARE(tab.control("zero.link_bandwidth")->value(), 25.0);
        QCOMPARE(tab.control("zero.link_latency")->value(), 0.0);
        auto* preset = tab.findChild<QComboBox*>("zero.accelerator");
        QCOMPARE(preset->currentText(), QString("40 GB"));
        checkAgainstCore(tab);
        // The preset box is an edit of the capacity: one undo step brings 40 GB back.
        preset->setCurrentIndex(3);
        emit preset->activated(3);
        settle(tab);
        QCOMPARE(tab.scenario().zeroDisplay.acceleratorGb, 141.0);
        tab.document()->undoStack()->undo();
        settle(tab);
        QCOMPARE(tab.scenario().zeroDisplay.acceleratorGb, 40.0);
        QCOMPARE(tab.control("zero.accelerator_gb")->value(), 40.0);
        QCOMPARE(preset->currentText(), QString("40 GB"));
    }

    void ringControlsAreViewOnly()
    {
        ZeroTab tab;
        tab.document()->setValue("zero.ranks", 4);
        settle(tab);
        const int steps = tab.document()->undoStack()->count();
        const core::Scenario before = tab.document()->scenario();
        RingPanel* ring = tab.ringPanel();
        ring->stepSlider()->setValue(3);
        QCOMPARE(ring->step(), 3);
        ring->playButton()->click();
        QVERIFY(ring->isPlaying());
        ring->playButton()->click();
        // Watching the ring is no edit: nothing saved, nothing to undo.
        QCOMPARE(tab.document()->undoStack()->count(), steps);
        QVERIFY(tab.document()->scenario() == before);
        // Undoing the rank count restarts the ring at the document's 64 ranks: the note.
        tab.document()->undoStack()->undo();
        settle(tab);
        QVERIFY(ring->showsNote());
    }

    void fewerRanksIsOneUndoStep()
    {
        ZeroTab tab; // 64 ranks: the note with its button
        auto* fewer = tab.ringPanel()->findChild<QPushButton*>("zero.ring_fewer");
        QVERIFY(fewer);
        fewer->click();
        settle(tab);
        QCOMPARE(tab.inputs().ranks, std::int64_t(8));
        QCOMPARE(tab.control("zero.ranks")->value(), 8.0);
        QCOMPARE(tab.document()->undoStack()->count(), 1);
        tab.document()->undoStack()->undo();
        settle(tab);
        QCOMPARE(tab.inputs().ranks, std::int64_t(64));
        QCOMPARE(tab.control("zero.ranks")->value(), 64.0);
        QVERIFY(tab.ringPanel()->showsNote());
    }

    void normalizeKeepsEveryZeroEdit_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<double>("value");
        QTest::newRow("parameters") << "zero.parameters" << 1e12;
        QTest::newRow("ranks") << "zero.ranks" << 3.0;
        QTest::newRow("weights") << "zero.weight_bytes" << 0.0;
        QTest::newRow("gradients") << "zero.grad_bytes" << 4.0;
        QTest::newRow("optimizer") << "zero.optimizer_bytes" << 32.0;
        QTest::newRow("accelerator") << "zero.accelerator_gb" << 24.0;
        QTest::newRow("bandwidth") << "zero.link_bandwidth" << 1.0;
        QTest::newRow("latency") << "zero.link_latency" << 100.0;
    }

    void normalizeKeepsEveryZeroEdit()
    {
        // No zero input bounds another: the rules leave every edit exactly as made.
        QFETCH(QString, key);
        QFETCH(double, value);
        const document::Field* field = document::findField(key);
        QVERIFY(field);
        QCOMPARE(field->section, core::Section::Zero);
        const core::Scenario before;
        core::Scenario after = before;
        field->set(after, value);
        const core::Scenario edited = after;
        document::normalizeSection(before, after, core::Section::Zero, field);
        QVERIFY(after == edited);
        QCOMPARE(field->get(after), value);
        document::normalizeSection(before, after, core::Section::Zero, nullptr);
        QVERIFY(after == edited);
    }

    void fieldsMatchTheOldControls()
    {
        // The table replaced the tab's own specs: what the user sees must not change.
        struct Expected {
            const char* key;
            double minimum, maximum;
            bool log;
            int decimals;
            double step;
        };
        const Expected rows[] = {
            {"zero.parameters", 1e6, 1e13, true, 0, 1},
            {"zero.ranks", 1, 1024, true, 0, 1},
            {"zero.weight_bytes", 0, 16, false, 0, 1},
            {"zero.grad_bytes", 0, 16, false, 0, 1},
            {"zero.optimizer_bytes", 0, 32, false, 0, 1},
            {"zero.accelerator_gb", 1, 1024, false, 0, 1},
            {"zero.link_bandwidth", 1, 2000, true, 0, 1},
            {"zero.link_latency", 0, 100, false, 1, 0.5},
        };
        const std::vector<const document::Field*> fields =
            document::sectionFields(core::Section::Zero);
        QCOMPARE(fields.size(), std::size(rows));
        ZeroTab tab;
        for (std::size_t i = 0; i < std::size(rows); ++i) {
            const Expected& e = rows[i];
            QCOMPARE(fields[i]->key, QString(e.key));
            const ParameterSpec& spec = tab.control(e.key)->spec();
            QCOMPARE(spec.minimum, e.minimum);
            QCOMPARE(spec.maximum, e.maximum);
            QCOMPARE(spec.scale == ParameterSpec::Scale::Log, e.log);
            QCOMPARE(spec.decimals, e.decimals);
            QCOMPARE(spec.step, e.step);
        }
        QCOMPARE(tab.control("zero.link_latency")->spec().symbol, QString("α"));
        QCOMPARE(tab.control("zero.link_latency")->spec().unit, QString("µs"));
        // The defaults are the old controls' and the link model's.
        const core::Scenario s;
        QCOMPARE(tab.link().bandwidth, core::LinkModel{}.bandwidth);
        QCOMPARE(tab.link().latency, core::LinkModel{}.latency);
        QCOMPARE(document::findField(u"zero.accelerator_gb")->get(s), 80.0);
    }

    void presenterGivesTheExerciseFiguresWithoutWidgets()
    {
        // Exercise 41.2 (P = 1000, n = 4, 2 + 2 + 12 bytes) on a 24 GB accelerator.
        core::ZeroInputs in;
        in.parameters = 1000;
        in.ranks = 4;
        const core::LinkModel link = zeroLink(core::ZeroDisplay{});
        QCOMPARE(link.bandwidth, 50e9);
        QCOMPARE(link.latency, 10e-6);
        const ZeroFigures f = computeZeroFigures(in, link, 24'000'000'000);
        QCOMPARE(f.ranks, std::int64_t(4));
        QCOMPARE(f.axisEnd, 1024.0);
        QCOMPARE(f.limit, 24.0);
        QCOMPARE(f.table[0][0], QString("16,000 bytes"));
        QCOMPARE(f.table[1][0], QString("7,000 bytes"));
        QCOMPARE(f.table[2][0], QString("5,500 bytes"));
        QCOMPARE(f.table[3][0], QString("4,000 bytes"));
        QCOMPARE(f.table[0][1], QString("yes"));
        QCOMPARE(f.table[0][2], QString("3,000 bytes in 6 msgs"));
        QCOMPARE(f.table[3][2], QString("4,500 bytes in 9 msgs"));
        QCOMPARE(f.fitsHeader, QString("Fits 24 GB\nat this n?"));
        // ZeRO-2 keeps 2000 replicated weight bytes and 500 + 3000 of shards; 10,500 elsewhere.
        const ZeroBreakdown& b = f.breakdown[2];
        QCOMPARE(b.replicated[0] * kGB, 2000.0);
        QCOMPARE(b.sharded[1] * kGB, 500.0);
        QCOMPARE(b.sharded[2] * kGB, 3000.0);
        QCOMPARE(b.elsewhere * kGB, 10500.0);
        QCOMPARE(b.length * kGB, 16000.0);
        // Every stage fits from one rank: the markers sit at n = 1.
        QCOMPARE(f.fits.size(), 4);
        for (const QPointF& p : f.fits)
            QCOMPARE(p.x(), 1.0);
        QCOMPARE(f.twiceGradients * kGB, 4000.0);
        QVERIFY(f.summary.contains("<b>16,000 bytes</b>"));
        QVERIFY(f.summary.contains("Ring all-reduce</b> of the gradients S = Pg = 2,000 bytes"));
        // One point per swept count, the current one among them; no bandwidth for one rank.
        QCOMPARE(f.sweep.ranks, zeroSweptRanks(4));
        for (const auto& line : f.sweep.memory)
            QCOMPARE(line.size(), f.sweep.ranks.size());
        QCOMPARE(f.sweep.algbw.size(), f.sweep.ranks.size() - 1);
        QCOMPARE(f.sweep.memory[3].at(3), QPointF(4, 4000 / kGB));
    }

    void presenterTimesAndRefusesLikeCore()
    {
        core::ZeroInputs in;
        in.ranks = 1; // one rank sends nothing
        const ZeroFigures one = computeZeroFigures(in, core::LinkModel{}, 80'000'000'000);
        QCOMPARE(one.table[0][3], QString("0 s"));
        QCOMPARE(one.table[0][4], QString("n/a (nothing sent)"));
        QVERIFY(one.summary.contains("one rank has nothing to send"));
        // 120 GB of DP state never fits 24 GB; ZeRO-3 needs 5 ranks.
        const ZeroTableRow dp =
            zeroTableRow(in, ZeroStage::DataParallel, core::StepTraffic{}, 24'000'000'000);
        QCOMPARE(dp[1], QString("no: never"));
        const ZeroTableRow z3 =
            zeroTableRow(in, ZeroStage::Zero3, core::StepTraffic{}, 24'000'000'000);
        QCOMPARE(z3[1], QString("no: needs 5 ranks"));
        QCOMPARE(zeroSecondsText(12e-6), QString("12 µs"));
        QCOMPARE(zeroSecondsText(0.0034), QString("3.4 ms"));
        QCOMPARE(zeroSecondsText(2), QString("2 s"));
        // Bad input is refused with the key named, before anything is drawn.
        core::ZeroInputs bad;
        bad.ranks = 0;
        QVERIFY_THROWS_EXCEPTION(core::InputError,
                                 computeZeroFigures(bad, core::LinkModel{}, 80'000'000'000));
        core::LinkModel slow;
        slow.bandwidth = 0;
        QVERIFY_THROWS_EXCEPTION(core::InputError,
                                 computeZeroFigures(core::ZeroInputs{}, slow, 80'000'000'000));
        const QHash<QString, QString> values = zeroExplanationValues(core::ZeroInputs{});
        QCOMPARE(values.value("dp"), formatBytes(120e9, ByteUnit::GB));
        QCOMPARE(values.value("ranks"), QString("64"));
    }

    void exportsFillTheCanvas_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::newRow("1 rank, nothing to send") << 1;
        QTest::newRow("4 ranks, the ring drawn") << 4;
        QTest::newRow("16 ranks, the ring drawn") << 16;
        QTest::newRow("64 ranks, the note") << 64;
    }

    void exportsFillTheCanvas()
    {
        QFETCH(int, ranks);
        ZeroTab tab; // never shown: the export lays every chart out itself
        tab.control("zero.ranks")->setValue(ranks);
        tab.waitForIdle();
        if (ranks <= 16)
            tab.ringPanel()->setStep(ranks - 1); // mid-way: the last reduce-scatter step
        QCOMPARE(tab.ringPanel()->step(), ranks <= 16 ? ranks - 1 : 0);
        QTemporaryDir temporary;
        const QString keep = tempDir();
        const QString dir = keep.isEmpty() ? temporary.path() : keep;
        for (ChartPanel* chart : tab.charts()) {
            const QString path =
                QDir(dir).filePath(QString("%1-n%2.png").arg(chart->name()).arg(ranks));
            QCOMPARE(exportCharts({ExportJob{chart, path, ImageFormat::Png, {1600, 1000}}}),
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

QTEST_MAIN(TstZeroTab)
#include "tst_zerotab.moc"
