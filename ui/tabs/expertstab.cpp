#include "expertstab.h"

#include "chartdata.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "choicebox.h"
#include "expertsrules.h"
#include "format.h"
#include "heatmappanel.h"
#include "legendrows.h"
#include "notelabel.h"
#include "parametercontrol.h"

#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGraphicsTextItem>
#include <QGridLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLocale>
#include <QScatterSeries>
#include <QSignalBlocker>
#include <QStackedBarSeries>
#include <QTextDocument>
#include <QTextOption>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace scalelab::ui {

namespace {

using namespace document::experts;

// Layout metrics of the controls column and the rank chart's caption, in pixels.
constexpr int kIndent = 12; ///< the disclosed controls under their button
constexpr int kCaptionMargin = 12; ///< caption to the chart's left and right edges
constexpr int kCaptionTop = 4; ///< caption to the chart's top edge
constexpr int kCaptionGap = 6; ///< caption to the plot under it
constexpr double kCaptionMinWidth = 100;
constexpr int kBusiestMarkerSize = 18;
// Bars and axes.
constexpr double kLoadBarWidth = 0.8;
constexpr double kRankBarWidth = 0.7;
constexpr std::int64_t kMaxAxisBands = 8; ///< "56-63" must fit under one band
constexpr int kMaxRankTicks = 16;
constexpr double kLoadHeadroom = 1.04; ///< above the hottest expert or the capacity
constexpr double kRanksHeadroom = 1.1; ///< above the busiest rank: room for its marker

struct RouterPreset {
    const char* name;
    double skew;
    bool byId;
};

// The router's lessons. "One hot rank" has the same popularity as "Zipf-like" and only puts
// the hottest experts together on rank 0: the expert loads (and the auxiliary loss) stay the
// same while the rank imbalance jumps.
constexpr RouterPreset kPresets[] = {
    {QT_TRANSLATE_NOOP("scalelab::ui::ExpertsTab", "Balanced router (skew 0)"), 0.0, false},
    {QT_TRANSLATE_NOOP("scalelab::ui::ExpertsTab", "One hot expert (skew 3)"), 3.0, false},
    {QT_TRANSLATE_NOOP("scalelab::ui::ExpertsTab",
                       "One hot rank (skew 1, hottest experts on rank 0)"),
     1.0, true},
    {QT_TRANSLATE_NOOP("scalelab::ui::ExpertsTab", "Zipf-like popularity (skew 1)"), 1.0, false},
};

// Exercise 41.4: two ranks choose [0,1,3] and [2,3,2]; experts 0,1 live on rank 0, 2,3 on 1.
const std::vector<std::vector<std::int64_t>> kExerciseAssignments{{0, 1, 3}, {2, 3, 2}};
const std::vector<std::int64_t> kExerciseOwners{0, 0, 1, 1};

/// A slot count as people read it: whole counts grouped ("4,096"), small fractions (colour-bar
/// ticks between whole values, a mean) with three significant digits.
QString slotsText(double v)
{
    // From 100 up, whole slots carry three significant digits or more already.
    if ((v == std::round(v) || std::abs(v) >= 100) && std::abs(v) < 9e15)
        return formatWhole(std::llround(v));
    return formatNumber(v);
}

/// Short enough for a heatmap cell: "812", "9,876", "12.3k", "1.02M".
QString cellText(double v)
{
    if (std::abs(v) < 1e4)
        return slotsText(v);
    if (std::abs(v) < 1e6)
        return formatNumber(v / 1e3) + "k";
    return formatNumber(v / 1e6) + "M";
}

/// Bytes with a decimal prefix (kB = 10^3, MB = 10^6, GB = 10^9 bytes) and three digits.
QString bytesText(double bytes)
{
    static const char* const units[] = {"kB", "MB", "GB", "TB", "PB"};
    if (bytes < 1000)
        return QObject::tr("%1 bytes").arg(slotsText(bytes));
    int i = 0;
    double v = bytes / 1e3;
    while (v >= 999.5 && i + 1 < static_cast<int>(std::size(units))) {
        v /= 1e3;
        ++i;
    }
    return formatNumber(v) + ' ' + units[i];
}

/// setNiceRange() sets the range before the tick step, so a jump from a small range (the
/// exercise's 3 slots, ticks every 0.25) to a large one (thousands of slots) would first lay out
/// one tick per old step: tens of thousands of them. A coarse enough step first avoids that.
void setNiceRangeSafely(QValueAxis* axis, double min, double max)
{
    axis->setTickInterval(std::max(axis->tickInterval(), (max - min) / 8));
    setStickyRange(axis, min, max, true); // slots are whole: no 0.5 ticks
}

/// Lines and hatching drawn in the text colour, so they read on a dark background as well as on
/// white; the width (which projector mode scales) and the dash pattern are kept.
void ink(QXYSeries* series)
{
    QPen pen = series->pen();
    if (pen.color() != chartTextColor()) {
        pen.setColor(chartTextColor());
        series->setPen(pen);
    }
}

void ink(QBarSet* set)
{
    if (set->brush().color() != chartTextColor()) {
        set->setBrush(QBrush(chartTextColor(), Qt::BDiagPattern));
        set->setPen(QPen(chartTextColor(), 1));
    }
}

/// Axis numbers with thousands separators ("25,000,000"), as the figures line writes them, in
/// the C-like English locale whatever the user's locale is.
void groupThousands(QChart* chart)
{
    chart->setLocale(QLocale(QLocale::English, QLocale::UnitedStates));
    chart->setLocalizeNumbers(true);
}

void showWithLegendEntry(QChart* chart, QAbstractSeries* series, bool visible)
{
    series->setVisible(visible);
    for (QLegendMarker* marker : chart->legend()->markers(series))
        showInLegend(marker, visible);
}

} // namespace

