#include "mainwindow.h"

#include "chartexport.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "exercisesdialog.h"
#include "focusring.h"
#include "lesson.h"
#include "lessonbar.h"
#include "lessoneditor.h"
#include "parametercontrol.h"
#include "presets.h"
#include "scenariodocument.h"
#include "scenariojson.h"
#include "tab.h"
#include "tabs.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QImage>
#include <QJsonDocument>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QSaveFile>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>
#include <QUndoStack>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <functional>

namespace scalelab::app {

using namespace scalelab::document;

MainWindow::MainWindow(const core::Scenario& scenario, QWidget* parent)
    : QMainWindow(parent)
    , m_document(new document::ScenarioDocument(scenario, this))
    , m_tabWidget(new QTabWidget(this))
    , m_baseFont(QApplication::font())
{
    setWindowTitle(tr("ScaleLab: training at scale"));
    m_tabWidget->setObjectName("tabs");
    m_tabWidget->setDocumentMode(true);
    // Each page holds its tab once the tab is first shown or asked for (makeTab): only the tab
    // on show is made and drawn before the window first paints, the others after (event).
    for (const QString& title : ui::tabTitles()) {
        auto* page = new QWidget;
        auto* holder = new QVBoxLayout(page);
        holder->setContentsMargins(0, 0, 0, 0);
        m_tabWidget->addTab(page, title);
        m_tabs << nullptr;
    }
    // The lesson bar sits above the tabs, hidden until a lesson plays; made first, so that it
    // follows every tab as it is made.
    auto* central = new QWidget(this);
    auto* column = new QVBoxLayout(central);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(0);
    m_lessonBar = new LessonBar(this);
    connect(m_tabWidget, &QTabWidget::currentChanged, this, [this](int index) {
        if (index >= 0)
            makeTab(index);
    });
    makeTab(m_tabWidget->currentIndex());
    column->addWidget(m_lessonBar);
    column->addWidget(m_tabWidget, 1);
    setCentralWidget(central);
    buildMenus();
    ui::FocusRing::follow(this);
    statusBar()->showMessage(tr("Move a slider or type a value: every chart follows."));
    restoreSettings();
}

const core::Scenario& MainWindow::scenario() const
{
    return m_document->scenario();
}

QUndoStack* MainWindow::undoStack() const
{
    return m_document->undoStack();
}

void MainWindow::setScenario(const core::Scenario& scenario, const QString& what)
{
    m_document->replace(scenario, what);
}

QString MainWindow::openScenarioFile(const QString& path)
{
    QJsonObject object;
    try {
        object = readScenarioObject(path);
        const core::Scenario scenario = scenarioFromJson(object);
        setScenario(scenario, tr("Open %1").arg(QFileInfo(path).fileName()));
    } catch (const core::InputError& e) {
        return describeInputError(path, e, object);
    }
    addRecentFile(path);
    const QString title = object.value("title").toString();
    statusBar()->showMessage(
        title.isEmpty() ? tr("Opened %1").arg(path) : tr("Opened %1: %2").arg(path, title), 8000);
    return {};
}

void MainWindow::startLesson(const document::Lesson& lesson)
{
    m_lessonBar->start(lesson);
}

QString MainWindow::openLessonFile(const QString& path)
{
    QJsonObject object;
    try {
        object = readLessonObject(path);
        startLesson(lessonFromJson(object));
    } catch (const core::InputError& e) {
        return describeInputError(path, e, object);
    }
    return {};
}

void MainWindow::playBuiltInLesson()
{
    const QString error = openLessonFile(kBuiltInLesson);
    if (!error.isEmpty()) // only a broken build gets here; the tests read the file
        QMessageBox::warning(this, tr("Cannot play the lesson"), error);
}

void MainWindow::askOpenLesson()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open lesson"), QDir::homePath(),
                                                      tr("ScaleLab lesson (*.lesson.json *.json)"));
    if (path.isEmpty())
        return;
    const QString error = openLessonFile(path);
    if (!error.isEmpty())
        QMessageBox::warning(this, tr("Cannot open lesson"),
                             tr("%1\n\nNothing was changed.").arg(error));
}

