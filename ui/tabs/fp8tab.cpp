#include "fp8tab.h"

#include "backgroundrunner.h"
#include "chartdata.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "choicebox.h"
#include "figureslabel.h"
#include "format.h"
#include "heatmappairpanel.h"
#include "heatmappanel.h"
#include "legendrows.h"
#include "notelabel.h"
#include "parametercontrol.h"
#include "plaincelldelegate.h"
#include "pointcloud.h"
#include "tablepanel.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QComboBox>
#include <QFormLayout>
#include <QGraphicsSimpleTextItem>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalBlocker>
#include <QSlider>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QXYSeries>
#include <algorithm>
#include <cmath>
#include <future>
#include <optional>
#include <utility>

namespace scalelab::ui {

namespace {

using core::Fp8Format;

/// Ready-made situations: the lesson in a few steps, from "hardly any difference" to "the
/// small blocks vanish", and the chapter's own example.
struct Preset {
    const char* name;
    const char* tip;
    Fp8Format format;
    double outlierScale; // for a generated matrix
    bool chapterExample; // the chapter's one row of 8 instead
};

constexpr Preset kPresets[] = {
    {QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab", "Outliers x100 (default)"),
     QT_TRANSLATE_NOOP(
         "scalelab::ui::Fp8Tab",
         "The scenario's default: a few blocks 100 times the rest. Predict: how much worse is one "
         "scale for the small blocks?"),
     Fp8Format::E4M3, 100.0, false},
    {QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab", "Outliers x10^4"),
     QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab",
                       "The small blocks start to reach E4M3's subnormals."),
     Fp8Format::E4M3, 1e4, false},
    {QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab", "Outliers x10^5: subnormals"),
     QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab",
                       "One scale pushes the small blocks below E4M3's smallest normal value."),
     Fp8Format::E4M3, 1e5, false},
    {QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab", "Outliers x10^5 in E5M2"),
     QT_TRANSLATE_NOOP(
         "scalelab::ui::Fp8Tab",
         "E5M2 reaches eight binades further down: the same outliers cost it little."),
     Fp8Format::E5M2, 1e5, false},
    {QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab", "Outliers x10^9 in E5M2"),
     QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab", "Even E5M2's range runs out."), Fp8Format::E5M2, 1e9,
     false},
    {QT_TRANSLATE_NOOP("scalelab::ui::Fp8Tab", "Chapter's 1 x 8 example"),
     QT_TRANSLATE_NOOP(
         "scalelab::ui::Fp8Tab",
         "The values of the chapter's test: one row of 8, blocks of 4. Its spread (300x) stays "
         "inside E4M3's normal range, so neither scheme wins by much."),
     Fp8Format::E4M3, 0.0, true},
};

const std::vector<float> kChapterValues = {0.5f, -1.25f, 3.0f, 0.001f, 0.01f, 0.02f, 0.03f, 0.04f};
constexpr std::int64_t kChapterBlock = 4;

/// The chapter's values as the one-row matrix of a scenario.
core::MatrixF chapterMatrix()
{
    core::MatrixF row(1, static_cast<Eigen::Index>(kChapterValues.size()));
    for (std::size_t j = 0; j < kChapterValues.size(); ++j)
        row(0, static_cast<Eigen::Index>(j)) = kChapterValues[j];
    return row;
}

// Layout metrics, in logical pixels unless said otherwise.
constexpr int kDisclosureIndent = 12; ///< the controls behind a disclosure, from the left
constexpr int kComboChars = 16; ///< the combo boxes' minimum width, in characters
constexpr int kSwatchSide = 14; ///< the colour swatch of a compared table row
constexpr int kTableMinHeight = 180;
constexpr int kTableColumns = 7; ///< scaling, scales, RMSE, max |err|, SNR, -> 0, small blocks
constexpr double kPointSize = 7; ///< the block-error markers
constexpr double kGridPointSize = 9; ///< the grid chart's representable values
constexpr double kValueSize = 10; ///< the grid chart's block values
constexpr double kRingSize = 20; ///< rings around a point: the shown block, a rounded value
constexpr double kRingPen = 2.5;
/// The grid chart's rows (per tensor 0, values 1, own scale 2) and the room around them.
constexpr double kRowAxisMin = -0.6;
constexpr double kRowAxisMax = 2.6;
/// Between the grid chart's row names and its plot, in pixels.
constexpr double kRowNameGap = 6;
constexpr double kZoneHalfHeight = 0.4; ///< the subnormal zone around the per-tensor row
/// Grid points beyond the block's values are shown up to this share of its span away.
constexpr double kGridReach = 0.35;
/// Aim for about this many ticks on a round-ranged axis.
constexpr double kTickDivisions = 6;
/// The grid chart's lines: the per-tensor grid, the block's values, its own grid.
constexpr double kTensorLine = 0;
constexpr double kValuesLine = 1;
constexpr double kOwnLine = 2;
constexpr double kErrorHeadroom = 1.05; ///< the error axis reaches this far past the top point

/// Core's block-error points as a series takes them.
QList<QPointF> chartPoints(const std::vector<core::Fp8ErrorPoint>& points)
{
    QList<QPointF> out;
    out.reserve(static_cast<qsizetype>(points.size()));
    for (const core::Fp8ErrorPoint& p : points)
        out.append({p.rank, p.percent});
    return out;
}

QString formatName(Fp8Format f)
{
    return f == Fp8Format::E4M3 ? QStringLiteral("E4M3") : QStringLiteral("E5M2");
}

/// A figure that may be NaN or infinite (a NaN-mode cast, a round trip without error).
QString figure(double v, int digits = 3)
{
    if (std::isnan(v))
        return QStringLiteral("NaN");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("∞") : QStringLiteral("-∞");
    return formatNumber(v, digits);
}

QString percent(double fraction)
{
    return figure(100.0 * fraction) + QStringLiteral(" %");
}

/// "2^-6" for a power of two from core.
QString powerOfTwo(float value)
{
    return QStringLiteral("2<sup>%1</sup>").arg(std::ilogb(value));
}

QIcon swatch(const QColor& colour)
{
    QPixmap p(kSwatchSide, kSwatchSide);
    p.fill(colour);
    return QIcon(p);
}

