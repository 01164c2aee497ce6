// The FP8 tab's training parts: the accumulation sweep (how a matrix product's error grows with
// K when the tensor core's sum keeps few bits) and the scaling policies over steps.

#include "chartdata.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "choicebox.h"
#include "format.h"
#include "fp8tab.h"
#include "legendrows.h"
#include "parametercontrol.h"

#include <QCategoryAxis>
#include <QChart>
#include <QComboBox>
#include <QFontMetricsF>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPointF>
#include <QScatterSeries>
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

using core::AccumulationMode;
using core::AccumulatorRounding;
using core::ScalingPolicy;

constexpr int kDisclosureIndent = 12; ///< the controls behind a disclosure, from the left
constexpr double kMarkerSize = 9; ///< the points of the accumulation lines
constexpr double kPublishedSize = 18; ///< the published figure's star
constexpr int kMaxKLabels = 8; ///< more K values than this: every other one is labelled
/// After a spike, delayed scaling counts as worse than current per-tensor scaling while it
/// flushes more values to zero or its error is more than this many times the current one (the
/// run's noise between the two is a few percent).
constexpr double kWorseFactor = 1.1;

/// Colours of the three ways of adding and of the three policies (Okabe-Ito).
const QColor& modeColour(int mode)
{
    static const std::array<QColor, core::kAccumulationModes> colours = {
        palette::kBlue, palette::kVermillion, palette::kGreen};
    return colours[static_cast<std::size_t>(mode)];
}

const QColor& policyColour(int policy)
{
    static const std::array<QColor, core::kScalingPolicies> colours = {
        palette::kVermillion, palette::kOrange, palette::kBlue};
    return colours[static_cast<std::size_t>(policy)];
}

QString pct(double fraction)
{
    if (!std::isfinite(fraction))
        return QStringLiteral("NaN");
    return formatNumber(100.0 * fraction) + QStringLiteral(" %");
}

/// A K on the axis: "512", "4K" (1K = 1,024), short enough for a projector's type.
QString kLabel(std::int64_t k)
{
    constexpr std::int64_t kKilo = 1024;
    if (k >= kKilo && k % kKilo == 0)
        return Fp8Tab::tr("%1K").arg(k / kKilo);
    return QString::number(k);
}

void hideLegendEntry(QChart* chart, QAbstractSeries* s)
{
    for (QLegendMarker* m : chart->legend()->markers(s))
        showInLegend(m, false);
}

/// A difference in percentage points with its sign: "+0.4", "-1.1".
QString signedPoints(double points)
{
    if (!std::isfinite(points))
        return QStringLiteral("NaN");
    return (points > 0 ? QStringLiteral("+") : QString()) + formatNumber(points, 2);
}

QLineSeries* makeLine(const QString& name, const QColor& colour, Qt::PenStyle style, bool points)
{
    auto* s = new QLineSeries;
    s->setName(name);
    s->setPen(QPen(colour, kLineWidth, style));
    s->setColor(colour);
    s->setPointsVisible(points);
    if (points)
        s->setMarkerSize(kMarkerSize);
    return s;
}

void attachTo(QChart* chart, QAbstractSeries* s, QAbstractAxis* x, QAbstractAxis* y)
{
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
}

/// Ready-made accumulators and policy situations.
struct AccumulationPreset {
    const char* name;
    const char* tip;
    std::int64_t bits;
    std::int64_t interval;
    AccumulatorRounding rounding;
};

constexpr AccumulationPreset kAccumulationPresets[] = {
    {QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab", "DeepSeek-V3 on H800 (13 bits, N_C = 128)"),
     QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab",
                       "Hopper's FP8 tensor cores keep about 13 fraction bits; DeepSeek-V3 adds "
                       "the partial sums into float32 every 128 products."),
     13, 128, AccumulatorRounding::AlignedBlock},
    {QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab", "float32 accumulation (23 bits)"),
     QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab",
                       "An accumulator as good as float32: the limited line falls onto the "
                       "float32 one."),
     23, 128, AccumulatorRounding::Nearest},
};

