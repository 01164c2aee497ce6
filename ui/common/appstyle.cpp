#include "appstyle.h"

#include <QApplication>
#include <QGroupBox>
#include <QIconEngine>
#include <QPainter>
#include <QStyleFactory>
#include <QStyleOption>
#include <QSvgRenderer>
#include <algorithm>

namespace scalelab::ui {

namespace {

/// Fusion's gap between a titled group box's top and its frame, below the title (qfusionstyle.cpp).
constexpr int kFusionGroupBoxTopMargin = 3;

/// A frame like Fusion's picture of one: a line a shade darker than the window with its corners
/// cut, a fainter line just inside it, and a fill barely darker than the window. Like the
/// picture's, the line leaves the frame's first column and row empty. Solid rectangles only, no
/// antialiased path: a slider step repaints the group box around it.
void drawGroupBoxFrame(const QRect& frame, const QPalette& palette, QPainter* painter)
{
    const QColor window = palette.window().color();
    const QColor line = window.darker(111), inner = window.darker(103);
    const int l = frame.left() + 1, t = frame.top() + 1, r = frame.right(), b = frame.bottom();
    if (r - l < 4 || b - t < 4)
        return;
    painter->fillRect(QRect(QPoint(l + 2, t + 2), QPoint(r - 2, b - 2)), window.darker(101));
    const auto run = [painter](int x0, int y0, int x1, int y1, const QColor& colour) {
        painter->fillRect(QRect(QPoint(x0, y0), QPoint(x1, y1)), colour);
    };
    run(l + 2, t, r - 2, t, line); // the line, its corners cut by one pixel
    run(l + 2, b, r - 2, b, line);
    run(l, t + 2, l, b - 2, line);
    run(r, t + 2, r, b - 2, line);
    for (const QPoint corner :
         {QPoint(l + 1, t + 1), QPoint(r - 1, t + 1), QPoint(l + 1, b - 1), QPoint(r - 1, b - 1)})
        run(corner.x(), corner.y(), corner.x(), corner.y(), line);
    run(l + 2, t + 1, r - 2, t + 1, inner); // the fainter line inside
    run(l + 2, b - 1, r - 2, b - 1, inner);
    run(l + 1, t + 2, l + 1, b - 2, inner);
    run(r - 1, t + 2, r - 1, b - 2, inner);
}

/// Two chevrons pointing right (or down), the sign of menus that did not fit.
QIcon extensionIcon(bool horizontal, const QColor& colour)
{
    QIcon icon;
    for (const int size : {16, 32}) {
        QPixmap pixmap(size, size);
        pixmap.fill(Qt::transparent);
        QPainter painter(&pixmap);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setPen(QPen(colour, size / 10.0, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
        if (!horizontal) // the same chevrons, turned to point down
            painter.setTransform(QTransform(0, 1, 1, 0, 0, 0));
        const double s = size;
        for (const double x : {0.3 * s, 0.55 * s}) {
            const QPointF chevron[] = {{x, 0.3 * s}, {x + 0.15 * s, 0.5 * s}, {x, 0.7 * s}};
            painter.drawPolyline(chevron, 3);
        }
        painter.end();
        icon.addPixmap(pixmap);
    }
    return icon;
}

class SvgIconEngine : public QIconEngine {
public:
    explicit SvgIconEngine(const QString& path)
        : m_path(path)
        , m_renderer(path)
    {
    }
    void paint(QPainter* painter, const QRect& rect, QIcon::Mode, QIcon::State) override
    {
        if (m_renderer.isValid())
            m_renderer.render(painter, rect);
    }
    // QIconEngine's own pixmap() paints on a pixmap it never clears.
    QPixmap pixmap(const QSize& size, QIcon::Mode mode, QIcon::State state) override
    {
        QPixmap pixmap(size);
        pixmap.fill(Qt::transparent);
        QPainter painter(&pixmap);
        paint(&painter, QRect(QPoint(0, 0), size), mode, state);
        return pixmap;
    }
    QIconEngine* clone() const override { return new SvgIconEngine(m_path); }
    bool isNull() override { return !m_renderer.isValid(); }

private:
    QString m_path;
    QSvgRenderer m_renderer;
};

} // namespace

AppStyle::AppStyle()
    : QProxyStyle(QStyleFactory::create(QApplication::style()->name()))
    , m_drawsFusionPictures(baseStyle()->name().compare("fusion", Qt::CaseInsensitive) == 0)
{
}

void AppStyle::drawPrimitive(PrimitiveElement element, const QStyleOption* option,
                             QPainter* painter, const QWidget* widget) const
{
    if (element != PE_FrameGroupBox || !m_drawsFusionPictures) {
        QProxyStyle::drawPrimitive(element, option, painter, widget);
        return;
    }
    // Where Fusion puts its frame: below the title, or near the top without title or box.
    const auto* box = qobject_cast<const QGroupBox*>(widget);
    const bool bare = box && !box->isCheckable() && box->title().isEmpty();
    const int top = kFusionGroupBoxTopMargin
        + (bare ? 0
                : std::max(pixelMetric(PM_ExclusiveIndicatorHeight, option, widget),
                           option->fontMetrics.height()));
    drawGroupBoxFrame(option->rect.adjusted(0, top, 0, 0), option->palette, painter);
}

QIcon AppStyle::standardIcon(StandardPixmap icon, const QStyleOption* option,
                             const QWidget* widget) const
{
    if (m_drawsFusionPictures
        && (icon == SP_ToolBarHorizontalExtensionButton
            || icon == SP_ToolBarVerticalExtensionButton)) {
        const QPalette palette = widget ? widget->palette() : QApplication::palette();
        return extensionIcon(icon == SP_ToolBarHorizontalExtensionButton,
                             palette.windowText().color());
    }
    return QProxyStyle::standardIcon(icon, option, widget);
}

void installAppStyle()
{
    QApplication::setStyle(new AppStyle);
}

QIcon svgIcon(const QString& path)
{
    return QIcon(new SvgIconEngine(path));
}

} // namespace scalelab::ui
