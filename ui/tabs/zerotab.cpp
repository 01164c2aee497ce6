#include "zerotab.h"

#include "chartdata.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "format.h"
#include "legendrows.h"
#include "parametercontrol.h"
#include "ringpanel.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QComboBox>
#include <QEvent>
#include <QFontMetricsF>
#include <QFormLayout>
#include <QGraphicsSimpleTextItem>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QPixmap>
#include <QScatterSeries>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

namespace scalelab::ui {

namespace {

using core::ZeroStage;

constexpr const auto& kStages = kZeroStages;
constexpr double kGB = kZeroGB;

// Layout metrics, in pixels.
/// The hatching tile of a sharded part: its side, the stripes' spacing and width.
constexpr int kHatchTile = 20;
constexpr int kHatchSpacing = 10;
constexpr double kHatchWidth = 3.5;
/// How much of a part's colour the pale ground under its stripes keeps.
constexpr double kHatchTint = 0.3;
/// The table: padding of a one-line row, of the two-line header, and below the last row.
constexpr int kTableRowPadding = 8;
constexpr int kTableHeaderPadding = 10;
constexpr int kTableBottomPadding = 2;
/// How far the traffic chart's rank axis runs past its last rank count (a factor on a log axis).
constexpr double kTrafficAxisRoom = 1.6;
/// The notes in the plots: gap to the legend or the plot edge, gap below the plot's top, and
/// gap between an "n = 64" label and its vertical line.
constexpr double kNoteInset = 4;
constexpr double kNoteDrop = 2;
constexpr double kLineLabelGap = 6;
/// The accelerator's line on the bar chart spans every stage's category, -0.5 .. 3.5.
constexpr double kFirstCategoryEdge = -0.5;
constexpr double kLastCategoryEdge = static_cast<double>(kZeroStages.size()) - 0.5;
/// Room above the tallest figure of a chart, so the top line is not drawn on the frame.
constexpr double kHeadroom = 1.04;
/// How far the bytes-per-parameter controls are indented under their disclosure button.
constexpr int kDisclosureIndent = 12;
/// The ring demo's data comes from this seed, so a lecture shows the same numbers every time.
constexpr std::uint64_t kRingSeed = 1;

QString stageName(ZeroStage stage)
{
    switch (stage) {
    case ZeroStage::DataParallel:
        return QObject::tr("DP");
    case ZeroStage::Zero1:
        return QObject::tr("ZeRO-1");
    case ZeroStage::Zero2:
        return QObject::tr("ZeRO-2");
    case ZeroStage::Zero3:
        return QObject::tr("ZeRO-3");
    }
    return {};
}

/// A stage's line: colour plus a dash style of its own, so the lines differ without colour.
/// ZeRO-1 and ZeRO-2 dash in counterpoint: where their curves meet, both colours show.
QPen stagePen(ZeroStage stage, double width = kLineWidth)
{
    QPen pen(ZeroTab::stageColor(stage), width, Qt::SolidLine, Qt::FlatCap);
    switch (stage) {
    case ZeroStage::DataParallel:
        break;
    case ZeroStage::Zero1:
        pen.setDashPattern({2.5, 2.5});
        break;
    case ZeroStage::Zero2:
        pen.setDashPattern({2.5, 2.5});
        pen.setDashOffset(2.5);
        break;
    case ZeroStage::Zero3:
        pen.setStyle(Qt::DashDotLine);
        break;
    }
    return pen;
}

/// The brush of a sharded part: the part's colour in bold diagonal stripes over a pale tint,
/// so "sharded" reads as a pattern, not only as a lighter colour.
QBrush hatched(const QColor& colour)
{
    QPixmap tile(kHatchTile, kHatchTile);
    const QColor pale = QColor::fromRgbF(1 - (1 - colour.redF()) * kHatchTint,
                                         1 - (1 - colour.greenF()) * kHatchTint,
                                         1 - (1 - colour.blueF()) * kHatchTint);
    tile.fill(pale);
    QPainter p(&tile);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(colour, kHatchWidth));
    for (int offset = -kHatchTile; offset <= kHatchTile; offset += kHatchSpacing)
        p.drawLine(QPointF(offset, kHatchTile), QPointF(offset + kHatchTile, 0));
    return QBrush(tile);
}

/// A log axis over [lo, hi] widened to whole powers of its base.
void setDecadeRange(QLogValueAxis* axis, double lo, double hi)
{
    const double base = axis->base();
    if (!(lo > 0) || !(hi > 0))
        return;
    const double low = std::pow(base, std::floor(std::log(lo) / std::log(base) + 1e-9));
    double high = std::pow(base, std::ceil(std::log(hi) / std::log(base) - 1e-9));
    if (!(high > low))
        high = low * base;
    // A hair beyond the powers, so rounding never drops the end labels.
    axis->setRange(low * (1 - 1e-9), high * (1 + 1e-9));
}

} // namespace

