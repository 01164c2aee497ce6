#include "sliderrest.h"

#include <QSlider>
#include <QTimer>

namespace scalelab::ui {

SliderRest::SliderRest(QObject* parent)
    : QObject(parent)
    , m_timer(new QTimer(this))
{
    m_timer->setSingleShot(true);
    m_timer->setInterval(kSettleMs);
    connect(m_timer, &QTimer::timeout, this, &SliderRest::settle);
}

void SliderRest::watch(QSlider* slider)
{
    // The action comes before the slider's new value, so the recompute it causes sees the move.
    connect(slider, &QSlider::actionTriggered, this, &SliderRest::moved);
    connect(slider, &QSlider::sliderReleased, this, &SliderRest::settle);
}

void SliderRest::setInterval(int ms)
{
    m_timer->setInterval(ms);
}

void SliderRest::moved()
{
    m_moving = true;
    m_timer->start();
}

void SliderRest::settle()
{
    stop();
    emit rested();
}

void SliderRest::stop()
{
    m_timer->stop();
    m_moving = false;
}

} // namespace scalelab::ui
