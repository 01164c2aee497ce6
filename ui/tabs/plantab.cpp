#include "plantab.h"

#include "chartdata.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "choicebox.h"
#include "fields.h"
#include "format.h"
#include "notelabel.h"
#include "parametercontrol.h"
#include "plancommunicationpanel.h"
#include "planexport.h"
#include "planpublishedpanel.h"
#include "plansearchpanel.h"

#include <QApplication>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalBlocker>
#include <QStackedBarSeries>
#include <QStandardPaths>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace scalelab::ui {

namespace {

using core::ActivationVariant;

/// The plan measures GPUs in GiB (gpu_memory_gib), so every byte figure of the tab is in GiB.
constexpr double kGiB = 1073741824.0;
constexpr double kGpuPresetsGib[] = {24, 40, 80, 141};

const QColor kWeightsColor = palette::kBlue;
const QColor kGradientsColor = palette::kSkyBlue;
const QColor kOptimizerColor = palette::kGreen;
const QColor kActivationsColor = palette::kVermillion;
const QColor kRoomColor(110, 110, 110);
const QColor kPipelineColor(100, 100, 100);

/// Controls behind a disclosure sit this far right of the button that shows them (pixels).
constexpr int kDisclosureIndent = 12;
constexpr double kBarWidth = 0.7; ///< of a category's width
/// One or two stages would otherwise be slabs as wide as the chart: each stage adds this much
/// bar width up to kBarWidth.
constexpr double kBarWidthPerStage = 0.28;
constexpr double kMemoryHeadroom = 1.08; ///< the memory axis past the tallest bar or line
constexpr double kLabelHeadroom = 1.15; ///< room beyond the longest recipe bar for its label
constexpr double kPeakMarkerLift = 0.035; ///< the star above its bar, of the axis span
constexpr double kPeakMarkerSize = 22; ///< the busiest GPU's star, in pixels
constexpr double kMessageFontScale = 1.15; ///< the refusal box, of the window's type
constexpr double kSourceFontScale = 0.9; ///< the preset's source line, of the window's type
const char* const kRefusalStyle =
    "QLabel { color: black; background: #fdf3cf; border: 3px solid #e69f00; border-radius: 6px; "
    "padding: 8px; font-weight: bold; }";

QString gib(double bytes)
{
    return formatBytes(bytes, ByteUnit::GiB);
}

QString gib(const core::Ratio& bytes)
{
    return gib(bytes.value());
}

/// The short name of a Table 2 recipe beside its bar: TP for tensor parallelism and SP for
/// sequence parallelism, as the figures line and the "+ SP" of the plan's own recipe say.
QString variantLabel(ActivationVariant v)
{
    switch (v) {
    case ActivationVariant::NoParallelism:
        return QObject::tr("No parallelism (t = 1)");
    case ActivationVariant::TensorParallel:
        return QObject::tr("TP");
    case ActivationVariant::TensorSequenceParallel:
        return QObject::tr("TP + SP");
    case ActivationVariant::TensorSelective:
        return QObject::tr("TP + selective");
    case ActivationVariant::TensorSequenceSelective:
        return QObject::tr("TP + SP + selective");
    case ActivationVariant::FullRecompute:
        break;
    }
    return QObject::tr("Full recompute");
}

/// The formula of the plan's bubble share. With fewer microbatches than stages the pipeline
/// never fills: (p-m) v + m - 1 idle chunk slots where a full pipeline has p - 1
/// (core::pipelineBubbleOverBusy).
QString bubbleFormula(const core::PlanInputs& in, std::int64_t microbatches)
{
    if (in.virtualStages > 1 && microbatches < in.pipelineParallel)
        return PlanTab::tr("((p&minus;m)&middot;v+m&minus;1)/(v&middot;p+m&minus;1) (fewer "
                           "microbatches than stages)");
    return in.virtualStages > 1 ? PlanTab::tr("(p&minus;1)/(v&middot;m+p&minus;1)")
                                : PlanTab::tr("(p&minus;1)/(m+p&minus;1)");
}

QString zeroName(std::int64_t stage)
{
    return stage == 0 ? QObject::tr("plain data parallelism") : QObject::tr("ZeRO-%1").arg(stage);
}

/// The part of core's communication note about one axis: from its "Name:" to the next axis.
QString noteSection(const QString& note, const QString& start, const QStringList& all)
{
    const qsizetype from = note.indexOf(start + ':');
    if (from < 0)
        return {};
    qsizetype to = note.size();
    for (const QString& other : all) {
        const qsizetype at = note.indexOf(other + ':', from + 1);
        if (at > from && at < to)
            to = at;
    }
    QString section = note.mid(from + start.size() + 1, to - from - start.size() - 1).trimmed();
    // It continues a sentence in the note; beside its bar it starts one.
    if (!section.isEmpty())
        section[0] = section[0].toUpper();
    return section;
}

/// Ticks at whole stage numbers, about eight of them, whatever the stage count. Every setter
/// relayouts the chart even when given what it has, so each is called only on a change.
void setStageRange(QValueAxis* axis, int stages)
{
    double step = 1;
    for (const double s : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0})
        if (stages / s <= 9) {
            step = s;
            break;
        }
    if (stages / step > 9)
        step = std::ceil(stages / 9.0);
    if (axis->tickType() != QValueAxis::TicksDynamic)
        axis->setTickType(QValueAxis::TicksDynamic);
    if (axis->tickAnchor() != 0)
        axis->setTickAnchor(0);
    if (axis->min() != -0.5 || axis->max() != stages - 0.5) {
        // Widen before a finer step, never ask for a flood of ticks over the old range.
        if (step >= axis->tickInterval()) {
            axis->setTickInterval(step);
            axis->setRange(-0.5, stages - 0.5);
        } else {
            axis->setRange(-0.5, stages - 0.5);
            axis->setTickInterval(step);
        }
    } else if (axis->tickInterval() != step) {
        axis->setTickInterval(step);
    }
}

