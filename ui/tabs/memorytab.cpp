#include "memorytab.h"

#include "chartdata.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "choicebox.h"
#include "legendrows.h"
#include "parametercontrol.h"
#include "scalelab/core/memory.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QScrollArea>
#include <QStackedBarSeries>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace scalelab::ui {

namespace {

struct Recipe {
    const char* name;
    std::int64_t weight, grad, master, moments;
};

// Bytes per parameter of common optimizer set-ups.
constexpr Recipe kRecipes[] = {
    {QT_TRANSLATE_NOOP("scalelab::ui::MemoryTab", "Mixed-precision Adam: 2 + 2 + 4 + 8"), 2, 2, 4,
     8},
    {QT_TRANSLATE_NOOP("scalelab::ui::MemoryTab", "Pure fp32 Adam: 4 + 4 + 0 + 8"), 4, 4, 0, 8},
    {QT_TRANSLATE_NOOP("scalelab::ui::MemoryTab", "bf16 with 8-bit moments: 2 + 2 + 4 + 2"), 2, 2,
     4, 2},
};

} // namespace

MemoryTab::MemoryTab(document::ScenarioDocument* document, QWidget* parent)
    : Tab(document, core::Section::Memory, parent)
{
    setObjectName("memory");
    buildControls();
    buildBudgetChart();
    buildCheckpointChart();
    // Side by side only where each is wide enough for the budget's legend beside its bars and
    // the checkpointing chart's legend under its plot; one above the other below that.
    setCharts({m_budget, m_checkpoint}, 2, kMemoryChartChars);
    sectionShown();
    drawFirst();
}

void MemoryTab::buildControls()
{
    // Model state: the parameter count and how many bytes each parameter costs.
    QVBoxLayout* modelBox = addGroup(tr("Model state"));
    addControl(modelBox, "memory.parameters");
    m_recipe = new ChoiceBox;
    m_recipe->setObjectName("memory.recipe");
    m_recipe->setAccessibleName(tr("Optimizer recipe"));
    for (const Recipe& r : kRecipes)
        m_recipe->addItem(tr(r.name));
    m_recipe->addItem(tr("Custom bytes"));
    auto* recipeRow = new QFormLayout;
    recipeRow->addRow(tr("&Recipe"), m_recipe);
    modelBox->addLayout(recipeRow);
    connect(m_recipe, &QComboBox::activated, this, &MemoryTab::applyRecipe);

    auto* bytes = new QWidget;
    auto* bytesBox = new QVBoxLayout(bytes);
    bytesBox->setContentsMargins(12, 0, 0, 0);
    for (const char* key :
         {"memory.weight_bytes", "memory.grad_bytes", "memory.master_bytes", "memory.moment_bytes"})
        addControl(bytesBox, key);
    addDisclosure(modelBox, tr("Bytes per parameter"), bytes, tr("Show bytes per parameter"));

    // Activations: tokens in the batch, width, depth and what each layer saves.
    QVBoxLayout* actsBox = addGroup(tr("Activations"));
    for (const char* key : {"memory.batch", "memory.sequence", "memory.hidden", "memory.layers",
                            "memory.bytes_per_value", "memory.tensors_per_layer"})
        addControl(actsBox, key);

    // Checkpointing: on or off, and how many segments.
    QVBoxLayout* ckptBox = addGroup(tr("Activation checkpointing"));
    m_checkpointBox = addCheckBox(ckptBox, "memory.checkpointing");
    addControl(ckptBox, "memory.segments");

    // The accelerator the budget is measured against, and the unit of every figure.
    QVBoxLayout* deviceBox = addGroup(tr("Accelerator"));
    auto* form = new QFormLayout;
    deviceBox->addLayout(form);
    ParameterControl* capacity = addAcceleratorMemory(deviceBox, form, "memory", m_accelerator);
    m_unitBox = addChoice(form, "memory.unit");
    // Tab in the order they are seen: the form's two rows (Memory, Units), then the capacity
    // control under the form, though it was made before Units.
    setTabOrder(m_accelerator, m_unitBox);
    setTabOrder(m_unitBox, capacity->slider());
    setTabOrder(capacity->slider(), capacity->spinBox());
}

