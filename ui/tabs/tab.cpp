#include "tab.h"

#include <QLabel>
#include <QTimer>

namespace scalelab::ui {

Tab::Tab(QWidget* parent)
    : QWidget(parent)
    , m_timer(new QTimer(this))
    , m_message(new QLabel(this))
{
    m_timer->setSingleShot(true);
    m_timer->setInterval(0);
    connect(m_timer, &QTimer::timeout, this, &Tab::refreshNow);
    m_message->setObjectName("message");
    m_message->setWordWrap(true);
    m_message->setStyleSheet("color: #b00000; font-weight: bold;");
    m_message->hide();
}

void Tab::scheduleRefresh()
{
    m_timer->start();
}

bool Tab::refreshPending() const
{
    return m_timer->isActive();
}

void Tab::refreshNow()
{
    m_timer->stop();
    try {
        recompute();
        m_message->clear();
        m_message->hide();
    } catch (const core::InputError& e) {
        // The charts keep the last good state; the message says which input is refused.
        m_message->setText(QString::fromStdString(e.what()));
        m_message->show();
    }
    emit refreshed();
}

} // namespace scalelab::ui
