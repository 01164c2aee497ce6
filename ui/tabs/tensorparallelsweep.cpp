#include "tensorparallelsweep.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

namespace scalelab::ui {

namespace {

/// The weights, both layers' outputs and their size: what every rank count is compared with.
struct Prepared {
    core::MlpWeights w;
    core::MlpWeightsF f;
    Eigen::MatrixXd y64;
    Eigen::MatrixXf y32;
    double outputMagnitude = 0;
};

/// What the cache is kept for: the weights depend on the sizes and the seed, not the ranks.
struct WeightsKey {
    std::int64_t tokens = 0, dModel = 0, dFf = 0, seed = 0;
    friend bool operator==(const WeightsKey&, const WeightsKey&) = default;
};

WeightsKey weightsKey(const core::TensorParallelInputs& in)
{
    return {in.tokens, in.dModel, in.dFf, in.seed};
}

/// tokens x d_model x d_ff: the multiply-adds of one product of the layer.
double layerWork(const core::TensorParallelInputs& in)
{
    return static_cast<double>(in.tokens) * static_cast<double>(in.dModel)
        * static_cast<double>(in.dFf);
}

/// The extra work of a wrong split over `m` multiply-adds, none for the correct one.
double wrongSplitWork(core::MlpSplit split, double m)
{
    switch (split) {
    case core::MlpSplit::Correct:
        return 0;
    case core::MlpSplit::W2ByColumns:
        return m;
    case core::MlpSplit::W1ByRows:
        return 2 * m;
    }
    return 0;
}

core::WrongSplit toCore(core::MlpSplit split)
{
    return split == core::MlpSplit::W2ByColumns ? core::WrongSplit::W2ByColumns
                                                : core::WrongSplit::W1ByRows;
}

} // namespace

/// Shared by the GUI thread and the worker: what has been computed for one set of weights.
struct TensorParallelSweep::Store {
    explicit Store(WeightsKey k)
        : key(k)
    {
    }
    const WeightsKey key;
    std::mutex mutex;
    std::shared_ptr<const Prepared> prepared;
    /// max |unsharded output| once known: with every sample known, no weights are needed.
    std::optional<double> outputMagnitude;
    std::map<std::int64_t, double> float64, float32, w2ByColumns, w1ByRows;

    /// The wrong split's values, or null for the correct split (it has none).
    std::map<std::int64_t, double>* wrong(core::MlpSplit split)
    {
        switch (split) {
        case core::MlpSplit::Correct:
            return nullptr;
        case core::MlpSplit::W2ByColumns:
            return &w2ByColumns;
        case core::MlpSplit::W1ByRows:
            return &w1ByRows;
        }
        return nullptr;
    }
    bool known(const std::map<std::int64_t, double>& values, std::int64_t n)
    {
        const std::lock_guard lock(mutex);
        return values.count(n) > 0;
    }
    void keep(std::map<std::int64_t, double>& values, std::int64_t n, double v)
    {
        const std::lock_guard lock(mutex);
        values[n] = v;
    }
};

std::optional<double> liveDifference(const std::vector<ErrorSample>& samples, std::int64_t ranks,
                                     bool float32)
{
    std::optional<double> out;
    for (const ErrorSample& s : samples)
        if (s.ranks == ranks)
            out = s.wrong ? *s.wrong : (float32 ? s.float32 : s.float64);
    return out;
}

ErrorAxis errorAxis(const std::vector<ErrorSample>& samples, double outputMagnitude)
{
    double lo = std::numeric_limits<double>::infinity(), hi = outputMagnitude;
    for (const ErrorSample& s : samples)
        for (double v : {s.float64, s.float32, s.wrong.value_or(0.0)})
            if (v > 0) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    if (!std::isfinite(lo))
        lo = 1e-16;
    if (!(hi > 0))
        hi = 1;
    int expLo = static_cast<int>(std::floor(std::log10(lo)));
    int expHi = static_cast<int>(std::ceil(std::log10(hi) + 0.05));
    // One label per decade while they fit, otherwise every second or third decade.
    const int step = expHi - expLo <= 9 ? 1 : (expHi - expLo <= 18 ? 2 : 3);
    expLo = static_cast<int>(std::floor(static_cast<double>(expLo) / step)) * step;
    expHi = static_cast<int>(std::ceil(static_cast<double>(expHi) / step)) * step;
    // The lowest band is kept for exact zeros: no positive value falls in it.
    expLo -= step;
    ErrorAxis axis;
    axis.base = std::pow(10.0, step);
    axis.min = std::pow(10.0, expLo);
    axis.max = std::pow(10.0, expHi);
    axis.zeroAt = std::pow(10.0, expLo + 0.5 * step);
    return axis;
}

TensorParallelSweep::TensorParallelSweep() = default;

TensorParallelSweep::~TensorParallelSweep()
{
    // A computation still running stops at its next check instead of finishing for nobody.
    cancel();
}

void TensorParallelSweep::cancel()
{
    if (m_cancel)
        m_cancel->store(true);
}

std::int64_t TensorParallelSweep::maxSamples(const core::TensorParallelInputs& in,
                                             core::MlpSplit split)
{
    const double m = layerWork(in);
    const auto shards = static_cast<double>(in.ranks) * kShardOverhead;
    // Per rank count: both layers in float64 (2m) and float32 (worth m), plus a wrong split.
    double perSample = 3 * m + 2 * shards;
    if (split != core::MlpSplit::Correct)
        perSample += wrongSplitWork(split, m) + shards;
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(kErrorBudget / perSample), 3, 64);
}

