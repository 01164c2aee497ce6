#pragma once

#include "fields.h"
#include "figureslabel.h"
#include "parametercontrol.h"
#include "scalelab/core/scenario.h"
#include "scenariodocument.h"

#include <QList>
#include <QString>
#include <QWidget>
#include <atomic>

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QFormLayout;
class QGridLayout;
class QLabel;
class QScrollArea;
class QTabBar;
class QTimer;
class QVBoxLayout;
QT_END_NAMESPACE

namespace scalelab::ui {

class BackgroundRunner;
class ChartPanel;
class ExplanationPanel;
class FiguresLine;

/// One topic of the window: a view of one section of the scenario document. It builds its
/// controls (from the section's field table) and chart series once; a control sends its edit to
/// the document, and when the document says the section changed (an edit, undo, redo, a file)
/// the tab shows the document's values in its controls and schedules one recompute: several
/// slider steps inside one turn of the event loop cost one core call and one redraw. A tab
/// keeps no copy of its inputs.
///
/// Every tab has the same face: a column of grouped controls on the left; on the right a line
/// of live figures, the charts in a grid, and a line for refused input.
class Tab : public QWidget {
    Q_OBJECT

public:
    /// A view of `section` of `document`; with no document the tab makes one of its own (a tab
    /// on its own in a test or an export).
    Tab(document::ScenarioDocument* document, core::Section section, QWidget* parent = nullptr);

    document::ScenarioDocument* document() const { return m_document; }
    /// The scenario the tab shows: the document's.
    const core::Scenario& scenario() const { return m_document->scenario(); }
    core::Section section() const { return m_section; }

    /// The scenario section and export name: "memory", "zero", ...
    QString name() const;
    /// The tab's title in the window.
    virtual QString title() const = 0;
    /// Every chart, in the order they are exported.
    virtual QList<ChartPanel*> charts() const = 0;

    /// Replaces the document's scenario with `scenario` (one undo step) and redraws.
    void setScenario(const core::Scenario& scenario);

    /// Recomputes and redraws at once (the live loop calls it through a zero-delay timer).
    void refreshNow();
    /// Whether the tab has not drawn its inputs yet: made with its first drawing left until
    /// it is shown (createTabs, FirstDrawing::WhenShown). Showing it, waitForIdle() or
    /// refreshNow() draws them.
    bool undrawn() const { return m_undrawn; }

    /// While one lives, every tab made leaves its first drawing until it is shown or waited
    /// for (createTabs). One thread (the GUI's) makes tabs.
    class FirstDrawingScope {
    public:
        explicit FirstDrawingScope(bool whenShown)
            : m_before(s_drawWhenShown)
        {
            s_drawWhenShown = whenShown;
        }
        ~FirstDrawingScope() { s_drawWhenShown = m_before; }
        FirstDrawingScope(const FirstDrawingScope&) = delete;
        FirstDrawingScope& operator=(const FirstDrawingScope&) = delete;

    private:
        bool m_before;
    };
    /// Whether a recompute is scheduled, or running on a worker thread, and not shown yet.
    bool refreshPending() const;
    /// refreshPending() without the side computation (sideRunner()): whether the charts'
    /// own recompute is still to be shown. A benchmark times a slider step with it while a
    /// side computation (the plan's layout search) runs on.
    bool chartsPending() const;
    /// Whether the charts show a quick preview of a slider's move that the exact figures will
    /// replace by themselves once the slider rests (the FP8 tab's large matrices); not counted
    /// by refreshPending(), which a slider step waits for. waitForIdle() brings the exact ones.
    virtual bool refinementPending() const { return false; }
    /// Runs a scheduled recompute now and waits for any background result (exports, tests),
    /// calling catchUp() before the wait and after it; then sets the explanation's values, all
    /// of them.
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
    FiguresLabel* figuresLabel() const { return m_figures; }
    /// The line under the charts that names refused input; hidden when all is well.
    QLabel* messageLabel() const { return m_message; }