struct PolicyPreset {
    const char* name;
    const char* tip;
    double spike;
    double drift;
};

constexpr PolicyPreset kPolicyPresets[] = {
    {QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab", "A loss spike under delayed scaling"),
     QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab",
                       "For one step a few values are 10,000 times larger. Predict which policy "
                       "saturates, and which pays for it afterwards."),
     1e4, 0.0},
    {QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab", "Slow growth (drift 5 %/step)"),
     QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab",
                       "No spike; every step the values grow by 5 %, so a scale from past steps "
                       "is always a little too small."),
     1.0, 0.05},
};

constexpr std::int64_t kPresetSpikeStep = 32;
constexpr std::int64_t kPresetSteps = 64;
constexpr std::int64_t kPresetHistory = 16;

} // namespace

void Fp8Tab::buildPartBar()
{
    m_partBar = addPartBar(
        "fp8.part", tr("Part of the FP8 tab"),
        {{tr("Block scaling"), tr("One scale per tensor or per block: what each costs.")},
         {tr("Accumulation"),
          tr("Adding K products with a short accumulator, and promoting it into float32.")},
         {tr("Scaling over time"),
          tr("When the scale is chosen: from past steps, from this step, or per tile.")}});
    // The part is the scenario's (fp8.part): saved with it, undone with it, set by a lesson
    // step; the document's change shows it (sectionShown).
    connect(m_partBar, &QTabBar::currentChanged, this,
            [this](int i) { choosePart(static_cast<Part>(i)); });
}

void Fp8Tab::showPart(Part part)
{
    const bool changed = part != m_part;
    m_part = part;
    if (m_partBar->currentIndex() != static_cast<int>(part)) {
        const QSignalBlocker quiet(m_partBar);
        m_partBar->setCurrentIndex(static_cast<int>(part));
    }
    const bool block = part == Part::BlockScaling;
    // Format, block size and overflow serve all three parts; the rest of the group only the first.
    m_situationForm->setRowVisible(m_preset, block);
    m_blockGroup->setTitle(block ? tr("FP8 block scaling") : tr("FP8 format and blocks"));
    control("fp8.outlier_scale")->setVisible(block);
    control("fp8.shown_block")->setVisible(block);
    m_blockRow->setVisible(block);
    m_accGroup->setVisible(part == Part::Accumulation);
    m_policyGroup->setVisible(part == Part::Policy);
    setCharts(partCharts(part), part == Part::Accumulation ? 1 : 2);
    showPartFigures();
    if (!changed)
        return;
    refitShownCharts(partCharts(part));
}

void Fp8Tab::choosePart(Part part)
{
    if (part != static_cast<Part>(scenario().fp8Display.part))
        document()->setValue("fp8.part", static_cast<double>(part));
    else
        showPart(part);
}

void Fp8Tab::reveal(QWidget* widget)
{
    if (!widget)
        return;
    for (const Part part : {Part::BlockScaling, Part::Accumulation, Part::Policy}) {
        bool holds = false;
        for (ChartPanel* chart : partCharts(part))
            holds = holds || chart == widget;
        QWidget* own = part == Part::BlockScaling ? m_blockRow
            : part == Part::Accumulation          ? m_accGroup
                                                  : m_policyGroup;
        if (holds || own == widget || own->isAncestorOf(widget)) {
            if (part != m_part)
                choosePart(part);
            return;
        }
    }
    if (widget == control("fp8.outlier_scale") || widget == control("fp8.shown_block"))
        choosePart(Part::BlockScaling);
}

