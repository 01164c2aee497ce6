#pragma once

#include <QFocusFrame>
#include <QPointer>

namespace scalelab::ui {

/// A visible mark around whatever has keyboard focus in one window: a ring in the palette's
/// highlight colour, two pixels wide (three in projector type), drawn outside the widget so
/// it covers nothing. Some styles mark focus faintly or not at all (a slider, a tool button,
/// a table); a teacher at a lectern must see where the next key goes.
class FocusRing : public QFocusFrame {
    Q_OBJECT

public:
    /// Follows the focus inside `window` from now on; the ring is owned by the widget it
    /// surrounds' parent (QFocusFrame's way), so the window keeps only a guarded pointer.
    static void follow(QWidget* window);
    /// The ring following the focus in `window`, or null while nothing there has focus.
    static FocusRing* of(const QWidget* window);

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    explicit FocusRing(QWidget* parent = nullptr);
};

} // namespace scalelab::ui
