#pragma once

#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace scalelab::core::detail {

/// Where the helper threads of runOnThreads start. Linux places a new thread beside a busy one
/// when every other processor is busy at that instant (a window's thread painting), and then
/// moves it only once it is no longer "cache hot": a caller and its helper would share a core for
/// several milliseconds while the other stood idle (bench_redraw saw a million-token routing
/// take 14 ms instead of 7 in four draws of ten). So each helper is first held on a processor of
/// its own, the t-th the process may use counted after the caller's, and lets itself go again
/// as soon as it runs there: a placement, not a pinning, so a helper whose processor gets busy
/// can still move. Where the processors are too few, or elsewhere than Linux, nothing is done.
class HelperPlacement {
public:
    HelperPlacement()
    {
#if defined(__linux__)
        CPU_ZERO(&m_allowed);
        if (sched_getaffinity(0, sizeof(m_allowed), &m_allowed) != 0)
            return;
        const int own = sched_getcpu();
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &m_allowed) && cpu != own)
                m_others.push_back(cpu);
#endif
    }

    /// Holds helper t (>= 1), just started as `th`, on its processor.
    void hold([[maybe_unused]] std::thread& th, [[maybe_unused]] std::size_t t) const
    {
#if defined(__linux__)
        if (t > m_others.size())
            return;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(m_others[t - 1], &one);
        pthread_setaffinity_np(th.native_handle(), sizeof(one), &one);
#endif
    }

    /// Called by a helper once held (or not): it may run anywhere again.
    void release() const
    {
#if defined(__linux__)
        if (!m_others.empty())
            sched_setaffinity(0, sizeof(m_allowed), &m_allowed);
#endif
    }

private:
#if defined(__linux__)
    cpu_set_t m_allowed;
    std::vector<int> m_others;
#endif
};

/// Runs work(t) for every t in [0, threads) at the same time: t = 0 on the calling thread, the
/// others on threads of their own, each started on a processor of its own where there are
/// enough (HelperPlacement), and returns once all have finished. Exceptions must not escape work
/// (a worker that needs to report one keeps it for the caller).
template <typename Work> void runOnThreads(std::size_t threads, const Work& work)
{
    if (threads <= 1) { // the calling thread alone: nothing to start or place
        work(std::size_t{0});
        return;
    }
    const HelperPlacement placement;
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    // A helper lets itself go only after it was held, or the hold would outlast its release.
    std::vector<std::atomic<bool>> held(threads);
    for (std::size_t t = 1; t < threads; ++t) {
        pool.emplace_back([&work, &placement, &held, t] {
            held[t].wait(false, std::memory_order_acquire);
            placement.release();
            work(t);
        });
        placement.hold(pool.back(), t);
        held[t].store(true, std::memory_order_release);
        held[t].notify_one();
    }
    work(std::size_t{0});
    for (std::thread& th : pool)
        th.join();
}

} // namespace scalelab::core::detail
