#include "tab.h"

#include "common/backgroundrunner.h"
#include "common/chartpanel.h"
#include "common/chartstyle.h"
#include "common/explanationpanel.h"
#include "common/figureslabel.h"

#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

namespace scalelab::ui {

ParameterSpec makeSpec(const QString& key, const QString& label, const QString& symbol,
                       const QString& unit, const QString& description, double minimum,
                       double maximum, ParameterSpec::Scale scale)
{
    ParameterSpec s;
    s.key = key;
    s.label = label;
    s.symbol = symbol;
    s.unit = unit;
    s.description = description;
    s.minimum = minimum;
    s.maximum = maximum;
    s.scale = scale;
    s.suffixes = scale == ParameterSpec::Scale::Log;
    return s;
}

Tab::Tab(QWidget* parent)
    : QWidget(parent)
    , m_timer(new QTimer(this))
    , m_explanationTimer(new QTimer(this))
    , m_controlsColumn(new QVBoxLayout)
    , m_scroll(new QScrollArea(this))
    , m_right(new QVBoxLayout)
    , m_grid(new QGridLayout)
    , m_figures(new FiguresLabel(this))
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

    m_figures->setObjectName("figures");
    m_figures->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->setObjectName("message");
    m_message->setWordWrap(true);
    m_message->setStyleSheet("color: #b00000; font-weight: bold;");
    m_message->hide();

    m_right->addWidget(m_figures);
    m_right->addLayout(m_grid, 1);
    m_right->addWidget(m_message);
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(m_scroll);
    layout->addLayout(m_right, 1);
    connect(this, &Tab::refreshed, this, &Tab::scheduleExplanation);
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
        m_explanation->setMaximumWidth(fontMetrics().averageCharWidth() * 52);
        m_explanation->setVisible(m_explanationVisible);
        layout()->addWidget(m_explanation);
    }
    m_explanation->setValues(explanationValues());
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
            restyleChart(view->chart());
        chart->update();
    }
}

void Tab::setExplanationVisible(bool visible)
{
    m_explanationVisible = visible;
    if (m_explanation)
        m_explanation->setVisible(visible);
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

ParameterControl* Tab::addControl(QVBoxLayout* group, const ParameterSpec& spec, double initial)
{
    auto* c = new ParameterControl(spec);
    c->setValue(initial);
    m_controls << c;
    group->addWidget(c);
    connect(c, &ParameterControl::valueChanged, this, &Tab::inputEdited);
    ParameterControl::alignColumns(m_controls);
    // The column is as wide as its widest row, never squeezed by the charts.
    m_scroll->setMinimumWidth(m_scroll->widget()->sizeHint().width() + 24);
    return c;
}

void Tab::inputEdited()
{
    readControls();
    scheduleRefresh();
    emit scenarioChanged();
}

void Tab::setCharts(const QList<ChartPanel*>& charts, int columns)
{
    for (int i = 0; i < charts.size(); ++i)
        m_grid->addWidget(charts[i], i / columns, i % columns);
    for (int c = 0; c < columns; ++c)
        m_grid->setColumnStretch(c, 1);
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
    return m_timer->isActive() || (m_runner && m_runner->busy());
}

void Tab::waitForIdle()
{
    if (m_timer->isActive())
        refreshNow();
    if (m_runner)
        m_runner->waitForIdle();
    if (m_explanationTimer->isActive())
        updateExplanation();
}

void Tab::showError(const QString& message)
{
    // The charts keep the last good state; the message says which input is refused.
    // Touched only on a change: even hiding a hidden label makes the layout measure again.
    if (m_message->text() != message)
        m_message->setText(message);
    if (m_message->isVisibleTo(this) == message.isEmpty())
        m_message->setVisible(!message.isEmpty());
}

void Tab::refreshNow()
{
    m_timer->stop();
    try {
        recompute();
        showError({});
    } catch (const core::InputError& e) {
        showError(QString::fromStdString(e.what()));
    }
    // A background computation announces itself when its result is shown.
    if (!m_runner || !m_runner->busy())
        emit refreshed();
}

void Tab::computeInBackground(std::function<std::function<void()>()> work)
{
    if (!m_runner) {
        m_runner = new BackgroundRunner(this);
        connect(m_runner, &BackgroundRunner::delivered, this, &Tab::refreshed);
    }
    m_runner->run([this, work = std::move(work)]() -> std::function<void()> {
        try {
            std::function<void()> apply = work();
            return [this, apply = std::move(apply)] {
                apply();
                showError({});
            };
        } catch (const core::InputError& e) {
            return [this, message = QString::fromStdString(e.what())] {
                showError(message);
            };
        } catch (const std::bad_alloc&) {
            return [this] {
                showError(tr("Not enough memory for these inputs."));
            };
        }
    });
}

} // namespace scalelab::ui