void Fp8Tab::buildAccumulationControls()
{
    QVBoxLayout* box = addGroup(tr("Accumulation"));
    m_accGroup = box->parentWidget();
    m_accGroup->setObjectName("fp8.accumulation");
    auto* form = new QFormLayout;
    m_accPreset = new ChoiceBox;
    m_accPreset->setObjectName("fp8.accumulation.preset");
    m_accPreset->setAccessibleName(tr("Accumulator preset"));
    for (const AccumulationPreset& p : kAccumulationPresets) {
        m_accPreset->addItem(tr(p.name));
        m_accPreset->setItemData(m_accPreset->count() - 1, tr(p.tip), Qt::ToolTipRole);
    }
    m_accPreset->addItem(tr("Custom"));
    form->addRow(tr("Accumulator"), m_accPreset);
    connect(m_accPreset, &QComboBox::activated, this, &Fp8Tab::applyAccumulationPreset);
    addChoice(form, "fp8.accumulation.rounding");
    box->addLayout(form);
    for (const char* key :
         {"fp8.accumulation.accumulator_bits", "fp8.accumulation.promotion_interval",
          "fp8.accumulation.k_min", "fp8.accumulation.k_max"})
        addControl(box, key);
    addDisclosedControls(box, {"fp8.accumulation.outputs", "fp8.accumulation.seed"},
                         tr("Outputs and seed"), tr("Show outputs and seed"));
}

void Fp8Tab::buildPolicyControls()
{
    QVBoxLayout* box = addGroup(tr("Scaling over time"));
    m_policyGroup = box->parentWidget();
    m_policyGroup->setObjectName("fp8.policy");
    auto* form = new QFormLayout;
    m_policyPreset = new ChoiceBox;
    m_policyPreset->setObjectName("fp8.policy.preset");
    m_policyPreset->setAccessibleName(tr("Policy situation"));
    for (const PolicyPreset& p : kPolicyPresets) {
        m_policyPreset->addItem(tr(p.name));
        m_policyPreset->setItemData(m_policyPreset->count() - 1, tr(p.tip), Qt::ToolTipRole);
    }
    m_policyPreset->addItem(tr("Custom"));
    form->addRow(tr("Situation"), m_policyPreset);
    connect(m_policyPreset, &QComboBox::activated, this, &Fp8Tab::applyPolicyPreset);
    box->addLayout(form);
    for (const char* key : {"fp8.policy.spike", "fp8.policy.spike_step", "fp8.policy.drift",
                            "fp8.policy.history", "fp8.policy.steps"})
        addControl(box, key);
    addDisclosedControls(box, {"fp8.policy.rows", "fp8.policy.cols", "fp8.policy.seed"},
                         tr("Tensor shape and seed"), tr("Show tensor shape and seed"));
}

void Fp8Tab::addDisclosedControls(QVBoxLayout* box, std::initializer_list<const char*> keys,
                                  const QString& text, const QString& accessibleName)
{
    auto* advanced = new QWidget;
    auto* adv = new QVBoxLayout(advanced);
    adv->setContentsMargins(kDisclosureIndent, 0, 0, 0);
    for (const char* key : keys)
        addControl(adv, key);
    addDisclosure(box, text, advanced, accessibleName);
}

void Fp8Tab::applyAccumulationPreset(int index)
{
    if (index < 0 || index >= static_cast<int>(std::size(kAccumulationPresets)))
        return;
    const AccumulationPreset& p = kAccumulationPresets[index];
    document()->edit(core::Section::Fp8, tr("Accumulator %1").arg(tr(p.name)),
                     [&p](core::Scenario& s) {
                         s.fp8.accumulation.accumulatorBits = p.bits;
                         s.fp8.accumulation.promotionInterval = p.interval;
                         s.fp8.accumulation.rounding = p.rounding;
                     });
    syncTrainingPresets();
}

void Fp8Tab::applyPolicyPreset(int index)
{
    if (index < 0 || index >= static_cast<int>(std::size(kPolicyPresets)))
        return;
    const PolicyPreset& p = kPolicyPresets[index];
    document()->edit(core::Section::Fp8, tr("Situation %1").arg(tr(p.name)),
                     [&p](core::Scenario& s) {
                         core::Fp8PolicyInputs& q = s.fp8.policy;
                         q.spike = p.spike;
                         q.drift = p.drift;
                         q.spikeStep = kPresetSpikeStep;
                         q.steps = kPresetSteps;
                         q.history = kPresetHistory;
                     });
    syncTrainingPresets();
}

