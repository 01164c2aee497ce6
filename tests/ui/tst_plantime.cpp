// The plan tab's second part: the step time of the plan shown, term by term, and the layout
// search on its worker thread, each figure against core's for the same plan.

#include "chartpanel.h"
#include "format.h"
#include "planpresets.h"
#include "plansearchpanel.h"
#include "plantab.h"
#include "scalelab/core/layoutsearch.h"
#include "scalelab/core/steptime.h"
#include "scenariodocument.h"
#include "testhelpers.h"

#include <QAbstractBarSeries>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QScatterSeries>
#include <QTabBar>
#include <QTableWidget>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>

using namespace scalelab;
using namespace scalelab::ui;
using namespace scalelab::test;

namespace {

constexpr double kGiB = 1073741824.0;

/// Core's search for the same plan; the result does not depend on the thread count.
core::LayoutSearchResult coreSearch(const core::PlanInputs& plan)
{
    core::LayoutSearchOptions options;
    options.threads = 2;
    return core::searchLayouts(plan, options);
}

QList<QBarSet*> termSets(PlanTab& tab)
{
    for (QAbstractSeries* s : tab.timeChart()->chart()->series())
        if (auto* bars = qobject_cast<QAbstractBarSeries*>(s))
            return bars->barSets();
    return {};
}

QList<QScatterSeries*> scatters(PlanTab& tab)
{
    QList<QScatterSeries*> out;
    for (QAbstractSeries* s : tab.searchChart()->chart()->series())
        if (auto* scatter = qobject_cast<QScatterSeries*>(s))
            out << scatter;
    return out;
}

QScatterSeries* scatterNamed(PlanTab& tab, const QString& name)
{
    for (QScatterSeries* s : scatters(tab))
        if (s->name() == name)
            return s;
    return nullptr;
}

/// The series of fitting layouts: every scatter but the non-fitting one and the two markers.
QList<QScatterSeries*> fittingSeries(PlanTab& tab)
{
    QList<QScatterSeries*> out;
    for (QScatterSeries* s : scatters(tab))
        if (s->name().startsWith(QString::fromUtf8("t\u00b7p")))
            out << s;
    return out;
}

PlanTab* loaded(const QString& preset)
{
    auto* tab = new PlanTab;
    if (!preset.isEmpty())
        tab->applyPreset(preset);
    tab->document()->setValue("plan.part", static_cast<double>(PlanTab::Part::Time));
    tab->waitForIdle();
    return tab;
}

} // namespace

