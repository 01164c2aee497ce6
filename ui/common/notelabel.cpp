#include "notelabel.h"

#include <QEvent>
#include <algorithm>

namespace scalelab::ui {

NoteLabel::NoteLabel(const QString& text, QWidget* parent)
    : QLabel(text, parent)
{
    setWordWrap(true);
}

QSize NoteLabel::sizeHint() const
{
    const QSize wide = QLabel::sizeHint();
    const int width = std::min(wide.width(), kPreferredChars * fontMetrics().averageCharWidth());
    // As tall as the note is at that width (the layout asks again at the width it gives).
    return {width, heightForWidth(width)};
}

SteadyNoteLabel::SteadyNoteLabel(QWidget* parent)
    : QLabel(parent)
{
    setWordWrap(true);
}

int SteadyNoteLabel::heightForWidth(int width) const
{
    const int needed = QLabel::heightForWidth(width);
    int& tallest = m_tallest[width];
    tallest = std::max(tallest, needed);
    return tallest;
}

void SteadyNoteLabel::changeEvent(QEvent* event)
{
    // Another font or style measures every text anew.
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange)
        m_tallest.clear();
    QLabel::changeEvent(event);
}

} // namespace scalelab::ui
