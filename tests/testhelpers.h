#pragma once

// Helpers shared by the Qt Test suites. The widget helpers further down are compiled only for
// suites that link the widgets (they see tab.h), so the core suites stay free of Qt Gui.

#include "scalelab/core/error.h"

#include <QCoreApplication>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <functional>
#include <string>

#if __has_include("tab.h")
#define SCALELAB_TEST_WIDGET_HELPERS 1
#include "tab.h"

#include <QAbstractSeries>
#include <QBarSet>
#include <QChart>
#include <QImage>
#include <QList>
#include <QPaintEvent>
#include <QRegion>
#include <QSizeF>
#include <algorithm>
#endif

namespace scalelab::test {

/// Settings of this test run alone: test mode for the standard paths, and the settings file in
/// a directory of this process's own, removed at exit. Suites run side by side (ctest -j, or two
/// checkouts on one machine) would otherwise read and write one file in ~/.qttest.
inline void useOwnSettings(const char* application)
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("ScaleLabTest");
    QCoreApplication::setApplicationName(application);
    static QTemporaryDir dir;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir.path());
    QSettings().clear();
}

/// Runs `f` and checks that it throws core::InputError naming `field`.
inline bool throwsInputError(const std::function<void()>& f, const std::string& field,
                             std::string* message = nullptr)
{
    try {
        f();
    } catch (const core::InputError& e) {
        if (message)
            *message = e.what();
        if (e.field() != field) {
            qWarning("InputError names '%s', expected '%s'", e.field().c_str(), field.c_str());
            return false;
        }
        return true;
    }
    qWarning("no InputError thrown, expected one naming '%s'", field.c_str());
    return false;
}

#ifdef SCALELAB_TEST_WIDGET_HELPERS

/// The first series of type T in `chart` whose name starts with `prefix`, or null.
template <typename T> T* seriesNamed(QChart* chart, const QString& prefix)
{
    for (QAbstractSeries* s : chart->series())
        if (auto* typed = qobject_cast<T*>(s); typed && typed->name().startsWith(prefix))
            return typed;
    return nullptr;
}

/// The bar heights of `set`, in category order.
inline QList<qreal> values(const QBarSet* set)
{
    QList<qreal> out;
    for (int i = 0; i < set->count(); ++i)
        out << set->at(i);
    return out;
}

/// How long settle() waits unless told otherwise: QTRY_VERIFY's own five seconds.
/// A ceiling, not a speed check (bench/ measures speed): long enough for the plan tab's layout
/// search on its worker under the sanitizers (DeepSeek-V3's takes about 8 s under ASan).
inline constexpr int kSettleTimeoutMs = 30000;

/// Calls `seen` whenever `watched` receives an event of `type`, before `watched` handles it;
/// stops watching when it goes.
class EventSpy : public QObject {
public:
    EventSpy(QObject* watched, QEvent::Type type, std::function<void()> seen)
        : m_type(type)
        , m_seen(std::move(seen))
    {
        watched->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == m_type)
            m_seen();
        return QObject::eventFilter(watched, event);
    }

private:
    QEvent::Type m_type;
    std::function<void()> m_seen;
};

/// Gathers the region of every paint event `watched` receives from now on.
class PaintedRegion : public QObject {
public:
    explicit PaintedRegion(QObject* watched) { watched->installEventFilter(this); }

    QRegion region;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::Paint)
            region += static_cast<QPaintEvent*>(event)->region();
        return QObject::eventFilter(watched, event);
    }
};

/// Waits until `tab` shows its current inputs (no recompute scheduled or running on a worker).
/// Records a test failure if that takes longer than `timeoutMs`.
inline void settle(ui::Tab& tab, int timeoutMs = kSettleTimeoutMs)
{
    QTRY_VERIFY_WITH_TIMEOUT(!tab.refreshPending(), timeoutMs);
}

/// The share of the image's width and height that the drawing spans, measured between the
/// outermost pixels that differ from the top-left (background) pixel; {0, 0} for a blank image.
/// A chart drawn small in a corner (a view never laid out at the export size) spans a few
/// percent. Rows are read directly, since QImage::pixel() is slow in Debug builds; images that
/// are not already 32-bit ARGB are converted first, which gives the colours pixel() reports.
inline QSizeF drawnSpan(const QImage& source)
{
    const bool argb = source.format() == QImage::Format_ARGB32
        || source.format() == QImage::Format_ARGB32_Premultiplied;
    const QImage image = argb ? source : source.convertToFormat(QImage::Format_ARGB32);
    if (image.isNull())
        return {0, 0};
    const QRgb background = reinterpret_cast<const QRgb*>(image.constScanLine(0))[0];
    int left = image.width(), right = -1, top = image.height(), bottom = -1;
    for (int y = 0; y < image.height(); ++y) {
        const auto* line = reinterpret_cast<const QRgb*>(image.constScanLine(y));
        for (int x = 0; x < image.width(); ++x)
            if (line[x] != background) {
                left = std::min(left, x);
                right = std::max(right, x);
                top = std::min(top, y);
                bottom = std::max(bottom, y);
            }
    }
    if (right < 0)
        return {0, 0};
    return {double(right - left + 1) / image.width(), double(bottom - top + 1) / image.height()};
}

#endif // SCALELAB_TEST_WIDGET_HELPERS

} // namespace scalelab::test

#define SCALELAB_VERIFY_INPUT_ERROR(expr, field)                                                   \
    QVERIFY(scalelab::test::throwsInputError([&] { (void)(expr); }, field))
