#pragma once

#include "format.h"
#include "scalelab/core/memory.h"
#include "tab.h"

QT_BEGIN_NAMESPACE
class QBarCategoryAxis;
class QBarSet;
class QCheckBox;
class QComboBox;
class QGraphicsSimpleTextItem;
class QLabel;
class QLineSeries;
class QScatterSeries;
class QStackedBarSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace scalelab::ui {

class ChartViewPanel;
class ParameterControl;

/// Memory budget: what one accelerator holds under Adam (weights, gradients, master weights,
/// moments) and how much activation memory checkpointing saves, against the accelerator's
/// memory.
class MemoryTab : public Tab {
    Q_OBJECT

public:
    explicit MemoryTab(document::ScenarioDocument* document = nullptr, QWidget* parent = nullptr);

    /// The title in the window, before the tab is made as well.
    static QString titleText() { return tr("Memory budget"); }
    QString title() const override { return titleText(); }
    QList<ChartPanel*> charts() const override;
    QHash<QString, QString> explanationValues() const override;

    /// The inputs the charts show: the document's.
    const core::MemoryInputs& inputs() const { return scenario().memory; }
    /// The accelerator's memory in bytes (the line on the budget chart).
    double acceleratorBytes() const;
    ByteUnit byteUnit() const;
    bool checkpointing() const;

    ChartViewPanel* budgetChart() const { return m_budget; }
    ChartViewPanel* checkpointChart() const { return m_checkpoint; }
    /// The notes beside your segments' point and the fewest bytes' point.
    QGraphicsSimpleTextItem* currentNote() const { return m_currentNote; }
    QGraphicsSimpleTextItem* optimumNote() const { return m_optimumNote; }

protected:
    void sectionShown() override;
    void recompute() override;

private:
    /// The readable width of a memory chart, in characters of chart type.
    static constexpr int kMemoryChartChars = 72;

    void buildControls();
    void showBudget(const core::MemoryResult& r);
    void showCheckpointing(const core::MemoryResult& r);
    void showFigures(const core::MemoryResult& r);
    void buildBudgetChart();
    void buildCheckpointChart();
    /// The two points' notes beside their points, inside the plot.
    void placePointNotes();
    void applyRecipe(int index);
    void syncRecipe();

    QComboBox* m_recipe = nullptr;
    QComboBox* m_accelerator = nullptr;
    QComboBox* m_unitBox = nullptr;
    QCheckBox* m_checkpointBox = nullptr;

    ChartViewPanel* m_budget = nullptr;
    QStackedBarSeries* m_bars = nullptr;
    QList<QBarSet*> m_sets;
    QBarCategoryAxis* m_budgetCategories = nullptr;
    QValueAxis* m_budgetY = nullptr;
    QLineSeries* m_limitLine = nullptr;

    ChartViewPanel* m_checkpoint = nullptr;
    QLineSeries* m_checkpointed = nullptr;
    QLineSeries* m_uncheckpointed = nullptr;
    QLineSeries* m_recompute = nullptr;
    QScatterSeries* m_current = nullptr;
    QScatterSeries* m_optimum = nullptr;
    QValueAxis* m_segmentsAxis = nullptr;
    QValueAxis* m_bytesAxis = nullptr;
    QValueAxis* m_computeAxis = nullptr;
    /// "Yours: 8" over the black dot and "Fewest: 16" under the green square: beside their
    /// points, not in the legend, which then fits under a narrow chart, and is not laid out
    /// again on every segments step.
    QGraphicsSimpleTextItem* m_currentNote = nullptr;
    QGraphicsSimpleTextItem* m_optimumNote = nullptr;
};

} // namespace scalelab::ui
