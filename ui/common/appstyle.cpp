#include "appstyle.h"

#include <QApplication>
#include <QGroupBox>
#include <QIconEngine>
#include <QPainter>
#include <QPainterPath>
#include <QStyleFactory>
#include <QStyleOption>
#include <QSvgRenderer>
#include <algorithm>

namespace scalelab::ui {

namespace {

/// Fusion's gap between a titled group box's top and its frame, below the title (qfusionstyle.cpp).
constexpr int kFusionGroupBoxTopMargin = 3;

/// A frame like Fusion's picture of one: a rounded line a shade darker than the window, a fainter
/// line just inside it, and a fill barely darker than the window. Like the picture's, the line
/// leaves the frame's first column and row empty.
void drawGroupBoxFrame(const QRect& frame, const QPalette& palette, QPainter* painter)
{
    const QColor window = palette.window().color();
    const QRectF line = QRectF(frame).adjusted(1.5, 1.5, -0.5, -0.5);
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setPen(QPen(window.darker(111), 1));
    painter->setBrush(window.darker(101));
    painter->drawRoundedRect(line, 2, 2);
    painter->setPen(QPen(window.darker(103), 1));
    painter->setBrush(Qt::NoBrush);
    painter->drawRoundedRect(line.adjusted(1, 1, -1, -1), 1.5, 1.5);
    painter->restore();
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
