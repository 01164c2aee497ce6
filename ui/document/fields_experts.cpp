// The experts tab's inputs: ranks, experts, the simulated router, capacity, and the slot size on
// the wire.

#include "expertsrules.h"
#include "fields.h"

#include <QtGlobal>
#include <algorithm>
#include <tuple>

namespace scalelab::document::detail {

using core::ExpertsDisplay;
using core::ExpertsInputs;
using core::Scenario;
using namespace experts;

namespace {

constexpr auto S = core::Section::Experts;
constexpr auto W = FieldKind::Whole;

void addLayoutFields(std::vector<Field>& out)
{
    out.push_back(bound<&Scenario::experts, &ExpertsInputs::ranks>(
        numberField(S, "experts.ranks", W, QT_TRANSLATE_NOOP("Field", "&Ranks"), "R",
                    QT_TRANSLATE_NOOP("Field", "ranks"),
                    QT_TRANSLATE_NOOP(
                        "Field", "Accelerators; each holds tokens and an equal block of experts."),
                    1, kRanksSlider)));
    // The slider offers multiples of the ranks up to kExpertsSlider; the view starts it at the
    // ranks, and normalizeExperts snaps to a multiple.
    Field expertsField = bound<&Scenario::experts, &ExpertsInputs::experts>(
        numberField(S, "experts.experts", W, QT_TRANSLATE_NOOP("Field", "E&xperts"), "E",
                    QT_TRANSLATE_NOOP("Field", "experts"),
                    QT_TRANSLATE_NOOP("Field",
                                      "Experts in the layer, a multiple of the ranks: rank r owns "
                                      "experts r E/R to (r + 1) E/R - 1."),
                    1, kExpertsSlider));
    expertsField.maximumFrom = [](const Scenario& s) {
        return static_cast<double>(expertsMaximum(s.experts.ranks));
    };
    // It starts at the ranks (fewer would snap back up), unless a file asks for fewer.
    expertsField.minimumFrom = [](const Scenario& s) {
        return static_cast<double>(std::min(s.experts.ranks, s.experts.experts));
    };
    out.push_back(expertsField);
}

void addRouterFields(std::vector<Field>& out)
{
    Field tokens = bound<&Scenario::experts, &ExpertsInputs::tokensPerRank>(
        numberField(S, "experts.tokens_per_rank", W, QT_TRANSLATE_NOOP("Field", "T&okens per rank"),
                    {}, QT_TRANSLATE_NOOP("Field", "tokens"),
                    QT_TRANSLATE_NOOP("Field", "Tokens each rank routes in this step."), 1,
                    kTokensSlider, true));
    tokens.maximumFrom = [](const Scenario& s) {
        return static_cast<double>(tokensMaximum(s.experts.ranks, s.experts.topK));
    };
    out.push_back(tokens);
    Field topK = bound<&Scenario::experts, &ExpertsInputs::topK>(numberField(
        S, "experts.top_k", W, QT_TRANSLATE_NOOP("Field", "&Top-k"), "k",
        QT_TRANSLATE_NOOP("Field", "experts per token"),
        QT_TRANSLATE_NOOP("Field",
                          "Distinct experts each token is sent to; each choice is one slot."),
        1, kTopKSlider));
    topK.maximumFrom = [](const Scenario& s) {
        return static_cast<double>(topKMaximum(s.experts.experts));
    };
    out.push_back(topK);
    Field skew = bound<&Scenario::experts, &ExpertsInputs::skew>(numberField(
        S, "experts.skew", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "S&kew"), "s",
        QT_TRANSLATE_NOOP("Field", "exponent"),
        QT_TRANSLATE_NOOP("Field",
                          "Expert popularity falls as (position + 1)^-s: 0 is a balanced "
                          "router, larger values send more tokens to the hottest "
                          "experts."),
        0, 4));
    skew.decimals = 2;
    skew.step = 0.05;
    out.push_back(skew);
}

void addCapacityFields(std::vector<Field>& out)
{
    // One saved number, 0 = unlimited (the file format). The slider shows 1..4; while the limit
    // is off it shows kUnlimitedShownFactor, so moving it turns the limit on by itself.
    Field factor = bound<&Scenario::experts, &ExpertsInputs::capacityFactor>(
        numberField(S, "experts.capacity_factor", FieldKind::Number,
                    QT_TRANSLATE_NOOP("Field", "C&apacity factor"), "c",
                    QT_TRANSLATE_NOOP("Field", "x even share"),
                    QT_TRANSLATE_NOOP("Field",
                                      "Capacity per expert = ceil(c x slots / experts). Moving it "
                                      "turns the limit on."),
                    1, 4));
    factor.decimals = 2;
    factor.step = 0.05;
    factor.shown = [](const Scenario& s) {
        return s.experts.capacityFactor > 0.0 ? s.experts.capacityFactor : kUnlimitedShownFactor;
    };
    out.push_back(factor);
    // The check box is a face of the same number, never a key of its own: on keeps a limit (or
    // starts one at the factor the slider showed), off is 0.
    Field limit = flagField(
        S, "experts.capacity", QT_TRANSLATE_NOOP("Field", "&Limit the slots each expert keeps"),
        QT_TRANSLATE_NOOP("Field",
                          "Slots past an expert's capacity are dropped: the token skips "
                          "that expert. Ranks are served in order, rank 0 first."));
    limit.saved = false;
    limit.get = [](const Scenario& s) {
        return s.experts.capacityFactor > 0.0 ? 1.0 : 0.0;
    };
    limit.set = [](Scenario& s, double on) {
        double& f = s.experts.capacityFactor;
        f = on == 0.0 ? 0.0 : (f > 0.0 ? f : kUnlimitedShownFactor);
    };
    out.push_back(limit);
}

void addMoreFields(std::vector<Field>& out)
{
    out.push_back(bound<&Scenario::experts, &ExpertsInputs::seed>(
        numberField(S, "experts.seed", W, QT_TRANSLATE_NOOP("Field", "See&d"), {},
                    QT_TRANSLATE_NOOP("Field", "(any whole number)"),
                    QT_TRANSLATE_NOOP("Field",
                                      "Seed of the simulated router: the same seed routes the same "
                                      "way."),
                    0, 1000)));
    out.push_back(bound<&Scenario::experts, &ExpertsInputs::popularity>(
        choiceField(S, "experts.popularity", QT_TRANSLATE_NOOP("Field", "&Popularity"),
                    QT_TRANSLATE_NOOP("Field",
                                      "Which experts the simulated router prefers: a seeded "
                                      "shuffle, or expert 0 the hottest."),
                    {"shuffled", "by_id"},
                    {QT_TRANSLATE_NOOP("Field", "Shuffled"),
                     QT_TRANSLATE_NOOP("Field", "By id (expert 0 hottest)")})));
    out.push_back(bound<&Scenario::expertsDisplay, &ExpertsDisplay::hidden>(numberField(
        S, "experts.hidden", W, QT_TRANSLATE_NOOP("Field", "Hidde&n size"), "d",
        QT_TRANSLATE_NOOP("Field", "values per token"),
        QT_TRANSLATE_NOOP("Field", "Width of the token vector each slot carries to its expert."), 1,
        65536, true)));
    out.push_back(bound<&Scenario::expertsDisplay, &ExpertsDisplay::bytesPerValue>(numberField(
        S, "experts.bytes_per_value", W, QT_TRANSLATE_NOOP("Field", "&Bytes per value"), {},
        QT_TRANSLATE_NOOP("Field", "bytes"),
        QT_TRANSLATE_NOOP("Field", "Precision on the wire: 1 for FP8, 2 for bf16, 4 for fp32."), 1,
        4)));
}

} // namespace

