#include "tab.h"

#include "backgroundrunner.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "choicebox.h"
#include "explanationpanel.h"
#include "figureslabel.h"
#include "scalelab/core/error.h"

#include <QAbstractItemView>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFontMetrics>
#include <QFormLayout>
#include <QGraphicsLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QTabBar>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <numeric>

namespace scalelab::ui {

Tab::Tab(document::ScenarioDocument* document, core::Section section, QWidget* parent)
    : QWidget(parent)
    , m_document(document ? document : new document::ScenarioDocument(this))
    , m_section(section)
    , m_timer(new QTimer(this))
    , m_explanationTimer(new QTimer(this))
    , m_controlsColumn(new QVBoxLayout)
    , m_scroll(new QScrollArea(this))
    , m_right(new QVBoxLayout)
    , m_grid(new QGridLayout)
    , m_chartScroll(nullptr)
    , m_chartArea(nullptr)
    , m_figuresLine(new FiguresLine(this))
    , m_figures(m_figuresLine->label())
    , m_message(new QLabel(this))
{
    m_timer->setSingleShot(true);
    m_timer->setInterval(0);
    connect(m_timer, &QTimer::timeout, this, &Tab::refreshNow);
    m_explanationTimer->setSingleShot(true);
    m_explanationTimer->setInterval(kExplanationDelayMs);
    connect(m_explanationTimer, &QTimer::timeout, this, &Tab::updateExplanation);

    auto* panel = new QWidget;
    panel->setLayout(m_controlsColumn);
    m_controlsColumn->addStretch(1);
    m_scroll->setWidget(panel);
    m_scroll->setWidgetResizable(true);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setAccessibleName(tr("Controls"));

    m_figures->setObjectName("figures");
    m_message->setObjectName("message");
    m_message->setWordWrap(true);
    m_message->setStyleSheet("color: #b00000; font-weight: bold;");
    m_message->hide();

    m_chartArea = new QWidget;
    m_chartArea->setObjectName("charts");
    m_areaColumn = new QVBoxLayout(m_chartArea);
    m_areaColumn->setContentsMargins(0, 0, 0, 0);
    m_gridBox = new QWidget;
    m_gridBox->setLayout(m_grid);
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_areaColumn->addWidget(m_gridBox, 1);
    // A row whose text grows (addChartRow) asks the area for more height.
    m_chartArea->installEventFilter(this);
    m_chartScroll = new QScrollArea(this);
    m_chartScroll->setWidget(m_chartArea);
    // The area is sized here (arrangeCharts), not by the scroll area: it would give the grid
    // only its preferred height whenever a chart holds word-wrapped text.
    m_chartScroll->setWidgetResizable(false);
    m_chartScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    m_chartScroll->setFrameShape(QFrame::NoFrame);
    // A Tab stop: arrow keys and Page Down scroll the charts.
    m_chartScroll->setAccessibleName(tr("Charts"));
    m_chartScroll->viewport()->installEventFilter(this);
    m_chartScroll->hide(); // until setCharts: a tab may lay its charts out itself

    m_right->addWidget(m_figuresLine);
    m_right->addWidget(m_chartScroll, 1);
    m_right->addWidget(m_message);
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(m_scroll);
    layout->addLayout(m_right, 1);
    connect(this, &Tab::refreshed, this, &Tab::scheduleExplanation);
    // A refresh may rename a series (its legend entry shows the whole name again) or retitle
    // a chart: wrapped again to the chart's width.
    // Then each chart is laid out at once, before the window paints: left to Qt Charts' own
    // layout request, which comes after the scene's repaint of the new values, a chart whose
    // axis range or legend changed was painted twice a step, once with the old layout.
    connect(this, &Tab::refreshed, this, [this] {
        for (ChartPanel* chart : charts())
            if (auto* view = qobject_cast<ChartViewPanel*>(chart)) {
                fitChartTexts(view->chart());
                QGraphicsLayout* chartLayout = view->chart()->layout();
                if (view->isVisible() && chartLayout && !chartLayout->isActivated())
                    chartLayout->activate();
                view->cacheAxisItems(); // the axes' new items, made as they were laid out
            }
    });
    connect(m_document, &document::ScenarioDocument::sectionChanged, this,
            [this](core::Section changed) {
                if (changed == m_section)
                    showSection();
            });
}

QString Tab::name() const
{
    const std::string_view n = core::sectionName(m_section);
    return QString::fromLatin1(n.data(), static_cast<qsizetype>(n.size()));
}

void Tab::setScenario(const core::Scenario& scenario)
{
    m_document->replace(scenario, tr("Open scenario"));
}

void Tab::showSection()
{
    for (const Binding& b : std::as_const(m_bindings))
        showBinding(b);
    sectionShown();
    scheduleRefresh();
}

void Tab::showBinding(const Binding& binding)
{
    const document::Field& f = *binding.field;
    const core::Scenario& s = m_document->scenario();
    const double value = f.shownIn(s);
    if (auto* control = qobject_cast<ParameterControl*>(binding.widget)) {
        const QSignalBlocker block(control);
        // A file's value outside the slider's range widens it: never silently clamped.
        const double lo = std::min(f.minimumIn(s), value);
        const double hi = std::max(f.maximumIn(s), value);
        if (control->spec().minimum != lo || control->spec().maximum != hi)
            control->setRange(lo, hi);
        control->setValue(value);
    } else if (auto* box = qobject_cast<QCheckBox*>(binding.widget)) {
        const QSignalBlocker block(box);
        box->setChecked(value != 0.0);
    } else if (auto* combo = qobject_cast<QComboBox*>(binding.widget)) {
        const QSignalBlocker block(combo);
        combo->setCurrentIndex(static_cast<int>(value));
    }
}

void Tab::bind(const document::Field* field, QWidget* widget)
{
    Q_ASSERT(field);
    widget->setObjectName(field->key);
    m_bindings.append({field, widget});
    showBinding(m_bindings.last());
}

void Tab::scheduleExplanation()
{
    if (!m_explanation) {
        updateExplanation(); // the first time: make the panel (if this tab has a text) at once
    } else if (!m_explanationVisible) {
        m_explanationStale = true;
    } else if (!m_explanationTimer->isActive()) {
        m_explanationTimer->start();
    }
}

void Tab::updateExplanation()
{
    m_explanationTimer->stop();
    m_explanationStale = false;
    if (!m_explanation) {
        if (m_hasNoExplanation)
            return;
        // Made here rather than in the constructor: the tab's name() is known only now.
        m_explanation = new ExplanationPanel(name(), this);
        if (!m_explanation->hasText()) {
            delete m_explanation;
            m_explanation = nullptr;
            m_hasNoExplanation = true; // and no reason to look again on every refresh
            return;
        }
        m_explanation->setMinimumWidth(240);
        m_explanationMaxWidth = fontMetrics().averageCharWidth() * 52;
        m_explanation->setMaximumWidth(m_explanationMaxWidth);
        m_explanation->setValues(explanationValues());
        placeExplanation();
        return;
    }
    m_explanation->setValues(explanationValues());
}

void Tab::placeExplanation()
{
    if (!m_explanationVisible || !isVisible()) {
        m_explanation->setVisible(m_explanationVisible);
        layout()->addWidget(m_explanation);
        return;
    }
    if (explanationBelow()) {
        followExplanationPlace();
        m_explanation->show();
        return;
    }
    // Given its place before it is shown, so that its text is laid out once, at the width it
    // keeps: shown first, it would be laid out at a default size, and again once the tab's
    // layout made room for it (the largest single cost of a cold start's first paint).
    QSizePolicy policy = m_explanation->sizePolicy();
    policy.setRetainSizeWhenHidden(true);
    m_explanation->setSizePolicy(policy);
    layout()->addWidget(m_explanation);
    layout()->activate();
    policy.setRetainSizeWhenHidden(false);
    m_explanation->setSizePolicy(policy);
    m_explanation->show();
}

QString Tab::caption() const
{
    QStringList parts;
    for (const ParameterControl* c : m_controls) {
        if (!c->isEnabled())
            continue;
        QString label = c->spec().label;
        label.remove('&');
        parts << QString("%1 %2 %3").arg(label, c->spinBox()->text(), c->spec().unit).trimmed();
    }
    return QString("%1: %2").arg(title(), parts.join(", "));
}

void Tab::restyleCharts()
{
    for (ChartPanel* chart : charts()) {
        if (auto* view = qobject_cast<ChartViewPanel*>(chart))
            view->restyle();
        chart->update();
    }
}

int Tab::readableChartWidth() const
{
    return m_minChartChars * QFontMetrics(chartFonts().legend).averageCharWidth();
}

bool Tab::explanationBelow() const
{
    if (!m_explanation || !m_explanationVisible || m_charts.isEmpty())
        return false;
    if (!isVisible())
        return m_explanationIsBelow; // judged when shown, at the size it is shown at
    // The room the charts would have with the explanation beside them, against the width of
    // one readable chart (as arrangeCharts reckons it) and the chart area's scroll bar.
    const QMargins margins = layout()->contentsMargins();
    const int beside = std::clamp(m_explanation->sizeHint().width(), m_explanation->minimumWidth(),
                                  std::max(m_explanation->minimumWidth(), m_explanationMaxWidth));
    const int room = width() - margins.left() - margins.right() - m_scroll->minimumWidth() - beside
        - 2 * layout()->spacing();
    const int readable =
        readableChartWidth() + m_chartScroll->verticalScrollBar()->sizeHint().width();
    return room < readable;
}

void Tab::followExplanationPlace()
{
    const bool below = explanationBelow();
    if (!m_explanation || below == m_explanationIsBelow)
        return;
    m_explanationIsBelow = below;
    if (below) {
        // Under the charts, across their width, with two fifths of the column's height: the
        // charts keep their readable width and scroll down, as they do on a short screen.
        layout()->removeWidget(m_explanation);
        m_explanation->setMaximumWidth(QWIDGETSIZE_MAX);
        m_right->insertWidget(m_right->indexOf(m_chartScroll) + 1, m_explanation, 2);
        m_right->setStretchFactor(m_chartScroll, 3);
    } else {
        m_right->removeWidget(m_explanation);
        m_right->setStretchFactor(m_chartScroll, 1);
        m_explanation->setMaximumWidth(m_explanationMaxWidth);
        layout()->addWidget(m_explanation);
    }
}

void Tab::setExplanationVisible(bool visible)
{
    m_explanationVisible = visible;
    if (m_explanation) {
        if (visible)
            followExplanationPlace();
        m_explanation->setVisible(visible);
    }
    if (visible && m_explanationStale)
        updateExplanation();
}

QVBoxLayout* Tab::addGroup(const QString& title)
{
    auto* group = new QGroupBox(title);
    auto* box = new QVBoxLayout(group);
    // Before the stretch that keeps the groups at the top.
    m_controlsColumn->insertWidget(m_controlsColumn->count() - 1, group);
    return box;
}

ParameterControl* Tab::addControl(QVBoxLayout* group, const QString& key)
{
    const document::Field* f = document::findField(key);
    Q_ASSERT_X(f, "Tab::addControl", qPrintable(key));
    ParameterSpec spec;
    spec.key = f->key;
    spec.label = f->translatedLabel();
    spec.symbol = f->symbol;
    spec.unit = f->translatedUnit();
    spec.description = f->translatedHelp();
    spec.minimum = f->minimum;
    spec.maximum = f->maximumIn(m_document->scenario());
    spec.scale = f->log ? ParameterSpec::Scale::Log : ParameterSpec::Scale::Linear;
    spec.suffixes = f->log;
    spec.decimals = f->decimals;
    spec.step = f->step;
    auto* c = addViewControl(group, spec, f->get(m_document->scenario()));
    bind(f, c);
    connect(c, &ParameterControl::valueChanged, this,
            [this, key = f->key](double v) { m_document->setValue(key, v); });
    return c;
}

QCheckBox* Tab::addCheckBox(QVBoxLayout* group, const QString& key)
{
    const document::Field* f = document::findField(key);
    Q_ASSERT_X(f, "Tab::addCheckBox", qPrintable(key));
    auto* box = new QCheckBox(f->translatedLabel());
    box->setToolTip(f->translatedHelp());
    group->addWidget(box);
    bind(f, box);
    connect(box, &QCheckBox::toggled, this,
            [this, key = f->key](bool on) { m_document->setValue(key, on ? 1.0 : 0.0); });
    return box;
}

QComboBox* Tab::addChoice(QFormLayout* form, const QString& key)
{
    const document::Field* f = document::findField(key);
    Q_ASSERT_X(f, "Tab::addChoice", qPrintable(key));
    auto* combo = new ChoiceBox;
    combo->addItems(f->translatedChoices());
    // As wide as its first words, not its longest choice ("Idle share of the run (chapter):
    // (p-1)/(m+p-1)" made the whole controls column wide enough for it, and left the charts
    // little room on a projector); the open list shows every choice whole.
    combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    combo->setMinimumContentsLength(kChoiceChars);
    combo->view()->setMinimumWidth(combo->view()->sizeHintForColumn(0) + 24);
    QString accessible = f->translatedLabel();
    combo->setAccessibleName(accessible.remove('&'));
    combo->setToolTip(f->translatedHelp());
    form->addRow(f->translatedLabel(), combo);
    bind(f, combo);
    connect(combo, &QComboBox::currentIndexChanged, this,
            [this, key = f->key](int i) { m_document->setValue(key, i); });
    return combo;
}

ParameterControl* Tab::addViewControl(QVBoxLayout* group, const ParameterSpec& spec, double initial)
{
    auto* c = new ParameterControl(spec);
    c->setValue(initial);
    m_controls << c;
    group->addWidget(c);
    connect(c, &ParameterControl::inputRefused, this, &Tab::inputRefused);
    if (!isVisible()) {
        // Aligned once, when the tab is first shown (fitControlsColumn), not once per control
        // added: a tab of ten controls measured every label ten times as it was built.
        m_alignedCompact = -1;
        m_rowControlsWidth = 0;
        return c;
    }
    ParameterControl::alignColumns(m_controls);
    // The column is as wide as its widest row, never squeezed by the charts.
    m_scroll->setMinimumWidth(m_scroll->widget()->sizeHint().width() + 24);
    return c;
}

void Tab::setCharts(const QList<ChartPanel*>& charts, int columns, int minChars, Lead lead,
                    int leadStretch)
{
    m_lead = charts.size() > 1 ? lead : Lead::None;
    m_leadStretch = std::max(leadStretch, 1);
    // A tab that shows one part of its charts at a time: the charts of the part before leave
    // the grid and hide (arrangeCharts only moves the charts of the list it is given).
    for (ChartPanel* chart : std::as_const(m_charts))
        if (!charts.contains(chart)) {
            m_grid->removeWidget(chart);
            chart->hide();
        }
    m_charts = charts;
    m_maxColumns = std::max(columns, 1);
    m_minChartChars = std::max(minChars, 1);
    m_chartScroll->show();
    arrangeCharts(true);
    // Charts hidden by a setCharts before (or by the tab) come back once in the grid (shown
    // before it has a parent, a chart would open a window of its own); the others show with
    // the tab, as before.
    for (ChartPanel* chart : charts)
        if (chart->isHidden() && chart->testAttribute(Qt::WA_WState_ExplicitShowHide))
            chart->show();
}

void Tab::arrangeCharts(bool force)
{
    if (m_charts.isEmpty())
        return;
    // The size below which a chart's titles, ticks and legend no longer fit: a number of
    // characters and lines of the charts' own type, so it grows with projector mode.
    const QFontMetrics fm(chartFonts().legend);
    const int minWidth = readableChartWidth();
    const int minHeight = kMinChartLines * fm.lineSpacing();
    const int room = m_chartScroll->viewport()->width();
    const int fit = room > 0 ? std::max(1, (room + m_grid->horizontalSpacing()) / minWidth) : 1;
    const int columns = std::min(m_maxColumns, fit);
    if (columns != m_columns || force) {
        for (ChartPanel* chart : m_charts)
            m_grid->removeWidget(chart);
        // A grid keeps its rows and columns once made: clear every stretch of the old layout.
        for (int c = 0; c < m_grid->columnCount(); ++c)
            m_grid->setColumnStretch(c, 0);
        for (int r = 0; r < m_grid->rowCount(); ++r)
            m_grid->setRowStretch(r, 0);
        const int rows = chartRows(columns);
        if (m_lead == Lead::Column && columns > 1) {
            // The lead down the first column, the others one under the other beside it.
            m_grid->addWidget(m_charts.first(), 0, 0, rows, 1);
            for (int i = 1; i < m_charts.size(); ++i)
                m_grid->addWidget(m_charts[i], i - 1, 1);
            m_grid->setColumnStretch(0, 1);
            m_grid->setColumnStretch(1, 1);
            for (int r = 0; r < rows; ++r)
                m_grid->setRowStretch(r, 2);
        } else {
            const int lead = m_lead == Lead::Row ? 1 : 0;
            if (lead)
                m_grid->addWidget(m_charts.first(), 0, 0, 1, columns);
            for (int i = lead; i < m_charts.size(); ++i)
                m_grid->addWidget(m_charts[i], lead + (i - lead) / columns, (i - lead) % columns);
            for (int c = 0; c < columns; ++c)
                m_grid->setColumnStretch(c, 1);
            for (int r = 0; r < rows; ++r)
                m_grid->setRowStretch(r, r == 0 && lead ? m_leadStretch : 2);
        }
        m_columns = columns;
    }
    // As large as the room, and never below the readable size, across or down: then the area
    // scrolls (a single column narrower than one readable chart scrolls sideways rather than
    // squeezing the chart or cutting it off).
    const int rows = chartRows(columns);
    const int gridHeight = gridLeastHeight(rows, minWidth, minHeight);
    const int width = columns * minWidth + (columns - 1) * m_grid->horizontalSpacing();
    int areaWidth = std::max({room, width, m_grid->minimumSize().width()});
    for (const QWidget* row : std::as_const(m_chartRows))
        if (!row->isHidden())
            areaWidth = std::max(areaWidth, row->minimumSizeHint().width());
    if (m_gridBox->minimumHeight() != gridHeight)
        m_gridBox->setMinimumHeight(gridHeight);
    // Each row at least as tall as it needs at that width (a wrapped note: its lines).
    int height = gridHeight;
    for (const QWidget* row : std::as_const(m_chartRows)) {
        if (row->isHidden())
            continue;
        const int least = std::max({row->minimumHeight(), row->minimumSizeHint().height(),
                                    row->hasHeightForWidth() ? row->heightForWidth(areaWidth) : 0});
        height += least + m_areaColumn->spacing();
    }
    const QSize size(areaWidth, std::max(m_chartScroll->viewport()->height(), height));
    if (m_chartArea->size() != size)
        m_chartArea->resize(size);
}

void Tab::addChartRow(QWidget* widget, ChartRow where, int stretch)
{
    m_chartRows.append(widget);
    if (where == ChartRow::Above)
        m_areaColumn->insertWidget(m_areaColumn->indexOf(m_gridBox), widget, stretch);
    else
        m_areaColumn->addWidget(widget, stretch);
    m_chartScroll->show();
    arrangeCharts(true);
}

int Tab::gridLeastHeight(int rows, int minWidth, int minHeight) const
{
    // Each row the readable height, or more where a chart of it needs more (the plan's traffic
    // chart, to set all its formulas whole): the grid's own minimum would give the other rows
    // only their least size.
    QList<int> heights(rows, minHeight);
    for (ChartPanel* chart : std::as_const(m_charts)) {
        const int index = m_grid->indexOf(chart);
        int row = 0, column = 0, rowSpan = 0, columnSpan = 0;
        if (index >= 0)
            m_grid->getItemPosition(index, &row, &column, &rowSpan, &columnSpan);
        if (index < 0 || rowSpan != 1 || row >= rows)
            continue;
        const int forWidth = chart->hasHeightForWidth()
            ? chart->heightForWidth(std::max(chart->width(), minWidth))
            : 0;
        heights[row] = std::max(
            {heights[row], chart->minimumSizeHint().height(), chart->minimumHeight(), forWidth});
    }
    return std::accumulate(heights.begin(), heights.end(), 0)
        + (rows - 1) * m_grid->verticalSpacing();
}

int Tab::chartRows(int columns) const
{
    const int count = static_cast<int>(m_charts.size());
    if (m_lead == Lead::Column && columns > 1)
        return std::max(1, count - 1);
    const int lead = m_lead == Lead::Row ? 1 : 0;
    return lead + (count - lead + columns - 1) / columns;
}

bool Tab::eventFilter(QObject* watched, QEvent* event)
{
    if (m_chartScroll && watched == m_chartScroll->viewport() && event->type() == QEvent::Resize)
        arrangeCharts();
    else if (watched == m_chartArea && event->type() == QEvent::LayoutRequest)
        arrangeCharts(); // a row or a chart asks for another least height
    return QWidget::eventFilter(watched, event);
}

void Tab::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) {
        fitControlsColumn(true);
        arrangeCharts(true);
    }
}

