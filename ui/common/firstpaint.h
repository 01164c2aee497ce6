#pragma once

#include <QEvent>
#include <QObject>
#include <QTimer>
#include <cstdio>
#include <cstdlib>

namespace scalelab::ui {

/// For bench_startup: installed on the application, it prints "painted" on stdout once the
/// first window has painted for the first time. A window paints all its widgets in one pass,
/// so a zero-delay timer set at the first paint event fires after that pass. With
/// SCALELAB_EXIT_AT_FIRST_PAINT set the process then ends at once, so that the processor time
/// and page faults the system counts for it are those of the start alone. Header-only, so the
/// benchmark's bare Qt Charts yardstick announces its first paint the same way without linking
/// any of ScaleLab.
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
                if (qEnvironmentVariableIsSet("SCALELAB_EXIT_AT_FIRST_PAINT"))
                    std::_Exit(0); // nothing after the start is counted
            });
        }
        return QObject::eventFilter(watched, event);
    }

private:
    bool m_seen = false;
};

} // namespace scalelab::ui
