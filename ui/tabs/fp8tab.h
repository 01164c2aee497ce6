#pragma once

#include "scalelab/core/fp8.h"
#include "scalelab/core/fp8_training.h"
#include "scalelab/core/fp8_view.h"
#include "sliderrest.h"
#include "tab.h"

#include <QComboBox>
#include <QHash>
#include <QList>
#include <QPointF>
#include <QString>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <vector>

QT_BEGIN_NAMESPACE
class QAreaSeries;
class QBoxLayout;
class QCategoryAxis;
class QComboBox;
class QFormLayout;
class QGraphicsSimpleTextItem;
class QGroupBox;
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QPushButton;
class QScatterSeries;
class QTabBar;
class QTableWidget;
class QTableWidgetItem;
class QValueAxis;
class QVBoxLayout;
QT_END_NAMESPACE

namespace scalelab::ui {

class ChartViewPanel;
class FiguresLine;
class HeatmapPairPanel;
class PointCloud;

/// FP8 in three parts. Block scaling: why one scale per tensor can cost the small blocks their
/// precision, when it does (only once they fall into the format's subnormals), and how much
/// finer scales help. Accumulation: how the error of a matrix product grows with its inner
/// dimension K when the tensor core's sum keeps few bits, and what promoting it into float32
/// every N_C products buys. Scaling over time: when each scale is chosen (delayed, current per
/// tensor, per tile) and what a spike or a slow growth of the values costs each policy.
class Fp8Tab : public Tab {
    Q_OBJECT

public:
    /// Most points a block-error series draws; more blocks are sampled evenly by rank.
    static constexpr int kMaxPlotPoints = core::kFp8MaxPlotPoints;
    /// Most heatmap cells a side (larger matrices are max-pooled in core first).
    static constexpr int kMapSide = core::kFp8MapSide;
    static constexpr int kCastRow = core::kFp8CastRow;
    static constexpr int kTensorRow = core::kFp8TensorRow;
    static constexpr int kChapterRow = core::kFp8ChapterRow;

    /// DeepSeek-V3's published figure for a limited accumulator without promotion: a maximum
    /// relative error of nearly 2 % at K = 4096 (DeepSeek-V3 technical report, section 3.3.2).
    static constexpr double kPublishedError = 0.02;
    static constexpr std::int64_t kPublishedK = 4096;

    /// How long a slider rests before the exact figures replace its preview (SliderRest's).
    static constexpr int kSettleMs = SliderRest::kSettleMs;

    /// The three parts of the tab, in the order of the part selector.
    enum class Part { BlockScaling, Accumulation, Policy };

    explicit Fp8Tab(document::ScenarioDocument* document = nullptr, QWidget* parent = nullptr);

    /// The title in the window, before the tab is made as well.
    static QString titleText() { return tr("FP8 training"); }
    QString title() const override { return titleText(); }
    QList<ChartPanel*> charts() const override;
    QHash<QString, QString> explanationValues() const override;

    /// The inputs the charts show: the document's.
    const core::Fp8Inputs& inputs() const { return scenario().fp8; }
    /// Which block the grid chart shows: this percentile of the blocks ordered by magnitude.
    double shownPercentile() const { return scenario().fp8Display.shownBlock; }
    /// What the charts, figures and table show now (null before the first result).
    std::shared_ptr<const core::Fp8View> view() const { return m_view; }
    /// A preview is shown and the exact figures will follow.
    bool refinementPending() const override;
    /// How long a slider rests before the exact figures replace its preview (kSettleMs unless
    /// set; tests that look at a preview lengthen it, so that a slow build does not see the
    /// exact figures first).
    void setSettleInterval(int ms);

    /// The part on show; showPart() shows another (its charts, controls and figures).
    Part part() const { return m_part; }
    void showPart(Part part);
    /// The user's choice of part: set in the document (fp8.part), which shows it.
    void choosePart(Part part);
    /// Shows the part that holds `widget` (a chart or a control of one part only).
    void reveal(QWidget* widget) override;
    /// The part selector above the figures.
    QTabBar* partBar() const { return m_partBar; }
    /// The charts of one part, in the order they are laid out.
    QList<ChartPanel*> partCharts(Part part) const;

