#pragma once

#include "scalelab/core/experts.h"
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
class ExpertsTab : public Tab {
    Q_OBJECT

public:
    /// Entries of the preset box, in order.
    enum Preset { Balanced, OneHotExpert, OneHotRank, Zipf, ChapterExercise, Custom };

    explicit ExpertsTab(QWidget* parent = nullptr);

    QString name() const override { return "experts"; }
    QString title() const override { return tr("Expert routing"); }
    QList<ChartPanel*> charts() const override;
    void setScenario(const core::Scenario& scenario) override;
    void writeScenario(core::Scenario& scenario) const override;
    QHash<QString, QString> explanationValues() const override;

    /// The inputs as the controls hold them.
    core::ExpertsInputs inputs() const { return m_inputs; }
    /// Values per token and bytes per value: what one slot weighs on the wire. Tab state, not
    /// scenario keys.
    std::int64_t hiddenSize() const { return m_hidden; }
    std::int64_t bytesPerValue() const { return m_bytesPerValue; }
    /// The preset the inputs match (Custom when none does).
    Preset preset() const;

    HeatmapPanel* heatmap() const { return m_heatmap; }
    ChartViewPanel* loadChart() const { return m_load; }
    ChartViewPanel* ranksChart() const { return m_ranks; }
    /// The figures at the top of the rank chart: imbalance, all-to-all bytes, auxiliary loss.
    QGraphicsTextItem* ranksCaption() const { return m_ranksCaption; }

protected:
    void readControls() override;
    void recompute() override;

private:
    void buildControls();
    void buildHeatmap();
    void buildLoadChart();
    void buildRanksChart();
    void applyPreset(int index);
    void syncPreset();
    /// Sets the ranges that depend on other inputs (experts on ranks, top-k on experts, tokens
    /// on ranks x top-k), without signals.
    void updateRanges(std::int64_t ranks, std::int64_t experts, std::int64_t topK);
    /// Draws m_result with today's hidden size and bytes per value. Throws InputError.
    void showResult();
    void updateLoadAxis(const core::ExpertsResult& r);
    /// Fits the rank chart's caption to the chart's width and makes room for it above the plot.
    void layoutRanksCaption();

    core::ExpertsInputs m_inputs;
    std::int64_t m_hidden = 4096;
    std::int64_t m_bytesPerValue = 2;
    double m_capacityValue = 1.25; ///< the factor slider's value, kept while the limit is off

    /// The routing on screen and the inputs it came from; a change of hidden size or bytes per
    /// value redraws it without routing again.
    std::shared_ptr<const core::ExpertsResult> m_result;
    core::AllToAllTraffic m_traffic; ///< of m_result, at today's slot size
    core::ExpertsInputs m_resultInputs;
    /// The inputs sent to the worker and not yet back.
    std::optional<core::ExpertsInputs> m_inFlight;
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
