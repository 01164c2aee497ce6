#include "plansearchpanel.h"

#include "format.h"

#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

namespace scalelab::ui {

namespace {

enum Column { Rank, Layout, Memory, Step, Mfu, Next, Load, Columns };

QString seconds(double s)
{
    return formatNumber(s) + QStringLiteral(" s");
}

QString gib(double bytes)
{
    return formatBytes(bytes, ByteUnit::GiB);
}

/// "−0.12 s" with a real minus sign, "+0.3 s".
QString signedSeconds(double s)
{
    const QString magnitude = seconds(std::abs(s));
    return (s < 0 ? QStringLiteral("\u2212") : QStringLiteral("+")) + magnitude;
}

QString ordinal(int n)
{
    const int lastTwo = n % 100;
    const int last = n % 10;
    const char* suffix = (lastTwo >= 11 && lastTwo <= 13) ? "th"
        : last == 1                                       ? "st"
        : last == 2                                       ? "nd"
        : last == 3                                       ? "rd"
                                                          : "th";
    return formatWhole(n) + QLatin1String(suffix);
}

QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignRight)
{
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(align | Qt::AlignVCenter);
    return item;
}

} // namespace

PlanSearchPanel::PlanSearchPanel(const QString& name, QWidget* parent)
    : TablePanel(name, "plan.search",
                 {tr("#"), tr("Layout"), tr("Memory"), tr("Step"), tr("MFU"),
                  tr("Against\nthe next"), QString()},
                 {Layout, Next}, parent)
{
    headingLabel()->setObjectName("plan.search_heading");
    table()->setAccessibleName(tr("The fastest layouts that fit"));
    table()->setAccessibleDescription(
        tr("Arrow keys choose a layout; Enter loads it into the plan."));
    connect(table(), &QTableWidget::activated, this, [this](const QModelIndex& index) {
        if (m_result && m_result->fitting > 0 && index.row() >= 0
            && static_cast<std::size_t>(index.row()) < m_result->ranked.size())
            emit loadRequested(index.row());
    });
    showHeading();
}

namespace {

QString zeroText(std::int64_t stage)
{
    return stage == 0 ? PlanSearchPanel::tr("no ZeRO") : PlanSearchPanel::tr("ZeRO-%1").arg(stage);
}

QString recomputeText(core::Recompute r)
{
    return r == core::Recompute::None ? PlanSearchPanel::tr("no recompute")
        : r == core::Recompute::Full  ? PlanSearchPanel::tr("full recompute")
                                      : PlanSearchPanel::tr("selective");
}

} // namespace

QString PlanSearchPanel::layoutText(const core::LayoutKey& k)
{
    QString pipeline = tr("p %1").arg(k.p);
    if (k.v > 1)
        pipeline += tr(" (v %1)").arg(k.v);
    QStringList parts = {tr("t %1").arg(k.t), pipeline, tr("d %1").arg(formatWhole(k.d))};
    if (k.ep > 1)
        parts << tr("ep %1").arg(k.ep);
    parts << tr("b %1").arg(k.microBatch) << zeroText(k.zeroStage);
    if (k.sequenceParallel)
        parts << tr("SP");
    parts << recomputeText(k.recompute);
    return parts.join(QStringLiteral(" \u00b7 "));
}

QString PlanSearchPanel::keptText(const core::PlanInputs& plan)
{
    const core::SearchKeep& keep = plan.searchKeep;
    const core::LayoutKey k = core::layoutOf(plan);
    QStringList parts;
    if (keep.tensorParallel)
        parts << tr("t %1").arg(k.t);
    if (keep.pipelineParallel)
        parts << tr("p %1").arg(k.p);
    if (keep.virtualStages)
        parts << tr("v %1").arg(k.v);
    if (keep.dataParallel)
        parts << tr("d %1").arg(formatWhole(k.d));
    if (keep.expertParallel)
        parts << tr("ep %1").arg(k.ep);
    if (keep.microBatch)
        parts << tr("b %1").arg(k.microBatch);
    if (keep.zeroStage)
        parts << zeroText(k.zeroStage);
    if (keep.sequenceParallel)
        parts << (k.sequenceParallel ? tr("SP") : tr("no SP"));
    if (keep.recompute)
        parts << recomputeText(k.recompute);
    return parts.join(QStringLiteral(" \u00b7 "));
}

QString PlanSearchPanel::termName(const std::string& term)
{
    if (term == "forward")
        return tr("forward compute");
    if (term == "backward")
        return tr("backward compute");
    if (term == "recompute")
        return tr("recomputation");
    if (term == "tensor_parallel")
        return tr("tensor-parallel collectives");
    if (term == "expert")
        return tr("expert all-to-alls");
    if (term == "bubble")
        return tr("pipeline bubble");
    if (term == "pipeline_sends")
        return tr("pipeline sends");
    if (term == "data_parallel_exposed")
        return tr("exposed data-parallel collectives");
    return tr("no term");
}