QString MainWindow::saveScenarioFile(const QString& path)
{
    // A file ScaleLab would refuse to open again is not written: the line names the input to
    // change (the tab shows the same message under its charts).
    try {
        core::validate(scenario());
    } catch (const core::InputError& e) {
        return tr("cannot save %1: %2").arg(path, describeInputError({}, e));
    }
    QSaveFile file(path);
    const QByteArray json =
        QJsonDocument(scenarioToJson(scenario())).toJson(QJsonDocument::Indented);
    if (!file.open(QIODevice::WriteOnly) || file.write(json) != json.size() || !file.commit())
        return tr("cannot write %1: %2").arg(path, file.errorString());
    addRecentFile(path);
    statusBar()->showMessage(tr("Saved %1").arg(path), 8000);
    return {};
}

QString MainWindow::restoreLastScenario()
{
    QSettings settings;
    if (settings.status() != QSettings::NoError)
        return tr("The saved settings could not be read; ScaleLab starts from the defaults.");
    const QByteArray saved = settings.value("state/scenario").toByteArray();
    if (saved.isEmpty())
        return {};
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(saved, &error);
    try {
        if (error.error != QJsonParseError::NoError || !document.isObject())
            throw core::InputError("", "a JSON object");
        m_document->load(scenarioFromJson(document.object()));
    } catch (const core::InputError& e) {
        return tr("The last session's state could not be restored (%1); ScaleLab starts from "
                  "the defaults.")
            .arg(describeInputError({}, e, document.object()));
    }
    return {};
}

void MainWindow::resetCurrentTab()
{
    // Only this tab's section goes back to the defaults; the others keep what they show.
    if (ui::Tab* tab = currentTab())
        m_document->resetSection(tab->section(), tr("Reset %1").arg(tab->title()));
}

void MainWindow::setCaptionsOnExports(bool on)
{
    m_captions = on;
    if (auto* a = findChild<QAction*>("view.captions"); a && a->isChecked() != on)
        a->setChecked(on);
}

void MainWindow::setChartBackground(int background)
{
    const int b = std::clamp(background, 0, 2);
    ui::setChartBackground(static_cast<ui::ChartBackground>(b));
    if (auto* a = findChild<QAction*>(QString("view.background.%1").arg(b)))
        a->setChecked(true);
    for (ui::Tab* tab : std::as_const(m_tabs))
        if (tab) // a tab made later takes the style then
            tab->restyleCharts();
}

MainWindow::~MainWindow()
{
    if (QApplication::font() != m_baseFont)
        QApplication::setFont(m_baseFont);
    ui::setLineScale(1.0);
}

void MainWindow::setProjectorMode(bool on)
{
    const bool changed = m_projector != on;
    m_projector = on;
    if (m_projectorAction && m_projectorAction->isChecked() != on)
        m_projectorAction->setChecked(on);
    applyFont();
    setExplanationsVisible(on ? m_explanationsOnProjector : m_explanationsOnDesk);
    if (changed && on && !m_explanationsOnProjector)
        statusBar()->showMessage(tr("Projector mode: large type; F1 shows the explanations."),
                                 10000);
}

void MainWindow::setTextSizeStep(int step)
{
    m_textStep = std::clamp(step, -4, 8);
    applyFont();
}

void MainWindow::applyFont()
{
    // Projector mode: 1.6 times the type, and never under 20 px (kProjectorPixels); lines
    // 1.7 times as thick; every chart restyles itself when the application font changes.
    QFont font = m_baseFont;
    const qreal base = m_baseFont.pointSizeF() > 0 ? m_baseFont.pointSizeF() : 10.0;
    // On a projector, type of at least 20 pixels (what reads from the back of a room at
    // 1920 x 1080), however small the desktop's own type.
    const qreal dpi = screen() ? screen()->logicalDotsPerInchY() : 96.0;
    const qreal projector = std::max(base * 1.6, kProjectorPixels * 72.0 / dpi);
    font.setPointSizeF((m_projector ? projector : base) * std::pow(1.12, m_textStep));
    ui::setLineScale(m_projector ? 1.7 : 1.0);
    QApplication::setFont(font);
    if (m_lessonBar)
        m_lessonBar->followTypeSize();
}

void MainWindow::buildMenus()
{
    buildFileMenu();
    buildEditMenu();
    buildPresetsMenu();
    buildViewMenu();
    buildHelpMenu();
}

