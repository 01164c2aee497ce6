// The Ring / ZeRO tab's inputs: the model state, the data-parallel ranks, the accelerator and the
// link.

#include "fields.h"

#include <QtGlobal>
#include <algorithm>

namespace scalelab::document::detail {

using core::Scenario;

void addZeroFields(std::vector<Field>& out)
{
    constexpr auto S = core::Section::Zero;
    {
        Field f = bound<&Scenario::zero, &core::ZeroInputs::parameters>(numberField(
            S, "zero.parameters", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Parameters"), "P",
            QT_TRANSLATE_NOOP("Field", "parameters"),
            QT_TRANSLATE_NOOP("Field", "Number of trainable parameters in the model."), 1e6, 1e13,
            true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::zero, &core::ZeroInputs::ranks>(numberField(
            S, "zero.ranks", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Ranks"), "n",
            QT_TRANSLATE_NOOP("Field", "ranks"),
            QT_TRANSLATE_NOOP("Field",
                              "Data-parallel ranks: each runs the whole model on its own share of "
                              "the batch, and ZeRO shards the model state over them."),
            1, 1024, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::zero, &core::ZeroInputs::weightBytes>(numberField(
            S, "zero.weight_bytes", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Weights"), "w",
            QT_TRANSLATE_NOOP("Field", "bytes / parameter"),
            QT_TRANSLATE_NOOP("Field", "Bytes of each working weight (bf16: 2)."), 0, 16));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::zero, &core::ZeroInputs::gradBytes>(numberField(
            S, "zero.grad_bytes", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Gradients"), "g",
            QT_TRANSLATE_NOOP("Field", "bytes / parameter"),
            QT_TRANSLATE_NOOP(
                "Field",
                "Bytes of each gradient (bf16: 2); also the bytes of each value in the ring demo."),
            0, 16));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::zero, &core::ZeroInputs::optimizerBytes>(numberField(
            S, "zero.optimizer_bytes", FieldKind::Whole,
            QT_TRANSLATE_NOOP("Field", "&Optimizer state"), "o",
            QT_TRANSLATE_NOOP("Field", "bytes / parameter"),
            QT_TRANSLATE_NOOP("Field",
                              "Master weights plus both Adam moments (4 + 4 + 4 = 12 in fp32)."),
            0, 32));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::zeroDisplay, &core::ZeroDisplay::acceleratorGb>(numberField(
            S, "zero.accelerator_gb", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "C&apacity"),
            {}, QT_TRANSLATE_NOOP("Field", "GB"),
            QT_TRANSLATE_NOOP("Field", "Memory of one accelerator, in GB (10^9 bytes)."), 1, 1024));
        f.decimals = 0;
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::zeroDisplay, &core::ZeroDisplay::linkBandwidthGBps>(numberField(
            S, "zero.link_bandwidth", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "&Bandwidth"),
            "B", QT_TRANSLATE_NOOP("Field", "GB/s"),
            QT_TRANSLATE_NOOP("Field",
                              "Bytes per second one rank sends to its neighbour (a 400 Gb/s "
                              "network card: 50 GB/s)."),
            1, 2000, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::zeroDisplay, &core::ZeroDisplay::linkLatencyUs>(numberField(
            S, "zero.link_latency", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "&Latency"),
            "\u03b1", QT_TRANSLATE_NOOP("Field", "\u00b5s"),
            QT_TRANSLATE_NOOP("Field", "Fixed cost of every message, in microseconds."), 0, 100));
        f.decimals = 1;
        f.step = 0.5;
        out.push_back(std::move(f));
    }
}

// No zero input bounds another: any rank count shards any model, and the link and the
// accelerator are independent of the model. An edit stays exactly as made (tst_zerotab checks it).
void normalizeZero(const core::Scenario&, core::Scenario&, const Field*) { }

} // namespace scalelab::document::detail
