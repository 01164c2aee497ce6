#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace scalelab::core {

/// Which experts the router ranks hottest (its popularity order).
enum class ExpertPopularity {
    /// A random permutation drawn from the seed, so the hot experts land on random ranks. The
    /// default, and the router's behaviour before this knob existed.
    Shuffled,
    /// Expert 0 is the hottest, expert 1 the next, and so on. With the default contiguous owner
    /// blocks the hottest experts all live on rank 0 ("one hot rank"). The seed's permutation
    /// is still drawn and then set aside, so both orders make the same draws and differ only in
    /// the expert ids the popularity positions stand for.
    ById,
};

/// Inputs of the expert-parallel routing model (scenario section `experts`). Counts are token
/// slots: one token routed to top_k experts fills top_k slots.
struct ExpertsInputs {
    std::int64_t ranks = 4;
    std::int64_t experts = 16;
    /// Explicit routing: one list per source rank of the expert ids its token slots chose. When
    /// present, the router simulation (tokensPerRank, topK, skew, seed) is not used.
    std::optional<std::vector<std::vector<std::int64_t>>> assignments;
    /// Owner rank of each expert; when absent, contiguous equal blocks (experts % ranks == 0).
    std::optional<std::vector<std::int64_t>> expertToRank;
    std::int64_t tokensPerRank = 4096;
    std::int64_t topK = 2;
    double skew = 1.0; ///< 0 = balanced router, larger = more lopsided
    double capacityFactor = 0.0; ///< 0 = unlimited
    std::int64_t seed = 1;
    /// Which experts are hot (router simulation only); the default keeps the seeded shuffle.
    ExpertPopularity popularity = ExpertPopularity::Shuffled;

    bool operator==(const ExpertsInputs&) const = default;
};

struct ExpertsResult {
    /// counts[s][d]: token slots sent from source rank s to the rank d owning the chosen expert
    /// (all slots, before any capacity drop).
    std::vector<std::vector<std::int64_t>> counts;
    std::vector<std::int64_t> expertLoad; ///< slots routed to each expert, before drops
    std::vector<std::int64_t> receivedPerRank; ///< slots each rank receives, before drops
    std::optional<double> imbalance; ///< max / mean of receivedPerRank; none if no slots
    std::int64_t totalSlots = 0;
    /// Slots each expert keeps, ceil(capacityFactor * totalSlots / experts); 0 when unlimited.
    /// A positive factor gives 0 only when nothing is routed, or when the product underflows
    /// (a factor near 1e-320), and then every slot is dropped: check capacityFactor, not this.
    std::int64_t capacity = 0;
    std::vector<std::int64_t> droppedPerExpert; ///< slots over capacity, per expert
    std::int64_t dropped = 0; ///< total dropped slots
    /// droppedCounts[s][d]: the slots of counts[s][d] that capacity dropped (all zero when
    /// unlimited). Slots are kept first come, first served: source rank 0's slots in order,
    /// then rank 1's, and so on, so the slots that survive are counts - droppedCounts.
    std::vector<std::vector<std::int64_t>> droppedCounts;
    std::vector<std::int64_t> expertToRank; ///< the owner map actually used
    /// The router's probability for each expert (what the simulation samples from); uniform
    /// 1/experts for explicit assignments.
    std::vector<double> routerProbability;
    /// Tokens per rank a preview routed (previewExperts), its counts scaled up to the whole;
    /// 0: every token was routed.
    std::int64_t previewTokensPerRank = 0;
};

/// Largest ranks * tokensPerRank * topK the router simulation accepts (more is refused with an
/// InputError naming `experts.tokens_per_rank`).
inline constexpr std::int64_t kMaxRoutedSlots =
    33'554'432; // 2^25: within 30 s at any skew, with room
/// Largest ranks * tokensPerRank * topK routerAssignments() lists (8 bytes a slot).
inline constexpr std::int64_t kMaxListedSlots = 10'000'000;
/// Largest `ranks`: the ranks x ranks count matrices stay within a few hundred MB.
inline constexpr std::int64_t kMaxExpertRanks = 4096;
/// Largest `experts`.
inline constexpr std::int64_t kMaxExperts = 65536;

