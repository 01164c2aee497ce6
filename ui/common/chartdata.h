#pragma once

#include <QList>
#include <QPointF>
#include <utility>

class QBarSet;
class QXYSeries;

namespace scalelab::ui {

/// Data changes that touch Qt Charts only where something changed. Qt Charts redraws (and for
/// a bar set, rebuilds its bars and relays out the legend) on every call, even one that gives a
/// series the values it already has; a slider step usually changes only some of a chart's data.

/// Replaces a series' points only when they differ.
void replaceIfChanged(QXYSeries* series, const QList<QPointF>& points);

/// Sets one bar's value only when it differs.
void replaceIfChanged(QBarSet* set, int index, double value);

/// A bar set's values, changed in place: bars are removed or added only for a change in their
/// number, and however many values change, the chart lays its bars out once.
void setBarValues(QBarSet* set, const QList<qreal>& values);
/// Several bar sets of one chart at once, each as setBarValues: the chart lays its bars out
/// once for all of them.
void setBarValues(const QList<std::pair<QBarSet*, QList<qreal>>>& sets);

} // namespace scalelab::ui
