#pragma once

#include "planpresets.h"
#include "tablepanel.h"

#include <QList>

QT_BEGIN_NAMESPACE
class QLabel;
class QTableWidget;
QT_END_NAMESPACE

namespace scalelab::ui {

/// Published figures beside ScaleLab's: one row per reference value (what, the paper's value,
/// ScaleLab's for the same configuration, the difference in percent, and a button that loads
/// that configuration), grouped by source. The selected row's citation and the reason for its
/// difference show under the table. It sits in the tab's chart grid; it is not one of the
/// tab's exported charts, but render() draws it like one.
class PlanPublishedPanel : public TablePanel {
    Q_OBJECT

public:
    explicit PlanPublishedPanel(const QString& name, QWidget* parent = nullptr);

    void setFigures(const QList<document::PublishedFigure>& figures);
    const QList<document::PublishedFigure>& figures() const { return m_figures; }

    /// The table row of figure `index` (group titles take rows of their own).
    int rowOf(int index) const;
    /// Selects figure `index` and shows its source and reason.
    void selectFigure(int index);

    /// How the three value columns write figure `index`.
    QString publishedText(int index) const;
    QString scalelabText(int index) const;
    QString differenceText(int index) const;

signals:
    /// The "Load" button of figure `index` was pressed.
    void loadRequested(int index);

protected:
    /// The selected reference's source and the reason for its difference.
    void showDetail(int row) override;

private:
    QList<document::PublishedFigure> m_figures;
    QList<int> m_rowFigure; ///< figure index per table row, -1 for a group title
};

} // namespace scalelab::ui