/// Throws InputError naming the field (`experts.top_k`, `experts.assignments[0][2]`, ...).
/// tokensPerRank, skew and seed are range-checked always; the bound topK <= experts and the
/// slot limit apply only to the router simulation (with explicit assignments topK is unused).
void validate(const ExpertsInputs& in);

/// The chapter's count matrix from explicit assignments: counts[s][expertToRank[e]] += 1 for
/// every expert id e chosen by source rank s. Ids must be valid (validate() checks them).
std::vector<std::vector<std::int64_t>>
allToAllCounts(const std::vector<std::vector<std::int64_t>>& assignments,
               const std::vector<std::int64_t>& expertToRank, std::int64_t ranks);

/// The owner map in use: in.expertToRank when given, else contiguous equal blocks (expert e
/// lives on rank e / (experts / ranks)). Validates first.
std::vector<std::int64_t> expertOwners(const ExpertsInputs& in);

/// Per-expert capacity: ceil(capacityFactor * totalSlots / experts), evaluated in double left
/// to right; 0 when capacityFactor is 0 (unlimited).
std::int64_t expertCapacity(double capacityFactor, std::int64_t totalSlots, std::int64_t experts);

/// Routes (explicitly or by the seeded router), counts, applies the capacity limit. Validates
/// first.
///
/// The router: expert e has weight (position(e) + 1)^-skew, where position is a random
/// permutation of the experts drawn from `seed` (so which experts are hot depends on the seed;
/// skew 0 is uniform), or the expert id itself under ExpertPopularity::ById. Every token of
/// every rank (token by token) draws topK distinct experts one after the other, each from the
/// weights of the experts it has not yet chosen (sampling without replacement, in the order
/// chosen). The shuffle draws from the stream Rng(seed); source rank s then draws its tokens
/// from Rng(base + s), where base is that stream's next draw, so a rank's tokens depend on the
/// seed and the rank alone and large routings draw their ranks on every core. The same seed
/// gives the same result on every machine and any number of threads.
ExpertsResult routeExperts(const ExpertsInputs& in);

/// A routing before the capacity limit: how many slots each source rank sends to each expert,
/// as routeExperts draws them. The draws do not depend on the capacity factor, so a view that
/// keeps this answers a new factor without drawing again (the 1M-token top-2 case draws for
/// about 5 ms on two cores; the limit then takes microseconds).
struct ExpertsRouting {
    std::int64_t ranks = 0;
    std::int64_t experts = 0;
    std::int64_t totalSlots = 0;
    /// sent[s * experts + e]: the slots source rank s sends to expert e (a Qt-safe name:
    /// `slots` is a macro in Qt code).
    std::vector<std::int64_t> sent;
    std::vector<std::int64_t> expertToRank; ///< as ExpertsResult::expertToRank
    std::vector<double> routerProbability; ///< as ExpertsResult::routerProbability
};

/// Most ranks x experts entries an ExpertsRouting holds (8 bytes each: 32 MB).
inline constexpr std::int64_t kMaxRoutingEntries = std::int64_t{1} << 22;

/// Whether a routing of `in` (validated) is small enough to keep: ranks x experts at most
/// kMaxRoutingEntries.
inline bool keepsRouting(const ExpertsInputs& in)
{
    return in.ranks * in.experts <= kMaxRoutingEntries;
}

/// The draws of routeExperts(in), before the capacity limit (in.capacityFactor is not used).
/// Validates first; ranks x experts above kMaxRoutingEntries is refused (`experts.experts`):
/// call routeExperts(in) alone then, which keeps one rank's counts at a time.
ExpertsRouting drawExpertsRouting(const ExpertsInputs& in);

/// routeExperts(in), bit for bit, from `routing` = drawExpertsRouting of inputs that differ
/// from `in` at most in capacityFactor (the caller's to ensure): only the limit is applied.
ExpertsResult routeExperts(const ExpertsInputs& in, const ExpertsRouting& routing);

/// Slots a preview routes at most (previewExperts).
inline constexpr std::int64_t kExpertsPreviewSlots = std::int64_t{1} << 18;

/// The tokens per rank previewExperts(in) routes: as many as fit in kExpertsPreviewSlots slots
/// (at least one), or in.tokensPerRank when that is no fewer, and for explicit assignments.
std::int64_t expertsPreviewTokens(const ExpertsInputs& in);

