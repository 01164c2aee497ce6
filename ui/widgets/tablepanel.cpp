#include "tablepanel.h"

#include <QFontMetrics>
#include <QHeaderView>
#include <QLabel>
#include <QSignalBlocker>
#include <QStyle>
#include <QTableWidget>
#include <QTextDocumentFragment>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace scalelab::ui {

namespace {

const QSize kMinimumSize(260, 220); // pixels, as every chart panel
constexpr int kMargin = 4; // pixels around the heading, table and detail
constexpr int kDetailLines = 4; // the detail under the table is at least this many lines
constexpr int kTableStretch = 5; // the table's share of the height ...
constexpr int kDetailStretch = 2; // ... and the detail's

} // namespace

TablePanel::TablePanel(const QString& name, const QString& tableName, const QStringList& columns,
                       const QList<int>& stretched, QWidget* parent)
    : ChartPanel(name, parent)
    , m_heading(new QLabel(this))
    , m_table(new QTableWidget(0, static_cast<int>(columns.size()), this))
    , m_detail(new QLabel(this))
{
    setMinimumSize(kMinimumSize);
    m_heading->setWordWrap(true);
    m_heading->setTextFormat(Qt::RichText);
    m_table->setObjectName(tableName);
    m_table->setHorizontalHeaderLabels(columns);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    // One Tab stop: arrows move between rows, Enter activates, Tab goes on to the next
    // control. Buttons in the rows are for the mouse; from the keyboard they would be a stop
    // per row.
    m_table->setTabKeyNavigation(false);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setWordWrap(true);
    m_table->verticalHeader()->hide();
    // Rows as tall as their wrapped text at the width the table has now, not at its first.
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    QHeaderView* header = m_table->horizontalHeader();
    for (int c = 0; c < columns.size(); ++c)
        header->setSectionResizeMode(
            c, stretched.contains(c) ? QHeaderView::Stretch : QHeaderView::ResizeToContents);
    m_detail->setObjectName(tableName + "_detail");
    m_detail->setWordWrap(true);
    m_detail->setTextFormat(Qt::RichText);
    m_detail->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_detail->setMinimumHeight(fontMetrics().lineSpacing() * kDetailLines);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(kMargin, kMargin, kMargin, kMargin);
    layout->addWidget(m_heading);
    layout->addWidget(m_table, kTableStretch);
    layout->addWidget(m_detail, kDetailStretch);
    connect(m_table, &QTableWidget::currentCellChanged, this,
            [this](int row, int, int, int) { showDetail(row); });
}

QString TablePanel::title() const
{
    return QTextDocumentFragment::fromHtml(m_heading->text()).toPlainText().simplified();
}

void TablePanel::render(QPainter& painter, const QRectF& target)
{
    // The panel is widgets, not a drawing: drawn as they are laid out now.
    renderWidgets(painter, target);
}

bool editCellsQuietly(QTableWidget* table, const std::function<bool()>& edit)
{
    QAbstractItemModel* model = table->model();
    bool changed = false;
    {
        const QSignalBlocker quiet(model);
        changed = edit();
    }
    if (changed)
        emit model->dataChanged(model->index(0, 0),
                                model->index(model->rowCount() - 1, model->columnCount() - 1));
    return changed;
}

namespace {

/// Whether some row or column of `table` takes the size of its contents.
bool sizesToContents(const QTableWidget* table)
{
    for (const QHeaderView* header : {table->horizontalHeader(), table->verticalHeader()})
        for (int i = 0; i < header->count(); ++i)
            if (header->sectionResizeMode(i) == QHeaderView::ResizeToContents)
                return true;
    return false;
}

} // namespace

bool editCellsInPlace(QTableWidget* table, const std::function<QList<QTableWidgetItem*>()>& edit)
{
    QAbstractItemModel* model = table->model();
    QList<QTableWidgetItem*> edited;
    {
        const QSignalBlocker quiet(model);
        edited = edit();
    }
    if (edited.isEmpty())
        return false;
    if (sizesToContents(table)) {
        emit model->dataChanged(model->index(0, 0),
                                model->index(model->rowCount() - 1, model->columnCount() - 1));
        return true;
    }
    for (const QTableWidgetItem* item : edited) {
        const QModelIndex index = model->index(table->row(item), table->column(item));
        emit model->dataChanged(index, index);
    }
    return true;
}