void setNameIfChanged(QAbstractSeries* series, const QString& name)
{
    if (series->name() != name)
        series->setName(name);
}

} // namespace

PlanTab::PlanTab(document::ScenarioDocument* document, QList<document::PlanPreset> presets,
                 QList<document::PublishedFigure> figures, QWidget* parent)
    : Tab(document, core::Section::Plan, parent)
    , m_presets(std::move(presets))
{
    setObjectName("plan");
    buildControls();
    buildMemoryChart();
    buildRecomputeChart();
    buildPanels(std::move(figures));
    buildTimeChart();
    buildSearchChart();
    buildSearchPanel();
    buildPartBar();

    // A refused layout must be impossible to miss from the back of the room: a framed box in
    // black on pale yellow (the palette's orange as its border), not red text alone.
    messageLabel()->setStyleSheet(kRefusalStyle);
    fitFonts();

    sectionShown();
    drawFirst();
}

QList<ChartPanel*> PlanTab::charts() const
{
    return {m_memory, m_recompute, m_communication, m_timeChart, m_searchChart};
}

double PlanTab::gpuMemoryBytes() const
{
    return std::ldexp(m_shown.gpuMemoryGib, 30);
}

void PlanTab::buildControls()
{
    buildModelGroup();
    buildBatchGroup();
    buildLayoutGroup();
    buildMemoryRecipeGroup();
    buildGpuGroup();
    buildExports(addGroup(tr("Start a real run")));
}

void PlanTab::buildModelGroup()
{
    // Model: a preset first (they set the shape), the shape itself behind a disclosure.
    QVBoxLayout* modelBox = addGroup(tr("Model"));
    m_presetBox = new ChoiceBox;
    m_presetBox->setObjectName("plan.preset");
    m_presetBox->setAccessibleName(tr("Model preset"));
    for (const document::PlanPreset& p : std::as_const(m_presets)) {
        m_presetBox->addItem(p.title, p.id);
        m_presetBox->setItemData(m_presetBox->count() - 1, p.source, Qt::ToolTipRole);
    }
    m_presetBox->addItem(tr("Your own numbers"), QString());
    auto* presetRow = new QFormLayout;
    presetRow->addRow(tr("&Preset"), m_presetBox);
    modelBox->addLayout(presetRow);
    m_presetSource = new NoteLabel;
    m_presetSource->setObjectName("plan.preset_source");
    m_presetSource->setTextInteractionFlags(Qt::TextSelectableByMouse);
    modelBox->addWidget(m_presetSource);
    connect(m_presetBox, &QComboBox::activated, this, [this](int i) {
        const QString id = m_presetBox->itemData(i).toString();
        if (!id.isEmpty())
            applyPreset(id);
        else
            syncPresetBox();
    });
    addDisclosure(modelBox, tr("Model shape"), buildModelShape(), tr("Show model shape"));
}

QWidget* PlanTab::buildModelShape()
{
    auto* shape = new QWidget;
    auto* box = new QVBoxLayout(shape);
    box->setContentsMargins(kDisclosureIndent, 0, 0, 0);
    for (const char* key : {"plan.model.layers", "plan.model.hidden", "plan.model.heads",
                            "plan.model.kv_heads", "plan.model.ffn_hidden", "plan.model.vocab"})
        addControl(box, key);
    addCheckBox(box, "plan.model.gated_mlp");
    addCheckBox(box, "plan.model.tied_embeddings");
    box->addWidget(buildExperts());
    return shape;
}

QWidget* PlanTab::buildExperts()
{
    // Mixture of experts: inert until there are experts.
    auto* moe = new QGroupBox(tr("Mixture of experts"));
    auto* moeBox = new QVBoxLayout(moe);
    addControl(moeBox, "plan.model.experts");
    for (const char* key : {"plan.model.top_k", "plan.model.expert_ffn_hidden",
                            "plan.model.shared_experts", "plan.model.dense_layers"})
        m_moeOnly << addControl(moeBox, key);
    return moe;
}

