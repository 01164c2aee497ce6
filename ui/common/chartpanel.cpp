#include "chartpanel.h"

#include "chartstyle.h"

#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QPainter>
#include <QVBoxLayout>

namespace scalelab::ui {

ChartPanel::ChartPanel(const QString& name, QWidget* parent)
    : QWidget(parent)
    , m_name(name)
{
    setObjectName(name);
}

ChartViewPanel::ChartViewPanel(const QString& name, QWidget* parent)
    : ChartPanel(name, parent)
    , m_chart(new QChart)
    , m_view(new QChartView(m_chart, this))
{
    styleChart(m_chart);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setFrameShape(QFrame::NoFrame);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    setMinimumSize(260, 220);
}

void ChartViewPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::FontChange || event->type() == QEvent::PaletteChange)
        restyleChart(m_chart);
    ChartPanel::changeEvent(event);
}

void ChartViewPanel::render(QPainter& painter, const QRectF& target)
{
    // A chart lays itself out for its own geometry: give it the target's size, render the
    // scene, then hand the view its own size back.
    const QRectF onScreen = m_chart->geometry();
    m_chart->setGeometry(QRectF(QPointF(0, 0), target.size()));
    if (m_chart->layout())
        m_chart->layout()->activate();
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    m_chart->scene()->render(&painter, target, m_chart->sceneBoundingRect(), Qt::IgnoreAspectRatio);
    painter.restore();
    m_chart->setGeometry(onScreen);
    if (m_chart->layout())
        m_chart->layout()->activate();
}

} // namespace scalelab::ui
