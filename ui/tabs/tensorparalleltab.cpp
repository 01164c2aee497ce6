#include "tensorparalleltab.h"

#include "chartpanel.h"
#include "chartstyle.h"
#include "format.h"
#include "parametercontrol.h"
#include "scalelab/core/collectives.h"
#include "shardingpanel.h"

#include <QChart>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace scalelab::ui {

namespace {

/// After this long without a result the figures say that the error is being computed.
constexpr int kSlowMs = 150;
/// The sharding picture's least height: it spans the width above the two charts.
constexpr int kPictureMinHeight = 300;
/// How far the disclosed controls (bytes, seed) are indented under their button.
constexpr int kDisclosureIndent = 12;
/// Lines of text the figures label keeps room for, and its margin in pixels.
constexpr int kFigureLines = 3;
constexpr int kFiguresMargin = 4;
/// Markers on the error chart, in pixels.
constexpr double kMarkerSize = 15;
/// Pen width of the reference lines (largest |Y|, your split), and of a precision's line when
/// the other one is chosen.
constexpr int kThinLine = 2;
/// Headroom above the largest figure on the cost chart's value axes.
constexpr double kCostHeadroom = 1.05;

/// One unit for a whole axis: bytes, kB, MB or GB (powers of 1000), or a count in
/// thousands, millions or billions.
struct UnitScale {
    double divisor;
    QString name;
};

UnitScale byteScale(double largest)
{
    if (largest >= 1e9)
        return {1e9, "GB"};
    if (largest >= 1e6)
        return {1e6, "MB"};
    if (largest >= 1e4)
        return {1e3, "kB"};
    return {1, "bytes"};
}

UnitScale countScale(double largest)
{
    if (largest >= 1e10)
        return {1e9, QObject::tr("billions")};
    if (largest >= 1e7)
        return {1e6, QObject::tr("millions")};
    if (largest >= 1e4)
        return {1e3, QObject::tr("thousands")};
    return {1, QString()};
}

/// An exact byte ratio: whole numbers as they are, others marked as rounded ("≈ 438.9").
QString ratioText(const core::Ratio& r)
{
    return r.isWhole() ? formatWhole(r.numerator)
                       : QString::fromUtf8("≈ ") + formatNumber(r.value(), 4);
}

/// setNiceRange without the transient tick storm: it sets the range before the new tick
/// interval, so growing an axis from 0..16 to 0..4096 first lays out 4096 ticks at the old
/// interval (a second of Qt Charts layout). An interval as wide as either range avoids that.
void niceRange(QValueAxis* axis, double min, double max, bool whole = false)
{
    // Asked for the same range again (most slider steps leave the y axes alone): nothing to
    // do, and setting it anyway lays the chart out again.
    const QVariant asked = QVariant::fromValue(QPointF(min, max));
    if (axis->property("scalelab_asked") == asked)
        return;
    axis->setProperty("scalelab_asked", asked);
    // Only when it would matter: resetting the interval rebuilds every tick label.
    if ((max - min) / axis->tickInterval() > 40)
        axis->setTickInterval(std::max({axis->max() - axis->min(), max - min, 1e-300}));
    // A step back to smaller data keeps the scale (the curves move, not the axis).
    setStickyRange(axis, min, max, whole);
}

/// Where a rank-count axis ends: a little past `ranks` (at least 2), so the last markers are
/// not cut by the frame.
double rankAxisEnd(double ranks)
{
    return std::max(ranks, 2.0) * 1.03;
}

/// A rank-count axis from 0 to rankAxisEnd(ranks), whole ticks at 1, 2 or 5 times a power of
/// ten, at most eight intervals. One range change per slider step: every change lays the
/// chart out again. Like a sticky value range, the axis stays while `ranks` fits in it and is
/// at least 45 % of the count it was made for: a step down and back (4, 5, 4) moves the
/// curves' end and the marker against a still axis.
void rankAxis(QValueAxis* axis, double ranks)
{
    const QVariant madeFor = axis->property("scalelab_ranksMadeFor");
    if (madeFor.isValid() && axis->min() == 0 && rankAxisEnd(ranks) <= axis->max()
        && ranks >= 0.45 * madeFor.toDouble())
        return;
    axis->setProperty("scalelab_ranksMadeFor", ranks);
    const double right = std::max(ranks, 2.0);
    double step = 1;
    for (double power = 1; right / step > 8; power *= 10)
        for (double m : {1.0, 2.0, 5.0})
            if (step = m * power; right / step <= 8)
                break;
    if (axis->tickType() != QValueAxis::TicksDynamic) {
        axis->setTickType(QValueAxis::TicksDynamic);
        axis->setTickAnchor(0);
        axis->setLabelFormat("%.0f");
    }
    // Growing: the coarser interval first, so the wider range never meets the old fine one.
    const bool coarser = step > axis->tickInterval();
    if (coarser)
        axis->setTickInterval(step);
    if (axis->min() != 0 || axis->max() != rankAxisEnd(ranks))
        axis->setRange(0, rankAxisEnd(ranks));
    if (!coarser && axis->tickInterval() != step)
        axis->setTickInterval(step);
}

/// Axis titles and series names are set only when they change: each change lays the chart
/// out again.
void setTitle(QAbstractAxis* axis, const QString& title)
{
    if (axisTitle(axis) != title)
        styleAxis(axis, title);
}

void setName(QAbstractSeries* series, const QString& name)
{
    if (series->name() != name)
        series->setName(name);
}

void setPen(QXYSeries* series, const QPen& pen)
{
    if (series->pen() != pen)
        series->setPen(pen);
}

QString scientific(double v)
{
    if (v == 0.0)
        return QObject::tr("exactly 0");
    return formatNumber(v, 3);
}

using Block = ShardingPanel::Block;
using Step = ShardingPanel::Step;
using PictureSplit = ShardingPanel::Split;

Block matrix(QString name, std::int64_t rows, std::int64_t cols, PictureSplit split,
             std::vector<std::int64_t> shards, QString note)
{
    Block b;
    b.name = std::move(name);
    b.rows = rows;
    b.cols = cols;
    b.split = split;
    b.shards = std::move(shards);
    b.note = std::move(note);
    return b;
}

/// One matrix per rank, drawn as a column of `ranks` items labelled `item` ("O%1").
Block stack(QString name, std::int64_t rows, std::int64_t cols, std::int64_t ranks, QString item,
            QString note)
{
    Block b;
    b.name = std::move(name);
    b.rows = rows;
    b.cols = cols;
    b.split = PictureSplit::Stack;
    b.items = ranks;
    b.itemLabel = std::move(item);
    b.note = std::move(note);
    return b;
}

/// × W1, GELU, × W2, = and then `last` into the output.
std::vector<Step> mlpSteps(Step last)
{
    const QString product = QString::fromUtf8("×");
    return {{Step::Kind::Text, product},
            {Step::Kind::Arrow, TensorParallelTab::tr("GELU")},
            {Step::Kind::Text, product},
            {Step::Kind::Text, "="},
            std::move(last)};
}

QString w1Name()
{
    return QString::fromUtf8("W₁");
}

QString w2Name()
{
    return QString::fromUtf8("W₂");
}

/// W1 by columns, W2 by the matching rows: each rank's partial output, one all-reduce.
ShardingPanel::Picture correctPicture(const core::TensorParallelInputs& in)
{
    using T = TensorParallelTab;
    const std::vector<std::int64_t> hidden = core::arraySplitSizes(in.dFf, in.ranks);
    const QString allReduce =
        ratioText(core::ringAllReduceBytes(in.tokens * in.dModel * in.bytesPerValue, in.ranks));
    ShardingPanel::Picture p;
    p.ranks = in.ranks;
    p.title = T::tr("W₁ by columns, W₂ by matching rows: one all-reduce");
    p.blocks = {
        matrix("X", in.tokens, in.dModel, PictureSplit::Whole, {}, T::tr("on every rank")),
        matrix(w1Name(), in.dModel, in.dFf, PictureSplit::Columns, hidden,
               T::tr("split by columns")),
        matrix(QString::fromUtf8("H"), in.tokens, in.dFf, PictureSplit::Columns, hidden,
               T::tr("each rank its own Hᵣ")),
        matrix(w2Name(), in.dFf, in.dModel, PictureSplit::Rows, hidden, T::tr("matching rows")),
        stack(QString::fromUtf8("Oᵣ = Hᵣ W₂ᵣ"), in.tokens, in.dModel, in.ranks, "O%1",
              T::tr("partial outputs")),
        matrix("Y", in.tokens, in.dModel, PictureSplit::Whole, {}, T::tr("+ b₂ once"))};
    p.steps = mlpSteps({Step::Kind::Reduce, T::tr("all-reduce")});
    p.caption =
        T::tr("Rank r keeps the W₁ columns, b₁ entries and W₂ rows of its colour and "
              "needs nobody else's until the end: the only traffic is the all-reduce "
              "of the %1 partial outputs, %2 bytes sent per rank (ring, 2(n−1)/n of "
              "%3 bytes).")
            .arg(QString::fromUtf8("%1 × %2").arg(formatWhole(in.tokens), formatWhole(in.dModel)),
                 allReduce, formatWhole(in.tokens * in.dModel * in.bytesPerValue));
    return p;
}

/// W2 by columns too: each rank can use only the diagonal block that meets its own Hᵣ.
ShardingPanel::Picture w2ByColumnsPicture(const core::TensorParallelInputs& in)
{
    using T = TensorParallelTab;
    const std::vector<std::int64_t> hidden = core::arraySplitSizes(in.dFf, in.ranks);
    const std::vector<std::int64_t> model = core::arraySplitSizes(in.dModel, in.ranks);
    Block w2 = matrix(w2Name(), in.dFf, in.dModel, PictureSplit::BlockDiagonal, hidden,
                      T::tr("split by columns"));
    w2.columnShards = model;
    ShardingPanel::Picture p;
    p.ranks = in.ranks;
    p.title = T::tr("Wrong: W₂ by columns needs all of H on every rank");
    p.blocks = {
        matrix("X", in.tokens, in.dModel, PictureSplit::Whole, {}, T::tr("on every rank")),
        matrix(w1Name(), in.dModel, in.dFf, PictureSplit::Columns, hidden,
               T::tr("split by columns")),
        matrix("H", in.tokens, in.dFf, PictureSplit::Columns, hidden, T::tr("each rank only Hᵣ")),
        w2,
        matrix(T::tr("Oᵣ side by side"), in.tokens, in.dModel, PictureSplit::Columns, model,
               T::tr("terms missing")),
        matrix(T::tr("Y (correct)"), in.tokens, in.dModel, PictureSplit::Whole, {},
               T::tr("not what came out"))};
    p.steps = mlpSteps({Step::Kind::Text, QString::fromUtf8("≠")});
    p.caption = T::tr("Rank r holds the W₂ columns of its colour but only its own Hᵣ, so it can "
                      "use only the coloured block; the hatched terms need the other ranks' "
                      "hidden values, which never arrive. Its output columns miss them.");
    return p;
}

/// W1 by rows: every rank applies GELU to a partial sum of the pre-activation.
ShardingPanel::Picture w1ByRowsPicture(const core::TensorParallelInputs& in)
{
    using T = TensorParallelTab;
    const std::vector<std::int64_t> model = core::arraySplitSizes(in.dModel, in.ranks);
    ShardingPanel::Picture p;
    p.ranks = in.ranks;
    p.title = T::tr("Wrong: W₁ by rows puts GELU on partial sums");
    p.blocks = {
        matrix("X", in.tokens, in.dModel, PictureSplit::Columns, model, T::tr("split by columns")),
        matrix(w1Name(), in.dModel, in.dFf, PictureSplit::Rows, model, T::tr("split by rows")),
        stack(QString::fromUtf8("GELU(Pᵣ)"), in.tokens, in.dFf, in.ranks, "P%1",
              T::tr("GELU of partial sums")),
        matrix(w2Name(), in.dFf, in.dModel, PictureSplit::Whole, {}, T::tr("on every rank")),
        stack(QString::fromUtf8("Oᵣ"), in.tokens, in.dModel, in.ranks, "O%1",
              T::tr("partial outputs")),
        matrix("Y", in.tokens, in.dModel, PictureSplit::Whole, {}, T::tr("is not the MLP"))};
    p.steps = mlpSteps({Step::Kind::Reduce, T::tr("all-reduce")});
    p.caption = T::tr("Rank r multiplies its columns of X by its rows of W₁: Pᵣ is a partial sum "
                      "of every pre-activation. GELU(P₀) + GELU(P₁) + … is not "
                      "GELU(P₀ + P₁ + …), so the all-reduce adds the wrong things.");
    return p;
}

} // namespace