ExpertsTab::ExpertsTab(document::ScenarioDocument* document, QWidget* parent)
    : Tab(document, core::Section::Experts, parent)
{
    setObjectName("experts");
    buildControls();
    // A slider the user moves previews a large routing; once it rests, the exact one follows.
    m_rest = new SliderRest(this);
    connect(m_rest, &SliderRest::rested, this, &ExpertsTab::sliderSettled);
    for (ParameterControl* c : controls())
        m_rest->watch(c->slider());
    buildHeatmap();
    buildLoadChart();
    buildRanksChart();
    // The heatmap is square by nature: it takes the left column, the two bar charts share the
    // right one; where two columns would squeeze them, the three stack and scroll.
    setCharts({m_heatmap, m_load, m_ranks}, 2, kMinChartChars, Lead::Column);
    sectionShown();
    drawFirst();
}

void ExpertsTab::buildControls()
{
    buildRouterControls();
    buildLayoutControls();
    buildCapacityControls();
    buildMoreControls();
    buildPredictBox();
}

void ExpertsTab::buildRouterControls()
{
    // The router: how lopsided its choices are, and how many experts each token takes.
    QVBoxLayout* routerBox = addGroup(tr("Router"));
    m_preset = new ChoiceBox;
    m_preset->setObjectName("experts.preset");
    m_preset->setAccessibleName(tr("Routing preset"));
    for (const RouterPreset& p : kPresets)
        m_preset->addItem(tr(p.name));
    m_preset->addItem(tr("Chapter exercise 41.4 (explicit)"));
    m_preset->addItem(tr("Custom"));
    auto* presetRow = new QFormLayout;
    presetRow->addRow(tr("&Preset"), m_preset);
    routerBox->addLayout(presetRow);
    connect(m_preset, &QComboBox::activated, this, &ExpertsTab::choosePreset);

    addControl(routerBox, "experts.skew");
    // experts.popularity is a choice of two: the box is checked for the second, "by_id".
    m_byIdBox = addCheckBox(routerBox, "experts.popularity");
    m_byIdBox->setText(tr("Hottest experts &grouped on rank 0"));
    m_byIdBox->setToolTip(tr("Off: the seed scatters the popular experts over the ranks. On: "
                             "expert 0 is the hottest, then 1, 2, ... so rank 0 owns them all."));
    addControl(routerBox, "experts.top_k");
}

void ExpertsTab::buildLayoutControls()
{
    // Where the experts live.
    QVBoxLayout* layoutBox = addGroup(tr("Expert parallelism"));
    addControl(layoutBox, "experts.ranks");
    addControl(layoutBox, "experts.experts");
}

void ExpertsTab::buildCapacityControls()
{
    // Capacity: each expert keeps at most factor x its even share of the slots.
    QVBoxLayout* capacityBox = addGroup(tr("Expert capacity"));
    m_capacityBox = addCheckBox(capacityBox, "experts.capacity");
    addControl(capacityBox, "experts.capacity_factor");
}