int ZeroTab::breakdownRow(ZeroStage stage)
{
    return static_cast<int>(kStages.size()) - 1 - static_cast<int>(stage);
}

QColor ZeroTab::stageColor(ZeroStage stage)
{
    switch (stage) {
    case ZeroStage::DataParallel:
        return palette::kBlack;
    case ZeroStage::Zero1:
        return palette::kOrange;
    case ZeroStage::Zero2:
        return palette::kGreen;
    case ZeroStage::Zero3:
        return palette::kPurple;
    }
    return palette::kBlack;
}

ZeroTab::ZeroTab(document::ScenarioDocument* document, QWidget* parent)
    : Tab(document, core::Section::Zero, parent)
{
    setObjectName("zero");
    buildControls();
    buildMemoryChart();
    buildBreakdownChart();
    m_ring = new RingPanel("zero-ring");
    // The note's button is a user's edit of the rank count, undoable like the slider.
    connect(m_ring, &RingPanel::fewerRanksRequested, this,
            [this](int ranks) { this->document()->setValue("zero.ranks", ranks); });
    buildTrafficChart();
    setCharts({m_memory, m_breakdown, m_ring, m_traffic});
    buildTable();
    addLesson();
    drawFirst();
}

void ZeroTab::buildControls()
{
    // The two inputs of the lesson: model size and rank count.
    QVBoxLayout* modelBox = addGroup(tr("Model and ranks"));
    addControl(modelBox, "zero.parameters");
    addControl(modelBox, "zero.ranks");

    // Bytes per parameter behind a disclosure: the chapter's 2 + 2 + 12 is the usual answer.
    auto* bytes = new QWidget;
    auto* bytesBox = new QVBoxLayout(bytes);
    bytesBox->setContentsMargins(kDisclosureIndent, 0, 0, 0);
    for (const char* key : {"zero.weight_bytes", "zero.grad_bytes", "zero.optimizer_bytes"})
        addControl(bytesBox, key);
    addDisclosure(modelBox, tr("Bytes per parameter"), bytes, tr("Show bytes per parameter"));

    // The accelerator each rank is: the line the memory charts are measured against.
    QVBoxLayout* deviceBox = addGroup(tr("Accelerator"));
    auto* form = new QFormLayout;
    deviceBox->addLayout(form);
    addAcceleratorMemory(deviceBox, form, "zero", m_accelerator);

    // The link of the alpha-beta model: what one rank can send, and what each message costs.
    QVBoxLayout* linkBox = addGroup(tr("Link (alpha-beta model)"));
    addControl(linkBox, "zero.link_bandwidth");
    addControl(linkBox, "zero.link_latency");
}

void ZeroTab::addLesson()
{
    // The misconception of this topic, said once and never relaid out with the figures.
    auto* lesson = new QLabel(
        tr("<i>ZeRO is data parallelism, not tensor parallelism: every rank still runs the whole "
           "model on its own share of the batch; only the model state is sharded, and gathered "
           "when it is needed.</i>"));
    lesson->setObjectName("zero.lesson");
    lesson->setWordWrap(true);
    chartsColumn()->insertWidget(1, lesson);
}