void Fp8Tab::syncTrainingPresets()
{
    const core::Fp8AccumulationInputs& a = inputs().accumulation;
    int acc = static_cast<int>(std::size(kAccumulationPresets)); // "Custom"
    for (int i = 0; i < static_cast<int>(std::size(kAccumulationPresets)); ++i) {
        const AccumulationPreset& p = kAccumulationPresets[i];
        if (a.accumulatorBits == p.bits && a.promotionInterval == p.interval
            && a.rounding == p.rounding)
            acc = i;
    }
    const core::Fp8PolicyInputs& q = inputs().policy;
    int pol = static_cast<int>(std::size(kPolicyPresets));
    for (int i = 0; i < static_cast<int>(std::size(kPolicyPresets)); ++i) {
        const PolicyPreset& p = kPolicyPresets[i];
        if (q.spike == p.spike && q.drift == p.drift && q.spikeStep == kPresetSpikeStep
            && q.steps == kPresetSteps && q.history == kPresetHistory)
            pol = i;
    }
    const QSignalBlocker quietAcc(m_accPreset);
    m_accPreset->setCurrentIndex(acc);
    const QSignalBlocker quietPolicy(m_policyPreset);
    m_policyPreset->setCurrentIndex(pol);
}

void Fp8Tab::buildAccumulationChart()
{
    m_accChart = new ChartViewPanel("fp8-accumulation", this);
    m_accChart->hide();
    QChart* chart = m_accChart->chart();
    chart->setTitle(tr("Output error: largest (solid), RMS (dashed)"));
    m_kAxis = new QCategoryAxis;
    m_kAxis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_accErrorAxis = new QLogValueAxis;
    m_accErrorAxis->setBase(10);
    m_accErrorAxis->setLabelFormat("%g");
    chart->addAxis(m_kAxis, Qt::AlignBottom);
    chart->addAxis(m_accErrorAxis, Qt::AlignLeft);
    styleAxis(m_kAxis, tr("K (products per output)"));
    // A narrower plot labels fewer K values, once its layout has settled.
    connect(chart, &QChart::plotAreaChanged, this,
            [this] { QMetaObject::invokeMethod(this, &Fp8Tab::labelKAxis, Qt::QueuedConnection); });
    styleAxis(m_accErrorAxis, tr("Error (%)"));
    const QStringList names = {tr("float32"), tr("Limited"), tr("Promoted")};
    for (int m = 0; m < core::kAccumulationModes; ++m) {
        m_accMax[m] = makeLine(names[m], modeColour(m), Qt::SolidLine, true);
        attachTo(chart, m_accMax[m], m_kAxis, m_accErrorAxis);
    }
    // The RMS lines wear the colours of their max lines: the title says which is which, and the
    // legend stays one short row.
    for (int m = 0; m < core::kAccumulationModes; ++m) {
        m_accRms[m] = makeLine(tr("RMS, %1").arg(names[m]), modeColour(m), Qt::DashLine, false);
        attachTo(chart, m_accRms[m], m_kAxis, m_accErrorAxis);
        hideLegendEntry(chart, m_accRms[m]);
    }
    m_published = new QScatterSeries;
    // The star: the published figure, told whole in the figures line; the legend names it.
    m_published->setName(tr("DeepSeek-V3"));
    m_published->setObjectName("fp8.published");
    m_published->setMarkerShape(QScatterSeries::MarkerShapeStar);
    m_published->setMarkerSize(kPublishedSize);
    m_published->setColor(palette::kBlack);
    m_published->setBorderColor(palette::kBlack);
    attachTo(chart, m_published, m_kAxis, m_accErrorAxis);
}

