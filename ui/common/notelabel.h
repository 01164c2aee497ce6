#pragma once

#include <QHash>
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

/// A word-wrapped note under a chart whose text changes with every step: at each width it asks
/// for the tallest height any of its texts has needed there, so a sentence that comes and goes
/// (the FP8 tab's preview notice, at each key press and again when the exact figures follow)
/// neither moves what stands above it nor makes the whole row lay out and repaint again.
class SteadyNoteLabel : public QLabel {
public:
    explicit SteadyNoteLabel(QWidget* parent = nullptr);

    int heightForWidth(int width) const override;

protected:
    void changeEvent(QEvent* event) override;

private:
    mutable QHash<int, int> m_tallest; ///< width -> the tallest height asked for at it
};

} // namespace scalelab::ui
