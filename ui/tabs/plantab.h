#pragma once

#include "planexport.h"
#include "planpresets.h"
#include "scalelab/core/layoutsearch.h"
#include "scalelab/core/plan.h"
#include "scalelab/core/steptime.h"
#include "tab.h"

#include <array>
#include <memory>
#include <optional>

QT_BEGIN_NAMESPACE
class QBarCategoryAxis;
class QHorizontalBarSeries;
class QHorizontalStackedBarSeries;
class QLogValueAxis;
class QBarSet;
class QChart;
class QComboBox;
class QLabel;
class QLineSeries;
class QScatterSeries;
class QStackedBarSeries;
class QTabBar;
class QValueAxis;
class QVBoxLayout;
class QWidget;
QT_END_NAMESPACE

namespace scalelab::ui {

class ChartViewPanel;
class PlanCommunicationPanel;
class PlanPublishedPanel;
class PlanSearchPanel;

/// The training plan: a real transformer's shape, a layout over every axis at once (data,
/// tensor, pipeline and expert parallelism, ZeRO, sequence parallelism, recomputation), and
/// what one GPU of each pipeline stage then holds and sends. Presets load published models; a
/// panel checks ScaleLab against published figures; the plan exports as a DeepSpeed
/// configuration and as Megatron-LM arguments. A second part shows the step time of the layout
/// term by term and ranks every other layout of the same model on the same GPUs (a search on a
/// worker thread).
class PlanTab : public Tab {
    Q_OBJECT

public:
    /// A view of the plan section of `document` (its own document when null), offering
    /// `presets` in its menu and checking `figures` in its published panel. The window hands
    /// both in (read once from the resources); the defaults read them here, for tests and
    /// exports, and throw core::InputError for a broken resource.
    explicit PlanTab(document::ScenarioDocument* document = nullptr,
                     QList<document::PlanPreset> presets = document::planPresets(),
                     QList<document::PublishedFigure> figures = document::publishedFigures(),
                     QWidget* parent = nullptr);

    /// The title in the window, before the tab is made as well.
    static QString titleText() { return tr("Training plan"); }
    QString title() const override { return titleText(); }
    /// The two parts of the tab, as plan.part names them.
    enum class Part { Memory, Time };
    Part part() const { return m_part; }
    /// Shows `part`'s charts (the document's plan.part says which; a lesson sets it).
    void showPart(Part part);
    /// The user's choice of part: an edit of plan.part (one undo step).
    void choosePart(Part part);
    void reveal(QWidget* widget) override;
    QList<ChartPanel*> charts() const override;
    QHash<QString, QString> explanationValues() const override;
    /// The model and layout behind the charts, for captions under exported images.
    QString caption() const override;

    /// The plan of the document (it may be one core refuses).
    const core::PlanInputs& inputs() const { return scenario().plan; }
    /// The last plan core accepted: what the charts show.
    const core::PlanInputs& shownInputs() const { return m_shown; }
    const core::PlanResult& shownResult() const { return m_result; }
    /// The step time of shownInputs().
    const core::StepTime& shownTime() const { return m_time; }
    /// The last finished layout search (null until one finished, or when it failed).
    const core::LayoutSearchResult* searchResult() const { return m_searchResult.get(); }
    /// Puts ranked layout `rank` of the last search into the plan (one undo step), as Enter
    /// on its row of the search table does.
    void loadSearchedLayout(int rank);
    /// Whether the current inputs are refused (the charts then show shownInputs()).
    bool refused() const { return m_refused; }
    /// One GPU's memory in bytes (gpu_memory_gib x 2^30), the line on the memory charts.
    double gpuMemoryBytes() const;

    /// Puts preset `id`'s plan into the document, as one undo step (a user's choice in the
    /// menu). Returns an empty string, or why it could not.
    QString applyPreset(const QString& id);
    /// The presets of the menu, in its order.
    const QList<document::PlanPreset>& presets() const { return m_presets; }
    /// Loads the configuration behind published figure `index` (as its Load button does).
    void loadPublishedFigure(int index);

    /// Writes the document's plan as `format` to `path` (what the Save buttons do once the user
    /// chose a path) and says in the status line under them what happened. Returns an empty
    /// string, or why nothing was written.
    QString savePlan(document::PlanFormat format, const QString& path);

    ChartViewPanel* memoryChart() const { return m_memory; }
    ChartViewPanel* recomputeChart() const { return m_recompute; }
    PlanCommunicationPanel* communicationPanel() const { return m_communication; }
    PlanPublishedPanel* publishedPanel() const { return m_published; }
    ChartViewPanel* timeChart() const { return m_timeChart; }
    ChartViewPanel* searchChart() const { return m_searchChart; }
    PlanSearchPanel* searchPanel() const { return m_search; }
    QTabBar* partBar() const { return m_partBar; }
    QComboBox* presetBox() const { return m_presetBox; }
    /// The status line under the Save buttons.
    QLabel* exportStatus() const { return m_exportStatus; }