TensorParallelTab::TensorParallelTab(document::ScenarioDocument* document, QWidget* parent)
    : Tab(document, core::Section::TensorParallel, parent)
    , m_slowTimer(new QTimer(this))
{
    setObjectName("tensor_parallel");
    m_slowTimer->setSingleShot(true);
    m_slowTimer->setInterval(kSlowMs);
    connect(m_slowTimer, &QTimer::timeout, this, [this] {
        // Until now the last figure stayed up (no flicker on quick results); say it is stale.
        if (refreshPending()) {
            m_waiting = true;
            updateFigures();
        }
    });
    buildControls();
    buildErrorChart();
    buildCostChart();
    placeCharts();
    drawFirst();
}

void TensorParallelTab::buildControls()
{
    QVBoxLayout* splitGroup = addGroup(tr("Split"));
    addControl(splitGroup, "tensor_parallel.ranks");
    auto* form = new QFormLayout;
    splitGroup->addLayout(form);
    addChoice(form, "tensor_parallel.split")->setAccessibleName(tr("How the weights are split"));
    addChoice(form, "tensor_parallel.precision")
        ->setAccessibleName(tr("Precision of the computation"));

    QVBoxLayout* sizeGroup = addGroup(tr("MLP size"));
    for (const char* key :
         {"tensor_parallel.tokens", "tensor_parallel.d_model", "tensor_parallel.d_ff"})
        addControl(sizeGroup, key);

    auto* advanced = new QWidget;
    auto* advancedBox = new QVBoxLayout(advanced);
    advancedBox->setContentsMargins(kDisclosureIndent, 0, 0, 0);
    addControl(advancedBox, "tensor_parallel.bytes_per_value");
    addControl(advancedBox, "tensor_parallel.seed");
    addDisclosure(sizeGroup, tr("Bytes and seed"), advanced, tr("Show bytes per value and seed"));
}