void MainWindow::buildFileMenu()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open scenario..."), this, &MainWindow::askOpen);
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    updateRecentMenu();
    QAction* save = file->addAction(tr("&Save scenario as..."), this, &MainWindow::askSave);
    save->setShortcut(QKeySequence::Save);
    file->addSeparator();
    file->addAction(tr("Open &lesson..."), this, &MainWindow::askOpenLesson)
        ->setShortcut(QKeySequence(tr("Ctrl+L")));
    file->addAction(tr("E&dit lesson..."), this, [this] {
        lessonEditor()->show();
        lessonEditor()->raise();
    });
    file->addAction(tr("Add current state to lesson"), this,
                    [this] {
                        lessonEditor()->addCurrentState();
                        lessonEditor()->show();
                    })
        ->setShortcut(QKeySequence(tr("Ctrl+Shift+L")));
    file->addSeparator();
    QAction* exportOne =
        file->addAction(tr("&Export current chart..."), this, &MainWindow::askExportCurrent);
    exportOne->setShortcut(QKeySequence(tr("Ctrl+E")));
    QAction* exportAll =
        file->addAction(tr("Export &all charts..."), this, &MainWindow::askExportAll);
    exportAll->setShortcut(QKeySequence(tr("Ctrl+Shift+E")));
    QAction* copy = file->addAction(tr("&Copy current chart"), this, &MainWindow::copyCurrentChart);
    copy->setShortcut(QKeySequence(tr("Ctrl+Shift+C")));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);
}

void MainWindow::buildEditMenu()
{
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence(tr("Ctrl+Z")));
    QAction* redo = undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts({QKeySequence(tr("Ctrl+Shift+Z")), QKeySequence(tr("Ctrl+Y"))});
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    edit->addAction(tr("Reset &tab to defaults"), this, &MainWindow::resetCurrentTab);
}

void MainWindow::buildViewMenu()
{
    QMenu* view = menuBar()->addMenu(tr("&View"));
    m_projectorAction = view->addAction(tr("&Projector mode"));
    m_projectorAction->setCheckable(true);
    m_projectorAction->setShortcut(QKeySequence(Qt::Key_F5));
    connect(m_projectorAction, &QAction::toggled, this, &MainWindow::setProjectorMode);
    QAction* larger =
        view->addAction(tr("&Larger text"), this, [this] { setTextSizeStep(m_textStep + 1); });
    larger->setShortcuts({QKeySequence(tr("Ctrl+=")), QKeySequence(tr("Ctrl++"))});
    QAction* smaller =
        view->addAction(tr("&Smaller text"), this, [this] { setTextSizeStep(m_textStep - 1); });
    smaller->setShortcut(QKeySequence(tr("Ctrl+-")));
    view->addAction(tr("&Normal text size"), this, [this] { setTextSizeStep(0); })
        ->setShortcut(QKeySequence(tr("Ctrl+0")));
    QMenu* background = view->addMenu(tr("Chart &background"));
    auto* backgrounds = new QActionGroup(this);
    const QStringList names = {tr("&System colours (light or dark)"), tr("&White, for slides"),
                               tr("&Transparent, for slides")};
    for (int i = 0; i < names.size(); ++i) {
        QAction* a = background->addAction(names[i]);
        a->setCheckable(true);
        a->setData(i);
        a->setObjectName(QString("view.background.%1").arg(i));
        backgrounds->addAction(a);
        connect(a, &QAction::triggered, this, [this, i] { setChartBackground(i); });
    }
    QAction* captions = view->addAction(tr("&Caption on exported charts"));
    captions->setCheckable(true);
    captions->setObjectName("view.captions");
    connect(captions, &QAction::toggled, this, &MainWindow::setCaptionsOnExports);
    view->addSeparator();
    m_fullScreen = view->addAction(tr("&Full screen"));
    m_fullScreen->setCheckable(true);
    m_fullScreen->setShortcut(QKeySequence(Qt::Key_F11));
    connect(m_fullScreen, &QAction::toggled, this, [this](bool on) {
        if (on)
            showFullScreen();
        else
            showNormal();
    });

    m_explanationsAction = view->addAction(tr("&Explanations"));
    m_explanationsAction->setCheckable(true);
    m_explanationsAction->setChecked(true);
    m_explanationsAction->setShortcut(QKeySequence(Qt::Key_F1));
    connect(m_explanationsAction, &QAction::toggled, this, &MainWindow::setExplanationsVisible);
    view->addSeparator();
    addTabSwitching(view);
}