bool cellsFitTheirColumns(const QTableWidget* table, const QList<QTableWidgetItem*>& cells)
{
    // What the style makes a cell's width: its text's width rounded up, with the focus frame's
    // margin and one pixel on each side; the table adds a pixel for the grid line.
    const int margin =
        table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table) + 1;
    const int room = 2 * margin + (table->showGrid() ? 1 : 0);
    const QHeaderView* header = table->horizontalHeader();
    for (const QTableWidgetItem* item : cells) {
        const QString text = item->text();
        if (!item->icon().isNull() || text.contains(QLatin1Char('\n')))
            return false;
        const QVariant own = item->data(Qt::FontRole);
        const QFont font =
            own.isValid() ? own.value<QFont>().resolve(table->font()) : table->font();
        const int width = header->sectionSize(table->column(item));
        if (static_cast<int>(std::ceil(QFontMetricsF(font).horizontalAdvance(text))) + room > width)
            return false;
    }
    return true;
}

namespace {

/// How wide column `c` of `table` is when fitted to its cells and its header.
int contentsWidth(const QTableWidget* table, int c)
{
    const QHeaderView* header = table->horizontalHeader();
    const int cells = static_cast<const QAbstractItemView*>(table)->sizeHintForColumn(c);
    return std::clamp(std::max(cells, header->sectionSizeHint(c)), header->minimumSectionSize(),
                      header->maximumSectionSize());
}

/// Whether the last column stretches and is too narrow for its cells.
bool lastColumnCut(const QTableWidget* table)
{
    if (!table->horizontalHeader()->stretchLastSection())
        return false;
    QList<QTableWidgetItem*> last;
    for (int r = 0; r < table->rowCount(); ++r)
        if (QTableWidgetItem* item = table->item(r, table->columnCount() - 1))
            last << item;
    return !cellsFitTheirColumns(table, last);
}

} // namespace

int wholeTableWidth(const QTableWidget* table)
{
    int width = 2 * table->frameWidth();
    if (table->verticalHeader()->isVisibleTo(table))
        width += table->verticalHeader()->width();
    for (int c = 0; c < table->columnCount(); ++c)
        width += contentsWidth(table, c);
    return width;
}

int wholeTableHeight(const QTableWidget* table)
{
    const QHeaderView* header = table->horizontalHeader();
    return 2 * table->frameWidth() + (header->isVisibleTo(table) ? header->height() : 0)
        + table->verticalHeader()->length();
}

void fitColumnsToContents(QTableWidget* table)
{
    // Column by column: QHeaderView::resizeSections(ResizeToContents) would also fit a last
    // column that stretches to its cells, and leave it so (blank beside it) until the next resize.
    QHeaderView* header = table->horizontalHeader();
    const int fitted = header->count() - (header->stretchLastSection() ? 1 : 0);
    for (int c = 0; c < fitted; ++c)
        header->resizeSection(c, contentsWidth(table, c));
}

bool widenColumnsFor(QTableWidget* table, const QList<QTableWidgetItem*>& cells)
{
    QHeaderView* header = table->horizontalHeader();
    QList<int> columns;
    for (QTableWidgetItem* item : cells) {
        const int c = table->column(item);
        if (columns.contains(c) || cellsFitTheirColumns(table, {item}))
            continue;
        if (header->stretchLastSection() && c == table->columnCount() - 1)
            return false;
        columns << c;
    }
    for (int c : std::as_const(columns))
        header->resizeSection(c, std::max(header->sectionSize(c), contentsWidth(table, c)));
    // A wider column leaves less to a last column that stretches: its cells must still fit.
    return columns.isEmpty() || !lastColumnCut(table);
}

} // namespace scalelab::ui
