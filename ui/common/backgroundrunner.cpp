#include "backgroundrunner.h"

#include <QMetaObject>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#ifdef __GLIBC__
#include <malloc.h>
#endif
#ifdef __linux__
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace scalelab::ui {

void keepFreedMemoryForReuse()
{
#ifdef __GLIBC__
    // 32 MB is the largest threshold glibc takes; setting it also stops glibc from moving it.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

void growHeapOnLargePages([[maybe_unused]] std::size_t bytes)
{
#if defined(__GLIBC__) && defined(__linux__) && !defined(SCALELAB_SANITIZED_HEAP)
    constexpr std::uintptr_t kLargePage = std::uintptr_t{2} << 20;
    constexpr std::size_t kPiece = std::size_t{64} << 10; // well below the mmap threshold
    constexpr int kDefaultTopPad = 128 << 10; // glibc's M_TOP_PAD
    bytes = std::min<std::size_t>(bytes, std::size_t{1} << 30);
    const auto end = [] {
        return reinterpret_cast<std::uintptr_t>(sbrk(0));
    };
    const std::uintptr_t before = end();
    // glibc grows the heap so that its top then holds the request plus M_TOP_PAD. Pieces are
    // taken until it grows, or until the top is seen to hold `bytes` already.
    mallopt(M_TOP_PAD, static_cast<int>(bytes));
    std::vector<void*> taken;
    taken.reserve(bytes / kPiece + 2);
    std::uintptr_t written = before; // past every piece, and so past every header written
    while (end() == before && taken.size() <= bytes / kPiece) {
        void* piece = std::malloc(kPiece);
        if (!piece)
            break;
        taken.push_back(piece);
        written = std::max(written, reinterpret_cast<std::uintptr_t>(piece) + kPiece);
    }
    mallopt(M_TOP_PAD, kDefaultTopPad);
    for (auto piece = taken.rbegin(); piece != taken.rend(); ++piece)
        std::free(*piece); // back into the top, which the trim threshold keeps
    // Above the pieces lies only the top: memory never written, unless freed there earlier
    // (then it stays on the small pages it has).
    const std::uintptr_t first = (written + kLargePage - 1) & ~(kLargePage - 1);
    const std::uintptr_t last = end() & ~(kLargePage - 1);
    if (last > first)
        madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
}

void setUpProcessMemory()
{
    keepFreedMemoryForReuse();
    growHeapOnLargePages(std::size_t{16} << 20);
}

void prefaultHeap(std::size_t bytes)
{
    // Pieces below the 32 MB at which glibc would map memory of its own, freed last first so
    // that they join into one free stretch of this thread's heap.
    constexpr std::size_t kPiece = std::size_t{8} << 20;
    std::vector<std::unique_ptr<char[]>> pieces;
    for (std::size_t done = 0; done < bytes; done += kPiece) {
        const std::size_t size = std::min(kPiece, bytes - done);
        pieces.push_back(std::make_unique_for_overwrite<char[]>(size));
        std::memset(pieces.back().get(), 0, size);
    }
    while (!pieces.empty())
        pieces.pop_back();
}

namespace {

/// Lowers the calling thread's priority to `nice` unless it is lower already. Linux keeps a nice
/// value for each thread, and a thread started from this one inherits it.
void lowerThisThread([[maybe_unused]] int nice)
{
#ifdef __linux__
    const auto self = static_cast<id_t>(gettid());
    if (getpriority(PRIO_PROCESS, self) < nice)
        setpriority(PRIO_PROCESS, self, nice);
#endif
}

} // namespace

BackgroundRunner::BackgroundRunner(QObject* parent, Priority priority)
    : QObject(parent)
    , m_priority(priority)
{
}

BackgroundRunner::~BackgroundRunner()
{
    {
        const std::lock_guard lock(m_mutex);
        m_latest = ~quint64(0); // whatever still runs is stale now
        m_stopAsked = true;
        m_stopping = true;
        m_pending.reset();
    }
    m_changed.notify_all();
    if (m_worker.joinable())
        m_worker.join();
}

void BackgroundRunner::run(Work work)
{
    {
        const std::lock_guard lock(m_mutex);
        // Only the newest request waits: one asked for earlier and not started is dropped.
        m_pending = Job{++m_latest, std::move(work)};
        // The job running now, if any, works for a result that will be dropped.
        if (m_working)
            m_stopAsked = true;
        if (!m_worker.joinable())
            m_worker = std::thread([this] {
                if (m_priority == Priority::Low)
                    lowerThisThread(kLowNice);
                workLoop();
            });
    }
    m_changed.notify_all();
}

void BackgroundRunner::workLoop()
{
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_changed.wait(lock, [this] { return m_stopping || m_pending.has_value(); });
        if (m_stopping)
            return;
        Job job = std::move(*m_pending);
        m_pending.reset();
        m_working = true;
        m_stopAsked = false;
        lock.unlock();
        std::function<void()> apply;
        if (job.ticket == m_latest) // else superseded while it waited
            apply = job.work();
        lock.lock();
        m_working = false;
        if (job.ticket == m_latest) {
            m_finished = Result{job.ticket, std::move(apply)};
            // Wakes the GUI thread; the result itself is taken under the mutex there.
            QMetaObject::invokeMethod(this, &BackgroundRunner::deliverFinished,
                                      Qt::QueuedConnection);
        }
        m_changed.notify_all();
    }
}

void BackgroundRunner::deliverFinished()
{
    std::optional<Result> result;
    {
        const std::lock_guard lock(m_mutex);
        result.swap(m_finished);
    }
    if (!result || result->ticket != m_latest)
        return; // delivered already (waitForIdle), or a newer request is on its way
    m_delivered = result->ticket;
    if (result->apply)
        result->apply();
    emit delivered();
}

bool BackgroundRunner::busy() const
{
    return m_delivered != m_latest;
}

void BackgroundRunner::waitForIdle()
{
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return !m_pending && !m_working; });
    }
    deliverFinished();
}

} // namespace scalelab::ui