/// A marker drawn once into an image, four times oversampled so exports scaled up stay crisp.
QImage markerImage(bool circle, const QBrush& fill, const QPen& pen, double size)
{
    constexpr int kOversample = 4;
    const int side = static_cast<int>(std::ceil(size * kOversample));
    QImage image(side, side, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    p.scale(kOversample, kOversample);
    QPen scaled = pen;
    const double inset = pen.style() == Qt::NoPen ? 0.0 : pen.widthF() / 2;
    p.setPen(scaled);
    p.setBrush(fill);
    const QRectF r(inset, inset, size - 2 * inset, size - 2 * inset);
    if (circle)
        p.drawEllipse(r);
    else
        p.drawRect(r);
    return image;
}

/// Scatter series are drawn with light markers: one painted image per point instead of a
/// visible graphics item each. (Qt Charts still keeps a hidden item per point and moves it at
/// every change; the block-error chart's thousands of points go through PointCloud instead.)
QScatterSeries* makeScatter(const QString& name, const QColor& fill, double size,
                            QScatterSeries::MarkerShape shape)
{
    auto* s = new QScatterSeries;
    s->setName(name);
    s->setMarkerShape(shape);
    s->setMarkerSize(size);
    s->setColor(fill);
    s->setBorderColor(fill);
    s->setLightMarker(
        markerImage(shape == QScatterSeries::MarkerShapeCircle, fill, Qt::NoPen, size));
    s->setPointsVisible(false); // the graphics items stay hidden; the light markers show
    return s;
}

/// A hollow ring: where values land, drawn around the grid point they land on.
QScatterSeries* makeRing(const QString& name, const QColor& colour, double size)
{
    auto* s = new QScatterSeries;
    s->setName(name);
    s->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    s->setMarkerSize(size);
    s->setColor(colour);
    s->setBorderColor(colour);
    s->setLightMarker(markerImage(true, Qt::NoBrush, QPen(colour, kRingPen), size));
    s->setPointsVisible(false);
    return s;
}

void attach(QChart* chart, QAbstractSeries* s, QAbstractAxis* x, QAbstractAxis* y)
{
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
}

void hideFromLegend(QChart* chart, QAbstractSeries* s)
{
    for (QLegendMarker* m : chart->legend()->markers(s))
        showInLegend(m, false);
}

/// A range around [lo, hi] that starts and ends on round multiples, with ticks on the
/// multiples of a round step (so 0 is a tick whenever it is in range).
void setRoundRange(QValueAxis* axis, double lo, double hi)
{
    if (!(hi > lo)) {
        const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.5;
        lo -= pad;
        hi += pad;
    }
    const double raw = (hi - lo) / kTickDivisions;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * power;
    for (double m : {1.0, 2.0, 2.5, 5.0})
        if (m * power >= raw) {
            step = m * power;
            break;
        }
    const double a = std::floor(lo / step) * step;
    const double z = std::ceil(hi / step) * step;
    if (axis->min() == a && axis->max() == z && axis->tickInterval() == step)
        return; // the same axis: leave its labels alone
    axis->setRange(a, z);
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0);
    axis->setTickInterval(step);
    int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
    const double scaled = step * std::pow(10.0, decimals);
    if (std::abs(scaled - std::round(scaled)) > 1e-6)
        ++decimals; // 2.5, 0.25, ...
    axis->setLabelFormat(QString("%.%1f").arg(decimals));
}

} // namespace

QString Fp8Tab::granularityName(int row, std::int64_t blockSize)
{
    switch (row) {
    case core::kFp8CastRow:
        return tr("Plain cast");
    case core::kFp8TensorRow:
        return tr("Per tensor");
    case core::kFp8PerRowRow:
        return tr("Per row");
    case core::kFp8Tile128Row:
        return tr("1 x 128");
    case core::kFp8Block128Row:
        return tr("128 x 128");
    case core::kFp8ChapterRow:
        return tr("1 x %1 (chapter)").arg(blockSize);
    default:
        return tr("1 x 32 E8M0");
    }
}

QString Fp8Tab::granularityAbout(int row, std::int64_t blockSize)
{
    switch (row) {
    case core::kFp8CastRow:
        return tr("No scale at all: every value is cast to FP8 as it is.");
    case core::kFp8TensorRow:
        return tr("One scale for the whole matrix.");
    case core::kFp8PerRowRow:
        return tr("One scale per row of the matrix.");
    case core::kFp8Tile128Row:
        return tr("1 x 128 tiles, as DeepSeek-V3 scales activations.");
    case core::kFp8Block128Row:
        return tr("128 x 128 blocks, as DeepSeek-V3 scales weights.");
    case core::kFp8ChapterRow:
        return tr("The chapter's fine-grained scaling: one scale per 1 x %1 block of a row.")
            .arg(blockSize);
    default:
        return tr("1 x 32 blocks with power-of-two (E8M0) scales, as in the MXFP8 format.");
    }
}

QString Fp8Tab::tileNote(const core::Fp8Tiling& t, std::int64_t rows, std::int64_t cols)
{
    if (t.even)
        return {};
    QString note = tr("%1 x %2 does not divide %3 x %4: tiles of %5 x %6")
                       .arg(t.wantRows)
                       .arg(t.wantCols)
                       .arg(rows)
                       .arg(cols)
                       .arg(t.tileRows)
                       .arg(t.tileCols);
    if (t.edgeRows != t.tileRows || t.edgeCols != t.tileCols)
        note += tr(", the last ones %1 x %2").arg(t.edgeRows).arg(t.edgeCols);
    return note;
}

Fp8Tab::Fp8Tab(document::ScenarioDocument* document, QWidget* parent)
    : Tab(document, core::Section::Fp8, parent)
{
    setObjectName("fp8");
    buildControls();
    buildErrorChart();
    buildGridChart();
    buildHeatmap();
    buildTable();
    buildAccumulationChart();
    buildPolicyErrorChart();
    buildPolicyLostChart();
    setCharts({m_errorChart, m_gridChart});
    // The second row: the error maps, which need the width, beside the granularity table (or
    // above it, when beside them it would be cut: arrangeBlockRow).
    m_blockRow = new QWidget;
    m_blockRow->setObjectName("fp8.block_row");
    m_blockLayout = new QHBoxLayout(m_blockRow);
    m_blockLayout->setContentsMargins(0, 0, 0, 0);
    m_blockLayout->addWidget(m_heatmap, 1);
    auto* tableBox = new QVBoxLayout;
    tableBox->addWidget(m_table, 1);
    tableBox->addWidget(m_tableNoteLine);
    m_blockLayout->addLayout(tableBox, 1);
    m_blockRow->installEventFilter(this);
    addChartRow(m_blockRow, ChartRow::Below, 1);
    buildPartBar();
    showPart(static_cast<Part>(scenario().fp8Display.part));
    sectionShown();
    drawFirst();
}

QList<ChartPanel*> Fp8Tab::charts() const
{
    return {m_errorChart, m_heatmap,          m_gridChart,
            m_accChart,   m_policyErrorChart, m_policyLostChart};
}

QList<ChartPanel*> Fp8Tab::partCharts(Part part) const
{
    switch (part) {
    case Part::Accumulation:
        return {m_accChart};
    case Part::Policy:
        return {m_policyErrorChart, m_policyLostChart};
    case Part::BlockScaling:
        break;
    }
    return {m_errorChart, m_gridChart};
}

void Fp8Tab::buildControls()
{
    QVBoxLayout* box = addGroup(tr("FP8 block scaling"));
    m_blockGroup = qobject_cast<QGroupBox*>(box->parentWidget());
    buildSituation(box);
    addControl(box, "fp8.outlier_scale");
    addControl(box, "fp8.shown_block");
    buildMatrixControls(box);
    buildAccumulationControls();
    buildPolicyControls();
    for (QComboBox* c :
         {m_preset, m_format, m_blockSize, m_overflow, m_accPreset, m_policyPreset}) {
        // Long entries must not widen the controls column past its sliders.
        c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        c->setMinimumContentsLength(kComboChars);
    }
    // A slider the user moves (by key, click, wheel or drag: every such move is an action)
    // previews a large matrix; once it rests, or is let go, the exact figures follow.
    m_rest = new SliderRest(this);
    connect(m_rest, &SliderRest::rested, this, &Fp8Tab::sliderSettled);
    for (ParameterControl* c : controls())
        m_rest->watch(c->slider());
}

