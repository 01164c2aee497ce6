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
#include <QSignalBlocker>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

namespace scalelab::ui {

namespace {

/// Work the error chart may spend on its samples, in float64 multiply-adds (float32 counts
/// half): about a second and a half on one core of a plain x86-64 build.
constexpr double kErrorBudget = 1.2e10;
/// What one shard costs beyond its multiply-adds (allocations, small products), in the same
/// unit: thousands of one-column shards are not free.
constexpr double kShardOverhead = 4e4;
/// Weights larger than this many values are not kept between requests (memory over speed).
constexpr double kKeepValues = 16e6;
/// Work below this (float64 multiply-adds) is done on the GUI thread: well under a
/// millisecond, cheaper than handing it to the worker and back.
constexpr double kInlineWork = 2e6;
/// After this long without a result the figures say that the error is being computed.
constexpr int kSlowMs = 150;

struct Prepared {
    core::MlpWeights w;
    core::MlpWeightsF f;
    Eigen::MatrixXd y64;
    Eigen::MatrixXf y32;
    double outputMagnitude = 0;
};

struct Key {
    std::int64_t tokens = 0, dModel = 0, dFf = 0, seed = 0;
    friend bool operator==(const Key&, const Key&) = default;
};

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
    setNiceRange(axis, min, max, whole);
}

/// A rank-count axis from 0 to a little past `ranks` (so the last markers are not cut by the
/// frame), whole ticks at 1, 2 or 5 times a power of ten, at most eight intervals. One range
/// change per slider step: every change lays the chart out again.
void rankAxis(QValueAxis* axis, double ranks)
{
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
    if (axis->min() != 0 || axis->max() != right * 1.03)
        axis->setRange(0, right * 1.03);
    if (!coarser && axis->tickInterval() != step)
        axis->setTickInterval(step);
}

/// Axis titles and series names are set only when they change: each change lays the chart
/// out again.
void setTitle(QAbstractAxis* axis, const QString& title)
{
    if (axis->titleText() != title)
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

core::WrongSplit toCore(TensorParallelTab::SplitMode mode)
{
    return mode == TensorParallelTab::SplitMode::W2ByColumns ? core::WrongSplit::W2ByColumns
                                                             : core::WrongSplit::W1ByRows;
}

} // namespace

/// Shared by the GUI thread and the worker: what has been computed for one set of weights.
struct TensorParallelTab::Store {
    explicit Store(Key k)
        : key(k)
    {
    }
    const Key key;
    std::mutex mutex;
    std::shared_ptr<const Prepared> prepared;
    std::map<std::int64_t, double> float64, float32, w2ByColumns, w1ByRows;
};

TensorParallelTab::TensorParallelTab(QWidget* parent)
    : Tab(parent)
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

    m_sharding = new ShardingPanel("tensor_parallel-sharding");
    m_sharding->setMinimumHeight(300);
    buildErrorChart();
    buildCostChart();
    // The picture spans the width above the two charts: it is the lesson's centre.
    chartsColumn()->insertWidget(1, m_sharding, 1);
    setCharts({m_error, m_cost});
    m_explanation = new QLabel;
    m_explanation->setObjectName("tensor_parallel.explanation");
    m_explanation->setWordWrap(true);
    m_explanation->setTextFormat(Qt::RichText);
    m_explanation->setTextInteractionFlags(Qt::TextSelectableByMouse);
    chartsColumn()->insertWidget(chartsColumn()->count() - 1, m_explanation);

    figuresLabel()->setMinimumHeight(3 * figuresLabel()->fontMetrics().lineSpacing() + 4);
    figuresLabel()->setAlignment(Qt::AlignLeft | Qt::AlignTop);

    setScenario(core::Scenario{});
    refreshNow();
}

TensorParallelTab::~TensorParallelTab()
{
    // A computation still running stops at its next check instead of finishing for nobody.
    if (m_cancel)
        m_cancel->store(true);
}