void PlanTab::buildBatchGroup()
{
    // Batch: tokens per microbatch and per optimizer step.
    QVBoxLayout* batchBox = addGroup(tr("Batch"));
    for (const char* key : {"plan.sequence", "plan.micro_batch", "plan.global_batch"})
        addControl(batchBox, key);
}

void PlanTab::buildLayoutGroup()
{
    // Layout: the axes of the lesson.
    QVBoxLayout* layoutBox = addGroup(tr("Layout"));
    for (const char* key : {"plan.gpus", "plan.tensor_parallel", "plan.pipeline_parallel"})
        addControl(layoutBox, key);
    buildLayoutChoices(layoutBox);

    auto* moreLayout = new QWidget;
    auto* moreBox = new QVBoxLayout(moreLayout);
    moreBox->setContentsMargins(kDisclosureIndent, 0, 0, 0);
    addControl(moreBox, "plan.virtual_stages");
    addControl(moreBox, "plan.expert_parallel");
    addDisclosure(layoutBox, tr("Interleaving and experts"), moreLayout,
                  tr("Show interleaving and experts"));

    // What the layout search may change: a key checked here stays at the plan's own value.
    auto* keep = new QWidget;
    auto* keepBox = new QVBoxLayout(keep);
    keepBox->setContentsMargins(kDisclosureIndent, 0, 0, 0);
    for (const document::Field* f : document::sectionFields(core::Section::Plan))
        if (f->key.startsWith(u"plan.search_keep."))
            addCheckBox(keepBox, f->key);
    addDisclosure(layoutBox, tr("Keep in the layout search"), keep,
                  tr("Show what the layout search keeps as yours"));
}

void PlanTab::buildLayoutChoices(QVBoxLayout* group)
{
    auto* choices = new QFormLayout;
    // A whole number in the scenario, offered as its four stages.
    m_zeroBox = new ChoiceBox;
    m_zeroBox->setObjectName("plan.zero_stage");
    m_zeroBox->setAccessibleName(tr("ZeRO stage"));
    m_zeroBox->addItems({tr("0: plain data parallelism"), tr("1: optimizer state sharded"),
                         tr("2: + gradients sharded"), tr("3: + weights sharded")});
    if (const document::Field* f = document::findField(u"plan.zero_stage"))
        m_zeroBox->setToolTip(f->translatedHelp());
    choices->addRow(tr("&ZeRO"), m_zeroBox);
    connect(m_zeroBox, &QComboBox::currentIndexChanged, this,
            [this](int stage) { document()->setValue("plan.zero_stage", stage); });
    QComboBox* recompute = addChoice(choices, "plan.recompute");
    recompute->setAccessibleName(tr("Activation recomputation"));
    group->addLayout(choices);
    QCheckBox* sequenceParallel = addCheckBox(group, "plan.sequence_parallel");
    sequenceParallel->setAccessibleDescription(sequenceParallel->toolTip());
}

void PlanTab::buildMemoryRecipeGroup()
{
    // Memory recipe: bytes per parameter, behind a disclosure (2 + 2 + 12 is the usual answer).
    QVBoxLayout* recipeBox = addGroup(tr("Memory recipe"));
    auto* bytes = new QWidget;
    auto* bytesBox = new QVBoxLayout(bytes);
    bytesBox->setContentsMargins(kDisclosureIndent, 0, 0, 0);
    for (const char* key : {"plan.weight_bytes", "plan.grad_bytes", "plan.optimizer_bytes"})
        addControl(bytesBox, key);
    addDisclosure(recipeBox, tr("Bytes per parameter"), bytes, tr("Show bytes per parameter"));
}

void PlanTab::buildGpuGroup()
{
    // GPU: its memory in GiB, the unit the plan compares against. The box names a common
    // size; the exact capacity is the scenario's.
    QVBoxLayout* gpuBox = addGroup(tr("GPU"));
    buildHardwareChoices(gpuBox);
    auto* gpuForm = new QFormLayout;
    m_gpuBox = new ChoiceBox;
    m_gpuBox->setObjectName("plan.gpu");
    m_gpuBox->setAccessibleName(tr("GPU memory preset"));
    for (const double g : kGpuPresetsGib)
        m_gpuBox->addItem(tr("%1 GiB (a \"%1 GB\" GPU)").arg(g), g);
    m_gpuBox->addItem(tr("Other"), 0.0);
    gpuForm->addRow(tr("M&emory"), m_gpuBox);
    gpuBox->addLayout(gpuForm);
    addControl(gpuBox, "plan.gpu_memory_gib");
    buildLinkControls(gpuBox);
    connect(m_gpuBox, &QComboBox::activated, this, [this](int i) {
        const double g = m_gpuBox->itemData(i).toDouble();
        if (g > 0)
            document()->setValue("plan.gpu_memory_gib", g);
    });
}