namespace {

/// The choice boxes of a controls column: in rows as the tab made them, compact no wider than
/// `compactChars` (a preset box is as wide as its longest choice on a large screen); the open
/// list still shows every choice whole.
void fitChoiceBoxes(QWidget* panel, bool compact, int compactChars)
{
    for (QComboBox* box : panel->findChildren<QComboBox*>()) {
        // What the tab chose, given back when the column is wide again.
        if (!box->property("scalelab_adjust").isValid()) {
            box->setProperty("scalelab_adjust", static_cast<int>(box->sizeAdjustPolicy()));
            box->setProperty("scalelab_chars", box->minimumContentsLength());
        }
        const int chars = box->property("scalelab_chars").toInt();
        const auto adjust = compact
            ? QComboBox::AdjustToMinimumContentsLengthWithIcon
            : static_cast<QComboBox::SizeAdjustPolicy>(box->property("scalelab_adjust").toInt());
        const int length =
            compact ? (chars == 0 ? compactChars : std::min(chars, compactChars)) : chars;
        if (box->sizeAdjustPolicy() == adjust && box->minimumContentsLength() == length)
            continue;
        box->setSizeAdjustPolicy(adjust);
        box->setMinimumContentsLength(length);
        // QComboBox measures its minimum once and keeps it through a new policy or length
        // (a box first shown as wide as its longest choice would hold the column that wide);
        // a style change is what makes it measure again.
        QEvent restyled(QEvent::StyleChange);
        QCoreApplication::sendEvent(box, &restyled);
    }
}

/// A group's new size reaches the column only once the group's own layout has run (a posted
/// event otherwise): the innermost layouts first, then outwards.
void measureInsideOut(QWidget* panel)
{
    QList<QWidget*> nested = panel->findChildren<QWidget*>();
    const auto depth = [panel](const QWidget* w) {
        int d = 0;
        for (; w && w != panel; w = w->parentWidget())
            ++d;
        return d;
    };
    std::stable_sort(nested.begin(), nested.end(),
                     [&depth](const QWidget* a, const QWidget* b) { return depth(a) > depth(b); });
    for (QWidget* w : std::as_const(nested))
        if (w->layout() && !w->isHidden())
            w->layout()->activate();
}

} // namespace