void TensorParallelTab::buildControls()
{
    using Scale = ParameterSpec::Scale;
    const core::TensorParallelInputs d;

    QVBoxLayout* splitBox = addGroup(tr("Split"));
    addControl(splitBox,
               makeSpec("tensor_parallel.ranks", tr("&Ranks"), "n", tr("ranks"),
                        tr("Tensor-parallel ranks: W1's columns and W2's rows are cut into this "
                           "many shards, the first d_ff mod n one column wider."),
                        1, static_cast<double>(d.dFf)),
               static_cast<double>(d.ranks));
    auto* form = new QFormLayout;
    m_splitBox = new QComboBox;
    m_splitBox->setObjectName("tensor_parallel.split");
    m_splitBox->setAccessibleName(tr("How the weights are split"));
    m_splitBox->addItem(tr("Correct: W1 cols, W2 rows"));
    m_splitBox->addItem(tr("Wrong: W2 by columns"));
    m_splitBox->addItem(tr("Wrong: W1 by rows"));
    form->addRow(tr("&Split"), m_splitBox);
    m_precisionBox = new QComboBox;
    m_precisionBox->setObjectName("tensor_parallel.precision");
    m_precisionBox->setAccessibleName(tr("Precision of the computation"));
    m_precisionBox->addItem(tr("float64"));
    m_precisionBox->addItem(tr("float32"));
    form->addRow(tr("&Precision"), m_precisionBox);
    splitBox->addLayout(form);
    connect(m_splitBox, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_split = static_cast<SplitMode>(std::clamp(i, 0, 2));
        inputEdited();
    });
    connect(m_precisionBox, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_precision = i == 1 ? Precision::Float32 : Precision::Float64;
        inputEdited();
    });

    QVBoxLayout* sizeBox = addGroup(tr("MLP size"));
    addControl(sizeBox,
               makeSpec("tensor_parallel.tokens", tr("&Tokens"), "T", tr("tokens"),
                        tr("Rows of X: tokens in the batch (batch x sequence)."), 1, 4096,
                        Scale::Log),
               static_cast<double>(d.tokens));
    addControl(sizeBox,
               makeSpec("tensor_parallel.d_model", tr("&Model width"), "d_model", tr("features"),
                        tr("Columns of X and of the output."), 1, 8192, Scale::Log),
               static_cast<double>(d.dModel));
    addControl(sizeBox,
               makeSpec("tensor_parallel.d_ff", tr("&Hidden width"), "d_ff", tr("features"),
                        tr("Width of the hidden layer H, the dimension that is split."), 1, 32768,
                        Scale::Log),
               static_cast<double>(d.dFf));

    auto* advanced = new QWidget;
    auto* advancedBox = new QVBoxLayout(advanced);
    advancedBox->setContentsMargins(12, 0, 0, 0);
    addControl(advancedBox,
               makeSpec("tensor_parallel.bytes_per_value", tr("&Bytes per value"), "", tr("bytes"),
                        tr("Size of each communicated and stored value (bf16: 2). The error "
                           "chart computes in float64 and float32 regardless."),
                        1, 8),
               static_cast<double>(d.bytesPerValue));
    addControl(advancedBox,
               makeSpec("tensor_parallel.seed", tr("S&eed"), "", "",
                        tr("Seed of the random X and weights."), 0, 9999),
               static_cast<double>(d.seed));
    addDisclosure(sizeBox, tr("Bytes and seed"), advanced, tr("Show bytes per value and seed"));
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
    styleAxis(m_errorAxis, tr("Max |sharded − unsharded|"));
    m_errorAxis->setLabelFormat("%.0e");

    const auto add = [&](QXYSeries* s, const QString& name) {
        s->setName(name);
        chart->addSeries(s);
        s->attachAxis(m_errorRanks);
        s->attachAxis(m_errorAxis);
    };
    m_outputLine = new QLineSeries;
    m_outputLine->setPen(QPen(palette::kBlack, 2, Qt::DashLine));
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
    m_zeros->setMarkerSize(15);
    m_zeros->setColor(Qt::white);
    m_zeros->setBorderColor(palette::kBlack);
    add(m_zeros, tr("Exactly 0"));
    m_yours = new QScatterSeries;
    m_yours->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    m_yours->setMarkerSize(15);
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
    m_costYours->setPen(QPen(palette::kBlack, 2, Qt::DotLine));
    add(m_costYours, tr("Your split"), m_bytesAxis);
}

