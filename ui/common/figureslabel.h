#pragma once

#include <QFont>
#include <QLabel>

namespace scalelab::ui {

/// The line of current figures above a tab's charts: word-wrapped rich text that changes on
/// every slider step. A plain QLabel answers each of the layout's size questions (size hint,
/// minimum size hint, height for width) by laying its text out again, several times a step;
/// this one lays it out once per text, width and font, and answers the rest from that. At one
/// width it never shrinks, so the charts under it hold still while a slider moves.
class FiguresLabel : public QLabel {
    Q_OBJECT

public:
    explicit FiguresLabel(QWidget* parent = nullptr);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    int heightForWidth(int width) const override;

private:
    mutable QString m_measuredText;
    mutable QFont m_measuredFont;
    mutable int m_measuredWidth = -1;
    mutable int m_height = 0;
};

} // namespace scalelab::ui