QString Fp8Tab::heatmapTitle(bool preview)
{
    return preview ? tr("|error| per value (last full result)")
                   : tr("|error| per value (matrix units)");
}

void Fp8Tab::changeEvent(QEvent* event)
{
    Tab::changeEvent(event);
    // Type of another size (projector mode) needs columns of another width.
    if (event->type() == QEvent::FontChange && m_table)
        fitTableColumns({}, false);
}

bool Fp8Tab::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_blockRow && event->type() == QEvent::Resize)
        arrangeBlockRow();
    return Tab::eventFilter(watched, event);
}

void Fp8Tab::arrangeBlockRow()
{
    // Half the row each: beside the maps the table shows every column whole, or it goes below
    // them (a table that scrolls sideways hides the very figures it compares). Not while a
    // slider moves: the row would jump under the reader; the columns only widen then.
    if (!m_blockLayout || m_rest->moving())
        return;
    const int half = (m_blockRow->width() - m_blockLayout->spacing()) / 2;
    const auto direction =
        half >= wholeTableWidth(m_table) ? QBoxLayout::LeftToRight : QBoxLayout::TopToBottom;
    if (m_blockLayout->direction() != direction)
        m_blockLayout->setDirection(direction);
    // Below the maps it has the row's width and shows every row too.
    const int height = direction == QBoxLayout::TopToBottom
        ? std::max(kTableMinHeight, wholeTableHeight(m_table))
        : kTableMinHeight;
    if (m_table->minimumHeight() != height)
        m_table->setMinimumHeight(height);
}

void Fp8Tab::sliderSettled()
{
    if (m_view && m_view->preview) {
        scheduleRefresh(); // the exact figures fit the columns when they come
        return;
    }
    tableAtRest();
}

void Fp8Tab::tableAtRest()
{
    // Columns left as wide as the move made them fit their figures again (and the row is
    // arranged for them); otherwise only the row's arrangement, skipped while moving, is due.
    if (m_tableFitPending)
        fitTableColumns({}, false);
    else
        arrangeBlockRow();
}

void Fp8Tab::setSettleInterval(int ms)
{
    m_rest->setInterval(ms);
}

bool Fp8Tab::refinementPending() const
{
    return m_view && m_view->preview;
}

void Fp8Tab::catchUp()
{
    // What is exported or tested is the exact comparison, never a preview.
    if (!m_rest->moving() && !(m_view && m_view->preview))
        return;
    m_rest->stop();
    refreshNow();
    // Figures that needed no new text still leave the columns as wide as the move made them.
    tableAtRest();
}

void Fp8Tab::buildSituation(QVBoxLayout* box)
{
    auto* form = new QFormLayout;
    m_situationForm = form;
    m_preset = new ChoiceBox;
    m_preset->setObjectName("fp8.preset");
    m_preset->setAccessibleName(tr("Situation"));
    for (const Preset& p : kPresets) {
        m_preset->addItem(tr(p.name));
        m_preset->setItemData(m_preset->count() - 1, tr(p.tip), Qt::ToolTipRole);
    }
    m_preset->addItem(tr("Custom"));
    form->addRow(tr("&Situation"), m_preset);
    connect(m_preset, &QComboBox::activated, this, &Fp8Tab::applyPreset);

    m_format = addChoice(form, "fp8.format");
    m_format->setAccessibleName(tr("FP8 format"));

    // A combo box rather than a slider: it offers exactly the block sizes that divide the
    // columns, in order, and Up/Down step through them; a slider would have positions that
    // are not allowed. The document keeps the size valid when the columns change.
    const document::Field* block = document::findField(u"fp8.block_size");
    m_blockSize = new ChoiceBox;
    m_blockSize->setObjectName(block->key);
    m_blockSize->setAccessibleName(tr("Block size"));
    m_blockSize->setToolTip(block->translatedHelp());
    form->addRow(block->translatedLabel(), m_blockSize);
    connect(m_blockSize, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0)
            document()->setValue("fp8.block_size",
                                 static_cast<double>(m_blockSize->itemData(i).toLongLong()));
    });
    box->addLayout(form);
}

void Fp8Tab::buildMatrixControls(QVBoxLayout* box)
{
    // The matrix itself and the overflow rule: rarely changed, so behind a disclosure.
    auto* advanced = new QWidget;
    auto* adv = new QVBoxLayout(advanced);
    adv->setContentsMargins(kDisclosureIndent, 0, 0, 0);
    for (const char* key : {"fp8.rows", "fp8.cols", "fp8.seed"})
        addControl(adv, key);
    auto* advForm = new QFormLayout;
    m_overflow = addChoice(advForm, "fp8.overflow");
    adv->addLayout(advForm);
    m_explicitNote = new NoteLabel;
    m_explicitNote->setObjectName("fp8.explicit_note");
    m_generate = new QPushButton(tr("Use a generated matrix"));
    m_generate->setObjectName("fp8.generate");
    connect(m_generate, &QPushButton::clicked, this, &Fp8Tab::useGeneratedMatrix);
    addDisclosure(box, tr("Matrix shape, seed and overflow"), advanced,
                  tr("Show matrix shape, seed and overflow"));
    // Shown only while the matrix comes from a scenario's explicit values.
    box->addWidget(m_explicitNote);
    box->addWidget(m_generate);
    m_explicitNote->hide();
    m_generate->hide();
}

void Fp8Tab::buildErrorChart()
{
    m_errorChart = new ChartViewPanel("fp8-block-error");
    QChart* chart = m_errorChart->chart();
    chart->setTitle(tr("Relative error of each block"));
    m_rankAxis = new QValueAxis;
    m_errorAxis = new QValueAxis;
    chart->addAxis(m_rankAxis, Qt::AlignBottom);
    chart->addAxis(m_errorAxis, Qt::AlignLeft);
    styleAxis(m_rankAxis, tr("Blocks ranked by largest |value|"));
    styleAxis(m_errorAxis, tr("Relative RMS error of the block (%)"), tr("Block error (%)"));

    // The outlier blocks as a shaded band behind the points.
    m_bandTop = new QLineSeries(this);
    m_bandBottom = new QLineSeries(this);
    m_outlierBand = new QAreaSeries(m_bandTop, m_bandBottom);
    m_outlierBand->setColor(QColor(0, 0, 0, 30));
    m_outlierBand->setBorderColor(QColor(0, 0, 0, 30));
    attach(chart, m_outlierBand, m_rankAxis, m_errorAxis);
    m_errTensor = makeScatter(tr("Per tensor"), palette::kVermillion, kPointSize,
                              QScatterSeries::MarkerShapeCircle);
    attach(chart, m_errTensor, m_rankAxis, m_errorAxis);
    m_errBlock = makeScatter(tr("Per block"), palette::kBlue, kPointSize,
                             QScatterSeries::MarkerShapeRectangle);
    attach(chart, m_errBlock, m_rankAxis, m_errorAxis);
    // Thousands of points each: drawn by one item per series (PointCloud), over the band and
    // under the ring, which is made after them.
    m_tensorCloud = new PointCloud(chart, m_errTensor, m_rankAxis, m_errorAxis);
    m_blockCloud = new PointCloud(chart, m_errBlock, m_rankAxis, m_errorAxis);
    m_errShown = makeRing(tr("Shown block"), palette::kBlack, kRingSize);
    attach(chart, m_errShown, m_rankAxis, m_errorAxis);
}

