#include "focusring.h"

#include <QApplication>
#include <QPainter>
#include <QPen>
#include <QVariant>

namespace scalelab::ui {

namespace {

constexpr const char* kRingProperty = "scalelab_focusRing";

FocusRing* ringOf(const QWidget* window)
{
    return qobject_cast<FocusRing*>(window->property(kRingProperty).value<QObject*>());
}

} // namespace

FocusRing::FocusRing(QWidget* parent)
    : QFocusFrame(parent)
{
    setObjectName("focusRing");
}

void FocusRing::follow(QWidget* window)
{
    QObject::connect(qApp, &QApplication::focusChanged, window, [window](QWidget*, QWidget* now) {
        FocusRing* ring = ringOf(window);
        if (!now || now->window() != window || !now->parentWidget()) {
            if (ring)
                ring->setWidget(nullptr);
            return;
        }
        // The ring lives beside the widget it marks and dies with that widget's parent.
        if (!ring) {
            ring = new FocusRing(window);
            window->setProperty(kRingProperty, QVariant::fromValue<QObject*>(ring));
            QObject::connect(ring, &QObject::destroyed, window,
                             [window] { window->setProperty(kRingProperty, QVariant()); });
        }
        ring->setWidget(now);
        ring->show();
    });
}

FocusRing* FocusRing::of(const QWidget* window)
{
    FocusRing* ring = ringOf(window);
    return ring && ring->widget() ? ring : nullptr;
}

void FocusRing::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    // Thicker when the type is large (projector mode), as the chart lines are.
    const int width = fontMetrics().height() >= 24 ? 3 : 2;
    QPen pen(palette().color(QPalette::Highlight), width);
    pen.setJoinStyle(Qt::MiterJoin);
    painter.setPen(pen);
    painter.setBrush(Qt::NoBrush);
    const qreal inset = width / 2.0;
    painter.drawRect(QRectF(rect()).adjusted(inset, inset, -inset, -inset));
}

} // namespace scalelab::ui