void Tab::fitControlsColumn(bool measure)
{
    // A scroll area keeps the width it was first given; the controls need their full width
    // (labels, sliders and exact values side by side) at every type size.
    QWidget* panel = m_scroll->widget();
    if (!panel)
        return;
    // The column's width with its controls arranged one way or the other.
    const auto arranged = [this, panel, measure](bool compact) {
        m_compactControls = compact;
        for (ParameterControl* control : panel->findChildren<ParameterControl*>())
            control->setCompact(compact);
        // In rows the controls line up in columns; compact, each row is only as wide as its
        // own value and unit. Aligned again for a new type size.
        if (measure || m_alignedCompact != int(compact)) {
            ParameterControl::alignColumns(m_controls, !compact);
            m_alignedCompact = int(compact);
        }
        // Choice boxes likewise under their names.
        const auto wrap = compact ? QFormLayout::WrapAllRows : QFormLayout::DontWrapRows;
        for (QFormLayout* form : panel->findChildren<QFormLayout*>())
            if (form->rowWrapPolicy() != wrap)
                form->setRowWrapPolicy(wrap);
        for (QBoxLayout* row : panel->findChildren<QBoxLayout*>())
            if (row->property(kStackWhenCompact).toBool())
                row->setDirection(compact ? QBoxLayout::TopToBottom : QBoxLayout::LeftToRight);
        fitChoiceBoxes(panel, compact, kCompactChoiceChars);
        panel->ensurePolished();
        measureInsideOut(panel);
        if (panel->layout())
            panel->layout()->activate();
        return panel->sizeHint().width() + m_scroll->verticalScrollBar()->sizeHint().width();
    };
    if (measure || m_rowControlsWidth == 0 || !m_compactControls)
        m_rowControlsWidth = arranged(false);
    const bool compact = width() > 0 && m_rowControlsWidth > kControlsShare * width();
    const int columnWidth =
        compact == m_compactControls && !compact ? m_rowControlsWidth : arranged(compact);
    // Exactly that wide: a scroll area keeps the size hint its contents had when first asked,
    // and the tab's layout would give it that width (a row's, after the controls went compact).
    if (m_scroll->minimumWidth() != columnWidth || m_scroll->maximumWidth() != columnWidth)
        m_scroll->setFixedWidth(columnWidth);
    followExplanationPlace();
}

