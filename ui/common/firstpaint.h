#pragma once

#include <QEvent>
#include <QObject>
#include <QTimer>
#include <cstdio>

namespace scalelab::ui {

/// For bench_startup: installed on the application, it prints "painted" on stdout once the
/// first window has painted for the first time. A window paints all its widgets in one pass,
/// so a zero-delay timer set at the first paint event fires after that pass. Header-only, so
/// the benchmark's bare Qt Charts yardstick announces its first paint the same way without
/// linking any of ScaleLab.
class FirstPaintAnnouncer : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::Paint && !m_seen) {
            m_seen = true;
            QTimer::singleShot(0, this, [] {
                std::puts("painted");
                std::fflush(stdout);
            });
        }
        return QObject::eventFilter(watched, event);
    }

private:
    bool m_seen = false;
};

} // namespace scalelab::ui