void PlanTab::buildExports(QVBoxLayout* group)
{
    auto* note = new NoteLabel(tr("The plan as files a run starts from; a layout the framework "
                                  "itself would refuse is refused here, with the reason."));
    group->addWidget(note);
    auto* row = new QHBoxLayout;
    auto* deepSpeed = new QPushButton(tr("Save DeepSpeed config..."));
    deepSpeed->setObjectName("plan.save_deepspeed");
    auto* megatron = new QPushButton(tr("Save Megatron arguments..."));
    megatron->setObjectName("plan.save_megatron");
    row->addWidget(deepSpeed);
    row->addWidget(megatron);
    row->setProperty(kStackWhenCompact, true); // one over the other in a narrow column
    group->addLayout(row);
    m_exportStatus = new NoteLabel;
    m_exportStatus->setObjectName("plan.export_status");
    m_exportStatus->setTextInteractionFlags(Qt::TextSelectableByMouse);
    group->addWidget(m_exportStatus);
    connect(deepSpeed, &QPushButton::clicked, this,
            [this] { saveWithDialog(document::PlanFormat::DeepSpeed); });
    connect(megatron, &QPushButton::clicked, this,
            [this] { saveWithDialog(document::PlanFormat::Megatron); });
}

void PlanTab::buildPanels(QList<document::PublishedFigure> figures)
{
    m_communication = new PlanCommunicationPanel("plan-communication");
    m_communication->setTitle(tr("What one GPU sends per optimizer step, by axis"));
    m_communication->setUnit(kGiB, "GiB");
    m_published = new PlanPublishedPanel("plan-published");
    m_published->setFigures(figures);
    connect(m_published, &PlanPublishedPanel::loadRequested, this, &PlanTab::loadPublishedFigure);
}

void PlanTab::buildMemoryChart()
{
    m_memory = new ChartViewPanel("plan-memory");
    QChart* chart = m_memory->chart();
    chart->setTitle(tr("What one GPU of each pipeline stage holds"));
    m_stageBars = new QStackedBarSeries;
    const QStringList names = {tr("Weights"), tr("Gradients"), tr("Optimizer state"),
                               tr("Activations")};
    const QList<QColor> colours = {kWeightsColor, kGradientsColor, kOptimizerColor,
                                   kActivationsColor};
    for (int i = 0; i < names.size(); ++i) {
        auto* set = new QBarSet(names[i]);
        set->setColor(colours[i]);
        set->setBorderColor(Qt::white);
        m_stageSets << set;
        m_stageBars->append(set);
    }
    m_stageBars->setBarWidth(kBarWidth);
    chart->addSeries(m_stageBars);
    // Stage numbers on a value axis: its ticks thin out by themselves for deep pipelines.
    m_stageAxis = new QValueAxis;
    m_stageAxis->setLabelFormat("%.0f");
    m_stageAxis->setGridLineVisible(false);
    m_memoryAxis = new QValueAxis;
    chart->addAxis(m_stageAxis, Qt::AlignBottom);
    chart->addAxis(m_memoryAxis, Qt::AlignLeft);
    m_stageBars->attachAxis(m_stageAxis);
    m_stageBars->attachAxis(m_memoryAxis);
    styleAxis(m_stageAxis, tr("Pipeline stage (one GPU of each)"));
    styleAxis(m_memoryAxis, tr("Memory per GPU (GiB)"), tr("Memory (GiB)"));
    chart->legend()->setAlignment(Qt::AlignRight);
    buildMemoryChartLines(chart);
}

void PlanTab::buildMemoryChartLines(QChart* chart)
{
    m_gpuLine = new QLineSeries;
    m_gpuLine->setPen(QPen(palette::kBlack, kLineWidth, Qt::DashLine));
    chart->addSeries(m_gpuLine);
    m_gpuLine->attachAxis(m_stageAxis);
    m_gpuLine->attachAxis(m_memoryAxis);
    m_peakMarker = new QScatterSeries;
    m_peakMarker->setName(tr("Busiest GPU"));
    m_peakMarker->setMarkerShape(QScatterSeries::MarkerShapeStar);
    m_peakMarker->setMarkerSize(kPeakMarkerSize);
    m_peakMarker->setColor(palette::kYellow);
    m_peakMarker->setBorderColor(palette::kBlack);
    chart->addSeries(m_peakMarker);
    m_peakMarker->attachAxis(m_stageAxis);
    m_peakMarker->attachAxis(m_memoryAxis);
}

