#include "scalelab/core/experts.h"
#include "testhelpers.h"

#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

using namespace scalelab::core;

using List = std::vector<std::int64_t>;
using Matrix = std::vector<std::vector<std::int64_t>>;

Q_DECLARE_METATYPE(scalelab::core::ExpertsInputs)

namespace {

ExpertsInputs explicitInputs(std::int64_t ranks, std::int64_t experts, Matrix assignments,
                             std::optional<List> owners = std::nullopt, double capacity = 0.0)
{
    ExpertsInputs in;
    in.ranks = ranks;
    in.experts = experts;
    in.assignments = std::move(assignments);
    in.expertToRank = std::move(owners);
    in.capacityFactor = capacity;
    return in;
}

ExpertsInputs routerInputs(std::int64_t ranks, std::int64_t experts, std::int64_t topK, double skew,
                           std::int64_t tokensPerRank, std::int64_t seed = 1)
{
    ExpertsInputs in;
    in.ranks = ranks;
    in.experts = experts;
    in.topK = topK;
    in.skew = skew;
    in.tokensPerRank = tokensPerRank;
    in.seed = seed;
    return in;
}

/// Compares the counts, loads, totals, capacity and drops of two results (QCOMPARE each: the
/// caller checks QTest::currentTestFailed()).
void compareCountsAndDrops(const ExpertsResult& a, const ExpertsResult& b)
{
    QCOMPARE(a.counts, b.counts);
    QCOMPARE(a.expertLoad, b.expertLoad);
    QCOMPARE(a.receivedPerRank, b.receivedPerRank);
    QCOMPARE(a.totalSlots, b.totalSlots);
    QCOMPARE(a.capacity, b.capacity);
    QCOMPARE(a.droppedPerExpert, b.droppedPerExpert);
    QCOMPARE(a.droppedCounts, b.droppedCounts);
    QCOMPARE(a.dropped, b.dropped);
}

Matrix zeros(std::size_t n)
{
    return Matrix(n, List(n, 0));
}

/// A binomial count of `trials` with success probability q lies within 5 standard deviations
/// of its mean except with probability below 1e-6; the +1 absorbs the discreteness of counts
/// whose mean is near zero.
bool withinFiveSigma(double count, double trials, double q)
{
    const double sd = std::sqrt(trials * q * (1.0 - q));
    const bool ok = std::abs(count - trials * q) <= 5.0 * sd + 1.0;
    if (!ok)
        qWarning("count %.0f, expected %.2f +- 5 x %.2f", count, trials * q, sd);
    return ok;
}

/// Probability of drawing `sequence` in that order by successive weighted draws without
/// replacement: each draw picks from the experts not yet chosen, in proportion to p.
double sequenceProbability(const std::vector<double>& p, const List& sequence)
{
    double prob = 1.0;
    double taken = 0.0;
    for (const auto e : sequence) {
        prob *= p[static_cast<std::size_t>(e)] / (1.0 - taken);
        taken += p[static_cast<std::size_t>(e)];
    }
    return prob;
}

/// Every ordered sequence of k distinct ids from 0..n-1.
void forEachSequence(std::int64_t n, std::int64_t k, const std::function<void(const List&)>& f)
{
    List current;
    std::vector<bool> used(static_cast<std::size_t>(n), false);
    std::function<void()> recurse = [&] {
        if (static_cast<std::int64_t>(current.size()) == k) {
            f(current);
            return;
        }
        for (std::int64_t e = 0; e < n; ++e) {
            if (used[static_cast<std::size_t>(e)])
                continue;
            used[static_cast<std::size_t>(e)] = true;
            current.push_back(e);
            recurse();
            current.pop_back();
            used[static_cast<std::size_t>(e)] = false;
        }
    };
    recurse();
}

} // namespace

class TstExperts : public QObject {
    Q_OBJECT

private slots:
    void chapterExercise();
    void allToAllCounts_data();
    void allToAllCounts();
    void defaultOwnersAreContiguousBlocks_data();
    void defaultOwnersAreContiguousBlocks();
    void explicitOwnersAreHonoured();
    void explicitRoutingHasUniformProbability();
    void emptyRouting();
    void expertCapacity_data();
    void expertCapacity();
    void capacityDrops_data();
    void capacityDrops();
    void capacityZeroDropsNothing();
    void capacityCeilInDouble();
    void routerIsDeterministic();
    void aKeptRoutingGivesEveryCapacity_data();
    void aKeptRoutingGivesEveryCapacity();
    void aKeptRoutingHasALimit();
    void aPreviewRoutesEachRanksFirstTokensScaledUp();
    void aSmallRoutingIsItsOwnPreview();
    void routerMatchesItsListing_data();
    void routerMatchesItsListing();
    void eachRankDrawsFromItsOwnStream();
    void routerProbabilityIsZipf_data();
    void routerProbabilityIsZipf();
    void routerUniformAtSkewZero();
    void routerSequenceFrequencies_data();
    void routerSequenceFrequencies();
    void routerLargeSkewConcentrates();
    void routerExtremeSkewTakesTheHottest_data();
    void routerExtremeSkewTakesTheHottest();
    void routerTopKEqualsExperts();
    void routerSlotLimits();
    void badInputs_data();
    void badInputs();
    void defaultRouterIsUnchanged();
    void popularityByIdPutsTheHottestFirst();
    void allToAllTraffic_data();
    void allToAllTraffic();
    void allToAllTrafficBadInputs();
    void loadBalancingLoss_data();
    void loadBalancingLoss();
    void loadBalancingLossOfTheRouter();
};

void TstExperts::chapterExercise()
{
    // Exercise 41.4: ranks 0 and 1 choose [0,1,3] and [2,3,2]; experts 0,1 live on rank 0,
    // experts 2,3 on rank 1. Rank 0 sends 0,1 home and 3 away; rank 1 sends all three away.
    const Matrix assignments{{0, 1, 3}, {2, 3, 2}};
    const List owners{0, 0, 1, 1};
    const Matrix expected{{2, 1}, {0, 3}};
    QCOMPARE(scalelab::core::allToAllCounts(assignments, owners, 2), expected);

    for (const bool explicitOwners : {true, false}) {
        const auto r = routeExperts(explicitInputs(
            2, 4, assignments, explicitOwners ? std::optional<List>(owners) : std::nullopt));
        QCOMPARE(r.counts, expected);
        QCOMPARE(r.expertLoad, (List{1, 1, 2, 2}));
        QCOMPARE(r.receivedPerRank, (List{2, 4}));
        QCOMPARE(r.totalSlots, std::int64_t{6});
        QVERIFY(r.imbalance.has_value());
        // max 4 over mean 3: both sides are the correctly rounded 4/3.
        QCOMPARE(*r.imbalance, 4.0 / 3.0);
        QCOMPARE(r.dropped, std::int64_t{0});
        QCOMPARE(r.capacity, std::int64_t{0});
        QCOMPARE(r.expertToRank, owners);
    }
}

