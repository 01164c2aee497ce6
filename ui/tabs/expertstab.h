#pragma once

#include "scalelab/core/experts.h"
#include "sliderrest.h"
#include "tab.h"

#include <memory>
#include <optional>

QT_BEGIN_NAMESPACE
class QCategoryAxis;
class QBarSet;
class QGraphicsTextItem;
class QCheckBox;
class QComboBox;
class QLineSeries;
class QScatterSeries;
class QStackedBarSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace scalelab::ui {

class ChartViewPanel;
class HeatmapPanel;

/// Expert routing: a router sends each token to top-k experts, and the all-to-all moves every
/// slot whose expert lives on another rank. The heatmap shows who sends how much where, the
/// load chart what each expert receives against its capacity, and the rank chart what each
/// rank receives against the mean, with the bytes the all-to-all moves.
///
/// Routing a million tokens per rank takes a good fraction of a second, so the router runs on
/// a worker thread (newest request only); hidden size and bytes per value only turn slots into
/// bytes and redraw from the last result without routing again.
///
/// The capacity check box is a face of experts.capacity_factor (0 = no limit): on is a
/// positive factor, off is 0; while the limit is off the slider shows the factor the box would
/// turn on.
class ExpertsTab : public Tab {
    Q_OBJECT

public:
    /// Entries of the preset box, in order.
    enum Preset { Balanced, OneHotExpert, OneHotRank, Zipf, ChapterExercise, Custom };

    explicit ExpertsTab(document::ScenarioDocument* document = nullptr, QWidget* parent = nullptr);

    /// The title in the window, before the tab is made as well.
    static QString titleText() { return tr("Expert routing"); }
    QString title() const override { return titleText(); }
    QList<ChartPanel*> charts() const override;
    QHash<QString, QString> explanationValues() const override;

    /// The inputs the charts show: the document's.
    const core::ExpertsInputs& inputs() const { return scenario().experts; }
    /// The router's draws behind the result shown (kept for a capacity change), or null.
    std::shared_ptr<const core::ExpertsRouting> routing() const { return m_routing; }
    /// Values per token and bytes per value: what one slot weighs on the wire (display
    /// settings of the scenario, not router inputs).
    std::int64_t hiddenSize() const { return scenario().expertsDisplay.hidden; }
    std::int64_t bytesPerValue() const { return scenario().expertsDisplay.bytesPerValue; }
    /// The preset the inputs match (Custom when none does).
    Preset preset() const { return presetOf(inputs()); }

    /// The preset `inputs` match (Custom when none does). No widgets involved.
    static Preset presetOf(const core::ExpertsInputs& inputs);
    /// Sets the inputs `preset` stands for in `scenario` (Custom changes nothing). The router
    /// presets leave explicit lists; the chapter's exercise brings its own.
    static void applyPreset(core::Scenario& scenario, Preset preset);

    /// A preview is shown (a large routing while a slider moves) and the exact routing follows.
    bool refinementPending() const override;
    /// How long a slider rests before the exact routing replaces its preview (kSettleMs unless
    /// set; tests that look at a preview lengthen it).
    void setSettleInterval(int ms);
    static constexpr int kSettleMs = SliderRest::kSettleMs;

