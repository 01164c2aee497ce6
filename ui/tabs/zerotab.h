#pragma once

#include "scalelab/core/collectives.h"
#include "tab.h"
#include "zeropresenter.h"

#include <QColor>

QT_BEGIN_NAMESPACE
class QBarCategoryAxis;
class QBarSet;
class QComboBox;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QHorizontalStackedBarSeries;
class QTableWidget;
class QValueAxis;
QT_END_NAMESPACE

namespace scalelab::ui {

class ChartViewPanel;
class RingPanel;

/// Data parallelism and ZeRO: what one rank holds under each stage as the rank count grows,
/// which part each stage shards, the ring all-reduce played step by step, and what each stage
/// sends per training step with the time an alpha-beta link model gives.
class ZeroTab : public Tab {
    Q_OBJECT

public:
    explicit ZeroTab(document::ScenarioDocument* document = nullptr, QWidget* parent = nullptr);

    /// The title in the window, before the tab is made as well.
    static QString titleText() { return tr("Ring and ZeRO"); }
    QString title() const override { return titleText(); }
    QList<ChartPanel*> charts() const override;
    QHash<QString, QString> explanationValues() const override;

    /// The inputs the charts show: the document's.
    const core::ZeroInputs& inputs() const { return scenario().zero; }
    /// The alpha-beta link the traffic is timed with, in bytes/s and seconds.
    core::LinkModel link() const;
    /// The accelerator's memory in bytes (the line on the memory charts).
    std::int64_t acceleratorBytes() const;

    /// The bar set index of a stage on the breakdown chart (DP is drawn at the top, last).
    static int breakdownRow(core::ZeroStage stage);
    /// The colour of a stage in every chart and in the table.
    static QColor stageColor(core::ZeroStage stage);

    ChartViewPanel* memoryChart() const { return m_memory; }
    ChartViewPanel* breakdownChart() const { return m_breakdown; }
    RingPanel* ringPanel() const { return m_ring; }
    ChartViewPanel* trafficChart() const { return m_traffic; }
    QTableWidget* figuresTable() const { return m_table; }

protected:
    void changeEvent(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;
    void recompute() override;

private:
    void buildControls();
    void buildMemoryChart();
    void buildBreakdownChart();
    void buildTrafficChart();
    void buildTable();
    void addLesson();
    // The steps of recompute(), in order.
    void showMemory(const ZeroFigures& figures);
    void showRankAxes(const ZeroFigures& figures);
    void showBreakdown(const ZeroFigures& figures);
    void showTraffic(const ZeroFigures& figures);
    void updateRing();
    void showTable(const ZeroFigures& figures);
    void placeNotes();
    /// The rank axes' base: every power of four where the labels fit, fewer where they do not.
    void fitRankAxes();
    void fitTableHeight();
    /// Columns sharing the table's width where every header and cell shows whole in its share;
    /// otherwise each column as wide as its texts, and the table scrolls sideways (a narrow
    /// window in projector type cut "29.5 GB i...").
    void fitTableColumns();
    /// The width column `column` asks for to show its header and cells whole, measured again
    /// only when one of its texts or the font changed (measuring shapes every text).
    int columnWidthNeeded(int column);
    bool showFitsHeader(const QString& header); ///< true: the text changed
    void niceRange(QValueAxis* axis, double min, double max);
    /// The ring demo's shape and byte size last simulated, so other edits do not redo it.
    std::pair<std::int64_t, std::int64_t> m_ringKey{-1, -1};

    QComboBox* m_accelerator = nullptr;

    ChartViewPanel* m_memory = nullptr;
    QList<QLineSeries*> m_stageLines;
    QLineSeries* m_memoryLimit = nullptr;
    QLineSeries* m_memoryCurrent = nullptr;
    QScatterSeries* m_memoryAtCurrent = nullptr;
    QGraphicsSimpleTextItem* m_memoryNLabel = nullptr; ///< "n = 64" beside the vertical line
    QScatterSeries* m_fitMarkers = nullptr;
    QLogValueAxis* m_memoryX = nullptr;
    QLogValueAxis* m_memoryY = nullptr;

    ChartViewPanel* m_breakdown = nullptr;
    QHorizontalStackedBarSeries* m_bars = nullptr;
    QList<QBarSet*> m_parts; ///< weights, gradients, optimizer: replicated then sharded
    QBarSet* m_elsewhere = nullptr; ///< the shards the other ranks keep
    QBarCategoryAxis* m_stageAxis = nullptr;
    QValueAxis* m_breakdownY = nullptr;
    QLineSeries* m_breakdownLimit = nullptr;
    QGraphicsSimpleTextItem* m_breakdownNote = nullptr; ///< "n = 64 ranks" in the plot

    RingPanel* m_ring = nullptr;

    ChartViewPanel* m_traffic = nullptr;
    QList<QLineSeries*> m_trafficLines; ///< DP, ZeRO-1, ZeRO-2, ZeRO-3
    QLineSeries* m_twiceGradients = nullptr;
    QLineSeries* m_trafficCurrent = nullptr;
    QGraphicsSimpleTextItem* m_trafficNLabel = nullptr;
    QLineSeries* m_algbw = nullptr;
    QLineSeries* m_busbw = nullptr;
    QLogValueAxis* m_trafficX = nullptr;
    QValueAxis* m_trafficY = nullptr;
    QValueAxis* m_bandwidthY = nullptr;

    QTableWidget* m_table = nullptr;
    /// A column's width as last measured, with the texts it was measured for.
    struct ColumnNeed {
        QString header;
        int headerWidth = 0;
        QString cells;
        int cellsWidth = 0;
    };
    QList<ColumnNeed> m_columnNeeds;
};

} // namespace scalelab::ui
