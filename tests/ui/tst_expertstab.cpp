// The expert-routing tab: every chart shows exactly what core routes, including the chapter's
// exercise, while heavy routing runs off the GUI thread.

#include "chartexport.h"
#include "chartpanel.h"
#include "expertsrules.h"
#include "expertstab.h"
#include "explanationpanel.h"
#include "fields.h"
#include "format.h"
#include "heatmappanel.h"
#include "parametercontrol.h"
#include "scalelab/core/experts.h"
#include "scenariodocument.h"
#include "scenariojson.h"
#include "testhelpers.h"

#include <QBarSet>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QGraphicsTextItem>
#include <QImage>
#include <QLabel>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSlider>
#include <QStackedBarSeries>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <algorithm>

using namespace scalelab;
using namespace scalelab::ui;
using namespace scalelab::test;

using Matrix = std::vector<std::vector<std::int64_t>>;

Q_DECLARE_METATYPE(scalelab::core::Scenario)

namespace {

/// Heavy routing in a Debug or sanitizer build may take seconds; nothing here is timed.
constexpr int kWorkerTimeoutMs = 120000;

QStackedBarSeries* barsOf(QChart* chart)
{
    for (QAbstractSeries* s : chart->series())
        if (auto* bars = qobject_cast<QStackedBarSeries*>(s))
            return bars;
    return nullptr;
}

QBarSet* setNamed(QStackedBarSeries* bars, const QString& prefix)
{
    for (QBarSet* set : bars->barSets())
        if (set->label().startsWith(prefix))
            return set;
    return nullptr;
}

QList<qreal> asReals(const std::vector<std::int64_t>& v)
{
    QList<qreal> out;
    for (std::int64_t x : v)
        out << static_cast<qreal>(x);
    return out;
}

core::Scenario exerciseScenario()
{
    core::Scenario s;
    s.experts.ranks = 2;
    s.experts.experts = 4;
    s.experts.assignments = Matrix{{0, 1, 3}, {2, 3, 2}};
    s.experts.expertToRank = std::vector<std::int64_t>{0, 0, 1, 1};
    return s;
}

void choosePreset(ExpertsTab& tab, ExpertsTab::Preset preset)
{
    auto* box = tab.findChild<QComboBox*>("experts.preset");
    QVERIFY(box);
    box->setCurrentIndex(preset);
    emit box->activated(preset); // what a user's choice sends
}

} // namespace

class TstExpertsTab : public QObject {
    Q_OBJECT

private:
    /// Every chart against core for the tab's current inputs, exactly.
    void checkAgainstCore(ExpertsTab& tab)
    {
        const core::ExpertsInputs in = tab.inputs();
        const core::ExpertsResult r = core::routeExperts(in);
        const core::AllToAllTraffic t =
            core::allToAllTraffic(r, tab.hiddenSize(), tab.bytesPerValue());

        // Heatmap: the count matrix, cell for cell.
        const Eigen::MatrixXd& m = tab.heatmap()->matrix();
        QCOMPARE(m.rows(), Eigen::Index(in.ranks));
        QCOMPARE(m.cols(), Eigen::Index(in.ranks));
        for (std::size_t s = 0; s < r.counts.size(); ++s)
            for (std::size_t d = 0; d < r.counts.size(); ++d)
                QCOMPARE(m(Eigen::Index(s), Eigen::Index(d)), double(r.counts[s][d]));

        // Load: kept plus dropped is each expert's load; mean and capacity lines.
        QChart* load = tab.loadChart()->chart();
        QStackedBarSeries* loadBars = barsOf(load);
        QVERIFY(loadBars);
        QBarSet* kept = setNamed(loadBars, "Kept");
        QBarSet* dropped = setNamed(loadBars, "Dropped");
        QVERIFY(kept && dropped);
        QList<qreal> keptExpected;
        for (std::size_t e = 0; e < r.expertLoad.size(); ++e)
            keptExpected << double(r.expertLoad[e] - r.droppedPerExpert[e]);
        QCOMPARE(values(kept), keptExpected);
        QCOMPARE(values(dropped), asReals(r.droppedPerExpert));
        auto* mean = seriesNamed<QLineSeries>(load, "Mean");
        QVERIFY(mean);
        QCOMPARE(mean->count(), 2);
        QCOMPARE(mean->at(0).y(), double(r.totalSlots) / double(in.experts));
        auto* capacity = seriesNamed<QLineSeries>(load, "Capacity");
        QVERIFY(capacity);
        QCOMPARE(capacity->isVisible(), in.capacityFactor > 0);
        if (in.capacityFactor > 0)
            QCOMPARE(capacity->at(0).y(), double(r.capacity));

        // Ranks: local, remote and dropped per rank, the mean and the busiest rank.
        QChart* ranks = tab.ranksChart()->chart();
        QStackedBarSeries* rankBars = barsOf(ranks);
        QVERIFY(rankBars);
        QCOMPARE(values(setNamed(rankBars, "Local")), asReals(t.localPerRank));
        QCOMPARE(values(setNamed(rankBars, "From other ranks")), asReals(t.remotePerRank));
        QCOMPARE(values(setNamed(rankBars, "Dropped")), asReals(t.droppedPerRank));
        auto* rankMean = seriesNamed<QLineSeries>(ranks, "Mean");
        QVERIFY(rankMean);
        QCOMPARE(rankMean->at(0).y(), double(r.totalSlots) / double(in.ranks));
        auto* busiest = seriesNamed<QScatterSeries>(ranks, "Busiest");
        QVERIFY(busiest);
        const auto top = std::max_element(r.receivedPerRank.begin(), r.receivedPerRank.end());
        QCOMPARE(busiest->at(0), QPointF(double(top - r.receivedPerRank.begin()), double(*top)));

        // The figures the rank chart and the figures line state come from core too.
        const QString title = tab.ranksCaption()->toPlainText();
        QVERIFY2(title.contains(formatNumber(*r.imbalance)), qPrintable(title));
        // The caption names the busiest rank (the legend entry does not: it would relayout).
        QVERIFY2(title.contains(QString("busiest: rank %1").arg(top - r.receivedPerRank.begin())),
                 qPrintable(title));
        QCOMPARE(busiest->name(), QString("Busiest rank"));
        const QString figures = tab.figuresLabel()->text();
        QVERIFY2(figures.contains(formatWhole(t.offRankSlots) + " of " + formatWhole(r.totalSlots)),
                 qPrintable(figures));
        const auto loss = core::loadBalancingLoss(r);
        if (!in.assignments)
            QVERIFY2(title.contains("= " + formatNumber(*loss)), qPrintable(title));
        if (in.capacityFactor > 0)
            QVERIFY(figures.contains(formatWhole(r.dropped) + " dropped"));
    }

private slots:
    void opensOnTheDefaults()
    {
        ExpertsTab tab;
        QVERIFY(tab.refreshPending()); // the first routing is on the worker
        settle(tab, kWorkerTimeoutMs);
        const core::ExpertsInputs d;
        QCOMPARE(tab.inputs().ranks, d.ranks);
        QCOMPARE(tab.inputs().experts, d.experts);
        QCOMPARE(tab.inputs().tokensPerRank, d.tokensPerRank);
        QCOMPARE(tab.inputs().skew, d.skew);
        QCOMPARE(tab.inputs().capacityFactor, 0.0);
        QCOMPARE(tab.preset(), ExpertsTab::Zipf);
        QVERIFY(tab.messageLabel()->isHidden());
        checkAgainstCore(tab);

        // The explanation beside the charts gets the same figures, every placeholder filled.
        const core::ExpertsResult r = core::routeExperts(tab.inputs());
        const auto values = tab.explanationValues();
        QCOMPARE(values.value("total_slots"), formatWhole(r.totalSlots));
        QCOMPARE(values.value("imbalance"), formatNumber(*r.imbalance));
        QCOMPARE(values.value("dropped"), QString("0 slots"));
        QVERIFY(tab.explanation());
        QVERIFY2(!tab.explanation()->html().contains("{{"), qPrintable(tab.explanation()->html()));
    }