void TensorParallelTab::placeCharts()
{
    m_sharding = new ShardingPanel("tensor_parallel-sharding");
    m_sharding->setMinimumHeight(kPictureMinHeight);
    // The picture spans the width above the two charts: it is the lesson's centre.
    addChartRow(m_sharding, ChartRow::Above, 1);
    setCharts({m_error, m_cost});
    m_explanation = new QLabel;
    m_explanation->setObjectName("tensor_parallel.explanation");
    m_explanation->setWordWrap(true);
    m_explanation->setTextFormat(Qt::RichText);
    m_explanation->setTextInteractionFlags(Qt::TextSelectableByMouse);
    addChartRow(m_explanation, ChartRow::Below);

    figuresLabel()->setMinimumHeight(kFigureLines * figuresLabel()->fontMetrics().lineSpacing()
                                     + kFiguresMargin);
    figuresLabel()->setAlignment(Qt::AlignLeft | Qt::AlignTop);
}

void TensorParallelTab::buildErrorChart()
{
    m_error = new ChartViewPanel("tensor_parallel-error");
    QChart* chart = m_error->chart();
    chart->setTitle(tr("Sharded minus unsharded: rounding, not a mistake"));
    m_errorRanks = new QValueAxis;
    m_errorAxis = new QLogValueAxis;
    chart->addAxis(m_errorRanks, Qt::AlignBottom);
    chart->addAxis(m_errorAxis, Qt::AlignLeft);
    styleAxis(m_errorRanks, tr("Tensor-parallel ranks"));
    styleAxis(m_errorAxis, tr("Max |sharded − unsharded|"), tr("Max |difference|"));
    m_errorAxis->setLabelFormat("%.0e");

    const auto add = [&](QXYSeries* s, const QString& name) {
        s->setName(name);
        chart->addSeries(s);
        s->attachAxis(m_errorRanks);
        s->attachAxis(m_errorAxis);
    };
    m_outputLine = new QLineSeries;
    m_outputLine->setPen(QPen(palette::kBlack, kThinLine, Qt::DashLine));
    add(m_outputLine, tr("Largest |Y|"));
    m_float64 = new QLineSeries;
    m_float64->setPen(QPen(palette::kBlue, kLineWidth));
    m_float64->setPointsVisible(true);
    add(m_float64, tr("float64"));
    m_float32 = new QLineSeries;
    m_float32->setPen(QPen(palette::kOrange, kLineWidth));
    m_float32->setPointsVisible(true);
    add(m_float32, tr("float32"));
    m_wrong = new QLineSeries;
    m_wrong->setPen(QPen(palette::kVermillion, kLineWidth, Qt::DashDotLine));
    m_wrong->setPointsVisible(true);
    add(m_wrong, tr("Wrong split"));
    m_zeros = new QScatterSeries;
    m_zeros->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
    m_zeros->setMarkerSize(kMarkerSize);
    m_zeros->setColor(Qt::white);
    m_zeros->setBorderColor(palette::kBlack);
    add(m_zeros, tr("Exactly 0"));
    m_yours = new QScatterSeries;
    m_yours->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    m_yours->setMarkerSize(kMarkerSize);
    m_yours->setColor(palette::kBlack);
    m_yours->setBorderColor(Qt::white);
    add(m_yours, tr("Your split"));
}