void Fp8Tab::buildGridChart()
{
    m_gridChart = new ChartViewPanel("fp8-grid");
    QChart* chart = m_gridChart->chart();
    chart->setTitle(tr("One block on each grid"));
    m_valueAxis = new QValueAxis;
    m_rowAxis = new QCategoryAxis;
    chart->addAxis(m_valueAxis, Qt::AlignBottom);
    chart->addAxis(m_rowAxis, Qt::AlignLeft);
    styleAxis(m_valueAxis, tr("Value (in the matrix's units)"));
    styleAxis(m_rowAxis, QString());
    m_rowAxis->setTitleVisible(false);
    m_rowAxis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_rowAxis->setStartValue(kRowAxisMin);
    m_rowAxis->append(tr("Per tensor"), kTensorLine);
    m_rowAxis->append(tr("Values"), kValuesLine);
    m_rowAxis->append(tr("Per block"), kOwnLine);
    m_rowAxis->setRange(kRowAxisMin, kRowAxisMax);
    m_rowAxis->setGridLineVisible(false);
    hideAxisLabels(m_rowAxis); // they hold the room of m_rowNames
    m_rowNames = {RowName{nullptr, nullptr, kTensorLine}, RowName{nullptr, nullptr, kValuesLine},
                  RowName{nullptr, nullptr, kOwnLine}};
    for (RowName& r : m_rowNames) {
        r.name = new QGraphicsSimpleTextItem(chart);
        if (r.row != kValuesLine)
            r.scale = new QGraphicsSimpleTextItem(chart);
    }
    m_rowNames[0].name->setText(tr("Per tensor"));
    m_rowNames[1].name->setText(tr("Values"));
    m_rowNames[2].name->setText(tr("Own scale"));
    connect(chart, &QChart::plotAreaChanged, this, &Fp8Tab::layOutRowNames);

    m_subnormalZone = new QLineSeries;
    // Grey, not the per-tensor colour, so its legend entry stands apart from the grid's.
    m_subnormalZone->setPen(QPen(QColor(110, 110, 110), 2, Qt::DashLine));
    m_subnormalZone->setName(tr("Subnormals"));
    attach(chart, m_subnormalZone, m_valueAxis, m_rowAxis);
    m_gridTensor = makeScatter(tr("Per-tensor grid"), palette::kVermillion, kGridPointSize,
                               QScatterSeries::MarkerShapeRectangle);
    attach(chart, m_gridTensor, m_valueAxis, m_rowAxis);
    m_gridBlock = makeScatter(tr("Own grid"), palette::kBlue, kGridPointSize,
                              QScatterSeries::MarkerShapeRectangle);
    attach(chart, m_gridBlock, m_valueAxis, m_rowAxis);
    m_values =
        makeScatter(tr("Values"), palette::kBlack, kValueSize, QScatterSeries::MarkerShapeCircle);
    attach(chart, m_values, m_valueAxis, m_rowAxis);
    // Rings mark the grid points the values round to; the grids' legend entries stand for them.
    m_landTensor = makeRing(tr("Rounded, per tensor"), palette::kVermillion, kRingSize);
    attach(chart, m_landTensor, m_valueAxis, m_rowAxis);
    m_landBlock = makeRing(tr("Rounded, own scale"), palette::kBlue, kRingSize);
    attach(chart, m_landBlock, m_valueAxis, m_rowAxis);
    hideFromLegend(chart, m_landTensor);
    hideFromLegend(chart, m_landBlock);
}

void Fp8Tab::buildHeatmap()
{
    m_heatmap = new HeatmapPairPanel("fp8-heatmap");
    // The unit sits in the title: a colour bar as short as a stacked map cannot hold it. Both
    // bars read the same, since the pair colours both maps over one range.
    m_heatmap->setTitle(heatmapTitle(false));
    m_heatmap->setLogScale(true);
    for (HeatmapPanel* map : {m_heatmap->left(), m_heatmap->right()}) {
        map->setColorBarTitle(tr("|error|"));
        map->setValueFormat([](double v) { return figure(v); });
    }
}

void Fp8Tab::buildTable()
{
    m_table = new QTableWidget(core::kFp8TableRows, kTableColumns);
    m_table->setObjectName("fp8.granularity");
    m_table->setAccessibleName(tr("Error by scaling granularity"));
    const QStringList headers = {tr("Scaling"),  tr("Scales"), tr("RMSE"),         tr("Max |err|"),
                                 tr("SNR (dB)"), tr("→ 0"),    tr("Small\nblocks")};
    m_table->setHorizontalHeaderLabels(headers);
    const QStringList tips = {
        tr("How many values share one scale."),
        tr("Scales stored (one per tile)."),
        tr("Root-mean-square error over the whole matrix, in the matrix's units."),
        tr("Largest |error| of any value, in the matrix's units."),
        tr("Signal-to-noise ratio: 10 log10(sum x^2 / sum error^2), in dB."),
        tr("Non-zero values that became 0 (underflow), a count."),
        tr("Relative RMS error over the small blocks only (all but the outlier blocks), in %. "
           "The whole-matrix figures are dominated by the outlier blocks and hide this.")};
    for (int c = 0; c < tips.size(); ++c)
        m_table->horizontalHeaderItem(c)->setToolTip(tips[c]);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    // One Tab stop: arrows move between cells, Tab goes on to the next control.
    m_table->setTabKeyNavigation(false);
    m_table->setWordWrap(false);
    m_table->setItemDelegate(new PlainCellDelegate(m_table));
    // Every column as wide as its text (fitTableColumns: the header would fit them to every new
    // figure by itself); the last one takes what is left.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setMinimumHeight(kTableMinHeight);
    for (int r = 0; r < core::kFp8TableRows; ++r)
        for (int c = 0; c < kTableColumns; ++c) {
            auto* item = new QTableWidgetItem;
            item->setTextAlignment(c == 0 ? (Qt::AlignLeft | Qt::AlignVCenter)
                                          : (Qt::AlignRight | Qt::AlignVCenter));
            m_table->setItem(r, c, item);
        }
    // The two rows the charts compare wear the charts' colours.
    m_table->item(kTensorRow, 0)->setIcon(swatch(palette::kVermillion));
    m_table->item(kChapterRow, 0)->setIcon(swatch(palette::kBlue));
    // Its text gains a paragraph while a slider previews: as a figures line it keeps, at each
    // width, the tallest height it needed (a first key press after a rest no longer shrinks the
    // table above it and grows it back when the exact figures come), lays each text out once,
    // and asks for a layout only when it needs another height.
    m_tableNoteLine = new FiguresLine;
    m_tableNote = m_tableNoteLine->label();
    m_tableNote->setObjectName("fp8.table_note");
}