void Fp8Tab::buildPolicyErrorChart()
{
    m_policyErrorChart = new ChartViewPanel("fp8-policy-error", this);
    m_policyErrorChart->hide();
    QChart* chart = m_policyErrorChart->chart();
    chart->setTitle(tr("Relative error of each step's tensor"));
    m_stepAxis = new QValueAxis;
    m_policyErrorAxis = new QLogValueAxis;
    m_policyErrorAxis->setBase(10);
    m_policyErrorAxis->setLabelFormat("%g");
    chart->addAxis(m_stepAxis, Qt::AlignBottom);
    chart->addAxis(m_policyErrorAxis, Qt::AlignLeft);
    styleAxis(m_stepAxis, tr("Training step"));
    styleAxis(m_policyErrorAxis, tr("Error (%)"));
    const QStringList names = {tr("Delayed"), tr("Current"), tr("Fine")};
    for (int p = 0; p < core::kScalingPolicies; ++p) {
        m_policyError[p] = makeLine(names[p], policyColour(p), Qt::SolidLine, false);
        attachTo(chart, m_policyError[p], m_stepAxis, m_policyErrorAxis);
    }
    m_spikeOnError = makeLine(tr("Spike"), palette::kBlack, Qt::DotLine, false);
    attachTo(chart, m_spikeOnError, m_stepAxis, m_policyErrorAxis);
}

void Fp8Tab::buildPolicyLostChart()
{
    m_policyLostChart = new ChartViewPanel("fp8-policy-lost", this);
    m_policyLostChart->hide();
    QChart* chart = m_policyLostChart->chart();
    chart->setTitle(tr("Values lost: saturated (solid), flushed to 0 (dashed)"));
    m_lostStepAxis = new QValueAxis;
    m_lostAxis = new QValueAxis;
    chart->addAxis(m_lostStepAxis, Qt::AlignBottom);
    chart->addAxis(m_lostAxis, Qt::AlignLeft);
    styleAxis(m_lostStepAxis, tr("Training step"));
    styleAxis(m_lostAxis, tr("Values (count)"));
    const QStringList names = {tr("Delayed"), tr("Current"), tr("Fine")};
    for (int p = 0; p < core::kScalingPolicies; ++p) {
        m_saturated[p] = makeLine(names[p], policyColour(p), Qt::SolidLine, false);
        attachTo(chart, m_saturated[p], m_lostStepAxis, m_lostAxis);
    }
    // Flushed lines in the same colours, dashed (the title says so): one short legend row.
    for (int p = 0; p < core::kScalingPolicies; ++p) {
        m_flushed[p] =
            makeLine(tr("Flushed, %1").arg(names[p]), policyColour(p), Qt::DashLine, false);
        attachTo(chart, m_flushed[p], m_lostStepAxis, m_lostAxis);
        hideLegendEntry(chart, m_flushed[p]);
    }
    m_spikeOnLost = makeLine(tr("Spike"), palette::kBlack, Qt::DotLine, false);
    attachTo(chart, m_spikeOnLost, m_lostStepAxis, m_lostAxis);
}

void Fp8Tab::showAccumulation(const std::shared_ptr<const core::Fp8AccumulationResult>& result,
                              const AccumulationKey& key)
{
    m_accumulation = result;
    m_accumulationKey = key;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (int m = 0; m < core::kAccumulationModes; ++m) {
        QList<QPointF> max, rms;
        for (const core::Fp8AccumulationPoint& p : result->points) {
            const double x = std::log2(static_cast<double>(p.k));
            for (auto [out, v] :
                 {std::pair{&max, p.maxRelativeError[m]}, std::pair{&rms, p.rmsRelativeError[m]}})
                if (v > 0 && std::isfinite(v)) { // a log axis shows no zero
                    out->append({x, 100.0 * v});
                    lo = std::min(lo, 100.0 * v);
                    hi = std::max(hi, 100.0 * v);
                }
        }
        replaceIfChanged(m_accMax[m], max);
        replaceIfChanged(m_accRms[m], rms);
    }
    const double x = std::log2(static_cast<double>(kPublishedK));
    replaceIfChanged(m_published, QList<QPointF>{{x, 100.0 * kPublishedError}});
    const QString promoted = tr("Promoted /%1").arg(formatWhole(key.inputs.promotionInterval));
    if (m_accMax[static_cast<int>(AccumulationMode::Promoted)]->name() != promoted)
        m_accMax[static_cast<int>(AccumulationMode::Promoted)]->setName(promoted);
    lo = std::min(lo, 100.0 * kPublishedError);
    hi = std::max(hi, 100.0 * kPublishedError);
    showAccumulationAxes(lo, hi);
}