    HeatmapPanel* heatmap() const { return m_heatmap; }
    ChartViewPanel* loadChart() const { return m_load; }
    ChartViewPanel* ranksChart() const { return m_ranks; }
    /// The figures at the top of the rank chart: imbalance, all-to-all bytes, auxiliary loss.
    QGraphicsTextItem* ranksCaption() const { return m_ranksCaption; }

protected:
    void sectionShown() override;
    void recompute() override;
    /// The exact routing at once, in place of a preview (before an export or a wait).
    void catchUp() override;

private:
    void buildControls();
    void buildRouterControls();
    void buildLayoutControls();
    void buildCapacityControls();
    void buildMoreControls();
    void buildPredictBox();
    void buildHeatmap();
    void buildLoadChart();
    void buildRanksChart();
    /// A user's choice in the preset box: one undo step.
    void choosePreset(int index);
    void syncPreset();
    /// Throws InputError for refused inputs, after making sure no older routing still on its
    /// way draws over the refusal.
    void validateInputs();
    /// The sliders rest: the exact routing replaces a preview.
    void sliderSettled();
    /// A preview is on show, or on its way from the worker.
    bool previewShownOrComing() const;
    /// A routing back from the worker for `in`: shown (a preview that comes after the sliders
    /// rested asks for the exact routing at once).
    void accept(const core::ExpertsInputs& in, std::shared_ptr<const core::ExpertsResult> result);
    /// Draws m_result with today's hidden size and bytes per value. Throws InputError.
    void showResult();
    void showHeatmap(const core::ExpertsResult& r);
    void showLoad(const core::ExpertsResult& r, const core::ExpertsInputs& in);
    void showRanks(const core::ExpertsResult& r);
    void showRanksCaption(const core::ExpertsResult& r);
    void showFigures(const core::ExpertsResult& r, const core::ExpertsInputs& in);
    void updateLoadAxis(const core::ExpertsResult& r);
    /// The expert axis: one band per owner rank (or group of ranks) when the owners are in
    /// order, otherwise the expert ids.
    void labelRankBands(const std::vector<std::int64_t>& owners, std::int64_t ranks);
    void labelExpertIds(std::int64_t experts);
    /// Fits the rank chart's caption to the chart's width and makes room for it above the plot.
    void layoutRanksCaption();

    /// The routing on screen and the inputs it came from; a change of hidden size or bytes per
    /// value redraws it without routing again.
    std::shared_ptr<const core::ExpertsResult> m_result;
    core::AllToAllTraffic m_traffic; ///< of m_result, at today's slot size
    core::ExpertsInputs m_resultInputs;
    /// The draws behind m_result (null when too large to keep), and their inputs with the
    /// capacity factor set to 0: a new factor applies to them without drawing again.
    std::shared_ptr<const core::ExpertsRouting> m_routing;
    core::ExpertsInputs m_routingKey;
    /// The inputs sent to the worker and not yet back, and whether for a preview.
    std::optional<core::ExpertsInputs> m_inFlight;
    bool m_inFlightPreview = false;
    /// Whether a slider is being moved by its user: while it is, a large routing is previewed.
    SliderRest* m_rest = nullptr;
    /// What the load chart's expert axis was built for (owner map), to rebuild only on change.
    std::vector<std::int64_t> m_loadAxisOwners;

    QComboBox* m_preset = nullptr;
    QCheckBox* m_capacityBox = nullptr;
    QCheckBox* m_byIdBox = nullptr;

    HeatmapPanel* m_heatmap = nullptr;

    ChartViewPanel* m_load = nullptr;
    QStackedBarSeries* m_loadBars = nullptr;
    QBarSet* m_keptSet = nullptr;
    QBarSet* m_loadDroppedSet = nullptr;
    QLineSeries* m_loadMean = nullptr;
    QLineSeries* m_capacityLine = nullptr;
    QCategoryAxis* m_expertAxis = nullptr;
    QValueAxis* m_loadY = nullptr;

    ChartViewPanel* m_ranks = nullptr;
    QStackedBarSeries* m_rankBars = nullptr;
    QBarSet* m_localSet = nullptr;
    QBarSet* m_remoteSet = nullptr;
    QBarSet* m_rankDroppedSet = nullptr;
    QLineSeries* m_rankMean = nullptr;
    QScatterSeries* m_busiest = nullptr;
    QValueAxis* m_rankAxis = nullptr;
    QValueAxis* m_ranksY = nullptr;
    /// The rank chart's title and figures, drawn by the chart's scene (so exports carry it) but
    /// outside Qt Charts' title, whose rich-text layout runs again on every chart layout.
    QGraphicsTextItem* m_ranksCaption = nullptr;
};

} // namespace scalelab::ui
