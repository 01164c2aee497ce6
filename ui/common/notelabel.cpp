#include "notelabel.h"

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

} // namespace scalelab::ui