void Fp8Tab::showAccumulationAxes(double lo, double hi)
{
    setLogDecades(m_accErrorAxis, lo, hi);
    // Ticks at the sweep's K values (and at the published K), half a doubling of room each side.
    std::vector<std::int64_t> ks;
    for (const core::Fp8AccumulationPoint& p : m_accumulation->points)
        ks.push_back(p.k);
    if (std::find(ks.begin(), ks.end(), kPublishedK) == ks.end()) {
        ks.push_back(kPublishedK);
        std::sort(ks.begin(), ks.end());
    }
    m_kValues = ks;
    labelKAxis();
}

void Fp8Tab::labelKAxis()
{
    const std::vector<std::int64_t>& ks = m_kValues;
    if (ks.empty())
        return;
    const double a = std::log2(static_cast<double>(ks.front())) - 0.5;
    const double b = std::log2(static_cast<double>(ks.back())) + 0.5;
    // The labels' room: the plot's width over its doublings, at the closest two K values.
    double step = b - a;
    for (std::size_t i = 1; i < ks.size(); ++i)
        step = std::min(step, std::log2(double(ks[i]) / double(ks[i - 1])));
    const QFontMetricsF fm(m_kAxis->labelsFont());
    const double widest = fm.horizontalAdvance(kLabel(ks.back())) + 2 * fm.averageCharWidth();
    const double plot = m_accChart->chart()->plotArea().width();
    const double room = plot > 0 ? plot / (b - a) * step : widest;
    int every = static_cast<int>(ks.size()) > kMaxKLabels ? 2 : 1;
    every = std::max(every, static_cast<int>(std::ceil(widest / std::max(room, 1.0))));
    QStringList labels;
    for (std::size_t i = 0; i < ks.size(); ++i)
        if (static_cast<int>(i) % every == 0) // the published K has its star, not a label
            labels << kLabel(ks[i]);
    if (labels == m_kAxis->categoriesLabels())
        return;
    for (const QString& old : m_kAxis->categoriesLabels())
        m_kAxis->remove(old);
    for (std::size_t i = 0; i < ks.size(); ++i)
        if (static_cast<int>(i) % every == 0)
            m_kAxis->append(kLabel(ks[i]), std::log2(static_cast<double>(ks[i])));
    m_kAxis->setStartValue(a);
    m_kAxis->setRange(a, b);
}

void Fp8Tab::showPolicy(const std::shared_ptr<const core::Fp8PolicyResult>& result,
                        const PolicyKey& key)
{
    m_policy = result;
    m_policyKey = key;
    double lo = std::numeric_limits<double>::infinity(), hi = 0, most = 0;
    for (int p = 0; p < core::kScalingPolicies; ++p) {
        QList<QPointF> error, saturated, flushed;
        const std::vector<core::Fp8PolicyStep>& steps = result->steps[p];
        for (std::size_t s = 0; s < steps.size(); ++s) {
            const double x = static_cast<double>(s);
            const double e = 100.0 * steps[s].relativeError;
            if (e > 0 && std::isfinite(e)) {
                error.append({x, e});
                lo = std::min(lo, e);
                hi = std::max(hi, e);
            }
            saturated.append({x, static_cast<double>(steps[s].saturated)});
            flushed.append({x, static_cast<double>(steps[s].flushed)});
            most = std::max({most, static_cast<double>(steps[s].saturated),
                             static_cast<double>(steps[s].flushed)});
        }
        replaceIfChanged(m_policyError[p], error);
        replaceIfChanged(m_saturated[p], saturated);
        replaceIfChanged(m_flushed[p], flushed);
    }
    const double last = static_cast<double>(std::max<std::int64_t>(key.inputs.steps - 1, 1));
    // A little room before step 0: its label clears the value axis's lowest one, which sits at
    // the same corner (they touched in projector type).
    const double pad = std::max(0.5, 0.02 * last);
    setPaddedRange(m_stepAxis, 0, last, pad, true);
    setPaddedRange(m_lostStepAxis, 0, last, pad, true);
    setLogDecades(m_policyErrorAxis, std::isfinite(lo) ? lo : 1.0, hi > 0 ? hi : 10.0);
    setNiceRange(m_lostAxis, 0, most > 0 ? most : 1.0, true);
    showSpikeLines();
}

