#include "report.h"

#include <QJsonArray>
#include <cmath>

namespace scalelab::app {

namespace {

QJsonValue whole(std::int64_t v)
{
    return QJsonValue(static_cast<qint64>(v));
}

/// A byte figure: an integer when it is whole, else the nearest double.
QJsonValue ratio(const core::Ratio& r)
{
    return r.isWhole() ? whole(r.numerator) : QJsonValue(r.value());
}

/// JSON has no infinity or NaN: those become null.
QJsonValue real(double v)
{
    return std::isfinite(v) ? QJsonValue(v) : QJsonValue();
}

QJsonArray wholeArray(const std::vector<std::int64_t>& values)
{
    QJsonArray out;
    for (std::int64_t v : values)
        out.append(whole(v));
    return out;
}

QJsonArray intArray(const std::vector<int>& values)
{
    QJsonArray out;
    for (int v : values)
        out.append(v);
    return out;
}

QJsonArray floatMatrix(const core::MatrixF& m)
{
    QJsonArray rows;
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        QJsonArray row;
        for (Eigen::Index j = 0; j < m.cols(); ++j)
            row.append(real(static_cast<double>(m(i, j))));
        rows.append(row);
    }
    return rows;
}

QJsonObject memorySection(const core::MemoryInputs& in)
{
    const core::MemoryResult r = core::computeMemory(in);
    return {
        {"model_state_bytes", whole(r.modelStateBytes)},
        {"weight_bytes", whole(r.weightBytes)},
        {"grad_bytes", whole(r.gradBytes)},
        {"master_bytes", whole(r.masterBytes)},
        {"moment_bytes", whole(r.momentBytes)},
        {"activation_bytes", whole(r.activationBytes)},
        {"checkpointed_activation_bytes", whole(r.checkpointedActivationBytes)},
        {"optimal_segments", whole(r.optimalSegments)},
        {"optimal_checkpointed_activation_bytes", whole(r.optimalCheckpointedBytes)},
        {"recomputed_layers", whole(r.recomputedLayers)},
    };
}

QJsonObject zeroSection(const core::ZeroInputs& in)
{
    const core::ZeroResult r = core::computeZero(in);
    return {
        {"dp_bytes", ratio(r.dp)},
        {"zero1_bytes", ratio(r.zero1)},
        {"zero2_bytes", ratio(r.zero2)},
        {"zero3_bytes", ratio(r.zero3)},
        {"ring_allreduce_bytes_per_rank", ratio(r.ringAllReduceBytesPerRank)},
    };
}

QJsonObject tensorParallelSection(const core::TensorParallelInputs& in)
{
    const core::TensorParallelResult r = core::computeTensorParallel(in);
    return {
        {"max_abs_difference", real(r.maxAbsDifference)},
        {"shard_widths", wholeArray(r.shardWidths)},
        {"allreduce_bytes_per_rank", ratio(r.allReduceBytesPerRank)},
    };
}

QJsonObject pipelineSection(const core::PipelineInputs& in)
{
    const core::PipelineResult r = core::simulatePipeline(in);
    return {
        {"bubble_fraction", real(r.bubbleFraction)},
        {"simulated_bubble_fraction", real(r.simulatedBubbleFraction)},
        {"makespan", real(r.makespan)},
        {"peak_in_flight", intArray(r.peakInFlight)},
    };
}

QJsonObject expertsSection(const core::ExpertsInputs& in)
{
    const core::ExpertsResult r = core::routeExperts(in);
    QJsonArray counts;
    for (const auto& row : r.counts)
        counts.append(wholeArray(row));
    return {
        {"counts", counts},
        {"expert_load", wholeArray(r.expertLoad)},
        {"received_per_rank", wholeArray(r.receivedPerRank)},
        {"imbalance", r.imbalance ? real(*r.imbalance) : QJsonValue()},
        {"dropped", whole(r.dropped)},
        {"capacity", whole(r.capacity)},
        {"total_slots", whole(r.totalSlots)},
    };
}

QJsonObject fp8Section(const core::Fp8Inputs& in)
{
    const core::MatrixF values = core::fp8InputMatrix(in);
    const core::Fp8Result block = core::fp8BlockQuantize(
        values, in.format, core::Fp8Scaling{1, in.blockSize, false}, in.overflow);
    const core::Fp8Result tensor =
        core::fp8BlockQuantize(values, in.format, core::Fp8Scaling{0, 0, false}, in.overflow);
    QJsonObject out{
        {"scales", floatMatrix(block.scales)},
        {"max_abs_error", real(block.stats.maxAbsError)},
        {"rmse", real(block.stats.rmse)},
        {"snr_db", real(block.stats.snrDb)},
        {"underflow_count", whole(block.stats.underflowCount)},
        {"per_tensor_scale", real(static_cast<double>(tensor.scales(0, 0)))},
        {"per_tensor_max_abs_error", real(tensor.stats.maxAbsError)},
        {"per_tensor_rmse", real(tensor.stats.rmse)},
        {"per_tensor_snr_db", real(tensor.stats.snrDb)},
        {"per_tensor_underflow_count", whole(tensor.stats.underflowCount)},
    };
    if (in.values)
        out.insert("dequantized", floatMatrix(block.dequantized));
    return out;
}

QJsonObject communication(const core::CommunicationBytes& c)
{
    return {
        {"tensor_parallel", ratio(c.tensorParallel)},
        {"data_parallel", ratio(c.dataParallel)},
        {"pipeline", ratio(c.pipeline)},
        {"expert", ratio(c.expert)},
    };
}

QJsonObject planSection(const core::PlanInputs& in)
{
    const core::PlanResult r = core::computePlan(in);
    QJsonArray stages;
    for (const core::PlanStage& st : r.stages)
        stages.append(QJsonObject{
            {"layers", whole(st.layers)},
            {"parameters", whole(st.parameters)},
            {"model_state_bytes", ratio(st.modelStateBytes)},
            {"activation_bytes", ratio(st.activationBytes)},
            {"total_bytes", ratio(st.totalBytes)},
            {"in_flight", whole(st.inFlight)},
            {"communication_bytes", communication(st.communication)},
        });
    return {
        {"parameters", whole(r.parameters.total)},
        {"active_parameters", whole(r.parameters.active)},
        {"data_parallel", whole(r.dataParallel)},
        {"microbatches", whole(r.microbatches)},
        {"stages", stages},
        {"peak_bytes_per_gpu", ratio(r.peakBytesPerGpu)},
        {"fits", r.fits},
        {"bubble_fraction", real(r.bubbleFraction)},
        {"communication_bytes_per_gpu", communication(r.communication)},
    };
}

} // namespace

QJsonObject buildReport(const core::Scenario& scenario)
{
    core::validate(scenario);
    return {
        {"scalelab_report", 1},
        {"memory", memorySection(scenario.memory)},
        {"zero", zeroSection(scenario.zero)},
        {"tensor_parallel", tensorParallelSection(scenario.tensorParallel)},
        {"pipeline", pipelineSection(scenario.pipeline)},
        {"experts", expertsSection(scenario.experts)},
        {"fp8", fp8Section(scenario.fp8)},
        {"plan", planSection(scenario.plan)},
    };
}

} // namespace scalelab::app