QList<ChartPanel*> TensorParallelTab::charts() const
{
    return {m_sharding, m_error, m_cost};
}

void TensorParallelTab::setScenario(const core::Scenario& scenario)
{
    const core::TensorParallelInputs& t = scenario.tensorParallel;
    const std::pair<const char*, std::int64_t> values[] = {
        {"tensor_parallel.tokens", t.tokens},
        {"tensor_parallel.d_model", t.dModel},
        {"tensor_parallel.d_ff", t.dFf},
        {"tensor_parallel.bytes_per_value", t.bytesPerValue},
        {"tensor_parallel.seed", t.seed}};
    for (const auto& [key, value] : values)
        loadValue(control(key), static_cast<double>(value));
    ParameterControl* ranks = control("tensor_parallel.ranks");
    {
        const QSignalBlocker block(ranks);
        ranks->setRange(1, static_cast<double>(std::max<std::int64_t>(t.dFf, 1)));
    }
    loadValue(ranks, static_cast<double>(t.ranks));
    readControls();
    scheduleRefresh();
}

void TensorParallelTab::writeScenario(core::Scenario& scenario) const
{
    scenario.tensorParallel = m_inputs;
}

QHash<QString, QString> TensorParallelTab::explanationValues() const
{
    const core::TensorParallelInputs& in = m_inputs;
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
        {"tokens", formatWhole(in.tokens)},
        {"d_model", formatWhole(in.dModel)},
        {"allreduce_bytes", ratioText(bytes) + tr(" bytes")},
    };
}

void TensorParallelTab::readControls()
{
    const auto whole = [this](const char* key) {
        return control(key)->wholeValue();
    };
    // Ranks may not pass the hidden width: its range follows d_ff.
    ParameterControl* ranks = control("tensor_parallel.ranks");
    const double dFf = control("tensor_parallel.d_ff")->value();
    if (ranks->spec().maximum != dFf) {
        const QSignalBlocker block(ranks);
        ranks->setRange(1, dFf);
    }
    m_inputs.tokens = whole("tensor_parallel.tokens");
    m_inputs.dModel = whole("tensor_parallel.d_model");
    m_inputs.dFf = whole("tensor_parallel.d_ff");
    m_inputs.ranks = whole("tensor_parallel.ranks");
    m_inputs.bytesPerValue = whole("tensor_parallel.bytes_per_value");
    m_inputs.seed = whole("tensor_parallel.seed");
}