class TstPlanTime : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { useOwnSettings("tst_plantime"); }

    void stepTimeIsCoresTermByTerm_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::newRow("defaults") << QString();
        QTest::newRow("Korthikanti 175B") << "korthikanti-175b";
        QTest::newRow("Mixtral") << "mixtral-8x7b";
    }

    void stepTimeIsCoresTermByTerm()
    {
        QFETCH(QString, preset);
        std::unique_ptr<PlanTab> tab(loaded(preset));
        const core::StepTime expected = core::computeStepTime(tab->inputs());
        const core::StepTime& shown = tab->shownTime();
        QCOMPARE(shown.total, expected.total);
        QCOMPARE(shown.mfu, expected.mfu);
        // The "Yours" bar (category 1) stacks the terms that add up to the step time.
        const QList<QBarSet*> sets = termSets(*tab);
        const double terms[] = {expected.forward,       expected.backward,
                                expected.recompute,     expected.tensorParallel,
                                expected.expert,        expected.bubble,
                                expected.pipelineSends, expected.dataParallelExposed};
        QCOMPARE(sets.size(), qsizetype(std::size(terms)));
        double sum = 0;
        for (qsizetype i = 0; i < sets.size(); ++i) {
            QCOMPARE(sets[i]->at(1), terms[i]);
            sum += sets[i]->at(1);
        }
        QVERIFY(std::abs(sum - expected.total) <= 1e-12 * expected.total);
        // The fastest layout's bar is the search's first.
        const core::LayoutSearchResult* result = tab->searchResult();
        QVERIFY(result);
        QVERIFY(!result->ranked.empty());
        QCOMPARE(sets[0]->at(0), result->ranked.front().time.forward);
        QCOMPARE(sets[5]->at(0), result->ranked.front().time.bubble);
        QVERIFY(tab->figuresLabel()->text().contains(
            QString("step %1 s").arg(formatNumber(expected.total))));
    }

    void searchIsCoresRankedAndDrawn()
    {
        std::unique_ptr<PlanTab> tab(loaded("korthikanti-175b"));
        const core::LayoutSearchResult* shown = tab->searchResult();
        QVERIFY(shown);
        const core::LayoutSearchResult expected = coreSearch(tab->inputs());
        QCOMPARE(shown->fitting, expected.fitting);
        QCOMPARE(shown->enumerated, expected.enumerated);
        QCOMPARE(shown->ranked.size(), expected.ranked.size());
        for (std::size_t i = 0; i < expected.ranked.size(); ++i) {
            QVERIFY(shown->ranked[i].key == expected.ranked[i].key);
            QCOMPARE(shown->ranked[i].time.total, expected.ranked[i].time.total);
        }
        // The table: the ten best, in order, with their layouts and step times.
        QTableWidget* table = tab->searchPanel()->table();
        QCOMPARE(table->rowCount(), 10);
        for (int row = 0; row < 10; ++row) {
            const core::RankedLayout& r = expected.ranked[static_cast<std::size_t>(row)];
            QCOMPARE(table->item(row, 1)->text(), PlanSearchPanel::layoutText(r.key));
            QCOMPARE(table->item(row, 3)->text(), formatNumber(r.time.total) + " s");
        }
        // The scatter: every fitting layout in its t x p colour, drawn or covered by one drawn
        // within a cell of the thinning grid (kScatterCells over the points' log ranges); every
        // point drawn is a layout of the search's. The star on the fastest.
        double lo = 1e300, hi = 0, memLo = 1e300, memHi = 0;
        qsizetype nonFitting = 0;
        for (const core::LayoutPoint& pt : expected.scatter) {
            if (!(pt.stepSeconds > 0) || !std::isfinite(pt.memoryBytes))
                continue;
            lo = std::min(lo, pt.stepSeconds);
            hi = std::max(hi, pt.stepSeconds);
            memLo = std::min(memLo, pt.memoryBytes / kGiB);
            memHi = std::max(memHi, pt.memoryBytes / kGiB);
            nonFitting += !pt.fits;
        }
        const double cellX = std::log10(hi / lo) / PlanTab::kScatterCells * 1.000001;
        const double cellY = std::log10(memHi / memLo) / PlanTab::kScatterCells * 1.000001;
        const QList<QScatterSeries*> bins = fittingSeries(*tab);
        const std::int64_t bounds[] = {1, 4, 16, 64, 256, 1024};
        qsizetype drawn = 0;
        for (QScatterSeries* s : bins)
            drawn += s->count();
        QVERIFY(drawn > 0 && drawn <= qsizetype(expected.fitting));
        for (const core::RankedLayout& r : expected.ranked) {
            const std::int64_t tp = r.key.t * r.key.p;
            qsizetype b = 0;
            while (b + 1 < qsizetype(std::size(bounds)) && tp >= bounds[b + 1])
                ++b;
            bool covered = false;
            for (const QPointF& q : bins[b]->points())
                covered = covered
                    || (std::abs(std::log10(q.x() / r.time.total)) <= cellX
                        && std::abs(std::log10(q.y() / (r.memoryBytes / kGiB))) <= cellY);
            QVERIFY2(covered, qPrintable(PlanSearchPanel::layoutText(r.key)));
        }
        for (QScatterSeries* s : bins)
            for (const QPointF& q : s->points()) {
                bool isALayout = false;
                for (const core::RankedLayout& r : expected.ranked)
                    isALayout =
                        isALayout || (q.x() == r.time.total && q.y() == r.memoryBytes / kGiB);
                QVERIFY(isALayout);
            }
        QScatterSeries* others = scatterNamed(*tab, "Does not fit");
        QVERIFY(others);
        QVERIFY(others->count() > 0 && others->count() <= nonFitting);
        QScatterSeries* best = scatterNamed(*tab, "Fastest");
        QCOMPARE(best->count(), 1);
        QCOMPARE(best->at(0).x(), expected.ranked.front().time.total);
        QCOMPARE(best->at(0).y(), expected.ranked.front().memoryBytes / kGiB);
        QScatterSeries* yours = scatterNamed(*tab, "Yours");
        QCOMPARE(yours->count(), 1);
        QCOMPARE(yours->at(0).x(), tab->shownTime().total);
    }

    void yourRankIsNamed()
    {
        std::unique_ptr<PlanTab> tab(loaded("korthikanti-175b"));
        const core::LayoutSearchResult* result = tab->searchResult();
        QVERIFY(result);
        const core::LayoutKey mine = core::layoutOf(tab->inputs());
        int rank = -1;
        for (std::size_t i = 0; i < result->ranked.size(); ++i)
            if (result->ranked[i].key == mine)
                rank = static_cast<int>(i);
        QVERIFY(rank > 0); // the paper's layout fits but is not the fastest here
        QCOMPARE(tab->searchPanel()->yourRank(), rank);
        QVERIFY2(tab->searchPanel()->headingLabel()->text().contains(formatWhole(rank + 1)),
                 qPrintable(tab->searchPanel()->headingLabel()->text()));
    }

    void enterOnARowLoadsItsLayoutAsOneUndoStep()
    {
        std::unique_ptr<PlanTab> tab(loaded("korthikanti-175b"));
        const core::PlanInputs before = tab->inputs();
        const core::LayoutSearchResult* result = tab->searchResult();
        QVERIFY(result);
        const core::LayoutKey third = result->ranked[2].key;
        QTableWidget* table = tab->searchPanel()->table();
        table->setFocus();
        table->setCurrentCell(2, 1);
        QTest::keyClick(table, Qt::Key_Return);
        tab->waitForIdle();
        QVERIFY(tab->inputs() == core::withLayout(before, third));
        QVERIFY(core::layoutOf(tab->inputs()) == third);
        // Only the layout changed: the search is not run again, and the loaded one ranks third.
        QCOMPARE(tab->searchResult(), result);
        QCOMPARE(tab->searchPanel()->yourRank(), 2);
        // Its row, and only its row, reads in bold (the paper's own layout is not among the ten).
        const auto boldRows = [table] {
            QList<int> rows;
            for (int row = 0; row < table->rowCount(); ++row)
                if (table->item(row, 1)->font().bold() && table->item(row, 0)->font().bold())
                    rows << row;
            return rows;
        };
        QCOMPARE(boldRows(), QList<int>{2});
        tab->document()->undoStack()->undo();
        tab->waitForIdle();
        QVERIFY(tab->inputs() == before);
        QCOMPARE(boldRows(), QList<int>{});
    }

    void aClickOnTheScatterLoadsThatLayout()
    {
        std::unique_ptr<PlanTab> tab(loaded(QString()));
        const core::PlanInputs before = tab->inputs();
        // The first point of the first bin that has one, clicked a hair off its centre.
        for (QScatterSeries* s : fittingSeries(*tab)) {
            if (s->count() == 0)
                continue;
            const QPointF p = s->at(0);
            emit s->clicked(QPointF(p.x() * 1.0001, p.y() * 0.9999));
            tab->waitForIdle();
            QVERIFY(!(tab->inputs() == before));
            const core::PlanResult r = core::computePlan(tab->inputs());
            QCOMPARE(core::computeStepTime(tab->inputs()).total, p.x());
            QCOMPARE(r.peakBytesPerGpu.value() / kGiB, p.y());
            return;
        }
        QFAIL("no fitting layout in the scatter");
    }

    void onlyWhatTheSearchVariesOverSearchesAgain()
    {
        std::unique_ptr<PlanTab> tab(loaded(QString()));
        const core::LayoutSearchResult* first = tab->searchResult();
        QVERIFY(first);
        // A layout key: the same search.
        QVERIFY(tab->document()->setValue("plan.tensor_parallel", 4));
        tab->waitForIdle();
        QCOMPARE(tab->searchResult(), first);
        // The GPU count: a new one, which matches core's for the new plan.
        QVERIFY(tab->document()->setValue("plan.gpus", 128));
        tab->waitForIdle();
        QVERIFY(tab->searchResult() != first);
        QCOMPARE(tab->searchResult()->fitting, coreSearch(tab->inputs()).fitting);
    }

    void aKeptKeySearchesWithinIt()
    {
        std::unique_ptr<PlanTab> tab(loaded(QString()));
        tab->show();
        QVERIFY(QTest::qWaitForWindowExposed(tab.get()));
        const core::LayoutSearchResult* all = tab->searchResult();
        QVERIFY(all);
        const std::int64_t allFitting = all->fitting;
        // The check box is the document's key: checking it searches ZeRO-1 layouts only.
        auto* box = tab->findChild<QCheckBox*>("plan.search_keep.zero_stage");
        QVERIFY(box);
        QVERIFY(!box->isChecked());
        // By keyboard: the disclosure opens, and the check box, a Tab stop, takes Space.
        for (QToolButton* button : tab->findChildren<QToolButton*>())
            if (button->accessibleName() == "Show what the layout search keeps as yours")
                QTest::keyClick(button, Qt::Key_Space);
        QVERIFY(box->isVisible());
        QVERIFY(box->focusPolicy() & Qt::TabFocus);
        QTest::keyClick(box, Qt::Key_Space);
        tab->waitForIdle();
        QVERIFY(tab->inputs().searchKeep.zeroStage);
        const core::LayoutSearchResult* kept = tab->searchResult();
        QVERIFY(kept && kept->fitting != allFitting);
        QCOMPARE(kept->fitting, coreSearch(tab->inputs()).fitting);
        QVERIFY(kept->fitting > 0 && kept->fitting < allFitting);
        for (const core::RankedLayout& r : kept->ranked)
            QCOMPARE(r.key.zeroStage, std::int64_t{1});
        QVERIFY(tab->searchPanel()->headingLabel()->text().contains("Kept as yours: ZeRO-1"));
        // The scatter's title says so too, for an export read without the window.
        QCOMPARE(tab->searchChart()->title(),
                 QString("Every layout with ZeRO-1: memory against step time"));
        // Now the ZeRO stage is what the search covers: changing it searches again, while a
        // key it does not keep still does not.
        QVERIFY(tab->document()->setValue("plan.tensor_parallel", 4));
        tab->waitForIdle();
        QCOMPARE(tab->searchResult(), kept);
        QVERIFY(tab->document()->setValue("plan.zero_stage", 2));
        tab->waitForIdle();
        QVERIFY(tab->searchResult() != kept);
        for (const core::RankedLayout& r : tab->searchResult()->ranked)
            QCOMPARE(r.key.zeroStage, std::int64_t{2});
        // The table's rows (kept from the last search, new texts) are this search's ten.
        QTableWidget* table = tab->searchPanel()->table();
        QCOMPARE(table->rowCount(), 10);
        for (int row = 0; row < table->rowCount(); ++row) {
            const core::RankedLayout& r =
                tab->searchResult()->ranked[static_cast<std::size_t>(row)];
            QCOMPARE(table->item(row, 1)->text(), PlanSearchPanel::layoutText(r.key));
            QVERIFY(table->cellWidget(row, 6)->accessibleName().endsWith(
                PlanSearchPanel::layoutText(r.key)));
        }
        // One undo step each: back to ZeRO-1, then to the search that keeps nothing.
        tab->document()->undoStack()->undo();
        tab->document()->undoStack()->undo();
        tab->document()->undoStack()->undo();
        tab->waitForIdle();
        QVERIFY(!box->isChecked());
        QCOMPARE(tab->searchResult()->fitting, allFitting);
        QCOMPARE(tab->searchChart()->title(), QString("Every layout: memory against step time"));
    }

    void aRefusedLayoutStillGetsItsSearch()
    {
        std::unique_ptr<PlanTab> tab(loaded(QString()));
        // 5 does not divide 32 heads: the plan is refused, the layouts of its model are not.
        QVERIFY(tab->document()->setValue("plan.tensor_parallel", 5));
        QVERIFY(tab->document()->setValue("plan.gpus", 80));
        tab->waitForIdle();
        QVERIFY(tab->refused());
        const core::LayoutSearchResult* result = tab->searchResult();
        QVERIFY(result);
        QCOMPARE(result->fitting, coreSearch(tab->inputs()).fitting);
        QVERIFY(result->fitting > 0);
        QCOMPARE(tab->searchPanel()->yourRank(), -1);
        QVERIFY(tab->searchPanel()->headingLabel()->text().contains("refused"));
    }

    void whenNothingFitsTheClosestSayWhy()
    {
        std::unique_ptr<PlanTab> tab(loaded("korthikanti-175b"));
        QVERIFY(tab->document()->setValue("plan.gpu_memory_gib", 4));
        tab->waitForIdle();
        const core::LayoutSearchResult* result = tab->searchResult();
        QVERIFY(result);
        QCOMPARE(result->fitting, std::int64_t(0));
        QVERIFY(!result->closest.empty());
        QTableWidget* table = tab->searchPanel()->table();
        QCOMPARE(table->rowCount(), static_cast<int>(result->closest.size()));
        for (int row = 0; row < table->rowCount(); ++row)
            QCOMPARE(table->item(row, 5)->text(),
                     QString::fromStdString(result->closest[static_cast<std::size_t>(row)].reason));
        QVERIFY(scatterNamed(*tab, "Fastest")->count() == 0);
    }

    void thePartIsTheDocumentsAndUndone()
    {
        PlanTab tab;
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        QCOMPARE(tab.part(), PlanTab::Part::Memory);
        QVERIFY(tab.memoryChart()->isVisible());
        QVERIFY(!tab.searchChart()->isVisible());
        tab.partBar()->setCurrentIndex(1); // as a click or an arrow key on the bar does
        tab.waitForIdle();
        QCOMPARE(tab.scenario().planDisplay.part, core::PlanPart::Time);
        QCOMPARE(tab.part(), PlanTab::Part::Time);
        QVERIFY(tab.searchChart()->isVisible());
        QVERIFY(tab.searchPanel()->isVisible());
        QVERIFY(!tab.memoryChart()->isVisible());
        tab.document()->undoStack()->undo();
        tab.waitForIdle();
        QCOMPARE(tab.part(), PlanTab::Part::Memory);
        QCOMPARE(tab.partBar()->currentIndex(), 0);
        // A lesson step that outlines a chart of the other part brings that part on show.
        tab.reveal(tab.searchPanel()->table());
        tab.waitForIdle();
        QCOMPARE(tab.part(), PlanTab::Part::Time);
    }

    void aGpuTypeBringsItsMemory()
    {
        PlanTab tab;
        tab.waitForIdle();
        auto* box = tab.findChild<QComboBox*>("plan.hardware.gpu");
        QVERIFY(box);
        const double before = tab.inputs().gpuMemoryGib;
        const int h200 = static_cast<int>(core::GpuType::H200_141GB);
        box->setCurrentIndex(h200);
        emit box->activated(h200);
        tab.waitForIdle();
        QCOMPARE(tab.inputs().hardware.gpu, core::GpuType::H200_141GB);
        QCOMPARE(tab.inputs().gpuMemoryGib, core::gpuSpec(core::GpuType::H200_141GB).memoryGB);
        // One undo step takes both back.
        tab.document()->undoStack()->undo();
        tab.waitForIdle();
        QCOMPARE(tab.inputs().gpuMemoryGib, before);
        QCOMPARE(tab.inputs().hardware.gpu, core::HardwareInputs{}.gpu);
    }
};

QTEST_MAIN(TstPlanTime)
#include "tst_plantime.moc"