void MemoryTab::buildBudgetChart()
{
    m_budget = new ChartViewPanel("memory-budget");
    QChart* chart = m_budget->chart();
    chart->setTitle(tr("What one accelerator holds"));
    m_bars = new QStackedBarSeries;
    const QStringList names = {tr("Weights"),        tr("Gradients"),
                               tr("Master weights"), tr("Adam moments"),
                               tr("Activations"),    tr("Checkpointed activations")};
    const QList<QColor> colours = {palette::kBlue,   palette::kSkyBlue,    palette::kGreen,
                                   palette::kPurple, palette::kVermillion, palette::kOrange};
    // What a lesson step highlights each part by (document::highlightableSeries).
    const QStringList keys = {"weights",      "gradients",   "master_weights",
                              "adam_moments", "activations", "checkpointed_activations"};
    for (int i = 0; i < names.size(); ++i) {
        auto* set = new QBarSet(names[i]);
        set->setObjectName(keys[i]);
        set->setColor(colours[i]);
        set->setBorderColor(Qt::white);
        m_sets << set;
        m_bars->append(set);
    }
    m_bars->setBarWidth(0.6);
    // Stacked parts read best with the legend beside them, one entry a line.
    chart->legend()->setAlignment(Qt::AlignRight);
    chart->addSeries(m_bars);
    m_budgetCategories = new QBarCategoryAxis;
    m_budgetY = new QValueAxis;
    chart->addAxis(m_budgetCategories, Qt::AlignBottom);
    chart->addAxis(m_budgetY, Qt::AlignLeft);
    m_bars->attachAxis(m_budgetCategories);
    m_bars->attachAxis(m_budgetY);
    styleAxis(m_budgetCategories, QString());
    m_budgetCategories->setTitleVisible(false);

    m_limitLine = new QLineSeries;
    m_limitLine->setObjectName("accelerator");
    QPen pen(palette::kBlack, kLineWidth, Qt::DashLine);
    m_limitLine->setPen(pen);
    chart->addSeries(m_limitLine);
    m_limitLine->attachAxis(m_budgetCategories);
    m_limitLine->attachAxis(m_budgetY);
}

void MemoryTab::buildCheckpointChart()
{
    m_checkpoint = new ChartViewPanel("memory-checkpointing");
    QChart* chart = m_checkpoint->chart();
    chart->setTitle(tr("Checkpointing: memory saved, compute paid"));
    m_segmentsAxis = new QValueAxis;
    m_bytesAxis = new QValueAxis;
    m_computeAxis = new QValueAxis;
    chart->addAxis(m_segmentsAxis, Qt::AlignBottom);
    chart->addAxis(m_bytesAxis, Qt::AlignLeft);
    chart->addAxis(m_computeAxis, Qt::AlignRight);
    styleAxis(m_segmentsAxis, tr("Checkpoint segments"));
    styleAxis(m_computeAxis, tr("Extra compute (% of one forward)"), tr("Extra compute (%)"));
    setNiceRange(m_computeAxis, 0, 110);
    m_computeAxis->setGridLineVisible(false);

    const auto add = [&](QXYSeries* s, const QString& name, QAbstractAxis* y) {
        s->setName(name);
        chart->addSeries(s);
        s->attachAxis(m_segmentsAxis);
        s->attachAxis(y);
    };
    m_uncheckpointed = new QLineSeries;
    m_uncheckpointed->setPen(QPen(palette::kVermillion, kLineWidth, Qt::DashLine));
    m_uncheckpointed->setObjectName("all_saved");
    add(m_uncheckpointed, tr("All saved"), m_bytesAxis);
    m_checkpointed = new QLineSeries;
    m_checkpointed->setPen(QPen(palette::kOrange, kLineWidth));
    m_checkpointed->setObjectName("checkpointed");
    add(m_checkpointed, tr("Checkpointed"), m_bytesAxis);
    m_recompute = new QLineSeries;
    m_recompute->setPen(QPen(palette::kBlue, kLineWidth, Qt::DashDotLine));
    m_recompute->setObjectName("extra_compute");
    add(m_recompute, tr("Extra compute"), m_computeAxis);
    m_current = new QScatterSeries;
    m_current->setMarkerSize(16);
    m_current->setColor(palette::kBlack);
    m_current->setBorderColor(Qt::white);
    add(m_current, tr("Yours"), m_bytesAxis);
    m_optimum = new QScatterSeries;
    m_optimum->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    m_optimum->setMarkerSize(14);
    m_optimum->setColor(palette::kGreen);
    m_optimum->setBorderColor(Qt::black);
    add(m_optimum, tr("Fewest"), m_bytesAxis);
    // The two points say what they are beside them, so the legend lists only the curves.
    for (QScatterSeries* point : {m_current, m_optimum})
        for (QLegendMarker* marker : chart->legend()->markers(point))
            showInLegend(marker, false);
    m_currentNote = new QGraphicsSimpleTextItem(chart);
    m_optimumNote = new QGraphicsSimpleTextItem(chart);
    connect(chart, &QChart::plotAreaChanged, this, &MemoryTab::placePointNotes);
}

