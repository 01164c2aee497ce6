#include "figureslabel.h"

#include <QAbstractTextDocumentLayout>
#include <QEvent>
#include <QPainter>
#include <algorithm>
#include <cmath>

namespace scalelab::ui {

FiguresLabel::FiguresLabel(QWidget* parent)
    : QLabel(parent)
{
    setWordWrap(true);
    setTextFormat(Qt::RichText); // also what assistive technology reads it as
    // At the top of the height it keeps: the first line stays where it is when a sentence
    // comes and goes (centred, the whole text moved by half a line at each preview and back).
    setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_document.setDocumentMargin(0);
    m_document.setUndoRedoEnabled(false);
}

int FiguresLabel::textWidth(int width) const
{
    const QMargins m = contentsMargins();
    return std::max(1, width - m.left() - m.right() - 2 * margin());
}

int FiguresLabel::layOut(int width) const
{
    if (text() != m_laidText || font() != m_laidFont) {
        // Font and width before the new text: setHtml lays the text out at once, with what it
        // finds. A new font or width lays out again what the document holds, even when equal to
        // the last, and that is the old text: emptied first, there is nothing to lay out (a
        // font set on every new text cost a third of the line's time on every slider step).
        m_document.clear();
        m_document.setDefaultFont(font());
        m_laidText = text();
        m_laidFont = font();
        if (m_document.textWidth() != width)
            m_document.setTextWidth(width);
        m_laidWidth = width;
        m_document.setHtml(text());
    }
    if (width != m_laidWidth) {
        m_laidWidth = width;
        m_document.setTextWidth(width);
    }
    return static_cast<int>(std::ceil(m_document.size().height()));
}

int FiguresLabel::heightForWidth(int width) const
{
    const QMargins m = contentsMargins();
    const int frame = m.top() + m.bottom() + 2 * margin();
    if (font() != m_measuredFont) {
        m_measured.clear(); // another font measures every text anew
        m_measuredFont = font();
    }
    // At each width the label only grows: when a slider step makes the text a line shorter, the
    // charts below stay where they are instead of jumping up and back down on the next step
    // (and being laid out again at a new size each time). A width kept apart from the others:
    // the layout's questions at other widths do not reset it.
    const auto found = m_measured.find(width);
    if (found != m_measured.end() && found->text == text())
        return found->tallest;
    const int needed = layOut(textWidth(width)) + frame;
    Measured& at = m_measured[width];
    at.text = text();
    at.tallest = std::max(at.tallest, needed);
    return at.tallest;
}

QSize FiguresLabel::sizeHint() const
{
    // No width of its own: it takes the charts' width and wraps to it (heightForWidth).
    return {0, heightForWidth(std::max(width(), 1))};
}

QSize FiguresLabel::minimumSizeHint() const
{
    return {0, fontMetrics().lineSpacing() + 2 * margin()};
}

void FiguresLabel::paintEvent(QPaintEvent*)
{
    const QRect area = contentsRect().adjusted(margin(), margin(), -margin(), -margin());
    const int height = layOut(area.width());
    QPainter painter(this);
    // Placed in the label as QLabel places it, by the vertical alignment.
    int top = area.top();
    if (alignment() & Qt::AlignVCenter)
        top += std::max(0, (area.height() - height) / 2);
    else if (alignment() & Qt::AlignBottom)
        top += std::max(0, area.height() - height);
    painter.translate(area.left(), top);
    QAbstractTextDocumentLayout::PaintContext context;
    context.palette = palette();
    context.palette.setColor(QPalette::Text, palette().color(foregroundRole()));
    context.clip = QRectF(0, 0, area.width(), area.height());
    m_document.documentLayout()->draw(&painter, context);
}

FiguresLine::FiguresLine(QWidget* parent)
    : QWidget(parent)
    , m_label(new FiguresLabel(this))
{
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

QSize FiguresLine::sizeHint() const
{
    return {0, heightForWidth(std::max(width(), 1))};
}

QSize FiguresLine::minimumSizeHint() const
{
    return m_label->minimumSizeHint();
}

int FiguresLine::heightForWidth(int width) const
{
    return m_label->heightForWidth(width);
}

bool FiguresLine::event(QEvent* event)
{
    // What the label posts to its parent after each new text (a parent with no layout of its
    // own is sent the request instead of having its layout invalidated).
    if (event->type() == QEvent::LayoutRequest) {
        followLabel();
        return true;
    }
    if (event->type() == QEvent::Show)
        followLabel(); // a text set while hidden posted nothing
    return QWidget::event(event);
}

void FiguresLine::followLabel()
{
    if (heightForWidth(std::max(width(), 1)) != height())
        updateGeometry();
}

void FiguresLine::resizeEvent(QResizeEvent*)
{
    m_label->setGeometry(rect());
}

} // namespace scalelab::ui