void ZeroTab::buildMemoryChart()
{
    m_memory = new ChartViewPanel("zero-memory");
    QChart* chart = m_memory->chart();
    chart->setTitle(tr("Model state per rank as the ranks grow"));
    m_memoryX = new QLogValueAxis;
    m_memoryX->setBase(4);
    m_memoryX->setLabelFormat("%.0f");
    m_memoryY = new QLogValueAxis;
    m_memoryY->setBase(10);
    m_memoryY->setLabelFormat("%g");
    m_memoryY->setMinorTickCount(0); // decade lines only: minor lines cost a frame to stroke
    chart->addAxis(m_memoryX, Qt::AlignBottom);
    chart->addAxis(m_memoryY, Qt::AlignLeft);
    styleAxis(m_memoryX, tr("Data-parallel ranks n (log scale)"));
    styleAxis(m_memoryY, tr("State per rank (GB, log)"), tr("State (GB, log)"));

    const auto add = [&](QXYSeries* s) {
        chart->addSeries(s);
        s->attachAxis(m_memoryX);
        s->attachAxis(m_memoryY);
    };
    for (ZeroStage stage : kStages) {
        auto* line = new QLineSeries;
        line->setName(stageName(stage));
        // What a lesson step highlights it by (document::highlightableSeries).
        line->setObjectName(stage == ZeroStage::DataParallel
                                ? QString("dp")
                                : QString("zero%1").arg(static_cast<int>(stage)));
        line->setPen(stagePen(stage));
        add(line);
        m_stageLines << line;
    }
    m_memoryLimit = new QLineSeries;
    m_memoryLimit->setObjectName("accelerator");
    m_memoryLimit->setName(tr("Accelerator"));
    m_memoryLimit->setPen(QPen(QColor(110, 110, 110), kLineWidth, Qt::DashLine));
    add(m_memoryLimit);
    m_memoryCurrent = new QLineSeries;
    // Names that follow the inputs would relayout the chart on every step: the line's place on
    // the axis says which n it is.
    m_memoryCurrent->setName(tr("Your n"));
    m_memoryNLabel = new QGraphicsSimpleTextItem(chart);
    m_memoryCurrent->setPen(QPen(QColor(120, 120, 120), 2, Qt::DotLine));
    add(m_memoryCurrent);
    m_memoryAtCurrent = new QScatterSeries;
    m_memoryAtCurrent->setName(tr("At your n"));
    m_memoryAtCurrent->setMarkerSize(12);
    m_memoryAtCurrent->setColor(Qt::white);
    m_memoryAtCurrent->setBorderColor(Qt::black);
    add(m_memoryAtCurrent);
    m_fitMarkers = new QScatterSeries;
    m_fitMarkers->setName(tr("Fits from here"));
    m_fitMarkers->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    m_fitMarkers->setMarkerSize(14);
    m_fitMarkers->setColor(palette::kYellow);
    m_fitMarkers->setBorderColor(Qt::black);
    add(m_fitMarkers);
    chart->legend()->setAlignment(Qt::AlignRight);
    // The current n is written beside its line instead of taking a legend row.
    showInLegend(chart->legend()->markers(m_memoryAtCurrent).first(), false);
    showInLegend(chart->legend()->markers(m_memoryCurrent).first(), false);
    connect(chart, &QChart::plotAreaChanged, this, &ZeroTab::placeNotes);
}

