// The expert-routing tab: every chart shows exactly what core routes, including the chapter's
// exercise, while heavy routing runs off the GUI thread.

#include "chartexport.h"
#include "chartpanel.h"
#include "explanationpanel.h"
#include "format.h"
#include "parametercontrol.h"
#include "scalelab/core/experts.h"
#include "expertstab.h"
#include "testhelpers.h"
#include "heatmappanel.h"

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
        core::Scenario back;
        tab.writeScenario(back);
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
        core::Scenario scenario;
        tab.writeScenario(scenario);
        const core::ExpertsInputs& now = scenario.experts;
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
        box->setChecked(true);
        tab.control("experts.capacity_factor")->setValue(1.0);
        settle(tab, kWorkerTimeoutMs);
        QCOMPARE(tab.inputs().capacityFactor, 1.0);
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
        core::Scenario back;
        tab.writeScenario(back);
        QCOMPARE(back.experts.ranks, std::int64_t(100));
        QCOMPARE(back.experts.experts, std::int64_t(300));
        QCOMPARE(back.experts.topK, std::int64_t(10));
        QCOMPARE(back.experts.tokensPerRank, std::int64_t(1000));
        QCOMPARE(back.experts.skew, 6.5);
        QCOMPARE(back.experts.seed, std::int64_t(123456));
        QCOMPARE(back.experts.capacityFactor, 0.5);
        settle(tab, kWorkerTimeoutMs);
        checkAgainstCore(tab);
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
        core::Scenario back;
        tab.writeScenario(back);
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