void MemoryTab::placePointNotes()
{
    const QRectF plot = m_checkpoint->chart()->plotArea();
    // Yours above its dot, the fewest under its square: the fewest bytes are never above
    // yours, so the two notes never meet, even on the same point.
    const auto place = [&](QGraphicsSimpleTextItem* note, QScatterSeries* series, bool above) {
        styleNote(note, chartFonts().annotation);
        if (series->count() == 0)
            return;
        const QPointF at = m_checkpoint->chart()->mapToPosition(series->at(0), series);
        const QSizeF size = note->boundingRect().size();
        const double gap = series->markerSize() / 2 + 2;
        const double x = std::clamp(at.x() - size.width() / 2, plot.left(),
                                    std::max(plot.left(), plot.right() - size.width()));
        const double y = std::clamp(above ? at.y() - gap - size.height() : at.y() + gap, plot.top(),
                                    std::max(plot.top(), plot.bottom() - size.height()));
        note->setPos(x, y);
    };
    place(m_currentNote, m_current, true);
    place(m_optimumNote, m_optimum, false);
}

QList<ChartPanel*> MemoryTab::charts() const
{
    return {m_budget, m_checkpoint};
}

double MemoryTab::acceleratorBytes() const
{
    return scenario().memoryDisplay.acceleratorGb * 1e9;
}

ByteUnit MemoryTab::byteUnit() const
{
    return scenario().memoryDisplay.gib ? ByteUnit::GiB : ByteUnit::GB;
}

bool MemoryTab::checkpointing() const
{
    return scenario().memoryDisplay.checkpointing;
}

void MemoryTab::sectionShown()
{
    control("memory.segments")->setEnabled(checkpointing());
    syncRecipe();
}

QHash<QString, QString> MemoryTab::explanationValues() const
{
    const core::MemoryResult r = core::computeMemory(inputs());
    const double limit = acceleratorBytes();
    const double total = static_cast<double>(r.modelStateBytes)
        + static_cast<double>(checkpointing() ? r.checkpointedActivationBytes : r.activationBytes);
    const std::int64_t segmentLength =
        (inputs().layers + inputs().segments - 1) / inputs().segments;
    return {
        {"bytes_per_parameter",
         formatNumber(static_cast<double>(r.modelStateBytes)
                      / static_cast<double>(inputs().parameters))},
        {"parameters", formatCount(static_cast<double>(inputs().parameters))},
        {"model_state", formatBytes(static_cast<double>(r.modelStateBytes), byteUnit())},
        {"tokens", formatWhole(inputs().tokens)},
        {"hidden", formatWhole(inputs().hidden)},
        {"layers", formatWhole(inputs().layers)},
        {"bytes_per_value", formatWhole(inputs().bytesPerValue)},
        {"tensors_per_layer", formatWhole(inputs().tensorsPerLayer)},
        {"activations", formatBytes(static_cast<double>(r.activationBytes), byteUnit())},
        {"segments", formatWhole(inputs().segments)},
        {"segment_length", formatWhole(segmentLength)},
        {"checkpointed",
         formatBytes(static_cast<double>(r.checkpointedActivationBytes), byteUnit())},
        {"optimal_segments", formatWhole(r.optimalSegments)},
        {"recomputed_layers", formatWhole(r.recomputedLayers)},
        {"recompute_percent", formatNumber(100.0 * r.recomputeFraction) + "%"},
        {"total", formatBytes(total, byteUnit())},
        {"accelerator", formatBytes(limit, byteUnit())},
        {"verdict", total <= limit ? tr("it fits") : tr("it does not fit")},
    };
}

