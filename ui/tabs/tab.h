#pragma once

#include "common/parametercontrol.h"
#include "scalelab/core/scenario.h"

#include <QList>
#include <QString>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QComboBox;
class QFormLayout;
class QGridLayout;
class QLabel;
class QScrollArea;
class QTimer;
class QVBoxLayout;
QT_END_NAMESPACE

namespace scalelab::ui {

class BackgroundRunner;
class ChartPanel;
class ExplanationPanel;

/// A ParameterSpec in one call; `suffixes` follows a log scale (counts such as 7B).
ParameterSpec makeSpec(const QString& key, const QString& label, const QString& symbol,
                       const QString& unit, const QString& description, double minimum,
                       double maximum, ParameterSpec::Scale scale = ParameterSpec::Scale::Linear);

/// One topic of the window. A tab owns its section of the scenario, builds its controls and
/// chart series once, and on any change schedules one recompute: several slider steps inside
/// one turn of the event loop cost one core call and one redraw.
///
/// Every tab has the same face: a column of grouped controls on the left; on the right a line
/// of live figures, the charts in a grid, and a line for refused input.
class Tab : public QWidget {
    Q_OBJECT

public:
    explicit Tab(QWidget* parent = nullptr);

    /// The scenario section and export name: "memory", "zero", ...
    virtual QString name() const = 0;
    /// The tab's title in the window.
    virtual QString title() const = 0;
    /// Every chart, in the order they are exported.
    virtual QList<ChartPanel*> charts() const = 0;

    /// Loads this tab's section of `scenario` into its controls and redraws.
    virtual void setScenario(const core::Scenario& scenario) = 0;
    /// Writes this tab's section into `scenario`.
    virtual void writeScenario(core::Scenario& scenario) const = 0;

    /// Recomputes and redraws at once (the live loop calls it through a zero-delay timer).
    void refreshNow();
    /// Whether a recompute is scheduled, or running on a worker thread, and not shown yet.
    bool refreshPending() const;
    /// Runs a scheduled recompute now and waits for any background result (exports, tests).
    void waitForIdle();

    /// Why the last refresh drew nothing new: the charts still show the last good inputs.
    enum class Failure { None, BadInput, OutOfResources };
    Failure failure() const { return m_failure; }
    /// The message line of a failed refresh ("memory.layers: expected ..."), empty otherwise.
    QString failureMessage() const;

    /// The control whose spec key is `key` ("memory.layers"), or null.
    ParameterControl* control(const QString& key) const;
    /// Every parameter control, in the order they were added.
    QList<ParameterControl*> controls() const { return m_controls; }
    /// The line of live figures above the charts.
    QLabel* figuresLabel() const { return m_figures; }
    /// The line under the charts that names refused input; hidden when all is well.
    QLabel* messageLabel() const { return m_message; }

    /// One line naming the inputs behind the charts, for captions under exported images:
    /// "Memory budget: Parameters 7B parameters, Batch 1 sequences, ...".
    virtual QString caption() const;
    /// Applies the current chart style (fonts, line widths, background) to every chart again.
    void restyleCharts();

