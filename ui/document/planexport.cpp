#include "planexport.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
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

/// Megatron-LM's flags in order, each with its value ("" for a switch).
using Arguments = std::vector<std::pair<QString, QString>>;

void add(Arguments& args, const QString& flag, const QString& value = {})
{
    args.emplace_back(flag, value);
}

/// Throws what Megatron-LM refuses at start-up, with the field to change.
void requireMegatronLayout(const core::PlanInputs& in)
{
    const std::int64_t layers = in.model.layers;
    const std::int64_t t = in.tensorParallel;
    const std::int64_t p = in.pipelineParallel;
    const std::int64_t v = in.virtualStages;
    const std::int64_t kv = core::kvHeadsOf(in.model);
    if (layers % p != 0)
        throw InputError("plan.pipeline_parallel",
                         "a divisor of layers for Megatron-LM, which gives every pipeline stage "
                         "the same number of layers: "
                             + str(layers) + " layers do not split into " + str(p) + " stages");
    if (v > 1) {
        const std::int64_t m = core::computePlan(in).microbatches;
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
    if (in.model.experts > 0 && in.expertParallel > 1 && t > 1 && !in.sequenceParallel)
        throw InputError("plan.sequence_parallel",
                         "true when expert and tensor parallelism are combined: Megatron-LM "
                         "refuses that pair without sequence parallelism");
}

/// The model's shape and the sequence.
void addShapeArguments(Arguments& args, const core::PlanInputs& in)
{
    const core::ModelShape& model = in.model;
    const std::int64_t kv = core::kvHeadsOf(model);
    add(args, "--num-layers", num(model.layers));
    add(args, "--hidden-size", num(model.hidden));
    add(args, "--num-attention-heads", num(model.heads));
    if (kv < model.heads) {
        add(args, "--group-query-attention");
        add(args, "--num-query-groups", num(kv));
    }
    add(args, "--ffn-hidden-size", num(model.ffnHidden));
    if (model.gatedMlp)
        add(args, "--swiglu");
    if (!model.tiedEmbeddings)
        add(args, "--untie-embeddings-and-output-weights");
    add(args, "--seq-length", num(in.sequence));
    // Megatron-LM requires it, and it must cover the sequence.
    add(args, "--max-position-embeddings", num(in.sequence));
}

/// The mixture of experts, for a model with experts.
void addExpertArguments(Arguments& args, const core::ModelShape& model)
{
    if (model.experts <= 0)
        return;
    const std::int64_t expertFfn = core::expertFfnHiddenOf(model);
    add(args, "--num-experts", num(model.experts));
    add(args, "--moe-router-topk", num(model.topK));
    add(args, "--moe-ffn-hidden-size", num(expertFfn));
    if (model.sharedExperts > 0)
        add(args, "--moe-shared-expert-intermediate-size", num(model.sharedExperts * expertFfn));
    if (model.denseLayers > 0)
        add(args, "--moe-layer-freq",
            QString("\"([0]*%1+[1]*%2)\"")
                .arg(model.denseLayers)
                .arg(model.layers - model.denseLayers));
}

/// The tensor, pipeline, virtual-pipeline and expert sizes and sequence parallelism.
void addParallelArguments(Arguments& args, const core::PlanInputs& in)
{
    const std::int64_t t = in.tensorParallel;
    const std::int64_t p = in.pipelineParallel;
    const std::int64_t v = in.virtualStages;
    add(args, "--tensor-model-parallel-size", num(t));
    add(args, "--pipeline-model-parallel-size", num(p));
    if (v > 1)
        add(args, "--num-layers-per-virtual-pipeline-stage", num(in.model.layers / (p * v)));
    if (in.model.experts > 0)
        add(args, "--expert-model-parallel-size", num(in.expertParallel));
    // With one tensor-parallel rank there is nothing to split; Megatron-LM drops the flag.
    if (in.sequenceParallel && t > 1)
        add(args, "--sequence-parallel");
}

/// Recomputation, the optimizer's sharding, the number format and the batch.
void addTrainingArguments(Arguments& args, const core::PlanInputs& in)
{
    if (in.recompute == core::Recompute::Selective) {
        add(args, "--recompute-granularity", "selective");
    } else if (in.recompute == core::Recompute::Full) {
        add(args, "--recompute-granularity", "full");
        add(args, "--recompute-method", "uniform");
        add(args, "--recompute-num-layers", "1");
    }
    // Megatron-LM's distributed optimizer shards the optimizer state over the data-parallel
    // ranks: ZeRO-1 (and it reduce-scatters the gradients, as ZeRO-2 does).
    if (in.zeroStage >= 1)
        add(args, "--use-distributed-optimizer");
    if (in.weightBytes == 2)
        add(args, "--bf16");
    add(args, "--micro-batch-size", num(in.microBatch));
    add(args, "--global-batch-size", num(in.globalBatch));
}

} // namespace

QString megatronArguments(const core::PlanInputs& in)
{
    core::validate(in);
    requireWeightFormat(in, "Megatron-LM");
    requireMegatronLayout(in);
    Arguments args;
    addShapeArguments(args, in);
    addExpertArguments(args, in.model);
    addParallelArguments(args, in);
    addTrainingArguments(args, in);
    QStringList lines;
    for (const auto& [flag, value] : args)
        lines << (value.isEmpty() ? flag : flag + ' ' + value);
    return lines.join(" \\\n") + '\n';
}

QString writeWhole(const QString& path, const QByteArray& bytes)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit())
        return QCoreApplication::translate("PlanExport", "cannot write %1: %2")
            .arg(path, file.errorString());
    return {};
}

QString savePlan(const core::PlanInputs& in, PlanFormat format, const QString& path)
{
    QByteArray bytes;
    try {
        bytes =
            format == PlanFormat::DeepSpeed ? deepSpeedConfig(in) : megatronArguments(in).toUtf8();
    } catch (const core::InputError& e) {
        return QString::fromStdString(e.what());
    }
    return writeWhole(path, bytes);
}

} // namespace scalelab::document