void TensorParallelTab::recompute()
{
    if (m_cancel)
        m_cancel->store(true); // whatever the worker does now is for old inputs
    try {
        core::validate(m_inputs);
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
    m_sharding->setPicture(shardingPicture(m_inputs, m_split));
}

ShardingPanel::Picture TensorParallelTab::shardingPicture(const core::TensorParallelInputs& in,
                                                          SplitMode mode)
{
    using Split = ShardingPanel::Split;
    using Step = ShardingPanel::Step;
    const std::vector<std::int64_t> hidden = core::arraySplitSizes(in.dFf, in.ranks);
    const std::vector<std::int64_t> model = core::arraySplitSizes(in.dModel, in.ranks);
    const QString w1 = QString::fromUtf8("W₁"), w2 = QString::fromUtf8("W₂");

    ShardingPanel::Picture p;
    p.ranks = in.ranks;
    const auto block = [](QString name, std::int64_t rows, std::int64_t cols, Split split,
                          std::vector<std::int64_t> shards, QString note) {
        ShardingPanel::Block b;
        b.name = std::move(name);
        b.rows = rows;
        b.cols = cols;
        b.split = split;
        b.shards = std::move(shards);
        b.note = std::move(note);
        return b;
    };
    const auto stack = [&in](QString name, std::int64_t rows, std::int64_t cols, QString item,
                             QString note) {
        ShardingPanel::Block b;
        b.name = std::move(name);
        b.rows = rows;
        b.cols = cols;
        b.split = Split::Stack;
        b.items = in.ranks;
        b.itemLabel = std::move(item);
        b.note = std::move(note);
        return b;
    };
    const QString allReduce =
        ratioText(core::ringAllReduceBytes(in.tokens * in.dModel * in.bytesPerValue, in.ranks));
    const QString product = QString::fromUtf8("×");

    switch (mode) {
    case SplitMode::Matching:
        p.title = tr("W₁ by columns, W₂ by matching rows: one all-reduce");
        p.blocks = {block("X", in.tokens, in.dModel, Split::Whole, {}, tr("on every rank")),
                    block(w1, in.dModel, in.dFf, Split::Columns, hidden, tr("split by columns")),
                    block(QString::fromUtf8("H"), in.tokens, in.dFf, Split::Columns, hidden,
                          tr("each rank its own Hᵣ")),
                    block(w2, in.dFf, in.dModel, Split::Rows, hidden, tr("matching rows")),
                    stack(QString::fromUtf8("Oᵣ = Hᵣ W₂ᵣ"), in.tokens, in.dModel, "O%1",
                          tr("partial outputs")),
                    block("Y", in.tokens, in.dModel, Split::Whole, {}, tr("+ b₂ once"))};
        p.steps = {{Step::Kind::Text, product},
                   {Step::Kind::Arrow, tr("GELU")},
                   {Step::Kind::Text, product},
                   {Step::Kind::Text, "="},
                   {Step::Kind::Reduce, tr("all-reduce")}};
        p.caption = tr("Rank r keeps the W₁ columns, b₁ entries and W₂ rows of its colour and "
                       "needs nobody else's until the end: the only traffic is the all-reduce "
                       "of the %1 partial outputs, %2 bytes sent per rank (ring, 2(n−1)/n of "
                       "%3 bytes).")
                        .arg(QString::fromUtf8("%1 × %2").arg(formatWhole(in.tokens),
                                                              formatWhole(in.dModel)),
                             allReduce, formatWhole(in.tokens * in.dModel * in.bytesPerValue));
        break;
    case SplitMode::W2ByColumns: {
        ShardingPanel::Block w2Block =
            block(w2, in.dFf, in.dModel, Split::BlockDiagonal, hidden, tr("split by columns"));
        w2Block.columnShards = model;
        p.title = tr("Wrong: W₂ by columns needs all of H on every rank");
        p.blocks = {block("X", in.tokens, in.dModel, Split::Whole, {}, tr("on every rank")),
                    block(w1, in.dModel, in.dFf, Split::Columns, hidden, tr("split by columns")),
                    block("H", in.tokens, in.dFf, Split::Columns, hidden, tr("each rank only Hᵣ")),
                    w2Block,
                    block(tr("Oᵣ side by side"), in.tokens, in.dModel, Split::Columns, model,
                          tr("terms missing")),
                    block(tr("Y (correct)"), in.tokens, in.dModel, Split::Whole, {},
                          tr("not what came out"))};
        p.steps = {{Step::Kind::Text, product},
                   {Step::Kind::Arrow, tr("GELU")},
                   {Step::Kind::Text, product},
                   {Step::Kind::Text, "="},
                   {Step::Kind::Text, QString::fromUtf8("≠")}};
        p.caption = tr("Rank r holds the W₂ columns of its colour but only its own Hᵣ, so it can "
                       "use only the coloured block; the hatched terms need the other ranks' "
                       "hidden values, which never arrive. Its output columns miss them.");
        break;
    }
    case SplitMode::W1ByRows:
        p.title = tr("Wrong: W₁ by rows puts GELU on partial sums");
        p.blocks = {
            block("X", in.tokens, in.dModel, Split::Columns, model, tr("split by columns")),
            block(w1, in.dModel, in.dFf, Split::Rows, model, tr("split by rows")),
            stack(QString::fromUtf8("GELU(Pᵣ)"), in.tokens, in.dFf, "P%1",
                  tr("GELU of partial sums")),
            block(w2, in.dFf, in.dModel, Split::Whole, {}, tr("on every rank")),
            stack(QString::fromUtf8("Oᵣ"), in.tokens, in.dModel, "O%1", tr("partial outputs")),
            block("Y", in.tokens, in.dModel, Split::Whole, {}, tr("is not the MLP"))};
        p.steps = {{Step::Kind::Text, product},
                   {Step::Kind::Arrow, tr("GELU")},
                   {Step::Kind::Text, product},
                   {Step::Kind::Text, "="},
                   {Step::Kind::Reduce, tr("all-reduce")}};
        p.caption = tr("Rank r multiplies its columns of X by its rows of W₁: Pᵣ is a partial sum "
                       "of every pre-activation. GELU(P₀) + GELU(P₁) + … is not "
                       "GELU(P₀ + P₁ + …), so the all-reduce adds the wrong things.");
        break;
    }
    return p;
}

void TensorParallelTab::updateCost()
{
    const core::TensorParallelInputs& in = m_inputs;
    const std::vector<core::TensorParallelRankCost> costs = core::widestRankCosts(in);
    double topBytes = 0, topMacs = 0;
    for (const auto& c : costs) {
        topBytes = std::max({topBytes, static_cast<double>(c.parameterBytes),
                             static_cast<double>(c.activationBytes), c.allReduceBytes.value()});
        topMacs = std::max(topMacs, static_cast<double>(c.multiplyAdds));
    }
    const UnitScale bytes = byteScale(topBytes);
    const UnitScale macs = countScale(topMacs);
    m_bytesUnit = bytes.divisor;
    m_countUnit = macs.divisor;
    QList<QPointF> params, acts, reduce, mults;
    params.reserve(static_cast<qsizetype>(costs.size()));
    acts.reserve(params.capacity());
    reduce.reserve(params.capacity());
    mults.reserve(params.capacity());
    for (std::size_t i = 0; i < costs.size(); ++i) {
        const auto x = static_cast<double>(i + 1);
        const core::TensorParallelRankCost& c = costs[i];
        params.append({x, static_cast<double>(c.parameterBytes) / bytes.divisor});
        acts.append({x, static_cast<double>(c.activationBytes) / bytes.divisor});
        reduce.append({x, c.allReduceBytes.value() / bytes.divisor});
        mults.append({x, static_cast<double>(c.multiplyAdds) / macs.divisor});
    }
    m_paramBytes->replace(params);
    m_activationBytes->replace(acts);
    m_allReduceBytes->replace(reduce);
    m_multiplyAdds->replace(mults);

    const auto ranks = static_cast<double>(in.ranks);
    rankAxis(m_costRanks, ranks);
    niceRange(m_bytesAxis, 0, std::max(topBytes / bytes.divisor * 1.05, 1e-9));
    niceRange(m_macAxis, 0, std::max(topMacs / macs.divisor * 1.05, 1e-9));
    setTitle(m_bytesAxis,
             bytes.divisor == 1 ? tr("Bytes per rank")
                                : tr("Per rank (%1 = 10^%2 bytes)")
                                      .arg(bytes.name)
                                      .arg(std::lround(std::log10(bytes.divisor))));
    setTitle(m_macAxis,
             macs.name.isEmpty() ? tr("Multiply-adds per rank")
                                 : tr("Multiply-adds per rank (%1)").arg(macs.name));

    m_costYours->replace(QList<QPointF>{{ranks, 0}, {ranks, m_bytesAxis->max()}});

    // The figures of the widest rank at the chosen split, the equation with today's numbers.
    const core::TensorParallelRankCost c = costs.back();
    const std::vector<std::int64_t> widths = core::arraySplitSizes(in.dFf, in.ranks);
    const QString split = widths.front() == widths.back()
        ? tr("%1 hidden columns each").arg(formatWhole(widths.front()))
        : tr("%1 or %2 hidden columns (the first %3 ranks one wider)")
              .arg(formatWhole(widths.front()), formatWhole(widths.back()))
              .arg(in.dFf % in.ranks);
    m_costFigures =
        tr("<b>%1 ranks</b>, %2. Rank 0 holds <b>%3 parameters</b> (%4 bytes), does <b>%5 "
           "multiply-adds</b>, keeps %6 bytes of activations, sends 2(%1−1)/%1 × %7 = "
           "<b>%8 bytes</b> (all-reduce of its %9 partial output).")
            .arg(formatWhole(in.ranks), split, formatWhole(c.parameters),
                 formatWhole(c.parameterBytes), formatWhole(c.multiplyAdds),
                 formatWhole(c.activationBytes),
                 formatWhole(in.tokens * in.dModel * in.bytesPerValue), ratioText(c.allReduceBytes),
                 QString::fromUtf8("%1 × %2").arg(formatWhole(in.tokens), formatWhole(in.dModel)));
}

std::int64_t TensorParallelTab::maxSamples() const
{
    const double m = static_cast<double>(m_inputs.tokens) * static_cast<double>(m_inputs.dModel)
        * static_cast<double>(m_inputs.dFf);
    const auto shards = static_cast<double>(m_inputs.ranks) * kShardOverhead;
    // Per rank count: both layers in float64 (2m) and float32 (worth m), plus a wrong split.
    double perSample = 3 * m + 2 * shards;
    if (m_split == SplitMode::W2ByColumns)
        perSample += m + shards;
    else if (m_split == SplitMode::W1ByRows)
        perSample += 2 * m + shards;
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(kErrorBudget / perSample), 3, 64);
}