void Fp8Tab::showSpikeLines()
{
    const core::Fp8PolicyInputs& in = m_policyKey->inputs;
    const bool spike = in.spike != 1.0 && in.spikeStep < in.steps;
    for (QLineSeries* line : {m_spikeOnError, m_spikeOnLost})
        line->setVisible(spike);
    if (!spike)
        return;
    const double x = static_cast<double>(in.spikeStep);
    const QString name = tr("Spike");
    for (auto [line, axis] :
         {std::pair<QLineSeries*, QAbstractAxis*>{m_spikeOnError, m_policyErrorAxis},
          std::pair<QLineSeries*, QAbstractAxis*>{m_spikeOnLost, m_lostAxis}}) {
        double lo = 0, hi = 1;
        if (auto* log = qobject_cast<QLogValueAxis*>(axis)) {
            lo = log->min();
            hi = log->max();
        } else if (auto* value = qobject_cast<QValueAxis*>(axis)) {
            lo = value->min();
            hi = value->max();
        }
        replaceIfChanged(line, QList<QPointF>{{x, lo}, {x, hi}});
        if (line->name() != name)
            line->setName(name);
    }
}

const core::Fp8AccumulationPoint* Fp8Tab::publishedPoint() const
{
    if (!m_accumulation || m_accumulation->points.empty())
        return nullptr;
    const auto distance = [](std::int64_t k) {
        return std::abs(std::log2(static_cast<double>(k) / static_cast<double>(kPublishedK)));
    };
    return &*std::min_element(
        m_accumulation->points.begin(), m_accumulation->points.end(),
        [&](const auto& a, const auto& b) { return distance(a.k) < distance(b.k); });
}

int Fp8Tab::stepsWorseAfterSpike() const
{
    if (!m_policy || !m_policyKey)
        return 0;
    const core::Fp8PolicyInputs& in = m_policyKey->inputs;
    if (in.spike == 1.0 || in.spikeStep >= in.steps)
        return 0;
    const auto& delayed = m_policy->steps[static_cast<int>(ScalingPolicy::Delayed)];
    const auto& current = m_policy->steps[static_cast<int>(ScalingPolicy::PerTensor)];
    int worse = 0;
    for (std::size_t s = static_cast<std::size_t>(in.spikeStep) + 1; s < delayed.size(); ++s)
        if (delayed[s].flushed > current[s].flushed
            || delayed[s].relativeError > kWorseFactor * current[s].relativeError)
            worse = static_cast<int>(s - static_cast<std::size_t>(in.spikeStep));
    return worse;
}

void Fp8Tab::showPartFigures()
{
    switch (m_part) {
    case Part::Accumulation:
        showAccumulationFigures();
        break;
    case Part::Policy:
        showPolicyFigures();
        break;
    case Part::BlockScaling:
        if (m_view)
            showFigures(*m_view);
        break;
    }
}

void Fp8Tab::showAccumulationFigures()
{
    const core::Fp8AccumulationPoint* p = publishedPoint();
    if (!p) {
        figuresLabel()->setText({});
        return;
    }
    const auto mode = [p](AccumulationMode m) {
        return p->maxRelativeError[static_cast<int>(m)];
    };
    const double limited = mode(AccumulationMode::Limited);
    const QString where = p->k == kPublishedK
        ? tr("At K = %1").arg(formatWhole(p->k))
        : tr("At K = %1 (the nearest to %2 in the sweep)")
              .arg(formatWhole(p->k), formatWhole(kPublishedK));
    const QString published =
        tr("%1: <b>Published (DeepSeek-V3)</b>: nearly 2 % max relative error, limited "
           "accumulator, no promotion · <b>ScaleLab: %2</b> (difference %3 points).")
            .arg(where, pct(limited), signedPoints(100.0 * (limited - kPublishedError)));
    const QString others =
        tr("Promoted into float32 every %1 products: <b>%2</b> · float32 all along: <b>%3</b> · "
           "RMS error, limited: %4.")
            .arg(formatWhole(m_accumulationKey->inputs.promotionInterval),
                 pct(mode(AccumulationMode::Promoted)), pct(mode(AccumulationMode::Float32)),
                 pct(p->rmsRelativeError[static_cast<int>(AccumulationMode::Limited)]));
    figuresLabel()->setText(published + QStringLiteral("<br>") + others);
}