void Fp8Tab::sectionShown()
{
    fillBlockSizes();
    showExplicitValues();
    syncPreset();
    syncTrainingPresets();
    showPart(static_cast<Part>(scenario().fp8Display.part));
}

void Fp8Tab::fillBlockSizes()
{
    // The divisors of the columns. A scenario's size that divides nothing is still listed and
    // chosen, so that core refuses it by name instead of the tab quietly changing it.
    const core::Fp8Inputs& in = inputs();
    const std::int64_t cols = in.values ? static_cast<std::int64_t>(in.values->cols()) : in.cols;
    std::vector<std::int64_t> choices = core::fp8BlockSizeChoices(std::max<std::int64_t>(cols, 1));
    if (std::find(choices.begin(), choices.end(), in.blockSize) == choices.end()) {
        choices.push_back(in.blockSize);
        std::sort(choices.begin(), choices.end());
    }
    QStringList texts;
    for (std::int64_t c : choices) {
        if (c == cols)
            texts << tr("%1 values (whole row)").arg(formatWhole(c));
        else if (c < 1 || cols % c != 0)
            texts << tr("%1 (does not divide %2)").arg(formatWhole(c), formatWhole(cols));
        else
            texts << tr("%1 values (1 x %1)").arg(formatWhole(c));
    }
    const QSignalBlocker block(m_blockSize);
    // Listed again only when the list changes: most edits (and every slider step of another
    // input) leave it as it is.
    bool same = m_blockSize->count() == texts.size();
    for (int i = 0; same && i < texts.size(); ++i)
        same = m_blockSize->itemText(i) == texts[i];
    if (!same) {
        m_blockSize->clear();
        for (std::size_t i = 0; i < choices.size(); ++i)
            m_blockSize->addItem(texts[static_cast<qsizetype>(i)],
                                 QVariant::fromValue<qlonglong>(choices[i]));
    }
    m_blockSize->setCurrentIndex(
        m_blockSize->findData(QVariant::fromValue<qlonglong>(in.blockSize)));
}

void Fp8Tab::showExplicitValues()
{
    const std::optional<core::MatrixF>& values = inputs().values;
    for (const char* key : {"fp8.rows", "fp8.cols", "fp8.outlier_scale", "fp8.seed"})
        control(key)->setEnabled(!values);
    m_explicitNote->setVisible(values.has_value());
    m_generate->setVisible(values.has_value());
    if (values)
        m_explicitNote->setText(tr("Explicit values from the scenario: %1 x %2. Rows, columns, "
                                   "outlier scale and seed are not used.")
                                    .arg(values->rows())
                                    .arg(values->cols()));
}

void Fp8Tab::useGeneratedMatrix()
{
    document()->edit(core::Section::Fp8, tr("Use a generated matrix"),
                     [](core::Scenario& s) { s.fp8.values.reset(); });
}

void Fp8Tab::applyPreset(int index)
{
    if (index < 0 || index >= static_cast<int>(std::size(kPresets)))
        return;
    const Preset& p = kPresets[index];
    // One undo step; the document keeps the block size dividing the new columns.
    document()->edit(core::Section::Fp8, tr("Situation %1").arg(tr(p.name)),
                     [&p](core::Scenario& s) {
                         s.fp8.format = p.format;
                         if (p.chapterExample) {
                             s.fp8.values = chapterMatrix();
                             s.fp8.blockSize = kChapterBlock;
                         } else {
                             s.fp8.values.reset();
                             s.fp8.outlierScale = p.outlierScale;
                         }
                     });
    syncPreset(); // a choice that changed nothing still names the current values
}

void Fp8Tab::syncPreset()
{
    const core::Fp8Inputs& in = inputs();
    int match = static_cast<int>(std::size(kPresets)); // "Custom"
    for (int i = 0; i < static_cast<int>(std::size(kPresets)); ++i) {
        const Preset& p = kPresets[i];
        if (p.format != in.format)
            continue;
        if (p.chapterExample) {
            if (in.values && in.values->rows() == 1
                && in.values->cols() == static_cast<Eigen::Index>(kChapterValues.size())
                && std::equal(kChapterValues.begin(), kChapterValues.end(), in.values->data())
                && in.blockSize == kChapterBlock)
                match = i;
        } else if (!in.values && in.outlierScale == p.outlierScale) {
            match = i;
        }
    }
    const QSignalBlocker block(m_preset);
    m_preset->setCurrentIndex(match);
}

Fp8Tab::AccumulationKey Fp8Tab::accumulationKey() const
{
    const core::Fp8Inputs& in = inputs();
    return {in.accumulation, in.format, in.blockSize, in.overflow};
}

Fp8Tab::PolicyKey Fp8Tab::policyKey() const
{
    const core::Fp8Inputs& in = inputs();
    return {in.policy, in.format, in.blockSize, in.overflow};
}

core::Fp8ViewOptions Fp8Tab::viewOptions()
{
    core::Fp8ViewOptions options;
    options.shownPercentile = shownPercentile();
    options.previous = m_view;
    // While a slider moves a large matrix is previewed from a few of its rows, so that the
    // charts follow it (the whole of a 4096 x 4096 matrix takes about 85 ms); a newer request
    // stops the exact comparison part way instead of waiting for it.
    options.preview = m_rest->moving();
    options.workspace = m_workspace;
    options.stop = backgroundStop();
    const core::Fp8Inputs& in = inputs();
    if (!in.values && m_normals && m_normals->rows() == in.rows && m_normals->cols() == in.cols
        && m_normalsSeed == in.seed)
        options.normals = m_normals;
    return options;
}

std::optional<std::pair<double, double>>
Fp8Tab::newMapRange(const core::Fp8View* view, const core::Fp8View* previous, bool log)
{
    // New error maps are coloured over the range of both: found on the worker, not on the GUI
    // thread (two million cells at 4096 x 4096, with a copy of each map, 7 ms of it).
    if (!view || !view->tensorMap || !view->blockMap
        || (previous && previous->tensorMap == view->tensorMap
            && previous->blockMap == view->blockMap))
        return std::nullopt;
    return HeatmapPairPanel::rangeOf(*view->tensorMap, *view->blockMap, log);
}

