#include "chartdata.h"

#include <QBarSet>
#include <QXYSeries>

namespace scalelab::ui {

void replaceIfChanged(QXYSeries* series, const QList<QPointF>& points)
{
    if (series->points() != points)
        series->replace(points);
}

void replaceIfChanged(QBarSet* set, int index, double value)
{
    if (set->at(index) != value)
        set->replace(index, value);
}

void setBarValues(QBarSet* set, const QList<qreal>& values)
{
    if (set->count() != values.size()) {
        set->remove(0, set->count());
        set->append(values);
        return;
    }
    for (int i = 0; i < values.size(); ++i)
        replaceIfChanged(set, i, values[i]);
}

} // namespace scalelab::ui