void PlanTab::buildRecomputeChart()
{
    m_recompute = new ChartViewPanel("plan-recompute");
    QChart* chart = m_recompute->chart();
    chart->setTitle(tr("Busiest GPU: activations by recipe"));
    m_roomLine = new QLineSeries;
    m_roomLine->setName(tr("Room left after model state"));
    m_roomLine->setPen(QPen(kRoomColor, kLineWidth, Qt::DashLine));
    chart->addSeries(m_roomLine);
    // Lying bars: each recipe's name fits on one line beside its bar, at any chart size.
    m_variantBars = new QHorizontalBarSeries;
    m_variantSet = new QBarSet(tr("Activations (Table 2)"));
    m_variantSet->setColor(kActivationsColor);
    m_variantSet->setBorderColor(Qt::white);
    m_variantSet->setLabelColor(chartTextColor());
    m_variantSet->setLabelFont(chartFonts().annotation);
    m_variantBars->append(m_variantSet);
    m_variantBars->setBarWidth(kBarWidth);
    m_variantBars->setLabelsVisible(true);
    m_variantBars->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    m_variantBars->setLabelsFormat("@value");
    m_variantBars->setLabelsPrecision(3);
    chart->addSeries(m_variantBars);
    // Table 2's order from the top; the first category sits at the bottom, so they go in
    // backwards, the plan's own recipe first (at the bottom, next to the axis).
    m_variantAxis = new QBarCategoryAxis;
    m_variantAxis->append(tr("Yours"));
    const std::vector<ActivationVariant> variants = core::allActivationVariants();
    for (auto v = variants.rbegin(); v != variants.rend(); ++v)
        m_variantAxis->append(variantLabel(*v));
    // The plan's own recipe in black, and named (not told by colour alone).
    m_variantSet->setSelectedColor(palette::kBlack);
    m_variantY = new QValueAxis;
    chart->addAxis(m_variantAxis, Qt::AlignLeft);
    chart->addAxis(m_variantY, Qt::AlignBottom);
    m_variantBars->attachAxis(m_variantAxis);
    m_variantBars->attachAxis(m_variantY);
    styleAxis(m_variantAxis, QString());
    m_variantAxis->setTitleVisible(false);
    m_variantAxis->setGridLineVisible(false);
    styleAxis(m_variantY, tr("Activations per GPU at its peak (GiB)"), tr("Activations (GiB)"));

    // Attached after the axes exist, but added before the bars were: drawn under their labels.
    m_roomLine->attachAxis(m_variantY);
    m_roomLine->attachAxis(m_variantAxis);
    chart->legend()->setAlignment(Qt::AlignBottom);
}

void PlanTab::sectionShown()
{
    const bool moe = inputs().model.experts > 0;
    for (QWidget* w : std::as_const(m_moeOnly))
        w->setEnabled(moe);
    syncChoiceBoxes();
    syncPresetBox();
    showPart(static_cast<Part>(scenario().planDisplay.part));
}

void PlanTab::syncChoiceBoxes()
{
    const QSignalBlocker zero(m_zeroBox), gpu(m_gpuBox);
    m_zeroBox->setCurrentIndex(
        static_cast<int>(std::clamp<std::int64_t>(inputs().zeroStage, 0, 3)));
    // The size as the capacity control shows it (one decimal) names the common size, if any.
    const int g = m_gpuBox->findData(control("plan.gpu_memory_gib")->value());
    m_gpuBox->setCurrentIndex(g >= 0 ? g : m_gpuBox->count() - 1);
}

void PlanTab::syncPresetBox()
{
    int match = -1, sameModel = -1;
    for (int i = 0; i < m_presets.size(); ++i) {
        const core::PlanInputs& preset = m_presets[i].plan;
        if (document::samePlan(inputs(), preset)) {
            match = i;
            break;
        }
        // The preset's layout around this model: equal to the preset when the model is its.
        core::PlanInputs probe = preset;
        probe.model = inputs().model;
        if (sameModel < 0 && document::samePlan(probe, preset))
            sameModel = i;
    }
    const QSignalBlocker block(m_presetBox);
    if (match >= 0) {
        m_presetBox->setCurrentIndex(match);
        m_presetSource->setText(tr("Source: %1").arg(m_presets[match].source));
    } else if (sameModel >= 0) {
        m_presetBox->setCurrentIndex(m_presetBox->count() - 1);
        m_presetSource->setText(tr("The model of \"%1\" with your own layout. Source: %2")
                                    .arg(m_presets[sameModel].title, m_presets[sameModel].source));
    } else {
        m_presetBox->setCurrentIndex(m_presetBox->count() - 1);
        m_presetSource->setText(tr("Your own numbers: pick a preset for a published model."));
    }
}

void PlanTab::loadPlan(const core::PlanInputs& plan, const QString& text)
{
    document()->edit(core::Section::Plan, text, [&plan](core::Scenario& s) { s.plan = plan; });
}

QString PlanTab::applyPreset(const QString& id)
{
    for (const document::PlanPreset& p : std::as_const(m_presets))
        if (p.id == id) {
            loadPlan(p.plan, tr("Preset %1").arg(p.title));
            return {};
        }
    return tr("no preset named %1").arg(id);
}

void PlanTab::loadPublishedFigure(int index)
{
    const QList<document::PublishedFigure>& figures = m_published->figures();
    if (index < 0 || index >= figures.size())
        return;
    loadPlan(figures[index].plan, tr("Load %1").arg(figures[index].what));
}