void ZeroTab::buildBreakdownChart()
{
    m_breakdown = new ChartViewPanel("zero-breakdown");
    QChart* chart = m_breakdown->chart();
    chart->setTitle(tr("What one rank keeps"));
    // Horizontal bars: the stage names sit left of their bars at full width, where a small
    // chart's vertical bars would cut them to "ZeR...".
    m_bars = new QHorizontalStackedBarSeries;
    // Short names: the legend sits beside a small chart. Solid is the whole copy every rank
    // keeps; hatched is this rank's 1/n shard.
    const QStringList kinds = {tr("Weights"), tr("Gradients"), tr("Optimizer")};
    const QList<QColor> colours = {palette::kBlue, palette::kSkyBlue, palette::kVermillion};
    for (int k = 0; k < 3; ++k) {
        auto* whole = new QBarSet(kinds[k]);
        whole->setColor(colours[k]);
        whole->setBorderColor(Qt::white);
        auto* shard = new QBarSet(k == 2 ? tr("1/n shard") : tr("%1: 1/n").arg(kinds[k]));
        shard->setBrush(hatched(colours[k]));
        shard->setPen(QPen(colours[k].darker(120), 1.5));
        for (QBarSet* set : {whole, shard}) {
            set->append(QList<qreal>(static_cast<qsizetype>(kStages.size()), 0.0));
            m_parts << set;
            m_bars->append(set);
        }
    }
    // The shards this rank does not keep, stacked after them in pale grey: the bar's full length
    // is always the data-parallel state, so sharding reads as moving state, not deleting it.
    m_elsewhere = new QBarSet(tr("Other ranks"));
    m_elsewhere->setColor(QColor(242, 242, 242));
    // One pixel: Qt draws a thin dashed line directly, a wider one as a shape per dash (about
    // 300 of them around these bars, redrawn at every step of a slider).
    m_elsewhere->setPen(QPen(QColor(140, 140, 140), 1, Qt::DashLine));
    m_elsewhere->append(QList<qreal>(static_cast<qsizetype>(kStages.size()), 0.0));
    m_bars->append(m_elsewhere);
    m_bars->setBarWidth(0.62);
    chart->legend()->setAlignment(Qt::AlignRight);
    chart->addSeries(m_bars);
    m_stageAxis = new QBarCategoryAxis;
    m_breakdownY = new QValueAxis;
    // Stage names only: totals beside them would relayout the chart on every step, and the
    // table under the charts gives them. The first category is drawn at the bottom: DP goes
    // last so that it reads first, from the top.
    for (auto it = kStages.rbegin(); it != kStages.rend(); ++it)
        m_stageAxis->append(stageName(*it));
    chart->addAxis(m_stageAxis, Qt::AlignLeft);
    chart->addAxis(m_breakdownY, Qt::AlignBottom);
    m_bars->attachAxis(m_stageAxis);
    m_bars->attachAxis(m_breakdownY);
    styleAxis(m_stageAxis, QString());
    styleAxis(m_breakdownY, tr("Model state per rank (GB)"), tr("State (GB)"));
    m_stageAxis->setTitleVisible(false);
    m_stageAxis->setGridLineVisible(false); // the bars separate the stages well enough
    m_breakdownLimit = new QLineSeries;
    m_breakdownLimit->setName(tr("Accelerator"));
    m_breakdownLimit->setPen(QPen(QColor(110, 110, 110), kLineWidth, Qt::DashLine));
    chart->addSeries(m_breakdownLimit);
    m_breakdownLimit->attachAxis(m_stageAxis);
    m_breakdownLimit->attachAxis(m_breakdownY);
    // One hatched entry says what hatching means, so the legend lists each kind once.
    for (int k = 0; k < 2; ++k)
        showInLegend(chart->legend()->markers(m_bars)[2 * k + 1], false);
    m_breakdownNote = new QGraphicsSimpleTextItem(chart);
    connect(chart, &QChart::plotAreaChanged, this, &ZeroTab::placeNotes);
}

void ZeroTab::fitRankAxes()
{
    // Powers of four up to 4096 ranks, powers of ten beyond; on a chart too narrow for every
    // label (projector type), every other decade of them: powers of 32 or of 100.
    for (auto [axis, chart] :
         {std::pair{m_memoryX, m_memory->chart()}, std::pair{m_trafficX, m_traffic->chart()}}) {
        const double end = axis->max();
        const std::array<double, 2> bases =
            end > 4096 ? std::array{10.0, 100.0} : std::array{4.0, 32.0};
        const QFontMetricsF fm(axis->labelsFont());
        const double label =
            fm.horizontalAdvance(QString::number(end, 'f', 0)) + 2 * fm.averageCharWidth();
        const double width = chart->plotArea().width();
        double base = bases[1];
        if (width <= 0
            || width / (std::floor(std::log(end) / std::log(bases[0]) + 1e-9) + 1) >= label)
            base = bases[0];
        if (axis->base() != base)
            axis->setBase(base);
    }
}

void ZeroTab::placeNotes()
{
    fitRankAxes();
    // Text items of the scenes, not titles or legend names: changing those would relayout the
    // whole chart on every slider step.
    for (QGraphicsSimpleTextItem* note : {m_breakdownNote, m_memoryNLabel, m_trafficNLabel})
        styleNote(note, chartFonts().axisTitle);
    // The breakdown's rank count: under the title, over the legend on the right (in the
    // title's row it ran into the title on a narrow chart).
    QChart* breakdown = m_breakdown->chart();
    const QRectF plot = breakdown->plotArea();
    const QRectF legend = breakdown->legend()->geometry();
    if (breakdown->legend()->isVisible() && breakdown->legend()->alignment() == Qt::AlignRight
        && legend.width() > 0)
        m_breakdownNote->setPos(legend.left() + kNoteInset, plot.top());
    else
        m_breakdownNote->setPos(plot.right() - m_breakdownNote->boundingRect().width() - kNoteInset,
                                plot.top() + kNoteDrop);
    // "n = 64" at the top of each vertical line, on the side with room.
    const auto atLine = [](QGraphicsSimpleTextItem* label, QChart* chart, QXYSeries* line) {
        if (line->count() < 2)
            return;
        const QPointF top = chart->mapToPosition(line->at(1), line);
        const QRectF area = chart->plotArea();
        const double width = label->boundingRect().width();
        const double x = top.x() + kLineLabelGap + width < area.right()
            ? top.x() + kLineLabelGap
            : top.x() - kLineLabelGap - width;
        label->setPos(x, area.top() + kNoteDrop);
    };
    atLine(m_memoryNLabel, m_memory->chart(), m_memoryCurrent);
    atLine(m_trafficNLabel, m_traffic->chart(), m_trafficCurrent);
}