void Fp8Tab::recompute()
{
    const core::Fp8ViewOptions options = viewOptions();
    const core::Fp8Inputs& in = inputs();
    // Only what differs from what is shown is computed again: a slider of one part leaves the
    // other parts' results alone (the accumulation sweep alone takes a good part of a second).
    const bool block = !m_view || m_view->preview || !core::sameBlockInputs(in, m_view->inputs);
    // Only the shown block moved: the view shown is kept but for that block's part, which costs
    // one block's work instead of the whole matrix's (at 4096 x 4096, 100 ms).
    const bool reshow = !block && m_viewPercentile != options.shownPercentile;
    const AccumulationKey accKey = accumulationKey();
    const bool sweep = m_accumulationKey != accKey;
    const PolicyKey polKey = policyKey();
    const bool run = m_policyKey != polKey;
    // One job for all three (the runner keeps only the newest request), off the GUI thread;
    // only the newest result is shown. Bad input is refused there too (core validates first),
    // so a refusal also supersedes any result still on its way.
    const bool logMaps = m_heatmap->logScale();
    computeInBackground([this, in, options, block, reshow, sweep, run, accKey, polKey,
                         logMaps]() -> std::function<void()> {
        // The other parts' sweeps (one thread) run beside the block comparison, which takes
        // whatever core they leave free: a format change waits for the longer of the two, not
        // for their sum. A failure in either is rethrown here.
        std::shared_ptr<const core::Fp8AccumulationResult> acc;
        std::shared_ptr<const core::Fp8PolicyResult> policy;
        // A thread of their own only when there is something to sweep: not for a slider
        // step of the block comparison.
        std::future<void> others;
        if (sweep || run)
            others = std::async(std::launch::async, [&] {
                if (sweep)
                    acc = std::make_shared<const core::Fp8AccumulationResult>(core::fp8Accumulation(
                        accKey.inputs, accKey.format, accKey.blockSize, accKey.overflow));
                if (run)
                    policy = std::make_shared<const core::Fp8PolicyResult>(core::fp8Policy(
                        polKey.inputs, polKey.format, polKey.blockSize, polKey.overflow));
            });
        std::shared_ptr<const core::Fp8View> view;
        try {
            if (block)
                view = std::make_shared<const core::Fp8View>(core::computeFp8View(in, options));
            else if (reshow)
                view = std::make_shared<const core::Fp8View>(
                    core::fp8ViewShowingBlock(*options.previous, options.shownPercentile));
        } catch (...) {
            if (others.valid())
                others.wait(); // it writes acc and policy, which live in this frame
            throw;
        }
        if (others.valid())
            others.get();
        // The first view of a shape: the next one is made while this one is shown, in
        // memory no view has touched yet (about 10,000 page faults at 4096 x 4096, 80 ms
        // of the first slider step). Touched here once, it is ready.
        if (view && (!options.previous || options.previous->blockCount != view->blockCount))
            prefaultHeap(core::fp8ViewHeapBytes(*view));
        const auto mapRange = newMapRange(view.get(), options.previous.get(), logMaps);
        return [this, view, percentile = options.shownPercentile, acc, accKey, policy, polKey,
                mapRange] {
            if (view) {
                m_viewPercentile = percentile;
                showView(view, mapRange);
            }
            if (acc)
                showAccumulation(acc, accKey);
            if (policy)
                showPolicy(policy, polKey);
            showPartFigures();
        };
    });
}

void Fp8Tab::showView(const std::shared_ptr<const core::Fp8View>& view,
                      std::optional<std::pair<double, double>> mapRange)
{
    // A view showing another block shares the error maps of the one before it.
    const bool sameMaps =
        m_view && m_view->tensorMap == view->tensorMap && m_view->blockMap == view->blockMap;
    m_view = view;
    // A preview that arrives after its slider came to rest is followed by the exact figures.
    if (view->preview && !m_rest->moving())
        scheduleRefresh();
    if (view->normals) {
        m_normals = view->normals;
        m_normalsSeed = view->inputs.seed;
    }
    showErrorChart(*view);
    showGridChart(*view);
    if (!sameMaps)
        showHeatmap(*view, mapRange);
    // A preview keeps the maps of the last exact result, and says so.
    m_heatmap->setTitle(heatmapTitle(view->preview));
    showTable(*view);
}

void Fp8Tab::showErrorChart(const core::Fp8View& v)
{
    const std::int64_t b = v.inputs.blockSize;
    const QList<QPointF> tensorPoints = chartPoints(v.tensorPoints);
    const QList<QPointF> blockPoints = chartPoints(v.blockPoints);
    m_tensorCloud->setPoints(tensorPoints);
    m_blockCloud->setPoints(blockPoints);
    m_errBlock->setName(tr("Per 1 x %1 block").arg(b));
    const double x = static_cast<double>(v.shownRank + 1);
    QList<QPointF> ring;
    for (double e : {v.shownTensorError, v.shownBlockError})
        if (std::isfinite(e))
            ring.append({x, 100.0 * e});
    replaceIfChanged(m_errShown, ring);

    double top = 0;
    for (const QList<QPointF>* s : {&tensorPoints, &blockPoints})
        for (const QPointF& p : *s)
            top = std::max(top, p.y());
    // The scale holds still while the outlier slider moves the errors within it.
    setStickyRange(m_errorAxis, 0, top > 0 ? top * kErrorHeadroom : 1.0);
    // One spare rank on the right, so the largest block's points are not cut by the frame; the
    // axis ends there, with round ticks (a nice range cut back to it afterwards changed the
    // range twice at every step).
    const double right = static_cast<double>(v.blockCount + 1);
    setPaddedRange(m_rankAxis, 0, right, 0);
    showOutlierBand(v);
}

void Fp8Tab::showOutlierBand(const core::Fp8View& v)
{
    // The band over the outlier blocks, when they are the largest ones.
    const auto k = static_cast<double>(v.excluded.size());
    const double n = static_cast<double>(v.blockCount);
    if (v.outliersOnTop) {
        const double x0 = n - k + 0.5, x1 = n + 0.5, y1 = m_errorAxis->max();
        replaceIfChanged(m_bandTop, QList<QPointF>{{x0, y1}, {x1, y1}});
        replaceIfChanged(m_bandBottom, QList<QPointF>{{x0, 0}, {x1, 0}});
        // Named by what does not move while the outlier slider does (the count): a new name
        // lays the legend and the whole chart out again, and repaints all of it, at every step.
        m_outlierBand->setName(
            v.inputs.values ? tr("Largest block")
                            : tr("Outlier blocks (%1)")
                                  .arg(formatWhole(static_cast<std::int64_t>(v.excluded.size()))));
    }
    m_outlierBand->setVisible(v.outliersOnTop);
}

void Fp8Tab::showGridChart(const core::Fp8View& v)
{
    const auto row = [](const std::vector<float>& xs, double y) {
        QList<QPointF> out;
        out.reserve(static_cast<qsizetype>(xs.size()));
        for (float x : xs)
            if (std::isfinite(x))
                out.append({static_cast<double>(x), y});
        return out;
    };
    replaceIfChanged(m_gridTensor, row(v.tensorGrid, kTensorLine));
    replaceIfChanged(m_gridBlock, row(v.blockGrid, kOwnLine));
    replaceIfChanged(m_values, row(v.shownValues, kValuesLine));
    replaceIfChanged(m_landTensor, row(v.shownTensorDeq, kTensorLine));
    replaceIfChanged(m_landBlock, row(v.shownBlockDeq, kOwnLine));
    // The scales sit on the rows they belong to, so the legend stays short.
    const std::array<std::pair<QGraphicsSimpleTextItem*, QString>, 3> texts = {
        std::pair{m_rowNames[0].scale, tr("(scale %1)").arg(figure(v.tensorScale))},
        std::pair{m_rowNames[1].name, tr("%1 values").arg(v.shownValues.size())},
        std::pair{m_rowNames[2].scale, tr("(%1)").arg(figure(v.shownScale))}};
    for (const auto& [item, text] : texts)
        if (item->text() != text)
            item->setText(text);
    layOutRowNames();
    showGridRange(v);

    const std::int64_t cols = v.inputs.values ? v.inputs.values->cols() : v.inputs.cols;
    const std::int64_t perRow = cols / v.inputs.blockSize;
    const std::int64_t c0 = (v.shownBlock % perRow) * v.inputs.blockSize;
    const QString title = tr("One block on each grid (row %1, columns %2-%3)")
                              .arg(v.shownBlock / perRow)
                              .arg(c0)
                              .arg(c0 + v.inputs.blockSize - 1);
    m_gridChart->setTitle(title);
}

