// The plan tab's second part: how long one optimizer step takes (core's step-time model, term by
// term) and the search over every layout of the same model on the same GPUs, which runs on a
// worker thread whenever what it searches over changes (never for a layout slider: the layout
// is what it varies).

#include "backgroundrunner.h"
#include "chartdata.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "format.h"
#include "legendrows.h"
#include "parametercontrol.h"
#include "plancommunicationpanel.h"
#include "planpublishedpanel.h"
#include "plansearchpanel.h"
#include "plantab.h"

#include <QBarCategoryAxis>
#include <QBarLegendMarker>
#include <QBarSet>
#include <QChart>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFormLayout>
#include <QHash>
#include <QHorizontalStackedBarSeries>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSet>
#include <QSignalBlocker>
#include <QTabBar>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

namespace scalelab::ui {

namespace {

constexpr double kGiB = 1073741824.0;
constexpr int kDisclosureIndent = 12; ///< the controls behind a disclosure, from the left
constexpr double kPointSize = 8; ///< a layout's dot in the scatter
constexpr double kOtherPointSize = 6; ///< a layout that does not fit
constexpr double kBestSize = 24; ///< the fastest layout's star
constexpr double kYoursSize = 22; ///< the ring around the plan's own layout
constexpr double kLogPad = 1.05; ///< the scatter's axes reach this factor past the points
/// The search's worker leaves the other core to the window: a slider keeps its frame rate.
constexpr std::int64_t kSearchThreads = 1;

/// The colour bins of t x p in the scatter: [lower, upper) products.
struct Bin {
    std::int64_t lower;
    std::int64_t upper;
    QColor colour;
};
const Bin kBins[] = {
    {1, 4, palette::kBlue},
    {4, 16, palette::kSkyBlue},
    {16, 64, palette::kGreen},
    {64, 256, palette::kOrange},
    {256, 1024, palette::kPurple},
    {1024, std::numeric_limits<std::int64_t>::max(), palette::kVermillion},
};

/// The terms that add up to the step time, in the order they are stacked, with their colours.
struct Term {
    const char* name;
    double core::StepTime::*seconds;
    QColor colour;
};
const Term kTerms[] = {
    {QT_TRANSLATE_NOOP("scalelab::ui::PlanTab", "Forward"), &core::StepTime::forward,
     palette::kBlue},
    {QT_TRANSLATE_NOOP("scalelab::ui::PlanTab", "Backward"), &core::StepTime::backward,
     palette::kSkyBlue},
    {QT_TRANSLATE_NOOP("scalelab::ui::PlanTab", "Recomputation"), &core::StepTime::recompute,
     palette::kGreen},
    {QT_TRANSLATE_NOOP("scalelab::ui::PlanTab", "Tensor parallel"), &core::StepTime::tensorParallel,
     palette::kOrange},
    {QT_TRANSLATE_NOOP("scalelab::ui::PlanTab", "Expert all-to-all"), &core::StepTime::expert,
     palette::kPurple},
    {QT_TRANSLATE_NOOP("scalelab::ui::PlanTab", "Bubble"), &core::StepTime::bubble,
     QColor(190, 190, 190)},
    {QT_TRANSLATE_NOOP("scalelab::ui::PlanTab", "Pipeline sends"), &core::StepTime::pipelineSends,
     QColor(100, 100, 100)},
    {QT_TRANSLATE_NOOP("scalelab::ui::PlanTab", "Data parallel"),
     &core::StepTime::dataParallelExposed, palette::kVermillion},
};

QScatterSeries* scatter(const QString& name, const QColor& colour, double size,
                        QScatterSeries::MarkerShape shape = QScatterSeries::MarkerShapeCircle)
{
    auto* s = new QScatterSeries;
    s->setName(name);
    s->setColor(colour);
    s->setBorderColor(colour.darker(130));
    s->setMarkerSize(size);
    s->setMarkerShape(shape);
    return s;
}

} // namespace

void PlanTab::buildPartBar()
{
    m_partBar = addPartBar(
        "plan.part", tr("Part of the training plan tab"),
        {{tr("Memory and traffic"), tr("What one GPU holds and sends under this layout.")},
         {tr("Step time and the best layout"),
          tr("How long one optimizer step takes, and every other layout that fits, ranked.")}});
    connect(m_partBar, &QTabBar::currentChanged, this,
            [this](int i) { choosePart(static_cast<Part>(i)); });
    // The tab's from the start, so a part never shown is still deleted with it; hidden until
    // their part is on show: setCharts shows a chart hidden this way when it places it in the
    // grid (one added to a tab already on screen would stay hidden).
    for (const Part part : {Part::Memory, Part::Time})
        for (ChartPanel* chart : partCharts(part)) {
            chart->setParent(this);
            chart->hide();
        }
}

QList<ChartPanel*> PlanTab::partCharts(Part part) const
{
    if (part == Part::Time)
        return {m_searchChart, m_timeChart, m_search};
    return {m_memory, m_recompute, m_communication, m_published};
}

void PlanTab::showPart(Part part)
{
    const bool changed = part != m_part;
    m_part = part;
    if (m_partBar->currentIndex() != static_cast<int>(part)) {
        const QSignalBlocker quiet(m_partBar);
        m_partBar->setCurrentIndex(static_cast<int>(part));
    }
    // Called on every change of the section (a slider step): the grid is laid out again only
    // for a new part.
    drawPart(part);
    if (part == Part::Time)
        requestSearch(inputs()); // nothing new when the search has this plan's input
    if (!changed && m_partPlaced)
        return;
    m_partPlaced = true;
    // The memory part's charts carry long labels (recipes, published rows); the time part's
    // names are short and its charts may be as narrow as any tab's.
    if (part == Part::Time)
        setCharts(partCharts(part), 2);
    else
        setCharts(partCharts(part), 2, kPlanChartChars);
    if (!m_result.stages.empty() && !m_refused)
        updateFigures();
    refitShownCharts(partCharts(part));
}

void PlanTab::choosePart(Part part)
{
    if (part != static_cast<Part>(scenario().planDisplay.part))
        document()->setValue("plan.part", static_cast<double>(part));
    else
        showPart(part);
}

void PlanTab::reveal(QWidget* widget)
{
    if (!widget)
        return;
    for (const Part part : {Part::Memory, Part::Time})
        for (ChartPanel* chart : partCharts(part))
            if (chart == widget || chart->isAncestorOf(widget)) {
                if (part != m_part)
                    choosePart(part);
                return;
            }
}

void PlanTab::buildHardwareChoices(QVBoxLayout* group)
{
    auto* form = new QFormLayout;
    group->addLayout(form);
    QComboBox* gpu = addChoice(form, "plan.hardware.gpu");
    gpu->setObjectName("plan.hardware.gpu");
    gpu->setAccessibleName(tr("GPU type"));
    // A GPU type comes with its memory: choosing one sets the capacity too (the two edits merge
    // into one undo step); the capacity can then be changed on its own.
    connect(gpu, &QComboBox::activated, this, [this](int i) {
        const double gb = core::gpuSpec(static_cast<core::GpuType>(i)).memoryGB;
        if (gb > 0 && inputs().gpuMemoryGib != gb)
            document()->setValue("plan.gpu_memory_gib", gb);
    });
    addChoice(form, "plan.hardware.precision")->setAccessibleName(tr("Matmul precision"));
}

void PlanTab::buildLinkControls(QVBoxLayout* group)
{
    auto* links = new QWidget;
    auto* box = new QVBoxLayout(links);
    box->setContentsMargins(kDisclosureIndent, 0, 0, 0);
    for (const char* key : {"plan.hardware.gpus_per_node", "plan.hardware.nvlink_bandwidth",
                            "plan.hardware.nvlink_latency", "plan.hardware.ib_bandwidth",
                            "plan.hardware.ib_latency", "plan.hardware.dp_overlap"})
        addControl(box, key);
    addDisclosure(group, tr("Nodes, links and overlap"), links,
                  tr("Show nodes, links and overlap"));
}

void PlanTab::buildTimeChart()
{
    m_timeChart = new ChartViewPanel("plan-time");
    QChart* chart = m_timeChart->chart();
    chart->setTitle(tr("Where one step's time goes"));
    m_termBars = new QHorizontalStackedBarSeries;
    for (const Term& term : kTerms) {
        auto* set = new QBarSet(tr(term.name));
        set->setColor(term.colour);
        set->setBorderColor(Qt::white);
        m_termSets << set;
        m_termBars->append(set);
    }
    m_termBars->setBarWidth(0.6);
    chart->addSeries(m_termBars);
    m_termAxis = new QBarCategoryAxis;
    m_termAxis->append({tr("Fastest layout"), tr("Your layout")});
    m_secondsAxis = new QValueAxis;
    chart->addAxis(m_termAxis, Qt::AlignLeft);
    chart->addAxis(m_secondsAxis, Qt::AlignBottom);
    m_termBars->attachAxis(m_termAxis);
    m_termBars->attachAxis(m_secondsAxis);
    styleAxis(m_termAxis, QString());
    m_termAxis->setTitleVisible(false);
    m_termAxis->setGridLineVisible(false);
    styleAxis(m_secondsAxis, tr("Seconds per step"));
    // Eight terms: a column beside the bars keeps each name whole.
    chart->legend()->setAlignment(Qt::AlignRight);
}

void PlanTab::buildSearchChart()
{
    m_searchChart = new ChartViewPanel("plan-search");
    QChart* chart = m_searchChart->chart();
    chart->setTitle(tr("Every layout: memory against step time"));
    m_stepAxis = new QLogValueAxis;
    m_stepAxis->setBase(10);
    m_stepAxis->setLabelFormat("%g");
    m_stepAxis->setMinorTickCount(8);
    m_searchMemoryAxis = new QLogValueAxis;
    m_searchMemoryAxis->setBase(10);
    m_searchMemoryAxis->setLabelFormat("%g");
    chart->addAxis(m_stepAxis, Qt::AlignBottom);
    chart->addAxis(m_searchMemoryAxis, Qt::AlignLeft);
    styleAxis(m_stepAxis, tr("Step time (s, log)"));
    styleAxis(m_searchMemoryAxis, tr("GiB per GPU (log)"));
    const auto attach = [&](QAbstractSeries* s) {
        chart->addSeries(s);
        s->attachAxis(m_stepAxis);
        s->attachAxis(m_searchMemoryAxis);
    };
    m_otherPoints = scatter(tr("Does not fit"), QColor(200, 200, 200), kOtherPointSize);
    attach(m_otherPoints);
    for (const Bin& bin : kBins) {
        const QString name = bin.upper == std::numeric_limits<std::int64_t>::max()
            ? tr("t\u00b7p \u2265 %1").arg(bin.lower)
            : tr("t\u00b7p %1\u2013%2").arg(bin.lower).arg(bin.upper - 1);
        QScatterSeries* s = scatter(name, bin.colour, kPointSize);
        attach(s);
        m_binPoints << s;
        m_binKeys.append(QList<core::LayoutKey>());
        connect(s, &QScatterSeries::clicked, this,
                [this, i = m_binPoints.size() - 1](const QPointF& p) { loadClickedPoint(i, p); });
    }
    m_capacityLine = new QLineSeries;
    m_capacityLine->setPen(QPen(palette::kBlack, kLineWidth, Qt::DashLine));
    attach(m_capacityLine);
    m_bestMarker =
        scatter(tr("Fastest"), palette::kYellow, kBestSize, QScatterSeries::MarkerShapeStar);
    m_bestMarker->setBorderColor(palette::kBlack);
    attach(m_bestMarker);
    m_yoursMarker = scatter(tr("Yours"), Qt::transparent, kYoursSize);
    m_yoursMarker->setBorderColor(palette::kBlack);
    m_yoursMarker->setPen(QPen(palette::kBlack, kLineWidth));
    attach(m_yoursMarker);
    chart->legend()->setAlignment(Qt::AlignRight);
}

void PlanTab::buildSearchPanel()
{
    m_search = new PlanSearchPanel("plan-search-table");
    connect(m_search, &PlanSearchPanel::loadRequested, this, &PlanTab::loadSearchedLayout);
}

void PlanTab::requestSearch(const core::PlanInputs& plan)
{
    // Two plans that differ only in layout keys the search does not keep ask for one search.
    const core::PlanInputs input = core::searchScope(plan);
    if (m_searchedFor && *m_searchedFor == input)
        return;
    m_searchedFor = input;
    m_search->setSearching();
    sideRunner()->run([this, input]() -> std::function<void()> {
        QElapsedTimer clock;
        clock.start();
        try {
            core::LayoutSearchOptions options;
            options.threads = kSearchThreads;
            auto result = std::make_shared<const core::LayoutSearchResult>(
                core::searchLayouts(input, options));
            const double seconds = clock.nsecsElapsed() * 1e-9;
            return [this, result, seconds, input] {
                showSearch(result, seconds, {}, input);
            };
        } catch (const std::exception& e) {
            return [this, message = QString::fromUtf8(e.what()), input] {
                showSearch(nullptr, 0, message, input);
            };
        }
    });
}

void PlanTab::showSearch(std::shared_ptr<const core::LayoutSearchResult> result, double seconds,
                         const QString& failure, const core::PlanInputs& scope)
{
    m_searchResult = result;
    // An export says what the search kept: without it "every layout" would not be true.
    const QString kept = PlanSearchPanel::keptText(scope);
    const QString title = kept.isEmpty()
        ? tr("Every layout: memory against step time")
        : tr("Every layout with %1: memory against step time").arg(kept);
    if (m_searchChart->setTitle(title))
        fitChartTexts(m_searchChart->chart());
    if (!result)
        m_search->setFailed(failure);
    else if (result->refused)
        m_search->setFailed(
            tr("the search is refused: %1").arg(QString::fromStdString(result->refusal)));
    else
        m_search->setResult(result, seconds, kept);
    rebuildSearchPoints();
    m_stale[static_cast<std::size_t>(Part::Time)] = true;
    if (m_part == Part::Time)
        drawPart(Part::Time);
}

namespace {

/// Drops the points that would be drawn over an earlier point of the same series: a cell of
/// the kCells x kCells grid over the log ranges holds one point. Thousands of layouts crowd a few
/// regions of the scatter; a hidden point costs paint time on every slider step and shows
/// nothing. The search's ranking and table keep every layout.
class Thinning {
public:
    Thinning(double lo, double hi, double memLo, double memHi)
        : m_x0(std::log10(lo))
        , m_y0(std::log10(memLo))
        , m_dx(std::max(std::log10(hi) - m_x0, 1e-9) / kCells)
        , m_dy(std::max(std::log10(memHi) - m_y0, 1e-9) / kCells)
    {
    }
    /// Whether the point at (seconds, gib) is the first of its cell in series `series`.
    bool keep(double seconds, double gib, qsizetype series)
    {
        const auto cx = static_cast<qint64>((std::log10(seconds) - m_x0) / m_dx);
        const auto cy = static_cast<qint64>((std::log10(gib) - m_y0) / m_dy);
        const qint64 cell = (static_cast<qint64>(series) * (kCells + 2) + cx) * (kCells + 2) + cy;
        const qsizetype before = m_taken.size();
        m_taken.insert(cell);
        return m_taken.size() > before;
    }
    static constexpr int kCells = PlanTab::kScatterCells;

private:
    double m_x0, m_y0, m_dx, m_dy;
    QSet<qint64> m_taken;
};

bool drawable(const core::LayoutPoint& pt)
{
    const double m = pt.memoryBytes / kGiB;
    return pt.stepSeconds > 0 && std::isfinite(pt.stepSeconds) && m > 0 && std::isfinite(m);
}

} // namespace

void PlanTab::rebuildSearchPoints()
{
    const bool has = m_searchResult && !m_searchResult->refused;
    QList<QPointF> others;
    QList<QList<QPointF>> bins(m_binPoints.size());
    for (QList<core::LayoutKey>& keys : m_binKeys)
        keys.clear();
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    double memLo = lo, memHi = 0;
    if (has)
        for (const core::LayoutPoint& pt : m_searchResult->scatter)
            if (drawable(pt)) {
                lo = std::min(lo, pt.stepSeconds);
                hi = std::max(hi, pt.stepSeconds);
                memLo = std::min(memLo, pt.memoryBytes / kGiB);
                memHi = std::max(memHi, pt.memoryBytes / kGiB);
            }
    m_pointRange.reset();
    if (hi > 0)
        m_pointRange = QRectF(QPointF(lo, memLo), QPointF(hi, memHi));
    // Each series its own cells: a point is never hidden by one of another colour.
    Thinning cells(lo, hi, memLo, memHi);
    for (const core::LayoutPoint& pt :
         has ? m_searchResult->scatter : std::vector<core::LayoutPoint>{}) {
        if (!drawable(pt))
            continue;
        const QPointF at(pt.stepSeconds, pt.memoryBytes / kGiB);
        if (!pt.fits) {
            if (cells.keep(at.x(), at.y(), m_binPoints.size()))
                others << at;
            continue;
        }
        const std::int64_t tp = pt.key.t * pt.key.p;
        for (qsizetype b = 0; b < m_binPoints.size(); ++b)
            if (tp >= kBins[b].lower && tp < kBins[b].upper) {
                if (cells.keep(at.x(), at.y(), b)) {
                    bins[b] << at;
                    m_binKeys[b] << pt.key;
                }
                break;
            }
    }
    replaceIfChanged(m_otherPoints, others);
    for (qsizetype b = 0; b < m_binPoints.size(); ++b) {
        replaceIfChanged(m_binPoints[b], bins[b]);
        // Only the bins that hold a layout in the legend.
        for (QLegendMarker* marker : m_searchChart->chart()->legend()->markers(m_binPoints[b]))
            showInLegend(marker, !bins[b].isEmpty());
    }
    QList<QPointF> best;
    if (has && !m_searchResult->ranked.empty()) {
        const core::RankedLayout& r = m_searchResult->ranked.front();
        best << QPointF(r.time.total, r.memoryBytes / kGiB);
    }
    replaceIfChanged(m_bestMarker, best);
}

void PlanTab::updateSearchChart()
{
    // The plan's own point and the axes around it and the search's points: every step.
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    double memLo = gpuMemoryBytes() / kGiB, memHi = memLo;
    if (m_pointRange) {
        lo = m_pointRange->left();
        hi = m_pointRange->right();
        memLo = std::min(memLo, m_pointRange->top());
        memHi = std::max(memHi, m_pointRange->bottom());
    }
    QList<QPointF> yours;
    if (!m_refused && m_time.total > 0) {
        const QPointF at(m_time.total, m_result.peakBytesPerGpu.value() / kGiB);
        yours << at;
        lo = std::min(lo, at.x());
        hi = std::max(hi, at.x());
        memLo = std::min(memLo, at.y());
        memHi = std::max(memHi, at.y());
    }
    replaceIfChanged(m_yoursMarker, yours);
    if (!(hi > 0)) {
        lo = 1;
        hi = 10;
    }
    setLogDecades(m_stepAxis, lo / kLogPad, hi * kLogPad);
    setLogDecades(m_searchMemoryAxis, memLo / kLogPad, memHi * kLogPad);
    const double capacity = gpuMemoryBytes() / kGiB;
    if (const QString name = tr("GPU: %1 GiB").arg(formatNumber(capacity));
        m_capacityLine->name() != name)
        m_capacityLine->setName(name); // a new name lays the chart out again
    replaceIfChanged(m_capacityLine,
                     {{m_stepAxis->min(), capacity}, {m_stepAxis->max(), capacity}});
}

void PlanTab::updateTimeChart()
{
    const core::StepTime* best = m_searchResult && !m_searchResult->ranked.empty()
        ? &m_searchResult->ranked.front().time
        : nullptr;
    double top = m_time.total;
    for (std::size_t i = 0; i < std::size(kTerms); ++i) {
        const double fastest = best ? best->*kTerms[i].seconds : 0.0;
        const double yours = m_time.*kTerms[i].seconds;
        QBarSet* set = m_termSets[static_cast<qsizetype>(i)];
        setBarValues(set, {fastest, yours});
        // A term neither layout has (experts in a dense model) leaves the legend.
        for (QLegendMarker* marker : m_timeChart->chart()->legend()->markers(m_termBars))
            if (auto* bar = qobject_cast<QBarLegendMarker*>(marker); bar && bar->barset() == set)
                showInLegend(marker, fastest > 0 || yours > 0);
    }
    if (best)
        top = std::max(top, best->total);
    setStickyRange(m_secondsAxis, 0, top > 0 ? top * 1.05 : 1.0);
    // The two names stay as they are: a new category text lays the whole chart out again, on
    // every slider step. The seconds are in the figures line and the table.
}

void PlanTab::loadSearchedLayout(int rank)
{
    if (!m_searchResult || rank < 0
        || static_cast<std::size_t>(rank) >= m_searchResult->ranked.size())
        return;
    const core::LayoutKey& key = m_searchResult->ranked[static_cast<std::size_t>(rank)].key;
    loadPlan(core::withLayout(inputs(), key), tr("Load layout %1 of the search").arg(rank + 1));
}

void PlanTab::loadClickedPoint(qsizetype bin, const QPointF& point)
{
    // The point clicked is one of the bin's; the nearest on the log scales is the one meant.
    const QList<QPointF> points = m_binPoints[bin]->points();
    qsizetype nearest = -1;
    double distance = std::numeric_limits<double>::infinity();
    for (qsizetype i = 0; i < points.size(); ++i) {
        const double dx = std::log(points[i].x() / point.x());
        const double dy = std::log(points[i].y() / point.y());
        if (dx * dx + dy * dy < distance) {
            distance = dx * dx + dy * dy;
            nearest = i;
        }
    }
    if (nearest < 0 || nearest >= m_binKeys[bin].size())
        return;
    loadPlan(core::withLayout(inputs(), m_binKeys[bin][nearest]),
             tr("Load a layout from the scatter"));
}

QString PlanTab::timeFiguresText() const
{
    const core::StepTime& t = m_time;
    const core::PlanInputs& in = m_shown;
    return tr("<b>Your layout</b> %1 on %2 %3 GPUs: <b>step %4 s</b> &middot; <b>MFU %5%</b> "
              "(HFU %6%) &middot; %7 TFLOP/s per GPU<br>%8 tokens/s &middot; <b>%9 days</b> "
              "for %10 tokens")
        .arg(PlanSearchPanel::layoutText(core::layoutOf(in)), formatWhole(in.gpus),
             QString::fromLatin1(core::gpuSpec(in.hardware.gpu).name), formatNumber(t.total),
             formatNumber(100 * t.mfu), formatNumber(100 * t.hfu), formatNumber(t.tflopsPerGpu),
             t.tokensPerSecond >= 1e6 ? formatCount(t.tokensPerSecond)
                                      : formatWhole(std::llround(t.tokensPerSecond)),
             formatNumber(t.trainingDays))
        .arg(formatCount(in.trainTokens));
}

QHash<QString, QString> PlanTab::timeExplanationValues() const
{
    const core::StepTime& t = m_time;
    const core::PlanInputs& in = m_shown;
    const auto sec = [](double s) {
        return formatNumber(s) + QStringLiteral(" s");
    };
    // Keys of their own: the memory part's values ("peak", "gpus", ...) keep their meaning.
    QHash<QString, QString> v{
        {"gpu_name", QString::fromLatin1(core::gpuSpec(in.hardware.gpu).name)},
        {"peak_tflops", formatNumber(t.peakFlops / 1e12)},
        {"precision",
         in.hardware.precision == core::ComputePrecision::Fp8 ? tr("FP8") : tr("BF16")},
        {"efficiency", formatNumber(100 * t.gemmEfficiency) + '%'},
        {"gemm_size",
         formatWhole(
             std::llround(core::gemmSize(in.model.hidden, in.model.ffnHidden, in.tensorParallel)))},
        {"forward_time", sec(t.forward)},
        {"backward_time", sec(t.backward)},
        {"recompute_time", sec(t.recompute)},
        {"tp_time", sec(t.tensorParallel)},
        {"expert_time", sec(t.expert)},
        {"bubble_time", sec(t.bubble)},
        {"sends_time", sec(t.pipelineSends)},
        {"dp_time", sec(t.dataParallel)},
        {"dp_exposed", sec(t.dataParallelExposed)},
        {"step_time", sec(t.total)},
        {"mfu", formatNumber(100 * t.mfu) + '%'},
        {"hfu", formatNumber(100 * t.hfu) + '%'},
        {"tokens_per_second", formatCount(t.tokensPerSecond)},
        {"days", formatNumber(t.trainingDays)},
        {"double_gpus", doubledGpusText()},
    };
    const core::LayoutSearchResult* r = m_searchResult.get();
    if (!m_searchedFor) {
        v.insert("search_count", tr("it runs when the step-time part is shown"));
        v.insert("best_time", tr("(not searched yet)"));
        v.insert("best_layout", tr("open the step-time part to search"));
        v.insert("your_rank", tr("will be ranked then"));
    } else if (!r || r->refused || m_search->searching()) {
        v.insert("search_count", tr("the search is still running"));
        v.insert("best_time", tr("(searching)"));
        v.insert("best_layout", tr("searching"));
        v.insert("your_rank", tr("will be ranked when it ends"));
    } else if (r->ranked.empty()) {
        v.insert("search_count",
                 tr("%1 layouts, and none of them fits").arg(formatWhole(r->enumerated)));
        v.insert("best_time", tr("nothing"));
        v.insert("best_layout", tr("no layout fits; the table names what each breaks"));
        v.insert("your_rank", tr("does not fit either"));
    } else {
        v.insert("search_count",
                 tr("%1 layouts, of which %2 fit")
                     .arg(formatWhole(r->enumerated), formatWhole(r->fitting)));
        v.insert("best_time", sec(r->ranked.front().time.total));
        v.insert("best_layout", PlanSearchPanel::layoutText(r->ranked.front().key));
        const int rank = m_search->yourRank();
        v.insert("your_rank",
                 rank >= 0 ? tr("is number %1 of them").arg(formatWhole(rank + 1))
                           : tr("is not among the layouts that fit"));
    }
    return v;
}

QString PlanTab::doubledGpusText() const
{
    core::PlanInputs twice = m_shown;
    twice.gpus *= 2;
    try {
        const core::StepTime doubled = core::computeStepTime(twice);
        const double ratio = doubled.total / m_time.total;
        const QString verdict = ratio > 0.505 ? tr("more than half")
            : ratio < 0.495                   ? tr("less than half")
                                              : tr("about half");
        return tr("%1 s on %2 GPUs, %3 s on %4: %5% of the time, %6.")
            .arg(formatNumber(m_time.total), formatWhole(m_shown.gpus), formatNumber(doubled.total),
                 formatWhole(twice.gpus), formatNumber(100 * ratio), verdict);
    } catch (const core::InputError& e) {
        return tr("%1 GPUs are refused for this plan (%2), so try another GPU count.")
            .arg(formatWhole(twice.gpus), QString::fromStdString(e.expected()).toHtmlEscaped());
    }
}

} // namespace scalelab::ui
