#pragma once

#include "scalelab/core/scenario.h"

#include <QHash>
#include <QMainWindow>

QT_BEGIN_NAMESPACE
class QAction;
class QMenu;
class QTabWidget;
class QUndoStack;
QT_END_NAMESPACE

namespace scalelab::document {
class ScenarioDocument;
struct Lesson;
} // namespace scalelab::document

namespace scalelab::ui {
class ChartPanel;
class Tab;
} // namespace scalelab::ui

namespace scalelab::app {

class LessonBar;

/// The window: one tab per topic, each a view of one scenario document; File (scenarios, exports),
/// Edit (undo, redo, reset), View (projector mode, text size, full screen) and Help menus; a status
/// bar. Geometry, the current tab, recent files, text size and the last scenario come back on the
/// next start.
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(const core::Scenario& scenario = {}, QWidget* parent = nullptr);
    /// Gives the application back the type and line width it had before this window: a
    /// window made after this one (a test, a second window) starts from the system's type, not
    /// from projector type grown again.
    ~MainWindow() override;

    /// The scenario every tab shows: the document's.
    const core::Scenario& scenario() const;
    document::ScenarioDocument* scenarioDocument() const { return m_document; }
    /// Shows `scenario` in every tab as one undoable step.
    void setScenario(const core::Scenario& scenario, const QString& what);
    /// Every tab, in order: those not made yet are made now (a tab is made when first shown,
    /// or after the window's first paint).
    QList<ui::Tab*> tabs() const;
    /// The tab on show (always made).
    ui::Tab* currentTab() const;
    /// The tab at `index` if it is made, or null (for tests: tabs() makes every tab).
    ui::Tab* madeTab(int index) const { return m_tabs.value(index); }
    /// Brings the tab named `name` ("memory", ...) to the front.
    void showTab(const QString& name);
    /// Shows or hides the explanation beside every tab's charts.
    void setExplanationsVisible(bool visible);
    /// Loads a preset (a real model's shape and layout) as one undoable step; returns an error
    /// line, empty on success.
    QString loadPreset(const QString& id);
    /// Plays `lesson` in the lesson bar above the tabs (docs/LESSONS.md).
    void startLesson(const document::Lesson& lesson);
    /// Reads a lesson file and plays it; on bad input returns the error line (file and JSON
    /// path) and changes nothing.
    QString openLessonFile(const QString& path);
    /// Plays the built-in lesson "Training at Scale".
    void playBuiltInLesson();
    /// The lesson editor (made on first use; the last lesson played, if it starts empty).
    class LessonEditor* lessonEditor();
    /// The lesson player (hidden while no lesson plays).
    LessonBar* lessonBar() const { return m_lessonBar; }
    /// The exercises window (made on first use).
    class ExercisesDialog* exercises();
    /// The chart "Export current chart" writes: the one last clicked in the current tab, or
    /// its first.
    ui::ChartPanel* currentChart() const;
    QUndoStack* undoStack() const;

    /// Reads a scenario file into every tab; on bad input returns the error line and leaves
    /// the current state untouched.
    QString openScenarioFile(const QString& path);
    /// Writes the current scenario (every key) through QSaveFile; returns an error line, also
    /// when the scenario holds an input core refuses (such a file would not open again).
    QString saveScenarioFile(const QString& path);
    /// Brings back the scenario saved when the window last closed. Returns a message when the
    /// saved state could not be used (the defaults stay), empty otherwise.
    QString restoreLastScenario();
    /// Puts the current tab's section back to the documented defaults (undoable).
    void resetCurrentTab();

    /// Larger type and thicker lines for a room; `on` also remembered for the next start.
    void setProjectorMode(bool on);
    bool projectorMode() const { return m_projector; }
    /// The smallest type projector mode allows, in pixels.
    static constexpr double kProjectorPixels = 20.0;
    /// Text size steps: 0 is the system size, each step about 12% larger or smaller.
    void setTextSizeStep(int step);
    int textSizeStep() const { return m_textStep; }

    /// Writes the current chart to `path` (format from the extension) at `size`; returns an
    /// error line, empty on success. The menu action asks for the path and calls this.
    QString exportCurrentChart(const QString& path, const QSize& size = {1600, 1000});
    /// Writes every chart of every tab into `folder` in every format; returns an error line,
    /// empty on success, and the written paths in `written`.
    QString exportAllCharts(const QString& folder, QStringList* written = nullptr);
    /// Puts the current chart on the clipboard as an image of 1600 x 1000.
    void copyCurrentChart();
    /// Whether exports and copies carry a caption with the inputs that produced them.
    void setCaptionsOnExports(bool on);
    /// System palette, white or transparent behind every chart, on screen and in exports.
    void setChartBackground(int background);

protected:
    void closeEvent(QCloseEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;
    bool event(QEvent* event) override;

private:
    /// Draws the first tab still undrawn (Tab::undrawn), then comes back for the next on the
    /// event loop's next turn: after the window's first paint, the tabs not on show draw one
    /// at a time, each a short wait at most for a click or key.
    void drawNextUndrawnTab();
    /// The tab bar's titles: the whole ones ("Memory budget") when they fit the window's width,
    /// else the short ones ("Memory"), the whole one then in each tab's tooltip; never a title
    /// cut or scrolled off the bar.
    void fitTabTitles();
    /// The tab at `index`, made now if it was not yet: put in its page, wired to the window
    /// and the lesson bar, with the window's explanation setting.
    ui::Tab* makeTab(int index);
    void buildMenus();
    void buildFileMenu();
    void buildEditMenu();
    void buildPresetsMenu();
    void fillPresetsMenu(QMenu* chapter, QMenu* models);
    void buildViewMenu();
    /// Next and previous tab (Ctrl+Tab, Ctrl+Page Down and back), into `view`.
    void addTabSwitching(QMenu* view);
    void buildHelpMenu();
    void applyFont();
    void restoreSettings();
    void saveSettings() const;
    void addRecentFile(const QString& path);
    void updateRecentMenu();
    void askOpen();
    void askOpenLesson();
    void askSave();
    void askExportCurrent();
    void askExportAll();
    void showAbout();

    document::ScenarioDocument* m_document;
    QTabWidget* m_tabWidget = nullptr;
    LessonBar* m_lessonBar = nullptr;
    QList<ui::Tab*> m_tabs; ///< by page; null until made (makeTab)
    bool m_painted = false; ///< the window has painted once (event)
    QHash<ui::Tab*, ui::ChartPanel*> m_lastChart;
    QMenu* m_recentMenu = nullptr;
    QAction* m_fullScreen = nullptr;
    QAction* m_projectorAction = nullptr;
    QAction* m_explanationsAction = nullptr;
    class ExercisesDialog* m_exercises = nullptr;
    class LessonEditor* m_lessonEditor = nullptr;
    QFont m_baseFont;
    bool m_projector = false;
    /// Whether explanations are shown, remembered for each mode: on the desk they are shown
    /// by default; in projector mode they step aside so the charts get the room (F1 brings them
    /// back, and that choice is remembered for the next time).
    bool m_explanationsOnDesk = true;
    bool m_explanationsOnProjector = false;
    int m_textStep = 0;
    bool m_captions = false;
};

} // namespace scalelab::app
