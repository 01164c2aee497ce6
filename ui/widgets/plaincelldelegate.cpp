#include "plaincelldelegate.h"

#include <QApplication>
#include <QPainter>
#include <QStyle>
#include <QTextLayout>

namespace scalelab::ui {

namespace {

/// Whether the style would draw nothing in `cell` but its background and its text on one line.
bool onlyOneLine(const QStyleOptionViewItem& cell)
{
    constexpr auto kOthers = QStyleOptionViewItem::HasDecoration
        | QStyleOptionViewItem::HasCheckIndicator | QStyleOptionViewItem::WrapText;
    return !(cell.features & kOthers)
        && !(cell.state & (QStyle::State_HasFocus | QStyle::State_Editing))
        && !cell.text.contains(QLatin1Char('\n')) && !cell.text.contains(QChar::LineSeparator);
}

} // namespace

void PlainCellDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                              const QModelIndex& index) const
{
    QStyleOptionViewItem cell = option;
    initStyleOption(&cell, index);
    const QWidget* widget = cell.widget;
    const QStyle* style = widget ? widget->style() : QApplication::style();
    if (!onlyOneLine(cell)) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    // As the common style places a cell's text: inside the cell less the focus frame's margin
    // and a pixel on each side, aligned across by the line and down by the line's height.
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, widget) + 1;
    const QRect textRect = cell.rect.adjusted(margin, 0, -margin, 0);
    QTextOption textOption;
    textOption.setWrapMode(QTextOption::ManualWrap);
    textOption.setTextDirection(cell.direction);
    textOption.setAlignment(QStyle::visualAlignment(cell.direction, cell.displayAlignment));
    QTextLayout layout(cell.text, cell.font);
    layout.setTextOption(textOption);
    layout.beginLayout();
    QTextLine line = layout.createLine();
    if (line.isValid()) {
        line.setLineWidth(textRect.width());
        line.setPosition(QPointF(0, 0));
    }
    layout.endLayout();
    if (line.isValid() && line.naturalTextWidth() > textRect.width()) {
        QStyledItemDelegate::paint(painter, option, index); // shortened, with an ellipsis
        return;
    }
    painter->save();
    painter->setClipRect(cell.rect);
    style->drawPrimitive(QStyle::PE_PanelItemViewItem, &cell, painter, widget);
    if (!cell.text.isEmpty() && line.isValid()) {
        QPalette::ColorGroup group =
            cell.state & QStyle::State_Enabled ? QPalette::Normal : QPalette::Disabled;
        if (group == QPalette::Normal && !(cell.state & QStyle::State_Active))
            group = QPalette::Inactive;
        painter->setPen(cell.palette.color(
            group,
            cell.state & QStyle::State_Selected ? QPalette::HighlightedText : QPalette::Text));
        const QRect placed =
            QStyle::alignedRect(Qt::LeftToRight, cell.displayAlignment & Qt::AlignVertical_Mask,
                                layout.boundingRect().size().toSize(), textRect);
        layout.draw(painter, QPointF(textRect.x(), placed.y()));
    }
    painter->restore();
}

} // namespace scalelab::ui