void ZeroTab::buildTrafficChart()
{
    m_traffic = new ChartViewPanel("zero-traffic");
    QChart* chart = m_traffic->chart();
    chart->setTitle(tr("What one rank sends per training step"));
    m_trafficX = new QLogValueAxis;
    m_trafficX->setBase(4);
    m_trafficX->setLabelFormat("%.0f");
    m_trafficY = new QValueAxis;
    m_bandwidthY = new QValueAxis;
    chart->addAxis(m_trafficX, Qt::AlignBottom);
    chart->addAxis(m_trafficY, Qt::AlignLeft);
    chart->addAxis(m_bandwidthY, Qt::AlignRight);
    styleAxis(m_trafficX, tr("Data-parallel ranks n (log scale)"));
    styleAxis(m_trafficY, tr("Sent per rank per step (GB)"), tr("Sent (GB)"));
    styleAxis(m_bandwidthY, tr("DP all-reduce bandwidth (GB/s)"), tr("Bandwidth (GB/s)"));
    m_bandwidthY->setGridLineVisible(false);

    const auto add = [&](QXYSeries* s, QAbstractAxis* y) {
        chart->addSeries(s);
        s->attachAxis(m_trafficX);
        s->attachAxis(y);
    };
    // Where DP, ZeRO-1 and ZeRO-2 coincide (w = g) they are drawn as one line in three nested
    // widths, orange outside, green inside, DP's black core: all three stay visible. Solid
    // pens: long dashed lines cost a frame to stroke on every slider step.
    QList<QLineSeries*> byStage;
    const double widths[] = {kLineWidth, 3.4 * kLineWidth, 2.0 * kLineWidth, kLineWidth};
    for (std::size_t i = 0; i < kStages.size(); ++i) {
        auto* line = new QLineSeries;
        QPen pen = stagePen(kStages[i], widths[i]);
        if (kStages[i] != ZeroStage::Zero3)
            pen.setStyle(Qt::SolidLine);
        line->setPen(pen);
        byStage << line;
    }
    // Short names in a column beside the plot: the table and the figures line say the rest.
    for (int i = 0; i < 4; ++i)
        byStage[i]->setName(stageName(kStages[static_cast<std::size_t>(i)]));
    chart->legend()->setAlignment(Qt::AlignRight);
    for (int i : {1, 2, 0, 3})
        add(byStage[i], m_trafficY);
    m_trafficLines = byStage;
    m_twiceGradients = new QLineSeries;
    m_twiceGradients->setName(tr("2 x gradients"));
    m_twiceGradients->setPen(QPen(QColor(110, 110, 110), 2, Qt::DashLine));
    add(m_twiceGradients, m_trafficY);
    m_trafficCurrent = new QLineSeries;
    m_trafficCurrent->setName(tr("Your n"));
    m_trafficNLabel = new QGraphicsSimpleTextItem(chart);
    m_trafficCurrent->setPen(QPen(QColor(120, 120, 120), 2, Qt::DotLine));
    add(m_trafficCurrent, m_trafficY);
    m_algbw = new QLineSeries;
    m_algbw->setName(tr("algbw (right)"));
    m_algbw->setPen(QPen(palette::kSkyBlue, kLineWidth, Qt::DashLine));
    add(m_algbw, m_bandwidthY);
    m_busbw = new QLineSeries;
    m_busbw->setName(tr("busbw (right)"));
    m_busbw->setPen(QPen(palette::kBlue, kLineWidth));
    add(m_busbw, m_bandwidthY);
    showInLegend(chart->legend()->markers(m_trafficCurrent).first(), false);
    connect(chart, &QChart::plotAreaChanged, this, &ZeroTab::placeNotes);
}

