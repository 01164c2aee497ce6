#include "report.h"

#include "scalelab/core/fp8_training.h"
#include "scalelab/core/fp8_view.h"
#include "scalelab/core/layoutsearch.h"
#include "scalelab/core/steptime.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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

QJsonArray realArray(const std::vector<double>& values)
{
    QJsonArray out;
    for (double v : values)
        out.append(real(v));
    return out;
}

// Every schedule at the scenario's p, m and pass times, by its scenario name: what the tab's
// comparison shows. Null where core refuses the schedule for these inputs; null as a whole past
// `maxPasses` stages x microbatches (ReportBounds::comparedPasses: at the simulator's 4,000,000
// passes the seven simulations alone would take most of the 30 s a report may take).
QJsonValue pipelineSchedules(const core::PipelineInputs& in, std::int64_t maxPasses)
{
    if (in.microbatches > maxPasses / in.stages)
        return QJsonValue();
    using core::Schedule;
    const std::pair<const char*, Schedule> schedules[] = {{"gpipe", Schedule::GPipe},
                                                          {"1f1b", Schedule::OneFOneB},
                                                          {"interleaved", Schedule::Interleaved},
                                                          {"zb-h1", Schedule::ZeroBubbleH1},
                                                          {"zb-h2", Schedule::ZeroBubbleH2},
                                                          {"dualpipe", Schedule::DualPipe},
                                                          {"dualpipev", Schedule::DualPipeV}};
    QJsonObject out;
    for (const auto& [name, schedule] : schedules) {
        core::PipelineInputs other = in;
        other.schedule = schedule;
        try {
            const core::PipelineResult r = core::simulatePipeline(other);
            out.insert(name,
                       QJsonObject{
                           {"bubble_time", real(r.bubbleTime)},
                           {"bubble_fraction", real(r.bubbleFraction)},
                           {"simulated_bubble_fraction", real(r.simulatedBubbleFraction)},
                           {"peak_activations", realArray(r.peakActivations)},
                           {"parameters_per_device", real(r.parametersPerDevice)},
                           {"devices", r.devices},
                       });
        } catch (const core::InputError&) {
            out.insert(name, QJsonValue());
        }
    }
    return out;
}