void PlanTab::refuse(const core::InputError& e)
{
    // Refused, never rounded: the charts keep the last plan core accepted, and the message
    // says in words which input to change and why.
    m_refused = true;
    QString label = QString::fromStdString(e.field());
    if (const document::Field* f = document::findField(label))
        label = f->translatedLabel().remove('&');
    figuresLabel()->setText(
        tr("<b>Input refused (see the box below): the charts still show the last plan that "
           "worked.</b><br>")
        + m_figuresText);
    throw core::InputError(e.field(),
                           tr("%1 is refused, not rounded: %2. The charts still show the last "
                              "plan that worked.")
                               .arg(label, QString::fromStdString(e.expected()))
                               .toStdString());
}

void PlanTab::recompute()
{
    const core::PlanInputs& in = inputs();
    // The search needs only the model, GPUs and batch: it runs even when this layout is
    // refused. It runs for the part that shows it (and before an export, catchUp): a student
    // on the memory part does not pay for it.
    if (m_part == Part::Time)
        requestSearch(in);
    try {
        core::validate(in);
    } catch (const core::InputError& e) {
        m_search->setYours(core::layoutOf(in), std::nullopt, false);
        refuse(e);
    }
    m_refused = false;
    const core::PlanResult result = core::computePlan(in);
    std::vector<core::VariantActivations> variants = core::activationVariants(in);
    const core::StepTime time = core::computeStepTime(in);
    m_shown = in;
    m_result = result;
    m_variants = std::move(variants);
    m_time = time;
    m_search->setYours(core::layoutOf(m_shown), m_time.total, m_result.fits);
    // Only the part on show is drawn now; the other catches up when it is shown (or before
    // an export): Qt Charts lays a hidden chart out again on every change too.
    m_stale = {true, true};
    drawPart(m_part);
    updateFigures();
}

void PlanTab::drawPart(Part part)
{
    bool& stale = m_stale[static_cast<std::size_t>(part)];
    if (!stale || m_result.stages.empty())
        return;
    stale = false;
    if (part == Part::Memory) {
        updateMemoryChart();
        updateRecomputeChart(m_variants);
        updateCommunication();
    } else {
        updateTimeChart();
        updateSearchChart();
    }
}

void PlanTab::catchUp()
{
    requestSearch(inputs());
    drawPart(Part::Memory);
    drawPart(Part::Time);
}

void PlanTab::updateMemoryChart()
{
    const core::PlanResult& r = m_result;
    const int stages = static_cast<int>(std::min<std::size_t>(r.stages.size(), kMaxStageBars));
    QList<qreal> parts[4];
    double tallest = gpuMemoryBytes();
    for (int i = 0; i < stages; ++i) {
        const core::PlanStage& s = r.stages[static_cast<std::size_t>(i)];
        parts[0] << s.weightBytes.value() / kGiB;
        parts[1] << s.gradBytes.value() / kGiB;
        parts[2] << s.optimizerBytes.value() / kGiB;
        parts[3] << s.activationBytes.value() / kGiB;
        tallest = std::max(tallest, s.totalBytes.value());
    }
    for (int k = 0; k < 4; ++k)
        setBarValues(m_stageSets[k], parts[k]);
    setStageRange(m_stageAxis, stages);
    const double width = std::min(kBarWidth, kBarWidthPerStage * stages);
    if (m_stageBars->barWidth() != width)
        m_stageBars->setBarWidth(width);
    setStickyRange(m_memoryAxis, 0, tallest / kGiB * kMemoryHeadroom);

    const double limit = gpuMemoryBytes() / kGiB;
    setNameIfChanged(m_gpuLine, tr("GPU memory: %1").arg(gib(gpuMemoryBytes())));
    replaceIfChanged(m_gpuLine, {{-0.5, limit}, {stages - 0.5, limit}});
    QList<QPointF> peak;
    if (r.peakStage < stages) {
        // The star sits just above the busiest GPU's bar.
        const double top = r.peakBytesPerGpu.value() / kGiB;
        peak << QPointF(static_cast<double>(r.peakStage),
                        top + kPeakMarkerLift * (m_memoryAxis->max() - m_memoryAxis->min()));
    }
    replaceIfChanged(m_peakMarker, peak);
    const QString title = static_cast<int>(r.stages.size()) > stages
        ? tr("What one GPU of each pipeline stage holds (first %1 of %2 stages)")
              .arg(formatWhole(stages), formatWhole(static_cast<std::int64_t>(r.stages.size())))
        : tr("What one GPU of each pipeline stage holds");
    m_memory->setTitle(title);
}

