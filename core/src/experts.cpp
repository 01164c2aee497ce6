#include "scalelab/core/experts.h"

#include "scalelab/core/error.h"
#include "scalelab/core/random.h"
#include "threads.h"

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <numeric>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace scalelab::core {

namespace {

/// Alias-table entries the router may build in total (16 bytes each).
constexpr std::int64_t kTableBudget = std::int64_t{1} << 20;
/// A sum tree holds the positions whose weight is within e^-kTreeSpan of its first position's,
/// so every weight it holds is a normal double (e^-708 is about 3.3e-308 > DBL_MIN).
constexpr double kTreeSpan = 708.0;
/// A new sum tree starts where weights fall e^-kTreeStep below the previous tree's first
/// position. A token uses the tree whose first position is the hottest it has not taken, so
/// the weights a tree leaves out are below e^-(708 - 300) of that position's: far below
/// rounding.
constexpr double kTreeStep = 300.0;
/// Largest capacity that is still a whole number in double precision.
constexpr double kMaxCapacity = 9007199254740992.0; // 2^53
/// A routing of at least this many slots draws its source ranks on every core (below it,
/// starting threads costs more than it saves: about half a millisecond of draws).
constexpr std::int64_t kParallelRouterSlots = std::int64_t{1} << 17;
/// Most per-rank histogram entries the router holds at once while drawing ranks side by side
/// (8 bytes each: 8 MB).
constexpr std::int64_t kRouterBatchEntries = std::int64_t{1} << 20;

__extension__ using Wide = unsigned __int128; // a GCC/Clang extension, as in random.h

/// Vose's alias table: one draw in O(1) from fixed non-negative weights.
class AliasTable {
public:
    /// `weights` are non-negative and weights[0] is the largest (positive) one.
    explicit AliasTable(const std::vector<double>& weights)
        : m_entries(weights.size())
        , m_size(weights.size())
        , m_threshold((0 - m_size) % m_size)
    {
        const auto n = weights.size();
        double total = 0.0;
        // Sum the small weights first so they are not lost against the large ones.
        for (auto i = n; i-- > 0;)
            total += weights[i];
        std::vector<double> scaled(n);
        std::vector<std::int32_t> small;
        std::vector<std::int32_t> large;
        for (std::size_t i = 0; i < n; ++i) {
            scaled[i] = weights[i] * static_cast<double>(n) / total;
            (scaled[i] < 1.0 ? small : large).push_back(static_cast<std::int32_t>(i));
        }
        std::vector<double> accept(n, 1.0);
        std::vector<std::int32_t> alias(n);
        std::iota(alias.begin(), alias.end(), 0);
        while (!small.empty() && !large.empty()) {
            const std::int32_t s = small.back();
            small.pop_back();
            const std::int32_t l = large.back();
            large.pop_back();
            accept[static_cast<std::size_t>(s)] = scaled[static_cast<std::size_t>(s)];
            alias[static_cast<std::size_t>(s)] = l;
            auto& rest = scaled[static_cast<std::size_t>(l)];
            rest = (rest + scaled[static_cast<std::size_t>(s)]) - 1.0;
            (rest < 1.0 ? small : large).push_back(l);
        }
        // What is left is worth one full column up to rounding (accept 1, alias itself); a
        // zero weight left over by rounding must still never be drawn, so it defers to the
        // heaviest entry.
        for (const auto i : small) {
            if (weights[static_cast<std::size_t>(i)] == 0.0) {
                accept[static_cast<std::size_t>(i)] = 0.0;
                alias[static_cast<std::size_t>(i)] = 0;
            }
        }
        for (std::size_t i = 0; i < n; ++i) {
            // uniform() < accept, with uniform() = k / 2^53, is k < ceil(accept * 2^53).
            const double bits = std::ceil(std::clamp(accept[i], 0.0, 1.0) * 0x1.0p53);
            m_entries[i] = {static_cast<std::uint64_t>(bits), alias[i]};
        }
    }

    [[gnu::always_inline]] inline std::int32_t draw(Rng& rng) const
    {
        // One 64-bit draw r serves both steps. The column is floor(r * n / 2^64), Lemire's
        // multiply-shift with its rejection (as Rng::below() does, but with the threshold
        // computed once per table). The low 64 bits of r * n, given the column, step evenly
        // through [0, 2^64) in strides of n, so their top 53 bits are a uniform fraction up to
        // n / 2^64, far below the rounding of the weights themselves.
        Wide product = static_cast<Wide>(rng.next()) * m_size;
        while (static_cast<std::uint64_t>(product) < m_threshold)
            product = static_cast<Wide>(rng.next()) * m_size;
        const auto column = static_cast<std::int32_t>(product >> 64);
        const Entry& entry = m_entries[static_cast<std::size_t>(column)];
        const auto fraction = static_cast<std::uint64_t>(product) >> 11;
        // Select without a branch: which of the two wins is a coin flip the processor
        // cannot predict.
        const std::int32_t useAlias = -static_cast<std::int32_t>(fraction >= entry.acceptBits);
        return column ^ ((column ^ entry.alias) & useAlias);
    }

private:
    struct Entry {
        std::uint64_t acceptBits = 0; ///< keep the column when 53 random bits are below this
        std::int32_t alias = 0;
    };
    std::vector<Entry> m_entries;
    std::uint64_t m_size;
    std::uint64_t m_threshold;
};

/// A sum tree over the positions [begin, end) with weights relative to position begin:
/// weighted draws in O(log n), and positions can be taken out and put back. Every inner
/// node is recomputed as left + right, so putting a position back restores the tree bit for
/// bit.
class SumTree {
public:
    SumTree(std::int32_t begin, std::int32_t end, const std::vector<double>& weights)
        : m_begin(begin)
        , m_end(end)
        , m_weights(weights)
    {
        while (m_leaves < m_weights.size())
            m_leaves *= 2;
        m_node.assign(2 * m_leaves, 0.0);
        std::copy(m_weights.begin(), m_weights.end(),
                  m_node.begin() + static_cast<std::ptrdiff_t>(m_leaves));
        for (std::size_t i = m_leaves; i-- > 1;)
            m_node[i] = m_node[2 * i] + m_node[2 * i + 1];
    }

    std::int32_t begin() const { return m_begin; }
    bool holds(std::int32_t p) const { return p >= m_begin && p < m_end; }

    /// Takes position p out (weight 0) or puts it back.
    void set(std::int32_t p, bool present)
    {
        const auto leaf = static_cast<std::size_t>(p - m_begin);
        std::size_t i = m_leaves + leaf;
        m_node[i] = present ? m_weights[leaf] : 0.0;
        for (i /= 2; i >= 1; i /= 2)
            m_node[i] = m_node[2 * i] + m_node[2 * i + 1];
    }

    /// A position drawn in proportion to the weights present; at least one must be positive.
    std::int32_t draw(Rng& rng) const
    {
        double u = rng.uniform() * m_node[1];
        std::size_t i = 1;
        while (i < m_leaves) {
            const double left = m_node[2 * i];
            // Rounding may leave u at or past the sum; never step into an empty subtree.
            if (u < left || m_node[2 * i + 1] == 0.0) {
                i = 2 * i;
            } else {
                u -= left;
                i = 2 * i + 1;
            }
        }
        return m_begin + static_cast<std::int32_t>(i - m_leaves);
    }

private:
    std::int32_t m_begin;
    std::int32_t m_end;
    std::vector<double> m_weights;
    std::size_t m_leaves = 1;
    std::vector<double> m_node; ///< m_node[1] is the root; leaves start at m_leaves
};

/// The seeded router. Experts are handled by popularity position (0 = hottest), where the
/// weight of position p is (p + 1)^-skew; a random permutation maps positions to expert ids.
///
/// A token's picks come from alias tables, rejecting positions the token already holds. Table
/// m serves a token whose positions 0..m-1 are all taken (usual under skew): it holds only
/// positions m..n-1, so rejections stay rare. When a pick is rejected maxRejections times, the
/// token's taken positions carry most of the weight, and the rest of the token is drawn from
/// sum trees with the taken positions removed: exact, and O(log n) however lopsided the
/// weights are.
class Router {
public:
    /// maxRejections: alias-table draws per pick before the token moves to the sum trees.
    Router(std::int64_t experts, std::int64_t topK, double skew, ExpertPopularity popularity,
           Rng& rng, int maxRejections)
        : m_n(static_cast<std::int32_t>(experts))
        , m_k(static_cast<std::int32_t>(topK))
        , m_maxRejections(maxRejections)
        , m_expertAt(static_cast<std::size_t>(experts))
        , m_mark(static_cast<std::size_t>(experts), 0)
        , m_token(static_cast<std::size_t>(topK))
    {
        // Fisher-Yates: which expert is hot is the seed's choice.
        std::iota(m_expertAt.begin(), m_expertAt.end(), 0);
        for (std::int32_t p = m_n - 1; p > 0; --p) {
            const auto q = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(p) + 1));
            std::swap(m_expertAt[static_cast<std::size_t>(p)],
                      m_expertAt[static_cast<std::size_t>(q)]);
        }
        // Ordered by id, the shuffle above still consumed its draws: the tokens then draw the
        // same positions, and only the experts those positions name differ.
        if (popularity == ExpertPopularity::ById)
            std::iota(m_expertAt.begin(), m_expertAt.end(), 0);

        // Zipf-like popularity: weight (p + 1)^-skew, the one formula behind every table.
        m_weights.resize(static_cast<std::size_t>(m_n));
        for (std::int32_t p = 0; p < m_n; ++p)
            m_weights[static_cast<std::size_t>(p)] = std::pow(static_cast<double>(p) + 1.0, -skew);
        // Ratios to another position are taken in logs, where they cannot underflow.
        std::vector<double> logRank(static_cast<std::size_t>(m_n));
        for (std::int32_t p = 0; p < m_n; ++p)
            logRank[static_cast<std::size_t>(p)] = std::log(static_cast<double>(p) + 1.0);
        const auto logRatio = [&](std::int32_t p, std::int32_t base) { // -log(w(p) / w(base))
            return skew
                * (logRank[static_cast<std::size_t>(p)] - logRank[static_cast<std::size_t>(base)]);
        };

        std::int64_t used = 0;
        for (std::int32_t m = 0; m < m_k; ++m) {
            const std::int64_t size = m_n - m;
            if (m > 0 && used + size > kTableBudget)
                break;
            used += size;
            std::vector<double> weights(static_cast<std::size_t>(size));
            for (std::int32_t p = m; p < m_n; ++p) {
                // w(p) / w(m); subnormal ones carry too few bits to be drawn faithfully and
                // are left to the sum trees, whose weights are relative to a nearer position.
                double w =
                    m == 0 ? m_weights[static_cast<std::size_t>(p)] : std::exp(-logRatio(p, m));
                if (w < DBL_MIN)
                    w = 0.0;
                weights[static_cast<std::size_t>(p - m)] = w;
            }
            m_tables.emplace_back(weights);
        }
        m_lastTable = static_cast<std::int32_t>(m_tables.size()) - 1;

        // Sum trees, each starting where the previous one's weights have fallen by e^-300;
        // only positions a token can have as its hottest free one (below topK) need a tree.
        std::int32_t begin = 0;
        while (begin < m_k) {
            std::int32_t next = begin + 1;
            while (next < m_n && logRatio(next, begin) <= kTreeStep)
                ++next;
            std::int32_t end = next;
            while (end < m_n && logRatio(end, begin) <= kTreeSpan)
                ++end;
            std::vector<double> weights(static_cast<std::size_t>(end - begin));
            for (std::int32_t p = begin; p < end; ++p)
                weights[static_cast<std::size_t>(p - begin)] = std::exp(-logRatio(p, begin));
            m_trees.emplace_back(begin, end, weights);
            begin = next;
        }
    }

    std::int32_t expertAt(std::int32_t position) const
    {
        return m_expertAt[static_cast<std::size_t>(position)];
    }

    /// Probability of each expert id on a single draw.
    std::vector<double> probabilities() const
    {
        double total = 0.0;
        for (auto p = m_weights.size(); p-- > 0;)
            total += m_weights[p];
        std::vector<double> out(m_weights.size());
        for (std::size_t p = 0; p < m_weights.size(); ++p)
            out[static_cast<std::size_t>(m_expertAt[p])] = m_weights[p] / total;
        return out;
    }

    /// Draws `tokens` tokens one after the other; for each, calls sink(positions), where
    /// positions points at its topK distinct popularity positions in the order chosen.
    template <typename Sink> void drawTokens(Rng& generator, std::int64_t tokens, Sink&& sink)
    {
        // A local copy lets the compiler keep the generator's state in registers.
        Rng rng = generator;
        std::int32_t* out = m_token.data();
        for (std::int64_t t = 0; t < tokens; ++t) {
            drawToken(rng, out);
            sink(static_cast<const std::int32_t*>(out));
        }
        generator = rng;
    }

private:
    /// Writes one token's topK distinct positions to out[0..topK), in the order chosen.
    [[gnu::always_inline]] inline void drawToken(Rng& rng, std::int32_t* out)
    {
        if (++m_stamp == 0) { // the marks wrapped around: start them afresh
            std::fill(m_mark.begin(), m_mark.end(), 0);
            m_stamp = 1;
        }
        if (m_maxRejections == 0) {
            finishFromTrees(rng, out, 0, 0);
            return;
        }
        // Locals, because stores to the marks could otherwise alias the members.
        const std::uint32_t stamp = m_stamp;
        std::uint32_t* const mark = m_mark.data();
        const std::int32_t k = m_k;
        const std::int32_t lastTable = m_lastTable;
        const int maxRejections = m_maxRejections;
        const AliasTable* const tables = m_tables.data();
        // The first pick has nothing to avoid.
        const std::int32_t first = tables[0].draw(rng);
        out[0] = first;
        std::int32_t firstFree = first == 0 ? 1 : 0; // every position below it is taken
        for (std::int32_t j = 1; j < k; ++j) {
            mark[out[j - 1]] = stamp;
            while (mark[firstFree] == stamp) // stops: fewer than n positions are taken
                ++firstFree;
            const std::int32_t base = std::min(firstFree, lastTable);
            const AliasTable& table = tables[base];
            // Drawing from all of the table's positions and rejecting the taken ones leaves
            // each free position with probability proportional to its weight.
            std::int32_t pick = base + table.draw(rng);
            for (int attempt = 1; mark[pick] == stamp; ++attempt) {
                if (attempt == maxRejections) {
                    finishFromTrees(rng, out, j, firstFree);
                    return;
                }
                pick = base + table.draw(rng);
            }
            out[j] = pick;
        }
    }

    /// Fills out[j..topK) from the sum trees; out[0..j) are taken (and marked), firstFree is
    /// the hottest position not taken.
    [[gnu::noinline]] void finishFromTrees(Rng& rng, std::int32_t* out, std::int32_t j,
                                           std::int32_t firstFree)
    {
        std::size_t tree = treeFor(firstFree);
        takeOut(tree, out, j);
        for (; j < m_k; ++j) {
            const std::int32_t pick = m_trees[tree].draw(rng);
            out[j] = pick;
            if (j + 1 == m_k)
                break;
            m_mark[static_cast<std::size_t>(pick)] = m_stamp;
            m_trees[tree].set(pick, false);
            m_takenOut.emplace_back(tree, pick);
            while (m_mark[static_cast<std::size_t>(firstFree)] == m_stamp)
                ++firstFree;
            if (tree + 1 < m_trees.size() && firstFree >= m_trees[tree + 1].begin()) {
                // The hottest free position moved on: so does the tree, which must first
                // lose every position this token already holds.
                tree = treeFor(firstFree);
                takeOut(tree, out, j + 1);
            }
        }
        for (const auto& [t, p] : m_takenOut)
            m_trees[t].set(p, true);
        m_takenOut.clear();
    }

    /// The last tree starting at or before position p.
    std::size_t treeFor(std::int32_t p) const
    {
        const auto after = std::upper_bound(
            m_trees.begin(), m_trees.end(), p,
            [](std::int32_t position, const SumTree& tree) { return position < tree.begin(); });
        return static_cast<std::size_t>(after - m_trees.begin()) - 1;
    }

    void takeOut(std::size_t tree, const std::int32_t* positions, std::int32_t count)
    {
        for (std::int32_t i = 0; i < count; ++i) {
            if (m_trees[tree].holds(positions[i])) {
                m_trees[tree].set(positions[i], false);
                m_takenOut.emplace_back(tree, positions[i]);
            }
        }
    }

    std::int32_t m_n;
    std::int32_t m_k;
    int m_maxRejections;
    std::vector<std::int32_t> m_expertAt; ///< expert id at each popularity position
    std::vector<double> m_weights; ///< (p + 1)^-skew for each position p
    std::vector<AliasTable> m_tables; ///< m_tables[m]: positions m..n-1
    std::int32_t m_lastTable = 0;
    std::vector<SumTree> m_trees; ///< in order of their first positions, the first at 0
    std::vector<std::pair<std::size_t, std::int32_t>> m_takenOut; ///< to put back after a token
    std::vector<std::uint32_t> m_mark; ///< m_mark[p] == m_stamp: the current token took p
    std::uint32_t m_stamp = 0;
    std::vector<std::int32_t> m_token; ///< the current token's positions
};

