#pragma once

#include "scalelab/core/fp8.h"
#include "tab.h"

#include <Eigen/Core>
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
QT_END_NAMESPACE

namespace scalelab::ui {

class ChartViewPanel;
class HeatmapPairPanel;

/// One scaling granularity of the comparison table.
struct Fp8Granularity {
    QString name; ///< short: "Per tensor", "1 x 128", ...
    QString about; ///< one sentence: what the granularity is and who uses it
    core::Fp8Scaling scaling;
    bool plainCast = false; ///< no scale at all: the value is cast as it is
    std::int64_t scales = 0; ///< scales stored (0 for the plain cast)
    QString note; ///< how the tiles are cut when they do not divide the matrix; else empty
    core::Fp8Stats all; ///< over the whole matrix
    core::Fp8Stats small; ///< over the small blocks only (see Fp8View::excluded)
};

/// Everything one recompute shows, built off the GUI thread from core's functions.
struct Fp8View {
    core::Fp8Inputs inputs; ///< what it was computed for
    std::int64_t blockCount = 0; ///< 1 x blockSize blocks of the matrix
    /// Blocks left out of the "small blocks" figures: the generator's outlier blocks, or for
    /// explicit values the blocks that hold the largest |value|.
    std::vector<std::int64_t> excluded;
    bool outliersOnTop = false; ///< the excluded blocks are exactly the largest ones
    float tensorMax = 0; ///< max |value| of the matrix
    float tensorScale = 1; ///< the per-tensor scale, tensorMax / max_value

    /// fp8-block-error: (rank from 1, smallest block first; relative error in %). At most
    /// kMaxPlotPoints ranks, evenly spread, when there are more blocks.
    QList<QPointF> tensorPoints, blockPoints;

    /// The block of the grid chart: its index, rank, relative errors (fractions), own scale,
    /// values and what each scaling gives back.
    std::int64_t shownBlock = 0;
    std::int64_t shownRank = 0;
    double shownTensorError = 0;
    double shownBlockError = 0;
    float shownScale = 1;
    std::vector<float> shownValues, shownTensorDeq, shownBlockDeq;
    /// fp8-grid: the representable values near the block, for each scale (core::fp8ScaledGrid).
    std::vector<float> tensorGrid, blockGrid;

    /// fp8-heatmap: |error| max-pooled to at most kMapSide cells a side, and the pool sizes.
    Eigen::MatrixXd tensorMap, blockMap;
    std::int64_t poolRows = 1, poolCols = 1;

    /// The granularity table; rows kTensorRow and kChapterRow are the two the charts compare.
    std::vector<Fp8Granularity> table;

    /// The generator's normal matrix, kept so a change of block size or outlier scale does not
    /// draw it again (null for explicit values).
    std::shared_ptr<const core::MatrixF> normals;
    /// The generated matrix with its outliers, kept so a change of format, overflow or shown
    /// block does not build it again (null for explicit values).
    std::shared_ptr<const core::MatrixF> generated;
};

/// FP8 block scaling: why one scale per tensor can cost the small blocks their precision, when
/// it does (only once they fall into the format's subnormals), and how much finer scales help.
class Fp8Tab : public Tab {
    Q_OBJECT

public:
    /// Most points a block-error series draws; more blocks are sampled evenly by rank.
    static constexpr int kMaxPlotPoints = 2000;
    /// Most heatmap cells a side (larger matrices are max-pooled in core first).
    static constexpr int kMapSide = 1024;
    static constexpr int kCastRow = 0;
    static constexpr int kTensorRow = 1;
    static constexpr int kChapterRow = 5;

    explicit Fp8Tab(QWidget* parent = nullptr);

    QString name() const override { return "fp8"; }
    QString title() const override { return tr("FP8 block scaling"); }
    QList<ChartPanel*> charts() const override;
    void setScenario(const core::Scenario& scenario) override;
    void writeScenario(core::Scenario& scenario) const override;
    QHash<QString, QString> explanationValues() const override;

    /// The inputs as the controls hold them.
    const core::Fp8Inputs& inputs() const { return m_inputs; }
    /// Which block the grid chart shows: this percentile of the blocks ordered by magnitude.
    double shownPercentile() const { return m_percentile; }
    /// What the charts, figures and table show now (null before the first result).
    std::shared_ptr<const Fp8View> view() const { return m_view; }

    ChartViewPanel* blockErrorChart() const { return m_errorChart; }
    ChartViewPanel* gridChart() const { return m_gridChart; }
    HeatmapPairPanel* heatmap() const { return m_heatmap; }
    QTableWidget* granularityTable() const { return m_table; }

    /// The block sizes offered for `cols` columns: its divisors, ascending.
    static std::vector<std::int64_t> blockSizeChoices(std::int64_t cols);
    /// The ranks (from 0) a series of `blocks` blocks draws: all of them up to `maxPoints`,
    /// otherwise `maxPoints` ranks spread evenly from the first to the last.
    static std::vector<std::int64_t> plottedRanks(std::int64_t blocks, int maxPoints);
    /// The rank (from 0) of the block at `percentile` of `blocks` blocks.
    static std::int64_t rankAtPercentile(std::int64_t blocks, double percentile);
    /// Computes everything the tab shows for `in` (any thread). `normals`, when not null, is
    /// fp8NormalMatrix(in) from an earlier call; `previous`, when not null, an earlier view whose
    /// generated matrix is reused if the generation keys are the same. Throws core::InputError.
    static Fp8View computeView(const core::Fp8Inputs& in, double percentile,
                               std::shared_ptr<const core::MatrixF> normals,
                               const std::shared_ptr<const Fp8View>& previous = nullptr);

protected:
    void readControls() override;
    void recompute() override;

private:
    void buildControls();
    void buildErrorChart();
    void buildGridChart();
    void buildHeatmap();
    void buildTable();
    void applyPreset(int index);
    void syncPreset();
    void fillBlockSizes(std::int64_t cols, bool keepPreferred);
    void showExplicitValues(bool on);
    void useGeneratedMatrix();
    std::int64_t effectiveCols() const;
    void showView(const std::shared_ptr<const Fp8View>& view);
    void showErrorChart(const Fp8View& v);
    void showGridChart(const Fp8View& v);
    void showHeatmap(const Fp8View& v);
    void showTable(const Fp8View& v);
    void showFigures(const Fp8View& v);

    core::Fp8Inputs m_inputs;
    double m_percentile = 50;
    /// The block size the user chose last: when the columns change, the largest divisor of
    /// theirs not above this is offered, so passing through a prime column count and back does
    /// not lose the choice.
    std::int64_t m_preferredBlock = 16;
    std::int64_t m_blockCols = -1; ///< the column count the block sizes were listed for

    std::shared_ptr<const Fp8View> m_view;
    std::shared_ptr<const core::MatrixF> m_normals;
    std::int64_t m_normalsSeed = -1;

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