void TensorParallelTab::startErrors()
{
    const core::TensorParallelInputs in = m_inputs;
    const Key key{in.tokens, in.dModel, in.dFf, in.seed};
    if (!m_store || !(m_store->key == key))
        m_store = std::make_shared<Store>(key);
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    // The current rank count first, so a request cut short still leaves the live figure.
    std::vector<std::int64_t> counts = core::sampleRankCounts(in.ranks, maxSamples());
    std::vector<std::int64_t> order = {in.ranks};
    for (std::int64_t n : counts)
        if (n != in.ranks)
            order.push_back(n);
    const SplitMode split = m_split;
    const quint64 generation = ++m_generation;

    // The work still to do, in float64 multiply-adds (float32 counts half); what is known
    // for these weights is not computed again.
    const double m = static_cast<double>(in.tokens) * static_cast<double>(in.dModel)
        * static_cast<double>(in.dFf);
    double missing = 0;
    {
        const std::lock_guard lock(m_store->mutex);
        if (!m_store->prepared)
            missing += 2.5 * m;
        const auto* wrong = split == SplitMode::W2ByColumns
            ? &m_store->w2ByColumns
            : (split == SplitMode::W1ByRows ? &m_store->w1ByRows : nullptr);
        for (std::int64_t n : counts) {
            const double shards = static_cast<double>(n) * kShardOverhead;
            missing += m_store->float64.count(n) ? 0.0 : 2 * m + shards;
            missing += m_store->float32.count(n) ? 0.0 : m + shards;
            if (wrong && !wrong->count(n))
                missing += (split == SplitMode::W2ByColumns ? m : 2 * m) + shards;
        }
    }

    std::function<std::function<void()>()> work = [this, store = m_store, cancel = m_cancel, in,
                                                   counts, order, split,
                                                   generation]() -> std::function<void()> {
        const auto stopped = [&cancel] {
            return cancel->load(std::memory_order_relaxed);
        };
        const auto noop = [] {
        };
        std::shared_ptr<const Prepared> prep;
        {
            const std::lock_guard lock(store->mutex);
            prep = store->prepared;
        }
        if (!prep) {
            auto fresh = std::make_shared<Prepared>();
            fresh->w = core::makeMlpWeights(in.tokens, in.dModel, in.dFf,
                                            static_cast<std::uint64_t>(in.seed));
            fresh->f = core::toFloat(fresh->w);
            if (stopped())
                return noop;
            fresh->y64 = core::mlp(fresh->w);
            if (stopped())
                return noop;
            fresh->y32 = core::mlp(fresh->f);
            fresh->outputMagnitude = fresh->y64.cwiseAbs().maxCoeff();
            prep = fresh;
            {
                // Kept even when cancelled now: the next request for these weights starts here.
                const std::lock_guard lock(store->mutex);
                store->prepared = prep;
            }
            if (stopped())
                return noop;
        }
        const auto known = [&store](const std::map<std::int64_t, double>& map, std::int64_t n) {
            const std::lock_guard lock(store->mutex);
            return map.count(n) > 0;
        };
        const auto keep = [&store](std::map<std::int64_t, double>& map, std::int64_t n, double v) {
            const std::lock_guard lock(store->mutex);
            map[n] = v;
        };
        std::map<std::int64_t, double>* wrongMap = split == SplitMode::W2ByColumns
            ? &store->w2ByColumns
            : (split == SplitMode::W1ByRows ? &store->w1ByRows : nullptr);
        for (std::int64_t n : order) {
            // Each figure is the same computation `scalelab report` makes for that rank count.
            if (!known(store->float64, n)) {
                keep(store->float64, n,
                     core::maxAbsDifference(core::tensorParallelMlp(prep->w, n), prep->y64));
                if (stopped())
                    return noop;
            }
            if (!known(store->float32, n)) {
                keep(store->float32, n,
                     core::maxAbsDifference(core::tensorParallelMlp(prep->f, n), prep->y32));
                if (stopped())
                    return noop;
            }
            if (wrongMap && !known(*wrongMap, n)) {
                keep(*wrongMap, n,
                     core::maxAbsDifference(core::wrongSplitMlp(prep->w, n, toCore(split)),
                                            prep->y64));
                if (stopped())
                    return noop;
            }
        }
        std::vector<ErrorSample> samples;
        {
            const std::lock_guard lock(store->mutex);
            for (std::int64_t n : counts) {
                ErrorSample s;
                s.ranks = n;
                s.float64 = store->float64.at(n);
                s.float32 = store->float32.at(n);
                if (wrongMap)
                    s.wrong = wrongMap->at(n);
                samples.push_back(s);
            }
            const double values =
                static_cast<double>(in.dFf) * static_cast<double>(in.tokens + 2 * in.dModel);
            if (values > kKeepValues)
                store->prepared.reset(); // large weights are rebuilt rather than kept
        }
        return [this, generation, samples = std::move(samples),
                size = prep->outputMagnitude]() mutable {
            if (generation == m_generation) // not overtaken by a result computed in place
                showErrors(std::move(samples), size);
        };
    };
    if (missing <= kInlineWork) {
        // A fraction of a millisecond: done here, with no thread hop and nothing pending.
        work()();
        return;
    }
    m_slowTimer->start();
    computeInBackground(std::move(work));
}