void Tab::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitControlsColumn();
}

void Tab::showEvent(QShowEvent* event)
{
    if (m_undrawn)
        refreshNow(); // before it first paints
    QWidget::showEvent(event);
    fitControlsColumn();
    updateGeometry(); // its minimum counts again
}

void Tab::hideEvent(QHideEvent* event)
{
    QWidget::hideEvent(event);
    updateGeometry(); // its minimum no longer counts (the page holding it asks again)
}

QSize Tab::minimumSizeHint() const
{
    return isVisible() ? QWidget::minimumSizeHint() : QSize(0, 0);
}

void Tab::addDisclosure(QVBoxLayout* group, const QString& text, QWidget* content,
                        const QString& accessibleName)
{
    auto* button = new QToolButton;
    button->setText(text);
    button->setCheckable(true);
    button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    button->setArrowType(Qt::RightArrow);
    button->setAutoRaise(true);
    button->setAccessibleName(accessibleName);
    content->setVisible(false);
    connect(button, &QToolButton::toggled, content, [this, button, content](bool on) {
        content->setVisible(on);
        button->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
        // What opened may be wider than the column (nested groups, longer names): the column
        // is measured again, else its right edge would cut the values off.
        if (isVisible())
            fitControlsColumn(true);
    });
    group->addWidget(button);
    group->addWidget(content);
}