void PlanSearchPanel::setSearching()
{
    m_searching = true;
    m_failure.clear();
    table()->setEnabled(false);
    showHeading();
}

void PlanSearchPanel::setFailed(const QString& message)
{
    m_searching = false;
    m_failure = message;
    m_result.reset();
    table()->setRowCount(0);
    table()->setEnabled(true);
    detailLabel()->clear();
    m_yourRank = -1;
    showHeading();
}

void PlanSearchPanel::setResult(std::shared_ptr<const core::LayoutSearchResult> result,
                                double seconds, const QString& kept)
{
    m_searching = false;
    m_failure.clear();
    m_result = std::move(result);
    m_seconds = seconds;
    m_kept = kept;
    table()->setEnabled(true);
    if (m_result->fitting > 0)
        fillRanked();
    else
        fillClosest();
    setYours(m_yours, m_yourSeconds, m_yourFits);
}

void PlanSearchPanel::setYours(const core::LayoutKey& key, std::optional<double> stepSeconds,
                               bool fits)
{
    m_yours = key;
    m_yourSeconds = stepSeconds;
    m_yourFits = fits;
    m_yourRank = -1;
    if (m_result)
        for (std::size_t i = 0; i < m_result->ranked.size(); ++i)
            if (m_result->ranked[i].key == key) {
                m_yourRank = static_cast<int>(i);
                break;
            }
    // The plan's own row, when it is among the ten, reads in bold. Only the cells whose weight
    // changes are set, and the table is told once (cell by cell it measured its wrapped rows
    // again for each: 20 ms for the ten rows).
    editCellsQuietly(table(), [this] {
        bool changed = false;
        for (int row = 0; row < table()->rowCount(); ++row)
            for (int c = Rank; c < Load; ++c) {
                QTableWidgetItem* item = table()->item(row, c);
                const bool bold = m_result && m_result->fitting > 0 && row == m_yourRank;
                if (!item || item->font().bold() == bold)
                    continue;
                QFont font = item->font();
                font.setBold(bold);
                item->setFont(font);
                changed = true;
            }
        return changed;
    });
    showHeading();
}

void PlanSearchPanel::fillRanked()
{
    const int rows = static_cast<int>(std::min(core::kExplainedLayouts, m_result->ranked.size()));
    // What each row says: rank, layout, memory, step time, MFU, against the next one.
    const auto texts = [this](int row) {
        const core::RankedLayout& r = m_result->ranked[static_cast<std::size_t>(row)];
        QString next;
        if (r.differingTerm == "none")
            next = tr("the same time, term by term");
        else if (!r.differingTerm.empty())
            next = tr("%1 %2").arg(termName(r.differingTerm), signedSeconds(r.differingSeconds));
        return QStringList{QString::number(row + 1),
                           layoutText(r.key),
                           gib(r.memoryBytes),
                           seconds(r.time.total),
                           formatNumber(100 * r.time.mfu) + '%',
                           next};
    };
    const auto loadName = [this](int row) {
        return tr("Load layout %1: %2")
            .arg(row + 1)
            .arg(layoutText(m_result->ranked[static_cast<std::size_t>(row)].key));
    };
    // The rows of the last ranking take the new texts in place, the table told once: a new
    // row of cells and a Load button for each was 1.5 ms of a search's landing on the 1T plan.
    if (rows > 0 && table()->rowCount() == rows && table()->cellWidget(rows - 1, Load)) {
        editCellsQuietly(table(), [&] {
            for (int row = 0; row < rows; ++row) {
                const QStringList t = texts(row);
                for (int c = Rank; c < Load; ++c)
                    table()->item(row, c)->setText(t[c]);
                table()->cellWidget(row, Load)->setAccessibleName(loadName(row));
            }
            return true;
        });
        selectRank(0);
        return;
    }
    table()->setRowCount(0);
    table()->setRowCount(rows);
    table()->setHorizontalHeaderItem(Next, new QTableWidgetItem(tr("Against\nthe next")));
    for (int row = 0; row < rows; ++row) {
        const QStringList t = texts(row);
        for (int c = Rank; c < Load; ++c)
            table()->setItem(row, c,
                             cell(t[c], c == Layout || c == Next ? Qt::AlignLeft : Qt::AlignRight));
        auto* load = new QPushButton(tr("Load"));
        load->setFocusPolicy(Qt::NoFocus); // Enter on the row does the same
        load->setObjectName(QString("plan.search_load_%1").arg(row));
        load->setAccessibleName(loadName(row));
        load->setToolTip(tr("Put this layout into the plan (one undo step)"));
        connect(load, &QPushButton::clicked, this, [this, row] {
            selectRank(row);
            emit loadRequested(row);
        });
        table()->setCellWidget(row, Load, load);
    }
    if (rows > 0)
        selectRank(0);
}