    /// Stage bars drawn at most (a pipeline of more stages shows its first ones).
    static constexpr int kMaxStageBars = 1024;
    /// Its charts carry long labels (recipes, published rows, layouts): this many characters
    /// of chart text wide before two share a row.
    static constexpr int kPlanChartChars = 64;
    /// The scatter draws one point per series in each cell of this many by this many over
    /// the points' log ranges (a cell is about a marker wide): Qt Charts draws every marker
    /// as a shape of its own, and thousands of hidden ones cost a frame on every step.
    static constexpr int kScatterCells = 60;

protected:
    void changeEvent(QEvent* event) override;
    void sectionShown() override;
    void recompute() override;

private:
    /// The message and the preset's source line, sized from the window's type.
    void fitFonts();
    void buildControls();
    void buildModelGroup();
    QWidget* buildModelShape();
    QWidget* buildExperts();
    void buildBatchGroup();
    void buildLayoutGroup();
    void buildLayoutChoices(QVBoxLayout* group);
    void buildMemoryRecipeGroup();
    void buildGpuGroup();
    /// The GPU type and the precision of its matrix multiplies (the step time's peak).
    void buildHardwareChoices(QVBoxLayout* group);
    /// Nodes, NVLink and InfiniBand, and the data-parallel overlap, behind a disclosure.
    void buildLinkControls(QVBoxLayout* group);
    void buildPartBar();
    void buildTimeChart();
    void buildSearchChart();
    void buildSearchPanel();
    QList<ChartPanel*> partCharts(Part part) const;
    void buildExports(QVBoxLayout* group);
    void buildMemoryChart();
    void buildMemoryChartLines(QChart* chart);
    void buildRecomputeChart();
    void buildPanels(QList<document::PublishedFigure> figures);
    /// One undo step that puts `plan` in the document.
    void loadPlan(const core::PlanInputs& plan, const QString& text);
    void syncPresetBox();
    void syncChoiceBoxes();
    /// The refusal of `error` in words, and the figures line that says the charts are old.
    [[noreturn]] void refuse(const core::InputError& error);
    void updateMemoryChart();
    void updateRecomputeChart(const std::vector<core::VariantActivations>& variants);
    void updateCommunication();
    void updateFigures();
    void saveWithDialog(document::PlanFormat format);
    /// Draws the charts of `part` if they do not show the plan yet.
    void drawPart(Part part);
    /// The search started if it was not, and both parts drawn, the hidden one too (before
    /// an export).
    void catchUp() override;
    void updateTimeChart();
    /// The search's points into the scatter's series (when a search ends).
    void rebuildSearchPoints();
    /// The plan's own point, the axes and the GPU line (every step).
    void updateSearchChart();
    /// Starts a search on the worker when what it searches over (the plan but the layout keys
    /// it does not keep: core::searchScope) changed since the last one asked for.
    void requestSearch(const core::PlanInputs& plan);
    /// Shows the search of `scope` (its result, or why it failed).
    void showSearch(std::shared_ptr<const core::LayoutSearchResult> result, double seconds,
                    const QString& failure, const core::PlanInputs& scope);
    /// A click on the scatter's bin `bin` near `point` loads that layout.
    void loadClickedPoint(qsizetype bin, const QPointF& point);
    QString timeFiguresText() const;
    /// The explanation's step-time and search values.
    QHash<QString, QString> timeExplanationValues() const;
    /// The answer to "double the GPUs": the step time at twice the GPUs, in a sentence.
    QString doubledGpusText() const;

    core::PlanInputs m_shown; ///< the last plan core accepted
    core::PlanResult m_result; ///< its result
    bool m_refused = false;
    QString m_figuresText; ///< the figures line of the plan shown

    QList<document::PlanPreset> m_presets;
    QComboBox* m_presetBox = nullptr;
    QLabel* m_presetSource = nullptr;
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

    PlanCommunicationPanel* m_communication = nullptr;
    PlanPublishedPanel* m_published = nullptr;

    QTabBar* m_partBar = nullptr;
    Part m_part = Part::Memory;
    bool m_partPlaced = false; ///< whether a part's charts are in the grid yet
    core::StepTime m_time; ///< of m_shown
    std::vector<core::VariantActivations> m_variants; ///< of m_shown
    /// Per part: whether its charts still show an older plan (drawn when the part is shown).
    std::array<bool, 2> m_stale{true, true};

    ChartViewPanel* m_timeChart = nullptr;
    QHorizontalStackedBarSeries* m_termBars = nullptr;
    QList<QBarSet*> m_termSets;
    QBarCategoryAxis* m_termAxis = nullptr;
    QValueAxis* m_secondsAxis = nullptr;

    ChartViewPanel* m_searchChart = nullptr;
    QLogValueAxis* m_stepAxis = nullptr;
    QLogValueAxis* m_searchMemoryAxis = nullptr;
    QScatterSeries* m_otherPoints = nullptr; ///< layouts that do not fit
    QList<QScatterSeries*> m_binPoints; ///< fitting layouts, one series per t x p bin
    QList<QList<core::LayoutKey>> m_binKeys; ///< the layout of each point of each bin
    /// Seconds (x) by GiB (y) spanned by the search's points; none before a search ends.
    std::optional<QRectF> m_pointRange;
    QLineSeries* m_capacityLine = nullptr;
    QScatterSeries* m_bestMarker = nullptr;
    QScatterSeries* m_yoursMarker = nullptr;

    PlanSearchPanel* m_search = nullptr;
    std::optional<core::PlanInputs> m_searchedFor; ///< the input of the newest search asked for
    std::shared_ptr<const core::LayoutSearchResult> m_searchResult;
};

} // namespace scalelab::ui
