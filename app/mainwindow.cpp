#include "mainwindow.h"

#include "common/chartexport.h"
#include "common/chartpanel.h"
#include "tabs/tab.h"
#include "tabs/tabs.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

namespace scalelab::app {

MainWindow::MainWindow(const core::Scenario& scenario, QWidget* parent)
    : QMainWindow(parent)
    , m_scenario(scenario)
    , m_tabWidget(new QTabWidget(this))
{
    setWindowTitle(tr("ScaleLab: training at scale"));
    m_tabWidget->setObjectName("tabs");
    m_tabWidget->setDocumentMode(true);
    setCentralWidget(m_tabWidget);
    for (ui::Tab* tab : ui::createTabs()) {
        tab->setScenario(m_scenario);
        tab->refreshNow();
        m_tabs << tab;
        m_tabWidget->addTab(tab, tab->title());
        connect(tab, &ui::Tab::scenarioChanged, this,
                [this, tab] { tab->writeScenario(m_scenario); });
        for (ui::ChartPanel* chart : tab->charts())
            chart->installEventFilter(this);
    }
    buildMenus();
    statusBar()->showMessage(tr("Move a slider or type a value: every chart follows."));
    restoreSettings();
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* exportOne =
        file->addAction(tr("&Export current chart..."), this, &MainWindow::askExportCurrent);
    exportOne->setShortcut(QKeySequence(tr("Ctrl+E")));
    QAction* exportAll =
        file->addAction(tr("Export &all charts..."), this, &MainWindow::askExportAll);
    exportAll->setShortcut(QKeySequence(tr("Ctrl+Shift+E")));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    m_fullScreen = view->addAction(tr("&Full screen"));
    m_fullScreen->setCheckable(true);
    m_fullScreen->setShortcut(QKeySequence(Qt::Key_F11));
    connect(m_fullScreen, &QAction::toggled, this, [this](bool on) {
        if (on)
            showFullScreen();
        else
            showNormal();
    });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* about = help->addAction(tr("&About ScaleLab"), this, &MainWindow::showAbout);
    about->setMenuRole(QAction::AboutRole);
}

ui::Tab* MainWindow::currentTab() const
{
    return qobject_cast<ui::Tab*>(m_tabWidget->currentWidget());
}

ui::ChartPanel* MainWindow::currentChart() const
{
    ui::Tab* tab = currentTab();
    if (!tab || tab->charts().isEmpty())
        return nullptr;
    return m_lastChart.value(tab, tab->charts().first());
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event)
{
    // A click or focus on a chart makes it the one "Export current chart" writes.
    if (event->type() == QEvent::MouseButtonPress || event->type() == QEvent::FocusIn) {
        if (auto* chart = qobject_cast<ui::ChartPanel*>(watched))
            if (ui::Tab* tab = currentTab(); tab && tab->charts().contains(chart))
                m_lastChart.insert(tab, chart);
    }
    return QMainWindow::eventFilter(watched, event);
}

QString MainWindow::exportCurrentChart(const QString& path, const QSize& size)
{
    if (ui::Tab* tab = currentTab())
        tab->waitForIdle(); // export what the inputs say, not a result still on its way
    ui::ChartPanel* chart = currentChart();
    if (!chart)
        return tr("this tab has no chart");
    const auto format = ui::imageFormatFromName(QFileInfo(path).suffix().toLower());
    if (!format)
        return tr("cannot write %1: the name must end in .png, .svg or .pdf").arg(path);
    return ui::exportCharts({ui::ExportJob{chart, path, *format, size}});
}

QString MainWindow::exportAllCharts(const QString& folder, QStringList* written)
{
    QList<ui::ExportJob> jobs;
    for (ui::Tab* tab : m_tabs)
        tab->waitForIdle();
    for (ui::Tab* tab : m_tabs)
        for (ui::ChartPanel* chart : tab->charts())
            for (auto format : {ui::ImageFormat::Png, ui::ImageFormat::Svg, ui::ImageFormat::Pdf})
                jobs.append(
                    {chart,
                     QDir(folder).filePath(chart->name() + '.' + ui::imageFormatName(format)),
                     format,
                     {1600, 1000}});
    const QString error = ui::exportCharts(jobs);
    if (error.isEmpty() && written)
        for (const ui::ExportJob& job : jobs)
            *written << job.path;
    return error;
}

void MainWindow::askExportCurrent()
{
    ui::ChartPanel* chart = currentChart();
    if (!chart)
        return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export chart"), QDir::home().filePath(chart->name() + ".png"),
        tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"));
    if (path.isEmpty())
        return;
    const QString error = exportCurrentChart(path);
    if (error.isEmpty())
        statusBar()->showMessage(tr("Wrote %1 (1600 x 1000)").arg(path), 8000);
    else
        QMessageBox::warning(this, tr("Export failed"), error);
}

void MainWindow::askExportAll()
{
    const QString folder =
        QFileDialog::getExistingDirectory(this, tr("Export every chart into"), QDir::homePath());
    if (folder.isEmpty())
        return;
    QStringList written;
    const QString error = exportAllCharts(folder, &written);
    if (error.isEmpty())
        statusBar()->showMessage(
            tr("Wrote %n file(s) into %1", nullptr, static_cast<int>(written.size())).arg(folder),
            8000);
    else
        QMessageBox::warning(this, tr("Export failed"), error);
}

void MainWindow::showAbout()
{
    QMessageBox::about(
        this, tr("About ScaleLab"),
        tr("<h3>ScaleLab %1</h3>"
           "<p>Interactive lessons on training large models at scale: memory accounting, "
           "data parallelism and ZeRO, tensor, pipeline and expert parallelism, and FP8.</p>"
           "<p>Every figure comes from ScaleLab's core; <tt>scalelab report</tt> prints the same "
           "figures as JSON and <tt>scalelab export</tt> draws the same charts.</p>")
            .arg(QApplication::applicationVersion()));
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    if (!restoreGeometry(settings.value("window/geometry").toByteArray()))
        resize(QSize(1800, 1000).boundedTo(screen()->availableSize() * 0.95));
    const QString tab = settings.value("window/tab").toString();
    for (int i = 0; i < m_tabs.size(); ++i)
        if (m_tabs[i]->name() == tab)
            m_tabWidget->setCurrentIndex(i);
}

void MainWindow::saveSettings() const
{
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    if (ui::Tab* tab = currentTab())
        settings.setValue("window/tab", tab->name());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    saveSettings();
    event->accept();
}

} // namespace scalelab::app