void MemoryTab::applyRecipe(int index)
{
    if (index < 0 || index >= static_cast<int>(std::size(kRecipes)))
        return;
    const Recipe& r = kRecipes[index];
    document()->edit(core::Section::Memory, tr("Recipe %1").arg(tr(r.name)),
                     [&r](core::Scenario& s) {
                         s.memory.weightBytes = r.weight;
                         s.memory.gradBytes = r.grad;
                         s.memory.masterBytes = r.master;
                         s.memory.momentBytes = r.moments;
                     });
}

void MemoryTab::syncRecipe()
{
    const auto whole = [this](const char* key) {
        return control(key)->wholeValue();
    };
    int match = static_cast<int>(std::size(kRecipes));
    for (int i = 0; i < static_cast<int>(std::size(kRecipes)); ++i) {
        const Recipe& r = kRecipes[i];
        if (whole("memory.weight_bytes") == r.weight && whole("memory.grad_bytes") == r.grad
            && whole("memory.master_bytes") == r.master
            && whole("memory.moment_bytes") == r.moments)
            match = i;
    }
    m_recipe->setCurrentIndex(match);
}

void MemoryTab::recompute()
{
    const core::MemoryResult r = core::computeMemory(inputs());
    showBudget(r);
    showCheckpointing(r);
    showFigures(r);
}

void MemoryTab::showBudget(const core::MemoryResult& r)
{
    const double unit = bytesPerUnit(byteUnit());
    const auto in = [unit](double bytes) {
        return bytes / unit;
    };
    // One bar without checkpointing and, when it is on, one with it.
    const double state = static_cast<double>(r.modelStateBytes);
    const double all = state + static_cast<double>(r.activationBytes);
    const double ckpt = state + static_cast<double>(r.checkpointedActivationBytes);
    const int bars = checkpointing() ? 2 : 1;
    const QList<double> stateParts = {
        static_cast<double>(r.weightBytes), static_cast<double>(r.gradBytes),
        static_cast<double>(r.masterBytes), static_cast<double>(r.momentBytes)};
    for (int i = 0; i < 4; ++i)
        setBarValues(m_sets[i], QList<qreal>(bars, in(stateParts[i])));
    setBarValues(m_sets[4],
                 QList<qreal>{in(static_cast<double>(r.activationBytes))}
                     + QList<qreal>(bars - 1, 0.0));
    setBarValues(
        m_sets[5],
        QList<qreal>{0.0}
            + QList<qreal>(bars - 1, in(static_cast<double>(r.checkpointedActivationBytes))));
    QStringList categories = {tr("All saved<br>%1").arg(formatBytes(all, byteUnit()))};
    // A line each for the count and its noun: a bar's category is only half the plot wide.
    if (checkpointing())
        categories << countText(tr("%1 segment(s)", nullptr, pluralChoice(inputs().segments)),
                                inputs().segments)
                          .replace(QLatin1Char(' '), QStringLiteral("<br>"))
                + "<br>" + formatBytes(ckpt, byteUnit());
    if (m_budgetCategories->categories() != categories) {
        m_budgetCategories->clear();
        m_budgetCategories->append(categories);
    }
    // The markers of an unused set stay out of the legend.
    const auto markers = m_budget->chart()->legend()->markers(m_bars);
    if (markers.size() == 6)
        showInLegend(markers[5], checkpointing());

    const double limit = acceleratorBytes();
    m_limitLine->setName(tr("Accelerator: %1").arg(formatBytes(limit, byteUnit())));
    replaceIfChanged(m_limitLine, QList<QPointF>{{-0.5, in(limit)}, {bars - 0.5, in(limit)}});
    setStickyRange(m_budgetY, 0, std::max(all, limit) / unit * 1.04);
    styleAxis(m_budgetY, tr("Memory (%1)").arg(unitName(byteUnit())));
}

