#pragma once

#include <QFont>
#include <QHash>
#include <QLabel>
#include <QList>
#include <QPair>
#include <QTextCharFormat>
#include <QTextDocument>

namespace scalelab::ui {

/// The line of current figures above a tab's charts: word-wrapped rich text that changes on
/// every slider step. It lays its text out once per text, font and width, in a document of its
/// own, and both measures and paints from that one layout. A plain QLabel lays rich text out for
/// each of the layout's size questions, again to paint, and its text control then asks for a
/// second paint after the first (every step painted the line twice). At each width it asks for
/// the tallest height any of its texts has needed there, so what stands below holds still while
/// a slider moves, and a sentence that comes and goes (the FP8 tab's preview notice) does not
/// move it either; each width on its own, as the layout asks at widths other than the one it
/// gives. Its text cannot be selected: the same figures are in `scalelab report` and in the
/// exported explanation.
class FiguresLabel : public QLabel {
    Q_OBJECT

public:
    explicit FiguresLabel(QWidget* parent = nullptr);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    int heightForWidth(int width) const override;

    /// Sets the text and paints again only the lines it changed: a slider step changes a few
    /// figures, and painting the whole text again took 2.6 M instructions of an FP8 step. (It
    /// hides QLabel::setText: the tabs reach their figures line as a FiguresLabel.)
    void setText(const QString& text);

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    /// One line of the laid-out text as it is drawn: where, what, in which formats.
    struct DrawnLine {
        QRectF rect; ///< in the document, the text's whole width
        QString text;
        QList<QPair<int, QTextCharFormat>> formats; ///< from each format's first character
        bool operator==(const DrawnLine&) const = default;
    };
    /// The lines of the text as laid out now.
    QList<DrawnLine> drawnLines() const;
    /// Where the document's top left is drawn in the label, for a text `height` high.
    QPoint textOrigin(int height) const;

    /// The space the text has inside a label `width` wide.
    int textWidth(int width) const;
    /// Lays the current text out `width` wide (a no-op when it already is); its height.
    int layOut(int width) const;

    mutable QTextDocument m_document;
    mutable QString m_laidText; ///< what m_document holds, in m_laidFont, m_laidWidth wide
    mutable QFont m_laidFont;
    mutable int m_laidWidth = -1;
    /// What the label has needed at one width: the text last measured there, and the tallest
    /// height any text has needed there.
    struct Measured {
        QString text;
        int tallest = 0;
    };
    mutable QHash<int, Measured> m_measured; ///< by width, in m_measuredFont
    mutable QFont m_measuredFont;
};

/// The figures line as a tab lays it out: the label inside a box of its own. A QLabel given a new
/// text asks its parent's layout to lay everything out again, though a new figure rarely needs
/// another line; in the plan tab that was a quarter of a slider step. The box takes the label's
/// request and passes it on only when the label needs a height other than the one it has.
class FiguresLine : public QWidget {
    Q_OBJECT

public:
    explicit FiguresLine(QWidget* parent = nullptr);

    FiguresLabel* label() const { return m_label; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

protected:
    bool event(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    /// Asks the layout for room again if the label's text needs another height.
    void followLabel();

    FiguresLabel* m_label;
};

} // namespace scalelab::ui