    /// The accumulation sweep and the scaling-policy run the charts show (null before the first).
    std::shared_ptr<const core::Fp8AccumulationResult> accumulation() const
    {
        return m_accumulation;
    }
    std::shared_ptr<const core::Fp8PolicyResult> policy() const { return m_policy; }
    /// The point of the sweep nearest to K = kPublishedK (on a log scale), or null.
    const core::Fp8AccumulationPoint* publishedPoint() const;
    /// Steps after the spike (up to the last one) in which delayed scaling flushes more values
    /// than current per-tensor scaling or errs more than 10 % above it; 0 without a spike
    /// inside the run.
    int stepsWorseAfterSpike() const;

    ChartViewPanel* accumulationChart() const { return m_accChart; }
    ChartViewPanel* policyErrorChart() const { return m_policyErrorChart; }
    ChartViewPanel* policyLostChart() const { return m_policyLostChart; }
    /// The series of a policy (ScalingPolicy order): error per step, saturated and flushed counts.
    QLineSeries* policyErrorSeries(int policy) const { return m_policyError[policy]; }
    QLineSeries* saturatedSeries(int policy) const { return m_saturated[policy]; }
    QLineSeries* flushedSeries(int policy) const { return m_flushed[policy]; }
    /// The max and RMS relative error series of an AccumulationMode.
    QLineSeries* accumulationMaxSeries(int mode) const { return m_accMax[mode]; }
    QLineSeries* accumulationRmsSeries(int mode) const { return m_accRms[mode]; }

    ChartViewPanel* blockErrorChart() const { return m_errorChart; }
    ChartViewPanel* gridChart() const { return m_gridChart; }
    HeatmapPairPanel* heatmap() const { return m_heatmap; }
    QTableWidget* granularityTable() const { return m_table; }

    /// The name of row `row` of the granularity table ("Per tensor", "1 x 16 (chapter)").
    static QString granularityName(int row, std::int64_t blockSize);
    /// One sentence: what the granularity of `row` is and who uses it.
    static QString granularityAbout(int row, std::int64_t blockSize);
    /// How the tiles are cut when they do not divide the rows x cols matrix; else empty.
    static QString tileNote(const core::Fp8Tiling& tiling, std::int64_t rows, std::int64_t cols);

protected:
    void sectionShown() override;
    void recompute() override;
    /// Brings the exact figures in place of a preview (exports, tests).
    void catchUp() override;
    /// Fits the table's columns to type of another size.
    void changeEvent(QEvent* event) override;
    /// Follows the width of the row of maps and table (arrangeBlockRow).
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    /// What an accumulation sweep or a policy run was computed for: its own inputs and the
    /// FP8 section's format, block size and overflow rule.
    template <typename Inputs> struct TrainingKey {
        Inputs inputs;
        core::Fp8Format format;
        std::int64_t blockSize;
        core::Fp8Overflow overflow;
        bool operator==(const TrainingKey&) const = default;
    };
    using AccumulationKey = TrainingKey<core::Fp8AccumulationInputs>;
    using PolicyKey = TrainingKey<core::Fp8PolicyInputs>;
    AccumulationKey accumulationKey() const;
    PolicyKey policyKey() const;

