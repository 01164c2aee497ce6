#pragma once

#include <QStyledItemDelegate>

namespace scalelab::ui {

/// Draws a cell that holds one line of text and nothing else (no icon, check box, focus frame or
/// wrapping) as the style draws it, pixel for pixel, with a third of the work: the style lays the
/// text out three times for each cell (to size it, to see whether it must be shortened, and to
/// draw it), this delegate once. A table of figures that changes on every slider step spent more
/// on its cells' text than on anything else in the FP8 tab. Any other cell, and a text too long
/// for its cell (which the style ends with an ellipsis), is left to QStyledItemDelegate.
class PlainCellDelegate : public QStyledItemDelegate {
    Q_OBJECT

public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override;
};

} // namespace scalelab::ui