void ZeroTab::buildTable()
{
    m_table = new QTableWidget(static_cast<int>(kStages.size()), 5, this);
    m_table->setObjectName("zero.table");
    m_table->setAccessibleName(tr("Current figures per stage"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->setFocusPolicy(Qt::NoFocus);
    m_table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_table->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Five columns, so the table fits under two charts beside the explanation.
    m_table->setHorizontalHeaderLabels(
        {tr("Model state\nper rank"), tr("Fits the\naccelerator?"), tr("Sent per rank\nper step"),
         tr("Time per step\n(alpha-beta)"), tr("algbw / busbw\n(gradients, sent / time)")});
    for (int row = 0; row < static_cast<int>(kStages.size()); ++row) {
        const ZeroStage stage = kStages[static_cast<std::size_t>(row)];
        QPixmap swatch(14, 14);
        swatch.fill(stageColor(stage));
        auto* header = new QTableWidgetItem(QIcon(swatch), stageName(stage));
        m_table->setVerticalHeaderItem(row, header);
        for (int column = 0; column < m_table->columnCount(); ++column) {
            auto* item = new QTableWidgetItem;
            item->setTextAlignment(Qt::AlignCenter);
            m_table->setItem(row, column, item);
        }
    }
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->setWordWrap(false);
    fitTableHeight();
    m_table->installEventFilter(this);
    // Under the charts, scrolling with them.
    addChartRow(m_table, ChartRow::Below);
}

void ZeroTab::fitTableHeight()
{
    // One line a row, as tall as the font: the table is a caption for the charts, never a
    // scrolling list. Called again when the font changes (projector mode).
    const int row = fontMetrics().height() + kTableRowPadding;
    m_table->verticalHeader()->setDefaultSectionSize(row);
    const int header = fontMetrics().lineSpacing() * 2 + kTableHeaderPadding; // two-line titles
    m_table->horizontalHeader()->setFixedHeight(header);
    const int scrollBar = m_table->horizontalScrollBarPolicy() == Qt::ScrollBarAlwaysOn
        ? m_table->horizontalScrollBar()->sizeHint().height()
        : 0;
    m_table->setFixedHeight(header + row * m_table->rowCount() + 2 * m_table->frameWidth()
                            + kTableBottomPadding + scrollBar);
}

void ZeroTab::fitTableColumns()
{
    QHeaderView* header = m_table->horizontalHeader();
    const int columns = m_table->columnCount();
    QList<int> needs;
    for (int column = 0; column < columns; ++column)
        needs << columnWidthNeeded(column);
    const int need = std::accumulate(needs.begin(), needs.end(), 0);
    const int widest = *std::max_element(needs.begin(), needs.end());
    // Columns of equal width when the widest fits its share (the sum fitting is not enough:
    // a 1280-wide window cut "29.5 GB in 126 ms" so); else each as wide as it needs, the room
    // left shared out, with a scroll bar when even that does not fit. Set widths, not sized to
    // contents: a new header of the same width then repaints no cell. The viewport's width is
    // the same with or without the scroll bar under it: no loop.
    const int room = m_table->viewport()->width();
    const bool equal = widest * columns <= room;
    const auto mode = equal ? QHeaderView::Stretch : QHeaderView::Fixed;
    if (header->sectionResizeMode(0) != mode)
        header->setSectionResizeMode(mode);
    if (!equal) {
        const int extra = std::max(0, room - need) / columns;
        for (int column = 0; column < columns; ++column)
            if (header->sectionSize(column) != needs[column] + extra)
                header->resizeSection(column, needs[column] + extra);
    }
    const auto bar = need <= room ? Qt::ScrollBarAlwaysOff : Qt::ScrollBarAlwaysOn;
    if (m_table->horizontalScrollBarPolicy() == bar)
        return;
    m_table->setHorizontalScrollBarPolicy(bar);
    fitTableHeight();
}

int ZeroTab::columnWidthNeeded(int column)
{
    if (m_columnNeeds.size() != m_table->columnCount())
        m_columnNeeds.resize(m_table->columnCount());
    ColumnNeed& need = m_columnNeeds[column];
    // The header and the cells measured apart: the accelerator's slider changes the header of
    // the fits column at every step, its cells seldom.
    if (const QString header = m_table->horizontalHeaderItem(column)->text();
        need.header != header) {
        need.headerWidth = m_table->horizontalHeader()->sectionSizeHint(column);
        need.header = header;
    }
    QString cells;
    for (int row = 0; row < m_table->rowCount(); ++row)
        cells += QChar(0) + m_table->item(row, column)->text();
    if (need.cells != cells) {
        // QTableView hides the measure QAbstractItemView gives everyone.
        const QAbstractItemView* view = m_table;
        need.cellsWidth = view->sizeHintForColumn(column);
        need.cells = cells;
    }
    return std::max(need.headerWidth, need.cellsWidth);
}

bool ZeroTab::eventFilter(QObject* watched, QEvent* event)
{
    if (m_table && watched == m_table && event->type() == QEvent::Resize)
        fitTableColumns();
    return Tab::eventFilter(watched, event);
}

void ZeroTab::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::FontChange && m_table) {
        m_columnNeeds.clear(); // every text measures differently now
        fitTableHeight();
    }
    Tab::changeEvent(event);
}

