#include "backgroundrunner.h"

#include <QCoreApplication>
#include <QMetaObject>
#include <QRunnable>

namespace scalelab::ui {

BackgroundRunner::BackgroundRunner(QObject* parent)
    : QObject(parent)
{
    // One worker: requests run in order, and stale ones are skipped rather than run in
    // parallel with the newest.
    m_pool.setMaxThreadCount(1);
}

BackgroundRunner::~BackgroundRunner()
{
    m_latest = ~quint64(0); // whatever still runs is stale now
    m_pool.waitForDone();
}

void BackgroundRunner::run(Work work)
{
    const quint64 ticket = ++m_latest;
    m_pool.start(QRunnable::create([this, ticket, work = std::move(work)] {
        if (ticket != m_latest)
            return; // superseded before it started
        std::function<void()> apply = work();
        QMetaObject::invokeMethod(
            this, [this, ticket, apply = std::move(apply)] { deliver(ticket, apply); },
            Qt::QueuedConnection);
    }));
}

void BackgroundRunner::deliver(quint64 ticket, const std::function<void()>& apply)
{
    if (ticket != m_latest)
        return; // a newer request is on its way
    m_delivered = ticket;
    if (apply)
        apply();
    emit delivered();
}

bool BackgroundRunner::busy() const
{
    return m_delivered != m_latest;
}

void BackgroundRunner::waitForIdle()
{
    m_pool.waitForDone();
    QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);
}

} // namespace scalelab::ui
