#pragma once

#include <QLabel>

namespace scalelab::ui {

/// A note in a controls column: word-wrapped text that takes the column's width rather than
/// setting it. A word-wrapped QLabel asks for a line of up to 80 characters, so one long note
/// would widen the whole column (and squeeze the charts) on a small screen; this one asks for
/// at most kPreferredChars, and wraps to whatever width the column has.
class NoteLabel : public QLabel {
public:
    explicit NoteLabel(const QString& text = {}, QWidget* parent = nullptr);

    /// The widest line the note asks for, in average characters of its font.
    static constexpr int kPreferredChars = 24;

    QSize sizeHint() const override;
};

} // namespace scalelab::ui
