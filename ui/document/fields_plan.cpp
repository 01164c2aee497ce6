// The training plan's inputs: the model's shape, the batch, the layout over the GPUs and the memory.

#include "fields.h"

#include <QtGlobal>
#include <algorithm>

namespace scalelab::document::detail {

using core::Scenario;

void addPlanFields(std::vector<Field>& out)
{
    constexpr auto S = core::Section::Plan;
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::model, &core::ModelShape::layers>(numberField(S, "plan.model.layers", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Layers"), "L", QT_TRANSLATE_NOOP("Field", "layers"),
            QT_TRANSLATE_NOOP("Field", "Transformer layers."), 1, 200));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::model, &core::ModelShape::hidden>(numberField(S, "plan.model.hidden", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Hidden size"), "h", QT_TRANSLATE_NOOP("Field", "values"),
            QT_TRANSLATE_NOOP("Field", "Width of the residual stream."), 64, 65536, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::model, &core::ModelShape::heads>(numberField(S, "plan.model.heads", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Attention heads"), "a", QT_TRANSLATE_NOOP("Field", "heads"),
            QT_TRANSLATE_NOOP("Field", "Query heads; they must divide the hidden size."), 1, 256));
        out.push_back(std::move(f));
    }
    {
        // Absent, it follows the query heads; the control then shows the heads.
        Field f = numberField(S, "plan.model.kv_heads", FieldKind::Whole,
            QT_TRANSLATE_NOOP("Field", "&Key/value heads"), {}, QT_TRANSLATE_NOOP("Field", "heads"),
            QT_TRANSLATE_NOOP("Field", "Key/value heads; fewer than the query heads is grouped-query attention. Follows the heads until you set it."), 1, 256);
        f.get = [](const Scenario& s) { return static_cast<double>(core::kvHeadsOf(s.plan.model)); };
        f.set = [](Scenario& s, double v) { s.plan.model.kvHeads = std::llround(v); };
        f.isSet = [](const Scenario& s) { return s.plan.model.kvHeads.has_value(); };
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::model, &core::ModelShape::ffnHidden>(numberField(S, "plan.model.ffn_hidden", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&MLP width"), "f", QT_TRANSLATE_NOOP("Field", "values"),
            QT_TRANSLATE_NOOP("Field", "Hidden width of the dense MLP (4h in GPT-3)."), 64, 262144, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::model, &core::ModelShape::vocab>(numberField(S, "plan.model.vocab", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Vocabulary"), "v", QT_TRANSLATE_NOOP("Field", "tokens"),
            QT_TRANSLATE_NOOP("Field", "Tokens in the vocabulary: the embedding is vocabulary x hidden."), 1000, 1048576, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::model, &core::ModelShape::gatedMlp>(flagField(S, "plan.model.gated_mlp", QT_TRANSLATE_NOOP("Field", "&Gated MLP (SwiGLU: three matrices)"), QT_TRANSLATE_NOOP("Field", "Three MLP matrices (SwiGLU) when on, two when off.")));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::model, &core::ModelShape::tiedEmbeddings>(flagField(S, "plan.model.tied_embeddings", QT_TRANSLATE_NOOP("Field", "T&ied embeddings"), QT_TRANSLATE_NOOP("Field", "One vocabulary x hidden matrix for input and output.")));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::model, &core::ModelShape::experts>(numberField(S, "plan.model.experts", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "E&xperts"), "E", QT_TRANSLATE_NOOP("Field", "experts"),
            QT_TRANSLATE_NOOP("Field", "Routed experts per MoE layer; 0 for a dense model."), 0, 512));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::model, &core::ModelShape::topK>(numberField(S, "plan.model.top_k", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Top-k"), "k", QT_TRANSLATE_NOOP("Field", "experts"),
            QT_TRANSLATE_NOOP("Field", "Routed experts each token is sent to."), 1, 64));
        out.push_back(std::move(f));
    }
    {
        // Absent, it follows the MLP width; the control then shows that width.
        Field f = numberField(S, "plan.model.expert_ffn_hidden", FieldKind::Whole,
            QT_TRANSLATE_NOOP("Field", "Expert &width"), {}, QT_TRANSLATE_NOOP("Field", "values"),
            QT_TRANSLATE_NOOP("Field", "MLP width of each expert; follows the MLP width until you set it."), 64, 65536, true);
        f.get = [](const Scenario& s) { return static_cast<double>(core::expertFfnHiddenOf(s.plan.model)); };
        f.set = [](Scenario& s, double v) { s.plan.model.expertFfnHidden = std::llround(v); };
        f.isSet = [](const Scenario& s) { return s.plan.model.expertFfnHidden.has_value(); };
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::model, &core::ModelShape::sharedExperts>(numberField(S, "plan.model.shared_experts", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Shared experts"), {}, QT_TRANSLATE_NOOP("Field", "experts"),
            QT_TRANSLATE_NOOP("Field", "Experts every token passes through."), 0, 16));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::model, &core::ModelShape::denseLayers>(numberField(S, "plan.model.dense_layers", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Dense layers first"), {}, QT_TRANSLATE_NOOP("Field", "layers"),
            QT_TRANSLATE_NOOP("Field", "Leading layers that keep a dense MLP."), 0, 200));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::sequence>(numberField(S, "plan.sequence", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "Se&quence length"), "s", QT_TRANSLATE_NOOP("Field", "tokens"),
            QT_TRANSLATE_NOOP("Field", "Tokens per sequence."), 1, 1048576, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::microBatch>(numberField(S, "plan.micro_batch", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Micro batch"), "b", QT_TRANSLATE_NOOP("Field", "sequences"),
            QT_TRANSLATE_NOOP("Field", "Sequences one GPU runs through the model at a time."), 1, 1024, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::globalBatch>(numberField(S, "plan.global_batch", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Global batch"), "B", QT_TRANSLATE_NOOP("Field", "sequences"),
            QT_TRANSLATE_NOOP("Field", "Sequences per optimizer step: micro batch x data-parallel size x microbatches m; it must divide evenly."), 1, 1048576, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::gpus>(numberField(S, "plan.gpus", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "G&PUs"), "N", QT_TRANSLATE_NOOP("Field", "GPUs"),
            QT_TRANSLATE_NOOP("Field", "GPUs in the run: data-parallel size d = GPUs / (t x p)."), 1, 131072, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::tensorParallel>(numberField(S, "plan.tensor_parallel", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Tensor parallel"), "t", QT_TRANSLATE_NOOP("Field", "GPUs"),
            QT_TRANSLATE_NOOP("Field", "GPUs that split every layer's matrices; must divide the heads."), 1, 64));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::pipelineParallel>(numberField(S, "plan.pipeline_parallel", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "Pipeline &stages"), "p", QT_TRANSLATE_NOOP("Field", "stages"),
            QT_TRANSLATE_NOOP("Field", "Pipeline stages the layers are cut into, one GPU of each per model copy."), 1, 128));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::virtualStages>(numberField(S, "plan.virtual_stages", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Virtual stages"), "v", QT_TRANSLATE_NOOP("Field", "chunks / stage"),
            QT_TRANSLATE_NOOP("Field", "Model chunks per pipeline stage (the interleaved schedule when more than 1): a smaller bubble, more activations in flight."), 1, 16));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::expertParallel>(numberField(S, "plan.expert_parallel", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "E&xpert parallel"), "ep", QT_TRANSLATE_NOOP("Field", "GPUs"),
            QT_TRANSLATE_NOOP("Field", "Data-parallel GPUs the routed experts are spread over; divides both d and the expert count."), 1, 256));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::sequenceParallel>(flagField(S, "plan.sequence_parallel", QT_TRANSLATE_NOOP("Field", "Se&quence parallel"), QT_TRANSLATE_NOOP("Field", "Split the layer norms and dropouts along the sequence over the tensor-parallel GPUs.")));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::recompute>(choiceField(S, "plan.recompute", QT_TRANSLATE_NOOP("Field", "&Recompute"), QT_TRANSLATE_NOOP("Field", "Which activations are recomputed in the backward pass instead of kept."),
            {"none", "selective", "full"},
            {QT_TRANSLATE_NOOP("Field", "None: keep every activation"), QT_TRANSLATE_NOOP("Field", "Selective: recompute attention"), QT_TRANSLATE_NOOP("Field", "Full: keep only layer inputs")}));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::zeroStage>(numberField(S, "plan.zero_stage", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&ZeRO stage"), {}, "",
            QT_TRANSLATE_NOOP("Field", "What the data-parallel GPUs shard: 0 nothing, 1 optimizer state, 2 also gradients, 3 also weights."), 0, 3));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::weightBytes>(numberField(S, "plan.weight_bytes", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Weights"), "w", QT_TRANSLATE_NOOP("Field", "bytes / parameter"),
            QT_TRANSLATE_NOOP("Field", "Bytes of each working weight (bf16: 2)."), 0, 16));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::gradBytes>(numberField(S, "plan.grad_bytes", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "Gra&dients"), "g", QT_TRANSLATE_NOOP("Field", "bytes / parameter"),
            QT_TRANSLATE_NOOP("Field", "Bytes of each gradient (bf16: 2)."), 0, 16));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::optimizerBytes>(numberField(S, "plan.optimizer_bytes", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Optimizer state"), "o", QT_TRANSLATE_NOOP("Field", "bytes / parameter"),
            QT_TRANSLATE_NOOP("Field", "Master weights and both Adam moments (4 + 4 + 4 = 12 in fp32)."), 0, 32));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::plan, &core::PlanInputs::gpuMemoryGib>(numberField(S, "plan.gpu_memory_gib", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "&Capacity"), {}, QT_TRANSLATE_NOOP("Field", "GiB"),
            QT_TRANSLATE_NOOP("Field", "Memory of one GPU in GiB (2^30 bytes), the unit the plan compares against. GPUs sold as \"80 GB\" report about 80 GiB, so the plan's line is theirs."), 1, 1024));
        out.push_back(std::move(f));
    }
}

void normalizePlan(const core::Scenario&, core::Scenario&, const Field*) {}

} // namespace scalelab::document::detail