ParameterControl* Tab::addAcceleratorMemory(QVBoxLayout* group, QFormLayout* form,
                                            const QString& section, QComboBox*& box)
{
    box = new ChoiceBox;
    box->setObjectName(section + ".accelerator");
    box->setAccessibleName(tr("Accelerator memory preset"));
    for (double gb : {24.0, 40.0, 80.0, 141.0})
        box->addItem(tr("%1 GB").arg(gb), gb);
    box->addItem(tr("Other"), 0.0);
    form->addRow(tr("&Memory"), box);
    auto* capacity = addControl(group, section + ".accelerator_gb");
    connect(box, &QComboBox::activated, this, [box, capacity](int i) {
        const double gb = box->itemData(i).toDouble();
        if (gb > 0)
            capacity->setValue(gb);
    });
    // The box names the capacity whenever the document changes this tab's section (an edit,
    // undo, a file); other sections' edits leave it alone.
    const auto name = [box, capacity] {
        const int i = box->findData(capacity->value());
        box->setCurrentIndex(i >= 0 ? i : box->count() - 1);
    };
    name();
    connect(m_document, &document::ScenarioDocument::sectionChanged, box,
            [this, name](core::Section changed) {
                if (changed == m_section)
                    name();
            });
    return capacity;
}

ParameterControl* Tab::control(const QString& key) const
{
    for (ParameterControl* c : m_controls)
        if (c->spec().key == key)
            return c;
    return nullptr;
}