void TensorParallelTab::showErrors(std::vector<ErrorSample> samples, double outputMagnitude)
{
    m_slowTimer->stop();
    m_waiting = false;
    m_samples = std::move(samples);
    m_outputMagnitude = outputMagnitude;
    m_current.reset();
    m_current64.reset();
    for (const ErrorSample& s : m_samples)
        if (s.ranks == m_inputs.ranks) {
            m_current =
                s.wrong ? *s.wrong : (m_precision == Precision::Float64 ? s.float64 : s.float32);
            m_current64 = s.float64;
        }

    // A log axis cannot show 0: exact zeros sit on the bottom edge with their own marker.
    double lo = std::numeric_limits<double>::infinity(), hi = outputMagnitude;
    for (const ErrorSample& s : m_samples)
        for (double v : {s.float64, s.float32, s.wrong.value_or(0.0)})
            if (v > 0) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    if (!std::isfinite(lo))
        lo = 1e-16;
    if (!(hi > 0))
        hi = 1;
    int expLo = static_cast<int>(std::floor(std::log10(lo)));
    int expHi = static_cast<int>(std::ceil(std::log10(hi) + 0.05));
    // One label per decade while they fit, otherwise every second or third decade.
    const int step = expHi - expLo <= 9 ? 1 : (expHi - expLo <= 18 ? 2 : 3);
    expLo = static_cast<int>(std::floor(static_cast<double>(expLo) / step)) * step;
    expHi = static_cast<int>(std::ceil(static_cast<double>(expHi) / step)) * step;
    // The lowest band is kept for exact zeros: no positive value falls in it.
    expLo -= step;
    const double floor = std::pow(10.0, expLo + 0.5 * step);
    if (m_errorAxis->base() != std::pow(10.0, step))
        m_errorAxis->setBase(std::pow(10.0, step));
    if (m_errorAxis->min() != std::pow(10.0, expLo) || m_errorAxis->max() != std::pow(10.0, expHi))
        m_errorAxis->setRange(std::pow(10.0, expLo), std::pow(10.0, expHi));

    QList<QPointF> p64, p32, wrong, zeros;
    for (const ErrorSample& s : m_samples) {
        const auto x = static_cast<double>(s.ranks);
        for (auto [value, list] : {std::pair{s.float64, &p64}, std::pair{s.float32, &p32}}) {
            if (value > 0)
                list->append({x, value});
            else
                zeros.append({x, floor});
        }
        if (s.wrong) {
            if (*s.wrong > 0)
                wrong.append({x, *s.wrong});
            else
                zeros.append({x, floor});
        }
    }
    m_float64->replace(p64);
    m_float32->replace(p32);
    m_wrong->replace(wrong);
    m_zeros->replace(zeros);
    const auto ranks = static_cast<double>(m_inputs.ranks);
    const double right = std::max(ranks, 2.0);
    rankAxis(m_errorRanks, ranks);
    const QList<QPointF> outputLine = {{0, outputMagnitude}, {right * 1.03, outputMagnitude}};
    if (m_outputLine->points() != outputLine)
        m_outputLine->replace(outputLine);
    setName(m_outputLine, tr("Largest |Y| %1").arg(formatNumber(outputMagnitude)));
    if (m_current)
        m_yours->replace(QList<QPointF>{{ranks, *m_current > 0 ? *m_current : floor}});
    else
        m_yours->clear();

    // Only the series that mean something now are in the legend.
    const bool wrongSplit = m_split != SplitMode::Matching;
    if (m_wrong->isVisible() != wrongSplit)
        m_wrong->setVisible(wrongSplit);
    setName(m_wrong,
            m_split == SplitMode::W2ByColumns ? tr("Wrong: W₂ cols") : tr("Wrong: W₁ rows"));
    if (m_zeros->isVisible() == zeros.isEmpty())
        m_zeros->setVisible(!zeros.isEmpty());
    // The chosen precision's line is drawn bolder.
    setPen(m_float64,
           QPen(palette::kBlue,
                m_precision == Precision::Float64 && !wrongSplit ? kLineWidth + 1 : 2));
    setPen(m_float32,
           QPen(palette::kOrange,
                m_precision == Precision::Float32 && !wrongSplit ? kLineWidth + 1 : 2));
    updateFigures();
}