void PlanSearchPanel::fillClosest()
{
    table()->setRowCount(0);
    table()->setRowCount(static_cast<int>(m_result->closest.size()));
    table()->setHorizontalHeaderItem(Next, new QTableWidgetItem(tr("Why it does not fit")));
    for (std::size_t i = 0; i < m_result->closest.size(); ++i) {
        const core::LayoutFailure& f = m_result->closest[i];
        const int row = static_cast<int>(i);
        table()->setItem(row, Rank, cell(QString()));
        table()->setItem(row, Layout, cell(layoutText(f.key), Qt::AlignLeft));
        table()->setItem(row, Memory,
                         cell(f.constraint == "memory" ? gib(f.memoryBytes) : QString()));
        table()->setItem(row, Step, cell(QString()));
        table()->setItem(row, Mfu, cell(QString()));
        table()->setItem(row, Next, cell(QString::fromStdString(f.reason), Qt::AlignLeft));
    }
    detailLabel()->setText(tr("<b>No layout fits.</b> The rows are the closest candidates and the "
                              "constraint each one breaks: more GPUs, more memory per GPU, a "
                              "smaller micro-batch or a shorter sequence may make room."));
}

void PlanSearchPanel::showHeading()
{
    QString text;
    if (!m_failure.isEmpty()) {
        text = tr("<b>No search:</b> %1").arg(m_failure.toHtmlEscaped());
    } else if (!m_result) {
        text = tr("<b>Searching every layout...</b>");
    } else {
        const core::LayoutSearchResult& r = *m_result;
        text = tr("<b>%1 of %2 layouts fit</b> (%3 ruled out by a memory bound before "
                  "timing), searched in %4.")
                   .arg(formatWhole(r.fitting), formatWhole(r.enumerated), formatWhole(r.pruned),
                        seconds(m_seconds));
        if (!m_kept.isEmpty())
            text += tr(" Kept as yours: %1.").arg(m_kept.toHtmlEscaped());
        if (m_searching)
            text = tr("<b>Searching again...</b> ") + text;
        else if (m_yourRank >= 0)
            text += tr(" <b>Yours is the %1 fastest</b> (%2; the fastest takes %3).")
                        .arg(ordinal(m_yourRank + 1), seconds(r.ranked[m_yourRank].time.total),
                             seconds(r.ranked.front().time.total));
        else if (!m_yourSeconds)
            text += tr(" Yours is refused (see the box below the charts).");
        else if (!m_yourFits)
            text += tr(" Yours does not fit in memory.");
        else
            text += tr(" Yours is outside the search's rules (tensor parallelism beyond a node, "
                       "unequal interleaved chunks, sequence parallelism or ZeRO with nothing "
                       "to split).");
    }
    headingLabel()->setText(text);
}

void PlanSearchPanel::selectRank(int rank)
{
    if (rank < 0 || rank >= table()->rowCount())
        return;
    table()->setCurrentCell(rank, Layout);
    showDetail(rank);
}

void PlanSearchPanel::showDetail(int row)
{
    if (!m_result || m_result->fitting == 0 || row < 0
        || static_cast<std::size_t>(row) >= m_result->ranked.size())
        return;
    const core::RankedLayout& r = m_result->ranked[static_cast<std::size_t>(row)];
    const core::StepTime& t = r.time;
    QString text =
        tr("<b>#%1: %2.</b> %3 per step on its slowest stage: forward %4, backward %5, "
           "recomputation %6, tensor-parallel %7, expert %8, bubble %9, sends %10, exposed "
           "data-parallel %11. %12 per GPU; MFU %13%.")
            .arg(row + 1)
            .arg(layoutText(r.key).toHtmlEscaped(), seconds(t.total), seconds(t.forward),
                 seconds(t.backward), seconds(t.recompute), seconds(t.tensorParallel),
                 seconds(t.expert), seconds(t.bubble), seconds(t.pipelineSends))
            .arg(seconds(t.dataParallelExposed), gib(r.memoryBytes), formatNumber(100 * t.mfu));
    if (!r.largestTerm.empty())
        text += tr(" Its largest term: %1 (%2).")
                    .arg(termName(r.largestTerm), seconds(r.largestSeconds));
    if (!r.differingTerm.empty() && r.differingTerm != "none")
        text += tr(" Against #%1, the term that differs most is %2: %3.")
                    .arg(row + 2)
                    .arg(termName(r.differingTerm), signedSeconds(r.differingSeconds));
    detailLabel()->setText(text);
}

} // namespace scalelab::ui