void TensorParallelTab::buildCostChart()
{
    m_cost = new ChartViewPanel("tensor_parallel-cost");
    QChart* chart = m_cost->chart();
    chart->setTitle(tr("What the widest rank holds, computes and sends"));
    m_costRanks = new QValueAxis;
    m_bytesAxis = new QValueAxis;
    m_macAxis = new QValueAxis;
    chart->addAxis(m_costRanks, Qt::AlignBottom);
    chart->addAxis(m_bytesAxis, Qt::AlignLeft);
    chart->addAxis(m_macAxis, Qt::AlignRight);
    styleAxis(m_costRanks, tr("Tensor-parallel ranks"));
    m_macAxis->setGridLineVisible(false);

    const auto add = [&](QLineSeries* s, const QString& name, QAbstractAxis* y) {
        s->setName(name);
        chart->addSeries(s);
        s->attachAxis(m_costRanks);
        s->attachAxis(y);
    };
    m_paramBytes = new QLineSeries;
    m_paramBytes->setPen(QPen(palette::kBlue, kLineWidth));
    add(m_paramBytes, tr("Parameters"), m_bytesAxis);
    m_activationBytes = new QLineSeries;
    m_activationBytes->setPen(QPen(palette::kGreen, kLineWidth, Qt::DashLine));
    add(m_activationBytes, tr("Activations"), m_bytesAxis);
    m_allReduceBytes = new QLineSeries;
    m_allReduceBytes->setPen(QPen(palette::kVermillion, kLineWidth));
    add(m_allReduceBytes, tr("All-reduce"), m_bytesAxis);
    m_multiplyAdds = new QLineSeries;
    m_multiplyAdds->setPen(QPen(palette::kPurple, kLineWidth, Qt::DashDotLine));
    add(m_multiplyAdds, tr("Multiply-adds"), m_macAxis);
    m_costYours = new QLineSeries;
    m_costYours->setPen(QPen(palette::kBlack, kThinLine, Qt::DotLine));
    add(m_costYours, tr("Your split"), m_bytesAxis);
}

