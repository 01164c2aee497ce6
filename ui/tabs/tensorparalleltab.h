#pragma once

#include "scalelab/core/tensor_parallel.h"
#include "tab.h"
#include "shardingpanel.h"

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

QT_BEGIN_NAMESPACE
class QComboBox;
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
/// chart runs the real MLP at every sampled rank count in float64 and float32; at large
/// sizes that is seconds of work, so it runs on the worker thread, keeps what it computed for
/// the current weights (a rank count's error does not depend on the slider's position), and
/// is dropped when the inputs move on.
class TensorParallelTab : public Tab {
    Q_OBJECT

public:
    enum class Precision { Float64, Float32 };
    /// The correct split or one of the two wrong ones.
    enum class SplitMode { Matching, W2ByColumns, W1ByRows };

    /// One rank count on the error chart.
    struct ErrorSample {
        std::int64_t ranks = 0;
        double float64 = 0; ///< max |sharded - unsharded| in float64
        double float32 = 0; ///< the same, everything computed in float32
        std::optional<double> wrong; ///< the wrong split's error in float64, when one is chosen
    };

    explicit TensorParallelTab(QWidget* parent = nullptr);
    ~TensorParallelTab() override;

    QString name() const override { return "tensor_parallel"; }
    QString title() const override { return tr("Tensor-parallel MLP"); }
    QList<ChartPanel*> charts() const override;
    void setScenario(const core::Scenario& scenario) override;
    void writeScenario(core::Scenario& scenario) const override;
    QHash<QString, QString> explanationValues() const override;

    core::TensorParallelInputs inputs() const { return m_inputs; }
    Precision precision() const { return m_precision; }
    SplitMode splitMode() const { return m_split; }

    ShardingPanel* shardingChart() const { return m_sharding; }
    ChartViewPanel* errorChart() const { return m_error; }
    ChartViewPanel* costChart() const { return m_cost; }
    QLabel* explanationLabel() const { return m_explanation; }

    /// The divisors of the cost chart's axes: bytes per unit of the left axis (1, 1e3, 1e6 or
    /// 1e9) and multiply-adds per unit of the right one.
    double costBytesUnit() const { return m_bytesUnit; }
    double costCountUnit() const { return m_countUnit; }

    /// The sharding picture for `in` under `mode`: shards from core's array_split, shapes,
    /// steps and caption. Pure, so the picture can be checked without computing the MLP.
    static ShardingPanel::Picture shardingPicture(const core::TensorParallelInputs& in,
                                                  SplitMode mode);

    /// The samples the error chart shows now (empty until the first result arrives).
    const std::vector<ErrorSample>& errorSamples() const { return m_samples; }
    /// max |unsharded output| in float64: the size a wrong split's error is compared with.
    double outputMagnitude() const { return m_outputMagnitude; }
    /// The live figure: max |sharded - unsharded| at the current rank count in the chosen
    /// precision (the wrong split's when one is chosen); empty while it is being computed.
    std::optional<double> currentDifference() const { return m_current; }

protected:
    void readControls() override;
    void recompute() override;

private:
    struct Store;

    void buildControls();
    void buildErrorChart();
    void buildCostChart();
    void updatePicture();
    void updateCost();
    void startErrors();
    void showErrors(std::vector<ErrorSample> samples, double outputMagnitude);
    void updateFigures();
    void updateExplanation();
    std::int64_t maxSamples() const;

    core::TensorParallelInputs m_inputs;
    Precision m_precision = Precision::Float64;
    SplitMode m_split = SplitMode::Matching;

    QComboBox* m_splitBox = nullptr;
    QComboBox* m_precisionBox = nullptr;
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

    // Results of the worker thread, kept per weights (sizes and seed).
    std::shared_ptr<Store> m_store;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    quint64 m_generation = 0; ///< the newest error request; older results are dropped
    std::vector<ErrorSample> m_samples;
    double m_outputMagnitude = 0;
    std::optional<double> m_current;
    std::optional<double> m_current64; ///< float64 at the current rank count (the report's)
    bool m_waiting = false; ///< the shown error figure is for earlier inputs
    QString m_costFigures;
    double m_bytesUnit = 1;
    double m_countUnit = 1;
};

} // namespace scalelab::ui