void addExpertsFields(std::vector<Field>& out)
{
    addLayoutFields(out);
    addRouterFields(out);
    addCapacityFields(out);
    addMoreFields(out);
}

} // namespace scalelab::document::detail

namespace scalelab::document::detail {

namespace {

bool isField(const Field* field, const char* key)
{
    return field && field->key == QLatin1StringView(key);
}

/// The document clamps every following range before these rules run. A value beyond its slider
/// (from a file) is clamped only when the input its range follows moves, as the slider's range
/// then moves too: an edit of another input gives it back.
void keepValuesBeyondTheirSlider(const ExpertsInputs& before, ExpertsInputs& after,
                                 const Field* field)
{
    const auto clamped = [](std::int64_t was, std::int64_t now, std::int64_t maximum) {
        return was > maximum && now == maximum;
    };
    if (after.ranks == before.ranks && !isField(field, "experts.experts")
        && clamped(before.experts, after.experts, expertsMaximum(after.ranks)))
        after.experts = before.experts;
    if (after.experts == before.experts && !isField(field, "experts.top_k")
        && clamped(before.topK, after.topK, topKMaximum(after.experts)))
        after.topK = before.topK;
    if (after.ranks == before.ranks && after.topK == before.topK
        && !isField(field, "experts.tokens_per_rank")
        && clamped(before.tokensPerRank, after.tokensPerRank,
                   tokensMaximum(after.ranks, after.topK)))
        after.tokensPerRank = before.tokensPerRank;
}

/// Whether an owner map survives: one this edit set, or one from before while ranks and
/// experts stay as it was written.
bool keepsOwners(const ExpertsInputs& before, const ExpertsInputs& after)
{
    if (!after.expertToRank)
        return false;
    return after.expertToRank != before.expertToRank
        || (after.ranks == before.ranks && after.experts == before.experts);
}

/// Every rank owns an equal block: experts step to the next multiple of the ranks in the
/// direction moved (upwards when the ranks changed), so an arrow key never snaps back where it
/// was. New ranks also bring the experts into the slider's new range.
void snapExpertsToRanks(const ExpertsInputs& before, ExpertsInputs& after, bool keepOwners)
{
    const std::int64_t ranks = std::max<std::int64_t>(after.ranks, 1);
    const bool ranksChanged = after.ranks != before.ranks;
    if (ranksChanged)
        after.experts = std::clamp(after.experts, ranks, expertsMaximum(ranks));
    if (keepOwners || after.experts % ranks == 0)
        return;
    const std::int64_t down = std::max(ranks, after.experts / ranks * ranks);
    const std::int64_t up = std::min(expertsMaximum(ranks), down + ranks);
    after.experts = (ranksChanged || after.experts > before.experts) ? up : down;
}

/// Top-k follows the experts, tokens per rank follow ranks x top-k (core's slot budget): each
/// is clamped when what it follows moved.
void clampFollowingInputs(const ExpertsInputs& before, ExpertsInputs& after)
{
    if (after.experts != before.experts)
        after.topK = std::clamp<std::int64_t>(after.topK, 1, topKMaximum(after.experts));
    if (after.ranks != before.ranks || after.topK != before.topK)
        after.tokensPerRank = std::clamp<std::int64_t>(after.tokensPerRank, 1,
                                                       tokensMaximum(after.ranks, after.topK));
}

/// Explicit lists the edit did not set itself: an owner map that no longer fits goes, and
/// explicit assignments give way to the simulated router once any router input moves.
void dropStaleLists(const ExpertsInputs& before, ExpertsInputs& after, bool keepOwners)
{
    if (!keepOwners)
        after.expertToRank.reset();
    const auto router = [](const ExpertsInputs& e) {
        return std::tie(e.ranks, e.experts, e.topK, e.tokensPerRank, e.skew, e.seed, e.popularity);
    };
    if (after.assignments == before.assignments && router(after) != router(before))
        after.assignments.reset();
}

} // namespace

void normalizeExperts(const core::Scenario& before, core::Scenario& after, const Field* field)
{
    const ExpertsInputs& was = before.experts;
    ExpertsInputs& now = after.experts;
    keepValuesBeyondTheirSlider(was, now, field);
    const bool keepOwners = keepsOwners(was, now);
    snapExpertsToRanks(was, now, keepOwners);
    clampFollowingInputs(was, now);
    dropStaleLists(was, now, keepOwners);
    // The capacity limit needs no rule: capacity_factor 0 is "no limit", so moving the factor
    // (whose slider starts at 1) turns the limit on, and the check box is a face of the factor.
}

} // namespace scalelab::document::detail