QList<ChartPanel*> TensorParallelTab::charts() const
{
    return {m_sharding, m_error, m_cost};
}

QHash<QString, QString> TensorParallelTab::explanationValues() const
{
    const core::TensorParallelInputs& in = inputs();
    const std::vector<std::int64_t> widths = core::arraySplitSizes(in.dFf, in.ranks);
    QString list;
    if (widths.size() <= 8) {
        QStringList parts;
        for (std::int64_t w : widths)
            parts << formatWhole(w);
        list = parts.join(", ");
    } else {
        // Thousands of ranks: name the two widths array_split makes and who gets which.
        const std::int64_t wider = in.dFf % in.ranks;
        list = wider == 0 ? tr("%1 each").arg(formatWhole(widths.front()))
                          : tr("%1 on ranks 0–%2, %3 on the other %4")
                                .arg(formatWhole(widths.front()))
                                .arg(wider - 1)
                                .arg(formatWhole(widths.back()))
                                .arg(formatWhole(in.ranks - wider));
    }
    const core::Ratio bytes =
        core::ringAllReduceBytes(in.tokens * in.dModel * in.bytesPerValue, in.ranks);
    return {
        {"d_ff", formatWhole(in.dFf)},
        {"ranks", formatWhole(in.ranks)},
        {"widths", list},
        {"max_difference", m_current64 ? scientific(*m_current64) : tr("(computing)")},
        // The figure of the split and precision on screen (a wrong split's error, too).
        {"shown_difference", m_current ? scientific(*m_current) : tr("(computing)")},
        {"tokens", formatWhole(in.tokens)},
        {"d_model", formatWhole(in.dModel)},
        {"allreduce_bytes", ratioText(bytes) + tr(" bytes")},
    };
}

