// The memory tab's inputs: model state (bytes per parameter), activations, checkpointing, and
// the accelerator the budget is drawn against.

#include "fields.h"

#include <QtGlobal>

namespace scalelab::document::detail {

using core::MemoryDisplay;
using core::MemoryInputs;
using core::Scenario;

namespace {

constexpr auto S = core::Section::Memory;
constexpr auto W = FieldKind::Whole;

/// The parameter count and the bytes each parameter costs.
void addModelStateFields(std::vector<Field>& out)
{
    const char* perParameter = QT_TRANSLATE_NOOP("Field", "bytes / parameter");

    out.push_back(bound<&Scenario::memory, &MemoryInputs::parameters>(
        numberField(S, "memory.parameters", W, QT_TRANSLATE_NOOP("Field", "&Parameters"), "P",
                    QT_TRANSLATE_NOOP("Field", "parameters"),
                    QT_TRANSLATE_NOOP("Field", "Number of trainable parameters in the model."), 1e6,
                    1e13, true)));
    out.push_back(bound<&Scenario::memory, &MemoryInputs::weightBytes>(numberField(
        S, "memory.weight_bytes", W, QT_TRANSLATE_NOOP("Field", "Weights"), {}, perParameter,
        QT_TRANSLATE_NOOP("Field", "Bytes of each working weight (bf16: 2)."), 0, 16)));
    out.push_back(bound<&Scenario::memory, &MemoryInputs::gradBytes>(numberField(
        S, "memory.grad_bytes", W, QT_TRANSLATE_NOOP("Field", "Gradients"), {}, perParameter,
        QT_TRANSLATE_NOOP("Field", "Bytes of each gradient (bf16: 2)."), 0, 16)));
    out.push_back(bound<&Scenario::memory, &MemoryInputs::masterBytes>(numberField(
        S, "memory.master_bytes", W, QT_TRANSLATE_NOOP("Field", "Master weights"), {}, perParameter,
        QT_TRANSLATE_NOOP("Field",
                          "Bytes of the higher-precision copy the optimizer updates (fp32: 4)."),
        0, 16)));
    out.push_back(bound<&Scenario::memory, &MemoryInputs::momentBytes>(numberField(
        S, "memory.moment_bytes", W, QT_TRANSLATE_NOOP("Field", "Adam moments"), {}, perParameter,
        QT_TRANSLATE_NOOP("Field", "Bytes of both Adam moments together (two fp32: 8)."), 0, 16)));
}

/// What every layer saves for the backward pass, and the checkpoint segments.
void addActivationFields(std::vector<Field>& out)
{
    // Tokens in the batch: saved as one number, shown as batch x sequence length.
    out.push_back(bound<&Scenario::memory, &MemoryInputs::tokens>(
        numberField(S, "memory.tokens", W, QT_TRANSLATE_NOOP("Field", "Tokens"), "B x T",
                    QT_TRANSLATE_NOOP("Field", "tokens"),
                    QT_TRANSLATE_NOOP("Field", "Tokens in the batch on this accelerator."), 1,
                    1073741824, true)));
    out.push_back(bound<&Scenario::memory, &MemoryInputs::hidden>(numberField(
        S, "memory.hidden", W, QT_TRANSLATE_NOOP("Field", "Hi&dden size"), "d",
        QT_TRANSLATE_NOOP("Field", "values"),
        QT_TRANSLATE_NOOP("Field", "Width of each saved activation tensor."), 1, 65536, true)));
    out.push_back(bound<&Scenario::memory, &MemoryInputs::layers>(numberField(
        S, "memory.layers", W, QT_TRANSLATE_NOOP("Field", "&Layers"), "L",
        QT_TRANSLATE_NOOP("Field", "layers"),
        QT_TRANSLATE_NOOP("Field", "Transformer layers, each saving its activations."), 1, 256)));
    out.push_back(bound<&Scenario::memory, &MemoryInputs::bytesPerValue>(numberField(
        S, "memory.bytes_per_value", W, QT_TRANSLATE_NOOP("Field", "Bytes p&er value"), {},
        QT_TRANSLATE_NOOP("Field", "bytes"),
        QT_TRANSLATE_NOOP("Field", "Precision of saved activations (bf16: 2)."), 1, 8)));
    out.push_back(bound<&Scenario::memory, &MemoryInputs::tensorsPerLayer>(numberField(
        S, "memory.tensors_per_layer", W, QT_TRANSLATE_NOOP("Field", "&Tensors per layer"), {},
        QT_TRANSLATE_NOOP("Field", "tensors"),
        QT_TRANSLATE_NOOP("Field",
                          "Saved tensors of tokens x hidden values per layer (1 in the "
                          "chapter's formula; a real transformer layer saves many)."),
        1, 64)));
    Field segments = bound<&Scenario::memory, &MemoryInputs::segments>(
        numberField(S, "memory.segments", W, QT_TRANSLATE_NOOP("Field", "Se&gments"), {},
                    QT_TRANSLATE_NOOP("Field", "segments"),
                    QT_TRANSLATE_NOOP("Field",
                                      "Checkpoint segments: each keeps one boundary tensor; "
                                      "backward replays one segment at a time."),
                    1, 256));
    segments.maximumFrom = [](const Scenario& s) {
        return static_cast<double>(s.memory.layers);
    };
    out.push_back(segments);
}

/// The batch as sequences of a length: two controls over the one saved token count.
void addBatchFields(std::vector<Field>& out)
{
    // Batch: changing it keeps the sequence length, so the tokens follow.
    Field batch = numberField(S, "memory.batch", W, QT_TRANSLATE_NOOP("Field", "&Batch"), "B",
                              QT_TRANSLATE_NOOP("Field", "sequences"),
                              QT_TRANSLATE_NOOP("Field", "Sequences per step on this accelerator."),
                              1, 1024, true);
    batch.get = [](const Scenario& s) {
        return static_cast<double>(s.memoryDisplay.batch);
    };
    batch.set = [](Scenario& s, double v) {
        const std::int64_t sequence =
            s.memory.tokens / std::max<std::int64_t>(s.memoryDisplay.batch, 1);
        s.memoryDisplay.batch = std::max<std::int64_t>(std::llround(v), 1);
        s.memory.tokens = s.memoryDisplay.batch * sequence;
    };
    batch.load = [](Scenario& s, double v) { s.memoryDisplay.batch = std::llround(v); };
    out.push_back(batch);
    // Sequence length: a face of the saved tokens and batch, never a key of its own.
    Field sequence =
        numberField(S, "memory.sequence", W, QT_TRANSLATE_NOOP("Field", "Se&quence length"), "T",
                    QT_TRANSLATE_NOOP("Field", "tokens"),
                    QT_TRANSLATE_NOOP("Field", "Tokens per sequence; tokens = batch x sequence."),
                    1, 1048576, true);
    sequence.saved = false;
    sequence.get = [](const Scenario& s) {
        return static_cast<double>(s.memory.tokens
                                   / std::max<std::int64_t>(s.memoryDisplay.batch, 1));
    };
    sequence.set = [](Scenario& s, double v) {
        s.memory.tokens = std::max<std::int64_t>(s.memoryDisplay.batch, 1) * std::llround(v);
    };
    out.push_back(sequence);
}

/// How the budget is shown: checkpointing on or off, the unit, the accelerator's memory.
void addDisplayFields(std::vector<Field>& out)
{
    out.push_back(bound<&Scenario::memoryDisplay, &MemoryDisplay::checkpointing>(flagField(
        S, "memory.checkpointing", QT_TRANSLATE_NOOP("Field", "&Checkpoint segment boundaries"),
        QT_TRANSLATE_NOOP("Field",
                          "Keep only each segment's boundary tensor and replay the "
                          "segment during backward."))));
    out.push_back(bound<&Scenario::memoryDisplay, &MemoryDisplay::gib>(choiceField(
        S, "memory.unit", QT_TRANSLATE_NOOP("Field", "&Units"),
        QT_TRANSLATE_NOOP("Field", "The unit every byte figure of this tab is shown in."),
        {"GB", "GiB"},
        {QT_TRANSLATE_NOOP("Field", "GB (10^9 bytes)"),
         QT_TRANSLATE_NOOP("Field", "GiB (2^30 bytes)")})));
    Field capacity = bound<&Scenario::memoryDisplay, &MemoryDisplay::acceleratorGb>(numberField(
        S, "memory.accelerator_gb", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "C&apacity"), {},
        QT_TRANSLATE_NOOP("Field", "GB"),
        QT_TRANSLATE_NOOP("Field", "Memory of one accelerator, in GB (10^9 bytes)."), 1, 1024));
    out.push_back(capacity);
}

} // namespace

void addMemoryFields(std::vector<Field>& out)
{
    addModelStateFields(out);
    addActivationFields(out);
    addBatchFields(out);
    addDisplayFields(out);
}

} // namespace scalelab::document::detail

namespace scalelab::document::detail {

void normalizeMemory(const core::Scenario&, core::Scenario&, const Field*)
{
    // Segments follow the layers through their maximumFrom; batch and sequence keep the tokens
    // a whole number of sequences through their setters. Nothing else couples.
}

} // namespace scalelab::document::detail
