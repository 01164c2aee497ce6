#pragma once

// The tensor-parallel tab's error sweep, without widgets (and without Qt): which rank counts
// to sample, the real MLP's max |sharded - unsharded| at each, a cache of what is known for
// the current weights, and which request is the newest. The tab asks it and draws.

#include "scalelab/core/scenario.h"
#include "scalelab/core/tensor_parallel.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace scalelab::ui {

/// One rank count on the error chart.
struct ErrorSample {
    std::int64_t ranks = 0;
    double float64 = 0; ///< max |sharded - unsharded| in float64
    double float32 = 0; ///< the same, everything computed in float32
    std::optional<double> wrong; ///< the wrong split's error in float64, when one is chosen
    bool operator==(const ErrorSample&) const = default;
};

/// What a finished request shows: the samples, ascending in ranks, and max |unsharded output|
/// in float64 (the size a wrong split's error is compared with).
struct ErrorSweep {
    std::vector<ErrorSample> samples;
    double outputMagnitude = 0;
};

/// The live figure at `ranks`: the wrong split's error when one is chosen, else the chosen
/// precision's; empty when `ranks` is not among the samples.
std::optional<double> liveDifference(const std::vector<ErrorSample>& samples, std::int64_t ranks,
                                     bool float32);

/// The error chart's log axis: exact zeros cannot be shown on a log scale, so the lowest band
/// is kept for them and no positive value falls in it.
struct ErrorAxis {
    double base = 10; ///< 10, 100 or 1000: one label per decade while they fit
    double min = 1e-17;
    double max = 1;
    double zeroAt = 1e-16; ///< where exact zeros are drawn: the middle of the lowest band
};

/// The axis that shows every positive value of `samples` and `outputMagnitude`.
ErrorAxis errorAxis(const std::vector<ErrorSample>& samples, double outputMagnitude);

/// The error sweep with its cache. Each request() is one job that may run on any thread;
/// values computed for the same weights (sizes and seed) are kept between requests, since a
/// rank count's error does not depend on which rank count is chosen now. A new request
/// cancels the one before: it stops at its next check and its result is not shown.
/// request(), cancel() and isCurrent() belong to one thread (the GUI's); Job::run to any.
class TensorParallelSweep {
    struct Store;

public:
    /// One request: everything it needs, shared with the sweep's cache.
    class Job {
    public:
        /// Computes what is missing, current rank count first (so a request cut short still
        /// leaves the live figure in the cache). Empty when cancelled before the end.
        /// Each figure is the same computation `scalelab report` makes for that rank count.
        std::optional<ErrorSweep> run() const;
        /// The work still to do, in float64 multiply-adds (float32 counts half): what is known
        /// for these weights is not computed again.
        double missingWork() const;
        /// Whether the work is cheap enough to do at once, with no thread hop.
        bool runsInline() const { return missingWork() <= kInlineWork; }
        std::uint64_t generation() const { return m_generation; }
        /// The rank counts sampled, ascending.
        const std::vector<std::int64_t>& counts() const { return m_counts; }

    private:
        friend class TensorParallelSweep;
        bool stopped() const;
        /// The samples of every rank count, all computed by now.
        ErrorSweep collect(double outputMagnitude) const;
        /// collect() with the store's mutex already held.
        ErrorSweep collectLocked(double outputMagnitude) const;
        /// Whether every sample this job shows is known; the store's mutex held.
        bool allKnown() const;

        std::shared_ptr<Store> m_store;
        std::shared_ptr<std::atomic<bool>> m_cancel;
        core::TensorParallelInputs m_in;
        core::MlpSplit m_split = core::MlpSplit::Correct;
        std::vector<std::int64_t> m_counts;
        std::uint64_t m_generation = 0;
    };

    TensorParallelSweep();
    ~TensorParallelSweep();
    TensorParallelSweep(const TensorParallelSweep&) = delete;
    TensorParallelSweep& operator=(const TensorParallelSweep&) = delete;

    /// A new request for `in` (valid inputs) under `split`; it supersedes every earlier one.
    Job request(const core::TensorParallelInputs& in, core::MlpSplit split);
    /// Stops the newest request at its next check (inputs moved on, or the view is gone).
    void cancel();
    /// Whether `generation` is the newest request: older results are dropped.
    bool isCurrent(std::uint64_t generation) const { return generation == m_generation; }

    /// Rank counts sampled for `in` under `split`: as many as the work budget allows, 3..64.
    static std::int64_t maxSamples(const core::TensorParallelInputs& in, core::MlpSplit split);

    /// Work the sweep may spend on its samples, in float64 multiply-adds (float32 counts
    /// half): about a second and a half on one core of a plain x86-64 build.
    static constexpr double kErrorBudget = 1.2e10;
    /// What one shard costs beyond its multiply-adds (allocations, small products), in the
    /// same unit: thousands of one-column shards are not free.
    static constexpr double kShardOverhead = 4e4;
    /// Weights larger than this many values are not kept between requests (memory over speed).
    static constexpr double kKeepValues = 16e6;
    /// Work below this (float64 multiply-adds) is done on the GUI thread: well under a
    /// millisecond, cheaper than handing it to the worker and back.
    static constexpr double kInlineWork = 2e6;

    /// Figures of this many earlier weights are kept besides the current ones (without the
    /// weights themselves): stepping a size back and forth computes each side once.
    static constexpr std::size_t kRecentWeights = 8;

private:
    std::shared_ptr<Store> m_store;
    std::vector<std::shared_ptr<Store>> m_recent; ///< earlier weights, the latest first
    std::shared_ptr<std::atomic<bool>> m_cancel;
    std::uint64_t m_generation = 0;
};

} // namespace scalelab::ui
