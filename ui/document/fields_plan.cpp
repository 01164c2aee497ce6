// The training plan's inputs: the model's shape, the batch, the layout over the GPUs and the
// memory recipe. Two keys may be absent (kv_heads, expert_ffn_hidden): their controls then show
// what they follow (the heads, the MLP width) until the user sets them.

#include "fields.h"

#include <QtGlobal>

namespace scalelab::document::detail {

namespace {

using core::HardwareInputs;
using core::ModelShape;
using core::PlanInputs;
using core::Scenario;

constexpr auto S = core::Section::Plan;
constexpr auto W = FieldKind::Whole;

/// `f` bound to the model-shape member `Member` of the plan.
template <auto Member> Field shapeField(Field f)
{
    return bound<&Scenario::plan, &PlanInputs::model, Member>(std::move(f));
}

/// `f` bound to the plan member `Member`.
template <auto Member> Field planField(Field f)
{
    return bound<&Scenario::plan, Member>(std::move(f));
}

void addShapeFields(std::vector<Field>& out)
{
    out.push_back(shapeField<&ModelShape::layers>(
        numberField(S, "plan.model.layers", W, QT_TRANSLATE_NOOP("Field", "&Layers"), "L",
                    QT_TRANSLATE_NOOP("Field", "layers"),
                    QT_TRANSLATE_NOOP("Field", "Transformer layers."), 1, 200)));
    out.push_back(shapeField<&ModelShape::hidden>(
        numberField(S, "plan.model.hidden", W, QT_TRANSLATE_NOOP("Field", "&Hidden size"), "h",
                    QT_TRANSLATE_NOOP("Field", "values"),
                    QT_TRANSLATE_NOOP("Field", "Width of the residual stream."), 64, 65536, true)));
    out.push_back(shapeField<&ModelShape::heads>(numberField(
        S, "plan.model.heads", W, QT_TRANSLATE_NOOP("Field", "&Attention heads"), "a",
        QT_TRANSLATE_NOOP("Field", "heads"),
        QT_TRANSLATE_NOOP("Field", "Query heads; they must divide the hidden size."), 1, 256)));
    // Absent, it follows the query heads; the control then shows the heads.
    Field kv =
        numberField(S, "plan.model.kv_heads", W, QT_TRANSLATE_NOOP("Field", "&Key/value heads"), {},
                    QT_TRANSLATE_NOOP("Field", "heads"),
                    QT_TRANSLATE_NOOP("Field",
                                      "Key/value heads; fewer than the query heads "
                                      "is grouped-query attention. Follows the "
                                      "heads until you set it."),
                    1, 256);
    kv.get = [](const Scenario& s) {
        return static_cast<double>(core::kvHeadsOf(s.plan.model));
    };
    kv.set = [](Scenario& s, double v) {
        s.plan.model.kvHeads = std::llround(v);
    };
    kv.isSet = [](const Scenario& s) {
        return s.plan.model.kvHeads.has_value();
    };
    out.push_back(std::move(kv));
    out.push_back(shapeField<&ModelShape::ffnHidden>(
        numberField(S, "plan.model.ffn_hidden", W, QT_TRANSLATE_NOOP("Field", "&MLP width"), "f",
                    QT_TRANSLATE_NOOP("Field", "values"),
                    QT_TRANSLATE_NOOP("Field", "Hidden width of the dense MLP (4h in GPT-3)."), 64,
                    262144, true)));
    out.push_back(shapeField<&ModelShape::vocab>(
        numberField(S, "plan.model.vocab", W, QT_TRANSLATE_NOOP("Field", "&Vocabulary"), "v",
                    QT_TRANSLATE_NOOP("Field", "tokens"),
                    QT_TRANSLATE_NOOP(
                        "Field", "Tokens in the vocabulary: the embedding is vocabulary x hidden."),
                    1000, 1048576, true)));
    out.push_back(shapeField<&ModelShape::gatedMlp>(flagField(
        S, "plan.model.gated_mlp",
        QT_TRANSLATE_NOOP("Field", "&Gated MLP (SwiGLU: three matrices)"),
        QT_TRANSLATE_NOOP("Field", "Three MLP matrices (SwiGLU) when on, two when off."))));
    out.push_back(shapeField<&ModelShape::tiedEmbeddings>(flagField(
        S, "plan.model.tied_embeddings",
        QT_TRANSLATE_NOOP("Field", "&Tied embeddings (one matrix in and out)"),
        QT_TRANSLATE_NOOP("Field", "One vocabulary x hidden matrix for input and output."))));
}

void addExpertFields(std::vector<Field>& out)
{
    out.push_back(shapeField<&ModelShape::experts>(numberField(
        S, "plan.model.experts", W, QT_TRANSLATE_NOOP("Field", "E&xperts"), "E",
        QT_TRANSLATE_NOOP("Field", "experts"),
        QT_TRANSLATE_NOOP("Field", "Routed experts per MoE layer; 0 for a dense model."), 0, 512)));
    out.push_back(shapeField<&ModelShape::topK>(
        numberField(S, "plan.model.top_k", W, QT_TRANSLATE_NOOP("Field", "&Top-k"), "k",
                    QT_TRANSLATE_NOOP("Field", "experts"),
                    QT_TRANSLATE_NOOP("Field", "Routed experts each token is sent to."), 1, 64)));
    // Absent, it follows the MLP width; the control then shows that width.
    Field width = numberField(S, "plan.model.expert_ffn_hidden", W,
                              QT_TRANSLATE_NOOP("Field", "Expert &width"), {},
                              QT_TRANSLATE_NOOP("Field", "values"),
                              QT_TRANSLATE_NOOP("Field",
                                                "MLP width of each expert; follows the "
                                                "MLP width until you set it."),
                              64, 65536, true);
    width.get = [](const Scenario& s) {
        return static_cast<double>(core::expertFfnHiddenOf(s.plan.model));
    };
    width.set = [](Scenario& s, double v) {
        s.plan.model.expertFfnHidden = std::llround(v);
    };
    width.isSet = [](const Scenario& s) {
        return s.plan.model.expertFfnHidden.has_value();
    };
    out.push_back(std::move(width));
    out.push_back(shapeField<&ModelShape::sharedExperts>(numberField(
        S, "plan.model.shared_experts", W, QT_TRANSLATE_NOOP("Field", "&Shared experts"), {},
        QT_TRANSLATE_NOOP("Field", "experts"),
        QT_TRANSLATE_NOOP("Field", "Experts every token passes through."), 0, 16)));
    out.push_back(shapeField<&ModelShape::denseLayers>(numberField(
        S, "plan.model.dense_layers", W, QT_TRANSLATE_NOOP("Field", "&Dense layers first"), {},
        QT_TRANSLATE_NOOP("Field", "layers"),
        QT_TRANSLATE_NOOP("Field", "Leading layers that keep a dense MLP."), 0, 200)));
}

void addBatchFields(std::vector<Field>& out)
{
    out.push_back(planField<&PlanInputs::sequence>(
        numberField(S, "plan.sequence", W, QT_TRANSLATE_NOOP("Field", "Se&quence length"), "s",
                    QT_TRANSLATE_NOOP("Field", "tokens"),
                    QT_TRANSLATE_NOOP("Field", "Tokens per sequence."), 1, 1048576, true)));
    out.push_back(planField<&PlanInputs::microBatch>(numberField(
        S, "plan.micro_batch", W, QT_TRANSLATE_NOOP("Field", "&Micro batch"), "b",
        QT_TRANSLATE_NOOP("Field", "sequences"),
        QT_TRANSLATE_NOOP("Field", "Sequences one GPU runs through the model at a time."), 1, 1024,
        true)));
    out.push_back(planField<&PlanInputs::globalBatch>(
        numberField(S, "plan.global_batch", W, QT_TRANSLATE_NOOP("Field", "&Global batch"), "B",
                    QT_TRANSLATE_NOOP("Field", "sequences"),
                    QT_TRANSLATE_NOOP("Field",
                                      "Sequences per optimizer step: micro batch x data-parallel "
                                      "size x microbatches m; it must divide evenly."),
                    1, 1048576, true)));
}

void addAxisFields(std::vector<Field>& out)
{
    out.push_back(planField<&PlanInputs::gpus>(numberField(
        S, "plan.gpus", W, QT_TRANSLATE_NOOP("Field", "G&PUs"), "N",
        QT_TRANSLATE_NOOP("Field", "GPUs"),
        QT_TRANSLATE_NOOP("Field", "GPUs in the run: data-parallel size d = GPUs / (t x p)."), 1,
        131072, true)));
    out.push_back(planField<&PlanInputs::tensorParallel>(
        numberField(S, "plan.tensor_parallel", W, QT_TRANSLATE_NOOP("Field", "&Tensor parallel"),
                    "t", QT_TRANSLATE_NOOP("Field", "GPUs"),
                    QT_TRANSLATE_NOOP(
                        "Field", "GPUs that split every layer's matrices; must divide the heads."),
                    1, 64)));
    out.push_back(planField<&PlanInputs::pipelineParallel>(numberField(
        S, "plan.pipeline_parallel", W, QT_TRANSLATE_NOOP("Field", "Pipeline &stages"), "p",
        QT_TRANSLATE_NOOP("Field", "stages"),
        QT_TRANSLATE_NOOP("Field",
                          "Pipeline stages the layers are cut into, one GPU of each per "
                          "model copy."),
        1, 128)));
    out.push_back(planField<&PlanInputs::virtualStages>(numberField(
        S, "plan.virtual_stages", W, QT_TRANSLATE_NOOP("Field", "&Virtual stages"), "v",
        QT_TRANSLATE_NOOP("Field", "chunks / stage"),
        QT_TRANSLATE_NOOP("Field",
                          "Model chunks per pipeline stage (the interleaved schedule when "
                          "more than 1): a smaller bubble, more activations in flight."),
        1, 16)));
    out.push_back(planField<&PlanInputs::expertParallel>(
        numberField(S, "plan.expert_parallel", W, QT_TRANSLATE_NOOP("Field", "E&xpert parallel"),
                    "ep", QT_TRANSLATE_NOOP("Field", "GPUs"),
                    QT_TRANSLATE_NOOP("Field",
                                      "Data-parallel GPUs the routed experts are spread over; "
                                      "divides both d and the expert count."),
                    1, 256)));
}

void addLayoutChoiceFields(std::vector<Field>& out)
{
    out.push_back(planField<&PlanInputs::sequenceParallel>(
        flagField(S, "plan.sequence_parallel", QT_TRANSLATE_NOOP("Field", "Se&quence parallelism"),
                  QT_TRANSLATE_NOOP("Field",
                                    "Splits the layer norms and dropouts, which tensor "
                                    "parallelism leaves whole, over the t GPUs along the "
                                    "sequence."))));
    out.push_back(planField<&PlanInputs::recompute>(
        choiceField(S, "plan.recompute", QT_TRANSLATE_NOOP("Field", "&Recompute"),
                    QT_TRANSLATE_NOOP("Field",
                                      "Which activations are recomputed in the backward pass "
                                      "instead of kept."),
                    {"none", "selective", "full"},
                    {QT_TRANSLATE_NOOP("Field", "none: keep every activation"),
                     QT_TRANSLATE_NOOP("Field", "selective: recompute attention scores"),
                     QT_TRANSLATE_NOOP("Field", "full: keep layer inputs only")})));
    // A whole number in the file; the tab shows it as a combo box of the four stages.
    out.push_back(planField<&PlanInputs::zeroStage>(
        numberField(S, "plan.zero_stage", W, QT_TRANSLATE_NOOP("Field", "&ZeRO stage"), {}, "",
                    QT_TRANSLATE_NOOP("Field",
                                      "What the data-parallel GPUs shard: 0 nothing, 1 optimizer "
                                      "state, 2 also gradients, 3 also weights."),
                    0, 3)));
}

void addMemoryRecipeFields(std::vector<Field>& out)
{
    const char* perParameter = QT_TRANSLATE_NOOP("Field", "bytes / parameter");
    out.push_back(planField<&PlanInputs::weightBytes>(numberField(
        S, "plan.weight_bytes", W, QT_TRANSLATE_NOOP("Field", "&Weights"), "w", perParameter,
        QT_TRANSLATE_NOOP("Field", "Bytes of each working weight (bf16: 2)."), 0, 16)));
    out.push_back(planField<&PlanInputs::gradBytes>(numberField(
        S, "plan.grad_bytes", W, QT_TRANSLATE_NOOP("Field", "Gra&dients"), "g", perParameter,
        QT_TRANSLATE_NOOP("Field", "Bytes of each gradient (bf16: 2)."), 0, 16)));
    out.push_back(planField<&PlanInputs::optimizerBytes>(
        numberField(S, "plan.optimizer_bytes", W, QT_TRANSLATE_NOOP("Field", "&Optimizer state"),
                    "o", perParameter,
                    QT_TRANSLATE_NOOP(
                        "Field", "Master weights and both Adam moments (4 + 4 + 4 = 12 in fp32)."),
                    0, 32)));
    // Shown to one decimal; a file's finer value is kept exactly until the control is moved.
    Field memory = planField<&PlanInputs::gpuMemoryGib>(
        numberField(S, "plan.gpu_memory_gib", FieldKind::Number,
                    QT_TRANSLATE_NOOP("Field", "&Capacity"), {}, QT_TRANSLATE_NOOP("Field", "GiB"),
                    QT_TRANSLATE_NOOP("Field",
                                      "Memory of one GPU in GiB (2^30 bytes), the unit the plan "
                                      "compares against. GPUs sold as \"80 GB\" report about 80 "
                                      "GiB, so the plan's line is theirs."),
                    1, 1024));
    memory.decimals = 1;
    out.push_back(std::move(memory));
}

/// `f` bound to the hardware member `Member` of the plan.
template <auto Member> Field hardwareField(Field f)
{
    return bound<&Scenario::plan, &PlanInputs::hardware, Member>(std::move(f));
}

void addHardwareChoiceFields(std::vector<Field>& out)
{
    out.push_back(hardwareField<&HardwareInputs::gpu>(choiceField(
        S, "plan.hardware.gpu", QT_TRANSLATE_NOOP("Field", "&GPU"),
        QT_TRANSLATE_NOOP("Field",
                          "The GPU type for the step time: its peak dense FLOP/s from NVIDIA's "
                          "datasheet. The memory check keeps using the capacity above."),
        {"a100_40gb", "a100_80gb", "h100_80gb", "h200_141gb"},
        {QT_TRANSLATE_NOOP("Field", "A100 40GB (312 TFLOP/s BF16)"),
         QT_TRANSLATE_NOOP("Field", "A100 80GB (312 TFLOP/s BF16)"),
         QT_TRANSLATE_NOOP("Field", "H100 80GB (989 TFLOP/s BF16)"),
         QT_TRANSLATE_NOOP("Field", "H200 141GB (989 TFLOP/s BF16)")})));
    out.push_back(hardwareField<&HardwareInputs::precision>(choiceField(
        S, "plan.hardware.precision", QT_TRANSLATE_NOOP("Field", "Prec&ision"),
        QT_TRANSLATE_NOOP("Field",
                          "The number format of the matrix multiplies, which picks "
                          "the peak: FP8 doubles it on H100 and H200; an A100 has "
                          "no FP8."),
        {"bf16", "fp8"}, {QT_TRANSLATE_NOOP("Field", "BF16"), QT_TRANSLATE_NOOP("Field", "FP8")})));
    out.push_back(hardwareField<&HardwareInputs::gpusPerNode>(numberField(
        S, "plan.hardware.gpus_per_node", W, QT_TRANSLATE_NOOP("Field", "GPUs per &node"), {},
        QT_TRANSLATE_NOOP("Field", "GPUs"),
        QT_TRANSLATE_NOOP("Field",
                          "GPUs joined by NVLink in one server; a group spanning more uses "
                          "InfiniBand."),
        1, 72)));
}

void addHardwareLinkFields(std::vector<Field>& out)
{
    const char* gbs = QT_TRANSLATE_NOOP("Field", "GB/s");
    const char* us = QT_TRANSLATE_NOOP("Field", "\u00b5s");
    const auto number = FieldKind::Number;
    out.push_back(hardwareField<&HardwareInputs::nvlinkBandwidthGBs>(
        numberField(S, "plan.hardware.nvlink_bandwidth", number,
                    QT_TRANSLATE_NOOP("Field", "NVLink bandwidth"), {}, gbs,
                    QT_TRANSLATE_NOOP("Field",
                                      "What one GPU sends per second inside a node, one "
                                      "direction (H100 NVLink 4: 450; A100 NVLink 3: 300)."),
                    1, 2000, true)));
    out.push_back(hardwareField<&HardwareInputs::nvlinkLatencyUs>(numberField(
        S, "plan.hardware.nvlink_latency", number, QT_TRANSLATE_NOOP("Field", "NVLink latency"), {},
        us, QT_TRANSLATE_NOOP("Field", "Time per message inside a node (alpha)."), 0, 100)));
    out.push_back(hardwareField<&HardwareInputs::ibBandwidthGBs>(
        numberField(S, "plan.hardware.ib_bandwidth", number,
                    QT_TRANSLATE_NOOP("Field", "InfiniBand bandwidth"), {}, gbs,
                    QT_TRANSLATE_NOOP("Field",
                                      "What one GPU sends per second to other nodes (a 400 Gb/s "
                                      "NIC per GPU: 50)."),
                    1, 1000, true)));
    out.push_back(hardwareField<&HardwareInputs::ibLatencyUs>(numberField(
        S, "plan.hardware.ib_latency", number, QT_TRANSLATE_NOOP("Field", "InfiniBand latency"), {},
        us, QT_TRANSLATE_NOOP("Field", "Time per message between nodes (alpha)."), 0, 1000)));
    out.push_back(hardwareField<&HardwareInputs::dpOverlap>(numberField(
        S, "plan.hardware.dp_overlap", number, QT_TRANSLATE_NOOP("Field", "Data-parallel overlap"),
        {}, "",
        QT_TRANSLATE_NOOP("Field",
                          "Fraction of the data-parallel and ZeRO collectives hidden behind "
                          "the backward pass (at most its length)."),
        0, 1)));
    out.push_back(planField<&PlanInputs::trainTokens>(
        numberField(S, "plan.train_tokens", number, QT_TRANSLATE_NOOP("Field", "Training tokens"),
                    {}, QT_TRANSLATE_NOOP("Field", "tokens"),
                    QT_TRANSLATE_NOOP("Field", "Tokens of the whole run, for the days to train."),
                    1e9, 1e14, true)));
}

/// A check box that holds one layout key at the plan's own value in the layout search.
template <auto Member> Field keepFlag(const char* key, const char* label)
{
    Field f = bound<&Scenario::plan, &PlanInputs::searchKeep, Member>(flagField(
        S, key, label,
        QT_TRANSLATE_NOOP("Field",
                          "When checked, the layout search tries only layouts with this plan's "
                          "own value of this key: search within what your framework or "
                          "cluster runs.")));
    // Written only when checked: a file that keeps nothing has no search_keep object.
    f.isSet = [](const Scenario& s) {
        return s.plan.searchKeep.*Member;
    };
    return f;
}

void addSearchKeepFields(std::vector<Field>& out)
{
    // No mnemonics: the layout's own controls above hold those letters.
    out.push_back(keepFlag<&core::SearchKeep::tensorParallel>(
        "plan.search_keep.tensor_parallel", QT_TRANSLATE_NOOP("Field", "Tensor parallel t")));
    out.push_back(keepFlag<&core::SearchKeep::pipelineParallel>(
        "plan.search_keep.pipeline_parallel", QT_TRANSLATE_NOOP("Field", "Pipeline stages p")));
    out.push_back(keepFlag<&core::SearchKeep::virtualStages>(
        "plan.search_keep.virtual_stages", QT_TRANSLATE_NOOP("Field", "Virtual stages v")));
    out.push_back(keepFlag<&core::SearchKeep::dataParallel>(
        "plan.search_keep.data_parallel", QT_TRANSLATE_NOOP("Field", "Data parallel d")));
    out.push_back(keepFlag<&core::SearchKeep::expertParallel>(
        "plan.search_keep.expert_parallel", QT_TRANSLATE_NOOP("Field", "Expert parallel ep")));
    out.push_back(keepFlag<&core::SearchKeep::microBatch>(
        "plan.search_keep.micro_batch", QT_TRANSLATE_NOOP("Field", "Micro-batch")));
    out.push_back(keepFlag<&core::SearchKeep::zeroStage>("plan.search_keep.zero_stage",
                                                         QT_TRANSLATE_NOOP("Field", "ZeRO stage")));
    out.push_back(keepFlag<&core::SearchKeep::sequenceParallel>(
        "plan.search_keep.sequence_parallel", QT_TRANSLATE_NOOP("Field", "Sequence parallelism")));
    out.push_back(keepFlag<&core::SearchKeep::recompute>(
        "plan.search_keep.recompute", QT_TRANSLATE_NOOP("Field", "Recomputation")));
}

/// Which view the tab shows (display only).
Field partField()
{
    return bound<&Scenario::planDisplay, &core::PlanDisplay::part>(choiceField(
        S, "plan.part", QT_TRANSLATE_NOOP("Field", "Sho&w"),
        QT_TRANSLATE_NOOP("Field",
                          "What the charts show: the memory and traffic of the plan's own "
                          "layout, or its step time beside every other layout that fits."),
        {"memory", "time"},
        {QT_TRANSLATE_NOOP("Field", "Memory and traffic"),
         QT_TRANSLATE_NOOP("Field", "Step time and the best layout")}));
}

} // namespace

void addPlanFields(std::vector<Field>& out)
{
    // In the order of docs/CLI.md's table, which is also the order a scenario file is written.
    addShapeFields(out);
    addExpertFields(out);
    addBatchFields(out);
    addAxisFields(out);
    addLayoutChoiceFields(out);
    addMemoryRecipeFields(out);
    addHardwareChoiceFields(out);
    addHardwareLinkFields(out);
    addSearchKeepFields(out);
    out.push_back(partField());
}

// The plan has no rules between its fields: the two that follow others (kv_heads,
// expert_ffn_hidden) do so by being absent, and core refuses, never rounds, a layout that does
// not divide.
void normalizePlan(const core::Scenario&, core::Scenario&, const Field*) { }

} // namespace scalelab::document::detail
