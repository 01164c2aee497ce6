#include "choicebox.h"

#include <QStyleOptionComboBox>
#include <QStylePainter>
#include <algorithm>

namespace scalelab::ui {

ChoiceBox::ChoiceBox(QWidget* parent)
    : QComboBox(parent)
{
}

QString ChoiceBox::shortForm(const QString& choice)
{
    qsizetype cut = choice.size();
    for (const QString& mark : {QStringLiteral(": "), QStringLiteral(" (")}) {
        const qsizetype at = choice.indexOf(mark);
        if (at > 0)
            cut = std::min(cut, at);
    }
    return choice.left(cut).trimmed();
}

int ChoiceBox::widthFor(int textWidth) const
{
    QStyleOptionComboBox option;
    initStyleOption(&option);
    const QSize label(textWidth + 4, fontMetrics().height());
    return style()->sizeFromContents(QStyle::CT_ComboBox, &option, label, this).width();
}

int ChoiceBox::widestShortForm() const
{
    int widest = 0;
    for (int i = 0; i < count(); ++i)
        widest = std::max(widest, fontMetrics().horizontalAdvance(shortForm(itemText(i))));
    return widest;
}

QSize ChoiceBox::minimumSizeHint() const
{
    // The short forms alone: QComboBox keeps the minimum it measured under an earlier policy
    // (as wide as its longest choice) through a new one, and would hold a column that wide.
    QSize least = QComboBox::minimumSizeHint();
    least.setWidth(widthFor(widestShortForm()));
    return least;
}

QSize ChoiceBox::sizeHint() const
{
    QSize wanted = QComboBox::sizeHint();
    wanted.setWidth(std::max(wanted.width(), widthFor(widestShortForm())));
    return wanted;
}

void ChoiceBox::paintEvent(QPaintEvent*)
{
    QStylePainter painter(this);
    painter.setPen(palette().color(QPalette::Text));
    QStyleOptionComboBox option;
    initStyleOption(&option);
    painter.drawComplexControl(QStyle::CC_ComboBox, option);
    const QRect label =
        style()->subControlRect(QStyle::CC_ComboBox, &option, QStyle::SC_ComboBoxEditField, this);
    // The label is drawn a pixel in from each side of the field.
    if (fontMetrics().horizontalAdvance(option.currentText) > label.width() - 2)
        option.currentText = shortForm(option.currentText);
    painter.drawControl(QStyle::CE_ComboBoxLabel, option);
}

} // namespace scalelab::ui
