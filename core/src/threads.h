#pragma once

#include <cstddef>
#include <thread>
#include <vector>

namespace scalelab::core::detail {

/// Runs work(t) for every t in [0, threads) at the same time: t = 0 on the calling thread, the
/// others on threads of their own, and returns once all have finished. Exceptions must not
/// escape work (a worker that needs to report one keeps it for the caller).
template <typename Work> void runOnThreads(std::size_t threads, const Work& work)
{
    std::vector<std::thread> pool;
    pool.reserve(threads > 1 ? threads - 1 : 0);
    for (std::size_t t = 1; t < threads; ++t)
        pool.emplace_back([&work, t] { work(t); });
    work(std::size_t{0});
    for (std::thread& th : pool)
        th.join();
}

} // namespace scalelab::core::detail