QJsonObject pipelineSection(const core::PipelineInputs& in, std::int64_t maxComparedPasses)
{
    const core::PipelineResult r = core::simulatePipeline(in);
    return {
        {"bubble_fraction", real(r.bubbleFraction)},
        {"simulated_bubble_fraction", real(r.simulatedBubbleFraction)},
        {"makespan", real(r.makespan)},
        {"peak_in_flight", intArray(r.peakInFlight)},
        // Qi et al.'s bubble (ScaleLab's extension): the most a stage idles inside its own run.
        {"bubble_time", real(r.bubbleTime)},
        {"bubble_rate", real(r.bubbleRate)},
        {"peak_weight_pending", intArray(r.peakWeightPending)},
        // Per device (p, or p/2 for DualPipeV), and the comparison the tab draws.
        {"devices", r.devices},
        {"peak_activations", realArray(r.peakActivations)},
        {"parameters_per_device", real(r.parametersPerDevice)},
        {"schedules", pipelineSchedules(in, maxComparedPasses)},
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

const char* roundingName(core::AccumulatorRounding r)
{
    switch (r) {
    case core::AccumulatorRounding::AlignedBlock:
        return "aligned_block";
    case core::AccumulatorRounding::Truncate:
        return "truncate";
    case core::AccumulatorRounding::Nearest:
        break;
    }
    return "nearest";
}

/// fp8.accumulation: the inputs, and per K the output's error for each way of adding.
QJsonObject accumulationSection(const core::Fp8Inputs& in)
{
    const core::Fp8AccumulationInputs& a = in.accumulation;
    const core::Fp8AccumulationResult r =
        core::fp8Accumulation(a, in.format, in.blockSize, in.overflow);
    QJsonArray ks;
    std::array<QJsonArray, core::kAccumulationModes> maxErr, rmsErr;
    for (const core::Fp8AccumulationPoint& p : r.points) {
        ks.append(whole(p.k));
        for (int m = 0; m < core::kAccumulationModes; ++m) {
            maxErr[m].append(real(p.maxRelativeError[m]));
            rmsErr[m].append(real(p.rmsRelativeError[m]));
        }
    }
    const char* modes[] = {"float32", "limited", "promoted"};
    QJsonObject max, rms;
    for (int m = 0; m < core::kAccumulationModes; ++m) {
        max.insert(modes[m], maxErr[m]);
        rms.insert(modes[m], rmsErr[m]);
    }
    return {
        {"k_values", ks},
        {"accumulator_bits", whole(a.accumulatorBits)},
        {"promotion_interval", whole(a.promotionInterval)},
        {"rounding", roundingName(a.rounding)},
        {"outputs", whole(a.outputs)},
        {"seed", whole(a.seed)},
        {"max_relative_error", max},
        {"rms_relative_error", rms},
    };
}

/// fp8.policy: the inputs, and per step each policy's saturated and flushed counts and error.
QJsonObject policySection(const core::Fp8Inputs& in)
{
    const core::Fp8PolicyInputs& p = in.policy;
    const core::Fp8PolicyResult r = core::fp8Policy(p, in.format, in.blockSize, in.overflow);
    QJsonArray amax;
    for (float v : r.amax)
        amax.append(real(static_cast<double>(v)));
    const char* names[] = {"delayed", "per_tensor", "fine"};
    QJsonObject policies;
    for (int k = 0; k < core::kScalingPolicies; ++k) {
        QJsonArray saturated, flushed, error, scale;
        for (const core::Fp8PolicyStep& st : r.steps[static_cast<std::size_t>(k)]) {
            saturated.append(whole(st.saturated));
            flushed.append(whole(st.flushed));
            error.append(real(st.relativeError));
            scale.append(real(static_cast<double>(st.scale)));
        }
        policies.insert(names[k],
                        QJsonObject{{"saturated", saturated},
                                    {"flushed", flushed},
                                    {"relative_error", error},
                                    {"scale", scale}});
    }
    return {
        {"steps", whole(p.steps)},
        {"spike", real(p.spike)},
        {"spike_step", whole(p.spikeStep)},
        {"drift", real(p.drift)},
        {"history", whole(p.history)},
        {"amax", amax},
        {"policies", policies},
    };
}

/// What stands in the report object for fp8.scales when reportJson prints them itself.
constexpr char kScalesMarker[] = "@scalelab:fp8.scales@";

/// The fp8 section, from the same computation as the FP8 tab's table. With `scalesOut` the
/// scales are left to the caller: moved there, with a marker string in their place.
QJsonObject fp8Section(const core::Fp8Inputs& in, core::MatrixF* scalesOut)
{
    core::Fp8ViewOptions options;
    options.charts = false; // the two compared rows' figures only
    options.wholeTable = false;
    core::Fp8View v = core::computeFp8View(in, options);
    const core::Fp8Stats& block = v.table[core::kFp8ChapterRow].all;
    const core::Fp8Stats& tensor = v.table[core::kFp8TensorRow].all;
    QJsonObject out{
        {"max_abs_error", real(block.maxAbsError)},
        {"rmse", real(block.rmse)},
        {"snr_db", real(block.snrDb)},
        {"underflow_count", whole(block.underflowCount)},
        {"per_tensor_scale", real(static_cast<double>(v.tensorScale))},
        {"per_tensor_max_abs_error", real(tensor.maxAbsError)},
        {"per_tensor_rmse", real(tensor.rmse)},
        {"per_tensor_snr_db", real(tensor.snrDb)},
        {"per_tensor_underflow_count", whole(tensor.underflowCount)},
    };
    if (scalesOut) {
        out.insert("scales", QLatin1String(kScalesMarker));
        *scalesOut = std::move(v.blockScales);
    } else {
        out.insert("scales", floatMatrix(v.blockScales));
    }
    if (in.values)
        out.insert("dequantized", floatMatrix(v.blockDequantized));
    return out;
}

/// Rows [first, last) of a float matrix as indented JSON array elements, each row followed by a
/// comma except the matrix's last, written into `out` (grown as needed, never shrunk, so that a
/// reused buffer touches fresh memory once). Returns the bytes written.
std::size_t formatRowsInto(const core::MatrixF& m, Eigen::Index first, Eigen::Index last,
                           const std::string& indent, std::vector<char>& out)
{
    const std::string rowIndent = indent + "    ";
    const std::string valueIndent = indent + "        ";
    // A double's shortest text is at most 24 characters; each value also has its indent and ",\n".
    const std::size_t valueBound = valueIndent.size() + 32;
    const std::size_t rowBound =
        2 * (rowIndent.size() + 4) + static_cast<std::size_t>(m.cols()) * valueBound;
    const std::size_t bound = static_cast<std::size_t>(last - first) * rowBound;
    if (out.size() < bound)
        out.resize(bound);
    char* at = out.data();
    const auto put = [&at](const std::string& text) {
        std::memcpy(at, text.data(), text.size());
        at += text.size();
    };
    for (Eigen::Index i = first; i < last; ++i) {
        put(rowIndent);
        *at++ = '[';
        *at++ = '\n';
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            put(valueIndent);
            const double v = static_cast<double>(m(i, j));
            if (std::isfinite(v)) {
                at = std::to_chars(at, at + 32, v).ptr;
            } else {
                std::memcpy(at, "null", 4);
                at += 4;
            }
            if (j + 1 < m.cols())
                *at++ = ',';
            *at++ = '\n';
        }
        put(rowIndent);
        *at++ = ']';
        if (i + 1 < m.rows())
            *at++ = ',';
        *at++ = '\n';
    }
    return static_cast<std::size_t>(at - out.data());
}

/// Takes the report's text piece by piece, in order; false when a piece could not be written.
using TextSink = std::function<bool(const char*, std::size_t)>;

/// The rows of `scales` as formatRowsInto writes them, handed to `sink` a batch at a time: each
/// batch of about 64 K values is formatted in two halves side by side into two reused buffers,
/// so that a million scales need neither one 40 MB text nor 40 MB of fresh pages.
bool streamRows(const core::MatrixF& scales, const std::string& indent, const TextSink& sink)
{
    const Eigen::Index cols = std::max<Eigen::Index>(1, scales.cols());
    const Eigen::Index batch = std::max<Eigen::Index>(2, 65'536 / cols);
    std::vector<char> first, second;
    bool ok = true;
    for (Eigen::Index top = 0; ok && top < scales.rows(); top += batch) {
        const Eigen::Index bottom = std::min(scales.rows(), top + batch);
        const Eigen::Index half = top + (bottom - top) / 2;
        std::size_t secondSize = 0;
        std::thread helper;
        const auto formatSecond = [&] {
            secondSize = formatRowsInto(scales, half, bottom, indent, second);
        };
        if ((bottom - top) * cols >= 4096)
            helper = std::thread(formatSecond);
        else
            formatSecond();
        const std::size_t firstSize = formatRowsInto(scales, top, half, indent, first);
        if (helper.joinable())
            helper.join();
        // An empty half (a batch of one row) has no buffer: nothing to hand on.
        ok = (firstSize == 0 || sink(first.data(), firstSize))
            && (secondSize == 0 || sink(second.data(), secondSize));
    }
    return ok;
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

/// The step-time terms of one ranked layout, in the names of `step_time`.
QJsonObject termsObject(const core::StepTime& st)
{
    return {
        {"forward_seconds", real(st.forward)},
        {"backward_seconds", real(st.backward)},
        {"recompute_seconds", real(st.recompute)},
        {"tensor_parallel_seconds", real(st.tensorParallel)},
        {"expert_seconds", real(st.expert)},
        {"bubble_seconds", real(st.bubble)},
        {"pipeline_send_seconds", real(st.pipelineSends)},
        {"data_parallel_exposed_seconds", real(st.dataParallelExposed)},
    };
}

/// The step-time model's terms (seconds, on the critical stage) and the figures they give.
QJsonObject stepTimeObject(const core::PlanInputs& in)
{
    const core::StepTime st = core::computeStepTime(in);
    const core::GpuSpec gpu = core::gpuSpec(in.hardware.gpu);
    // Per token, not per step: a step's FLOPs pass 2^53, where JSON's integers and doubles part.
    const auto tokens = static_cast<double>(in.globalBatch * in.sequence);
    QJsonObject out = termsObject(st);
    const QJsonObject figures{
        {"gpu", core::gpuTypeName(in.hardware.gpu)},
        {"peak_flops", real(st.peakFlops)},
        {"gpu_memory_gb", real(gpu.memoryGB)},
        {"gemm_efficiency", real(st.gemmEfficiency)},
        {"critical_stage", whole(st.criticalStage)},
        {"data_parallel_seconds", real(st.dataParallel)},
        {"step_seconds", real(st.total)},
        {"tokens_per_second", real(st.tokensPerSecond)},
        {"model_flops_per_token", real(st.modelFlops / tokens)},
        {"hardware_flops_per_token", real(st.hardwareFlops / tokens)},
        {"mfu", real(st.mfu)},
        {"hfu", real(st.hfu)},
        {"tflops_per_gpu", real(st.tflopsPerGpu)},
        {"training_days", real(st.trainingDays)},
    };
    for (auto it = figures.begin(); it != figures.end(); ++it)
        out.insert(it.key(), it.value());
    return out;
}

QJsonObject layoutKeyObject(const core::LayoutKey& k)
{
    return {
        {"t", whole(k.t)},
        {"p", whole(k.p)},
        {"v", whole(k.v)},
        {"d", whole(k.d)},
        {"ep", whole(k.ep)},
        {"micro_batch", whole(k.microBatch)},
        {"zero_stage", whole(k.zeroStage)},
        {"sequence_parallel", k.sequenceParallel},
        {"recompute", core::recomputeName(k.recompute)},
    };
}

QJsonObject rankedObject(const core::RankedLayout& r)
{
    QJsonObject o{
        {"layout", layoutKeyObject(r.key)},
        {"peak_bytes_per_gpu", real(r.memoryBytes)},
        {"step_seconds", real(r.time.total)},
        {"mfu", real(r.time.mfu)},
        {"terms", termsObject(r.time)},
        {"largest_term", QString::fromStdString(r.largestTerm)},
    };
    if (!r.differingTerm.empty())
        o.insert("differs_most_from_next",
                 QJsonObject{{"term", QString::fromStdString(r.differingTerm)},
                             {"seconds", real(r.differingSeconds)}});
    return o;
}

/// Adds `search` (the ranked layouts for the plan's model, GPUs and batch) to the plan object,
/// or null and `search_refused` when the search would pass the report's bounds (past either,
/// docs/CLI.md).
void addSearch(const core::PlanInputs& in, const ReportBounds& bounds, QJsonObject& plan)
{
    core::LayoutSearchOptions options;
    options.maxCandidates = bounds.searchCandidates;
    options.maxStageWork = bounds.searchStageWork;
    options.scatterNonFitting = 0;
    const core::LayoutSearchResult r = core::searchLayouts(in, options);
    if (r.refused) {
        plan.insert("search", QJsonValue::Null);
        plan.insert("search_refused", QString::fromStdString(r.refusal));
        return;
    }
    QJsonArray best;
    for (std::size_t i = 0; i < r.ranked.size() && i < core::kExplainedLayouts; ++i)
        best.append(rankedObject(r.ranked[i]));
    QJsonArray kept;
    for (const std::string& name : core::keptKeyNames(in.searchKeep))
        kept.append(QString::fromStdString(name));
    QJsonArray closest;
    for (const core::LayoutFailure& f : r.closest)
        closest.append(QJsonObject{
            {"layout", layoutKeyObject(f.key)},
            {"constraint", QString::fromStdString(f.constraint)},
            {"reason", QString::fromStdString(f.reason)},
            {"over_bytes", real(f.overBytes)},
        });
    plan.insert("search",
                QJsonObject{
                    {"kept", kept},
                    {"enumerated", whole(r.enumerated)},
                    {"pruned", whole(r.pruned)},
                    {"fitting", whole(r.fitting)},
                    {"best", best},
                    {"closest_failures", closest},
                });
}

QJsonObject planSection(const core::PlanInputs& in, const ReportBounds& bounds)
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
    QJsonObject out{
        {"parameters", whole(r.parameters.total)},
        {"active_parameters", whole(r.parameters.active)},
        {"data_parallel", whole(r.dataParallel)},
        {"microbatches", whole(r.microbatches)},
        {"stages", stages},
        {"peak_bytes_per_gpu", ratio(r.peakBytesPerGpu)},
        {"fits", r.fits},
        {"bubble_fraction", real(r.bubbleFraction)},
        {"communication_bytes_per_gpu", communication(r.communication)},
        {"step_time", stepTimeObject(in)},
    };
    addSearch(in, bounds, out);
    return out;
}

/// The report object; see fp8Section for `scalesOut`.
QJsonObject reportObject(const core::Scenario& scenario, const ReportBounds& bounds,
                         core::MatrixF* scalesOut)
{
    core::validate(scenario);
    // The three longest parts side by side: the FP8 experiments and the layout search are each
    // one long computation with serial stretches, which the others fill. Each result is taken
    // in the sections' order, so the first section to refuse its input names the error, as
    // when they ran one after the other.
    auto experiments = std::async(std::launch::async, [&scenario] {
        return std::pair{accumulationSection(scenario.fp8), policySection(scenario.fp8)};
    });
    auto plan = std::async(std::launch::async, [&] { return planSection(scenario.plan, bounds); });
    QJsonObject out{
        {"scalelab_report", 1},
        {"memory", memorySection(scenario.memory)},
        {"zero", zeroSection(scenario.zero)},
        {"tensor_parallel", tensorParallelSection(scenario.tensorParallel)},
        {"pipeline", pipelineSection(scenario.pipeline, bounds.comparedPasses)},
        {"experts", expertsSection(scenario.experts)},
    };
    QJsonObject fp8 = fp8Section(scenario.fp8, scalesOut);
    auto [accumulation, policy] = experiments.get();
    fp8.insert("accumulation", accumulation);
    fp8.insert("policy", policy);
    out.insert("fp8", fp8);
    out.insert("plan", plan.get());
    return out;
}

} // namespace

QJsonObject buildReport(const core::Scenario& scenario, const ReportBounds& bounds)
{
    return reportObject(scenario, bounds, nullptr);
}

namespace {

/// The report's text, handed to `sink` in order: Qt's text for everything but fp8.scales, whose
/// marker is replaced by the scales streamed from streamRows. A million scales through QJsonArray
/// cost more than the whole computation.
bool emitReport(const core::Scenario& scenario, const TextSink& sink)
{
    core::MatrixF scales;
    const QByteArray json = QJsonDocument(reportObject(scenario, ReportBounds{}, &scales))
                                .toJson(QJsonDocument::Indented);
    const auto put = [&sink](const char* data, qsizetype size) {
        return sink(data, static_cast<std::size_t>(size));
    };
    const QByteArray marker = QByteArray("\"") + kScalesMarker + '"';
    const qsizetype at = json.indexOf(marker);
    if (at < 0)
        return put(json.constData(), json.size());
    const qsizetype lineStart = json.lastIndexOf('\n', at) + 1;
    qsizetype keyIndent = 0;
    while (json.at(lineStart + keyIndent) == ' ')
        ++keyIndent;
    const std::string indent(static_cast<std::size_t>(keyIndent), ' ');
    const std::string open = scales.size() == 0 ? "[" : "[\n";
    const std::string close = scales.size() == 0 ? "]" : indent + "]";
    const qsizetype rest = at + marker.size();
    return put(json.constData(), at) && sink(open.data(), open.size())
        && streamRows(scales, indent, sink) && sink(close.data(), close.size())
        && put(json.constData() + rest, json.size() - rest);
}

} // namespace

QByteArray reportJson(const core::Scenario& scenario)
{
    QByteArray out;
    emitReport(scenario, [&out](const char* data, std::size_t size) {
        out.append(data, static_cast<qsizetype>(size));
        return true;
    });
    return out;
}

bool writeReportJson(const core::Scenario& scenario, std::FILE* out)
{
    return emitReport(scenario, [out](const char* data, std::size_t size) {
        return size == 0 || std::fwrite(data, 1, size, out) == size; // fwrite takes no null
    });
}

} // namespace scalelab::app
