#pragma once

#include <QString>

QT_BEGIN_NAMESPACE
class QChart;
class QLegendMarker;
QT_END_NAMESPACE

namespace scalelab::ui {

/// A chart's legend in as many rows under the plot as its entries need, each entry whole.
///
/// Qt Charts lays a legend under the plot in one row and cuts every name short when the row is
/// wider than the chart ("Param...", "busbw ..."); beside the plot it cuts what is wider than its
/// share of the chart. Where that would happen, ScaleLab sets Qt's legend aside (detached and
/// hidden) and draws this one: a swatch in the series' colour and the whole name, entries
/// filling centred rows, a name wider than the chart wrapped at spaces. The chart's bottom
/// margin makes room for the rows, so the plot and axes are laid out above them. The rows are
/// items of the chart's scene, so they show on screen and in every export alike.
///
/// `legendWouldCut` tells whether Qt's own legend, as laid out now, cuts an entry; `showLegendRows`
/// switches to the rows (true) or back to Qt's legend (false) and, while shown, rebuilds the rows
/// only when the entries, the font or the chart's size changed.
bool legendWouldCut(const QChart* chart);
void showLegendRows(QChart* chart, bool show);
/// A legend entry's whole text: its series' name or bar set's label, not the lines a legend
/// shows it in.
QString legendEntryName(QLegendMarker* marker);
/// Shows or leaves out one entry of a legend, Qt's or the rows. The tabs leave entries out
/// through this, not QLegendMarker::setVisible: while the rows stand in for Qt's legend, that
/// legend is hidden, and so are all its markers, whatever the tab asked.
void showInLegend(QLegendMarker* marker, bool shown);
/// The chart's legend as rows at every size, for a chart whose legend names change with the
/// inputs: a new name in Qt's legend lays the whole chart out again (a millisecond or more on
/// every slider step), where the rows only redraw themselves.
void keepLegendInRows(QChart* chart);
bool legendKeptInRows(const QChart* chart);
/// Whether the chart's legend is drawn as rows at present.
bool legendRowsShown(const QChart* chart);
/// The texts the rows show, in order, one per visible entry (for tests).
QStringList legendRowsTexts(const QChart* chart);

} // namespace scalelab::ui