void MemoryTab::showCheckpointing(const core::MemoryResult& r)
{
    const double unit = bytesPerUnit(byteUnit());
    const auto in = [unit](double bytes) {
        return bytes / unit;
    };
    // Bytes against the segment count, with the choice and the optimum marked.
    const std::int64_t layers = inputs().layers;
    const std::vector<std::int64_t> counts =
        core::segmentCountsToPlot(layers, {inputs().segments, r.optimalSegments});
    QList<QPointF> ckptPoints, computePoints;
    ckptPoints.reserve(static_cast<qsizetype>(counts.size()));
    computePoints.reserve(static_cast<qsizetype>(counts.size()));
    for (const std::int64_t s : counts) {
        const auto x = static_cast<double>(s);
        ckptPoints.append({x,
                           in(static_cast<double>(core::checkpointedActivationBytes(
                               inputs().tokens, inputs().hidden, layers, s, inputs().bytesPerValue,
                               inputs().tensorsPerLayer)))});
        computePoints.append(
            {x,
             100.0
                 * static_cast<double>(core::recomputedLayers(layers, s, inputs().tensorsPerLayer))
                 / static_cast<double>(layers)});
    }
    replaceIfChanged(m_checkpointed, ckptPoints);
    replaceIfChanged(m_recompute, computePoints);
    const double full = in(static_cast<double>(r.activationBytes));
    replaceIfChanged(m_uncheckpointed,
                     QList<QPointF>{{1, full}, {static_cast<double>(layers), full}});
    replaceIfChanged(m_current,
                     QList<QPointF>{{static_cast<double>(inputs().segments),
                                     in(static_cast<double>(r.checkpointedActivationBytes))}});
    replaceIfChanged(m_optimum,
                     QList<QPointF>{{static_cast<double>(r.optimalSegments),
                                     in(static_cast<double>(r.optimalCheckpointedBytes))}});
    m_currentNote->setText(tr("Yours: %1").arg(inputs().segments));
    m_optimumNote->setText(tr("Fewest: %1").arg(r.optimalSegments));
    // Whole segment counts from 0 so the ticks fall on round numbers; 1 is the first point and
    // the axis ends at the last (one range change: a nice range then a new maximum was two
    // layouts a step, and a resize that thinned the ticks lost the maximum).
    setPaddedRange(m_segmentsAxis, 0, static_cast<double>(std::max<std::int64_t>(layers, 2)), 0);
    double top = full;
    for (const QPointF& p : ckptPoints)
        top = std::max(top, p.y());
    setStickyRange(m_bytesAxis, 0, top * 1.04);
    styleAxis(m_bytesAxis, tr("Saved activations (%1)").arg(unitName(byteUnit())),
              tr("Saved (%1)").arg(unitName(byteUnit())));
    placePointNotes(); // the points moved (a new range moves them again: plotAreaChanged)
}

void MemoryTab::showFigures(const core::MemoryResult& r)
{
    // The equation with today's numbers.
    const double state = static_cast<double>(r.modelStateBytes);
    const double all = state + static_cast<double>(r.activationBytes);
    const double ckpt = state + static_cast<double>(r.checkpointedActivationBytes);
    const double limit = acceleratorBytes();
    const double bytesPerParam =
        static_cast<double>(r.modelStateBytes) / static_cast<double>(inputs().parameters);
    const bool fits = (checkpointing() ? ckpt : all) <= limit;
    figuresLabel()->setText(
        tr("<b>Model state</b> %1 bytes x %2 parameters = <b>%3</b> &nbsp;·&nbsp; "
           "<b>Activations</b> %4 (all saved), <b>%5</b> with %6 segments (fewest at %7) "
           "&nbsp;·&nbsp; <b>Total</b> %8 against %9: %10")
            .arg(formatNumber(bytesPerParam), formatCount(static_cast<double>(inputs().parameters)),
                 formatBytes(state, byteUnit()),
                 formatBytes(static_cast<double>(r.activationBytes), byteUnit()),
                 formatBytes(static_cast<double>(r.checkpointedActivationBytes), byteUnit()))
            .arg(inputs().segments)
            .arg(r.optimalSegments)
            .arg(formatBytes(checkpointing() ? ckpt : all, byteUnit()),
                 formatBytes(limit, byteUnit()),
                 fits ? tr("<b>fits</b>") : tr("<b>does not fit</b>")));
}

} // namespace scalelab::ui
