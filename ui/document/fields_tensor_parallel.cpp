// The tensor-parallel tab's inputs: the MLP's shape, the ranks, and which split is drawn.

#include "fields.h"

#include <QtGlobal>

namespace scalelab::document::detail {

using core::Scenario;

namespace {

constexpr auto S = core::Section::TensorParallel;

/// The MLP's shape: X is tokens x d_model, the hidden layer d_ff wide.
void addShapeFields(std::vector<Field>& out)
{
    {
        Field f = bound<&Scenario::tensorParallel, &core::TensorParallelInputs::tokens>(numberField(
            S, "tensor_parallel.tokens", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Tokens"),
            "T", QT_TRANSLATE_NOOP("Field", "tokens"),
            QT_TRANSLATE_NOOP("Field", "Rows of X: tokens in the batch (batch x sequence)."), 1,
            4096, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::tensorParallel, &core::TensorParallelInputs::dModel>(numberField(
            S, "tensor_parallel.d_model", FieldKind::Whole,
            QT_TRANSLATE_NOOP("Field", "&Model width"), "d_model",
            QT_TRANSLATE_NOOP("Field", "features"),
            QT_TRANSLATE_NOOP("Field", "Columns of X and of the output."), 1, 8192, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::tensorParallel, &core::TensorParallelInputs::dFf>(numberField(
            S, "tensor_parallel.d_ff", FieldKind::Whole,
            QT_TRANSLATE_NOOP("Field", "&Hidden width"), "d_ff",
            QT_TRANSLATE_NOOP("Field", "features"),
            QT_TRANSLATE_NOOP("Field", "Width of the hidden layer H, the dimension that is split."),
            1, 32768, true));
        out.push_back(std::move(f));
    }
}

/// How many ranks share the layer, the bytes of each value, and the seed of the random data.
void addRankFields(std::vector<Field>& out)
{
    {
        Field f = bound<&Scenario::tensorParallel, &core::TensorParallelInputs::ranks>(numberField(
            S, "tensor_parallel.ranks", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Ranks"), "n",
            QT_TRANSLATE_NOOP("Field", "ranks"),
            QT_TRANSLATE_NOOP("Field",
                              "Tensor-parallel ranks: W1's columns and W2's rows are cut into this "
                              "many shards, the first d_ff mod n one column wider."),
            1, 1024));
        // The slider stops at the hidden width (as before the table); core refuses more
        // than 1024 ranks with a message naming the field.
        f.maximumFrom = [](const Scenario& s) {
            return static_cast<double>(s.tensorParallel.dFf);
        };
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::tensorParallel, &core::TensorParallelInputs::bytesPerValue>(
            numberField(
                S, "tensor_parallel.bytes_per_value", FieldKind::Whole,
                QT_TRANSLATE_NOOP("Field", "&Bytes per value"), {},
                QT_TRANSLATE_NOOP("Field", "bytes"),
                QT_TRANSLATE_NOOP("Field",
                                  "Size of each communicated and stored value (bf16: 2). The error "
                                  "chart computes in float64 and float32 regardless."),
                1, 8));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::tensorParallel, &core::TensorParallelInputs::seed>(numberField(
            S, "tensor_parallel.seed", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "S&eed"), {},
            "", QT_TRANSLATE_NOOP("Field", "Seed of the random X and weights."), 0, 9999));
        out.push_back(std::move(f));
    }
}

/// What the window draws: which split, and the precision of the live error figure.
void addDisplayFields(std::vector<Field>& out)
{
    {
        Field f = bound<&Scenario::tensorParallelDisplay, &core::TensorParallelDisplay::split>(
            choiceField(
                S, "tensor_parallel.split", QT_TRANSLATE_NOOP("Field", "&Split"),
                QT_TRANSLATE_NOOP("Field",
                                  "How the weights are cut over the ranks: the correct split, or "
                                  "one of two wrong ones that show why it matters."),
                {"correct", "w2_columns", "w1_rows"},
                {QT_TRANSLATE_NOOP("Field", "Correct: W1 cols, W2 rows"),
                 QT_TRANSLATE_NOOP("Field", "Wrong: W2 by columns"),
                 QT_TRANSLATE_NOOP("Field", "Wrong: W1 by rows")}));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::tensorParallelDisplay, &core::TensorParallelDisplay::float32>(
            choiceField(
                S, "tensor_parallel.precision", QT_TRANSLATE_NOOP("Field", "&Precision"),
                QT_TRANSLATE_NOOP(
                    "Field", "The precision the sharded and unsharded layers are computed in."),
                {"float64", "float32"},
                {QT_TRANSLATE_NOOP("Field", "float64"), QT_TRANSLATE_NOOP("Field", "float32")}));
        out.push_back(std::move(f));
    }
}

} // namespace

void addTensorParallelFields(std::vector<Field>& out)
{
    addShapeFields(out);
    addRankFields(out);
    addDisplayFields(out);
}

// The section's one coupling, ranks <= d_ff (a rank with no hidden column would hold nothing),
// is the ranks field's maximumFrom, applied before this runs; the split and the precision are
// free of the other inputs.
void normalizeTensorParallel(const core::Scenario&, core::Scenario&, const Field*) { }

} // namespace scalelab::document::detail