void ZeroTab::niceRange(QValueAxis* axis, double min, double max)
{
    // setNiceRange leaves an axis that would not change alone. A jump of several decades with
    // the old interval would first build a tick item for every old interval of the new range
    // (Qt Charts sets the range before the interval): one interval spanning the range avoids
    // that.
    if (max > min && (max - min) / axis->tickInterval() > 64)
        axis->setTickInterval(std::max(max - min, axis->max() - axis->min()));
    setStickyRange(axis, min, max);
}

QList<ChartPanel*> ZeroTab::charts() const
{
    return {m_memory, m_breakdown, m_ring, m_traffic};
}

std::int64_t ZeroTab::acceleratorBytes() const
{
    return zeroAcceleratorBytes(scenario().zeroDisplay);
}

core::LinkModel ZeroTab::link() const
{
    return zeroLink(scenario().zeroDisplay);
}

QHash<QString, QString> ZeroTab::explanationValues() const
{
    return zeroExplanationValues(inputs());
}

void ZeroTab::recompute()
{
    // Every figure first (core refuses bad input before anything is drawn), then the drawing.
    const ZeroFigures figures = computeZeroFigures(inputs(), link(), acceleratorBytes());
    showMemory(figures);
    showBreakdown(figures);
    showTraffic(figures);
    updateRing();
    showTable(figures);
    figuresLabel()->setText(figures.summary);
}

void ZeroTab::showMemory(const ZeroFigures& f)
{
    // Memory against ranks: the four stages, the accelerator, the current n, where each fits.
    double lo = f.limit, hi = f.limit;
    for (std::size_t i = 0; i < kStages.size(); ++i) {
        replaceIfChanged(m_stageLines[static_cast<int>(i)], f.sweep.memory[i]);
        for (const QPointF& p : f.sweep.memory[i])
            if (p.y() > 0) {
                lo = std::min(lo, p.y());
                hi = std::max(hi, p.y());
            }
    }
    setDecadeRange(m_memoryY, lo, hi);
    showRankAxes(f);
    replaceIfChanged(m_memoryLimit, QList<QPointF>{{1, f.limit}, {f.axisEnd, f.limit}});
    const auto x = static_cast<double>(f.ranks);
    replaceIfChanged(m_memoryCurrent, QList<QPointF>{{x, m_memoryY->min()}, {x, m_memoryY->max()}});
    replaceIfChanged(m_memoryAtCurrent, f.atCurrent);
    replaceIfChanged(m_fitMarkers, f.fits);
}

void ZeroTab::showRankAxes(const ZeroFigures& f)
{
    m_memoryX->setRange(1, f.axisEnd);
    // Past the last rank count by a third of a decade of 4: its label then sits inside the
    // plot's width, clear of the right axis' lowest label.
    m_trafficX->setRange(1, f.axisEnd * kTrafficAxisRoom);
    fitRankAxes();
}