void TensorParallelTab::updateFigures()
{
    QString error;
    const QString equation = QString::fromUtf8(
        "<b>Σ<sub>r</sub> GELU(X W1<sub>r</sub> + b1<sub>r</sub>) W2<sub>r</sub> = "
        "GELU(X W1 + b1) W2</b>");
    const QString precision = m_precision == Precision::Float64 ? "float64" : "float32";
    if (m_waiting || !m_current) {
        error = tr("max |sharded − unsharded|: <i>computing for %1 ranks…</i>")
                    .arg(formatWhole(m_inputs.ranks));
    } else if (m_split != SplitMode::Matching) {
        error = tr("<b>Wrong split</b>: max |difference| = <b>%1</b> (float64), %2% of the "
                   "largest |output| %3.")
                    .arg(scientific(*m_current))
                    .arg(formatNumber(100.0 * *m_current / std::max(m_outputMagnitude, 1e-300)))
                    .arg(formatNumber(m_outputMagnitude));
    } else {
        error = tr("max |sharded − unsharded| = <b>%1</b> in %2 (largest |output| %3).")
                    .arg(scientific(*m_current), precision, formatNumber(m_outputMagnitude));
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
    switch (m_split) {
    case SplitMode::Matching:
        text = tr("<b>Why the split is exact.</b> A column shard of W1 gives a rank whole "
                  "hidden features, and GELU acts on each feature by itself; W2's matching "
                  "rows give a partial output of full width, and the all-reduce adds them: "
                  "Σ<sub>r</sub> H<sub>r</sub> W2<sub>r</sub> = H W2. The error left is "
                  "rounding from adding in another order. Choose a wrong split to compare.");
        break;
    case SplitMode::W2ByColumns:
        text = tr("<b>Wrong split: W2 by columns.</b> Every output column needs every hidden "
                  "feature. A rank that holds columns of W2 but only its own H<sub>r</sub> "
                  "adds just its share; the other ranks' terms (hatched) never arrive, so the "
                  "error is as large as the output itself (with one rank nothing is missing). "
                  "Repairing it means gathering all of H, tokens × d_ff values, on every rank; "
                  "the matching row split only all-reduces the tokens × d_model output.");
        break;
    case SplitMode::W1ByRows:
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
