#include "planexport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>
#include <string>
#include <utility>
#include <vector>

namespace scalelab::document {

namespace {

using core::InputError;

std::string str(std::int64_t v)
{
    return std::to_string(v);
}

QString num(std::int64_t v)
{
    return QString::number(v);
}

void requireWeightFormat(const core::PlanInputs& in, const char* framework)
{
    if (in.weightBytes != 2 && in.weightBytes != 4)
        throw InputError("plan.weight_bytes",
                         std::string("2 (bf16) or 4 (fp32) for ") + framework
                             + ", which trains in no other weight format; weight_bytes is "
                             + str(in.weightBytes));
}

} // namespace

QByteArray deepSpeedConfig(const core::PlanInputs& in)
{
    core::validate(in);
    requireWeightFormat(in, "a DeepSpeed configuration");
    // DeepSpeed's pipeline engine asserts this itself ("ZeRO-2 and ZeRO-3 are incompatible
    // with pipeline parallelism"): better refused here than an hour into a queue.
    if (in.pipelineParallel > 1 && in.zeroStage >= 2)
        throw InputError("plan.zero_stage",
                         "0 or 1 when pipeline_parallel > 1: DeepSpeed's pipeline engine refuses "
                         "ZeRO-2 and ZeRO-3 with pipeline stages (here p = "
                             + str(in.pipelineParallel) + ", zero_stage " + str(in.zeroStage)
                             + ")");
    const std::int64_t m = core::computePlan(in).microbatches;
    QJsonObject config;
    // DeepSpeed checks train_batch_size = micro batch x accumulation steps x data-parallel size.
    config.insert("train_batch_size", qint64(in.globalBatch));
    config.insert("train_micro_batch_size_per_gpu", qint64(in.microBatch));
    config.insert("gradient_accumulation_steps", qint64(m));
    config.insert("bf16", QJsonObject{{"enabled", in.weightBytes == 2}});
    config.insert("zero_optimization", QJsonObject{{"stage", qint64(in.zeroStage)}});
    // DeepSpeed's checkpointing settings serve full-layer recomputation; selective
    // recomputation is a Megatron-LM option (--recompute-granularity selective) instead.
    if (in.recompute == core::Recompute::Full)
        config.insert("activation_checkpointing",
                      QJsonObject{
                          // Each rank keeps 1/t of every checkpointed layer input, as the plan
                          // counts it (2sbh/t) with sequence parallelism.
                          {"partition_activations", in.sequenceParallel && in.tensorParallel > 1},
                          {"cpu_checkpointing", false},
                          {"contiguous_memory_optimization", false},
                          {"synchronize_checkpoint_boundary", false},
                          {"profile", false},
                      });
    return QJsonDocument(config).toJson(QJsonDocument::Indented);
}

namespace {

/// Throws what Megatron-LM refuses at start-up, with the field to change.
void requireMegatronLayout(const core::PlanInputs& in)
{
    const core::ModelShape& model = in.model;
    const std::int64_t layers = model.layers;
    const std::int64_t t = in.tensorParallel;
    const std::int64_t p = in.pipelineParallel;
    const std::int64_t v = in.virtualStages;
    const std::int64_t kv = core::kvHeadsOf(model);
    const std::int64_t m = core::computePlan(in).microbatches;
    if (layers % p != 0)
        throw InputError("plan.pipeline_parallel",
                         "a divisor of layers for Megatron-LM, which gives every pipeline stage "
                         "the same number of layers: "
                             + str(layers) + " layers do not split into " + str(p) + " stages");
    if (v > 1) {
        if (p <= 2)
            throw InputError("plan.virtual_stages",
                             "1 when pipeline_parallel is 2 or less: Megatron-LM runs the "
                             "interleaved schedule on more than 2 pipeline stages only");
        if ((layers / p) % v != 0)
            throw InputError("plan.virtual_stages",
                             "a divisor of the layers per stage for Megatron-LM's "
                             "--num-layers-per-virtual-pipeline-stage: "
                                 + str(layers / p) + " layers per stage do not split into " + str(v)
                                 + " chunks");
        if (m % p != 0)
            throw InputError("plan.global_batch",
                             "a global batch whose microbatch count m = global_batch / "
                             "(micro_batch x d) is a multiple of pipeline_parallel, as "
                             "Megatron-LM's interleaved schedule needs: m = "
                                 + str(m) + " is not a multiple of p = " + str(p));
    }
    if (kv % t != 0)
        throw InputError("plan.tensor_parallel",
                         "a divisor of kv_heads (" + str(kv)
                             + ") for Megatron-LM, which splits the key/value groups over the "
                               "tensor-parallel ranks; tensor_parallel is "
                             + str(t));
    if (model.experts > 0 && in.expertParallel > 1 && t > 1 && !in.sequenceParallel)
        throw InputError("plan.sequence_parallel",
                         "true when expert and tensor parallelism are combined: Megatron-LM "
                         "refuses that pair without sequence parallelism");
}

using Arguments = std::vector<std::pair<QString, QString>>;

/// The model's shape: layers, widths, heads, the MLP and the experts.
void addModelArguments(const core::PlanInputs& in, Arguments& args)
{
    const core::ModelShape& model = in.model;
    const std::int64_t kv = core::kvHeadsOf(model);
    const auto add = [&args](const QString& flag, const QString& value = {}) {
        args.emplace_back(flag, value);
    };
    add("--num-layers", num(model.layers));
    add("--hidden-size", num(model.hidden));
    add("--num-attention-heads", num(model.heads));
    if (kv < model.heads) {
        add("--group-query-attention");
        add("--num-query-groups", num(kv));
    }
    add("--ffn-hidden-size", num(model.ffnHidden));
    if (model.gatedMlp)
        add("--swiglu");
    if (!model.tiedEmbeddings)
        add("--untie-embeddings-and-output-weights");
    add("--seq-length", num(in.sequence));
    // Megatron-LM requires it, and it must cover the sequence.
    add("--max-position-embeddings", num(in.sequence));
    if (model.experts > 0) {
        const std::int64_t expertFfn = core::expertFfnHiddenOf(model);
        add("--num-experts", num(model.experts));
        add("--moe-router-topk", num(model.topK));
        add("--moe-ffn-hidden-size", num(expertFfn));
        if (model.sharedExperts > 0)
            add("--moe-shared-expert-intermediate-size", num(model.sharedExperts * expertFfn));
        if (model.denseLayers > 0)
            add("--moe-layer-freq",
                QString("\"([0]*%1+[1]*%2)\"")
                    .arg(model.denseLayers)
                    .arg(model.layers - model.denseLayers));
    }
}

/// The layout over the GPUs, recomputation, the optimizer and the batch.
void addLayoutArguments(const core::PlanInputs& in, Arguments& args)
{
    const std::int64_t t = in.tensorParallel;
    const std::int64_t p = in.pipelineParallel;
    const std::int64_t v = in.virtualStages;
    const auto add = [&args](const QString& flag, const QString& value = {}) {
        args.emplace_back(flag, value);
    };
    add("--tensor-model-parallel-size", num(t));
    add("--pipeline-model-parallel-size", num(p));
    if (v > 1)
        add("--num-layers-per-virtual-pipeline-stage", num(in.model.layers / (p * v)));
    if (in.model.experts > 0)
        add("--expert-model-parallel-size", num(in.expertParallel));
    // With one tensor-parallel rank there is nothing to split; Megatron-LM drops the flag.
    if (in.sequenceParallel && t > 1)
        add("--sequence-parallel");
    if (in.recompute == core::Recompute::Selective) {
        add("--recompute-granularity", "selective");
    } else if (in.recompute == core::Recompute::Full) {
        add("--recompute-granularity", "full");
        add("--recompute-method", "uniform");
        add("--recompute-num-layers", "1");
    }
    // Megatron-LM's distributed optimizer shards the optimizer state over the data-parallel
    // ranks: ZeRO-1 (and it reduce-scatters the gradients, as ZeRO-2 does).
    if (in.zeroStage >= 1)
        add("--use-distributed-optimizer");
    if (in.weightBytes == 2)
        add("--bf16");
    add("--micro-batch-size", num(in.microBatch));
    add("--global-batch-size", num(in.globalBatch));
}

} // namespace

QString megatronArguments(const core::PlanInputs& in)
{
    core::validate(in);
    requireWeightFormat(in, "Megatron-LM");
    requireMegatronLayout(in);
    Arguments args;
    addModelArguments(in, args);
    addLayoutArguments(in, args);
    QStringList lines;
    for (const auto& [flag, value] : args)
        lines << (value.isEmpty() ? flag : flag + ' ' + value);
    return lines.join(" \\\n") + '\n';
}

} // namespace scalelab::document