void PlanTab::updateRecomputeChart(const std::vector<core::VariantActivations>& variants)
{
    // The plan's own recipe first (it may be none of the six: full recomputation with sequence
    // parallelism keeps 2sbh/t), the largest any stage of it holds; then Table 2's, backwards.
    double yours = 0;
    for (const core::PlanStage& s : m_result.stages)
        yours = std::max(yours, s.activationBytes.value());
    QList<qreal> values = {yours / kGiB};
    double top = yours;
    for (auto va = variants.rbegin(); va != variants.rend(); ++va) {
        values << va->peakBytes.value() / kGiB;
        top = std::max(top, va->peakBytes.value());
    }
    setBarValues(m_variantSet, values);
    // A bar can be selected only once it exists; rebuilt sets forget the selection.
    if (!m_variantSet->isBarSelected(0))
        m_variantSet->selectBar(0);
    const core::PlanInputs& in = m_shown;
    QString recipe = document::recomputeName(in.recompute);
    if (in.sequenceParallel && in.tensorParallel > 1)
        recipe += tr(" + SP");
    // The tensor-parallel size every bar is for goes in the title: the names stay short
    // enough to be read whole beside their bars on a 1024-wide screen.
    const QString yoursLabel = tr("Yours: %1").arg(recipe);
    if (m_variantAxis->categories().first() != yoursLabel)
        m_variantAxis->replace(m_variantAxis->categories().first(), yoursLabel);
    const QString title = tr("Busiest GPU at t = %1: activations by recipe").arg(in.tensorParallel);
    m_recompute->setTitle(title);

    // What the busiest GPU has left for activations once its model state is in.
    const core::PlanStage& busiest = m_result.stages[static_cast<std::size_t>(m_result.peakStage)];
    const double room = std::max(0.0, gpuMemoryBytes() - busiest.modelStateBytes.value());
    const double end = static_cast<double>(values.size()) - 0.5;
    replaceIfChanged(m_roomLine, {{room / kGiB, -0.5}, {room / kGiB, end}});
    top = std::max(top, room);
    setStickyRange(m_variantY, 0, top / kGiB * kLabelHeadroom);
}

void PlanTab::updateCommunication()
{
    static const QString note = QString::fromStdString(core::communicationNote());
    const QStringList axes = {"Tensor parallel", "Data parallel", "Pipeline", "Expert"};
    QString preamble = note;
    if (const qsizetype first = note.indexOf(axes.first() + ':'); first > 0)
        preamble = note.left(first).trimmed();
    m_communication->setSubtitle(preamble
                                 + tr(" Each bar is the busiest GPU on its axis, in GiB "
                                      "(2^30 bytes)."));
    const core::PlanInputs& in = m_shown;
    const core::CommunicationBytes& c = m_result.communication;
    const std::int64_t d = m_result.dataParallel;
    QString pipeline = tr("p = %1").arg(in.pipelineParallel);
    if (in.virtualStages > 1)
        pipeline += tr(", v = %1").arg(in.virtualStages);
    QList<PlanCommunicationPanel::Axis> rows = {
        {tr("Tensor parallel"), tr("t = %1").arg(in.tensorParallel), c.tensorParallel.value(),
         palette::kOrange, noteSection(note, axes[0], axes)},
        {tr("Data parallel"), tr("d = %1, ZeRO-%2").arg(formatWhole(d)).arg(in.zeroStage),
         c.dataParallel.value(), palette::kSkyBlue, noteSection(note, axes[1], axes)},
        {tr("Pipeline"), pipeline, c.pipeline.value(), kPipelineColor,
         noteSection(note, axes[2], axes)},
        {tr("Expert"), tr("ep = %1").arg(in.expertParallel), c.expert.value(), palette::kPurple,
         noteSection(note, axes[3], axes)},
    };
    m_communication->setAxes(rows);
}

void PlanTab::updateFigures()
{
    const core::PlanInputs& in = m_shown;
    const core::PlanResult& r = m_result;
    const core::PlanStage& busiest = r.stages[static_cast<std::size_t>(r.peakStage)];
    const QString bubble = bubbleFormula(in, r.microbatches);
    m_figuresText =
        tr("<b>P</b> = %1 parameters (%2 used per token) &middot; <b>d</b> = GPUs / (t&middot;p) "
           "= %3 / (%4&middot;%5) = <b>%6</b> &middot; <b>m</b> = B / (b&middot;d) = %7 / "
           "(%8&middot;%6) = <b>%9</b> microbatches<br>"
           "<b>Busiest GPU</b> (stage %10, %11 layers, microbatches in flight: %12): model state "
           "%13 + activations %14 = <b>%15</b> of %16: <b>%17</b> &middot; bubble %18 = "
           "<b>%19%</b>")
            .arg(formatCount(static_cast<double>(r.parameters.total)),
                 formatCount(static_cast<double>(r.parameters.active)), formatWhole(in.gpus),
                 formatWhole(in.tensorParallel), formatWhole(in.pipelineParallel),
                 formatWhole(r.dataParallel), formatWhole(in.globalBatch),
                 formatWhole(in.microBatch), formatWhole(r.microbatches))
            .arg(r.peakStage)
            .arg(busiest.layers)
            .arg(busiest.inFlight)
            .arg(gib(busiest.modelStateBytes), gib(busiest.activationBytes), gib(r.peakBytesPerGpu),
                 gib(gpuMemoryBytes()), r.fits ? tr("it fits") : tr("it does not fit"), bubble,
                 formatNumber(100.0 * r.bubbleFraction));
    // Each part its own figures: the memory part's lines stay as short as they were.
    if (m_part == Part::Time)
        m_figuresText = timeFiguresText();
    figuresLabel()->setText(m_figuresText);
}