void TstExperts::allToAllCounts_data()
{
    QTest::addColumn<Matrix>("assignments");
    QTest::addColumn<List>("owners");
    QTest::addColumn<qint64>("ranks");
    QTest::addColumn<Matrix>("expected");

    QTest::newRow("one rank keeps everything")
        << Matrix{{0, 1, 1, 0}} << List{0, 0} << 1LL << Matrix{{4}};
    QTest::newRow("empty lists") << Matrix{{}, {}, {}} << List{0, 1, 2} << 3LL << zeros(3);
    QTest::newRow("uneven lists, interleaved owners")
        << Matrix{{0}, {1, 2, 3, 0, 1}, {}} << List{2, 0, 2, 1}
        << 3LL
        // rank 1: expert 1 -> 0 (twice), 2 -> 2, 3 -> 1, 0 -> 2
        << Matrix{{0, 0, 1}, {2, 1, 2}, {0, 0, 0}};
    QTest::newRow("one expert owned by the last rank")
        << Matrix{{0, 0}, {0}} << List{1} << 2LL << Matrix{{0, 2}, {0, 1}};
}

void TstExperts::allToAllCounts()
{
    QFETCH(Matrix, assignments);
    QFETCH(List, owners);
    QFETCH(qint64, ranks);
    QFETCH(Matrix, expected);
    QCOMPARE(scalelab::core::allToAllCounts(assignments, owners, ranks), expected);

    // routeExperts counts the same, and its row sums are the list lengths.
    const auto r = routeExperts(
        explicitInputs(ranks, static_cast<std::int64_t>(owners.size()), assignments, owners));
    QCOMPARE(r.counts, expected);
    for (std::size_t s = 0; s < assignments.size(); ++s)
        QCOMPARE(std::accumulate(r.counts[s].begin(), r.counts[s].end(), std::int64_t{0}),
                 static_cast<std::int64_t>(assignments[s].size()));
}