/// A quicker stand-in for routeExperts(in) while a slider moves over a large routing: each
/// source rank routes only its first expertsPreviewTokens(in) tokens (the very tokens, and
/// choices, routeExperts(in) begins with: each rank draws from its own stream), with the
/// capacity of that many slots, and every count (slots, drops, loads) is scaled up by
/// tokensPerRank over that number, rounded to whole slots. totalSlots and capacity are the
/// whole routing's; receivedPerRank and the imbalance follow from the scaled counts. When the
/// preview would route every token it is routeExperts(in) itself (previewTokensPerRank 0).
/// Validates first.
ExpertsResult previewExperts(const ExpertsInputs& in);

/// The router simulation's choices written out: for each source rank, its tokens' expert ids,
/// token after token, each token's topK ids in the order chosen. routeExperts() makes exactly
/// these choices (feeding them back as explicit assignments gives the same counts and drops).
/// Meant for small inputs (tests, a per-token view): ranks * tokensPerRank * topK above
/// kMaxListedSlots is refused (`experts.tokens_per_rank`). Ignores in.assignments. Validates
/// first.
std::vector<std::vector<std::int64_t>> routerAssignments(const ExpertsInputs& in);

/// One dispatch all-to-all of an MoE layer, in slots and bytes. Each slot carries one token's
/// hidden vector: hidden x bytesPerValue bytes. Slots that capacity drops are not sent (the
/// token skips that expert through the residual connection). The combine all-to-all returns
/// the expert outputs along the same paths, so a layer's forward pass moves these bytes twice.
struct AllToAllTraffic {
    std::int64_t bytesPerSlot = 0; ///< hidden x bytesPerValue
    /// Per destination rank d, what it receives, split three ways that add up to
    /// receivedPerRank[d]: kept slots of its own tokens (the diagonal, counts[d][d] less its
    /// drops), kept slots from other ranks, and slots its experts dropped.
    std::vector<std::int64_t> localPerRank;
    std::vector<std::int64_t> remotePerRank;
    std::vector<std::int64_t> droppedPerRank;
    std::int64_t localSlots = 0; ///< sum of localPerRank: slots that never leave their rank
    std::int64_t offRankSlots = 0; ///< sum of remotePerRank: slots the all-to-all moves
    std::int64_t localBytes = 0; ///< localSlots x bytesPerSlot (kept local)
    std::int64_t offRankBytes = 0; ///< offRankSlots x bytesPerSlot (sent off-rank)
};

/// The dispatch traffic of a routing result for tokens of `hidden` values at `bytesPerValue`
/// bytes each. These two are the tab's inputs, not scenario keys; both must be >= 1
/// (InputError `experts.hidden`, `experts.bytes_per_value`), and a byte total past the int64
/// range is refused (`experts.hidden`).
AllToAllTraffic allToAllTraffic(const ExpertsResult& result, std::int64_t hidden,
                                std::int64_t bytesPerValue);

/// The Switch Transformer's auxiliary load-balancing loss (Fedus et al. 2021, eq. 4, without
/// its weight alpha): E x sum over experts i of f_i x P_i, where E is the number of experts,
/// f_i the fraction of routed slots that chose expert i (expertLoad / totalSlots, before any
/// capacity drop) and P_i the router's mean probability for expert i (routerProbability).
/// Normalisation: f and P each sum to 1, and the factor E makes a perfectly balanced router
/// (f_i = P_i = 1/E) give exactly 1.0 for any E; with top_k > 1, f counts slots (tokens x
/// top_k), not tokens, so balance is 1.0 for any top_k too. Concentrating traffic on the
/// experts the router favours raises it, up to E. None when nothing is routed. Explicit
/// assignments carry no router, so their uniform P always gives 1.0 (up to rounding).
std::optional<double> loadBalancingLoss(const ExpertsResult& result);

namespace detail {
/// Draws per pick the router makes from its fast alias tables (rejecting experts the token
/// already holds) before it finishes the token from its sum trees, which are exact for any
/// weights but slower.
inline constexpr int kRouterMaxRejections = 8;
/// routerAssignments() with another rejection limit, for tests: 0 draws every token from the
/// sum trees alone. The choices differ with the limit, their distribution does not.
std::vector<std::vector<std::int64_t>> routerAssignments(const ExpertsInputs& in,
                                                         int maxRejections);
} // namespace detail

} // namespace scalelab::core