void TensorParallelTab::recompute()
{
    m_sweep.cancel(); // whatever the worker does now is for old inputs
    try {
        core::validate(inputs());
    } catch (const core::InputError&) {
        // Supersede a computation still on its way, so its result cannot clear the message.
        computeInBackground([error = std::current_exception()]() -> std::function<void()> {
            std::rethrow_exception(error);
        });
        throw;
    }
    updatePicture();
    updateCost();
    updateExplanation();
    startErrors();
    updateFigures();
}

void TensorParallelTab::updatePicture()
{
    m_sharding->setPicture(shardingPicture(inputs(), split()));
}

ShardingPanel::Picture TensorParallelTab::shardingPicture(const core::TensorParallelInputs& in,
                                                          core::MlpSplit split)
{
    switch (split) {
    case core::MlpSplit::Correct:
        break;
    case core::MlpSplit::W2ByColumns:
        return w2ByColumnsPicture(in);
    case core::MlpSplit::W1ByRows:
        return w1ByRowsPicture(in);
    }
    return correctPicture(in);
}

void TensorParallelTab::updateCost()
{
    const core::TensorParallelInputs& in = inputs();
    const std::vector<core::TensorParallelRankCost> costs = core::widestRankCosts(in);
    double topBytes = 0, topMacs = 0;
    for (const auto& c : costs) {
        topBytes = std::max({topBytes, static_cast<double>(c.parameterBytes),
                             static_cast<double>(c.activationBytes), c.allReduceBytes.value()});
        topMacs = std::max(topMacs, static_cast<double>(c.multiplyAdds));
    }
    m_bytesUnit = byteScale(topBytes).divisor;
    m_countUnit = countScale(topMacs).divisor;
    QList<QPointF> params, acts, reduce, mults;
    params.reserve(static_cast<qsizetype>(costs.size()));
    acts.reserve(params.capacity());
    reduce.reserve(params.capacity());
    mults.reserve(params.capacity());
    for (std::size_t i = 0; i < costs.size(); ++i) {
        const auto x = static_cast<double>(i + 1);
        const core::TensorParallelRankCost& c = costs[i];
        params.append({x, static_cast<double>(c.parameterBytes) / m_bytesUnit});
        acts.append({x, static_cast<double>(c.activationBytes) / m_bytesUnit});
        reduce.append({x, c.allReduceBytes.value() / m_bytesUnit});
        mults.append({x, static_cast<double>(c.multiplyAdds) / m_countUnit});
    }
    m_paramBytes->replace(params);
    m_activationBytes->replace(acts);
    m_allReduceBytes->replace(reduce);
    m_multiplyAdds->replace(mults);
    updateCostAxes(topBytes, topMacs);
    updateCostFigures(costs.back());
}

void TensorParallelTab::updateCostAxes(double topBytes, double topMacs)
{
    const UnitScale bytes = byteScale(topBytes);
    const UnitScale macs = countScale(topMacs);
    const auto ranks = static_cast<double>(inputs().ranks);
    rankAxis(m_costRanks, ranks);
    niceRange(m_bytesAxis, 0, std::max(topBytes / bytes.divisor * kCostHeadroom, 1e-9));
    niceRange(m_macAxis, 0, std::max(topMacs / macs.divisor * kCostHeadroom, 1e-9));
    setTitle(m_bytesAxis,
             bytes.divisor == 1 ? tr("Bytes per rank")
                                : tr("Per rank (%1 = 10^%2 bytes)")
                                      .arg(bytes.name)
                                      .arg(std::lround(std::log10(bytes.divisor))));
    setTitle(m_macAxis,
             macs.name.isEmpty() ? tr("Multiply-adds per rank")
                                 : tr("Multiply-adds per rank (%1)").arg(macs.name));

    m_costYours->replace(QList<QPointF>{{ranks, 0}, {ranks, m_bytesAxis->max()}});
}

