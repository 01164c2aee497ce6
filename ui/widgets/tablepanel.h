#pragma once

#include "chartpanel.h"

#include <QList>
#include <functional>

QT_BEGIN_NAMESPACE
class QLabel;
class QTableWidget;
class QTableWidgetItem;
QT_END_NAMESPACE

namespace scalelab::ui {

/// A panel of the chart grid made of a heading, a table of rows to choose from and, under it,
/// the chosen row in full. The table is one Tab stop (arrows move between rows, Enter
/// activates one), selects whole rows, wraps its text and grows its rows to fit; the detail
/// follows the current row. render() draws the widgets as laid out, like a chart.
class TablePanel : public ChartPanel {
    Q_OBJECT

public:
    /// `name` is the panel's; the table and detail are named `tableName` and
    /// `tableName` + "_detail". `columns` are the header titles; `stretched` the columns that
    /// take the width left (the rest fit their contents).
    TablePanel(const QString& name, const QString& tableName, const QStringList& columns,
               const QList<int>& stretched, QWidget* parent = nullptr);

    QTableWidget* table() const { return m_table; }
    QLabel* headingLabel() const { return m_heading; }
    /// The heading over the table, as plain words.
    QString title() const override;
    /// The current row in full.
    QLabel* detailLabel() const { return m_detail; }

    void render(QPainter& painter, const QRectF& target) override;

protected:
    /// Shows table row `row` in the detail (the current row changed).
    virtual void showDetail(int row) = 0;

private:
    QLabel* m_heading;
    QTableWidget* m_table;
    QLabel* m_detail;
};

/// Runs `edit`, which changes cells of `table` and says whether it changed any, with the table
/// not told cell by cell; then, when something changed, tells it once about every cell. Told
/// cell by cell, a table that fits its rows or columns to their contents measures them all
/// again for each cell.
bool editCellsQuietly(QTableWidget* table, const std::function<bool()>& edit);

/// Runs `edit`, which changes cells of `table` and returns the cells it changed, with the table
/// not told during the edit; then tells it about each changed cell on its own, so that it
/// repaints those cells and no others (told about every cell at once, it repaints them all).
/// For a table that sizes rows or columns to their contents, which would measure every cell
/// again for each cell it is told about, it tells once about every cell, as editCellsQuietly.
/// Whether any cell changed.
bool editCellsInPlace(QTableWidget* table, const std::function<QList<QTableWidgetItem*>()>& edit);

/// Whether the text of every one of `cells` (items of `table`) fits its column as wide as it is
/// now, without being cut short: its width in the cell's font, with the room the style leaves
/// beside a cell's text and the grid line, no wider than the column. A cell with an icon or more
/// than one line is not measured here: it never fits (the caller fits the columns to them).
/// Far cheaper than fitting the columns, which lays out every cell's text several times.
bool cellsFitTheirColumns(const QTableWidget* table, const QList<QTableWidgetItem*>& cells);

/// Fits every column of `table` to its cells and header, as
/// QHeaderView::resizeSections(ResizeToContents) does, but leaves a last column that stretches
/// to take what is left.
void fitColumnsToContents(QTableWidget* table);

/// The width `table` needs to show every column whole: each column fitted to its cells and
/// header, with the frame and the vertical header when it is shown.
int wholeTableWidth(const QTableWidget* table);
/// The height `table` needs to show every row: its header, its rows and its frame.
int wholeTableHeight(const QTableWidget* table);

/// Widens the columns of `table` in which one of `cells` does not fit (cellsFitTheirColumns) to
/// their contents, as fitColumnsToContents would, and leaves the others
/// as wide as they are. Returns false when such a cell is in a last column that stretches, or
/// when the widened columns leave such a column too narrow for its cells: the caller fits every
/// column then.
bool widenColumnsFor(QTableWidget* table, const QList<QTableWidgetItem*>& cells);

} // namespace scalelab::ui
