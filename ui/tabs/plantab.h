#pragma once

#include "planpresets.h"
#include "scalelab/core/plan.h"
#include "tab.h"

#include <optional>

QT_BEGIN_NAMESPACE
class QBarCategoryAxis;
class QHorizontalBarSeries;
class QBarSet;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineSeries;
class QPushButton;
class QScatterSeries;
class QStackedBarSeries;
class QValueAxis;
class QWidget;
QT_END_NAMESPACE

namespace scalelab::ui {

class ChartViewPanel;
class PlanCommunicationPanel;
class PlanPublishedPanel;

/// The training plan: a real transformer's shape, a layout over every axis at once (data,
/// tensor, pipeline and expert parallelism, ZeRO, sequence parallelism, recomputation), and
/// what one GPU of each pipeline stage then holds and sends. Presets load published models; a
/// panel checks ScaleLab against published figures; the plan exports as a DeepSpeed
/// configuration and as Megatron-LM arguments.
class PlanTab : public Tab {
    Q_OBJECT

public:
    explicit PlanTab(QWidget* parent = nullptr);

    QString name() const override { return "plan"; }
    QString title() const override { return tr("Training plan"); }
    QList<ChartPanel*> charts() const override;
    void setScenario(const core::Scenario& scenario) override;
    void writeScenario(core::Scenario& scenario) const override;
    QHash<QString, QString> explanationValues() const override;
    /// The model and layout behind the charts, for captions under exported images.
    QString caption() const override;

    /// The plan as the controls hold it (it may be one core refuses).
    core::PlanInputs inputs() const { return m_inputs; }
    /// The last plan core accepted: what the charts show.
    const core::PlanInputs& shownInputs() const { return m_shown; }
    const core::PlanResult& shownResult() const { return m_result; }
    /// Whether the current inputs are refused (the charts then show shownInputs()).
    bool refused() const { return m_refused; }
    /// One GPU's memory in bytes (gpu_memory_gib x 2^30), the line on the memory charts.
    double gpuMemoryBytes() const;

    /// Loads preset `id` (":/plan/presets/<id>.json") into the controls, as a user's choice.
    /// Returns an empty string, or why it could not.
    QString applyPreset(const QString& id);
    /// The presets of the menu, in its order.
    const QList<document::PlanPreset>& presets() const { return m_presets; }
    /// Loads the configuration behind published figure `index` (as its Load button does).
    void loadPublishedFigure(int index);

    /// Writes the plan as a DeepSpeed configuration or as Megatron-LM arguments to `path`
    /// through QSaveFile. Returns an empty string, or the reason (a refused layout names its
    /// field).
    QString saveDeepSpeedConfig(const QString& path) const;
    QString saveMegatronArguments(const QString& path) const;

    ChartViewPanel* memoryChart() const { return m_memory; }
    ChartViewPanel* recomputeChart() const { return m_recompute; }
    PlanCommunicationPanel* communicationPanel() const { return m_communication; }
    PlanPublishedPanel* publishedPanel() const { return m_published; }
    QComboBox* presetBox() const { return m_presetBox; }

    /// Stage bars drawn at most (a pipeline of more stages shows its first ones).
    static constexpr int kMaxStageBars = 1024;

protected:
    void changeEvent(QEvent* event) override;
    void readControls() override;
    void recompute() override;

private:
    /// The message and the preset's source line, sized from the window's type.
    void fitFonts();
    void buildControls();
    QWidget* buildModelShape();
    void buildMemoryChart();
    void buildRecomputeChart();
    void buildExports(QVBoxLayout* group);
    void loadPlan(const core::PlanInputs& plan);
    void syncPresetBox();
    void syncDependentControls();
    void updateMemoryChart();
    void updateRecomputeChart(const std::vector<core::VariantActivations>& variants);
    void updateCommunication();
    void updateFigures();
    QString saveText(const QString& path, const QByteArray& bytes) const;
    void saveWithDialog(bool deepSpeed);

    core::PlanInputs m_inputs; ///< as the controls hold it
    core::PlanInputs m_shown; ///< the last plan core accepted
    core::PlanResult m_result; ///< its result
    bool m_refused = false;
    QString m_figuresText; ///< the figures line of the plan shown
    bool m_kvFollowsHeads = true; ///< kv_heads absent: it follows heads
    bool m_expertFfnFollows = true; ///< expert_ffn_hidden absent: it follows ffn_hidden
    double m_shownKv = 0, m_shownExpertFfn = 0; ///< what the following controls were set to
    double m_exactGib = 80, m_shownGib = 80; ///< a file's GPU memory, kept exact until moved

    QList<document::PlanPreset> m_presets;
    QComboBox* m_presetBox = nullptr;
    QLabel* m_presetSource = nullptr;
    QCheckBox* m_gated = nullptr;
    QCheckBox* m_tied = nullptr;
    QCheckBox* m_sequenceParallel = nullptr;
    QComboBox* m_recomputeBox = nullptr;
    QComboBox* m_zeroBox = nullptr;
    QComboBox* m_gpuBox = nullptr;
    QList<QWidget*> m_moeOnly; ///< controls that mean something only with experts
    QLabel* m_exportStatus = nullptr;

    ChartViewPanel* m_memory = nullptr;
    QStackedBarSeries* m_stageBars = nullptr;
    QList<QBarSet*> m_stageSets; ///< weights, gradients, optimizer state, activations
    QLineSeries* m_gpuLine = nullptr;
    QScatterSeries* m_peakMarker = nullptr;
    QValueAxis* m_stageAxis = nullptr;
    QValueAxis* m_memoryAxis = nullptr;

    ChartViewPanel* m_recompute = nullptr;
    QHorizontalBarSeries* m_variantBars = nullptr;
    QBarSet* m_variantSet = nullptr;
    QBarCategoryAxis* m_variantAxis = nullptr;
    QValueAxis* m_variantY = nullptr;
    QLineSeries* m_roomLine = nullptr;

    QValueAxis* m_probeAxis = nullptr; ///< in no chart: where nice ranges are tried first

    PlanCommunicationPanel* m_communication = nullptr;
    PlanPublishedPanel* m_published = nullptr;
};

} // namespace scalelab::ui