void ExpertsTab::buildMoreControls()
{
    // The rest: batch size, seed, and what a slot weighs on the wire.
    QVBoxLayout* moreBox = addGroup(tr("Tokens and bytes"));
    auto* advanced = new QWidget;
    auto* advancedBox = new QVBoxLayout(advanced);
    advancedBox->setContentsMargins(kIndent, 0, 0, 0);
    for (const char* key :
         {"experts.tokens_per_rank", "experts.seed", "experts.hidden", "experts.bytes_per_value"})
        addControl(advancedBox, key);
    addDisclosure(moreBox, tr("Tokens, seed and slot size"), advanced,
                  tr("Show tokens, seed and slot size"));
}

void ExpertsTab::buildPredictBox()
{
    // Predict, then reveal; and the misconception this tab answers.
    QVBoxLayout* thinkBox = addGroup(tr("Predict first"));
    auto* think = new NoteLabel(
        tr("<p>\"One hot rank\" uses the same router popularity as \"Zipf-like\"; only the "
           "hottest experts move to rank 0. Before you switch: does the auxiliary loss change? "
           "Does the imbalance?</p>"
           "<p>Only expert parallelism sends <i>tokens</i> all-to-all, and how many go where "
           "depends on the router's choices, not on tensor shapes.</p>"));
    think->setTextFormat(Qt::RichText);
    thinkBox->addWidget(think);
}

void ExpertsTab::buildHeatmap()
{
    m_heatmap = new HeatmapPanel("experts-heatmap");
    m_heatmap->setTitle(tr("Token slots sent from each rank to each rank"));
    m_heatmap->setAxisTitles(tr("Destination rank (owns the chosen expert)"),
                             tr("Source rank (holds the token)"));
    m_heatmap->setColorBarTitle(tr("Token slots (outlined diagonal: stay local)"));
    m_heatmap->setMarkDiagonal(true);
    m_heatmap->setValueFormat(cellText);
}

void ExpertsTab::buildLoadChart()
{
    m_load = new ChartViewPanel("experts-load");
    QChart* chart = m_load->chart();
    chart->setTitle(tr("Token slots per expert"));
    groupThousands(chart);
    m_loadBars = new QStackedBarSeries;
    m_keptSet = new QBarSet(tr("Kept slots"));
    m_keptSet->setColor(palette::kSkyBlue);
    m_keptSet->setPen(Qt::NoPen);
    m_loadDroppedSet = new QBarSet(tr("Dropped"));
    ink(m_loadDroppedSet);
    m_loadBars->append(m_keptSet);
    m_loadBars->append(m_loadDroppedSet);
    m_loadBars->setBarWidth(kLoadBarWidth);
    chart->addSeries(m_loadBars);

    m_expertAxis = new QCategoryAxis;
    m_expertAxis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
    m_loadY = new QValueAxis;
    chart->addAxis(m_expertAxis, Qt::AlignBottom);
    chart->addAxis(m_loadY, Qt::AlignLeft);
    m_loadBars->attachAxis(m_expertAxis);
    m_loadBars->attachAxis(m_loadY);
    styleAxis(m_expertAxis, tr("Experts, grouped by owner rank"));
    styleAxis(m_loadY, tr("Token slots (before drops)"), tr("Token slots"));

    m_loadMean = new QLineSeries;
    m_loadMean->setPen(QPen(chartTextColor(), kLineWidth, Qt::DotLine));
    m_capacityLine = new QLineSeries;
    m_capacityLine->setPen(QPen(palette::kOrange, kLineWidth, Qt::DashLine));
    // Named without the factor (the figures line has it): a legend entry that changes with
    // every step of the capacity slider laid the whole chart out again each time.
    m_capacityLine->setName(tr("Capacity per expert"));
    for (QLineSeries* line : {m_loadMean, m_capacityLine}) {
        chart->addSeries(line);
        line->attachAxis(m_expertAxis);
        line->attachAxis(m_loadY);
    }
}