void Tab::loadValue(ParameterControl* control, double value)
{
    const QSignalBlocker block(control);
    if (value > control->spec().maximum || value < control->spec().minimum)
        control->setRange(std::min(value, control->spec().minimum),
                          std::max(value, control->spec().maximum));
    control->setValue(value);
}

void Tab::scheduleRefresh()
{
    m_timer->start();
}

bool Tab::refreshPending() const
{
    return m_undrawn || m_timer->isActive() || (m_runner && m_runner->busy())
        || (m_sideRunner && m_sideRunner->busy());
}

bool Tab::chartsPending() const
{
    return m_undrawn || m_timer->isActive() || (m_runner && m_runner->busy());
}

void Tab::waitForIdle()
{
    if (m_undrawn || m_timer->isActive())
        refreshNow();
    catchUp();
    if (m_runner)
        m_runner->waitForIdle();
    if (m_sideRunner)
        m_sideRunner->waitForIdle();
    catchUp();
    if (m_explanationTimer->isActive())
        updateExplanation();
    if (m_explanation)
        m_explanation->finishUpdate();
}

QString Tab::failureMessage() const
{
    return m_failure == Failure::None ? QString() : m_message->text();
}

void Tab::showError(const QString& message, Failure failure)
{
    m_failure = message.isEmpty() ? Failure::None : failure;
    // The charts keep the last good state; the message says which input is refused.
    // Touched only on a change: even hiding a hidden label makes the layout measure again.
    if (m_message->text() != message)
        m_message->setText(message);
    if (m_message->isVisibleTo(this) == message.isEmpty())
        m_message->setVisible(!message.isEmpty());
}