std::int64_t routedSlots(const ExpertsInputs& in)
{
    if (in.assignments) {
        std::int64_t total = 0;
        for (const auto& list : *in.assignments)
            total += static_cast<std::int64_t>(list.size());
        return total;
    }
    return in.ranks * in.tokensPerRank * in.topK; // validate() bounded it
}

/// Adds one source rank's slots per expert to the result, dropping what exceeds capacity.
/// Earlier ranks have already claimed their share (kept[e]), so first come, first served.
void addSourceRank(ExpertsResult& r, std::size_t source, std::span<const std::int64_t> slots,
                   std::vector<std::int64_t>& kept, bool limited)
{
    for (std::size_t e = 0; e < slots.size(); ++e) {
        const std::int64_t n = slots[e];
        if (n == 0)
            continue;
        const auto owner = static_cast<std::size_t>(r.expertToRank[e]);
        r.counts[source][owner] += n;
        r.expertLoad[e] += n;
        if (!limited)
            continue;
        const std::int64_t keep = std::min(n, std::max<std::int64_t>(0, r.capacity - kept[e]));
        kept[e] += keep;
        r.droppedPerExpert[e] += n - keep;
        r.droppedCounts[source][owner] += n - keep;
        r.dropped += n - keep;
    }
}

std::string number(std::int64_t v)
{
    return std::to_string(v);
}

} // namespace

