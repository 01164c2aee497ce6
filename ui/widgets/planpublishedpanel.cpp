#include "planpublishedpanel.h"

#include "chartstyle.h"
#include "format.h"

#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

namespace scalelab::ui {

namespace {

enum Column { What, Paper, ScaleLab, Difference, Load, Columns };

/// A figure in its unit: "8.03B", "31.4 GB", "70%".
QString inUnit(double value, const QString& unit, int digits)
{
    const QString number = formatNumber(value, digits);
    if (unit == "%")
        return number + '%';
    if (unit == "B")
        return number + 'B';
    return number + ' ' + unit;
}

/// Differences this small are rounding noise in the last printed digit.
bool isZero(double percent)
{
    return std::abs(percent) < 0.005;
}

} // namespace

PlanPublishedPanel::PlanPublishedPanel(const QString& name, QWidget* parent)
    : TablePanel(name, "plan.published",
                 {tr("Compared"), tr("Paper"), tr("ScaleLab"), tr("Difference"), QString()}, {What},
                 parent)
{
    headingLabel()->setText(tr("<b>Published figures, checked</b> &nbsp;(press Load to see the "
                               "configuration in the charts)"));
    table()->setAccessibleName(tr("Published figures beside ScaleLab's"));
    table()->setAccessibleDescription(
        tr("Arrow keys choose a figure; Enter loads its configuration into the charts."));
    connect(table(), &QTableWidget::activated, this, [this](const QModelIndex& index) {
        const int figure = index.row() < m_rowFigure.size() ? m_rowFigure[index.row()] : -1;
        if (figure >= 0)
            emit loadRequested(figure);
    });
}

int PlanPublishedPanel::rowOf(int index) const
{
    return static_cast<int>(m_rowFigure.indexOf(index));
}

QString PlanPublishedPanel::publishedText(int index) const
{
    const document::PublishedFigure& f = m_figures[index];
    const QString value = inUnit(f.published, f.unit, 4);
    switch (f.comparison) {
    case document::Comparison::Below:
        return tr("under %1").arg(value);
    case document::Comparison::About:
        return tr("about %1").arg(value);
    case document::Comparison::Equal:
        break;
    }
    return value;
}

QString PlanPublishedPanel::scalelabText(int index) const
{
    const document::PublishedFigure& f = m_figures[index];
    return inUnit(f.scalelab, f.unit, 4);
}

QString PlanPublishedPanel::differenceText(int index) const
{
    const double d = m_figures[index].differencePercent();
    if (isZero(d))
        return tr("0%");
    // Signed, with a real minus sign, two significant digits for small ones.
    const QString magnitude = formatNumber(std::abs(d), std::abs(d) < 1 ? 2 : 3);
    return (d < 0 ? QStringLiteral("\u2212") : QStringLiteral("+")) + magnitude + '%';
}

void PlanPublishedPanel::setFigures(const QList<document::PublishedFigure>& figures)
{
    m_figures = figures;
    m_rowFigure.clear();
    table()->clearContents();
    table()->setRowCount(0);
    QString group;
    for (int i = 0; i < figures.size(); ++i) {
        if (figures[i].group != group) {
            group = figures[i].group;
            const int row = table()->rowCount();
            table()->insertRow(row);
            auto* title = new QTableWidgetItem(group);
            QFont bold = title->font();
            bold.setBold(true);
            title->setFont(bold);
            title->setFlags(Qt::ItemIsEnabled);
            title->setToolTip(figures[i].source);
            table()->setItem(row, What, title);
            table()->setSpan(row, What, 1, Columns);
            m_rowFigure << -1;
        }
        const int row = table()->rowCount();
        table()->insertRow(row);
        m_rowFigure << i;
        const document::PublishedFigure& f = figures[i];
        const bool differs = !isZero(f.differencePercent());
        // A mark on rows whose difference is explained below the table.
        const QString texts[] = {f.what, publishedText(i), scalelabText(i),
                                 differenceText(i) + (differs ? QStringLiteral(" *") : QString())};
        for (int c = What; c <= Difference; ++c) {
            auto* item = new QTableWidgetItem(texts[c]);
            item->setTextAlignment(c == What ? Qt::AlignLeft | Qt::AlignVCenter
                                             : Qt::AlignRight | Qt::AlignVCenter);
            item->setToolTip(f.why.isEmpty() ? f.source : f.why);
            table()->setItem(row, c, item);
        }
        auto* load = new QPushButton(tr("Load"));
        load->setFocusPolicy(Qt::NoFocus); // Enter on the row does the same
        load->setObjectName(QString("plan.published_load_%1").arg(i));
        load->setAccessibleName(tr("Load the configuration of: %1").arg(f.what));
        load->setToolTip(tr("Show this configuration (preset %1) in the charts").arg(f.presetId));
        connect(load, &QPushButton::clicked, this, [this, i] {
            selectFigure(i);
            emit loadRequested(i);
        });
        table()->setCellWidget(row, Load, load);
    }
    if (!figures.isEmpty())
        selectFigure(0);
}

void PlanPublishedPanel::selectFigure(int index)
{
    const int row = rowOf(index);
    if (row < 0)
        return;
    table()->setCurrentCell(row, What);
    showDetail(row);
}

void PlanPublishedPanel::showDetail(int row)
{
    const int index = row >= 0 && row < m_rowFigure.size() ? m_rowFigure[row] : -1;
    if (index < 0) {
        if (row >= 0 && row < m_rowFigure.size() && row + 1 < m_rowFigure.size())
            detailLabel()->setText(
                tr("<b>Source.</b> %1")
                    .arg(m_figures[m_rowFigure[row + 1]].source.toHtmlEscaped()));
        return;
    }
    const document::PublishedFigure& f = m_figures[index];
    const bool differs = !isZero(f.differencePercent());
    QString text = tr("<b>%1</b>: paper %2, ScaleLab %3, difference %4.")
                       .arg(f.what.toHtmlEscaped(), publishedText(index), scalelabText(index),
                            differenceText(index));
    if (!f.why.isEmpty())
        text += (differs ? tr("<br><b>Why they differ.</b> ") : tr("<br>")) + f.why.toHtmlEscaped();
    text += tr("<br><i>Source:</i> %1").arg(f.source.toHtmlEscaped());
    detailLabel()->setText(text);
}

} // namespace scalelab::ui