void Fp8Tab::layOutRowNames()
{
    QChart* chart = m_gridChart->chart();
    const QFont font = chartFonts().axisLabels;
    const QFontMetricsF fm(font);
    for (const RowName& r : m_rowNames)
        for (QGraphicsSimpleTextItem* item : {r.name, r.scale})
            if (item) {
                if (item->font() != font)
                    item->setFont(font);
                if (item->brush().color() != chartTextColor())
                    item->setBrush(chartTextColor());
            }
    // The row axis's labels, drawn in no colour (hideAxisLabels), hold the names'
    // room: Qt Charts lays the chart out around them. Each is changed only when its name
    // outgrows it or needs far less (a new label lays the whole chart out again).
    const QStringList held = m_rowAxis->categoriesLabels();
    for (qsizetype i = 0; i < held.size() && i < qsizetype(m_rowNames.size()); ++i) {
        const RowName& r = m_rowNames[static_cast<std::size_t>(i)];
        double room = 0;
        for (const QString& line : held[i].split("<br>"))
            room = std::max(room, fm.horizontalAdvance(line));
        double need = r.name->boundingRect().width();
        if (r.scale)
            need = std::max(need, r.scale->boundingRect().width());
        if (need > room || need < 0.7 * room)
            m_rowAxis->replaceLabel(
                held[i], r.scale ? r.name->text() + "<br>" + r.scale->text() : r.name->text());
    }
    // Each name right-aligned beside its row: one line centred on it, two lines about it.
    const QRectF plot = chart->plotArea();
    const double right = plot.left() - kRowNameGap;
    for (const RowName& r : m_rowNames) {
        const double y =
            plot.bottom() - (r.row - kRowAxisMin) / (kRowAxisMax - kRowAxisMin) * plot.height();
        const double nameTop = r.scale ? y - fm.height() : y - fm.height() / 2;
        r.name->setPos(right - r.name->boundingRect().width(), nameTop);
        if (r.scale)
            r.scale->setPos(right - r.scale->boundingRect().width(), y);
    }
}

void Fp8Tab::showGridRange(const core::Fp8View& v)
{
    // The range: the block's values, and the grid points just beyond them unless they lie far
    // out (a coarse per-tensor grid may have its next point many block-widths away).
    const auto [lo, hi] = std::minmax_element(v.shownValues.begin(), v.shownValues.end());
    double a = *lo, z = *hi;
    double span = std::max({z - a, std::abs(a), std::abs(z)});
    if (span == 0) {
        // An all-zero block: show the grid points next to zero instead.
        for (const std::vector<float>* g : {&v.tensorGrid, &v.blockGrid})
            for (float x : *g)
                span = std::max(span, std::abs(static_cast<double>(x)));
    }
    for (const std::vector<float>* g : {&v.tensorGrid, &v.blockGrid}) {
        if (g->empty())
            continue;
        a = std::min(a, std::max<double>(g->front(), *lo - kGridReach * span));
        z = std::max(z, std::min<double>(g->back(), *hi + kGridReach * span));
    }
    setRoundRange(m_valueAxis, a, z);

    // Below the smallest normal times the scale the per-tensor grid's step stops shrinking.
    const double t = static_cast<double>(core::fp8MinNormal(v.inputs.format))
        * static_cast<double>(v.tensorScale);
    constexpr double h = kZoneHalfHeight;
    replaceIfChanged(m_subnormalZone, QList<QPointF>{{-t, -h}, {-t, h}, {t, h}, {t, -h}, {-t, -h}});
}

void Fp8Tab::showHeatmap(const core::Fp8View& v, std::optional<std::pair<double, double>> mapRange)
{
    m_heatmap->left()->setTitle(tr("One scale per tensor"));
    m_heatmap->right()->setTitle(tr("One scale per 1 x %1 block").arg(v.inputs.blockSize));
    // Pooled maps are labelled with the first row and column of each cell.
    QStringList rowLabels, colLabels;
    if (v.poolRows > 1)
        for (Eigen::Index i = 0; i < v.tensorMap->rows(); ++i)
            rowLabels << QString::number(i * v.poolRows);
    if (v.poolCols > 1)
        for (Eigen::Index j = 0; j < v.tensorMap->cols(); ++j)
            colLabels << QString::number(j * v.poolCols);
    const QString x =
        v.poolCols > 1 ? tr("Column (largest of %1 per cell)").arg(v.poolCols) : tr("Column");
    const QString y =
        v.poolRows > 1 ? tr("Row (largest of %1 per cell)").arg(v.poolRows) : tr("Row");
    for (HeatmapPanel* map : {m_heatmap->left(), m_heatmap->right()}) {
        map->setRowLabels(rowLabels);
        map->setColumnLabels(colLabels);
        map->setAxisTitles(x, y);
    }
    // Only a new map is coloured again: a change that leaves the errors alone (the seed of a
    // chapter's example) gives equal ones.
    const auto same = [](const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
        return a.rows() == b.rows() && a.cols() == b.cols() && a == b;
    };
    if (same(m_heatmap->left()->matrix(), *v.tensorMap)
        && same(m_heatmap->right()->matrix(), *v.blockMap))
        return;
    // The maps are shared with the view, not copied (8 MB each at 4096 x 4096).
    m_heatmap->setMatrices(
        v.tensorMap, v.blockMap,
        mapRange ? *mapRange
                 : HeatmapPairPanel::rangeOf(*v.tensorMap, *v.blockMap, m_heatmap->logScale()));
}

