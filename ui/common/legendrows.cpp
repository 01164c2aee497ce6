#include "legendrows.h"

#include "chartstyle.h"

#include <QAbstractSeries>
#include <QBarLegendMarker>
#include <QBarSet>
#include <QChart>
#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QGraphicsLayout>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QMarginsF>
#include <QPainter>
#include <algorithm>
#include <cmath>

namespace scalelab::ui {

namespace {

/// The chart property that keeps the bottom margin the chart had before the rows took room.
constexpr const char* kBaseBottom = "scalelab_legendRowsBaseBottom";
/// The chart property that keeps the rows' room: the chart's width (x) and the rows' height.
constexpr const char* kRoom = "scalelab_legendRowsRoom";
/// The chart property set by keepLegendInRows.
constexpr const char* kKeptInRows = "scalelab_legendKeptInRows";
/// The marker property set by showInLegend: false where the tab leaves the entry out.
constexpr const char* kInLegend = "scalelab_inLegend";

/// Room between the plot's axes and the first row, and between rows, in lines of legend type.
constexpr double kRowGap = 0.35;
/// A swatch's side, in lines of legend type.
constexpr double kSwatch = 0.7;
/// Between a swatch and its name, and between two entries of a row, in average characters.
constexpr double kSwatchGap = 0.8;
constexpr double kEntryGap = 3.0;

/// One entry as the rows show it: a swatch, and the name in one or more lines.
struct Entry {
    QColor colour;
    QString text; ///< lines joined by '\n'
    QSizeF size; ///< swatch, gap and text
};

/// The rows: swatches painted by the item itself, names as its only children, text items (so
/// that whoever walks a chart's texts finds them), placed by setContents.
class RowsItem : public QGraphicsItem {
public:
    static constexpr int kType = UserType + 0x4c52; // "LR"
    int type() const override { return kType; }
    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        painter->setPen(QPen(chartGridColor(), 1));
        for (const auto& [rect, colour] : m_swatches) {
            painter->setBrush(colour);
            painter->drawRect(rect);
        }
    }

    QString signature; ///< what the rows were last built from

    /// The names shown, in order.
    QStringList texts() const
    {
        QStringList out;
        for (const QGraphicsItem* item : childItems())
            out << static_cast<const QGraphicsSimpleTextItem*>(item)->text();
        return out;
    }

    void setContents(const QList<Entry>& entries, const QFont& font, double width)
    {
        prepareGeometryChange();
        qDeleteAll(childItems());
        m_swatches.clear();
        const QFontMetricsF fm(font);
        const double entryGap = kEntryGap * fm.averageCharWidth();
        const double rowGap = kRowGap * fm.height();
        // Entries fill a row from the left while they fit, then the next row starts.
        QList<QList<const Entry*>> rows(1);
        double used = 0;
        for (const Entry& e : entries) {
            const double need = (rows.last().isEmpty() ? 0 : entryGap) + e.size.width();
            if (!rows.last().isEmpty() && used + need > width) {
                rows.append(QList<const Entry*>());
                used = 0;
            }
            used += rows.last().isEmpty() ? e.size.width() : need;
            rows.last().append(&e);
        }
        double y = 0;
        for (const auto& row : rows) {
            double rowWidth = 0, rowHeight = 0;
            for (const Entry* e : row) {
                rowWidth += (rowWidth > 0 ? entryGap : 0) + e->size.width();
                rowHeight = std::max(rowHeight, e->size.height());
            }
            double x = std::max(0.0, (width - rowWidth) / 2); // each row centred, as Qt's is
            for (const Entry* e : row) {
                const double side = kSwatch * fm.height();
                m_swatches.append({QRectF(x, y + (fm.height() - side) / 2, side, side), e->colour});
                auto* name = new QGraphicsSimpleTextItem(e->text, this);
                name->setFont(font);
                name->setBrush(chartTextColor());
                name->setPos(x + side + kSwatchGap * fm.averageCharWidth(), y);
                x += e->size.width() + entryGap;
            }
            y += rowHeight + rowGap;
        }
        m_bounds = QRectF(0, 0, width, std::max(0.0, y - rowGap));
    }

private:
    QRectF m_bounds;
    QList<std::pair<QRectF, QColor>> m_swatches;
};

RowsItem* rowsOf(const QChart* chart)
{
    for (QGraphicsItem* item : chart->childItems())
        if (item->type() == RowsItem::kType)
            return static_cast<RowsItem*>(item);
    return nullptr;
}

/// The colour a marker shows: its fill, or its outline's colour where it has no fill (a line).
QColor markerColour(const QLegendMarker* marker)
{
    const QBrush brush = marker->brush();
    return brush.style() == Qt::NoBrush ? marker->pen().color() : brush.color();
}

/// The margins of the chart's layout, around its own margins.
QMarginsF layoutMargins(const QChart* chart)
{
    qreal left = 0, top = 0, right = 0, bottom = 0;
    if (chart->layout())
        chart->layout()->getContentsMargins(&left, &top, &right, &bottom);
    return {left, top, right, bottom};
}

void setBottomMargin(QChart* chart, int bottom)
{
    QMargins m = chart->margins();
    if (m.bottom() != bottom) {
        m.setBottom(bottom);
        chart->setMargins(m);
    }
}

/// Builds the rows again where what they show changed, and puts them at the chart's foot with
/// the chart's bottom margin as their room.
void layOutRows(QChart* chart, RowsItem* rows)
{
    const QFont font = chart->legend()->font();
    const QFontMetricsF fm(font);
    const QMarginsF outer = layoutMargins(chart);
    const QMargins own = chart->margins();
    // The chart's width less its margins and its layout's.
    const double width = std::max(
        1.0, chart->size().width() - own.left() - own.right() - outer.left() - outer.right());
    // What the rows show, and what it depends on: measured (shaped) again only on a change.
    QList<Entry> entries;
    QString signature = QString("%1|%2|%3").arg(font.key()).arg(width).arg(chartTextColor().name());
    for (QLegendMarker* marker : chart->legend()->markers()) {
        if (const QVariant in = marker->property(kInLegend); in.isValid() && !in.toBool())
            continue;
        entries.append({markerColour(marker), legendEntryName(marker), {}});
        signature += '|' + entries.last().colour.name(QColor::HexArgb) + entries.last().text;
    }
    if (signature != rows->signature) {
        const double side = kSwatch * fm.height() + kSwatchGap * fm.averageCharWidth();
        for (Entry& e : entries) {
            e.text = wrapWords(e.text, font, width - side).replace("<br>", "\n");
            double textWidth = 0;
            for (const QString& line : e.text.split('\n'))
                textWidth = std::max(textWidth, fm.horizontalAdvance(line));
            e.size = QSizeF(side + textWidth, fm.height() * e.text.count('\n') + fm.height());
        }
        rows->signature = signature;
        rows->setContents(entries, font, width);
    }
    // The room is the most the rows took at this width: names that change with a slider
    // (a refused schedule says why) may take a row more or less, and a new margin lays the
    // whole chart out again on every step. Under the plot, the rows start at the room's top.
    const int base = chart->property(kBaseBottom).toInt();
    const QPointF kept = chart->property(kRoom).toPointF();
    const double height = std::max(rows->boundingRect().height(), kept.x() == width ? kept.y() : 0);
    chart->setProperty(kRoom, QPointF(width, height));
    setBottomMargin(chart, base + static_cast<int>(std::ceil(height + kRowGap * fm.height())));
    const QPointF at(outer.left() + own.left(),
                     chart->size().height() - outer.bottom() - base - height);
    if (rows->pos() != at)
        rows->setPos(at);
}

} // namespace