void TensorParallelTab::updateCostFigures(const core::TensorParallelRankCost& c)
{
    // The figures of the widest rank at the chosen split, the equation with today's numbers.
    const core::TensorParallelInputs& in = inputs();
    const std::vector<std::int64_t> widths = core::arraySplitSizes(in.dFf, in.ranks);
    const QString split = widths.front() == widths.back()
        ? tr("%1 hidden columns each").arg(formatWhole(widths.front()))
        : tr("%1 or %2 hidden columns (the first %3 ranks one wider)")
              .arg(formatWhole(widths.front()), formatWhole(widths.back()))
              .arg(in.dFf % in.ranks);
    m_costFigures =
        tr("<b>%10</b>, %2. Rank 0 holds <b>%3 parameters</b> (%4 bytes), does <b>%5 "
           "multiply-adds</b>, keeps %6 bytes of activations, sends 2(%1−1)/%1 × %7 = "
           "<b>%8 bytes</b> (all-reduce of its %9 partial output).")
            .arg(formatWhole(in.ranks), split, formatWhole(c.parameters),
                 formatWhole(c.parameterBytes), formatWhole(c.multiplyAdds),
                 formatWhole(c.activationBytes),
                 formatWhole(in.tokens * in.dModel * in.bytesPerValue), ratioText(c.allReduceBytes),
                 QString::fromUtf8("%1 × %2").arg(formatWhole(in.tokens), formatWhole(in.dModel)))
            .arg(countText(tr("%1 rank(s)", nullptr, pluralChoice(in.ranks)), in.ranks));
}

void TensorParallelTab::startErrors()
{
    const TensorParallelSweep::Job job = m_sweep.request(inputs(), split());
    std::function<std::function<void()>()> work = [this, job]() -> std::function<void()> {
        std::optional<ErrorSweep> errors = job.run();
        if (!errors)
            return [] {
            };
        return [this, generation = job.generation(), errors = std::move(*errors)]() mutable {
            if (m_sweep.isCurrent(generation)) // not overtaken by a result computed in place
                showErrors(std::move(errors));
        };
    };
    if (job.runsInline()) {
        // A fraction of a millisecond: done here, with no thread hop and nothing pending.
        work()();
        return;
    }
    m_slowTimer->start();
    computeInBackground(std::move(work));
}

void TensorParallelTab::showErrors(ErrorSweep errors)
{
    m_slowTimer->stop();
    m_waiting = false;
    m_errors = std::move(errors);
    const std::int64_t ranks = inputs().ranks;
    m_current = liveDifference(m_errors.samples, ranks, float32());
    m_current64.reset();
    for (const ErrorSample& s : m_errors.samples)
        if (s.ranks == ranks)
            m_current64 = s.float64;

    const ErrorAxis axis = errorAxis(m_errors.samples, m_errors.outputMagnitude);
    if (m_errorAxis->base() != axis.base)
        m_errorAxis->setBase(axis.base);
    if (m_errorAxis->min() != axis.min || m_errorAxis->max() != axis.max)
        m_errorAxis->setRange(axis.min, axis.max);
    showErrorSeries(axis.zeroAt);
    updateFigures();
}

void TensorParallelTab::showErrorSeries(double zeroAt)
{
    QList<QPointF> p64, p32, wrong, zeros;
    for (const ErrorSample& s : m_errors.samples) {
        const auto x = static_cast<double>(s.ranks);
        for (auto [value, list] : {std::pair{s.float64, &p64}, std::pair{s.float32, &p32}}) {
            if (value > 0)
                list->append({x, value});
            else
                zeros.append({x, zeroAt});
        }
        if (s.wrong) {
            if (*s.wrong > 0)
                wrong.append({x, *s.wrong});
            else
                zeros.append({x, zeroAt});
        }
    }
    m_float64->replace(p64);
    m_float32->replace(p32);
    m_wrong->replace(wrong);
    m_zeros->replace(zeros);
    const auto ranks = static_cast<double>(inputs().ranks);
    const double size = m_errors.outputMagnitude;
    rankAxis(m_errorRanks, ranks);
    // The line keeps its legend entry, "Largest |Y|", without the value (the figures line gives
    // it): a legend entry that changes lays the whole chart out again, two fifths of a step of the
    // tokens slider.
    const QList<QPointF> outputLine = {{0, size}, {m_errorRanks->max(), size}};
    if (m_outputLine->points() != outputLine)
        m_outputLine->replace(outputLine);
    if (m_current)
        m_yours->replace(QList<QPointF>{{ranks, *m_current > 0 ? *m_current : zeroAt}});
    else
        m_yours->clear();
    styleErrorSeries(!zeros.isEmpty());
}

