#include "figureslabel.h"

#include <QAbstractTextDocumentLayout>
#include <QEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QTextBlock>
#include <QTextLayout>
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

QPoint FiguresLabel::textOrigin(int height) const
{
    // Placed in the label as QLabel places it, by the vertical alignment.
    const QRect area = contentsRect().adjusted(margin(), margin(), -margin(), -margin());
    int top = area.top();
    if (alignment() & Qt::AlignVCenter)
        top += std::max(0, (area.height() - height) / 2);
    else if (alignment() & Qt::AlignBottom)
        top += std::max(0, area.height() - height);
    return {area.left(), top};
}

void FiguresLabel::paintEvent(QPaintEvent* event)
{
    const QRect area = contentsRect().adjusted(margin(), margin(), -margin(), -margin());
    const int height = layOut(area.width());
    QPainter painter(this);
    const QPoint origin = textOrigin(height);
    painter.translate(origin);
    QAbstractTextDocumentLayout::PaintContext context;
    context.palette = palette();
    context.palette.setColor(QPalette::Text, palette().color(foregroundRole()));
    // Only the lines in what is painted: those a new text left alone are not drawn again.
    context.clip = QRectF(0, 0, area.width(), area.height())
                       .intersected(QRectF(event->rect().translated(-origin)));
    m_document.documentLayout()->draw(&painter, context);
}

QList<FiguresLabel::DrawnLine> FiguresLabel::drawnLines() const
{
    QList<DrawnLine> lines;
    const QAbstractTextDocumentLayout* layout = m_document.documentLayout();
    for (QTextBlock block = m_document.begin(); block.isValid(); block = block.next()) {
        const QTextLayout* text = block.layout();
        if (!text)
            continue;
        const QPointF at = layout->blockBoundingRect(block).topLeft();
        const QString plain = block.text();
        for (int i = 0; i < text->lineCount(); ++i) {
            const QTextLine line = text->lineAt(i);
            DrawnLine drawn;
            drawn.rect = QRectF(0, at.y() + line.y(), m_document.textWidth(), line.height());
            drawn.text = plain.mid(line.textStart(), line.textLength());
            // The formats of the line's characters, each where it starts in the line.
            const int start = block.position() + line.textStart();
            const int end = start + line.textLength();
            for (auto it = block.begin(); !it.atEnd(); ++it) {
                const QTextFragment fragment = it.fragment();
                if (fragment.position() < end && fragment.position() + fragment.length() > start)
                    drawn.formats.append(
                        {std::max(fragment.position(), start) - start, fragment.charFormat()});
            }
            lines.append(drawn);
        }
    }
    return lines;
}

void FiguresLabel::setText(const QString& text)
{
    if (text == QLabel::text())
        return;
    // Line by line only while the text shown is laid out as it is drawn, and the label paints.
    const bool lineByLine = isVisible() && updatesEnabled() && m_laidWidth > 0
        && m_laidText == QLabel::text() && m_laidFont == font();
    if (!lineByLine) {
        QLabel::setText(text);
        return;
    }
    const int heightBefore = layOut(m_laidWidth);
    const QList<DrawnLine> before = drawnLines();
    // QLabel paints the whole label for a new text: held off while it is given (its layout
    // request still goes out, for a text that needs another height).
    setAttribute(Qt::WA_UpdatesDisabled, true);
    QLabel::setText(text);
    setAttribute(Qt::WA_UpdatesDisabled, false);
    const int height = layOut(m_laidWidth);
    if (height != heightBefore) {
        update(); // the lines move (and the label may take another height)
        return;
    }
    const QList<DrawnLine> after = drawnLines();
    QRegion changed;
    const QPoint origin = textOrigin(height);
    for (qsizetype i = 0; i < std::max(before.size(), after.size()); ++i)
        if (i >= before.size() || i >= after.size() || before[i] != after[i])
            for (const QList<DrawnLine>* lines : {&before, &after})
                if (i < lines->size()) {
                    // The whole row, margins and all: a glyph may reach a little past the text.
                    const QRect row = (*lines)[i].rect.adjusted(0, -1, 0, 1).toAlignedRect();
                    changed += QRect(0, origin.y() + row.top(), width(), row.height());
                }
    update(changed);
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