void showInLegend(QLegendMarker* marker, bool shown)
{
    marker->setProperty(kInLegend, shown);
    marker->setVisible(shown);
}

void keepLegendInRows(QChart* chart)
{
    chart->setProperty(kKeptInRows, true);
    showLegendRows(chart, true);
}

bool legendKeptInRows(const QChart* chart)
{
    return chart->property(kKeptInRows).toBool();
}

QString legendEntryName(QLegendMarker* marker)
{
    if (auto* bar = qobject_cast<QBarLegendMarker*>(marker))
        return bar->barset()->label();
    return marker->series() ? marker->series()->name() : marker->label();
}

bool legendWouldCut(const QChart* chart)
{
    const QLegend* legend = chart->legend();
    if (!legend->isVisible())
        return false;
    QList<QGraphicsItem*> items = legend->childItems();
    while (!items.isEmpty()) {
        QGraphicsItem* item = items.takeLast();
        items += item->childItems();
        if (!item->isVisible())
            continue;
        QString text;
        if (auto* rich = dynamic_cast<QGraphicsTextItem*>(item))
            text = rich->toPlainText();
        else if (auto* simple = dynamic_cast<QGraphicsSimpleTextItem*>(item))
            text = simple->text();
        if (text.endsWith("...") || text.contains(QChar(0x2026)))
            return true;
    }
    return false;
}

bool legendRowsShown(const QChart* chart)
{
    return rowsOf(chart) != nullptr;
}

QStringList legendRowsTexts(const QChart* chart)
{
    const RowsItem* rows = rowsOf(chart);
    return rows ? rows->texts() : QStringList();
}

void showLegendRows(QChart* chart, bool show)
{
    RowsItem* rows = rowsOf(chart);
    // Qt's legend is detached and hidden: it then takes no room in the chart's layout, and a
    // changed name lays out neither it nor the chart. (Its markers are hidden with it: which
    // entries the tab leaves out, the rows learn from showInLegend.) Shown before it is attached
    // again, so that its markers show as the tab left them.
    QLegend* legend = chart->legend();
    if (!show) {
        if (rows) {
            delete rows;
            chart->setProperty(kRoom, QVariant());
            setBottomMargin(chart, chart->property(kBaseBottom).toInt());
            legend->show();
            legend->attachToChart();
            // Qt shows the markers' group only when the legend's layout is given a geometry,
            // which would wait for the event loop: an export straight after would have no
            // legend. The chart's layout places it again afterwards, as ever.
            if (QGraphicsLayout* layout = chart->layout())
                layout->activate();
            if (QGraphicsLayout* layout = legend->layout()) {
                layout->invalidate();
                layout->activate();
            }
        }
        return;
    }
    if (!rows) {
        chart->setProperty(kBaseBottom, chart->margins().bottom());
        legend->hide();
        legend->detachFromChart();
        rows = new RowsItem;
        rows->setParentItem(chart);
        rows->setZValue(legend->zValue());
    }
    layOutRows(chart, rows);
}

} // namespace scalelab::ui