void Fp8Tab::showTable(const core::Fp8View& v)
{
    QStringList notes;
    if (v.preview)
        notes << tr("<b>Preview while the slider moves:</b> figures from %1 of the %2 rows "
                    "(bands of %3 rows spread over the matrix), counts of values rounded to 0 "
                    "scaled up to the whole matrix; the error maps still show the last exact "
                    "result. The exact figures follow as soon as the slider rests.")
                     .arg(formatWhole(v.previewRows), formatWhole(v.inputs.rows))
                     .arg(core::kFp8PreviewBand);
    // The columns fit their contents (fitTableColumns): measured once, after every cell is set.
    const std::int64_t rows = v.inputs.values ? v.inputs.values->rows() : v.inputs.rows;
    const std::int64_t cols = v.inputs.values ? v.inputs.values->cols() : v.inputs.cols;
    QList<QTableWidgetItem*> edited;
    // Only the changed cells are repainted: a step of the outlier scale leaves the names and
    // scale counts as they were.
    const bool changed = editCellsInPlace(m_table, [&] {
        for (int r = 0; r < static_cast<int>(v.table.size()); ++r) {
            const core::Fp8Granularity& g = v.table[static_cast<std::size_t>(r)];
            const QString plainName = granularityName(r, v.inputs.blockSize);
            const QString about = granularityAbout(r, v.inputs.blockSize);
            const QString note = tileNote(g.tiling, rows, cols);
            QString name = plainName;
            if (!note.isEmpty()) {
                name += QStringLiteral(" *");
                notes << QStringLiteral("* %1: %2.").arg(plainName, note);
            }
            const QStringList cells = {name,
                                       g.plainCast ? tr("none") : formatWhole(g.scales),
                                       figure(g.all.rmse),
                                       figure(g.all.maxAbsError),
                                       figure(g.all.snrDb),
                                       formatWhole(g.all.underflowCount),
                                       percent(g.small.relativeError)};
            for (int c = 0; c < cells.size(); ++c)
                if (m_table->item(r, c)->text() != cells[c]) {
                    m_table->item(r, c)->setText(cells[c]);
                    edited << m_table->item(r, c);
                }
            const QString tip = note.isEmpty() ? about : about + ' ' + note + '.';
            if (m_table->item(r, 0)->toolTip() != tip)
                m_table->item(r, 0)->setToolTip(tip);
        }
        return edited;
    });
    // The header says so too, where the eye is (it has two lines already: no layout moves).
    const QString scaling = v.preview ? tr("Scaling\n(preview)") : tr("Scaling");
    QTableWidgetItem* header = m_table->horizontalHeaderItem(0);
    const bool renamed = header->text() != scaling;
    if (renamed) {
        // Quietly, and the header repainted: announced, the new text had the whole table
        // measured and repainted (1.5 ms of a first key press after a rest at 4096 x 4096).
        // The header's height stays (other columns' names have two lines already), and the
        // widths are measured again just below.
        {
            const QSignalBlocker quiet(m_table->model());
            header->setText(scaling);
        }
        m_table->horizontalHeader()->viewport()->update();
    }
    if (changed || renamed)
        fitTableColumns(edited, renamed);
    const float maxValue = core::fp8MaxValue(v.inputs.format);
    notes << tr("Plain cast: no scale, so values past ±%1 saturate (or become NaN) and values "
                "below half of %2 become 0: FP8 training needs a scaling policy, not just a cast.")
                 .arg(figure(maxValue), figure(core::fp8MinSubnormal(v.inputs.format)));
    m_tableNote->setText(notes.join(QLatin1Char(' ')));
}

void Fp8Tab::fitTableColumns(const QList<QTableWidgetItem*>& edited, bool renamed)
{
    // While a slider moves, a column keeps its width unless a new figure needs more (and then
    // only that column widens). Fitted to every step's figures, the columns changed width at
    // almost every step: the figures jumped sideways under the reader's eye, and the table and
    // its header were measured and painted again in full. At rest they fit their figures again.
    if (m_rest->moving() && !renamed && widenColumnsFor(m_table, edited)) {
        m_tableFitPending = true;
        return;
    }
    m_tableFitPending = false;
    fitColumnsToContents(m_table);
    arrangeBlockRow();
}

QHash<QString, QString> Fp8Tab::explanationValues() const
{
    QHash<QString, QString> values;
    addTrainingValues(values);
    if (!m_view)
        return values;
    const core::Fp8View& v = *m_view;
    const core::Fp8Granularity& t = v.table[kTensorRow];
    const core::Fp8Granularity& c = v.table[kChapterRow];
    // The whole-matrix figures are dominated by the outlier blocks; the small blocks' relative
    // errors are where the scaling policy shows.
    values.insert({
        {"format", formatName(v.inputs.format)},
        {"max_value", figure(core::fp8MaxValue(v.inputs.format))},
        {"block_size", formatWhole(v.inputs.blockSize)},
        {"block_rmse", figure(c.all.rmse)},
        {"tensor_rmse", figure(t.all.rmse)},
        {"block_underflow", formatWhole(c.all.underflowCount)},
        {"tensor_underflow", formatWhole(t.all.underflowCount)},
        {"tensor_scale", figure(v.tensorScale)},
        {"small_block_error", percent(c.small.relativeError)},
        {"small_tensor_error", percent(t.small.relativeError)},
    });
    return values;
}

void Fp8Tab::showFigures(const core::Fp8View& v)
{
    const core::Fp8Granularity& t = v.table[kTensorRow];
    const core::Fp8Granularity& c = v.table[kChapterRow];
    const core::Fp8Format f = v.inputs.format;
    const float maxValue = core::fp8MaxValue(f);
    const float minNormal = core::fp8MinNormal(f);
    const float minSub = core::fp8MinSubnormal(f);
    const double ratio = c.small.relativeError > 0 ? t.small.relativeError / c.small.relativeError
                                                   : std::numeric_limits<double>::infinity();
    const QString which = v.inputs.values
        ? tr("all but the block holding the largest value")
        : tr("all but the %1 outlier blocks").arg(v.excluded.size());
    const QString head =
        tr("<b>Small blocks</b> (%1): relative error <b>%2</b> with one scale per tensor, "
           "<b>%3</b> with one scale per 1 x %4 block: <b>%5x</b>. Values rounded to 0: <b>%6</b> "
           "vs <b>%7</b>.")
            .arg(which, percent(t.small.relativeError), percent(c.small.relativeError))
            .arg(v.inputs.blockSize)
            .arg(figure(ratio), formatWhole(t.small.underflowCount),
                 formatWhole(c.small.underflowCount));
    const QString scale =
        tr("Per-tensor scale = max|x| / %1 = %2 / %1 = <b>%3</b>. Values below %4 x %3 = %5 "
           "fall into %6's subnormals, where the step stays %7 x %3 = %8.")
            .arg(figure(maxValue), figure(v.tensorMax), figure(v.tensorScale),
                 powerOfTwo(minNormal),
                 figure(static_cast<double>(minNormal) * static_cast<double>(v.tensorScale)),
                 formatName(f), powerOfTwo(minSub),
                 figure(static_cast<double>(minSub) * static_cast<double>(v.tensorScale)));
    const int steps = 1 << (std::ilogb(minNormal) - std::ilogb(minSub));
    const QString lesson = ratio < 1.5
        ? tr("<i>Why so little?</i> Above %1 every binade of %2 holds the same %3 steps, so the "
             "relative step does not depend on the scale: one big scale costs a small block "
             "nothing until it pushes the block's values below %1 x scale. Try "
             "\"Outliers x10^5\".")
              .arg(powerOfTwo(minNormal), formatName(f))
              .arg(steps)
        : tr("<i>One big block sets the scale</i>, and the small blocks fall below %1 x scale, "
             "where the step no longer shrinks with the value: the grid chart shows their few "
             "coarse steps, and %2 values become 0. A scale per block keeps every block in the "
             "normal range.")
              .arg(powerOfTwo(minNormal), formatWhole(t.small.underflowCount));
    const QString preview = v.preview
        ? tr("<i>Preview from %1 of %2 rows.</i> ")
              .arg(formatWhole(v.previewRows), formatWhole(v.inputs.rows))
        : QString();
    figuresLabel()->setText(preview + head + QStringLiteral("<br>") + scale + QStringLiteral("<br>")
                            + lesson);
}

} // namespace scalelab::ui
