#pragma once

#include "scalelab/core/tensor_parallel.h"
#include "shardingpanel.h"
#include "tab.h"
#include "tensorparallelsweep.h"

#include <optional>
#include <vector>

QT_BEGIN_NAMESPACE
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QTimer;
class QValueAxis;
QT_END_NAMESPACE

namespace scalelab::ui {

class ChartViewPanel;

/// Tensor-parallel MLP: W1 split by columns and W2 by the matching rows gives the unsharded
/// layer exactly, up to rounding; a wrong split misses by the size of the output; and each
/// rank holds, computes and sends a share that the cost chart counts.
///
/// The picture and the cost chart are cheap and follow every slider step at once. The error
/// chart runs the real MLP at every sampled rank count in float64 and float32 (the
/// TensorParallelSweep, which keeps what it computed for the current weights); at large sizes
/// that is seconds of work, so it runs on the worker thread and is dropped when the inputs
/// move on.
class TensorParallelTab : public Tab {
    Q_OBJECT

public:
    explicit TensorParallelTab(document::ScenarioDocument* document = nullptr,
                               QWidget* parent = nullptr);

    /// The title in the window, before the tab is made as well.
    static QString titleText() { return tr("Tensor-parallel MLP"); }
    QString title() const override { return titleText(); }
    QList<ChartPanel*> charts() const override;
    QHash<QString, QString> explanationValues() const override;

    /// The inputs the charts show: the document's.
    const core::TensorParallelInputs& inputs() const { return scenario().tensorParallel; }
    /// The split drawn (the correct one or one of the two wrong ones).
    core::MlpSplit split() const { return scenario().tensorParallelDisplay.split; }
    /// Whether the live figure is the float32 layer's rather than the float64 one's.
    bool float32() const { return scenario().tensorParallelDisplay.float32; }

    ShardingPanel* shardingChart() const { return m_sharding; }
    ChartViewPanel* errorChart() const { return m_error; }
    ChartViewPanel* costChart() const { return m_cost; }
    QLabel* explanationLabel() const { return m_explanation; }

    /// The divisors of the cost chart's axes: bytes per unit of the left axis (1, 1e3, 1e6 or
    /// 1e9) and multiply-adds per unit of the right one.
    double costBytesUnit() const { return m_bytesUnit; }
    double costCountUnit() const { return m_countUnit; }

    /// The sharding picture for `in` under `split`: shards from core's array_split, shapes,
    /// steps and caption. Pure, so the picture can be checked without computing the MLP.
    static ShardingPanel::Picture shardingPicture(const core::TensorParallelInputs& in,
                                                  core::MlpSplit split);

    /// The samples the error chart shows now (empty until the first result arrives).
    const std::vector<ErrorSample>& errorSamples() const { return m_errors.samples; }
    /// max |unsharded output| in float64: the size a wrong split's error is compared with.
    double outputMagnitude() const { return m_errors.outputMagnitude; }
    /// The live figure: max |sharded - unsharded| at the current rank count in the chosen
    /// precision (the wrong split's when one is chosen); empty while it is being computed.
    std::optional<double> currentDifference() const { return m_current; }

protected:
    void recompute() override;

private:
    void buildControls();
    void buildErrorChart();
    void buildCostChart();
    void placeCharts();
    void updatePicture();
    void updateCost();
    void updateCostAxes(double topBytes, double topMacs);
    void updateCostFigures(const core::TensorParallelRankCost& widest);
    void startErrors();
    void showErrors(ErrorSweep errors);
    void showErrorSeries(double zeroAt);
    void styleErrorSeries(bool zerosShown);
    void updateFigures();
    void updateExplanation();

    QLabel* m_explanation = nullptr;
    QTimer* m_slowTimer = nullptr;

    ShardingPanel* m_sharding = nullptr;

    ChartViewPanel* m_error = nullptr;
    QValueAxis* m_errorRanks = nullptr;
    QLogValueAxis* m_errorAxis = nullptr;
    QLineSeries* m_float64 = nullptr;
    QLineSeries* m_float32 = nullptr;
    QLineSeries* m_wrong = nullptr;
    QLineSeries* m_outputLine = nullptr;
    QScatterSeries* m_zeros = nullptr;
    QScatterSeries* m_yours = nullptr;

    ChartViewPanel* m_cost = nullptr;
    QValueAxis* m_costRanks = nullptr;
    QValueAxis* m_bytesAxis = nullptr;
    QValueAxis* m_macAxis = nullptr;
    QLineSeries* m_paramBytes = nullptr;
    QLineSeries* m_activationBytes = nullptr;
    QLineSeries* m_allReduceBytes = nullptr;
    QLineSeries* m_multiplyAdds = nullptr;
    QLineSeries* m_costYours = nullptr;

    // The error sweep (its cache and which request is the newest) and what it showed last.
    TensorParallelSweep m_sweep;
    ErrorSweep m_errors;
    std::optional<double> m_current;
    std::optional<double> m_current64; ///< float64 at the current rank count (the report's)
    bool m_waiting = false; ///< the shown error figure is for earlier inputs
    QString m_costFigures;
    double m_bytesUnit = 1;
    double m_countUnit = 1;
};

} // namespace scalelab::ui