void validate(const ExpertsInputs& in)
{
    require(in.ranks >= 1 && in.ranks <= kMaxExpertRanks, "experts.ranks",
            "a whole number in 1.." + number(kMaxExpertRanks)
                + " (the ranks x ranks count matrices must fit in memory)");
    require(in.experts >= 1 && in.experts <= kMaxExperts, "experts.experts",
            "a whole number in 1.." + number(kMaxExperts));
    const bool router = !in.assignments;
    if (router)
        require(in.topK >= 1 && in.topK <= in.experts, "experts.top_k",
                "a whole number in 1.." + number(in.experts)
                    + " (each token picks that many distinct experts, at most experts)");
    else
        require(in.topK >= 1, "experts.top_k", "a whole number >= 1");
    require(in.tokensPerRank >= 1, "experts.tokens_per_rank", "a whole number >= 1");
    require(std::isfinite(in.skew) && in.skew >= 0.0, "experts.skew", "a finite number >= 0");
    require(std::isfinite(in.capacityFactor) && in.capacityFactor >= 0.0, "experts.capacity_factor",
            "a finite number, 0 (unlimited) or > 0");
    require(in.seed >= 0, "experts.seed", "a whole number >= 0");

    if (in.expertToRank) {
        const auto& owners = *in.expertToRank;
        require(static_cast<std::int64_t>(owners.size()) == in.experts, "experts.expert_to_rank",
                "a list of exactly " + number(in.experts) + " rank ids, one per expert");
        for (std::size_t e = 0; e < owners.size(); ++e)
            require(owners[e] >= 0 && owners[e] < in.ranks,
                    "experts.expert_to_rank[" + std::to_string(e) + "]",
                    "a rank id in 0.." + number(in.ranks - 1));
    } else {
        require(in.experts % in.ranks == 0, "experts.experts",
                "a multiple of experts.ranks (" + number(in.ranks)
                    + ") when experts.expert_to_rank is absent, so each rank owns an equal block");
    }

    if (in.assignments) {
        const auto& lists = *in.assignments;
        require(static_cast<std::int64_t>(lists.size()) == in.ranks, "experts.assignments",
                "exactly " + number(in.ranks) + " lists of expert ids, one per source rank");
        for (std::size_t s = 0; s < lists.size(); ++s)
            for (std::size_t i = 0; i < lists[s].size(); ++i)
                require(lists[s][i] >= 0 && lists[s][i] < in.experts,
                        "experts.assignments[" + std::to_string(s) + "][" + std::to_string(i) + "]",
                        "an expert id in 0.." + number(in.experts - 1));
    } else {
        // ranks * top_k is at most 2^12 * 2^16, so the division below cannot overflow.
        const std::int64_t perToken = in.ranks * in.topK;
        const std::int64_t maxTokens = kMaxRoutedSlots / perToken;
        require(in.tokensPerRank <= maxTokens, "experts.tokens_per_rank",
                "small enough that ranks x tokens_per_rank x top_k is at most "
                    + number(kMaxRoutedSlots) + " routed slots ("
                    + (maxTokens > 0 ? "here at most " + number(maxTokens) + " tokens per rank"
                                     : "ranks x top_k alone is already too many")
                    + ")");
    }

    if (in.capacityFactor > 0.0) {
        const double capacity = in.capacityFactor * static_cast<double>(routedSlots(in))
            / static_cast<double>(in.experts);
        require(capacity <= kMaxCapacity, "experts.capacity_factor",
                "a factor small enough that ceil(capacity_factor x slots / experts) stays "
                "within 2^53");
    }
}

