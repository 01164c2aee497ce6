#include "figureslabel.h"

#include <algorithm>

namespace scalelab::ui {

FiguresLabel::FiguresLabel(QWidget* parent)
    : QLabel(parent)
{
    setWordWrap(true);
    setTextFormat(Qt::RichText);
}

int FiguresLabel::heightForWidth(int width) const
{
    if (width != m_measuredWidth || font() != m_measuredFont) {
        m_measuredText = text();
        m_measuredWidth = width;
        m_measuredFont = font();
        m_height = QLabel::heightForWidth(width);
    } else if (text() != m_measuredText) {
        // At the same width the label only grows: when a slider step makes the text a line
        // shorter, the charts below stay where they are instead of jumping up and back down
        // on the next step (and being laid out again at a new size each time).
        m_measuredText = text();
        m_height = std::max(m_height, QLabel::heightForWidth(width));
    }
    return m_height;
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

} // namespace scalelab::ui