void ExpertsTab::buildRanksChart()
{
    m_ranks = new ChartViewPanel("experts-ranks");
    QChart* chart = m_ranks->chart();
    groupThousands(chart);
    m_rankBars = new QStackedBarSeries;
    // Local is the heatmap's outlined diagonal, in the outline's colour.
    m_localSet = new QBarSet(tr("Local"));
    m_localSet->setColor(palette::kVermillion);
    m_remoteSet = new QBarSet(tr("From other ranks"));
    m_remoteSet->setColor(palette::kBlue);
    m_rankDroppedSet = new QBarSet(tr("Dropped"));
    ink(m_rankDroppedSet);
    m_localSet->setPen(Qt::NoPen);
    m_remoteSet->setPen(Qt::NoPen);
    for (QBarSet* set : {m_localSet, m_remoteSet, m_rankDroppedSet})
        m_rankBars->append(set);
    m_rankBars->setBarWidth(kRankBarWidth);
    chart->addSeries(m_rankBars);

    m_rankAxis = new QValueAxis;
    m_rankAxis->setTickType(QValueAxis::TicksDynamic);
    m_rankAxis->setTickAnchor(0);
    m_rankAxis->setLabelFormat("%.0f");
    m_rankAxis->setGridLineVisible(false);
    m_ranksY = new QValueAxis;
    chart->addAxis(m_rankAxis, Qt::AlignBottom);
    chart->addAxis(m_ranksY, Qt::AlignLeft);
    m_rankBars->attachAxis(m_rankAxis);
    m_rankBars->attachAxis(m_ranksY);
    styleAxis(m_rankAxis, tr("Destination rank"));
    styleAxis(m_ranksY, tr("Token slots received"), tr("Token slots"));

    m_rankMean = new QLineSeries;
    m_rankMean->setPen(QPen(chartTextColor(), kLineWidth, Qt::DotLine));
    m_busiest = new QScatterSeries;
    m_busiest->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
    m_busiest->setMarkerSize(kBusiestMarkerSize);
    m_busiest->setColor(palette::kYellow);
    m_busiest->setBorderColor(palette::kBlack);
    // Without the rank: a legend entry that changes lays the whole chart out again (two fifths
    // of a step of the ranks slider). The caption says which rank it is.
    m_busiest->setName(tr("Busiest rank"));
    for (QXYSeries* s : std::initializer_list<QXYSeries*>{m_rankMean, m_busiest}) {
        chart->addSeries(s);
        s->attachAxis(m_rankAxis);
        s->attachAxis(m_ranksY);
    }

    m_ranksCaption = new QGraphicsTextItem(chart);
    m_ranksCaption->setZValue(10);
    QTextOption centred = m_ranksCaption->document()->defaultTextOption();
    centred.setAlignment(Qt::AlignHCenter);
    m_ranksCaption->document()->setDefaultTextOption(centred);
    connect(chart, &QChart::geometryChanged, this, &ExpertsTab::layoutRanksCaption);
}

void ExpertsTab::layoutRanksCaption()
{
    QChart* chart = m_ranks->chart();
    const ChartFonts f = chartFonts();
    if (m_ranksCaption->font() != f.legend)
        m_ranksCaption->setFont(f.legend);
    m_ranksCaption->setDefaultTextColor(chartTextColor());
    const double width = std::max(kCaptionMinWidth, chart->size().width() - 2 * kCaptionMargin);
    if (m_ranksCaption->textWidth() != width)
        m_ranksCaption->setTextWidth(width);
    m_ranksCaption->setPos(kCaptionMargin, kCaptionTop);
    // The plot starts under the caption: the chart's top margin is the caption's height.
    QMargins margins = chart->margins();
    const int top =
        static_cast<int>(std::ceil(m_ranksCaption->boundingRect().height())) + kCaptionGap;
    if (margins.top() != top) {
        margins.setTop(top);
        chart->setMargins(margins);
    }
}

QList<ChartPanel*> ExpertsTab::charts() const
{
    return {m_heatmap, m_load, m_ranks};
}

void ExpertsTab::sectionShown()
{
    // The ranges that follow the ranks and the shown capacity factor come from the field table.
    syncPreset();
}

QHash<QString, QString> ExpertsTab::explanationValues() const

{
    // From the routing on screen: the explanation never routes again by itself.
    if (!m_result)
        return {};
    const core::ExpertsResult& r = *m_result;
    const core::ExpertsInputs& in = m_resultInputs;
    const double total = static_cast<double>(r.totalSlots);
    return {
        {"ranks", formatWhole(in.ranks)},
        {"tokens_per_rank", formatWhole(in.tokensPerRank)},
        {"top_k", formatWhole(in.topK)},
        {"total_slots", formatWhole(r.totalSlots)},
        {"experts", formatWhole(in.experts)},
        {"imbalance", r.imbalance ? formatNumber(*r.imbalance) : tr("none (nothing routed)")},
        {"local_share",
         total > 0 ? formatNumber(100.0 * static_cast<double>(m_traffic.localSlots) / total) + "%"
                   : tr("none")},
        {"dropped", countText(tr("%1 slot(s)", nullptr, pluralChoice(r.dropped)), r.dropped)},
    };
}

