#include "chartdata.h"

#include <QBarSet>
#include <QSignalBlocker>
#include <QXYSeries>
#include <vector>

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

namespace {

/// Qt Charts' private half of a bar set, a child object of it. Each value it is told of makes
/// the chart lay out every bar of every set again, so n changed values cost n layouts.
QObject* barSetInternals(QBarSet* set)
{
    for (QObject* child : set->children())
        if (qstrcmp(child->metaObject()->className(), "QBarSetPrivate") == 0)
            return child;
    return nullptr;
}

} // namespace

void setBarValues(QBarSet* set, const QList<qreal>& values)
{
    setBarValues({{set, values}});
}

void setBarValues(const QList<std::pair<QBarSet*, QList<qreal>>>& sets)
{
    // Only the difference in length is removed or added: Qt Charts makes anew every bar it is
    // handed, so a whole new list would rebuild the bars that stay too.
    for (const auto& [set, values] : sets)
        if (set->count() > values.size())
            set->remove(static_cast<int>(values.size()),
                        set->count() - static_cast<int>(values.size()));
    // The last bar kept whose value changes: its change is the one the chart hears of, and its
    // one layout places every bar of every set with all the new values in place.
    QBarSet* lastSet = nullptr;
    int last = -1;
    qreal lastValue = 0;
    for (const auto& [set, values] : sets)
        for (int i = 0; i < set->count(); ++i)
            if (set->at(i) != values[i]) {
                lastSet = set;
                last = i;
                lastValue = values[i];
            }
    if (lastSet) {
        std::vector<QSignalBlocker> quiet;
        quiet.reserve(static_cast<std::size_t>(sets.size()));
        for (const auto& [set, values] : sets)
            quiet.emplace_back(barSetInternals(set));
        for (const auto& [set, values] : sets)
            for (int i = 0; i < set->count(); ++i)
                if (set != lastSet || i != last)
                    replaceIfChanged(set, i, values[i]);
        quiet.clear();
        lastSet->replace(last, lastValue);
    }
    for (const auto& [set, values] : sets)
        if (set->count() < values.size())
            set->append(values.mid(set->count()));
}

} // namespace scalelab::ui