    void buildControls();
    /// The sliders rest (kSettleMs without a move, or let go): the exact figures replace a
    /// preview.
    void sliderSettled();
    /// The error maps' title; a preview shows the maps of the last exact result.
    static QString heatmapTitle(bool preview);
    /// The controls of `keys` behind a disclosure button at the foot of `box`.
    void addDisclosedControls(QVBoxLayout* box, std::initializer_list<const char*> keys,
                              const QString& text, const QString& accessibleName);
    void buildPartBar();
    void buildAccumulationControls();
    void buildPolicyControls();
    void buildAccumulationChart();
    void buildPolicyErrorChart();
    void buildPolicyLostChart();
    void applyAccumulationPreset(int index);
    void applyPolicyPreset(int index);
    void syncTrainingPresets();
    void showAccumulation(const std::shared_ptr<const core::Fp8AccumulationResult>& result,
                          const AccumulationKey& key);
    void showAccumulationAxes(double lo, double hi);
    /// Labels the K axis at every K value, or every other (third, ...) one when the plot is
    /// too narrow for all of them whole ("16K" was shortened to "1..." at 1024 x 768).
    void labelKAxis();
    void showPolicy(const std::shared_ptr<const core::Fp8PolicyResult>& result,
                    const PolicyKey& key);
    void showSpikeLines();
    void showPartFigures();
    void showAccumulationFigures();
    void showPolicyFigures();
    void addTrainingValues(QHash<QString, QString>& values) const;
    void buildSituation(QVBoxLayout* box);
    void buildMatrixControls(QVBoxLayout* box);
    void buildErrorChart();
    void buildGridChart();
    void buildHeatmap();
    void buildTable();
    void applyPreset(int index);
    void syncPreset();
    void fillBlockSizes();
    void showExplicitValues();
    void useGeneratedMatrix();
    /// What computeFp8View is asked for the current inputs (previewed while a slider moves).
    core::Fp8ViewOptions viewOptions();
    /// The colour range of `view`'s error maps when they are new (not `previous`'s), found on
    /// the worker; none otherwise.
    static std::optional<std::pair<double, double>>
    newMapRange(const core::Fp8View* view, const core::Fp8View* previous, bool log);
    /// `mapRange`: the colour range of the view's error maps, when the worker found it.
    void showView(const std::shared_ptr<const core::Fp8View>& view,
                  std::optional<std::pair<double, double>> mapRange = std::nullopt);
    void showErrorChart(const core::Fp8View& v);
    void showOutlierBand(const core::Fp8View& v);
    void showGridChart(const core::Fp8View& v);
    void showGridRange(const core::Fp8View& v);
    /// Places the grid chart's row names beside their rows, and gives them room at the chart's
    /// left when they need more than they have (or much less).
    void layOutRowNames();
    void showHeatmap(const core::Fp8View& v, std::optional<std::pair<double, double>> mapRange);
    void showTable(const core::Fp8View& v);
    /// Fits the table's columns to their contents after `edited` cells (and, when `renamed`,
    /// the first column's header) changed; while a slider moves, it only widens the columns
    /// whose new texts need more room.
    void fitTableColumns(const QList<QTableWidgetItem*>& edited, bool renamed);
    /// Puts the table beside the error maps when half the row shows all its columns whole, and
    /// below them when it does not (a narrow window, or projector type).
    void arrangeBlockRow();
    /// Once a slider rests (or a wait ends it): what fitTableColumns and arrangeBlockRow left
    /// for then.
    void tableAtRest();
    void showFigures(const core::Fp8View& v);

    std::shared_ptr<const core::Fp8View> m_view;
    /// Whether a slider is being moved by its user: while it is, a large matrix is previewed.
    SliderRest* m_rest = nullptr;
    double m_viewPercentile = 0; ///< the shown block of m_view
    std::shared_ptr<const core::Fp8AccumulationResult> m_accumulation;
    std::optional<AccumulationKey> m_accumulationKey;
    std::shared_ptr<const core::Fp8PolicyResult> m_policy;
    std::optional<PolicyKey> m_policyKey;
    Part m_part = Part::BlockScaling;
    std::shared_ptr<const core::MatrixF> m_normals;
    std::int64_t m_normalsSeed = -1;
    /// The recomputes' cached matrices and reused buffers (used by one recompute at a time: the
    /// tab's background runner runs them one after the other).
    std::shared_ptr<core::Fp8Workspace> m_workspace = std::make_shared<core::Fp8Workspace>();