QHash<QString, QString> PlanTab::explanationValues() const
{
    const core::PlanInputs& in = m_shown;
    const core::PlanResult& r = m_result;
    if (r.stages.empty())
        return {};
    const core::PlanStage& busiest = r.stages[static_cast<std::size_t>(r.peakStage)];
    const core::CommunicationBytes& c = r.communication;
    QHash<QString, QString> values{
        {"parameters", formatCount(static_cast<double>(r.parameters.total))},
        {"active", formatCount(static_cast<double>(r.parameters.active))},
        {"gpus", formatWhole(in.gpus)},
        {"t", formatWhole(in.tensorParallel)},
        {"p", formatWhole(in.pipelineParallel)},
        {"v", formatWhole(in.virtualStages)},
        {"ep", formatWhole(in.expertParallel)},
        {"d", formatWhole(r.dataParallel)},
        {"m", formatWhole(r.microbatches)},
        {"zero", zeroName(in.zeroStage)},
        {"recompute", document::recomputeName(in.recompute)},
        {"sequence_parallel", in.sequenceParallel ? tr("on") : tr("off")},
        {"peak", gib(r.peakBytesPerGpu)},
        {"peak_stage", QString::number(r.peakStage)},
        {"stage_layers", formatWhole(busiest.layers)},
        {"in_flight", formatWhole(busiest.inFlight)},
        {"model_state", gib(busiest.modelStateBytes)},
        {"activations", gib(busiest.activationBytes)},
        {"layer_activations", gib(r.denseLayerActivationBytes)},
        {"gpu_memory", gib(gpuMemoryBytes())},
        {"fits", r.fits ? tr("yes") : tr("no")},
        {"bubble_formula", bubbleFormula(in, r.microbatches)},
        {"verdict", r.fits ? tr("it fits") : tr("it does not fit")},
        {"bubble", formatNumber(100.0 * r.bubbleFraction) + '%'},
        {"tp_bytes", gib(c.tensorParallel)},
        {"dp_bytes", gib(c.dataParallel)},
        {"pp_bytes", gib(c.pipeline)},
        {"ep_bytes", gib(c.expert)},
        {"activation_note", QString::fromStdString(core::activationScalingNote()).toHtmlEscaped()},
        {"communication_note", QString::fromStdString(core::communicationNote()).toHtmlEscaped()},
    };
    values.insert(timeExplanationValues());
    return values;
}

QString PlanTab::savePlan(document::PlanFormat format, const QString& path)
{
    const QString error = document::savePlan(inputs(), format, path);
    m_exportStatus->setText(error.isEmpty() ? tr("Wrote %1").arg(path)
                                            : tr("Not written: %1").arg(error));
    return error;
}

void PlanTab::saveWithDialog(document::PlanFormat format)
{
    const bool deepSpeed = format == document::PlanFormat::DeepSpeed;
    const QString folder = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    const QString suggested =
        QDir(folder).filePath(deepSpeed ? "plan-deepspeed.json" : "plan-megatron.txt");
    const QString path = QFileDialog::getSaveFileName(
        this, deepSpeed ? tr("Save DeepSpeed configuration") : tr("Save Megatron-LM arguments"),
        suggested, deepSpeed ? tr("JSON (*.json)") : tr("Text (*.txt)"));
    if (!path.isEmpty())
        savePlan(format, path);
}

QString PlanTab::caption() const
{
    const core::PlanInputs& in = m_shown;
    const int preset = m_presetBox->currentIndex();
    const QString model =
        preset >= 0 && preset < m_presets.size() ? m_presets[preset].title : tr("your own model");
    return tr("Training plan: %1, %2 parameters; %3 GPUs = d %4 x t %5 x p %6; %7, %8 "
              "recompute%9; sequence %10, micro batch %11, global batch %12; %13 GPUs")
        .arg(model, formatCount(static_cast<double>(m_result.parameters.total)),
             formatWhole(in.gpus), formatWhole(m_result.dataParallel),
             formatWhole(in.tensorParallel), formatWhole(in.pipelineParallel),
             zeroName(in.zeroStage), document::recomputeName(in.recompute),
             in.sequenceParallel ? tr(", sequence parallel") : QString())
        .arg(formatWhole(in.sequence), formatWhole(in.microBatch), formatWhole(in.globalBatch),
             gib(gpuMemoryBytes()));
}

void PlanTab::fitFonts()
{
    // Sizes relative to the window's type, set again when it changes (projector mode, text
    // size): a font set once would stay at the desk's size.
    const QFont base = QApplication::font();
    QFont larger = base;
    larger.setPointSizeF(base.pointSizeF() * kMessageFontScale);
    messageLabel()->setFont(larger);
    if (m_presetSource) {
        QFont small = base;
        small.setPointSizeF(base.pointSizeF() * kSourceFontScale);
        m_presetSource->setFont(small);
    }
}

void PlanTab::changeEvent(QEvent* event)
{
    Tab::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        fitFonts();
}

} // namespace scalelab::ui
