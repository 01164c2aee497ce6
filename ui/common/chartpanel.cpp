#include "chartpanel.h"

#include "chartstyle.h"

#include <QAbstractBarSeries>
#include <QAccessible>
#include <QAccessibleWidget>
#include <QAreaSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QGraphicsItemGroup>
#include <QGraphicsLayout>
#include <QGraphicsLineItem>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QLayout>
#include <QPainter>
#include <QPixmapCache>
#include <QScatterSeries>
#include <QTextDocumentFragment>
#include <QTimer>
#include <QVBoxLayout>
#include <QXYSeries>
#include <algorithm>

namespace scalelab::ui {

namespace {

/// What a screen reader says of a chart, or of the view in it that takes the keyboard focus:
/// the chart's title (a chart is a picture, and Qt names no picture), else its export name.
class ChartAccessible : public QAccessibleWidget {
public:
    ChartAccessible(QWidget* widget, const ChartPanel* panel)
        : QAccessibleWidget(widget, QAccessible::Chart)
        , m_panel(panel)
    {
    }

    QString text(QAccessible::Text kind) const override
    {
        const QString own = QAccessibleWidget::text(kind);
        if (kind != QAccessible::Name || !own.isEmpty())
            return own;
        const QString title = m_panel->title().simplified();
        return title.isEmpty() ? m_panel->name() : title;
    }

private:
    const ChartPanel* m_panel;
};

QAccessibleInterface* chartAccessible(const QString& key, QObject* object)
{
    // Asked once for each class up the object's hierarchy: answered for its own class only.
    if (key != QLatin1String(object->metaObject()->className()))
        return nullptr;
    if (auto* panel = qobject_cast<ChartPanel*>(object))
        return new ChartAccessible(panel, panel);
    if (auto* view = qobject_cast<QChartView*>(object))
        if (auto* panel = qobject_cast<const ChartPanel*>(view->parentWidget()))
            return new ChartAccessible(view, panel);
    return nullptr;
}

} // namespace

ChartPanel::ChartPanel(const QString& name, QWidget* parent)
    : QWidget(parent)
    , m_name(name)
{
    static const bool named = (QAccessible::installFactory(&chartAccessible), true);
    Q_UNUSED(named);
    setObjectName(name);
}

QString ChartViewPanel::title() const
{
    // Titles are rich text, broken with <br> on narrow charts.
    QString title = m_chart->title();
    title.replace(QStringLiteral("<br>"), QStringLiteral(" "));
    return QTextDocumentFragment::fromHtml(title).toPlainText().simplified();
}

bool ChartViewPanel::setTitle(const QString& title)
{
    if (this->title() == title)
        return false;
    m_chart->setTitle(title);
    return true;
}

void ChartPanel::renderWidgets(QPainter& painter, const QRectF& target)
{
    painter.save();
    painter.fillRect(target, chartBackgroundColor());
    // A panel never shown has never been laid out either.
    ensurePolished();
    if (layout())
        layout()->activate();
    const QSizeF own = size().isEmpty() ? target.size() : QSizeF(size());
    const double scale = std::min(target.width() / own.width(), target.height() / own.height());
    painter.translate(target.topLeft());
    painter.scale(scale, scale);
    QWidget::render(&painter, QPoint(), QRegion(),
                    QWidget::DrawChildren | QWidget::DrawWindowBackground);
    painter.restore();
}

ChartViewPanel::ChartViewPanel(const QString& name, QWidget* parent)
    : ChartPanel(name, parent)
    , m_chart(new QChart)
    , m_view(new QChartView(m_chart, this))
{
    styleChart(m_chart);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setFrameShape(QFrame::NoFrame);
    // One rectangle around everything that changed. Qt's default repaints the exact region of
    // the changed items: a slider step changes items all over the chart, so that region has many
    // rectangles, and the raster engine clips every grid line against each of them. With the
    // plain rectangle the memory tab's checkpointing chart paints in 0.5 ms instead of 1.6.
    m_view->setViewportUpdateMode(QGraphicsView::BoundingRectViewportUpdate);
    // No spatial index: a slider step moves or replaces most of a chart's items (a scatter's
    // markers, bars, labels), and each move updates the scene's BSP tree, which the paint then
    // barely uses (the update rectangle above covers most of the chart). Unindexed, a GPU-count
    // step of the 1T plan during a search takes 4.4 ms instead of 6.5 (median; p99 12 instead
    // of 16.5), docs/STEPTIME.md. See eventFilter for the one time the index comes back.
    m_view->scene()->setItemIndexMethod(QGraphicsScene::NoIndex);
    m_view->scene()->installEventFilter(this);
    // A new plot area (a new size, a longer label) may have made the axes new items.
    connect(m_chart, &QChart::plotAreaChanged, this, &ChartViewPanel::cacheAxisItems);
    // Room for those pictures (cacheAxisItems): Qt keeps 10 MB of them, and a large screen at
    // twice the pixels holds about 3 MB a chart; pictures pushed out are drawn again each time.
    constexpr int kAxisPicturesKb = 64 * 1024;
    if (QPixmapCache::cacheLimit() < kAxisPicturesKb)
        QPixmapCache::setCacheLimit(kAxisPicturesKb);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    setMinimumSize(260, 220);
}

bool ChartViewPanel::eventFilter(QObject* watched, QEvent* event)
{
    // A font or palette change walks a copy of the scene's item list and reads each item after
    // the ones before it have taken the change; an item deleted meanwhile (the chart's own
    // items may be rebuilt when it takes a new font) is then read after it is gone. Unindexed,
    // the list is in address order, and putting the projector font back crashed tst_readable;
    // indexed, it is in stacking order, where an item comes before the top-level item it
    // belongs to, so what a top-level item deletes has been read already. The scene is indexed
    // while it passes the change on, and unindexed again once the event loop turns.
    auto* scene = qobject_cast<QGraphicsScene*>(watched);
    switch (event->type()) {
    case QEvent::FontChange:
    case QEvent::ApplicationFontChange:
    case QEvent::PaletteChange:
    case QEvent::ApplicationPaletteChange:
        if (scene && scene->itemIndexMethod() == QGraphicsScene::NoIndex) {
            scene->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
            QTimer::singleShot(0, scene,
                               [scene] { scene->setItemIndexMethod(QGraphicsScene::NoIndex); });
        }
        break;
    default:
        break;
    }
    return ChartPanel::eventFilter(watched, event);
}

void ChartViewPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::FontChange || event->type() == QEvent::PaletteChange)
        restyle();
    ChartPanel::changeEvent(event);
}