    QTabBar* m_partBar = nullptr;
    QWidget* m_blockRow = nullptr; ///< the heatmap and the table under the block charts
    QBoxLayout* m_blockLayout = nullptr; ///< m_blockRow's: side by side, or the table below
    QGroupBox* m_blockGroup = nullptr;
    QFormLayout* m_situationForm = nullptr;
    QWidget* m_accGroup = nullptr;
    QWidget* m_policyGroup = nullptr;
    QComboBox* m_accPreset = nullptr;
    QComboBox* m_policyPreset = nullptr;

    ChartViewPanel* m_accChart = nullptr;
    QCategoryAxis* m_kAxis = nullptr;
    std::vector<std::int64_t> m_kValues; ///< the K values on the axis, ascending
    QLogValueAxis* m_accErrorAxis = nullptr;
    std::array<QLineSeries*, core::kAccumulationModes> m_accMax{};
    std::array<QLineSeries*, core::kAccumulationModes> m_accRms{};
    QScatterSeries* m_published = nullptr;

    ChartViewPanel* m_policyErrorChart = nullptr;
    QValueAxis* m_stepAxis = nullptr;
    QLogValueAxis* m_policyErrorAxis = nullptr;
    std::array<QLineSeries*, core::kScalingPolicies> m_policyError{};
    QLineSeries* m_spikeOnError = nullptr;
    ChartViewPanel* m_policyLostChart = nullptr;
    QValueAxis* m_lostStepAxis = nullptr;
    QValueAxis* m_lostAxis = nullptr;
    std::array<QLineSeries*, core::kScalingPolicies> m_saturated{};
    std::array<QLineSeries*, core::kScalingPolicies> m_flushed{};
    QLineSeries* m_spikeOnLost = nullptr;

    QComboBox* m_preset = nullptr;
    QComboBox* m_format = nullptr;
    QComboBox* m_blockSize = nullptr;
    QComboBox* m_overflow = nullptr;
    QLabel* m_explicitNote = nullptr;
    QPushButton* m_generate = nullptr;

    ChartViewPanel* m_errorChart = nullptr;
    QScatterSeries* m_errTensor = nullptr;
    QScatterSeries* m_errBlock = nullptr;
    QScatterSeries* m_errShown = nullptr;
    PointCloud* m_tensorCloud = nullptr; ///< m_errTensor's points
    PointCloud* m_blockCloud = nullptr; ///< m_errBlock's points
    QLineSeries* m_bandTop = nullptr;
    QLineSeries* m_bandBottom = nullptr;
    QAreaSeries* m_outlierBand = nullptr;
    QValueAxis* m_rankAxis = nullptr;
    QValueAxis* m_errorAxis = nullptr;

    ChartViewPanel* m_gridChart = nullptr;
    QScatterSeries* m_gridTensor = nullptr;
    QScatterSeries* m_gridBlock = nullptr;
    QScatterSeries* m_values = nullptr;
    QScatterSeries* m_landTensor = nullptr;
    QScatterSeries* m_landBlock = nullptr;
    QLineSeries* m_subnormalZone = nullptr;
    QValueAxis* m_valueAxis = nullptr;
    QCategoryAxis* m_rowAxis = nullptr;
    /// The grid chart's rows named beside the plot, each a name and (but the values' row) its
    /// scale on a second line. Items of the chart's scene, not the row axis's labels: a new
    /// label lays the whole chart out again, and the scales change at every step of the
    /// outlier slider (a third of its steps' work).
    struct RowName {
        QGraphicsSimpleTextItem* name = nullptr;
        QGraphicsSimpleTextItem* scale = nullptr; ///< null on the values' row
        double row = 0; ///< the row's place on the row axis
    };
    std::array<RowName, 3> m_rowNames;

    HeatmapPairPanel* m_heatmap = nullptr;
    QTableWidget* m_table = nullptr;
    FiguresLine* m_tableNoteLine = nullptr; ///< holds m_tableNote
    QLabel* m_tableNote = nullptr;
    /// The columns were left wider than their contents while a slider moved: they fit them
    /// again once it rests.
    bool m_tableFitPending = false;
};

} // namespace scalelab::ui
