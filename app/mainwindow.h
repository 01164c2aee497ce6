#pragma once

#include "scalelab/core/scenario.h"

#include <QMainWindow>

QT_BEGIN_NAMESPACE
class QAction;
class QTabWidget;
QT_END_NAMESPACE

namespace scalelab::ui {
class ChartPanel;
class Tab;
} // namespace scalelab::ui

namespace scalelab::app {

/// The window: one tab per topic over one scenario, the File/View/Help menus and the status
/// bar. Geometry and the current tab come back on the next start.
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(const core::Scenario& scenario, QWidget* parent = nullptr);

    /// The scenario as the tabs hold it now.
    const core::Scenario& scenario() const { return m_scenario; }
    QList<ui::Tab*> tabs() const { return m_tabs; }
    ui::Tab* currentTab() const;
    /// The chart "Export current chart" writes: the one last clicked in the current tab, or
    /// its first.
    ui::ChartPanel* currentChart() const;

    /// Writes the current chart to `path` (format from the extension) at `size`; returns an
    /// error line, empty on success. The menu action asks for the path and calls this.
    QString exportCurrentChart(const QString& path, const QSize& size = {1600, 1000});
    /// Writes every chart of every tab into `folder` in every format; returns an error line,
    /// empty on success, and the written paths in `written`.
    QString exportAllCharts(const QString& folder, QStringList* written = nullptr);

protected:
    void closeEvent(QCloseEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void buildMenus();
    void restoreSettings();
    void saveSettings() const;
    void askExportCurrent();
    void askExportAll();
    void showAbout();

    core::Scenario m_scenario;
    QTabWidget* m_tabWidget = nullptr;
    QList<ui::Tab*> m_tabs;
    QHash<ui::Tab*, ui::ChartPanel*> m_lastChart;
    QAction* m_fullScreen = nullptr;
};

} // namespace scalelab::app