ExpertsTab::Preset ExpertsTab::presetOf(const core::ExpertsInputs& in)
{
    if (in.assignments) {
        const bool exercise = in.ranks == 2 && in.experts == 4
            && *in.assignments == kExerciseAssignments
            && (!in.expertToRank || *in.expertToRank == kExerciseOwners);
        return exercise ? ChapterExercise : Custom;
    }
    const bool byId = in.popularity == core::ExpertPopularity::ById;
    for (int i = 0; i < static_cast<int>(std::size(kPresets)); ++i)
        if (in.skew == kPresets[i].skew && byId == kPresets[i].byId)
            return static_cast<Preset>(i);
    return Custom;
}

void ExpertsTab::applyPreset(core::Scenario& scenario, Preset preset)
{
    core::ExpertsInputs& in = scenario.experts;
    if (preset == ChapterExercise) {
        // The router inputs stay as they are (unused); the section's rules fit top-k and the
        // tokens to the exercise's two ranks and four experts.
        in.ranks = 2;
        in.experts = 4;
        in.assignments = kExerciseAssignments;
        in.expertToRank = kExerciseOwners;
    } else if (preset >= 0 && preset < static_cast<int>(std::size(kPresets))) {
        in.assignments.reset();
        in.expertToRank.reset();
        in.skew = kPresets[preset].skew;
        in.popularity =
            kPresets[preset].byId ? core::ExpertPopularity::ById : core::ExpertPopularity::Shuffled;
    }
}

void ExpertsTab::syncPreset()
{
    const QSignalBlocker block(m_preset);
    m_preset->setCurrentIndex(preset());
}

void ExpertsTab::choosePreset(int index)
{
    const auto preset = static_cast<Preset>(index);
    const bool changed =
        document()->edit(core::Section::Experts, tr("Preset %1").arg(m_preset->itemText(index)),
                         [preset](core::Scenario& s) { applyPreset(s, preset); });
    if (!changed) // "Custom", or the preset already shown: the box names the values again
        syncPreset();
}

void ExpertsTab::validateInputs()
{
    // Refused inputs are named at once, and every time (also when only the slot size moved).
    try {
        core::validate(inputs());
    } catch (const core::InputError&) {
        // A result still on its way is for older inputs: a job that fails the same way takes
        // its place, so it cannot draw them over the refusal.
        if (m_inFlight) {
            m_inFlight.reset();
            computeInBackground([in = inputs()]() -> std::function<void()> {
                core::validate(in);
                return [] {
                };
            });
        }
        throw;
    }
}

void ExpertsTab::recompute()
{
    validateInputs();
    const core::ExpertsInputs& inputs = this->inputs();
    // The draws do not depend on the capacity factor: a new factor reuses the last ones.
    core::ExpertsInputs drawKey = inputs;
    drawKey.capacityFactor = 0;
    std::shared_ptr<const core::ExpertsRouting> routing =
        m_routing && m_routingKey == drawKey ? m_routing : nullptr;
    // While a slider moves, a routing that has to be drawn again and is large (64 ranks of
    // 16,384 tokens take 8 ms and more) is previewed from the first tokens of each rank; the
    // exact routing follows once the slider rests.
    const bool preview =
        m_rest->moving() && !routing && core::expertsPreviewTokens(inputs) < inputs.tokensPerRank;
    // A new hidden size or byte width only re-weighs the slots on screen.
    if (m_result && m_resultInputs == inputs && (preview || m_result->previewTokensPerRank == 0)) {
        showResult();
        return;
    }
    // Already on its way: it is drawn, with whatever the slot size is then, when it arrives.
    if (m_inFlight && *m_inFlight == inputs && (preview || !m_inFlightPreview))
        return;
    m_inFlight = inputs;
    m_inFlightPreview = preview;
    if (preview) {
        computeInBackground([this, in = inputs]() -> std::function<void()> {
            auto result = std::make_shared<const core::ExpertsResult>(core::previewExperts(in));
            return [this, in, result] {
                accept(in, result);
            };
        });
        return;
    }
    computeInBackground([this, in = inputs, routing, drawKey]() -> std::function<void()> {
        std::shared_ptr<const core::ExpertsRouting> draws = routing;
        if (!draws && core::keepsRouting(in))
            draws = std::make_shared<const core::ExpertsRouting>(core::drawExpertsRouting(in));
        auto result = std::make_shared<const core::ExpertsResult>(
            draws ? core::routeExperts(in, *draws) : core::routeExperts(in));
        return [this, in, result, draws, drawKey] {
            m_routing = draws;
            m_routingKey = drawKey;
            accept(in, result);
        };
    });
}

