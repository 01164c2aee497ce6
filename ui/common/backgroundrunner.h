#pragma once

#include <QObject>
#include <QThreadPool>
#include <atomic>
#include <functional>

namespace scalelab::ui {

/// Runs heavy computations off the GUI thread and delivers only the newest result. A slider
/// dragged across a slow computation never blocks: each request supersedes the previous one,
/// a superseded job that has not started is skipped, and a superseded result is dropped.
class BackgroundRunner : public QObject {
    Q_OBJECT

public:
    /// Work runs on the worker thread and returns what to do with its result on the GUI thread.
    using Work = std::function<std::function<void()>()>;

    explicit BackgroundRunner(QObject* parent = nullptr);
    ~BackgroundRunner() override;

    /// Starts `work`; when it finishes and nothing newer was asked for since, runs the function
    /// it returned on this object's thread and emits delivered().
    void run(Work work);
    /// Whether a request has not been delivered yet.
    bool busy() const;
    /// Blocks until the newest request has been computed and delivered (exports and tests).
    void waitForIdle();

signals:
    void delivered();

private:
    void deliver(quint64 ticket, const std::function<void()>& apply);

    QThreadPool m_pool;
    std::atomic<quint64> m_latest{0};
    quint64 m_delivered = 0;
};

} // namespace scalelab::ui