std::vector<std::vector<std::int64_t>>
allToAllCounts(const std::vector<std::vector<std::int64_t>>& assignments,
               const std::vector<std::int64_t>& expertToRank, std::int64_t ranks)
{
    // The chapter's all-to-all count: each chosen expert sends one slot to its owner.
    std::vector<std::vector<std::int64_t>> counts(
        static_cast<std::size_t>(ranks),
        std::vector<std::int64_t>(static_cast<std::size_t>(ranks)));
    for (std::size_t s = 0; s < assignments.size(); ++s)
        for (const std::int64_t e : assignments[s])
            counts[s][static_cast<std::size_t>(expertToRank[static_cast<std::size_t>(e)])] += 1;
    return counts;
}

std::vector<std::int64_t> expertOwners(const ExpertsInputs& in)
{
    validate(in);
    if (in.expertToRank)
        return *in.expertToRank;
    const std::int64_t block = in.experts / in.ranks;
    std::vector<std::int64_t> owners(static_cast<std::size_t>(in.experts));
    for (std::int64_t e = 0; e < in.experts; ++e)
        owners[static_cast<std::size_t>(e)] = e / block;
    return owners;
}

std::int64_t expertCapacity(double capacityFactor, std::int64_t totalSlots, std::int64_t experts)
{
    if (!(capacityFactor > 0.0))
        return 0;
    // Capacity per expert: ceil(capacity_factor * slots / experts), in double, left to right.
    return static_cast<std::int64_t>(
        std::ceil(capacityFactor * static_cast<double>(totalSlots) / static_cast<double>(experts)));
}