void ChartViewPanel::restyle()
{
    // From the tab's own looks (restyleChart keeps the first width it sees as the tab's), then
    // emphasised again over the new widths.
    restorePlainLooks();
    restyleChart(m_chart);
    applyEmphasis();
}

ChartViewPanel::Look ChartViewPanel::lookOf(const QObject* item)
{
    Look look;
    if (const auto* set = qobject_cast<const QBarSet*>(item)) {
        look.pen = set->pen();
        look.brush = set->brush();
    } else if (const auto* area = qobject_cast<const QAreaSeries*>(item)) {
        look.pen = area->pen();
        look.brush = area->brush();
    } else if (const auto* xy = qobject_cast<const QXYSeries*>(item)) {
        look.pen = xy->pen();
        look.brush = xy->brush();
        if (const auto* scatter = qobject_cast<const QScatterSeries*>(item))
            look.markerSize = scatter->markerSize();
    }
    return look;
}

void ChartViewPanel::setLook(QObject* item, const Look& look)
{
    if (auto* set = qobject_cast<QBarSet*>(item)) {
        set->setPen(look.pen);
        set->setBrush(look.brush);
    } else if (auto* area = qobject_cast<QAreaSeries*>(item)) {
        area->setPen(look.pen);
        area->setBrush(look.brush);
    } else if (auto* xy = qobject_cast<QXYSeries*>(item)) {
        xy->setPen(look.pen);
        xy->setBrush(look.brush);
        if (auto* scatter = qobject_cast<QScatterSeries*>(item))
            scatter->setMarkerSize(look.markerSize);
    }
}

QList<QObject*> ChartViewPanel::styledItems() const
{
    // Bar series are drawn by their sets; every other series draws itself.
    QList<QObject*> items;
    for (QAbstractSeries* series : m_chart->series()) {
        if (auto* bars = qobject_cast<QAbstractBarSeries*>(series))
            for (QBarSet* set : bars->barSets())
                items << set;
        else
            items << series;
    }
    return items;
}

bool ChartViewPanel::emphasiseSeries(const QString& key)
{
    m_emphasis = key;
    return applyEmphasis();
}

namespace {

/// `colour` at a quarter of its opacity: still there, no longer competing.
QColor faded(QColor colour)
{
    colour.setAlphaF(colour.alphaF() * 0.25f);
    return colour;
}

} // namespace