void MainWindow::addTabSwitching(QMenu* view)
{
    // Window actions, so they work wherever focus is: a table, a slider or a spin box would
    // otherwise take Ctrl+Tab or Ctrl+Page Down for themselves and the tab bar never sees them.
    const auto step = [this](int by) {
        const int n = m_tabWidget->count();
        if (n > 0)
            m_tabWidget->setCurrentIndex((m_tabWidget->currentIndex() + by + n) % n);
    };
    QAction* next = view->addAction(tr("Ne&xt tab"), this, [step] { step(1); });
    next->setObjectName("view.next_tab");
    next->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::Key_Tab), QKeySequence(Qt::CTRL | Qt::Key_PageDown)});
    QAction* previous = view->addAction(tr("Pre&vious tab"), this, [step] { step(-1); });
    previous->setObjectName("view.previous_tab");
    previous->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Backtab),
                            QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Tab),
                            QKeySequence(Qt::CTRL | Qt::Key_PageUp)});
}

void MainWindow::buildHelpMenu()
{
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("E&xercises..."), this,
                    [this] {
                        exercises()->show();
                        exercises()->raise();
                    })
        ->setShortcut(QKeySequence(tr("Ctrl+Shift+X")));
    help->addAction(tr("&Play the chapter's lesson"), this, &MainWindow::playBuiltInLesson)
        ->setObjectName("help.lesson");
    QAction* about = help->addAction(tr("&About ScaleLab"), this, &MainWindow::showAbout);
    about->setMenuRole(QAction::AboutRole);
}

void MainWindow::buildPresetsMenu()
{
    QMenu* presets = menuBar()->addMenu(tr("&Presets"));
    QMenu* chapter = presets->addMenu(tr("The chapter's &exercises"));
    QMenu* models = presets->addMenu(tr("Real &models"));
    models->setToolTipsVisible(true);
    models->setEnabled(!document::presetIds().isEmpty());
    // Filled when the menu first opens: reading the exercises and every model's file is work
    // the first window does not need (none of these entries has a shortcut).
    connect(presets, &QMenu::aboutToShow, this, [this, chapter, models] {
        if (chapter->isEmpty())
            fillPresetsMenu(chapter, models);
    });
}

void MainWindow::fillPresetsMenu(QMenu* chapter, QMenu* models)
{
    const QList<Exercise> exercises = loadExercises();
    for (int i = 0; i < exercises.size(); ++i)
        chapter->addAction(tr("%1 %2").arg(exercises[i].id, exercises[i].title), this,
                           [this, i] { this->exercises()->setUp(i); });
    for (const Preset& p : loadPresets()) {
        QAction* a = models->addAction(p.title, this, [this, id = p.id] {
            const QString error = loadPreset(id);
            if (!error.isEmpty())
                QMessageBox::warning(this, tr("Cannot load preset"), error);
        });
        a->setToolTip(p.source);
        a->setStatusTip(p.source);
    }
}

QString MainWindow::loadPreset(const QString& id)
{
    for (const Preset& p : loadPresets()) {
        if (p.id != id)
            continue;
        try {
            setScenario(presetScenario(p.object), tr("Preset %1").arg(p.title));
        } catch (const core::InputError& e) {
            return describeInputError(":/presets/" + id + ".json", e, p.object);
        }
        // Every model preset is a training plan; a preset without one opens its first section.
        QString tab = "plan";
        if (!p.object.contains(tab)) {
            const QStringList names = ui::tabNames();
            const auto first = std::find_if(names.begin(), names.end(),
                                            [&](const QString& n) { return p.object.contains(n); });
            tab = first != names.end() ? *first : names.first();
        }
        showTab(tab);
        statusBar()->showMessage(tr("%1. Source: %2").arg(p.title, p.source), 15000);
        return {};
    }
    return tr("no preset named %1").arg(id);
}

void MainWindow::addRecentFile(const QString& path)
{
    QSettings settings;
    QStringList recent = settings.value("recent/files").toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    settings.setValue("recent/files", recent.mid(0, 8));
    updateRecentMenu();
}

void MainWindow::updateRecentMenu()
{
    if (!m_recentMenu)
        return;
    m_recentMenu->clear();
    const QStringList recent = QSettings().value("recent/files").toStringList();
    for (const QString& path : recent)
        m_recentMenu
            ->addAction(QFileInfo(path).fileName(), this,
                        [this, path] {
                            const QString error = openScenarioFile(path);
                            if (!error.isEmpty())
                                QMessageBox::warning(this, tr("Cannot open scenario"), error);
                        })
            ->setToolTip(path);
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::askOpen()
{
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open scenario"), QDir::homePath(),
                                     tr("ScaleLab scenario (*.scalelab.json *.json)"));
    if (path.isEmpty())
        return;
    const QString error = openScenarioFile(path);
    if (!error.isEmpty())
        QMessageBox::warning(this, tr("Cannot open scenario"),
                             tr("%1\n\nNothing was changed.").arg(error));
}

