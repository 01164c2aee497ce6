#pragma once

#include <QObject>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

// A sanitizer's allocator replaces glibc's heap: there is then no heap of glibc's to grow.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SCALELAB_SANITIZED_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)                            \
    || __has_feature(memory_sanitizer)
#define SCALELAB_SANITIZED_HEAP 1
#endif
#endif

namespace scalelab::ui {

/// Asks the C library to keep freed memory for reuse instead of giving it back: background
/// recomputes free and make again buffers of tens of megabytes on every slider step (an FP8
/// view's error maps and block lists), and memory given back must be faulted in afresh, page by
/// page (at 4096 x 4096, some 11,000 faults, about 90 ms on a virtual machine, every step or
/// every other). Buffers up to 32 MB then come from the heap, and up to 512 MB of freed heap is
/// kept. Call once, first thing in main(); a no-op where the C library is not glibc.
void keepFreedMemoryForReuse();

/// Makes the top of the main thread's heap hold at least `bytes`, growing it in one step, and
/// asks Linux to back the part never written with 2 MB pages, which it then faults in one at a
/// time instead of 512 pages of 4 KB. Starting a window writes some 7 MB of fresh heap (widgets,
/// texts, fonts, the first paint's images): page by page, about 900 faults, some 9 ms of a cold
/// start on a virtual machine, where each costs 10 us. Call once, after keepFreedMemoryForReuse
/// (whose trim threshold keeps the top), as setUpProcessMemory does. A no-op where the C library
/// is not glibc on Linux; where Linux has no 2 MB page to give, the memory is faulted in as usual.
void growHeapOnLargePages(std::size_t bytes);

/// What main() does first, and the benchmarks with it so that they measure what the window
/// does: keepFreedMemoryForReuse, then growHeapOnLargePages with room for a window's start
/// (16 MB; a start writes some 7 MB, and the six tabs made after its first paint more).
void setUpProcessMemory();

/// Touches `bytes` of fresh heap on this thread and frees it again, so that (with
/// keepFreedMemoryForReuse) the next computation of that size on this thread finds its memory
/// faulted in already. For a worker whose results are double-buffered: while the first result of
/// a shape is shown, the second is made in memory that nothing has touched yet.
void prefaultHeap(std::size_t bytes);

/// Runs heavy computations off the GUI thread and delivers only the newest result. A slider
/// dragged across a slow computation never blocks: each request supersedes the previous one,
/// a superseded job that has not started is never run, a running one is asked to stop
/// (stopFlag()), and a superseded result is dropped.
///
/// One worker thread of its own, started on the first request. Requests and results pass
/// between the threads under one std::mutex, so every hand-off is visible to ThreadSanitizer;
/// the Qt event that wakes the GUI thread carries no data.
class BackgroundRunner : public QObject {
    Q_OBJECT

public:
    /// Work runs on the worker thread and returns what to do with its result on the GUI thread.
    using Work = std::function<std::function<void()>()>;
    /// How the worker is scheduled beside the window's thread. Low suits work that runs on while
    /// the user goes on (a search beside the charts): where the processors are all busy, the
    /// window's thread goes first, so the worker cannot stretch the handling of an event.
    enum class Priority { Normal, Low };
    /// The nice value of a Low worker and of the threads it starts (Linux; elsewhere Low is
    /// Normal). About a tenth of a processor's time against a thread of nice 0 that wants it all.
    static constexpr int kLowNice = 10;

    explicit BackgroundRunner(QObject* parent = nullptr, Priority priority = Priority::Normal);
    ~BackgroundRunner() override;

    /// Starts `work`; when it finishes and nothing newer was asked for since, runs the function
    /// it returned on this object's thread and emits delivered().
    void run(Work work);
    /// True while the job running on the worker has been superseded (a newer request waits, or
    /// the runner is being destroyed); false again when the next job starts. A long job reads it
    /// between pieces of its work and gives up early, since its result would be dropped.
    const std::atomic<bool>* stopFlag() const { return &m_stopAsked; }
    /// Whether a request has not been delivered yet.
    bool busy() const;
    /// Blocks until the newest request has been computed and delivered (exports and tests).
    void waitForIdle();

signals:
    void delivered();

private:
    struct Job {
        quint64 ticket = 0;
        Work work;
    };
    struct Result {
        quint64 ticket = 0;
        std::function<void()> apply;
    };

    void workLoop();
    /// On the GUI thread: applies the finished result, if it is still the newest.
    void deliverFinished();

    std::atomic<quint64> m_latest{0};
    std::atomic<bool> m_stopAsked{false}; ///< written under m_mutex
    quint64 m_delivered = 0; ///< GUI thread only

    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::optional<Job> m_pending; ///< asked for, not started
    std::optional<Result> m_finished; ///< computed, not delivered
    bool m_working = false;
    bool m_stopping = false;
    Priority m_priority;
    std::thread m_worker;
};

} // namespace scalelab::ui