TensorParallelSweep::Job TensorParallelSweep::request(const core::TensorParallelInputs& in,
                                                      core::MlpSplit split)
{
    const WeightsKey key = weightsKey(in);
    if (!m_store || !(m_store->key == key)) {
        // The weights left behind are dropped (memory), their figures kept: a slider stepped
        // back to them finds every sample known and computes nothing.
        if (m_store) {
            const std::lock_guard lock(m_store->mutex);
            m_store->prepared.reset();
        }
        const auto known = std::find_if(m_recent.begin(), m_recent.end(),
                                        [&](const auto& store) { return store->key == key; });
        std::shared_ptr<Store> next = known != m_recent.end() ? *known : nullptr;
        if (known != m_recent.end())
            m_recent.erase(known);
        if (m_store)
            m_recent.insert(m_recent.begin(), m_store);
        if (m_recent.size() > kRecentWeights)
            m_recent.pop_back();
        m_store = next ? next : std::make_shared<Store>(key);
    }
    cancel();
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    Job job;
    job.m_store = m_store;
    job.m_cancel = m_cancel;
    job.m_in = in;
    job.m_split = split;
    job.m_counts = core::sampleRankCounts(in.ranks, maxSamples(in, split));
    job.m_generation = ++m_generation;
    return job;
}

double TensorParallelSweep::Job::missingWork() const
{
    const double m = layerWork(m_in);
    const std::lock_guard lock(m_store->mutex);
    double missing = 0;
    const auto* wrong = m_store->wrong(m_split);
    for (std::int64_t n : m_counts) {
        const double shards = static_cast<double>(n) * kShardOverhead;
        missing += m_store->float64.count(n) ? 0.0 : 2 * m + shards;
        missing += m_store->float32.count(n) ? 0.0 : m + shards;
        if (wrong && !wrong->count(n))
            missing += wrongSplitWork(m_split, m) + shards;
    }
    // The weights and both outputs, unless kept or not needed (every sample known).
    if (!m_store->prepared && (missing > 0 || !m_store->outputMagnitude))
        missing += 2.5 * m;
    return missing;
}

bool TensorParallelSweep::Job::stopped() const
{
    return m_cancel->load(std::memory_order_relaxed);
}

std::optional<ErrorSweep> TensorParallelSweep::Job::run() const
{
    Store& store = *m_store;
    std::shared_ptr<const Prepared> prep;
    {
        const std::lock_guard lock(store.mutex);
        prep = store.prepared;
        if (!prep && store.outputMagnitude && allKnown())
            return collectLocked(*store.outputMagnitude);
    }
    if (!prep) {
        auto fresh = std::make_shared<Prepared>();
        fresh->w = core::makeMlpWeights(m_in.tokens, m_in.dModel, m_in.dFf,
                                        static_cast<std::uint64_t>(m_in.seed));
        fresh->f = core::toFloat(fresh->w);
        if (stopped())
            return std::nullopt;
        fresh->y64 = core::mlp(fresh->w);
        if (stopped())
            return std::nullopt;
        fresh->y32 = core::mlp(fresh->f);
        fresh->outputMagnitude = fresh->y64.cwiseAbs().maxCoeff();
        prep = fresh;
        {
            // Kept even when cancelled now: the next request for these weights starts here.
            const std::lock_guard lock(store.mutex);
            store.prepared = prep;
            store.outputMagnitude = prep->outputMagnitude;
        }
        if (stopped())
            return std::nullopt;
    }
    // The current rank count first, so a request cut short still leaves the live figure.
    std::vector<std::int64_t> order = {m_in.ranks};
    for (std::int64_t n : m_counts)
        if (n != m_in.ranks)
            order.push_back(n);
    std::map<std::int64_t, double>* wrong = store.wrong(m_split);
    for (std::int64_t n : order) {
        if (!store.known(store.float64, n)) {
            store.keep(store.float64, n,
                       core::maxAbsDifference(core::tensorParallelMlp(prep->w, n), prep->y64));
            if (stopped())
                return std::nullopt;
        }
        if (!store.known(store.float32, n)) {
            store.keep(store.float32, n,
                       core::maxAbsDifference(core::tensorParallelMlp(prep->f, n), prep->y32));
            if (stopped())
                return std::nullopt;
        }
        if (wrong && !store.known(*wrong, n)) {
            store.keep(*wrong, n,
                       core::maxAbsDifference(core::wrongSplitMlp(prep->w, n, toCore(m_split)),
                                              prep->y64));
            if (stopped())
                return std::nullopt;
        }
    }
    return collect(prep->outputMagnitude);
}

bool TensorParallelSweep::Job::allKnown() const
{
    const Store& store = *m_store;
    const std::map<std::int64_t, double>* wrong = m_store->wrong(m_split);
    return std::all_of(m_counts.begin(), m_counts.end(), [&](std::int64_t n) {
        return store.float64.count(n) && store.float32.count(n) && (!wrong || wrong->count(n));
    });
}

ErrorSweep TensorParallelSweep::Job::collect(double outputMagnitude) const
{
    const std::lock_guard lock(m_store->mutex);
    return collectLocked(outputMagnitude);
}

ErrorSweep TensorParallelSweep::Job::collectLocked(double outputMagnitude) const
{
    Store& store = *m_store;
    std::map<std::int64_t, double>* wrong = store.wrong(m_split);
    ErrorSweep out;
    out.outputMagnitude = outputMagnitude;
    for (std::int64_t n : m_counts) {
        ErrorSample s;
        s.ranks = n;
        s.float64 = store.float64.at(n);
        s.float32 = store.float32.at(n);
        if (wrong)
            s.wrong = wrong->at(n);
        out.samples.push_back(s);
    }
    const double values =
        static_cast<double>(m_in.dFf) * static_cast<double>(m_in.tokens + 2 * m_in.dModel);
    if (values > kKeepValues)
        store.prepared.reset(); // large weights are rebuilt rather than kept
    return out;
}

} // namespace scalelab::ui