namespace {

/// The message line and kind of a refresh that threw: refused input, or a computation that ran
/// out of memory or failed otherwise (a length_error from a container, say). Never lost.
std::pair<QString, Tab::Failure> describeFailure(const std::exception_ptr& thrown)
{
    try {
        std::rethrow_exception(thrown);
    } catch (const core::InputError& e) {
        return {QString::fromStdString(e.what()), Tab::Failure::BadInput};
    } catch (const std::bad_alloc&) {
        return {Tab::tr("Not enough memory for these inputs."), Tab::Failure::OutOfResources};
    } catch (const std::exception& e) {
        return {Tab::tr("Cannot compute these inputs: %1").arg(QString::fromUtf8(e.what())),
                Tab::Failure::OutOfResources};
    }
}

} // namespace

void Tab::drawFirst()
{
    m_undrawn = s_drawWhenShown && !isVisible();
    if (!m_undrawn)
        refreshNow();
}

void Tab::refreshNow()
{
    m_undrawn = false;
    m_timer->stop();
    try {
        recompute();
        showError({});
    } catch (const std::exception&) {
        const auto [message, failure] = describeFailure(std::current_exception());
        showError(message, failure);
    }
    // A background computation announces itself when its result is shown.
    if (!m_runner || !m_runner->busy())
        emit refreshed();
}