void TensorParallelTab::styleErrorSeries(bool zerosShown)
{
    // Only the series that mean something now are in the legend.
    const core::MlpSplit mode = split();
    const bool wrongSplit = mode != core::MlpSplit::Correct;
    if (m_wrong->isVisible() != wrongSplit)
        m_wrong->setVisible(wrongSplit);
    setName(m_wrong,
            mode == core::MlpSplit::W2ByColumns ? tr("Wrong: W₂ cols") : tr("Wrong: W₁ rows"));
    if (m_zeros->isVisible() != zerosShown)
        m_zeros->setVisible(zerosShown);
    // The chosen precision's line is drawn bolder.
    const int chosen = kLineWidth + 1;
    setPen(m_float64, QPen(palette::kBlue, !float32() && !wrongSplit ? chosen : kThinLine));
    setPen(m_float32, QPen(palette::kOrange, float32() && !wrongSplit ? chosen : kThinLine));
}

void TensorParallelTab::updateFigures()
{
    QString error;
    const QString equation = QString::fromUtf8(
        "<b>Σ<sub>r</sub> GELU(X W1<sub>r</sub> + b1<sub>r</sub>) W2<sub>r</sub> = "
        "GELU(X W1 + b1) W2</b>");
    const QString precision = float32() ? "float32" : "float64";
    const double size = m_errors.outputMagnitude;
    if (m_waiting || !m_current) {
        error = tr("max |sharded − unsharded|: <i>computing for %1…</i>")
                    .arg(countText(tr("%1 rank(s)", nullptr, pluralChoice(inputs().ranks)),
                                   inputs().ranks));
    } else if (split() != core::MlpSplit::Correct) {
        error = tr("<b>Wrong split</b>: max |difference| = <b>%1</b> (float64), %2% of the "
                   "largest |output| %3.")
                    .arg(scientific(*m_current))
                    .arg(formatNumber(100.0 * *m_current / std::max(size, 1e-300)))
                    .arg(formatNumber(size));
    } else {
        error = tr("max |sharded − unsharded| = <b>%1</b> in %2 (largest |output| %3).")
                    .arg(scientific(*m_current), precision, formatNumber(size));
    }
    // Two lines, the error and the cost; the label keeps room for three, so a longer number
    // does not resize (and re-lay out) the charts under it on every slider step.
    const QString text = equation + " &nbsp;·&nbsp; " + error + "<br>" + m_costFigures;
    if (figuresLabel()->text() != text)
        figuresLabel()->setText(text);
}

void TensorParallelTab::updateExplanation()
{
    QString text;
    switch (split()) {
    case core::MlpSplit::Correct:
        text = tr("<b>Why the split is exact.</b> A column shard of W1 gives a rank whole "
                  "hidden features, and GELU acts on each feature by itself; W2's matching "
                  "rows give a partial output of full width, and the all-reduce adds them: "
                  "Σ<sub>r</sub> H<sub>r</sub> W2<sub>r</sub> = H W2. The error left is "
                  "rounding from adding in another order. Choose a wrong split to compare.");
        break;
    case core::MlpSplit::W2ByColumns:
        text = tr("<b>Wrong split: W2 by columns.</b> Every output column needs every hidden "
                  "feature. A rank that holds columns of W2 but only its own H<sub>r</sub> "
                  "adds just its share; the other ranks' terms (hatched) never arrive, so the "
                  "error is as large as the output itself (with one rank nothing is missing). "
                  "Repairing it means gathering all of H, tokens × d_ff values, on every rank; "
                  "the matching row split only all-reduces the tokens × d_model output.");
        break;
    case core::MlpSplit::W1ByRows:
        text = tr("<b>Wrong split: W1 by rows.</b> Each rank then holds a partial sum of every "
                  "pre-activation, and GELU is not linear: GELU(a + b) ≠ GELU(a) + GELU(b). "
                  "Applied before the partial sums are added, it gives wrong hidden values that "
                  "no later sum can repair. Only the column split hands each rank whole "
                  "features, so only it survives the nonlinearity.");
        break;
    }
    m_explanation->setText(text);
}

} // namespace scalelab::ui