void TstExperts::defaultOwnersAreContiguousBlocks_data()
{
    QTest::addColumn<qint64>("ranks");
    QTest::addColumn<qint64>("experts");
    QTest::addColumn<List>("expected");

    QTest::newRow("8 over 4") << 4LL << 8LL << List{0, 0, 1, 1, 2, 2, 3, 3};
    QTest::newRow("one rank") << 1LL << 3LL << List{0, 0, 0};
    QTest::newRow("one expert each") << 3LL << 3LL << List{0, 1, 2};
    QTest::newRow("16 over 4") << 4LL << 16LL
                               << List{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
}

void TstExperts::defaultOwnersAreContiguousBlocks()
{
    QFETCH(qint64, ranks);
    QFETCH(qint64, experts);
    QFETCH(List, expected);
    ExpertsInputs in = routerInputs(ranks, experts, 1, 1.0, 10);
    QCOMPARE(expertOwners(in), expected);
    QCOMPARE(routeExperts(in).expertToRank, expected);
}

void TstExperts::explicitOwnersAreHonoured()
{
    // The chapter's assignments with experts 1,3 on rank 0 and 0,2 on rank 1.
    const List owners{1, 0, 1, 0};
    const auto r = routeExperts(explicitInputs(2, 4, {{0, 1, 3}, {2, 3, 2}}, owners));
    QCOMPARE(r.expertToRank, owners);
    QCOMPARE(r.counts, (Matrix{{2, 1}, {1, 2}}));
    QCOMPARE(r.receivedPerRank, (List{3, 3}));
    QCOMPARE(*r.imbalance, 1.0);

    // With an explicit map experts need not be a multiple of ranks, and a rank may own none.
    const auto uneven = routeExperts(explicitInputs(3, 4, {{0, 1}, {2}, {3, 3}}, List{2, 2, 0, 2}));
    QCOMPARE(uneven.counts, (Matrix{{0, 0, 2}, {1, 0, 0}, {0, 0, 2}}));
    QCOMPARE(uneven.receivedPerRank, (List{1, 0, 4}));
    // max 4 over mean 5/3 is 12/5; both sides are its correctly rounded double.
    QCOMPARE(*uneven.imbalance, 12.0 / 5.0);

    // The router honours the map too: every slot of an expert lands on its owner.
    ExpertsInputs in = routerInputs(2, 3, 1, 0.0, 3000);
    in.expertToRank = List{1, 1, 0};
    const auto routed = routeExperts(in);
    QCOMPARE(routed.receivedPerRank[0], routed.expertLoad[2]);
    QCOMPARE(routed.receivedPerRank[1], routed.expertLoad[0] + routed.expertLoad[1]);
}

void TstExperts::explicitRoutingHasUniformProbability()
{
    const auto r = routeExperts(explicitInputs(1, 5, {{4, 4, 4}}));
    QCOMPARE(r.routerProbability, std::vector<double>(5, 1.0 / 5.0));
}

void TstExperts::emptyRouting()
{
    const auto r = routeExperts(explicitInputs(2, 4, {{}, {}}, std::nullopt, 1.5));
    QCOMPARE(r.totalSlots, std::int64_t{0});
    QVERIFY(!r.imbalance.has_value());
    QCOMPARE(r.counts, zeros(2));
    QCOMPARE(r.receivedPerRank, (List{0, 0}));
    QCOMPARE(r.capacity, std::int64_t{0});
    QCOMPARE(r.dropped, std::int64_t{0});
}

void TstExperts::expertCapacity_data()
{
    QTest::addColumn<double>("factor");
    QTest::addColumn<qint64>("slotCount");
    QTest::addColumn<qint64>("experts");
    QTest::addColumn<qint64>("expected");

    QTest::newRow("unlimited") << 0.0 << 100LL << 4LL << 0LL;
    QTest::newRow("even share") << 1.0 << 8LL << 4LL << 2LL;
    QTest::newRow("rounded up") << 1.25 << 8LL << 4LL << 3LL; // 2.5 -> 3
    QTest::newRow("below one slot") << 0.01 << 8LL << 4LL << 1LL; // 0.02 -> 1
    QTest::newRow("nothing routed") << 2.0 << 0LL << 4LL << 0LL;
    QTest::newRow("double left to right") << 1.1 << 50LL << 5LL << 12LL; // see capacityCeilInDouble
}

void TstExperts::expertCapacity()
{
    QFETCH(double, factor);
    QFETCH(qint64, slotCount);
    QFETCH(qint64, experts);
    QFETCH(qint64, expected);
    QCOMPARE(scalelab::core::expertCapacity(factor, slotCount, experts), std::int64_t{expected});
}

void TstExperts::capacityDrops_data()
{
    QTest::addColumn<ExpertsInputs>("in");
    QTest::addColumn<qint64>("capacity");
    QTest::addColumn<List>("droppedPerExpert");
    QTest::addColumn<Matrix>("droppedCounts");

    // 2 ranks, 4 experts (0,1 on rank 0; 2,3 on rank 1), 8 slots; expert 0 gets 5 of them.
    const Matrix skewed{{0, 0, 0, 1}, {0, 2, 0, 3}};
    // Factor 1: capacity 8/4 = 2. Expert 0 keeps rank 0's first two slots, drops rank 0's
    // third and both of rank 1's; the others carry one slot each.
    QTest::newRow("factor 1") << explicitInputs(2, 4, skewed, std::nullopt, 1.0) << 2LL
                              << List{3, 0, 0, 0} << Matrix{{1, 0}, {2, 0}};
    // Factor 0.5: capacity 1. Expert 0 keeps one slot of rank 0's.
    QTest::newRow("factor 0.5") << explicitInputs(2, 4, skewed, std::nullopt, 0.5) << 1LL
                                << List{4, 0, 0, 0} << Matrix{{2, 0}, {2, 0}};
    // Factor 2: capacity 4, expert 0 drops only its last slot, which is rank 1's second.
    QTest::newRow("factor 2") << explicitInputs(2, 4, skewed, std::nullopt, 2.0) << 4LL
                              << List{1, 0, 0, 0} << Matrix{{0, 0}, {1, 0}};
    // First come, first served by source rank, not shared out: 3 ranks each own one expert;
    // 6 slots and factor 1 give capacity 2, and expert 2 (on rank 2) takes 5 slots: rank 0's
    // two are kept, rank 1's one and rank 2's two are dropped.
    QTest::newRow("earlier ranks first")
        << explicitInputs(3, 3, {{2, 2}, {2, 0}, {2, 2}}, std::nullopt, 1.0) << 2LL << List{0, 0, 3}
        << Matrix{{0, 0, 0}, {0, 0, 1}, {0, 0, 2}};
    // Two hot experts on different ranks with an explicit owner map (expert 1 on rank 0,
    // expert 3 on rank 1); factor 1.5 of 12 slots over 4 experts = capacity 4.5 -> 5.
    // Expert 1: rank 0 gives 3, rank 1 gives 4 -> rank 1 loses 2.
    // Expert 3: rank 0 gives 3, rank 1 gives 0 -> nothing lost.
    QTest::newRow("two hot experts")
        << explicitInputs(2, 4, {{1, 3, 1, 3, 1, 3}, {1, 1, 0, 1, 1, 2}}, List{1, 0, 1, 1}, 1.5)
        << 5LL << List{0, 2, 0, 0} << Matrix{{0, 0}, {2, 0}};
}

void TstExperts::capacityDrops()
{
    QFETCH(ExpertsInputs, in);
    QFETCH(qint64, capacity);
    QFETCH(List, droppedPerExpert);
    QFETCH(Matrix, droppedCounts);

    const auto r = routeExperts(in);
    QCOMPARE(r.capacity, std::int64_t{capacity});
    QCOMPARE(r.droppedPerExpert, droppedPerExpert);
    QCOMPARE(r.droppedCounts, droppedCounts);
    QCOMPARE(r.dropped,
             std::accumulate(droppedPerExpert.begin(), droppedPerExpert.end(), std::int64_t{0}));

    // Counts, loads and imbalance are taken before the drops: the same as without capacity.
    ExpertsInputs unlimited = in;
    unlimited.capacityFactor = 0.0;
    const auto before = routeExperts(unlimited);
    QCOMPARE(r.counts, before.counts);
    QCOMPARE(r.expertLoad, before.expertLoad);
    QCOMPARE(r.receivedPerRank, before.receivedPerRank);
    QCOMPARE(r.imbalance, before.imbalance);
    // And what is dropped from an expert is exactly its load above capacity.
    for (std::size_t e = 0; e < r.expertLoad.size(); ++e)
        QCOMPARE(r.droppedPerExpert[e],
                 std::max<std::int64_t>(0, r.expertLoad[e] - std::int64_t{capacity}));
}

void TstExperts::capacityZeroDropsNothing()
{
    // Everything on one expert, still nothing dropped without a capacity factor.
    const auto r = routeExperts(explicitInputs(2, 2, {{0, 0, 0, 0}, {0, 0}}));
    QCOMPARE(r.capacity, std::int64_t{0});
    QCOMPARE(r.dropped, std::int64_t{0});
    QCOMPARE(r.droppedPerExpert, (List{0, 0}));
    QCOMPARE(r.droppedCounts, zeros(2));

    auto routed = routerInputs(2, 8, 2, 3.0, 2000);
    const auto fromRouter = routeExperts(routed);
    QCOMPARE(fromRouter.dropped, std::int64_t{0});
    QCOMPARE(fromRouter.droppedCounts, zeros(2));
}

void TstExperts::capacityCeilInDouble()
{
    // 1.1 is stored as 1.100000000000000088..., so 1.1 * 50 = 55.0000000000000044 rounds up
    // to the next double above 55 (its spacing there is 7.1e-15), and / 5 gives 11.000000000000002,
    // whose ceiling is 12. Exact arithmetic would give 11, and 1.1 * (50 / 5) gives 11 too.
    // One rank, 5 experts, 50 slots, expert 0 taking 12 of them: nothing dropped at 12.
    List routed(12, 0);
    for (std::int64_t e = 1; e < 5; ++e)
        routed.insert(routed.end(), e == 4 ? 14 : 8, e);
    QCOMPARE(routed.size(), std::size_t{50});
    const auto r = routeExperts(explicitInputs(1, 5, {routed}, std::nullopt, 1.1));
    QCOMPARE(r.capacity, std::int64_t{12});
    QCOMPARE(r.expertLoad, (List{12, 8, 8, 8, 14}));
    QCOMPARE(r.droppedPerExpert, (List{0, 0, 0, 0, 2}));
}

void TstExperts::routerIsDeterministic()
{
    const auto in = routerInputs(4, 16, 2, 1.0, 5000, 7);
    const auto a = routeExperts(in);
    const auto b = routeExperts(in);
    QCOMPARE(a.counts, b.counts);
    QCOMPARE(a.expertLoad, b.expertLoad);
    QCOMPARE(a.routerProbability, b.routerProbability);
    QCOMPARE(routerAssignments(in), routerAssignments(in));

    auto other = in;
    other.seed = 8;
    const auto c = routeExperts(other);
    QVERIFY(c.expertLoad != a.expertLoad);
    // A different seed also picks different hot experts (a different permutation).
    QVERIFY(c.routerProbability != a.routerProbability);
}

void TstExperts::aKeptRoutingGivesEveryCapacity_data()
{
    QTest::addColumn<ExpertsInputs>("in");
    QTest::newRow("router, skew 1.2") << routerInputs(8, 32, 2, 1.2, 3000, 5);
    ExpertsInputs hot = routerInputs(4, 16, 3, 2.0, 2000, 3);
    hot.popularity = ExpertPopularity::ById;
    hot.expertToRank = List{3, 3, 2, 2, 1, 1, 0, 0, 3, 2, 1, 0, 0, 1, 2, 3};
    QTest::newRow("hottest by id, own owners") << hot;
    QTest::newRow("every expert") << routerInputs(2, 4, 4, 1.0, 100);
    QTest::newRow("explicit") << explicitInputs(2, 4, {{0, 0, 0, 1, 3}, {0, 2, 2, 2, 2, 1}});
}

void TstExperts::aKeptRoutingGivesEveryCapacity()
{
    // A capacity factor applied to a kept routing is the whole routing with that factor,
    // whatever factor the routing was drawn under.
    QFETCH(ExpertsInputs, in);
    in.capacityFactor = 2.5;
    const ExpertsRouting routing = drawExpertsRouting(in);
    QCOMPARE(routing.sent.size(), std::size_t(in.ranks * in.experts));
    bool dropsSeen = false;
    for (double factor : {0.0, 0.25, 0.9, 1.0, 1.25, 2.0, 1e6}) {
        ExpertsInputs at = in;
        at.capacityFactor = factor;
        const ExpertsResult whole = routeExperts(at);
        const ExpertsResult kept = routeExperts(at, routing);
        compareCountsAndDrops(kept, whole);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(kept.imbalance, whole.imbalance);
        QCOMPARE(kept.expertToRank, whole.expertToRank);
        QCOMPARE(kept.routerProbability, whole.routerProbability);
        dropsSeen = dropsSeen || whole.dropped > 0;
    }
    QVERIFY(dropsSeen); // the factors below 1 drop slots: the limit is exercised
}

void TstExperts::aKeptRoutingHasALimit()
{
    // 4096 ranks x 2048 experts: 8.4M entries, over the limit; the whole routing still runs.
    ExpertsInputs in = routerInputs(4096, 2048, 1, 1.0, 1);
    QVERIFY(in.ranks * in.experts > kMaxRoutingEntries);
    try {
        drawExpertsRouting(in);
        QFAIL("no InputError");
    } catch (const InputError& e) {
        QVERIFY(QString(e.what()).contains("experts.experts"));
    }
    // A routing of other ranks or experts is refused rather than misread.
    const ExpertsRouting small = drawExpertsRouting(routerInputs(2, 4, 1, 1.0, 10));
    try {
        routeExperts(routerInputs(4, 4, 1, 1.0, 10), small);
        QFAIL("no InputError");
    } catch (const InputError& e) {
        QVERIFY(QString(e.what()).contains("experts.experts"));
    }
}

void TstExperts::aPreviewRoutesEachRanksFirstTokensScaledUp()
{
    // 4 ranks x 100,000 tokens x top-2: 800,000 slots, over the preview's 2^18. A preview
    // routes 2^18 / (4 x 2) = 32,768 tokens of each rank and scales by 100,000 / 32,768.
    ExpertsInputs in = routerInputs(4, 16, 2, 1.2, 100'000, 5);
    in.capacityFactor = 1.25;
    QCOMPARE(expertsPreviewTokens(in), std::int64_t(32'768));
    ExpertsInputs part = in;
    part.tokensPerRank = 32'768;
    const ExpertsResult few = routeExperts(part);
    const ExpertsResult p = previewExperts(in);
    QCOMPARE(p.previewTokensPerRank, std::int64_t(32'768));
    const double scale = 100'000.0 / 32'768.0;
    const auto up = [scale](std::int64_t v) {
        return std::llround(static_cast<double>(v) * scale);
    };
    QVERIFY(few.dropped > 0); // the capacity of the part's slots drops some of them
    for (std::size_t s = 0; s < 4; ++s)
        for (std::size_t d = 0; d < 4; ++d) {
            QCOMPARE(p.counts[s][d], up(few.counts[s][d]));
            QCOMPARE(p.droppedCounts[s][d], up(few.droppedCounts[s][d]));
        }
    std::int64_t dropped = 0;
    for (std::size_t e = 0; e < 16; ++e) {
        QCOMPARE(p.expertLoad[e], up(few.expertLoad[e]));
        QCOMPARE(p.droppedPerExpert[e], up(few.droppedPerExpert[e]));
        dropped += p.droppedPerExpert[e];
    }
    QCOMPARE(p.dropped, dropped);
    // The whole routing's totals: 800,000 slots, and 1.25 x 800,000 / 16 = 62,500 each.
    QCOMPARE(p.totalSlots, std::int64_t(800'000));
    QCOMPARE(p.capacity, std::int64_t(62'500));
    std::int64_t busiest = 0;
    for (std::size_t d = 0; d < 4; ++d) {
        std::int64_t received = 0;
        for (std::size_t s = 0; s < 4; ++s)
            received += p.counts[s][d];
        QCOMPARE(p.receivedPerRank[d], received);
        busiest = std::max(busiest, received);
    }
    QCOMPARE(*p.imbalance, static_cast<double>(busiest) * 4.0 / 800'000.0);
    QCOMPARE(p.routerProbability, few.routerProbability);
    // The tokens routed are each rank's first ones, with the same choices as the whole routing.
    const auto all = routerAssignments(in);
    const auto first = routerAssignments(part);
    for (std::size_t s = 0; s < 4; ++s)
        QVERIFY(std::equal(first[s].begin(), first[s].end(), all[s].begin()));
}

void TstExperts::aSmallRoutingIsItsOwnPreview()
{
    // 4 x 5,000 x 2 = 40,000 slots: every token is routed, and nothing is scaled.
    const ExpertsInputs small = routerInputs(4, 16, 2, 1.2, 5'000, 5);
    QCOMPARE(expertsPreviewTokens(small), std::int64_t(5'000));
    const ExpertsResult p = previewExperts(small);
    const ExpertsResult exact = routeExperts(small);
    QCOMPARE(p.previewTokensPerRank, std::int64_t(0));
    QCOMPARE(p.counts, exact.counts);
    QCOMPARE(p.expertLoad, exact.expertLoad);
    // Explicit assignments are never previewed.
    const ExpertsInputs listed = explicitInputs(2, 4, {{0, 0, 1}, {2, 3, 3}});
    QCOMPARE(expertsPreviewTokens(listed), listed.tokensPerRank);
    QCOMPARE(previewExperts(listed).previewTokensPerRank, std::int64_t(0));
    // One token of every rank already fills the preview (64 x 16,384 slots): one token each.
    QCOMPARE(expertsPreviewTokens(routerInputs(64, 16'384, 16'384, 1.0, 2)), std::int64_t(1));
    // Bad input is refused as routeExperts refuses it.
    ExpertsInputs bad = small;
    bad.topK = 0;
    QVERIFY_THROWS_EXCEPTION(InputError, previewExperts(bad));
}

void TstExperts::routerMatchesItsListing_data()
{
    QTest::addColumn<ExpertsInputs>("in");

    const auto withCapacity = [](ExpertsInputs in, double factor) {
        in.capacityFactor = factor;
        return in;
    };
    QTest::newRow("uniform top-2") << withCapacity(routerInputs(4, 16, 2, 0.0, 500), 1.0);
    QTest::newRow("zipf top-4") << withCapacity(routerInputs(4, 64, 4, 1.0, 300, 3), 1.25);
    // A few experts hold nearly all the weight, so many draws repeat an expert already taken.
    QTest::newRow("skew 4 top-3") << withCapacity(routerInputs(2, 8, 3, 4.0, 1000, 5), 1.0);
    QTest::newRow("all but one") << withCapacity(routerInputs(3, 12, 11, 0.5, 200, 9), 1.0);
    QTest::newRow("top_k = experts") << withCapacity(routerInputs(2, 6, 6, 2.0, 100), 0.9);
    // Weights of all but the hottest few underflow.
    QTest::newRow("skew 5000") << withCapacity(routerInputs(2, 10, 4, 5000.0, 200), 1.0);
    QTest::newRow("skew 1e300") << routerInputs(2, 10, 4, 1e300, 200);
    // Skew 150 over 4096 experts: weights underflow from position ~150 on, yet neighbours
    // there are within a factor of e of each other, so the tail must still be sampled.
    QTest::newRow("underflowing tail") << routerInputs(1, 4096, 400, 150.0, 5);
    // Weights fall by e^-300 from position 0 to 20, so the router's exact fallback moves to
    // a second sum tree within a token, now and then holding a position past 20 already.
    QTest::newRow("skew 100, top-30") << routerInputs(2, 64, 30, 100.0, 2000);
    // Too many experts for a table per taken prefix: the router runs out of tables.
    QTest::newRow("65536 experts, skew 6")
        << withCapacity(routerInputs(1, 65536, 24, 6.0, 20), 1.0);
    QTest::newRow("65536 experts, skew 0") << routerInputs(2, 65536, 3, 0.0, 10);
    auto byId = withCapacity(routerInputs(4, 16, 2, 1.5, 400, 2), 1.25);
    byId.popularity = ExpertPopularity::ById;
    QTest::newRow("popularity by id") << byId;
    // Enough slots (2^17 and more) for routeExperts to draw its ranks on every core, while the
    // listing draws them one after the other: the two must still agree slot for slot.
    QTest::newRow("ranks side by side") << withCapacity(routerInputs(8, 64, 3, 1.0, 8192, 4), 1.0);
    // 65536 experts: 16 ranks' histograms at a time, so 32 ranks take two batches.
    QTest::newRow("ranks in two batches")
        << withCapacity(routerInputs(32, 65536, 2, 1.2, 2048, 6), 1.0);
}

void TstExperts::eachRankDrawsFromItsOwnStream()
{
    // Source rank s draws from a stream of the seed and s alone: more tokens per rank, or more
    // ranks, leave the tokens a rank already had as they were.
    const Matrix few = routerAssignments(routerInputs(2, 16, 2, 1.0, 100, 7));
    const Matrix more = routerAssignments(routerInputs(2, 16, 2, 1.0, 300, 7));
    const Matrix wider = routerAssignments(routerInputs(4, 16, 2, 1.0, 100, 7));
    for (std::size_t s = 0; s < 2; ++s) {
        QCOMPARE(List(more[s].begin(), more[s].begin() + 200), few[s]);
        QCOMPARE(wider[s], few[s]);
    }
    // ... and the ranks differ from each other.
    QVERIFY(few[0] != few[1]);
}

void TstExperts::routerMatchesItsListing()
{
    QFETCH(ExpertsInputs, in);
    const Matrix listing = routerAssignments(in);
    // Each token's top_k experts are valid and distinct, also when the sum trees alone pick.
    for (const Matrix& candidate : {listing, detail::routerAssignments(in, 0)}) {
        QCOMPARE(static_cast<std::int64_t>(candidate.size()), in.ranks);
        for (const auto& list : candidate) {
            QCOMPARE(static_cast<std::int64_t>(list.size()), in.tokensPerRank * in.topK);
            for (auto t = list.begin(); t != list.end(); t += in.topK) {
                const std::set<std::int64_t> token(t, t + in.topK);
                QCOMPARE(static_cast<std::int64_t>(token.size()), in.topK);
                QVERIFY(*token.begin() >= 0 && *token.rbegin() < in.experts);
            }
        }
    }

    // The simulation counts exactly what its listing says, drops included.
    const auto routed = routeExperts(in);
    auto asExplicit = in;
    asExplicit.assignments = listing;
    const auto replay = routeExperts(asExplicit);
    compareCountsAndDrops(routed, replay);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(routed.counts, scalelab::core::allToAllCounts(listing, routed.expertToRank, in.ranks));

    // Every source rank sends tokens_per_rank * top_k slots.
    QCOMPARE(routed.totalSlots, in.ranks * in.tokensPerRank * in.topK);
    for (const auto& row : routed.counts)
        QCOMPARE(std::accumulate(row.begin(), row.end(), std::int64_t{0}),
                 in.tokensPerRank * in.topK);
}

void TstExperts::routerProbabilityIsZipf_data()
{
    QTest::addColumn<qint64>("experts");
    QTest::addColumn<double>("skew");
    QTest::newRow("uniform") << 16LL << 0.0;
    QTest::newRow("skew 1") << 16LL << 1.0;
    QTest::newRow("skew 2.5, 256 experts") << 256LL << 2.5;
    QTest::newRow("skew 0.3, one expert") << 1LL << 0.3;
}

void TstExperts::routerProbabilityIsZipf()
{
    QFETCH(qint64, experts);
    QFETCH(double, skew);
    const auto r = routeExperts(routerInputs(1, experts, 1, skew, 1));
    // Sorted hottest first, the probabilities are (i + 1)^-skew / sum, whatever permutation
    // the seed chose. Both sides are sums of powers in double: 1e-12 relative is generous.
    auto sorted = r.routerProbability;
    std::sort(sorted.rbegin(), sorted.rend());
    double sum = 0.0;
    for (qint64 i = 0; i < experts; ++i)
        sum += std::pow(static_cast<double>(i + 1), -skew);
    for (qint64 i = 0; i < experts; ++i) {
        const double expected = std::pow(static_cast<double>(i + 1), -skew) / sum;
        QVERIFY2(std::abs(sorted[static_cast<std::size_t>(i)] - expected) <= 1e-12 * expected,
                 qPrintable(QString::number(i)));
    }
}

void TstExperts::routerUniformAtSkewZero()
{
    // Without skew each token holds a uniformly random set of top_k experts, so every expert
    // is in a token with probability top_k / experts, independently across tokens.
    const auto in = routerInputs(4, 16, 3, 0.0, 20000);
    const auto r = routeExperts(in);
    const double tokens = static_cast<double>(in.ranks * in.tokensPerRank);
    for (const auto load : r.expertLoad)
        QVERIFY(withinFiveSigma(static_cast<double>(load), tokens, 3.0 / 16.0));
    // Balanced experts over balanced owners: the imbalance stays close to 1.
    QVERIFY(*r.imbalance < 1.02);
}

void TstExperts::routerSequenceFrequencies_data()
{
    QTest::addColumn<qint64>("experts");
    QTest::addColumn<qint64>("topK");
    QTest::addColumn<double>("skew");
    QTest::addColumn<int>("maxRejections");

    const int usual = detail::kRouterMaxRejections;
    QTest::newRow("4 experts, top-1, skew 1") << 4LL << 1LL << 1.0 << usual;
    QTest::newRow("4 experts, top-2, skew 1") << 4LL << 2LL << 1.0 << usual;
    QTest::newRow("5 experts, top-3, skew 0.5") << 5LL << 3LL << 0.5 << usual;
    // Heavily skewed: the later picks repeatedly hit taken experts.
    QTest::newRow("5 experts, top-3, skew 4") << 5LL << 3LL << 4.0 << usual;
    QTest::newRow("5 experts, top-4, skew 2") << 5LL << 4LL << 2.0 << usual;
    QTest::newRow("5 experts, top-4, skew 0") << 5LL << 4LL << 0.0 << usual;
    // The sum trees on their own, and taking over after a single table draw.
    QTest::newRow("trees: 4 experts, top-1, skew 0.7") << 4LL << 1LL << 0.7 << 0;
    QTest::newRow("trees: 4 experts, top-2, skew 1") << 4LL << 2LL << 1.0 << 0;
    QTest::newRow("trees: 5 experts, top-3, skew 4") << 5LL << 3LL << 4.0 << 0;
    QTest::newRow("trees: 5 experts, top-4, skew 2") << 5LL << 4LL << 2.0 << 0;
    QTest::newRow("one draw, then trees: 5 experts, top-3, skew 1") << 5LL << 3LL << 1.0 << 1;
}

void TstExperts::routerSequenceFrequencies()
{
    QFETCH(qint64, experts);
    QFETCH(qint64, topK);
    QFETCH(double, skew);
    QFETCH(int, maxRejections);
    // 60000 tokens, over two ranks where the experts split evenly, else one rank.
    const std::int64_t ranks = experts % 2 == 0 ? 2 : 1;
    const auto in = routerInputs(ranks, experts, topK, skew, 60000 / ranks, 11);
    const auto p = routeExperts(in).routerProbability;
    const Matrix listing = detail::routerAssignments(in, maxRejections);

    // Count every ordered sequence of picks and compare with successive weighted sampling.
    std::map<List, double> seen;
    double tokens = 0.0;
    for (const auto& list : listing)
        for (std::size_t t = 0; t < list.size(); t += static_cast<std::size_t>(topK)) {
            seen[List(list.begin() + static_cast<std::ptrdiff_t>(t),
                      list.begin() + static_cast<std::ptrdiff_t>(t) + topK)] += 1.0;
            tokens += 1.0;
        }
    double total = 0.0;
    bool ok = true;
    forEachSequence(experts, topK, [&](const List& sequence) {
        const double q = sequenceProbability(p, sequence);
        total += q;
        ok = withinFiveSigma(seen[sequence], tokens, q) && ok;
    });
    QVERIFY(ok);
    QVERIFY(std::abs(total - 1.0) < 1e-12); // the enumeration covers every outcome
}

void TstExperts::routerLargeSkewConcentrates()
{
    // Skew 8: the hottest expert has weight 1 / zeta-like sum ~ 0.996 on a single pick.
    const auto one = routeExperts(routerInputs(4, 16, 1, 8.0, 2000));
    const auto hottest = *std::max_element(one.expertLoad.begin(), one.expertLoad.end());
    QVERIFY(hottest >= 0.99 * static_cast<double>(one.totalSlots));

    // With top-2 the two hottest take nearly every slot.
    const auto two = routeExperts(routerInputs(4, 16, 2, 8.0, 2000));
    auto loads = two.expertLoad;
    std::sort(loads.rbegin(), loads.rend());
    // The second pick goes to the next-hottest with probability ~0.96, so about 98% of slots
    // land on the two; 95% leaves room for chance.
    QVERIFY(loads[0] + loads[1] >= 0.95 * static_cast<double>(two.totalSlots));

    // More skew, more imbalance across ranks (same seed, so the same hot experts).
    const auto balanced = routeExperts(routerInputs(4, 16, 2, 0.0, 2000));
    const auto lopsided = routeExperts(routerInputs(4, 16, 2, 2.0, 2000));
    QVERIFY(*lopsided.imbalance > *balanced.imbalance + 0.3);
}

void TstExperts::routerExtremeSkewTakesTheHottest_data()
{
    QTest::addColumn<double>("skew");
    QTest::newRow("skew 5000") << 5000.0;
    QTest::newRow("skew 1e300") << 1e300;
}

void TstExperts::routerExtremeSkewTakesTheHottest()
{
    // At such skews each next-hottest expert is infinitely more likely than the one after it,
    // so every token takes the same top_k experts: top_k loads equal the token count.
    QFETCH(double, skew);
    const auto in = routerInputs(2, 10, 4, skew, 300);
    const auto r = routeExperts(in);
    auto loads = r.expertLoad;
    std::sort(loads.rbegin(), loads.rend());
    QCOMPARE(loads, (List{600, 600, 600, 600, 0, 0, 0, 0, 0, 0}));
    // The single-pick probability is all on one of them.
    QCOMPARE(*std::max_element(r.routerProbability.begin(), r.routerProbability.end()), 1.0);
}

void TstExperts::routerTopKEqualsExperts()
{
    const auto in = routerInputs(3, 6, 6, 1.5, 400);
    const auto r = routeExperts(in);
    QCOMPARE(r.expertLoad, List(6, 3 * 400));
    // Each rank sends every token to both experts of every rank.
    QCOMPARE(r.counts, Matrix(3, List(3, 2 * 400)));
    QCOMPARE(*r.imbalance, 1.0);
}

void TstExperts::routerSlotLimits()
{
    // Exactly kMaxRoutedSlots is accepted, one token more is not.
    auto in = routerInputs(4, 16, 2, 1.0, kMaxRoutedSlots / 8);
    validate(in);
    in.tokensPerRank += 1;
    SCALELAB_VERIFY_INPUT_ERROR(validate(in), "experts.tokens_per_rank");
    SCALELAB_VERIFY_INPUT_ERROR(routeExperts(in), "experts.tokens_per_rank");

    // The listing has its own, smaller limit.
    auto listed = routerInputs(1, 16, 2, 1.0, kMaxListedSlots / 2 + 1);
    validate(listed);
    SCALELAB_VERIFY_INPUT_ERROR(routerAssignments(listed), "experts.tokens_per_rank");

    // Huge products are refused, not overflowed.
    auto huge = routerInputs(kMaxExpertRanks, kMaxExperts, kMaxExperts, 1.0, std::int64_t{1} << 53);
    SCALELAB_VERIFY_INPUT_ERROR(validate(huge), "experts.tokens_per_rank");
}

void TstExperts::badInputs_data()
{
    QTest::addColumn<ExpertsInputs>("in");
    QTest::addColumn<QString>("field");

    const auto with = [](const std::function<void(ExpertsInputs&)>& change) {
        ExpertsInputs in; // the defaults are valid
        change(in);
        return in;
    };
    const auto chapter = [](const std::function<void(ExpertsInputs&)>& change) {
        ExpertsInputs in = explicitInputs(2, 4, {{0, 1, 3}, {2, 3, 2}}, List{0, 0, 1, 1});
        change(in);
        return in;
    };
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();

    QTest::newRow("ranks 0") << with([](auto& in) { in.ranks = 0; }) << "experts.ranks";
    QTest::newRow("ranks negative") << with([](auto& in) { in.ranks = -4; }) << "experts.ranks";
    QTest::newRow("ranks too many") << with([](auto& in) {
        in.ranks = kMaxExpertRanks + 1;
        in.experts = 2 * (kMaxExpertRanks + 1);
    }) << "experts.ranks";
    QTest::newRow("experts 0") << with([](auto& in) { in.experts = 0; }) << "experts.experts";
    QTest::newRow("experts too many")
        << with([](auto& in) { in.experts = kMaxExperts + 4; }) << "experts.experts";
    QTest::newRow("experts not a multiple of ranks")
        << with([](auto& in) { in.experts = 6; }) << "experts.experts";
    QTest::newRow("top_k 0") << with([](auto& in) { in.topK = 0; }) << "experts.top_k";
    QTest::newRow("top_k above experts") << with([](auto& in) { in.topK = 17; }) << "experts.top_k";
    QTest::newRow("top_k 0 with assignments")
        << chapter([](auto& in) { in.topK = 0; }) << "experts.top_k";
    QTest::newRow("tokens_per_rank 0")
        << with([](auto& in) { in.tokensPerRank = 0; }) << "experts.tokens_per_rank";
    QTest::newRow("tokens_per_rank 0 with assignments")
        << chapter([](auto& in) { in.tokensPerRank = 0; }) << "experts.tokens_per_rank";
    QTest::newRow("skew negative") << with([](auto& in) { in.skew = -0.5; }) << "experts.skew";
    QTest::newRow("skew NaN") << with([nan](auto& in) { in.skew = nan; }) << "experts.skew";
    QTest::newRow("skew infinite") << with([inf](auto& in) { in.skew = inf; }) << "experts.skew";
    QTest::newRow("capacity negative")
        << with([](auto& in) { in.capacityFactor = -1.0; }) << "experts.capacity_factor";
    QTest::newRow("capacity NaN") << with([nan](auto& in) { in.capacityFactor = nan; })
                                  << "experts.capacity_factor";
    QTest::newRow("capacity infinite")
        << with([inf](auto& in) { in.capacityFactor = inf; }) << "experts.capacity_factor";
    QTest::newRow("capacity beyond 2^53")
        << with([](auto& in) { in.capacityFactor = 1e300; }) << "experts.capacity_factor";
    QTest::newRow("seed negative") << with([](auto& in) { in.seed = -1; }) << "experts.seed";
    QTest::newRow("owner map too short") << chapter([](auto& in) {
        in.expertToRank = List{0, 0, 1};
    }) << "experts.expert_to_rank";
    QTest::newRow("owner map too long") << chapter([](auto& in) {
        in.expertToRank = List{0, 0, 1, 1, 1};
    }) << "experts.expert_to_rank";
    QTest::newRow("owner out of range") << chapter([](auto& in) {
        in.expertToRank = List{0, 0, 1, 2};
    }) << "experts.expert_to_rank[3]";
    QTest::newRow("owner negative") << chapter([](auto& in) {
        in.expertToRank = List{0, -1, 1, 1};
    }) << "experts.expert_to_rank[1]";
    QTest::newRow("assignments one list short") << chapter([](auto& in) {
        in.assignments = Matrix{{0, 1}};
    }) << "experts.assignments";
    QTest::newRow("assignments one list too many") << chapter([](auto& in) {
        in.assignments = Matrix{{}, {}, {}};
    }) << "experts.assignments";
    QTest::newRow("expert id too large") << chapter([](auto& in) {
        in.assignments = Matrix{{0, 1, 3}, {2, 3, 4}};
    }) << "experts.assignments[1][2]";
    QTest::newRow("expert id negative") << chapter([](auto& in) {
        in.assignments = Matrix{{0, -1}, {}};
    }) << "experts.assignments[0][1]";
    QTest::newRow("no owner map, experts not a multiple") << chapter([](auto& in) {
        in.expertToRank.reset();
        in.experts = 5;
    }) << "experts.experts";
}

void TstExperts::badInputs()
{
    QFETCH(ExpertsInputs, in);
    QFETCH(QString, field);
    const std::string name = field.toStdString();
    std::string message;
    QVERIFY(scalelab::test::throwsInputError([&] { validate(in); }, name, &message));
    // The message names the field and then says what was expected.
    QVERIFY2(message.rfind(name + ": ", 0) == 0 && message.size() > name.size() + 8,
             message.c_str());
    SCALELAB_VERIFY_INPUT_ERROR(routeExperts(in), name);
}

void TstExperts::defaultRouterIsUnchanged()
{
    // The default scenario's routing, recorded when each source rank got a stream of its own
    // (so that ranks are drawn on every core): the same seed gives these counts anywhere, on
    // any number of threads, and the popularity knob's default (the seeded shuffle) keeps them.
    const ExpertsInputs in;
    QCOMPARE(in.popularity, ExpertPopularity::Shuffled);
    const auto r = routeExperts(in);
    QCOMPARE(r.expertLoad,
             (List{1448, 1323, 3356, 1166, 779, 616, 1034, 721, 4823, 2104, 930, 846, 1741, 8511,
                   786, 2584}));
    QCOMPARE(r.counts,
             (Matrix{{1792, 799, 2193, 3408},
                     {1884, 779, 2140, 3389},
                     {1787, 772, 2214, 3419},
                     {1830, 800, 2156, 3406}}));
}

void TstExperts::popularityByIdPutsTheHottestFirst()
{
    auto shuffled = routerInputs(4, 16, 2, 1.0, 3000, 11);
    auto byId = shuffled;
    byId.popularity = ExpertPopularity::ById;
    const auto a = routeExperts(shuffled);
    const auto b = routeExperts(byId);

    // By id, expert e has weight (e + 1)^-skew: the probabilities fall with the id.
    for (std::size_t e = 1; e < b.routerProbability.size(); ++e)
        QVERIFY(b.routerProbability[e] < b.routerProbability[e - 1]);
    // Both orders draw the same popularity positions; only the ids differ. Position p is
    // expert p by id, and the expert with the same probability in the shuffled order (skew > 0
    // makes every weight distinct), so their loads match one for one.
    for (std::size_t p = 0; p < b.expertLoad.size(); ++p) {
        const auto it = std::find(a.routerProbability.begin(), a.routerProbability.end(),
                                  b.routerProbability[p]);
        QVERIFY(it != a.routerProbability.end());
        QCOMPARE(
            b.expertLoad[p],
            a.expertLoad[static_cast<std::size_t>(std::distance(a.routerProbability.begin(), it))]);
    }
    // Rank 0 owns experts 0..3, the four hottest: it is the one hot rank.
    QCOMPARE(std::max_element(b.receivedPerRank.begin(), b.receivedPerRank.end())
                 - b.receivedPerRank.begin(),
             std::ptrdiff_t{0});
    QVERIFY(*b.imbalance > *a.imbalance);

    // The listing follows the same order.
    auto small = byId;
    small.tokensPerRank = 50;
    const auto listing = routerAssignments(small);
    QCOMPARE(routeExperts(small).counts,
             scalelab::core::allToAllCounts(listing, expertOwners(small), small.ranks));
}

void TstExperts::allToAllTraffic_data()
{
    QTest::addColumn<ExpertsInputs>("in");
    QTest::addColumn<qint64>("hidden");
    QTest::addColumn<qint64>("bytesPerValue");
    QTest::addColumn<List>("local");
    QTest::addColumn<List>("remote");
    QTest::addColumn<List>("dropped");

    // The chapter's exercise: rank 0 keeps 0 and 1 and sends 3 away; rank 1 sends 2, 3, 2 to
    // itself. Only rank 0's slot for expert 3 crosses the network.
    QTest::newRow("chapter exercise")
        << explicitInputs(2, 4, {{0, 1, 3}, {2, 3, 2}}, List{0, 0, 1, 1}) << 4096LL << 2LL
        << List{2, 3} << List{0, 1} << List{0, 0};
    // Capacity 2 (factor 1 of 8 slots over 4 experts): expert 0 drops rank 0's third slot
    // (local) and both of rank 1's (which would have crossed to rank 0).
    QTest::newRow("drops are not sent")
        << explicitInputs(2, 4, {{0, 0, 0, 1}, {0, 2, 0, 3}}, std::nullopt, 1.0) << 16LL << 1LL
        << List{3, 2} << List{0, 0} << List{3, 0};
    QTest::newRow("one rank keeps everything")
        << explicitInputs(1, 2, {{0, 1, 1}}) << 1LL << 4LL << List{3} << List{0} << List{0};
}

void TstExperts::allToAllTraffic()
{
    QFETCH(ExpertsInputs, in);
    QFETCH(qint64, hidden);
    QFETCH(qint64, bytesPerValue);
    QFETCH(List, local);
    QFETCH(List, remote);
    QFETCH(List, dropped);
    const auto r = routeExperts(in);
    const auto t = scalelab::core::allToAllTraffic(r, hidden, bytesPerValue);
    QCOMPARE(t.bytesPerSlot, std::int64_t{hidden * bytesPerValue});
    QCOMPARE(t.localPerRank, local);
    QCOMPARE(t.remotePerRank, remote);
    QCOMPARE(t.droppedPerRank, dropped);
    const auto sum = [](const List& v) {
        return std::accumulate(v.begin(), v.end(), std::int64_t{0});
    };
    QCOMPARE(t.localSlots, sum(local));
    QCOMPARE(t.offRankSlots, sum(remote));
    QCOMPARE(t.localBytes, sum(local) * hidden * bytesPerValue);
    QCOMPARE(t.offRankBytes, sum(remote) * hidden * bytesPerValue);
    // The three parts of each rank add up to what it receives before drops.
    for (std::size_t d = 0; d < local.size(); ++d)
        QCOMPARE(local[d] + remote[d] + dropped[d], r.receivedPerRank[d]);
    QCOMPARE(sum(dropped), r.dropped);

    // A routed case: the parts still add up, and off-rank is everything off the diagonal.
    auto routed = routerInputs(4, 16, 2, 1.0, 2000, 4);
    routed.capacityFactor = 1.1;
    const auto rr = routeExperts(routed);
    const auto tt = scalelab::core::allToAllTraffic(rr, 7, 3);
    std::int64_t offDiagonalKept = 0;
    for (std::size_t s = 0; s < 4; ++s)
        for (std::size_t d = 0; d < 4; ++d)
            if (s != d)
                offDiagonalKept += rr.counts[s][d] - rr.droppedCounts[s][d];
    QCOMPARE(tt.offRankSlots, offDiagonalKept);
    QCOMPARE(tt.offRankBytes, offDiagonalKept * 21);
    QCOMPARE(tt.localSlots + tt.offRankSlots + rr.dropped, rr.totalSlots);
}

void TstExperts::allToAllTrafficBadInputs()
{
    const auto r = routeExperts(explicitInputs(2, 4, {{0, 1, 3}, {2, 3, 2}}));
    SCALELAB_VERIFY_INPUT_ERROR(scalelab::core::allToAllTraffic(r, 0, 2), "experts.hidden");
    SCALELAB_VERIFY_INPUT_ERROR(scalelab::core::allToAllTraffic(r, 16, 0),
                                "experts.bytes_per_value");
    SCALELAB_VERIFY_INPUT_ERROR(
        scalelab::core::allToAllTraffic(r, std::numeric_limits<std::int64_t>::max() / 2, 2),
        "experts.hidden");
    // Bytes per slot fit, but three of them do not.
    SCALELAB_VERIFY_INPUT_ERROR(
        scalelab::core::allToAllTraffic(r, std::numeric_limits<std::int64_t>::max() / 4, 2),
        "experts.hidden");
}

void TstExperts::loadBalancingLoss_data()
{
    QTest::addColumn<List>("load");
    QTest::addColumn<std::vector<double>>("probability");
    QTest::addColumn<double>("expected");

    // Every value below is a short binary fraction, so the loss is exact.
    QTest::newRow("balanced") << List{5, 5, 5, 5} << std::vector<double>(4, 0.25) << 1.0;
    // Balanced probabilities make any routing 1.0: the loss needs both to be lopsided.
    QTest::newRow("uniform router, lopsided load")
        << List{8, 0, 0, 0} << std::vector<double>(4, 0.25) << 1.0;
    // 2 x (3/4 x 3/4 + 1/4 x 1/4) = 2 x 10/16.
    QTest::newRow("three to one") << List{3, 1} << std::vector<double>{0.75, 0.25} << 1.25;
    // Everything on the one expert the router always picks: the ceiling, E.
    QTest::newRow("one hot expert") << List{6, 0, 0, 0} << std::vector<double>{1, 0, 0, 0} << 4.0;
    // Traffic on the experts the router dislikes lowers it below 1.
    QTest::newRow("against the router") << List{0, 4} << std::vector<double>{0.75, 0.25} << 0.5;
}

void TstExperts::loadBalancingLoss()
{
    QFETCH(List, load);
    QFETCH(std::vector<double>, probability);
    QFETCH(double, expected);
    ExpertsResult r;
    r.expertLoad = load;
    r.routerProbability = probability;
    r.totalSlots = std::accumulate(load.begin(), load.end(), std::int64_t{0});
    const auto loss = scalelab::core::loadBalancingLoss(r);
    QVERIFY(loss.has_value());
    QCOMPARE(*loss, expected);
}

void TstExperts::loadBalancingLossOfTheRouter()
{
    // Skew 0 over 16 experts: P = 1/16 and 32,768 slots, all powers of two, so exactly 1.
    const auto balanced = routeExperts(routerInputs(4, 16, 2, 0.0, 4096));
    QCOMPARE(*scalelab::core::loadBalancingLoss(balanced), 1.0);
    // A lopsided router puts its slots where its probability is: above 1, at most E.
    const auto skewed = routeExperts(routerInputs(4, 16, 2, 2.0, 4096));
    const double loss = *scalelab::core::loadBalancingLoss(skewed);
    QVERIFY(loss > 1.5 && loss <= 16.0);
    // The chapter's exercise has no router: uniform P, so 1 (6 slots: 1/6 is not exact).
    const auto exercise = routeExperts(explicitInputs(2, 4, {{0, 1, 3}, {2, 3, 2}}));
    QVERIFY(std::abs(*scalelab::core::loadBalancingLoss(exercise) - 1.0) < 1e-15);
    // Nothing routed: no fractions to take.
    QVERIFY(!scalelab::core::loadBalancingLoss(routeExperts(explicitInputs(2, 4, {{}, {}}))));
}

QTEST_GUILESS_MAIN(TstExperts)
#include "tst_experts.moc"