namespace {

/// The router of `in` and the stream seeds of its source ranks: the shuffle draws from
/// Rng(seed), and rank s then draws its tokens from Rng(base + s), where base is that stream's
/// next draw. Each rank's tokens thus depend on the seed and the rank alone, so ranks may be
/// drawn on any number of threads and give the same routing.
struct SeededRouter {
    Router router;
    std::uint64_t base = 0;

    SeededRouter(const ExpertsInputs& in, int maxRejections)
        : SeededRouter(in, maxRejections, Rng(static_cast<std::uint64_t>(in.seed)))
    {
    }

private:
    SeededRouter(const ExpertsInputs& in, int maxRejections, Rng rng)
        : router(in.experts, in.topK, in.skew, in.popularity, rng, maxRejections)
        , base(rng.next())
    {
    }
};

/// Rng(base + s): source rank s's stream.
Rng rankStream(std::uint64_t base, std::size_t s)
{
    return Rng(base + static_cast<std::uint64_t>(s));
}

/// Threads for a router draw of `slots` slots over `ranks` ranks.
int routerThreads(std::int64_t slots, std::int64_t ranks)
{
    if (slots < kParallelRouterSlots)
        return 1;
    const auto cores = static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
    return static_cast<int>(std::min({cores, ranks, std::int64_t{16}}));
}

/// Counts, for ranks first .. first + count - 1, how many of each rank's slots took each
/// popularity position: rank first + i's counts go to byPosition[i * experts ...]. Each thread
/// takes the next rank not yet taken (one that starts late or is interrupted does fewer, instead
/// of holding up the end), with its own copy of the router (a token's draw marks the positions
/// it took); a rank's counts depend on its stream alone, not on the thread.
void countPositions(const ExpertsInputs& in, const SeededRouter& seeded, std::size_t first,
                    std::size_t count, int threads, std::vector<std::int64_t>& byPosition)
{
    const auto experts = static_cast<std::size_t>(in.experts);
    const auto k = static_cast<std::size_t>(in.topK);
    std::atomic<std::size_t> next{0};
    const auto work = [&](std::size_t) {
        Router router = seeded.router;
        for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < count;) {
            std::int64_t* histogram = byPosition.data() + i * experts;
            if (in.topK == in.experts) { // every token takes every expert: no draws needed
                std::fill(histogram, histogram + experts, in.tokensPerRank);
                continue;
            }
            std::fill(histogram, histogram + experts, 0);
            Rng rng = rankStream(seeded.base, first + i);
            router.drawTokens(rng, in.tokensPerRank, [histogram, k](const std::int32_t* p) {
                for (std::size_t j = 0; j < k; ++j)
                    ++histogram[p[j]];
            });
        }
    };
    detail::runOnThreads(static_cast<std::size_t>(threads), work);
}