void ZeroTab::showBreakdown(const ZeroFigures& f)
{
    // What one rank keeps at the current n, part by part.
    double tallest = f.limit;
    for (std::size_t i = 0; i < kStages.size(); ++i) {
        const ZeroBreakdown& b = f.breakdown[i];
        const int row = breakdownRow(kStages[i]);
        for (std::size_t k = 0; k < 3; ++k) {
            replaceIfChanged(m_parts[static_cast<int>(2 * k)], row, b.replicated[k]);
            replaceIfChanged(m_parts[static_cast<int>(2 * k + 1)], row, b.sharded[k]);
        }
        replaceIfChanged(m_elsewhere, row, b.elsewhere);
        tallest = std::max(tallest, b.length);
    }
    m_breakdownNote->setText(
        countText(tr("n = %1 rank(s)", nullptr, pluralChoice(f.ranks)), f.ranks));
    niceRange(m_breakdownY, 0, tallest * kHeadroom);
    replaceIfChanged(m_breakdownLimit,
                     QList<QPointF>{{f.limit, kFirstCategoryEdge}, {f.limit, kLastCategoryEdge}});
}

void ZeroTab::showTraffic(const ZeroFigures& f)
{
    // Traffic against ranks, the 2x asymptote of the ring, and the DP bandwidths.
    double top = 0;
    for (std::size_t i = 0; i < kStages.size(); ++i) {
        replaceIfChanged(m_trafficLines[static_cast<int>(i)], f.sweep.sent[i]);
        for (const QPointF& p : f.sweep.sent[i])
            top = std::max(top, p.y());
    }
    replaceIfChanged(m_twiceGradients,
                     QList<QPointF>{{1, f.twiceGradients}, {f.axisEnd, f.twiceGradients}});
    top = std::max(top, f.twiceGradients);
    niceRange(m_trafficY, 0, top > 0 ? top * kHeadroom : 1);

    const auto x = static_cast<double>(f.ranks);
    replaceIfChanged(m_trafficCurrent, QList<QPointF>{{x, 0}, {x, m_trafficY->max()}});
    m_memoryNLabel->setText(tr("n = %1").arg(formatWhole(f.ranks)));
    m_trafficNLabel->setText(tr("n = %1").arg(formatWhole(f.ranks)));
    placeNotes();
    replaceIfChanged(m_algbw, f.sweep.algbw);
    replaceIfChanged(m_busbw, f.sweep.busbw);
    double fastest = link().bandwidth / kGB;
    for (const QPointF& p : f.sweep.busbw)
        fastest = std::max(fastest, p.y());
    niceRange(m_bandwidthY, 0, fastest * kHeadroom);
}

void ZeroTab::updateRing()
{
    const std::int64_t n = inputs().ranks;
    if (n > RingPanel::kMaxRanks) {
        if (!m_ring->showsNote() || m_ringKey.first != n)
            m_ring->showTooManyRanks(n);
        m_ringKey = {n, -1};
        return;
    }
    // The demo depends on the rank count and the bytes per value only.
    const std::int64_t bytes = inputs().gradBytes;
    const std::pair key{n, bytes};
    if (key == m_ringKey)
        return;
    const int ranks = static_cast<int>(n);
    m_ring->setDemo(core::ringDemo(ranks, ringValuesPerRank(ranks), bytes, kRingSeed), bytes);
    m_ringKey = key;
}

bool ZeroTab::showFitsHeader(const QString& header)
{
    QTableWidgetItem* item = m_table->horizontalHeaderItem(1);
    if (item->text() == header)
        return false;
    // A header's new text tells the table that its headers changed, and the table then lays out
    // and repaints every cell, at each step of the accelerator's slider. Stretched columns keep
    // their widths whatever the header says: the table is not told, and only the header, which
    // reads its texts as it paints, is painted again.
    QHeaderView* headers = m_table->horizontalHeader();
    if (headers->sectionResizeMode(1) != QHeaderView::Stretch) {
        item->setText(header);
        return true;
    }
    {
        const QSignalBlocker quiet(m_table->model());
        item->setText(header);
    }
    headers->viewport()->update();
    return true;
}

void ZeroTab::showTable(const ZeroFigures& f)
{
    bool changed = showFitsHeader(f.fitsHeader);
    for (int row = 0; row < static_cast<int>(kStages.size()); ++row) {
        const ZeroTableRow& texts = f.table[static_cast<std::size_t>(row)];
        for (int column = 0; column < static_cast<int>(texts.size()); ++column)
            if (m_table->item(row, column)->text() != texts[static_cast<std::size_t>(column)]) {
                m_table->item(row, column)->setText(texts[static_cast<std::size_t>(column)]);
                changed = true;
            }
    }
    // Measured again only when a text changed (a slider step often changes none).
    if (changed)
        fitTableColumns();
}

} // namespace scalelab::ui