bool ChartViewPanel::applyEmphasis()
{
    const QList<QObject*> items = styledItems();
    const bool found = !m_emphasis.isEmpty()
        && std::any_of(items.begin(), items.end(),
                       [this](const QObject* item) { return item->objectName() == m_emphasis; });
    if (!found) {
        restorePlainLooks();
        return false;
    }
    for (QObject* item : items) {
        // A look that is not the one drawn here is the tab's own new one (a refresh restyled it).
        const Look now = lookOf(item);
        auto styled = m_styled.find(item);
        if (styled == m_styled.end())
            styled = m_styled.insert(item, {now, now});
        else if (styled->shown != now)
            styled->plain = now;
        Look look = styled->plain;
        if (item->objectName() == m_emphasis) {
            // Twice as thick, and at least three pixels (times the projector's scale) more.
            const qreal width = std::max(look.pen.widthF(), 1.0);
            look.pen.setWidthF(std::max(2 * width, width + kLineWidth * lineScale()));
            if (qobject_cast<QBarSet*>(item)) {
                look.pen = QPen(chartTextColor(), kLineWidth * lineScale());
                look.pen.setJoinStyle(Qt::MiterJoin);
            }
            look.markerSize *= 1.5;
        } else {
            look.pen.setColor(faded(look.pen.color()));
            look.brush.setColor(faded(look.brush.color()));
        }
        setLook(item, look);
        styled->shown = lookOf(item);
    }
    return true;
}

void ChartViewPanel::restorePlainLooks()
{
    for (QObject* item : styledItems()) {
        const auto styled = m_styled.constFind(item);
        if (styled != m_styled.cend() && lookOf(item) == styled->shown) // not restyled since
            setLook(item, styled->plain);
    }
    m_styled.clear();
}

void ChartViewPanel::render(QPainter& painter, const QRectF& target)
{
    // A chart lays itself out for its own geometry: give it the target's size, render the
    // scene, then hand the view its own size back.
    const QRectF onScreen = m_chart->geometry();
    m_chart->setGeometry(QRectF(QPointF(0, 0), target.size()));
    settleTexts();
    // The axes' lines drawn as they are, not as pictures of the screen's pixels: a vector
    // export keeps them as lines, a larger picture draws them at its own scale.
    for (QGraphicsItem* item : axisItems())
        item->setCacheMode(QGraphicsItem::NoCache);
    // Texts drawn in no colour (an axis's labels holding the room of names drawn beside them,
    // hideAxisLabels) are left out: a vector export would keep them as text, found and copied
    // twice.
    QList<QGraphicsTextItem*> unseen;
    for (QGraphicsItem* item : m_chart->scene()->items())
        if (auto* text = dynamic_cast<QGraphicsTextItem*>(item);
            text && text->isVisible() && text->defaultTextColor().alpha() == 0) {
            text->hide();
            unseen << text;
        }
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    m_chart->scene()->render(&painter, target, m_chart->sceneBoundingRect(), Qt::IgnoreAspectRatio);
    painter.restore();
    for (QGraphicsTextItem* text : std::as_const(unseen))
        text->show();
    m_chart->setGeometry(onScreen);
    settleTexts();
    cacheAxisItems();
}

QList<QGraphicsItem*> ChartViewPanel::axisItems() const
{
    // Qt Charts keeps an axis's line, grid lines and tick marks (and its labels) in groups of
    // items right under the chart; series, legend and titles are items of other kinds.
    QList<QGraphicsItem*> items;
    for (QGraphicsItem* child : m_chart->childItems())
        if (child->type() == QGraphicsItemGroup::Type)
            for (QGraphicsItem* item : child->childItems())
                if (item->type() == QGraphicsLineItem::Type)
                    items << item;
    return items;
}

void ChartViewPanel::cacheAxisItems()
{
    for (QGraphicsItem* item : axisItems())
        if (item->cacheMode() != QGraphicsItem::DeviceCoordinateCache)
            item->setCacheMode(QGraphicsItem::DeviceCoordinateCache);
}

void ChartViewPanel::settleTexts()
{
    // The texts are fitted to the plot as laid out for the present size; a wrapped title moves
    // the plot's edges, and the titles along the other side are fitted once more to that.
    const auto layOut = [this] {
        if (m_chart->layout())
            m_chart->layout()->activate();
    };
    for (int round = 0; round < 2; ++round) {
        layOut();
        fitChartTexts(m_chart);
    }
    layOut();
}

} // namespace scalelab::ui