/// Draws (or counts) the slots of `in` and calls visit(s, slots) with source rank s's slots
/// per expert id, rank after rank in order. Returns the router's probabilities (uniform for
/// explicit assignments). `in` is validated.
template <class Visit> std::vector<double> sourceRankSlots(const ExpertsInputs& in, Visit visit)
{
    const auto ranks = static_cast<std::size_t>(in.ranks);
    const auto experts = static_cast<std::size_t>(in.experts);
    std::vector<std::int64_t> slots(experts, 0);
    if (in.assignments) {
        // Within one source rank only the number of slots per expert matters: the drops of a
        // rank come after all earlier ranks' slots, whatever their order inside the rank.
        for (std::size_t s = 0; s < ranks; ++s) {
            std::fill(slots.begin(), slots.end(), 0);
            for (const std::int64_t e : (*in.assignments)[s])
                ++slots[static_cast<std::size_t>(e)];
            visit(s, slots);
        }
        return std::vector<double>(experts, 1.0 / static_cast<double>(in.experts));
    }
    const SeededRouter seeded(in, detail::kRouterMaxRejections);
    const int threads = routerThreads(routedSlots(in), in.ranks);
    // Ranks are drawn in batches (every thread busy, the histograms within kRouterBatchEntries)
    // and then visited in order.
    const auto batch = static_cast<std::size_t>(std::max<std::int64_t>(
        threads, std::min<std::int64_t>(in.ranks, kRouterBatchEntries / in.experts)));
    std::vector<std::int64_t> byPosition(batch * experts);
    for (std::size_t first = 0; first < ranks; first += batch) {
        const std::size_t count = std::min(batch, ranks - first);
        countPositions(in, seeded, first, count, threads, byPosition);
        for (std::size_t i = 0; i < count; ++i) {
            const std::int64_t* histogram = byPosition.data() + i * experts;
            for (std::size_t p = 0; p < experts; ++p)
                slots[static_cast<std::size_t>(
                    seeded.router.expertAt(static_cast<std::int32_t>(p)))] = histogram[p];
            visit(first + i, slots);
        }
    }
    return seeded.router.probabilities();
}

