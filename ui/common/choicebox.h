#pragma once

#include <QComboBox>

namespace scalelab::ui {

/// A choice box for a narrow controls column. A choice such as "GPipe: all forwards, then all
/// backwards" is wider than the column on a small screen, and QComboBox would cut it mid-word.
/// When the whole choice does not fit, this box shows its short form, the words before the
/// first ": " or " (" ("GPipe"), and is never narrower than the widest short form; the open
/// list shows every choice whole, and screen readers read the whole choice.
class ChoiceBox : public QComboBox {
public:
    explicit ChoiceBox(QWidget* parent = nullptr);

    /// The words of `choice` before its first ": " or " (", or all of it.
    static QString shortForm(const QString& choice);

    QSize minimumSizeHint() const override;
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    /// The box's width for a label of `textWidth` pixels, frame and arrow included.
    int widthFor(int textWidth) const;
    int widestShortForm() const;
};

} // namespace scalelab::ui