    void chapterExerciseFromThePreset()
    {
        ExpertsTab tab;
        settle(tab, kWorkerTimeoutMs);
        choosePreset(tab, ExpertsTab::ChapterExercise);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.preset(), ExpertsTab::ChapterExercise);
        Eigen::MatrixXd expected(2, 2);
        expected << 2, 1, 0, 3;
        QCOMPARE(tab.heatmap()->matrix(), expected);
        checkAgainstCore(tab);
        // Experts 0..3 receive 1, 1, 2, 2 slots; rank 0 keeps 2, rank 1 keeps 3 and gets 1.
        QCOMPARE(values(setNamed(barsOf(tab.loadChart()->chart()), "Kept")),
                 (QList<qreal>{1, 1, 2, 2}));
        QCOMPARE(values(setNamed(barsOf(tab.ranksChart()->chart()), "Local")),
                 (QList<qreal>{2, 3}));
        QCOMPARE(values(setNamed(barsOf(tab.ranksChart()->chart()), "From other ranks")),
                 (QList<qreal>{0, 1}));
        const core::Scenario& back = tab.scenario();
        QCOMPARE(back.experts.assignments, exerciseScenario().experts.assignments);
        QCOMPARE(back.experts.expertToRank, exerciseScenario().experts.expertToRank);
    }

    void chapterExerciseFromAScenario()
    {
        ExpertsTab tab;
        tab.setScenario(exerciseScenario());
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.preset(), ExpertsTab::ChapterExercise);
        Eigen::MatrixXd expected(2, 2);
        expected << 2, 1, 0, 3;
        QCOMPARE(tab.heatmap()->matrix(), expected);
        checkAgainstCore(tab);
        // One slot of six crosses: 4,096 values x 2 bytes.
        QVERIFY(tab.figuresLabel()->text().contains("1 of 6 slots"));
        QVERIFY(tab.ranksCaption()->toPlainText().contains("8.19 kB sent off-rank"));
    }

    void oneDroppedSlotReadsInTheSingular()
    {
        // Expert 3 gets three slots and the others one each: a capacity of ceil(1.0 x 6 / 4) = 2
        // slots per expert drops exactly one.
        core::Scenario s = exerciseScenario();
        s.experts.assignments = Matrix{{0, 1, 3}, {2, 3, 3}};
        s.experts.capacityFactor = 1.0;
        ExpertsTab tab;
        tab.setScenario(s);
        settle(tab, kWorkerTimeoutMs);
        const core::ExpertsResult r = core::routeExperts(tab.inputs());
        QCOMPARE(r.capacity, std::int64_t(2));
        QCOMPARE(r.dropped, std::int64_t(1));
        QCOMPARE(tab.explanationValues().value("dropped"), QString("1 slot"));
        const QString figures = tab.figuresLabel()->text();
        QVERIFY2(figures.contains("= 2 slots per expert: <b>1 dropped</b>"), qPrintable(figures));
        // The explanation beside the charts says it the same way.
        QVERIFY(tab.explanation());
        QVERIFY2(!tab.explanation()->html().contains("1 slots"),
                 qPrintable(tab.explanation()->html()));
    }

    void aRouterInputLeavesTheExercise()
    {
        ExpertsTab tab;
        tab.setScenario(exerciseScenario());
        settle(tab, kWorkerTimeoutMs);
        tab.control("experts.skew")->setValue(0.5);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(!tab.inputs().assignments);
        QCOMPARE(tab.preset(), ExpertsTab::Custom);
        QCOMPARE(tab.inputs().ranks, std::int64_t(2));
        checkAgainstCore(tab);
        // The capacity applies to the exercise too, which stays explicit.
        tab.setScenario(exerciseScenario());
        tab.control("experts.capacity_factor")->setValue(1.0);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(tab.inputs().assignments);
        QCOMPARE(tab.inputs().capacityFactor, 1.0);
        checkAgainstCore(tab);
    }

    void keyPressesOnASliderChangeTheScenarioAndTheCharts_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("qtKey");
        QTest::newRow("ranks, right") << "experts.ranks" << int(Qt::Key_Right);
        QTest::newRow("experts, right") << "experts.experts" << int(Qt::Key_Right);
        QTest::newRow("experts, page down") << "experts.experts" << int(Qt::Key_PageDown);
        QTest::newRow("top-k, left") << "experts.top_k" << int(Qt::Key_Left);
        QTest::newRow("skew, page up") << "experts.skew" << int(Qt::Key_PageUp);
        QTest::newRow("skew, home") << "experts.skew" << int(Qt::Key_Home);
        QTest::newRow("capacity, right") << "experts.capacity_factor" << int(Qt::Key_Right);
    }

    void keyPressesOnASliderChangeTheScenarioAndTheCharts()
    {
        QFETCH(QString, key);
        QFETCH(int, qtKey);
        ExpertsTab tab;
        tab.resize(1600, 950);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        settle(tab, kWorkerTimeoutMs);
        ParameterControl* control = tab.control(key);
        QVERIFY(control);
        const double before = control->value();
        const core::ExpertsInputs old = tab.inputs();
        control->slider()->setFocus();
        QTest::keyClick(control->slider(), Qt::Key(qtKey));
        QVERIFY(control->value() != before);
        QVERIFY(tab.refreshPending()); // until the worker's result is on screen
        settle(tab, kWorkerTimeoutMs);
        const core::ExpertsInputs& now = tab.scenario().experts;
        QVERIFY(std::tie(now.ranks, now.experts, now.topK, now.skew, now.capacityFactor)
                != std::tie(old.ranks, old.experts, old.topK, old.skew, old.capacityFactor));
        QCOMPARE(now.experts % now.ranks, std::int64_t(0));
        checkAgainstCore(tab);
    }

    void expertsStayAMultipleOfTheRanks()
    {
        ExpertsTab tab;
        ParameterControl* ranks = tab.control("experts.ranks");
        ParameterControl* experts = tab.control("experts.experts");
        ranks->setValue(5); // 16 experts over 5 ranks: up to 20
        QCOMPARE(tab.inputs().experts, std::int64_t(20));
        QCOMPARE(experts->value(), 20.0);
        experts->setValue(21); // one step up: the next multiple
        QCOMPARE(tab.inputs().experts, std::int64_t(25));
        experts->setValue(24); // one step down: the multiple below
        QCOMPARE(tab.inputs().experts, std::int64_t(20));
        ranks->setValue(48);
        QCOMPARE(tab.inputs().experts, std::int64_t(48));
        QCOMPARE(experts->spec().maximum, 240.0); // 5 x 48, the last multiple up to 256
        ranks->setValue(64);
        experts->setValue(experts->spec().maximum);
        QCOMPARE(tab.inputs().experts, std::int64_t(256));
        // Top-k stays within the experts, tokens within core's slot budget.
        ranks->setValue(1);
        experts->setValue(3);
        QCOMPARE(tab.control("experts.top_k")->spec().maximum, 3.0);
        settle(tab, kWorkerTimeoutMs);
        checkAgainstCore(tab);
    }

    void presetsSetTheRouter_data()
    {
        QTest::addColumn<int>("preset");
        QTest::addColumn<double>("skew");
        QTest::addColumn<bool>("byId");
        QTest::newRow("balanced") << int(ExpertsTab::Balanced) << 0.0 << false;
        QTest::newRow("one hot expert") << int(ExpertsTab::OneHotExpert) << 3.0 << false;
        QTest::newRow("one hot rank") << int(ExpertsTab::OneHotRank) << 1.0 << true;
        QTest::newRow("zipf") << int(ExpertsTab::Zipf) << 1.0 << false;
    }

    void presetsSetTheRouter()
    {
        QFETCH(int, preset);
        QFETCH(double, skew);
        QFETCH(bool, byId);
        ExpertsTab tab;
        tab.setScenario(exerciseScenario()); // presets also leave the exercise
        settle(tab, kWorkerTimeoutMs);
        choosePreset(tab, ExpertsTab::Preset(preset));
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.inputs().skew, skew);
        QCOMPARE(tab.inputs().popularity == core::ExpertPopularity::ById, byId);
        QVERIFY(!tab.inputs().assignments);
        QCOMPARE(tab.preset(), ExpertsTab::Preset(preset));
        QCOMPARE(tab.findChild<QCheckBox*>("experts.popularity")->isChecked(), byId);
        checkAgainstCore(tab);
        // Moving the knob away from a preset says so.
        tab.control("experts.skew")->setValue(skew + 0.05);
        QCOMPARE(tab.findChild<QComboBox*>("experts.preset")->currentIndex(),
                 int(ExpertsTab::Custom));
    }

    void oneHotRankMovesTheLoadNotTheLoss()
    {
        // The lesson of the two skew-1 presets: same expert loads, so the same auxiliary loss,
        // but "one hot rank" piles them onto rank 0.
        ExpertsTab tab;
        choosePreset(tab, ExpertsTab::Zipf);
        settle(tab, kWorkerTimeoutMs);
        const QString zipfLoss = tab.ranksCaption()->toPlainText().section("Aux loss", 1);
        const auto zipf = core::routeExperts(tab.inputs());
        choosePreset(tab, ExpertsTab::OneHotRank);
        settle(tab, kWorkerTimeoutMs);
        checkAgainstCore(tab);
        const auto hot = core::routeExperts(tab.inputs());
        QCOMPARE(tab.ranksCaption()->toPlainText().section("Aux loss", 1), zipfLoss);
        QVERIFY(*hot.imbalance > *zipf.imbalance);
        auto* busiest = seriesNamed<QScatterSeries>(tab.ranksChart()->chart(), "Busiest");
        QCOMPARE(busiest->at(0).x(), 0.0);
    }

    void capacityDropsSlots()
    {
        ExpertsTab tab;
        auto* box = tab.findChild<QCheckBox*>("experts.capacity");
        QVERIFY(box);
        QVERIFY(!box->isChecked());
        settle(tab, kWorkerTimeoutMs);
        const auto draws = tab.routing();
        QVERIFY(draws);
        box->setChecked(true);
        tab.control("experts.capacity_factor")->setValue(1.0);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.inputs().capacityFactor, 1.0);
        QCOMPARE(tab.routing(), draws); // the limit applied to the same draws
        const auto r = core::routeExperts(tab.inputs());
        QVERIFY(r.dropped > 0); // skew 1 overflows the hot experts
        checkAgainstCore(tab);
        box->setChecked(false);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.inputs().capacityFactor, 0.0);
        checkAgainstCore(tab);
        // Moving the factor turns the limit back on.
        tab.control("experts.capacity_factor")->setValue(2.0);
        QVERIFY(box->isChecked());
        QCOMPARE(tab.inputs().capacityFactor, 2.0);
        settle(tab, kWorkerTimeoutMs);
        checkAgainstCore(tab);
    }

    void slotSizeRedrawsWithoutRouting()
    {
        ExpertsTab tab;
        settle(tab, kWorkerTimeoutMs);
        tab.control("experts.hidden")->setValue(1024);
        tab.control("experts.bytes_per_value")->setValue(1);
        // Nothing to route again: the redraw happens at once, on this thread.
        tab.refreshNow();
        QVERIFY(!tab.refreshPending());
        QCOMPARE(tab.hiddenSize(), std::int64_t(1024));
        QCOMPARE(tab.bytesPerValue(), std::int64_t(1));
        checkAgainstCore(tab);
        const auto t = core::allToAllTraffic(core::routeExperts(tab.inputs()), 1024, 1);
        QVERIFY(tab.figuresLabel()->text().contains("x 1,024 values x 1 bytes"));
        QCOMPARE(t.offRankBytes, t.offRankSlots * 1024);
    }

    void heavyRoutingRunsOnTheWorker()
    {
        ExpertsTab tab;
        settle(tab, kWorkerTimeoutMs);
        core::Scenario s;
        s.experts.ranks = 64;
        s.experts.experts = 256;
        s.experts.tokensPerRank = 20000;
        tab.setScenario(s);
        tab.refreshNow();
        // refreshNow() returned before the routing did: the old 4 x 4 matrix is still shown
        // and the tab says a result is pending.
        QVERIFY(tab.refreshPending());
        QCOMPARE(tab.heatmap()->matrix().rows(), Eigen::Index(4));
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.heatmap()->matrix().rows(), Eigen::Index(64));
        checkAgainstCore(tab);
    }

    void aMovedSliderPreviewsALargeRoutingUntilItRests()
    {
        ExpertsTab tab;
        // The slider rests only when the test says so (a slow build must not see it rest).
        tab.setSettleInterval(3600 * 1000);
        settle(tab, kWorkerTimeoutMs);
        core::Scenario s;
        s.experts.ranks = 16;
        s.experts.experts = 64;
        s.experts.tokensPerRank = 20000; // 640,000 slots: a preview routes 8,192 of each rank
        s.experts.capacityFactor = 1.25;
        tab.setScenario(s);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(!tab.refinementPending());
        checkAgainstCore(tab);

        // Dragged: each step routes the first 8,192 tokens of each rank, scaled up.
        QSlider* slider = tab.control("experts.skew")->slider();
        slider->setSliderDown(true);
        for (int step = 1; step <= 2; ++step) {
            slider->setSliderPosition(slider->value() + 1); // what a mouse move does
            settle(tab, kWorkerTimeoutMs);
            QVERIFY(tab.refinementPending());
            const core::ExpertsResult preview = core::previewExperts(tab.inputs());
            QCOMPARE(preview.previewTokensPerRank, std::int64_t(8192));
            const Eigen::MatrixXd& m = tab.heatmap()->matrix();
            for (Eigen::Index r = 0; r < 16; ++r)
                for (Eigen::Index c = 0; c < 16; ++c)
                    QCOMPARE(m(r, c), double(preview.counts[std::size_t(r)][std::size_t(c)]));
            // Said once, above the charts (a longer map title would wrap in projector type
            // and move the map at every preview and back).
            QCOMPARE(tab.heatmap()->title(),
                     QString("Token slots sent from each rank to each rank"));
            QVERIFY(tab.figuresLabel()->text().contains("the first 8,192 of the 20,000 tokens"));
        }
        // Let go: the exact routing, as core gives it.
        slider->setSliderDown(false);
        QVERIFY(tab.refreshPending());
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(!tab.refinementPending());
        QVERIFY(!tab.figuresLabel()->text().contains("Preview"));
        checkAgainstCore(tab);

        // The capacity factor reuses the routing's draws: exact at once, no preview.
        QSlider* capacity = tab.control("experts.capacity_factor")->slider();
        capacity->setSliderDown(true);
        capacity->setSliderPosition(capacity->value() + 1);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(!tab.refinementPending());
        checkAgainstCore(tab);
        capacity->setSliderDown(false);

        // A key press previews as well; an export or a test that waits for the tab gets the
        // exact routing at once.
        slider->setFocus();
        QTest::keyClick(slider, Qt::Key_PageUp);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(tab.refinementPending());
        tab.waitForIdle();
        QVERIFY(!tab.refinementPending());
        QVERIFY(!tab.refreshPending());
        checkAgainstCore(tab);

        // At rest: kSettleMs after the last key the exact routing replaces the preview alone.
        tab.setSettleInterval(ExpertsTab::kSettleMs);
        QTest::keyClick(slider, Qt::Key_PageDown);
        QTRY_VERIFY_WITH_TIMEOUT(!tab.refreshPending() && !tab.refinementPending(),
                                 kWorkerTimeoutMs);
        checkAgainstCore(tab);
    }

    void staleResultsAreDropped()
    {
        ExpertsTab tab;
        settle(tab, kWorkerTimeoutMs);
        QSignalSpy refreshed(&tab, &Tab::refreshed);
        // Three requests without a turn of the event loop: only the last one is drawn.
        for (double skew : {0.5, 1.5, 2.5}) {
            tab.control("experts.skew")->setValue(skew);
            tab.refreshNow();
        }
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(refreshed.count(), 1);
        QCOMPARE(tab.inputs().skew, 2.5);
        checkAgainstCore(tab);
    }

    void exportsFillTheCanvas_data()
    {
        QTest::addColumn<core::Scenario>("scenario");
        QTest::addColumn<QString>("suffix");
        QTest::newRow("defaults") << core::Scenario{} << "";
        QTest::newRow("exercise") << exerciseScenario() << "-exercise";
        core::Scenario big;
        big.experts.ranks = 64;
        big.experts.experts = 256;
        big.experts.tokensPerRank = 4096;
        big.experts.capacityFactor = 1.25;
        big.experts.popularity = core::ExpertPopularity::ById;
        QTest::newRow("64 ranks, capacity") << big << "-64ranks";
    }

    void exportsFillTheCanvas()
    {
        QFETCH(core::Scenario, scenario);
        QFETCH(QString, suffix);
        ExpertsTab tab; // never shown: the export lays the charts out itself
        tab.setScenario(scenario);
        tab.waitForIdle();
        QVERIFY(!tab.refreshPending());
        checkAgainstCore(tab);
        // SCALELAB_EXPORT_DIR keeps the images for a look; otherwise they go to a temporary
        // folder.
        QTemporaryDir temporary;
        const QString dir = qEnvironmentVariable("SCALELAB_EXPORT_DIR", temporary.path());
        QDir().mkpath(dir);
        QCOMPARE(tab.charts().size(), 3);
        for (ChartPanel* chart : tab.charts()) {
            const QString path = QDir(dir).filePath(chart->name() + suffix + ".png");
            QCOMPARE(exportCharts({ExportJob{chart, path, ImageFormat::Png, {1600, 1000}}}),
                     QString());
            const QImage image(path);
            QCOMPARE(image.size(), QSize(1600, 1000));
            const QSizeF span = drawnSpan(image);
            QVERIFY2(
                span.width() > 0.9 && span.height() > 0.9,
                qPrintable(QString("%1: %2 x %3").arg(path).arg(span.width()).arg(span.height())));
        }
        QCOMPARE(tab.charts()[0]->name(), QString("experts-heatmap"));
        QCOMPARE(tab.charts()[1]->name(), QString("experts-load"));
        QCOMPARE(tab.charts()[2]->name(), QString("experts-ranks"));
    }

    void scenarioValuesBeyondTheSliderAreKept()
    {
        core::Scenario s;
        s.experts.ranks = 100; // the sliders stop at 64 ranks, 256 experts, top-8, skew 4
        s.experts.experts = 300;
        s.experts.topK = 10;
        s.experts.tokensPerRank = 1000;
        s.experts.skew = 6.5;
        s.experts.seed = 123456;
        s.experts.capacityFactor = 0.5;
        ExpertsTab tab;
        tab.setScenario(s);
        const core::Scenario& back = tab.scenario();
        QCOMPARE(back.experts.ranks, std::int64_t(100));
        QCOMPARE(back.experts.experts, std::int64_t(300));
        QCOMPARE(back.experts.topK, std::int64_t(10));
        QCOMPARE(back.experts.tokensPerRank, std::int64_t(1000));
        QCOMPARE(back.experts.skew, 6.5);
        QCOMPARE(back.experts.seed, std::int64_t(123456));
        QCOMPARE(back.experts.capacityFactor, 0.5);
        settle(tab, kWorkerTimeoutMs);
        checkAgainstCore(tab);
        // Another input's edit keeps them: only a move of what a range follows clamps.
        tab.control("experts.seed")->setValue(7);
        QCOMPARE(tab.inputs().experts, std::int64_t(300));
        QCOMPARE(tab.inputs().topK, std::int64_t(10));
        QCOMPARE(tab.inputs().capacityFactor, 0.5);
        QVERIFY(tab.findChild<QCheckBox*>("experts.capacity")->isChecked());
    }

    void anOwnerMapFromAFileIsKept()
    {
        // Six experts over four ranks in no order: allowed with an explicit map.
        core::Scenario s;
        s.experts.experts = 6;
        s.experts.expertToRank = std::vector<std::int64_t>{3, 1, 0, 2, 0, 1};
        ExpertsTab tab;
        tab.setScenario(s);
        settle(tab, kWorkerTimeoutMs);
        const core::Scenario& back = tab.scenario();
        QCOMPARE(back.experts.expertToRank, s.experts.expertToRank);
        QCOMPARE(back.experts.experts, std::int64_t(6));
        checkAgainstCore(tab);
        // A new rank count cannot keep it: back to equal blocks.
        tab.control("experts.ranks")->setValue(3);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(!tab.inputs().expertToRank);
        QCOMPARE(tab.inputs().experts, std::int64_t(6));
        checkAgainstCore(tab);
    }

    // --- The tab as a view of the document -------------------------------------------------

    void widgetOnlyInputsAreInTheDocumentAndUndoable()
    {
        ExpertsTab tab;
        document::ScenarioDocument* doc = tab.document();
        QUndoStack* undo = doc->undoStack();
        const auto experts = [doc] {
            return doc->scenario().experts;
        };

        // Popularity: a check box over a choice of two.
        auto* byId = tab.findChild<QCheckBox*>("experts.popularity");
        QVERIFY(byId);
        byId->setChecked(true);
        QCOMPARE(experts().popularity, core::ExpertPopularity::ById);
        QCOMPARE(tab.preset(), ExpertsTab::OneHotRank);
        undo->undo();
        QCOMPARE(experts().popularity, core::ExpertPopularity::Shuffled);
        QVERIFY(!byId->isChecked());
        QCOMPARE(tab.findChild<QComboBox*>("experts.preset")->currentIndex(),
                 int(ExpertsTab::Zipf));

        // The capacity box: a face of capacity_factor, 0 = no limit.
        auto* limit = tab.findChild<QCheckBox*>("experts.capacity");
        QVERIFY(limit);
        ParameterControl* factor = tab.control("experts.capacity_factor");
        QCOMPARE(factor->value(), document::experts::kUnlimitedShownFactor);
        limit->setChecked(true);
        QCOMPARE(experts().capacityFactor, document::experts::kUnlimitedShownFactor);
        undo->undo();
        QCOMPARE(experts().capacityFactor, 0.0);
        QVERIFY(!limit->isChecked());
        QCOMPARE(factor->value(), document::experts::kUnlimitedShownFactor);
        QCOMPARE(factor->spec().minimum, 1.0);

        // Hidden size and bytes per value: display settings of the scenario.
        tab.control("experts.hidden")->setValue(1024);
        tab.control("experts.bytes_per_value")->setValue(1);
        QCOMPARE(doc->scenario().expertsDisplay.hidden, std::int64_t(1024));
        QCOMPARE(doc->scenario().expertsDisplay.bytesPerValue, std::int64_t(1));
        undo->undo();
        QCOMPARE(tab.control("experts.bytes_per_value")->value(), 2.0);
        undo->undo();
        QCOMPARE(tab.control("experts.hidden")->value(), 4096.0);
        QCOMPARE(doc->scenario(), core::Scenario{});

        // The preset box: one undo step, and the box names the values it comes back to.
        choosePreset(tab, ExpertsTab::OneHotExpert);
        QCOMPARE(experts().skew, 3.0);
        undo->undo();
        QCOMPARE(experts().skew, 1.0);
        QCOMPARE(tab.findChild<QComboBox*>("experts.preset")->currentIndex(),
                 int(ExpertsTab::Zipf));
        undo->redo();
        QCOMPARE(tab.findChild<QComboBox*>("experts.preset")->currentIndex(),
                 int(ExpertsTab::OneHotExpert));
        // "Custom" changes nothing, and the box goes back to what the values are.
        choosePreset(tab, ExpertsTab::Custom);
        QCOMPARE(tab.findChild<QComboBox*>("experts.preset")->currentIndex(),
                 int(ExpertsTab::OneHotExpert));
    }

    void everyControlIsSavedAndOpenedExactly()
    {
        ExpertsTab tab;
        tab.findChild<QCheckBox*>("experts.popularity")->setChecked(true);
        tab.findChild<QCheckBox*>("experts.capacity")->setChecked(true);
        tab.control("experts.capacity_factor")->setValue(1.5);
        tab.control("experts.hidden")->setValue(2048);
        tab.control("experts.bytes_per_value")->setValue(4);
        tab.control("experts.seed")->setValue(9);
        const QJsonObject json = document::scenarioToJson(tab.scenario());
        const QJsonObject experts = json.value("experts").toObject();
        QCOMPARE(experts.value("hidden").toInteger(), 2048);
        QCOMPARE(experts.value("bytes_per_value").toInteger(), 4);
        QCOMPARE(experts.value("popularity").toString(), QString("by_id"));
        QCOMPARE(experts.value("capacity_factor").toDouble(), 1.5);
        QVERIFY(!experts.contains("capacity")); // the box is the factor, not a key

        ExpertsTab reopened;
        reopened.setScenario(document::scenarioFromJson(json));
        QCOMPARE(reopened.scenario(), tab.scenario());
        for (ParameterControl* c : tab.controls())
            QCOMPARE(reopened.control(c->spec().key)->value(), c->value());
        for (const char* key : {"experts.popularity", "experts.capacity"})
            QCOMPARE(reopened.findChild<QCheckBox*>(key)->isChecked(),
                     tab.findChild<QCheckBox*>(key)->isChecked());
        QCOMPARE(reopened.preset(), ExpertsTab::OneHotRank);
    }

    // --- The section's rules, without widgets ----------------------------------------------

    void expertsSnapToAMultipleOfTheRanks_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("experts");
        QTest::addColumn<QString>("key");
        QTest::addColumn<double>("value");
        QTest::addColumn<int>("expectedRanks");
        QTest::addColumn<int>("expectedExperts");
        QTest::newRow("new ranks: up to a multiple")
            << 4 << 16 << "experts.ranks" << 5.0 << 5 << 20;
        QTest::newRow("experts up: next multiple")
            << 5 << 20 << "experts.experts" << 21.0 << 5 << 25;
        QTest::newRow("experts down: multiple below")
            << 5 << 25 << "experts.experts" << 24.0 << 5 << 20;
        QTest::newRow("ranks past the experts") << 5 << 20 << "experts.ranks" << 48.0 << 48 << 48;
        QTest::newRow("fewer ranks keep a multiple")
            << 4 << 16 << "experts.ranks" << 2.0 << 2 << 16;
        QTest::newRow("last multiple of the slider")
            << 64 << 64 << "experts.experts" << 256.0 << 64 << 256;
        QTest::newRow("above the slider: its end")
            << 48 << 48 << "experts.experts" << 245.0 << 48 << 240;
    }

    void expertsSnapToAMultipleOfTheRanks()
    {
        QFETCH(int, ranks);
        QFETCH(int, experts);
        QFETCH(QString, key);
        QFETCH(double, value);
        QFETCH(int, expectedRanks);
        QFETCH(int, expectedExperts);
        core::Scenario s;
        s.experts.ranks = ranks;
        s.experts.experts = experts;
        document::ScenarioDocument doc(s);
        doc.setValue(key, value);
        QCOMPARE(doc.scenario().experts.ranks, std::int64_t(expectedRanks));
        QCOMPARE(doc.scenario().experts.experts, std::int64_t(expectedExperts));
        QCOMPARE(doc.scenario().experts.experts % doc.scenario().experts.ranks, std::int64_t(0));
    }

    void rangesFollowTheirInputs()
    {
        using namespace document;
        core::Scenario s;
        s.experts.ranks = 48;
        QCOMPARE(findField(u"experts.experts")->maximumIn(s), 240.0);
        s.experts.experts = 3;
        QCOMPARE(findField(u"experts.top_k")->maximumIn(s), 3.0);
        s.experts.experts = 64;
        QCOMPARE(findField(u"experts.top_k")->maximumIn(s), 8.0);
        s.experts.ranks = 64;
        s.experts.topK = 8;
        QCOMPARE(findField(u"experts.tokens_per_rank")->maximumIn(s),
                 double(core::kMaxRoutedSlots / (64 * 8)));
        s.experts.ranks = 1;
        s.experts.topK = 1;
        QCOMPARE(findField(u"experts.tokens_per_rank")->maximumIn(s),
                 double(experts::kTokensSlider));

        // Top-k follows the experts, tokens follow ranks x top-k.
        core::Scenario d;
        d.experts.ranks = 1;
        d.experts.topK = 8;
        d.experts.tokensPerRank = 1'000'000;
        ScenarioDocument doc(d);
        doc.setValue("experts.experts", 3);
        QCOMPARE(doc.scenario().experts.topK, std::int64_t(3));
        doc.setValue("experts.ranks", 64);
        QCOMPARE(doc.scenario().experts.experts, std::int64_t(64));
        QCOMPARE(doc.scenario().experts.tokensPerRank, core::kMaxRoutedSlots / (64 * 3));
        QVERIFY(core::routeExperts(doc.scenario().experts).totalSlots <= core::kMaxRoutedSlots);
    }

    void valuesBeyondTheSliderWaitForWhatTheyFollow()
    {
        core::Scenario s;
        s.experts.ranks = 100;
        s.experts.experts = 300;
        s.experts.topK = 10;
        document::ScenarioDocument doc(s);
        doc.setValue("experts.skew", 2);
        QCOMPARE(doc.scenario().experts.experts, std::int64_t(300));
        QCOMPARE(doc.scenario().experts.topK, std::int64_t(10));
        doc.setValue("experts.ranks", 50); // the experts' range moves: 250 at most
        QCOMPARE(doc.scenario().experts.experts, std::int64_t(250));
        QCOMPARE(doc.scenario().experts.topK, std::int64_t(8)); // and so does top-k's
    }

    void explicitListsLastWhileTheyFit()
    {
        // An owner map survives edits that keep ranks and experts; a new rank count drops it.
        core::Scenario s;
        s.experts.experts = 6;
        s.experts.expertToRank = std::vector<std::int64_t>{3, 1, 0, 2, 0, 1};
        document::ScenarioDocument doc(s);
        doc.setValue("experts.skew", 0.5);
        QCOMPARE(doc.scenario().experts.expertToRank, s.experts.expertToRank);
        QCOMPARE(doc.scenario().experts.experts, std::int64_t(6)); // not snapped: the map owns them
        doc.setValue("experts.ranks", 3);
        QVERIFY(!doc.scenario().experts.expertToRank);
        QCOMPARE(doc.scenario().experts.experts, std::int64_t(6));

        // Explicit assignments give way to any router input, not to capacity or slot size.
        document::ScenarioDocument exercise(exerciseScenario());
        exercise.setValue("experts.capacity_factor", 2);
        exercise.setValue("experts.hidden", 512);
        QVERIFY(exercise.scenario().experts.assignments);
        QVERIFY(exercise.scenario().experts.expertToRank);
        for (const char* key : {"experts.seed", "experts.popularity", "experts.top_k"}) {
            document::ScenarioDocument d(exerciseScenario());
            d.setValue(key, key == QString("experts.top_k") ? 1 : 1.0 + d.value(key));
            QVERIFY2(!d.scenario().experts.assignments, key);
            QVERIFY2(d.scenario().experts.expertToRank, key); // ranks and experts unchanged
        }
    }

    void capacityBoxAndFactorAreOneNumber()
    {
        document::ScenarioDocument doc;
        const auto factor = [&doc] {
            return doc.scenario().experts.capacityFactor;
        };
        QCOMPARE(doc.value("experts.capacity"), 0.0);
        doc.setValue("experts.capacity", 1);
        QCOMPARE(factor(), document::experts::kUnlimitedShownFactor);
        doc.setValue("experts.capacity_factor", 2);
        doc.setValue("experts.capacity", 1); // already on: the factor stays
        QCOMPARE(factor(), 2.0);
        doc.setValue("experts.capacity", 0);
        QCOMPARE(factor(), 0.0);
        doc.setValue("experts.capacity_factor", 3); // moving the factor turns the limit on
        QCOMPARE(factor(), 3.0);
        QCOMPARE(doc.value("experts.capacity"), 1.0);
        QVERIFY(!document::findField(u"experts.capacity")->saved);
    }

    void presetsWithoutWidgets()
    {
        QCOMPARE(ExpertsTab::presetOf(core::ExpertsInputs{}), ExpertsTab::Zipf);
        QCOMPARE(ExpertsTab::presetOf(exerciseScenario().experts), ExpertsTab::ChapterExercise);
        core::ExpertsInputs custom;
        custom.skew = 0.5;
        QCOMPARE(ExpertsTab::presetOf(custom), ExpertsTab::Custom);

        // The exercise through the document keeps its lists and fits top-k to its 4 experts.
        core::Scenario s;
        s.experts.topK = 8;
        document::ScenarioDocument doc(s);
        doc.edit(core::Section::Experts, "exercise", [](core::Scenario& x) {
            ExpertsTab::applyPreset(x, ExpertsTab::ChapterExercise);
        });
        QCOMPARE(doc.scenario().experts.assignments, exerciseScenario().experts.assignments);
        QCOMPARE(doc.scenario().experts.expertToRank, exerciseScenario().experts.expertToRank);
        QCOMPARE(doc.scenario().experts.topK, std::int64_t(4));
        QCOMPARE(ExpertsTab::presetOf(doc.scenario().experts), ExpertsTab::ChapterExercise);
        // A router preset leaves it.
        doc.edit(core::Section::Experts, "one hot expert",
                 [](core::Scenario& x) { ExpertsTab::applyPreset(x, ExpertsTab::OneHotExpert); });
        QVERIFY(!doc.scenario().experts.assignments);
        QVERIFY(!doc.scenario().experts.expertToRank);
        QCOMPARE(ExpertsTab::presetOf(doc.scenario().experts), ExpertsTab::OneHotExpert);
    }

    void refusedInputsKeepTheLastCharts()
    {
        ExpertsTab tab;
        settle(tab, kWorkerTimeoutMs);
        const Eigen::MatrixXd before = tab.heatmap()->matrix();
        core::Scenario s;
        s.experts.expertToRank = std::vector<std::int64_t>{0, 1, 2}; // 16 experts need 16 owners
        tab.setScenario(s);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(tab.messageLabel()->isVisibleTo(&tab));
        QVERIFY2(tab.messageLabel()->text().contains("experts.expert_to_rank"),
                 qPrintable(tab.messageLabel()->text()));
        QCOMPARE(tab.heatmap()->matrix(), before);
        // Redrawing for another slot size keeps saying so.
        tab.control("experts.hidden")->setValue(1024);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(tab.messageLabel()->isVisibleTo(&tab));
        QCOMPARE(tab.heatmap()->matrix(), before);
        // A routing still on its way when the inputs turn bad is not drawn over the refusal.
        core::Scenario slow;
        slow.experts.ranks = 64;
        slow.experts.experts = 256;
        slow.experts.tokensPerRank = 20000;
        tab.setScenario(slow);
        tab.refreshNow();
        QVERIFY(tab.refreshPending());
        tab.setScenario(s);
        settle(tab, kWorkerTimeoutMs);
        QVERIFY(tab.messageLabel()->isVisibleTo(&tab));
        QCOMPARE(tab.heatmap()->matrix(), before);
    }
};

QTEST_MAIN(TstExpertsTab)
#include "tst_expertstab.moc"