/// A result for `in` with its owners, totals and capacity set and every count at zero.
ExpertsResult emptyResult(const ExpertsInputs& in, std::vector<std::int64_t> owners,
                          std::int64_t totalSlots)
{
    ExpertsResult r;
    r.expertToRank = std::move(owners);
    const auto ranks = static_cast<std::size_t>(in.ranks);
    const auto experts = static_cast<std::size_t>(in.experts);
    r.counts.assign(ranks, std::vector<std::int64_t>(ranks, 0));
    r.droppedCounts.assign(ranks, std::vector<std::int64_t>(ranks, 0));
    r.expertLoad.assign(experts, 0);
    r.droppedPerExpert.assign(experts, 0);
    r.totalSlots = totalSlots;
    r.capacity = expertCapacity(in.capacityFactor, r.totalSlots, in.experts);
    return r;
}

/// What each rank receives and the imbalance, once every source rank is added.
void finishResult(const ExpertsInputs& in, ExpertsResult& r)
{
    const auto ranks = static_cast<std::size_t>(in.ranks);
    r.receivedPerRank.assign(ranks, 0);
    for (std::size_t s = 0; s < ranks; ++s)
        for (std::size_t d = 0; d < ranks; ++d)
            r.receivedPerRank[d] += r.counts[s][d];
    if (r.totalSlots > 0) {
        // Imbalance: the busiest rank over the mean, max / (total / ranks).
        const std::int64_t busiest =
            *std::max_element(r.receivedPerRank.begin(), r.receivedPerRank.end());
        r.imbalance = static_cast<double>(busiest) * static_cast<double>(in.ranks)
            / static_cast<double>(r.totalSlots);
    }
}

} // namespace

ExpertsResult routeExperts(const ExpertsInputs& in)
{
    std::vector<std::int64_t> owners = expertOwners(in); // validates, before routedSlots
    ExpertsResult r = emptyResult(in, std::move(owners), routedSlots(in));
    const bool limited = in.capacityFactor > 0.0;
    std::vector<std::int64_t> kept(static_cast<std::size_t>(in.experts), 0);
    r.routerProbability =
        sourceRankSlots(in, [&](std::size_t s, const std::vector<std::int64_t>& slots) {
            addSourceRank(r, s, slots, kept, limited);
        });
    finishResult(in, r);
    return r;
}

ExpertsRouting drawExpertsRouting(const ExpertsInputs& in)
{
    ExpertsRouting routing;
    routing.expertToRank = expertOwners(in); // validates
    require(keepsRouting(in), "experts.experts",
            "at most " + number(kMaxRoutingEntries) + " ranks x experts for a kept routing");
    routing.ranks = in.ranks;
    routing.experts = in.experts;
    routing.totalSlots = routedSlots(in);
    routing.sent.resize(static_cast<std::size_t>(in.ranks * in.experts));
    routing.routerProbability =
        sourceRankSlots(in, [&](std::size_t s, const std::vector<std::int64_t>& slots) {
            std::copy(slots.begin(), slots.end(), routing.sent.begin() + s * slots.size());
        });
    return routing;
}

ExpertsResult routeExperts(const ExpertsInputs& in, const ExpertsRouting& routing)
{
    validate(in);
    require(routing.ranks == in.ranks && routing.experts == in.experts, "experts.experts",
            "a routing drawn for these ranks and experts");
    ExpertsResult r = emptyResult(in, routing.expertToRank, routing.totalSlots);
    const bool limited = in.capacityFactor > 0.0;
    const auto experts = static_cast<std::size_t>(in.experts);
    std::vector<std::int64_t> kept(experts, 0);
    for (std::size_t s = 0; s < static_cast<std::size_t>(in.ranks); ++s)
        addSourceRank(r, s, std::span(routing.sent).subspan(s * experts, experts), kept, limited);
    r.routerProbability = routing.routerProbability;
    finishResult(in, r);
    return r;
}

std::int64_t expertsPreviewTokens(const ExpertsInputs& in)
{
    validate(in);
    if (in.assignments)
        return in.tokensPerRank;
    const std::int64_t perToken = in.ranks * in.topK; // validate() bounded both
    return std::min(in.tokensPerRank, std::max<std::int64_t>(1, kExpertsPreviewSlots / perToken));
}