void ExpertsTab::accept(const core::ExpertsInputs& in,
                        std::shared_ptr<const core::ExpertsResult> result)
{
    m_inFlight.reset();
    m_result = std::move(result);
    m_resultInputs = in;
    // A preview that arrives after the slider came to rest is followed by the exact routing.
    if (m_result->previewTokensPerRank > 0 && !m_rest->moving())
        scheduleRefresh();
    try {
        showResult();
    } catch (const core::InputError&) {
        // The slot size is refused: a refresh on the GUI thread reports it.
        scheduleRefresh();
    }
}

void ExpertsTab::sliderSettled()
{
    if (previewShownOrComing())
        scheduleRefresh();
}

void ExpertsTab::setSettleInterval(int ms)
{
    m_rest->setInterval(ms);
}

bool ExpertsTab::refinementPending() const
{
    return m_result && m_result->previewTokensPerRank > 0;
}

bool ExpertsTab::previewShownOrComing() const
{
    return refinementPending() || (m_inFlight && m_inFlightPreview);
}

void ExpertsTab::catchUp()
{
    // What is exported or tested is the exact routing, never a preview.
    if (!m_rest->moving() && !previewShownOrComing())
        return;
    m_rest->stop();
    refreshNow();
}

void ExpertsTab::updateLoadAxis(const core::ExpertsResult& r)
{
    if (r.expertToRank == m_loadAxisOwners)
        return;
    m_loadAxisOwners = r.expertToRank;
    for (const QString& label : m_expertAxis->categoriesLabels())
        m_expertAxis->remove(label);
    const auto experts = static_cast<std::int64_t>(r.expertToRank.size());
    m_expertAxis->setStartValue(-0.5);
    if (std::is_sorted(r.expertToRank.begin(), r.expertToRank.end()))
        labelRankBands(r.expertToRank, static_cast<std::int64_t>(r.counts.size()));
    else
        labelExpertIds(experts);
    m_expertAxis->setRange(-0.5, static_cast<double>(experts) - 0.5);
}

void ExpertsTab::labelRankBands(const std::vector<std::int64_t>& owners, std::int64_t ranks)
{
    // One labelled band per rank (or per group of ranks when there are many), its grid lines at
    // the rank boundaries: the columns of the heatmap, spread out by expert.
    std::int64_t group = 1;
    while (ranks / group > kMaxAxisBands)
        group *= 2;
    std::ptrdiff_t previousEnd = 0;
    for (std::int64_t first = 0; first < ranks; first += group) {
        const std::int64_t last = std::min(ranks, first + group) - 1;
        const auto end = std::upper_bound(owners.begin(), owners.end(), last) - owners.begin();
        if (end == previousEnd) // ranks that own no expert get no band
            continue;
        previousEnd = end;
        m_expertAxis->append(group == 1 ? QString::number(first)
                                        : QString("%1-%2").arg(first).arg(last),
                             static_cast<double>(end) - 0.5);
    }
    setAxisTitle(m_expertAxis, tr("Experts, grouped by owner rank"));
}

void ExpertsTab::labelExpertIds(std::int64_t experts)
{
    // Owners in no order: label the experts themselves.
    std::int64_t group = 1;
    while (experts / group > kMaxAxisBands)
        group *= 2;
    for (std::int64_t first = 0; first < experts; first += group) {
        const std::int64_t last = std::min(experts, first + group) - 1;
        m_expertAxis->append(group == 1 ? QString::number(first)
                                        : QString("%1-%2").arg(first).arg(last),
                             static_cast<double>(last) + 0.5);
    }
    setAxisTitle(m_expertAxis, tr("Expert id"));
}

void ExpertsTab::showResult()
{
    const core::ExpertsResult& r = *m_result;
    m_traffic = core::allToAllTraffic(r, hiddenSize(), bytesPerValue());
    showHeatmap(r);
    showLoad(r, m_resultInputs);
    showRanks(r);
    showRanksCaption(r);
    showFigures(r, m_resultInputs);
}

void ExpertsTab::showHeatmap(const core::ExpertsResult& r)
{
    // The count matrix itself, coloured from zero so an even router looks even.
    const auto ranks = static_cast<int>(r.counts.size());
    Eigen::MatrixXd counts(ranks, ranks);
    double largest = 0;
    for (int s = 0; s < ranks; ++s)
        for (int d = 0; d < ranks; ++d) {
            counts(s, d) = static_cast<double>(r.counts[s][d]);
            largest = std::max(largest, counts(s, d));
        }
    m_heatmap->setRange(std::pair{0.0, std::max(largest, 1.0)});
    m_heatmap->setMatrix(counts);
}