    /// The live values the explanation text substitutes for its {{name}} placeholders
    /// (resources/explanations/<name>.html); called after every refresh.
    virtual QHash<QString, QString> explanationValues() const { return {}; }
    /// The explanation beside the charts (created on the first refresh), or null.
    ExplanationPanel* explanation() const { return m_explanation; }
    /// Shows or hides the explanation beside the charts.
    void setExplanationVisible(bool visible);

signals:
    /// The user changed an input (after the tab's own section has been updated).
    void scenarioChanged();
    /// A control refused typed text; `message` says which, why, and the value kept.
    void inputRefused(const QString& message);
    /// Charts and figures now show the current inputs.
    void refreshed();

protected:
    /// A titled group in the controls column; add controls to the returned layout.
    QVBoxLayout* addGroup(const QString& title);
    /// A parameter control set to `initial` in `group`. A change by the user calls
    /// readControls(), schedules a refresh and emits scenarioChanged().
    ParameterControl* addControl(QVBoxLayout* group, const ParameterSpec& spec, double initial);
    /// Adds to `group` a button that shows and hides `content` (rarely changed controls),
    /// then `content` itself, hidden until the button is pressed.
    void addDisclosure(QVBoxLayout* group, const QString& text, QWidget* content,
                       const QString& accessibleName);
    /// The accelerator's memory: a "Memory" row in `form` choosing a common size (24, 40, 80,
    /// 141 GB, Other) and, under `form` in `group`, the exact capacity control
    /// "<section>.accelerator_gb", the two kept in step. Add `form` to `group` first.
    ParameterControl* addAcceleratorMemory(QVBoxLayout* group, QFormLayout* form,
                                           const QString& section, QComboBox*& box);
    /// Places the charts in a grid of at most `columns` under the figures line. Charts are
    /// never squeezed below a readable size (kMinChartChars x kMinChartLines of chart text):
    /// when the window is too narrow, or the type large (projector mode), they take fewer
    /// columns, and the chart area scrolls rather than shrinking them further.
    /// `minChars` raises the readable width for charts with long labels.
    void setCharts(const QList<ChartPanel*>& charts, int columns = 2,
                   int minChars = kMinChartChars);
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;
    /// The right-hand column, for a tab's extra widgets (a step slider, a table).
    QVBoxLayout* chartsColumn() const { return m_right; }

    /// Sets a control from a scenario value without signals, widening its range when a file
    /// asks for more than the slider offers (a scenario value is never silently clamped).
    static void loadValue(ParameterControl* control, double value);

    /// Copies the controls into the tab's input struct; called after every user change.
    virtual void readControls() = 0;
    /// Calls core and updates the charts. Throws core::InputError for inputs core refuses.
    virtual void recompute() = 0;
    /// Schedules one recompute in this turn of the event loop.
    void scheduleRefresh();
    /// For sections too heavy for one frame: called from recompute(), runs `work` on a worker
    /// thread and the function it returns on the GUI thread, newest request only. An
    /// InputError thrown by `work` shows in the message line like one from recompute().
    void computeInBackground(std::function<std::function<void()>()> work);
    /// The user changed something that is not a parameter control (a combo box, a check box).
    void inputEdited();

private:
    void showError(const QString& message, Failure failure = Failure::BadInput);
    /// After a refresh: the explanation follows within kExplanationDelayMs, so a slider drag
    /// redraws its charts every frame and sets the text (a whole rich-text layout) ten times a
    /// second at most; a hidden explanation waits until it is shown.
    void scheduleExplanation();
    void updateExplanation();

    static constexpr int kExplanationDelayMs = 100;
    static constexpr int kMinChartChars = 48;
    static constexpr int kMinChartLines = 16;

public:
    /// How many columns the charts are in now.
    int chartColumns() const { return m_columns; }

private:
    /// Lays the charts out again if the room or the type size asks for another column count.
    void arrangeCharts(bool force = false);
    /// Gives the controls column the width its controls need at the current type size.
    void fitControlsColumn();

    QTimer* m_timer;
    QTimer* m_explanationTimer;
    bool m_explanationStale = false;
    bool m_hasNoExplanation = false;
    BackgroundRunner* m_runner = nullptr;
    QVBoxLayout* m_controlsColumn;
    QScrollArea* m_scroll;
    QVBoxLayout* m_right;
    QGridLayout* m_grid;
    QScrollArea* m_chartScroll;
    QWidget* m_chartArea;
    QList<ChartPanel*> m_charts;
    int m_maxColumns = 2;
    int m_minChartChars = kMinChartChars;
    int m_columns = 0;
    QLabel* m_figures;
    QLabel* m_message;
    QList<ParameterControl*> m_controls;
    ExplanationPanel* m_explanation = nullptr;
    bool m_explanationVisible = true;
    Failure m_failure = Failure::None;
};

} // namespace scalelab::ui