ExpertsResult previewExperts(const ExpertsInputs& in)
{
    ExpertsInputs part = in;
    part.tokensPerRank = expertsPreviewTokens(in); // validates
    if (part.tokensPerRank == in.tokensPerRank)
        return routeExperts(in);
    ExpertsResult r = routeExperts(part);
    const double scale =
        static_cast<double>(in.tokensPerRank) / static_cast<double>(part.tokensPerRank);
    const auto scaleUp = [scale](std::vector<std::int64_t>& values) {
        for (std::int64_t& v : values)
            v = std::llround(static_cast<double>(v) * scale);
    };
    for (auto* rows : {&r.counts, &r.droppedCounts})
        for (std::vector<std::int64_t>& row : *rows)
            scaleUp(row);
    scaleUp(r.expertLoad);
    scaleUp(r.droppedPerExpert);
    r.dropped =
        std::accumulate(r.droppedPerExpert.begin(), r.droppedPerExpert.end(), std::int64_t{0});
    r.totalSlots = routedSlots(in);
    r.capacity = expertCapacity(in.capacityFactor, r.totalSlots, in.experts);
    r.previewTokensPerRank = part.tokensPerRank;
    finishResult(in, r);
    return r;
}

AllToAllTraffic allToAllTraffic(const ExpertsResult& result, std::int64_t hidden,
                                std::int64_t bytesPerValue)
{
    require(hidden >= 1, "experts.hidden", "a whole number >= 1 (values per token)");
    require(bytesPerValue >= 1, "experts.bytes_per_value", "a whole number >= 1");
    AllToAllTraffic t;
    t.bytesPerSlot = checkedMul(hidden, bytesPerValue, "experts.hidden");
    const std::size_t ranks = result.counts.size();
    t.localPerRank.assign(ranks, 0);
    t.remotePerRank.assign(ranks, 0);
    t.droppedPerRank.assign(ranks, 0);
    for (std::size_t s = 0; s < ranks; ++s) {
        for (std::size_t d = 0; d < ranks; ++d) {
            const std::int64_t dropped = result.droppedCounts[s][d];
            const std::int64_t kept = result.counts[s][d] - dropped;
            // The diagonal never crosses the network; everything else is the all-to-all.
            (s == d ? t.localPerRank : t.remotePerRank)[d] += kept;
            t.droppedPerRank[d] += dropped;
        }
    }
    for (std::size_t d = 0; d < ranks; ++d) {
        t.localSlots += t.localPerRank[d];
        t.offRankSlots += t.remotePerRank[d];
    }
    t.localBytes = checkedMul(t.localSlots, t.bytesPerSlot, "experts.hidden");
    t.offRankBytes = checkedMul(t.offRankSlots, t.bytesPerSlot, "experts.hidden");
    return t;
}

std::optional<double> loadBalancingLoss(const ExpertsResult& result)
{
    if (result.totalSlots <= 0)
        return std::nullopt;
    // Switch Transformer balance loss: E * sum_i f_i * P_i, with f_i = load_i / slots.
    const auto total = static_cast<double>(result.totalSlots);
    double sum = 0.0;
    for (std::size_t e = 0; e < result.expertLoad.size(); ++e)
        sum += static_cast<double>(result.expertLoad[e]) / total * result.routerProbability[e];
    return static_cast<double>(result.expertLoad.size()) * sum;
}

std::vector<std::vector<std::int64_t>> routerAssignments(const ExpertsInputs& in)
{
    return detail::routerAssignments(in, detail::kRouterMaxRejections);
}

std::vector<std::vector<std::int64_t>> detail::routerAssignments(const ExpertsInputs& in,
                                                                 int maxRejections)
{
    if (in.assignments) { // the listing is of the router's choices: drop the explicit ones
        ExpertsInputs routed = in;
        routed.assignments.reset();
        return routerAssignments(routed, maxRejections);
    }
    validate(in);
    require(in.tokensPerRank <= kMaxListedSlots / (in.ranks * in.topK), "experts.tokens_per_rank",
            "small enough that ranks x tokens_per_rank x top_k is at most "
                + number(kMaxListedSlots) + " slots, the most a per-token listing holds");

    SeededRouter seeded(in, std::max(0, maxRejections));
    Router& router = seeded.router;
    const auto k = static_cast<std::size_t>(in.topK);
    std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(in.ranks));
    for (std::size_t s = 0; s < out.size(); ++s) {
        std::vector<std::int64_t>& list = out[s];
        list.reserve(static_cast<std::size_t>(in.tokensPerRank) * k);
        Rng rng = rankStream(seeded.base, s);
        router.drawTokens(rng, in.tokensPerRank, [&](const std::int32_t* p) {
            for (std::size_t j = 0; j < k; ++j)
                list.push_back(router.expertAt(p[j]));
        });
    }
    return out;
}

} // namespace scalelab::core
