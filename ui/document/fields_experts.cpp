// The experts tab's inputs: ranks, experts, the simulated router, capacity, and the slot size on the wire.

#include "fields.h"

#include <QtGlobal>
#include <algorithm>

namespace scalelab::document::detail {

using core::Scenario;

void addExpertsFields(std::vector<Field>& out)
{
    constexpr auto S = core::Section::Experts;
    {
        Field f = bound<&Scenario::experts, &core::ExpertsInputs::ranks>(numberField(S, "experts.ranks", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Ranks"), "R", QT_TRANSLATE_NOOP("Field", "ranks"),
            QT_TRANSLATE_NOOP("Field", "Accelerators; each holds tokens and an equal block of experts."), 1, 64));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::experts, &core::ExpertsInputs::experts>(numberField(S, "experts.experts", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "E&xperts"), "E", QT_TRANSLATE_NOOP("Field", "experts"),
            QT_TRANSLATE_NOOP("Field", "Experts in the layer, a multiple of the ranks: rank r owns experts r E/R to (r + 1) E/R - 1."), 1, 4096));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::experts, &core::ExpertsInputs::tokensPerRank>(numberField(S, "experts.tokens_per_rank", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "T&okens per rank"), {}, QT_TRANSLATE_NOOP("Field", "tokens"),
            QT_TRANSLATE_NOOP("Field", "Tokens each rank routes in this step."), 1, 1048576, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::experts, &core::ExpertsInputs::topK>(numberField(S, "experts.top_k", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Top-k"), "k", QT_TRANSLATE_NOOP("Field", "experts per token"),
            QT_TRANSLATE_NOOP("Field", "Distinct experts each token is sent to; each choice is one slot."), 1, 16));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::experts, &core::ExpertsInputs::skew>(numberField(S, "experts.skew", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "S&kew"), "s", QT_TRANSLATE_NOOP("Field", "exponent"),
            QT_TRANSLATE_NOOP("Field", "Expert popularity falls as (position + 1)^-s: 0 is a balanced router, larger values send more tokens to the hottest experts."), 0, 4));
        f.decimals = 2;
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::experts, &core::ExpertsInputs::capacityFactor>(numberField(S, "experts.capacity_factor", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "C&apacity factor"), "c", QT_TRANSLATE_NOOP("Field", "x even share"),
            QT_TRANSLATE_NOOP("Field", "Capacity per expert = ceil(c x slots / experts); 0 is no limit."), 0, 4));
        f.decimals = 2;
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::experts, &core::ExpertsInputs::seed>(numberField(S, "experts.seed", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "See&d"), {}, QT_TRANSLATE_NOOP("Field", "(any whole number)"),
            QT_TRANSLATE_NOOP("Field", "Seed of the simulated router: the same seed routes the same way."), 0, 1000));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::experts, &core::ExpertsInputs::popularity>(choiceField(S, "experts.popularity", QT_TRANSLATE_NOOP("Field", "&Popularity"), QT_TRANSLATE_NOOP("Field", "Which experts the simulated router prefers: a seeded shuffle, or expert 0 the hottest."),
            {"shuffled", "by_id"},
            {QT_TRANSLATE_NOOP("Field", "Shuffled"), QT_TRANSLATE_NOOP("Field", "By id (expert 0 hottest)")}));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::expertsDisplay, &core::ExpertsDisplay::hidden>(numberField(S, "experts.hidden", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "Hidde&n size"), "d", QT_TRANSLATE_NOOP("Field", "values per token"),
            QT_TRANSLATE_NOOP("Field", "Width of the token vector each slot carries to its expert."), 1, 65536, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::expertsDisplay, &core::ExpertsDisplay::bytesPerValue>(numberField(S, "experts.bytes_per_value", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Bytes per value"), {}, QT_TRANSLATE_NOOP("Field", "bytes"),
            QT_TRANSLATE_NOOP("Field", "Precision on the wire: 1 for FP8, 2 for bf16, 4 for fp32."), 1, 4));
        out.push_back(std::move(f));
    }
}

void normalizeExperts(const core::Scenario&, core::Scenario&, const Field*) {}

} // namespace scalelab::document::detail