    /// One line naming the inputs behind the charts, for captions under exported images:
    /// "Memory budget: Parameters 7B parameters, Batch 1 sequences, ...".
    virtual QString caption() const;
    /// Applies the current chart style (fonts, line widths, background) to every chart again.
    void restyleCharts();

    /// Brings `widget`, one of this tab's charts or controls, on show: a tab that shows its
    /// charts in parts shows the part that holds it (a lesson step outlining it).
    virtual void reveal(QWidget* widget) { Q_UNUSED(widget); }

    /// The live values the explanation text substitutes for its {{name}} placeholders
    /// (resources/explanations/<name>.html); called after every refresh.
    virtual QHash<QString, QString> explanationValues() const { return {}; }
    /// The explanation beside the charts (created on the first refresh), or null.
    ExplanationPanel* explanation() const { return m_explanation; }
    /// Shows or hides the explanation beside the charts.
    void setExplanationVisible(bool visible);

signals:
    /// A control refused typed text; `message` says which, why, and the value kept.
    void inputRefused(const QString& message);
    /// Charts and figures now show the current inputs.
    void refreshed();

protected:
    /// A titled group in the controls column; add controls to the returned layout.
    QVBoxLayout* addGroup(const QString& title);
    /// The control of field `key` ("memory.layers": label, range, tooltip from the field table)
    /// in `group`, showing the document's value; the user's change goes to the document.
    ParameterControl* addControl(QVBoxLayout* group, const QString& key);
    /// A check box for flag field `key`, bound the same way.
    QCheckBox* addCheckBox(QVBoxLayout* group, const QString& key);
    /// A combo box for choice field `key`, as a row of `form`, bound the same way.
    QComboBox* addChoice(QFormLayout* form, const QString& key);
    /// A parameter control for something that is not a scenario input (a view's own setting),
    /// set to `initial`; the tab connects to it itself.
    ParameterControl* addViewControl(QVBoxLayout* group, const ParameterSpec& spec, double initial);
    /// Adds to `group` a button that shows and hides `content` (rarely changed controls),
    /// then `content` itself, hidden until the button is pressed.
    void addDisclosure(QVBoxLayout* group, const QString& text, QWidget* content,
                       const QString& accessibleName);
    /// The accelerator's memory: a "Memory" row in `form` choosing a common size (24, 40, 80,
    /// 141 GB, Other) and, under `form` in `group`, the exact capacity control
    /// "<section>.accelerator_gb", the two kept in step. Add `form` to `group` first.
    ParameterControl* addAcceleratorMemory(QVBoxLayout* group, QFormLayout* form,
                                           const QString& section, QComboBox*& box);
    /// A chart's readable width, in characters of chart type (setCharts).
    static constexpr int kMinChartChars = 58;
    /// The most of a tab's width its controls column takes with each control in one row; a
    /// wider column goes compact (fitControlsColumn).
    static constexpr double kControlsShare = 0.35;
    /// A property of a row of the controls column (a QBoxLayout) whose widgets stand one over
    /// the other while the controls are compact.
    static constexpr const char* kStackWhenCompact = "scalelab_stackWhenCompact";
    /// Places the charts in a grid of at most `columns` under the figures line. Charts are
    /// never squeezed below a readable size (kMinChartChars x kMinChartLines of chart text):
    /// when the window is too narrow, or the type large (projector mode), they take fewer
    /// columns, and the chart area scrolls rather than shrinking them further.
    /// `minChars` raises the readable width for charts with long labels. With Lead::Row the
    /// first chart takes a whole row of its own, its height to another row's as `leadStretch`
    /// to 2 (the pipeline's Gantt, 3 to 2, over its two smaller charts). With Lead::Column it
    /// takes the first column, as tall as the others stacked in the second (the experts'
    /// heatmap beside its two bar charts), while there is room for two columns; in one column
    /// the charts simply stack.
    enum class Lead { None, Row, Column };
    void setCharts(const QList<ChartPanel*>& charts, int columns = 2, int minChars = kMinChartChars,
                   Lead lead = Lead::None, int leadStretch = 2);
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void hideEvent(QHideEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    /// A tab behind another asks for no room: QTabWidget's minimum is the largest of its
    /// pages', so the widest tab would keep the window wider than a small screen while a
    /// narrow one is on show.
    QSize minimumSizeHint() const override;
    /// For a tab that shows its charts in parts: a bar above the figures line with one tab
    /// per part (its title and tooltip), named `objectName` (the scenario key that stores the
    /// part) and reached by Tab like any control. The tab connects to its currentChanged.
    QTabBar* addPartBar(const QString& objectName, const QString& accessibleName,
                        const QList<std::pair<QString, QString>>& parts);
    /// Charts coming back from a hidden part were fitted (ticks, legend, wrapped texts) to a
    /// size they no longer have: fitted again at their first layout in the grid. The controls
    /// column is measured again too: a part shows controls of its own, which may be wider.
    void refitShownCharts(const QList<ChartPanel*>& charts);
    /// The right-hand column, for a tab's extra widgets (a step slider, a table).
    QVBoxLayout* chartsColumn() const { return m_right; }
    /// Where a row of the chart area goes (addChartRow).
    enum class ChartRow { Above, Below };
    /// A widget of the chart area that is not a chart (a diagram, a table, a note): a row
    /// across the whole area, above or under the chart grid, scrolling with the charts. The
    /// area is as tall as the charts' readable height plus each shown row's least height at
    /// the area's width, so on a small screen the area scrolls instead of squeezing the
    /// charts to a sliver to make room for the row. `stretch` shares out the height a tall
    /// window gives beyond that, against the grid's 1.
    void addChartRow(QWidget* widget, ChartRow where, int stretch = 0);

    /// Sets a control from a scenario value without signals, widening its range when a file
    /// asks for more than the slider offers (a scenario value is never silently clamped).
    static void loadValue(ParameterControl* control, double value);

    /// Called after the controls show a changed section, before the refresh: for what the
    /// field bindings do not cover (a preset box that names the current values, enabled states).
    virtual void sectionShown() { }
    /// Brings charts that are not on show up to date: a tab that shows its charts in parts
    /// may draw only the part on show at each refresh, and compute only what that part needs.
    /// Called by waitForIdle() before its wait (to start such work) and after it (to draw
    /// what arrived), so exports and tests see every chart drawn.
    virtual void catchUp() { }
    /// Ends a tab's constructor: draws its inputs at once, or leaves them undrawn (undrawn())
    /// inside a FirstDrawingScope that says so.
    void drawFirst();
    /// Calls core and updates the charts. Throws core::InputError for inputs core refuses.
    virtual void recompute() = 0;
    /// Schedules one recompute in this turn of the event loop.
    void scheduleRefresh();
    /// For sections too heavy for one frame: called from recompute(), runs `work` on a worker
    /// thread and the function it returns on the GUI thread, newest request only. An
    /// InputError thrown by `work` shows in the message line like one from recompute().
    /// `work` may read backgroundStop() and throw core::Stopped: its result was superseded.
    void computeInBackground(std::function<std::function<void()>()> work);
    /// True while the job computeInBackground runs has been superseded by a newer request
    /// (BackgroundRunner::stopFlag); a long job passes it to core to give up early.
    const std::atomic<bool>* backgroundStop();
    /// A second worker for a computation beside the charts' (the plan's layout search) that
    /// must not supersede theirs: the tab owns it, refreshPending() and waitForIdle() count its
    /// requests, and each result it delivers announces refreshed(). Made on the first call, at
    /// low priority (BackgroundRunner::Priority::Low): the window's thread goes first.
    BackgroundRunner* sideRunner();
    /// Shows the document's values in every bound control (signals blocked), then
    /// sectionShown(), then schedules a refresh.
    void showSection();

private:
    void showError(const QString& message, Failure failure = Failure::BadInput);
    /// The worker of computeInBackground, made on the first call.
    BackgroundRunner* runner();
    /// After a refresh: the explanation follows within kExplanationDelayMs, so a slider drag
    /// redraws its charts every frame and sets the text (a whole rich-text layout) ten times a
    /// second at most; a hidden explanation waits until it is shown.
    void scheduleExplanation();
    void updateExplanation();
    void placeExplanation(); ///< adds the new explanation panel to the tab's layout
    /// Whether the explanation goes under the charts rather than beside them: beside, it would
    /// leave the charts less than one readable chart's width (a 1280 px projector in large
    /// type), and they would scroll sideways, cut at the right.
    bool explanationBelow() const;
    /// The width below which a chart's titles, ticks and legend no longer fit (setCharts'
    /// characters of chart type).
    int readableChartWidth() const;
    /// Moves the explanation under the charts or back beside them, as explanationBelow says.
    void followExplanationPlace();

    static constexpr int kExplanationDelayMs = 100;
    static constexpr int kMinChartLines = 20;
    /// The width of a choice box, in characters: the first words of its choice.
    static constexpr int kChoiceChars = 22;
    /// The same in a compact controls column (the name over each row): its widest item, so
    /// held to fewer characters; the open list still shows every choice whole.
    static constexpr int kCompactChoiceChars = 16;

public:
    /// How many columns the charts are in now.
    int chartColumns() const { return m_columns; }

private:
    /// Lays the charts out again if the room or the type size asks for another column count.
    void arrangeCharts(bool force = false);
    /// Rows of the chart grid at `columns` columns (the lead chart, when it spans, a row alone).
    int chartRows(int columns) const;
    /// The chart grid's least height: `rows` rows of at least `minHeight` each (a chart's own
    /// least height, or its height for the width of a column of `minWidth`, where more).
    int gridLeastHeight(int rows, int minWidth, int minHeight) const;
    /// Gives the controls column the width its controls need at the current type size: each
    /// control in one row where that row takes at most kControlsShare of the tab's width,
    /// otherwise compact (the name over the row), so the charts keep their room on a
    /// classroom screen in large type. `measure` measures the one-row width again (new type).
    void fitControlsColumn(bool measure = false);

    /// A control, check box or combo box showing one field.
    struct Binding {
        const document::Field* field;
        QWidget* widget;
    };
    void bind(const document::Field* field, QWidget* widget);
    void showBinding(const Binding& binding);

    document::ScenarioDocument* m_document;
    core::Section m_section;
    QList<Binding> m_bindings;
    QTimer* m_timer;
    bool m_undrawn = false; ///< made without drawing its inputs; drawn when shown (drawFirst)
    static inline bool s_drawWhenShown = false; ///< set by a FirstDrawingScope
    QTimer* m_explanationTimer;
    bool m_explanationStale = false;
    bool m_hasNoExplanation = false;
    BackgroundRunner* m_runner = nullptr;
    BackgroundRunner* m_sideRunner = nullptr;
    QVBoxLayout* m_controlsColumn;
    QScrollArea* m_scroll;
    QVBoxLayout* m_right;
    QGridLayout* m_grid;
    QScrollArea* m_chartScroll;
    QWidget* m_chartArea; ///< in m_chartScroll: the rows above, m_gridBox, the rows below
    QVBoxLayout* m_areaColumn = nullptr;
    QWidget* m_gridBox = nullptr; ///< holds m_grid; never lower than its charts' readable height
    QList<QWidget*> m_chartRows; ///< addChartRow's
    QList<ChartPanel*> m_charts;
    int m_maxColumns = 2;
    int m_minChartChars = kMinChartChars;
    int m_columns = 0;
    Lead m_lead = Lead::None; ///< where the first chart goes (setCharts)
    int m_leadStretch = 2; ///< the lead row's stretch; every other row's is 2
    FiguresLine* m_figuresLine; ///< holds m_figures
    FiguresLabel* m_figures;
    QLabel* m_message;
    QList<ParameterControl*> m_controls;
    bool m_compactControls = false;
    int m_rowControlsWidth = 0; ///< the controls column's width with every control in one row
    int m_alignedCompact = -1; ///< the arrangement the controls were last aligned for, or -1
    ExplanationPanel* m_explanation = nullptr;
    bool m_explanationVisible = true;
    bool m_explanationIsBelow = false;
    int m_explanationMaxWidth = 0; ///< beside the charts, in the type it was made in
    Failure m_failure = Failure::None;
};

} // namespace scalelab::ui
