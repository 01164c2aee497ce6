#pragma once

#include "scalelab/core/fp8.h"
#include "scalelab/core/fp8_view.h"
#include "tab.h"

#include <QHash>
#include <QList>
#include <QPointF>
#include <QString>
#include <cstdint>
#include <memory>
#include <vector>

QT_BEGIN_NAMESPACE
class QAreaSeries;
class QCategoryAxis;
class QComboBox;
class QLabel;
class QLineSeries;
class QPushButton;
class QScatterSeries;
class QTableWidget;
class QValueAxis;
class QVBoxLayout;
QT_END_NAMESPACE

namespace scalelab::ui {

class ChartViewPanel;
class HeatmapPairPanel;

/// FP8 block scaling: why one scale per tensor can cost the small blocks their precision, when
/// it does (only once they fall into the format's subnormals), and how much finer scales help.
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

    explicit Fp8Tab(document::ScenarioDocument* document = nullptr, QWidget* parent = nullptr);

    QString title() const override { return tr("FP8 block scaling"); }
    QList<ChartPanel*> charts() const override;
    QHash<QString, QString> explanationValues() const override;

    /// The inputs the charts show: the document's.
    const core::Fp8Inputs& inputs() const { return scenario().fp8; }
    /// Which block the grid chart shows: this percentile of the blocks ordered by magnitude.
    double shownPercentile() const { return scenario().fp8Display.shownBlock; }
    /// What the charts, figures and table show now (null before the first result).
    std::shared_ptr<const core::Fp8View> view() const { return m_view; }

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

private:
    void buildControls();
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
    void showView(const std::shared_ptr<const core::Fp8View>& view);
    void showErrorChart(const core::Fp8View& v);
    void showOutlierBand(const core::Fp8View& v);
    void showGridChart(const core::Fp8View& v);
    void showGridRange(const core::Fp8View& v);
    void showHeatmap(const core::Fp8View& v);
    void showTable(const core::Fp8View& v);
    void showFigures(const core::Fp8View& v);

    std::shared_ptr<const core::Fp8View> m_view;
    std::shared_ptr<const core::MatrixF> m_normals;
    std::int64_t m_normalsSeed = -1;
    /// The recomputes' cached matrices and reused buffers (used by one recompute at a time: the
    /// tab's background runner runs them one after the other).
    std::shared_ptr<core::Fp8Workspace> m_workspace = std::make_shared<core::Fp8Workspace>();

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

    HeatmapPairPanel* m_heatmap = nullptr;
    QTableWidget* m_table = nullptr;
    QLabel* m_tableNote = nullptr;
};

} // namespace scalelab::ui
