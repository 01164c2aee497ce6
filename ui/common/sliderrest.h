#pragma once

#include <QObject>

class QSlider;
class QTimer;

namespace scalelab::ui {

/// Whether the user is moving a tab's sliders. Every move of a watched slider by its user (an
/// action: a key, a click on the groove, the wheel, a drag) starts a move; kSettleMs without
/// another, or letting go of the handle, ends it with rested(). A tab whose exact figures take
/// longer than a frame shows a quicker preview while moving() and the exact figures once rested.
class SliderRest : public QObject {
    Q_OBJECT

public:
    /// How long a slider rests before a move ends: longer than the interval of a held key's
    /// auto-repeat (25 to 33 a second on common desktops, 30 to 40 ms), so that a held key keeps
    /// previewing, and short beside an exact computation worth previewing (about 85 ms for an
    /// FP8 comparison of 4096 x 4096 values).
    static constexpr int kSettleMs = 50;

    explicit SliderRest(QObject* parent = nullptr);

    /// Follows the moves of `slider` too.
    void watch(QSlider* slider);
    /// A watched slider moved and has not rested since.
    bool moving() const { return m_moving; }
    /// How long a slider rests before a move ends (kSettleMs unless set; tests that look at a
    /// preview lengthen it, so that a slow build does not see the exact figures first).
    void setInterval(int ms);
    /// Ends a move at once, without rested() (an export, or a wait for the exact figures,
    /// recomputes at once itself).
    void stop();

signals:
    /// A move ended: the slider rested kSettleMs, or was let go.
    void rested();

private:
    void moved();
    void settle();

    bool m_moving = false;
    QTimer* m_timer;
};

} // namespace scalelab::ui