void ExpertsTab::showLoad(const core::ExpertsResult& r, const core::ExpertsInputs& in)
{
    // Kept and dropped slots of every expert, with the mean and the capacity.
    const auto experts = static_cast<int>(r.expertLoad.size());
    const bool limited = in.capacityFactor > 0.0;
    updateLoadAxis(r);
    QList<qreal> kept, dropped;
    kept.reserve(experts);
    dropped.reserve(experts);
    double hottest = 0;
    for (int e = 0; e < experts; ++e) {
        kept << static_cast<double>(r.expertLoad[e] - r.droppedPerExpert[e]);
        dropped << static_cast<double>(r.droppedPerExpert[e]);
        hottest = std::max(hottest, static_cast<double>(r.expertLoad[e]));
    }
    setBarValues({{m_keptSet, kept}, {m_loadDroppedSet, dropped}}); // one layout for both
    for (QBarSet* set : {m_loadDroppedSet, m_rankDroppedSet})
        ink(set);
    for (QLineSeries* line : {m_loadMean, m_rankMean})
        ink(line);
    const double left = -0.5, right = experts - 0.5;
    const double expertMean = static_cast<double>(r.totalSlots) / experts;
    m_loadMean->replace(QList<QPointF>{{left, expertMean}, {right, expertMean}});
    // Legend names stay short: the window's charts are narrow, the numbers are in the
    // figures line.
    m_loadMean->setName(tr("Mean"));
    const auto capacity = static_cast<double>(r.capacity);
    m_capacityLine->replace(QList<QPointF>{{left, capacity}, {right, capacity}});
    showWithLegendEntry(m_load->chart(), m_capacityLine, limited);
    for (QLegendMarker* marker : m_load->chart()->legend()->markers(m_loadBars))
        if (marker->label() == m_loadDroppedSet->label())
            showInLegend(marker, limited);
    setNiceRangeSafely(m_loadY, 0,
                       std::max({hottest, limited ? capacity : 0.0, 1.0}) * kLoadHeadroom);
}

void ExpertsTab::showRanks(const core::ExpertsResult& r)
{
    // What each rank's experts receive, split into local, remote and dropped.
    const core::AllToAllTraffic& t = m_traffic;
    const auto ranks = static_cast<int>(r.counts.size());
    QList<qreal> local, remote, rankDropped;
    for (int d = 0; d < ranks; ++d) {
        local << static_cast<double>(t.localPerRank[d]);
        remote << static_cast<double>(t.remotePerRank[d]);
        rankDropped << static_cast<double>(t.droppedPerRank[d]);
    }
    setBarValues({{m_localSet, local}, {m_remoteSet, remote}, {m_rankDroppedSet, rankDropped}});
    const bool limited = m_resultInputs.capacityFactor > 0.0;
    for (QLegendMarker* marker : m_ranks->chart()->legend()->markers(m_rankBars))
        if (marker->label() == m_rankDroppedSet->label())
            showInLegend(marker, limited);
    const auto busiestAt = std::max_element(r.receivedPerRank.begin(), r.receivedPerRank.end());
    const auto busiest = static_cast<double>(*busiestAt);
    const auto busiestRank = static_cast<double>(busiestAt - r.receivedPerRank.begin());
    const double rankMean = static_cast<double>(r.totalSlots) / ranks;
    m_rankMean->replace(QList<QPointF>{{-0.5, rankMean}, {ranks - 0.5, rankMean}});
    m_rankMean->setName(tr("Mean"));
    m_busiest->replace(QList<QPointF>{{busiestRank, busiest}});
    int step = 1;
    while (ranks / step > kMaxRankTicks)
        step *= 2;
    setTicks(m_rankAxis, 0, step, -0.5, ranks - 0.5);
    setNiceRangeSafely(m_ranksY, 0, std::max(busiest, 1.0) * kRanksHeadroom);
}

