// The FP8 tab's training inputs: how the products of a matrix multiply are added up
// (fp8.accumulation) and when each scale is chosen (fp8.policy).

#include "fields.h"

#include <QtGlobal>

namespace scalelab::document::detail {

using core::Fp8AccumulationInputs;
using core::Fp8Inputs;
using core::Fp8PolicyInputs;
using core::Scenario;

namespace {

constexpr auto S = core::Section::Fp8;
constexpr auto W = FieldKind::Whole;

template <auto Member> Field accumulation(Field f)
{
    return bound<&Scenario::fp8, &Fp8Inputs::accumulation, Member>(std::move(f));
}

template <auto Member> Field policy(Field f)
{
    return bound<&Scenario::fp8, &Fp8Inputs::policy, Member>(std::move(f));
}

void addAccumulationFields(std::vector<Field>& out)
{
    out.push_back(accumulation<&Fp8AccumulationInputs::kMin>(numberField(
        S, "fp8.accumulation.k_min", W, QT_TRANSLATE_NOOP("Field", "Smallest &K"), "K",
        QT_TRANSLATE_NOOP("Field", "products"),
        QT_TRANSLATE_NOOP("Field",
                          "The shortest inner dimension of the sweep: each output adds K "
                          "products. The sweep doubles K up to the largest."),
        16, 65536, true)));
    out.push_back(accumulation<&Fp8AccumulationInputs::kMax>(numberField(
        S, "fp8.accumulation.k_max", W, QT_TRANSLATE_NOOP("Field", "Largest K"), "K",
        QT_TRANSLATE_NOOP("Field", "products"),
        QT_TRANSLATE_NOOP("Field", "The longest inner dimension of the sweep."), 16, 65536, true)));
    out.push_back(accumulation<&Fp8AccumulationInputs::accumulatorBits>(numberField(
        S, "fp8.accumulation.accumulator_bits", W, QT_TRANSLATE_NOOP("Field", "Accu&mulator bits"),
        {}, QT_TRANSLATE_NOOP("Field", "bits"),
        QT_TRANSLATE_NOOP("Field",
                          "Fraction bits the tensor core's accumulator keeps. 23 is float32; "
                          "H100's FP8 tensor cores keep about 13 (DeepSeek-V3: 'around 14 "
                          "bits' with the leading one)."),
        1, 23)));
    out.push_back(accumulation<&Fp8AccumulationInputs::promotionInterval>(numberField(
        S, "fp8.accumulation.promotion_interval", W,
        QT_TRANSLATE_NOOP("Field", "Promotion &interval"), "N_C",
        QT_TRANSLATE_NOOP("Field", "products"),
        QT_TRANSLATE_NOOP("Field",
                          "After this many products the limited sum is added into a float32 "
                          "sum and starts again from zero (DeepSeek-V3: 128)."),
        1, 65536, true)));
    out.push_back(accumulation<&Fp8AccumulationInputs::rounding>(choiceField(
        S, "fp8.accumulation.rounding", QT_TRANSLATE_NOOP("Field", "Accumulator roun&ding"),
        QT_TRANSLATE_NOOP("Field",
                          "How the accumulator drops the bits it cannot keep. Aligned blocks "
                          "model H100: 32 products at a time, aligned to the largest and cut "
                          "toward zero. The other two round after every product."),
        {"aligned_block", "truncate", "nearest"},
        {QT_TRANSLATE_NOOP("Field", "Aligned blocks of 32, cut (H100)"),
         QT_TRANSLATE_NOOP("Field", "Cut after every product"),
         QT_TRANSLATE_NOOP("Field", "Nearest after every product")})));
    // The choice's names run in the enum's order: map them.
    Field& rounding = out.back();
    rounding.get = [](const Scenario& s) {
        switch (s.fp8.accumulation.rounding) {
        case core::AccumulatorRounding::AlignedBlock:
            return 0.0;
        case core::AccumulatorRounding::Truncate:
            return 1.0;
        case core::AccumulatorRounding::Nearest:
            break;
        }
        return 2.0;
    };
    rounding.set = [](Scenario& s, double v) {
        const int i = static_cast<int>(v);
        s.fp8.accumulation.rounding = i == 0 ? core::AccumulatorRounding::AlignedBlock
            : i == 1                         ? core::AccumulatorRounding::Truncate
                                             : core::AccumulatorRounding::Nearest;
    };
    out.push_back(accumulation<&Fp8AccumulationInputs::outputs>(numberField(
        S, "fp8.accumulation.outputs", W, QT_TRANSLATE_NOOP("Field", "Outp&uts"), {},
        QT_TRANSLATE_NOOP("Field", "per side"),
        QT_TRANSLATE_NOOP("Field",
                          "The product is outputs x outputs: more outputs, a surer maximum, a "
                          "slower sweep."),
        1, 64)));
    out.push_back(accumulation<&Fp8AccumulationInputs::seed>(
        numberField(S, "fp8.accumulation.seed", W, QT_TRANSLATE_NOOP("Field", "Seed"), {}, "",
                    QT_TRANSLATE_NOOP("Field", "Seed of the two random matrices."), 0, 1000)));
}

void addPolicyFields(std::vector<Field>& out)
{
    out.push_back(policy<&Fp8PolicyInputs::steps>(numberField(
        S, "fp8.policy.steps", W, QT_TRANSLATE_NOOP("Field", "S&teps"), {},
        QT_TRANSLATE_NOOP("Field", "steps"),
        QT_TRANSLATE_NOOP("Field", "Training steps simulated: one tensor per step."), 2, 512)));
    out.push_back(policy<&Fp8PolicyInputs::spike>(numberField(
        S, "fp8.policy.spike", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "S&pike"), {},
        QT_TRANSLATE_NOOP("Field", "x"),
        QT_TRANSLATE_NOOP("Field",
                          "At the spike step 16 values of the tensor are this many times "
                          "larger, for that one step (1: no spike)."),
        1, 1e6, true)));
    out.push_back(policy<&Fp8PolicyInputs::spikeStep>(numberField(
        S, "fp8.policy.spike_step", W, QT_TRANSLATE_NOOP("Field", "Spike step"), {},
        QT_TRANSLATE_NOOP("Field", "step"),
        QT_TRANSLATE_NOOP("Field", "The step the spike comes at (past the last step: none)."), 0,
        511)));
    out.push_back(policy<&Fp8PolicyInputs::drift>(numberField(
        S, "fp8.policy.drift", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "&Growth per step"),
        {}, QT_TRANSLATE_NOOP("Field", "x per step"),
        QT_TRANSLATE_NOOP("Field",
                          "A slow drift: every step the whole tensor grows by this fraction "
                          "(0.05: 5 % larger each step; negative: it shrinks)."),
        -0.2, 0.2)));
    out.back().decimals = 2; // a fraction: 0.05 is 5 % a step
    out.back().step = 0.01;
    out.push_back(policy<&Fp8PolicyInputs::history>(numberField(
        S, "fp8.policy.history", W, QT_TRANSLATE_NOOP("Field", "&History"), {},
        QT_TRANSLATE_NOOP("Field", "steps"),
        QT_TRANSLATE_NOOP("Field",
                          "Delayed scaling's window: the scale comes from the largest amax of "
                          "this many previous steps (Transformer Engine's amax_history_len)."),
        1, 1024, true)));
    out.push_back(policy<&Fp8PolicyInputs::rows>(
        numberField(S, "fp8.policy.rows", W, QT_TRANSLATE_NOOP("Field", "Tensor rows"), {}, "",
                    QT_TRANSLATE_NOOP("Field", "Rows of each step's tensor."), 1, 4096, true)));
    out.push_back(policy<&Fp8PolicyInputs::cols>(
        numberField(S, "fp8.policy.cols", W, QT_TRANSLATE_NOOP("Field", "Tensor columns"), {}, "",
                    QT_TRANSLATE_NOOP("Field", "Columns of each step's tensor."), 1, 4096, true)));
    out.push_back(policy<&Fp8PolicyInputs::seed>(
        numberField(S, "fp8.policy.seed", W, QT_TRANSLATE_NOOP("Field", "Seed"), {}, "",
                    QT_TRANSLATE_NOOP("Field", "Seed of the tensors."), 0, 1000)));
}

} // namespace

void addFp8TrainingFields(std::vector<Field>& out)
{
    addAccumulationFields(out);
    addPolicyFields(out);
}

} // namespace scalelab::document::detail