QTabBar* Tab::addPartBar(const QString& objectName, const QString& accessibleName,
                         const QList<std::pair<QString, QString>>& parts)
{
    auto* bar = new QTabBar;
    bar->setObjectName(objectName);
    bar->setAccessibleName(accessibleName);
    for (const auto& [title, tip] : parts)
        bar->setTabToolTip(bar->addTab(title), tip);
    bar->setExpanding(false);
    bar->setDrawBase(false);
    bar->setFocusPolicy(Qt::StrongFocus);
    m_right->insertWidget(0, bar, 0, Qt::AlignLeft);
    return bar;
}

void Tab::refitShownCharts(const QList<ChartPanel*>& charts)
{
    // The FP8 accumulation controls, cut at the column's edge at 1280 x 800 before this.
    fitControlsColumn(true);
    QList<QChart*> shown;
    for (ChartPanel* chart : charts)
        if (auto* view = qobject_cast<ChartViewPanel*>(chart)) {
            view->chart()->setProperty("scalelab_tickedSize", QVariant());
            shown << view->chart();
        }
    // Once the grid has laid them out.
    QTimer::singleShot(0, this, [shown] {
        for (QChart* chart : shown)
            fitChartTexts(chart);
    });
}

BackgroundRunner* Tab::sideRunner()
{
    if (!m_sideRunner) {
        // It runs on while the user moves sliders: the window's thread goes first.
        m_sideRunner = new BackgroundRunner(this, BackgroundRunner::Priority::Low);
        connect(m_sideRunner, &BackgroundRunner::delivered, this, &Tab::refreshed);
    }
    return m_sideRunner;
}

BackgroundRunner* Tab::runner()
{
    if (!m_runner) {
        m_runner = new BackgroundRunner(this);
        connect(m_runner, &BackgroundRunner::delivered, this, &Tab::refreshed);
    }
    return m_runner;
}

const std::atomic<bool>* Tab::backgroundStop()
{
    return runner()->stopFlag();
}

void Tab::computeInBackground(std::function<std::function<void()>()> work)
{
    runner()->run([this, work = std::move(work)]() -> std::function<void()> {
        try {
            std::function<void()> apply = work();
            return [this, apply = std::move(apply)] {
                apply();
                showError({});
            };
        } catch (const core::Stopped&) {
            return {}; // superseded: the runner drops this result
        } catch (const std::exception&) {
            return [this, failed = describeFailure(std::current_exception())] {
                showError(failed.first, failed.second);
            };
        }
    });
}

} // namespace scalelab::ui