void MainWindow::askSave()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save scenario"), QDir::home().filePath("scenario.scalelab.json"),
        tr("ScaleLab scenario (*.scalelab.json *.json)"));
    if (path.isEmpty())
        return;
    const QString error = saveScenarioFile(path);
    if (!error.isEmpty())
        QMessageBox::warning(this, tr("Cannot save scenario"), error);
}

void MainWindow::copyCurrentChart()
{
    ui::ChartPanel* chart = currentChart();
    if (!chart)
        return;
    if (ui::Tab* tab = currentTab())
        tab->waitForIdle();
    const QSize size(1600, 1000);
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(ui::chartBackgroundColor());
    QPainter painter(&image);
    ui::paintChart(painter, *chart, size, m_captions ? currentTab()->caption() : QString());
    painter.end();
    QApplication::clipboard()->setImage(image);
    statusBar()->showMessage(tr("Copied %1 to the clipboard (1600 x 1000)").arg(chart->name()),
                             6000);
}

void MainWindow::showTab(const QString& name)
{
    const int index = ui::tabNames().indexOf(name);
    if (index >= 0)
        m_tabWidget->setCurrentIndex(index);
}

void MainWindow::setExplanationsVisible(bool visible)
{
    (m_projector ? m_explanationsOnProjector : m_explanationsOnDesk) = visible;
    for (ui::Tab* tab : std::as_const(m_tabs))
        if (tab) // a tab made later is told then (makeTab)
            tab->setExplanationVisible(visible);
    if (m_explanationsAction && m_explanationsAction->isChecked() != visible)
        m_explanationsAction->setChecked(visible);
}

LessonEditor* MainWindow::lessonEditor()
{
    if (!m_lessonEditor) {
        m_lessonEditor = new LessonEditor(this);
        if (!m_lessonBar->lesson().steps.empty())
            m_lessonEditor->setLesson(m_lessonBar->lesson());
    }
    return m_lessonEditor;
}

ExercisesDialog* MainWindow::exercises()
{
    if (!m_exercises)
        m_exercises = new ExercisesDialog(this);
    return m_exercises;
}