void ExpertsTab::showRanksCaption(const core::ExpertsResult& r)
{
    // The rank chart's caption carries the figures the issue asks to see beside it.
    const core::AllToAllTraffic& t = m_traffic;
    const std::optional<double> loss = core::loadBalancingLoss(r);
    const QString imbalance = r.imbalance ? formatNumber(*r.imbalance) : tr("none");
    const QString lossText = m_resultInputs.assignments || !loss
        ? tr("Aux loss: none, explicit assignments have no router probabilities")
        : tr("Aux loss E&Sigma;f<sub>i</sub>P<sub>i</sub> = %1 (balanced: 1.0)")
              .arg(formatNumber(*loss));
    // Two lines: what is drawn, then the figures a slide needs beside it (the explanation
    // says what f_i and P_i are).
    const auto busiest = std::max_element(r.receivedPerRank.begin(), r.receivedPerRank.end())
        - r.receivedPerRank.begin();
    const QString caption =
        tr("<span style=\"font-size:%1pt; font-weight:600\">Slots each rank receives: max / "
           "mean = %2 (busiest: rank %6)</span><br>%3 sent off-rank, %4 kept local &middot; %5")
            .arg(chartFonts().title.pointSizeF())
            .arg(imbalance, bytesText(static_cast<double>(t.offRankBytes)),
                 bytesText(static_cast<double>(t.localBytes)), lossText)
            .arg(busiest);
    // Laid out again only when it changes (the text, or the font of projector mode).
    if (m_ranksCaption->property("html").toString() != caption) {
        m_ranksCaption->setHtml(caption);
        m_ranksCaption->setProperty("html", caption);
        layoutRanksCaption();
    }
}

void ExpertsTab::showFigures(const core::ExpertsResult& r, const core::ExpertsInputs& in)
{
    // The figures line: each equation with today's numbers.
    const core::AllToAllTraffic& t = m_traffic;
    const std::optional<double> loss = core::loadBalancingLoss(r);
    const auto experts = static_cast<int>(r.expertLoad.size());
    const auto total = static_cast<double>(r.totalSlots);
    const auto busiest =
        static_cast<double>(*std::max_element(r.receivedPerRank.begin(), r.receivedPerRank.end()));
    const double rankMean = total / static_cast<double>(r.counts.size());
    const QString imbalance = r.imbalance ? formatNumber(*r.imbalance) : tr("none");
    QStringList parts;
    if (r.previewTokensPerRank > 0)
        parts << tr("<b>Preview while the slider moves</b>: the first %1 of the %2 tokens of "
                    "each rank routed, every count scaled up; the exact routing follows as soon "
                    "as the slider rests")
                     .arg(formatWhole(r.previewTokensPerRank), formatWhole(in.tokensPerRank));
    if (in.assignments)
        parts << tr("<b>Explicit assignments</b> (exercise 41.4): the router inputs are not "
                    "used; move one to route again");
    parts << tr("<b>Imbalance</b> busiest rank / mean = %1 / %2 slots = <b>%3</b>")
                 .arg(slotsText(busiest), slotsText(rankMean), imbalance);
    parts << tr("<b>All-to-all</b> %1 of %2 slots leave their rank: %1 x %3 values x %4 bytes = "
                "<b>%5 sent off-rank</b>, %6 kept local (decimal units; the combine step sends "
                "as much back)")
                 .arg(formatWhole(t.offRankSlots), formatWhole(r.totalSlots),
                      formatWhole(hiddenSize()), formatWhole(bytesPerValue()),
                      bytesText(static_cast<double>(t.offRankBytes)),
                      bytesText(static_cast<double>(t.localBytes)));
    if (!in.assignments && loss)
        parts << tr("<b>Aux loss</b> E &Sigma; f<sub>i</sub>P<sub>i</sub> = %1 x %2 = <b>%3</b> "
                    "(balanced: 1.0)")
                     .arg(experts)
                     .arg(formatNumber(*loss / experts), formatNumber(*loss));
    if (in.capacityFactor > 0.0)
        parts << tr("<b>Capacity</b> ceil(%1 x %2 / %3) = %4 per expert: <b>%5 dropped</b> "
                    "(%6% of slots)")
                     .arg(formatNumber(in.capacityFactor), formatWhole(r.totalSlots))
                     .arg(experts)
                     .arg(
                         countText(tr("%1 slot(s)", nullptr, pluralChoice(r.capacity)), r.capacity),
                         formatWhole(r.dropped),
                         formatNumber(total > 0 ? 100.0 * static_cast<double>(r.dropped) / total
                                                : 0.0));
    else
        parts << tr("<b>No capacity limit</b>: nothing is dropped");
    figuresLabel()->setText(parts.join(" &nbsp;&middot;&nbsp; "));
}

} // namespace scalelab::ui