void Fp8Tab::showPolicyFigures()
{
    if (!m_policy || !m_policyKey) {
        figuresLabel()->setText({});
        return;
    }
    const core::Fp8PolicyInputs& in = m_policyKey->inputs;
    const QStringList names = {tr("delayed"), tr("current"), tr("fine")};
    if (in.spike == 1.0 || in.spikeStep >= in.steps) {
        QStringList parts;
        for (int p = 0; p < core::kScalingPolicies; ++p) {
            std::int64_t saturated = 0, flushed = 0;
            for (const core::Fp8PolicyStep& s : m_policy->steps[p]) {
                saturated += s.saturated;
                flushed += s.flushed;
            }
            parts << tr("%1 <b>%2</b> saturated, %3 flushed")
                         .arg(names[p], formatWhole(saturated), formatWhole(flushed));
        }
        figuresLabel()->setText(tr("No spike in these %1 steps. Over all steps: %2.")
                                    .arg(in.steps)
                                    .arg(parts.join(QStringLiteral("; "))));
        return;
    }
    const auto at = static_cast<std::size_t>(in.spikeStep);
    QStringList parts;
    for (int p = 0; p < core::kScalingPolicies; ++p) {
        const core::Fp8PolicyStep& s = m_policy->steps[p][at];
        parts << tr("%1 <b>%2</b> / %3")
                     .arg(names[p], formatWhole(s.saturated), formatWhole(s.flushed));
    }
    const QString head = tr("At the spike (step %1), values saturated / flushed to 0: %2.")
                             .arg(in.spikeStep)
                             .arg(parts.join(QStringLiteral(", ")));
    const QString after =
        tr("Delayed scaling then stays worse than current scaling (more values flushed, or over "
           "%1x its error) for <b>%2</b> steps; its amax history is %3 steps.")
            .arg(formatNumber(kWorseFactor))
            .arg(stepsWorseAfterSpike())
            .arg(in.history);
    figuresLabel()->setText(head + QStringLiteral("<br>") + after);
}

void Fp8Tab::addTrainingValues(QHash<QString, QString>& values) const
{
    if (const core::Fp8AccumulationPoint* p = publishedPoint()) {
        const auto& in = m_accumulationKey->inputs;
        values.insert({
            {"acc_k", formatWhole(p->k)},
            {"acc_bits", formatWhole(in.accumulatorBits)},
            {"acc_interval", formatWhole(in.promotionInterval)},
            {"acc_float32", pct(p->maxRelativeError[static_cast<int>(AccumulationMode::Float32)])},
            {"acc_limited", pct(p->maxRelativeError[static_cast<int>(AccumulationMode::Limited)])},
            {"acc_promoted",
             pct(p->maxRelativeError[static_cast<int>(AccumulationMode::Promoted)])},
        });
    }
    if (m_policy && m_policyKey) {
        const core::Fp8PolicyInputs& in = m_policyKey->inputs;
        values.insert({
            {"policy_history", formatWhole(in.history)},
            {"policy_spike", formatNumber(in.spike)},
            {"policy_spike_step", formatWhole(in.spikeStep)},
            {"policy_worse_steps", formatWhole(stepsWorseAfterSpike())},
        });
        std::int64_t saturated = 0, flushed = 0; // no spike inside the run: nothing at it
        if (in.spikeStep < in.steps) {
            const auto at = static_cast<std::size_t>(in.spikeStep);
            saturated = m_policy->steps[static_cast<int>(ScalingPolicy::Delayed)][at].saturated;
            flushed = m_policy->steps[static_cast<int>(ScalingPolicy::PerTensor)][at].flushed;
        }
        values.insert({{"policy_delayed_saturated", formatWhole(saturated)},
                       {"policy_current_flushed", formatWhole(flushed)}});
    }
}

} // namespace scalelab::ui