ui::Tab* MainWindow::currentTab() const
{
    const int index = m_tabWidget->currentIndex();
    return index >= 0 ? m_tabs[index] : nullptr; // the tab on show is always made
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

bool MainWindow::event(QEvent* event)
{
    // The window paints first, then every widget on show in the same pass: a zero-delay timer
    // set now fires after that pass.
    const bool firstPaint = event->type() == QEvent::Paint && !m_painted;
    const bool handled = QMainWindow::event(event);
    // After the tab bar has its new font too (every widget hears of a new font in turn).
    if (event->type() == QEvent::Resize || event->type() == QEvent::FontChange
        || event->type() == QEvent::Show)
        QMetaObject::invokeMethod(this, &MainWindow::fitTabTitles, Qt::QueuedConnection);
    if (firstPaint) {
        m_painted = true;
        QTimer::singleShot(0, this, &MainWindow::drawNextUndrawnTab);
    }
    return handled;
}

void MainWindow::fitTabTitles()
{
    const QStringList whole = ui::tabTitles();
    const QStringList brief = ui::tabShortTitles();
    QTabBar* bar = m_tabWidget->tabBar();
    const QFontMetrics metrics(bar->font());
    // The bar is its tabs' titles and the style's padding around each.
    int needed = bar->sizeHint().width();
    for (int i = 0; i < bar->count(); ++i)
        needed += metrics.horizontalAdvance(whole[i]) - metrics.horizontalAdvance(bar->tabText(i));
    const bool fits = needed <= m_tabWidget->width();
    for (int i = 0; i < bar->count(); ++i) {
        const QString title = fits ? whole[i] : brief[i];
        if (bar->tabText(i) == title)
            continue;
        bar->setTabText(i, title);
        bar->setTabToolTip(i, fits ? QString() : whole[i]);
        bar->setAccessibleTabName(i, whole[i]);
    }
}

void MainWindow::drawNextUndrawnTab()
{
    const auto undrawn = std::find_if(m_tabs.cbegin(), m_tabs.cend(),
                                      [](const ui::Tab* tab) { return !tab || tab->undrawn(); });
    if (undrawn == m_tabs.cend())
        return;
    makeTab(int(undrawn - m_tabs.cbegin()))->refreshNow();
    QTimer::singleShot(0, this, &MainWindow::drawNextUndrawnTab);
}

ui::Tab* MainWindow::makeTab(int index)
{
    if (ui::Tab* made = m_tabs[index])
        return made;
    // Made in a hidden page and shown with it, as every tab made ahead is: a tab fits its
    // controls column when first shown, laid out at its width.
    QWidget* page = m_tabWidget->widget(index);
    const bool onShow = page->isVisible();
    if (onShow)
        page->hide();
    ui::Tab* tab = ui::createTab(index, m_document, page, ui::FirstDrawing::WhenShown);
    m_tabs[index] = tab;
    tab->setExplanationVisible(m_projector ? m_explanationsOnProjector : m_explanationsOnDesk);
    connect(tab, &ui::Tab::inputRefused, this,
            [this](const QString& message) { statusBar()->showMessage(message, 10000); });
    for (ui::ChartPanel* chart : tab->charts())
        chart->installEventFilter(this);
    m_lessonBar->follow(tab);
    page->layout()->addWidget(tab);
    if (onShow)
        page->show(); // the tab draws before it first paints
    return tab;
}

QList<ui::Tab*> MainWindow::tabs() const
{
    // Making a tab changes what the window holds, not what it shows or means.
    auto* self = const_cast<MainWindow*>(this);
    for (int i = 0; i < m_tabs.size(); ++i)
        self->makeTab(i);
    return m_tabs;
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
    const QList<ui::Tab*> all = tabs();
    for (ui::Tab* tab : all)
        tab->waitForIdle();
    for (ui::Tab* tab : all)
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

namespace {

/// A yes/no setting as this program writes it (true/false), or `fallback` for anything else: a
/// hand-edited "banana" must not turn projector mode on.
bool boolSetting(const QSettings& settings, const QString& key, bool fallback)
{
    const QVariant value = settings.value(key);
    if (value.typeId() == QMetaType::Bool)
        return value.toBool();
    const QString text = value.toString().trimmed().toLower();
    if (text == "true" || text == "1")
        return true;
    if (text == "false" || text == "0")
        return false;
    return fallback;
}

/// A whole-number setting in lo..hi, or `fallback` when absent, not a number or out of range.
int intSetting(const QSettings& settings, const QString& key, int fallback, int lo, int hi)
{
    bool ok = false;
    const int value = settings.value(key).toString().trimmed().toInt(&ok);
    return ok && value >= lo && value <= hi ? value : fallback;
}

} // namespace

void MainWindow::restoreSettings()
{
    QSettings settings;
    if (!restoreGeometry(settings.value("window/geometry").toByteArray()))
        resize(QSize(1800, 1000).boundedTo(screen()->availableSize() * 0.95));
    const QString tab = settings.value("window/tab").toString();
    if (const int index = ui::tabNames().indexOf(tab); index >= 0)
        m_tabWidget->setCurrentIndex(index);
    m_textStep = intSetting(settings, "view/textStep", 0, -4, 8);
    m_explanationsOnDesk = boolSetting(settings, "view/explanations", true);
    m_explanationsOnProjector = boolSetting(settings, "view/projectorExplanations", false);
    setProjectorMode(boolSetting(settings, "view/projector", false));
    setCaptionsOnExports(boolSetting(settings, "view/captions", false));
    setChartBackground(intSetting(settings, "view/background", 1, 0, 2));
}

void MainWindow::saveSettings() const
{
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    if (ui::Tab* tab = currentTab())
        settings.setValue("window/tab", tab->name());
    settings.setValue("view/projector", m_projector);
    settings.setValue("view/textStep", m_textStep);
    settings.setValue("view/explanations", m_explanationsOnDesk);
    settings.setValue("view/projectorExplanations", m_explanationsOnProjector);
    settings.setValue("view/captions", m_captions);
    settings.setValue("view/background", static_cast<int>(ui::chartBackground()));
    settings.setValue("state/scenario",
                      QJsonDocument(scenarioToJson(scenario())).toJson(QJsonDocument::Compact));
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    // The next start brings back the teacher's own state, not a lesson step.
    m_lessonBar->leave();
    saveSettings();
    event->accept();
}

} // namespace scalelab::app
