// The main window: tabs, menus, settings and exports from the File menu's code path.

#include "chartpanel.h"
#include "chartstyle.h"
#include "exercises.h"
#include "exercisesdialog.h"
#include "explanationpanel.h"
#include "fields.h"
#include "focusring.h"
#include "fp8tab.h"
#include "mainwindow.h"
#include "memorytab.h"
#include "parametercontrol.h"
#include "presets.h"
#include "report.h"
#include "scenariojson.h"
#include "tabs.h"
#include "testhelpers.h"

#include <QAbstractItemView>
#include <QAccessible>
#include <QAction>
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QFontInfo>
#include <QHeaderView>
#include <QImage>
#include <QJsonObject>
#include <QLabel>
#include <QLayout>
#include <QMap>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSlider>
#include <QStandardPaths>
#include <QTabBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QToolButton>
#include <QUndoStack>
#include <algorithm>
#include <cmath>

using namespace scalelab;

namespace {

/// tabReachesEveryControlAndLeavesEveryTable's part for a tab with every disclosure open, in
/// the window's own type and in projector mode.
constexpr int kOpenDisclosures = -2;
constexpr int kProjectorOpenDisclosures = -3;

/// Every widget of the window that shows a scenario field (a parameter control, a check box, a
/// combo box named by its field's key), with the value it shows.
QMap<QString, double> shownValues(const app::MainWindow& w)
{
    QMap<QString, double> values;
    for (ui::Tab* tab : w.tabs())
        for (QWidget* widget : tab->findChildren<QWidget*>()) {
            if (!document::findField(widget->objectName()))
                continue;
            if (auto* control = qobject_cast<ui::ParameterControl*>(widget))
                values.insert(widget->objectName(), control->value());
            else if (auto* box = qobject_cast<QCheckBox*>(widget))
                values.insert(widget->objectName(), box->isChecked() ? 1 : 0);
            else if (auto* combo = qobject_cast<QComboBox*>(widget))
                values.insert(widget->objectName(), combo->currentIndex());
            else if (auto* bar = qobject_cast<QTabBar*>(widget))
                values.insert(widget->objectName(), bar->currentIndex());
        }
    return values;
}

/// Moves `widget` off the value it shows as a user would (a slider step, a click, the next
/// item); false when nothing it offers changes it.
bool moveOff(QWidget* widget, const QMap<QString, double>& defaults, const app::MainWindow& w)
{
    const QString key = widget->objectName();
    // Off the default, and to a scenario core accepts (heads 33 does not divide hidden 4096).
    const auto moved = [&] {
        try {
            core::validate(w.scenario());
        } catch (const core::InputError&) {
            return false;
        }
        return shownValues(w).value(key) != defaults.value(key);
    };
    if (auto* control = qobject_cast<ui::ParameterControl*>(widget)) {
        // As typed into the spin box: double, half, one more, one less, the ends.
        const double v = control->value();
        const double step = control->spinBox()->singleStep();
        for (double other :
             {v * 2, v / 2, v + step, v - step, control->spec().maximum, control->spec().minimum}) {
            control->setValue(other);
            if (moved())
                return true;
        }
        control->setValue(v);
        return false;
    }
    if (auto* box = qobject_cast<QCheckBox*>(widget)) {
        box->click();
        if (moved())
            return true;
        box->click();
        return false;
    }
    if (auto* combo = qobject_cast<QComboBox*>(widget)) {
        for (int i = 1; i < combo->count() && !moved(); ++i)
            combo->setCurrentIndex((combo->currentIndex() + 1) % combo->count());
        return moved();
    }
    if (auto* bar = qobject_cast<QTabBar*>(widget)) {
        bar->setCurrentIndex((bar->currentIndex() + 1) % bar->count());
        return moved();
    }
    return false;
}

} // namespace

class TstMainWindow : public QObject {
    Q_OBJECT

    /// The focus ring surrounds the focused widget.
    void checkFocusShows(const app::MainWindow& w, QWidget* focused)
    {
        ui::FocusRing* ring = ui::FocusRing::of(&w);
        QVERIFY2(ring && ring->isVisible() && ring->widget() == focused,
                 qPrintable(focused->objectName() + " shows no focus"));
        const QRect around = ring->geometry();
        const QRect widget(focused->mapTo(ring->parentWidget(), QPoint(0, 0)), focused->size());
        QVERIFY2(around.contains(widget) && around != widget,
                 qPrintable(focused->objectName() + ": the ring does not surround it"));
    }

    /// In the controls column, each stop is level with or below the one before it. The walk
    /// starts at the first parameter, which may sit below a preset box: the column's stops are
    /// then one downward run read from its top stop, round the end of the walk.
    void checkVisualOrder(ui::Tab* tab, const QList<QWidget*>& visited)
    {
        QWidget* column = tab->controls().first();
        const auto inScrollArea = [](QWidget* widget) {
            QWidget* viewport = widget->parentWidget();
            return viewport && qobject_cast<QScrollArea*>(viewport->parentWidget());
        };
        while (column && !inScrollArea(column))
            column = column->parentWidget();
        QVERIFY(column);
        QList<QWidget*> stops;
        for (QWidget* widget : visited)
            if (column->isAncestorOf(widget))
                stops << widget;
        const auto place = [column](QWidget* widget) {
            return QRect(widget->mapTo(column, QPoint(0, 0)), widget->size());
        };
        // No stop is cut by the column's right edge (the column has no sideways scroll bar).
        const int shown = column->parentWidget()->width(); // the scroll area's viewport
        for (QWidget* widget : std::as_const(stops))
            QVERIFY2(place(widget).right() < shown,
                     qPrintable(QString("%1 (%2) reaches x %3, past the column's %4")
                                    .arg(widget->objectName(), widget->metaObject()->className())
                                    .arg(place(widget).right())
                                    .arg(shown)));
        // Going up from one stop to the next happens once, where the walk goes round from the
        // column's last stop to its first; the largest such jump is that one.
        const auto rise = [&](qsizetype i) {
            const qsizetype before = (i + stops.size() - 1) % stops.size();
            return place(stops[before]).top() - place(stops[i]).center().y();
        };
        QList<qsizetype> upward;
        for (qsizetype i = 0; i < stops.size(); ++i)
            if (rise(i) > 0)
                upward << i;
        std::sort(upward.begin(), upward.end(),
                  [&](qsizetype a, qsizetype b) { return rise(a) > rise(b); });
        for (qsizetype k = 1; k < upward.size(); ++k) {
            const QWidget* widget = stops[upward[k]];
            const QWidget* before = stops[(upward[k] + stops.size() - 1) % stops.size()];
            QFAIL(qPrintable(QString("%1 (%2) comes after %3 (%4) but sits above it")
                                 .arg(widget->objectName(), widget->metaObject()->className(),
                                      before->objectName(), before->metaObject()->className())));
        }
    }

private slots:
    void initTestCase() { test::useOwnSettings("tst_mainwindow"); }

    void oneTabPerBuiltTopicAndTheMenus()
    {
        app::MainWindow w{core::Scenario{}};
        QCOMPARE(w.tabs().size(), ui::tabNames().size());
        for (int i = 0; i < w.tabs().size(); ++i)
            QCOMPARE(w.tabs()[i]->name(), ui::tabNames()[i]);
        QStringList actions;
        for (QAction* menu : w.menuBar()->actions())
            for (QAction* a : menu->menu()->actions())
                if (!a->isSeparator())
                    actions << a->text().remove('&');
        for (const char* expected : {"Export current chart...", "Export all charts...", "Quit",
                                     "Full screen", "About ScaleLab"})
            QVERIFY2(actions.contains(expected), qPrintable(expected));
    }

    void everyExplanationOpensAtItsTop()
    {
        // Whichever tab the window opens on, its explanation starts at its heading. Opened on
        // the pipeline tab, the first show used to scroll the text 11 px down: the browser
        // showed its (unused) cursor in a viewport not yet laid out, and the heading was cut.
        for (int i = 0; i < int(ui::tabNames().size()); ++i) {
            app::MainWindow w{core::Scenario{}};
            w.resize(1800, 1000);
            w.findChild<QTabWidget*>()->setCurrentIndex(i);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            test::settle(*w.currentTab());
            QCoreApplication::processEvents();
            const auto* text = w.currentTab()->findChild<QTextBrowser*>();
            QVERIFY2(text && text->isVisible(), qPrintable(w.currentTab()->name()));
            QVERIFY2(text->verticalScrollBar()->value() == 0,
                     qPrintable(QString("%1 opens %2 px down")
                                    .arg(w.currentTab()->name())
                                    .arg(text->verticalScrollBar()->value())));
        }
    }

    void onlyTheTabOnShowIsMadeAndDrawnBeforeTheFirstPaint()
    {
        const int count = int(ui::tabNames().size());
        // Made, not shown: only the tab on show is made, and it has computed nothing yet.
        {
            app::MainWindow w{core::Scenario{}};
            QVERIFY(w.madeTab(0) && w.madeTab(0) == w.currentTab());
            QVERIFY(w.currentTab()->undrawn() && w.currentTab()->refreshPending());
            for (int i = 1; i < count; ++i)
                QVERIFY2(!w.madeTab(i), qPrintable(ui::tabNames()[i]));
            // Asked for, every tab is made; waited for (an export, a test), one draws.
            ui::Tab* fp8 = w.tabs()[5];
            QCOMPARE(w.madeTab(5), fp8);
            QVERIFY(fp8->undrawn());
            fp8->waitForIdle();
            QVERIFY(!fp8->undrawn());
            QVERIFY(!fp8->figuresLabel()->text().isEmpty());
            QVERIFY(w.madeTab(4)->undrawn());
        }
        app::MainWindow w{core::Scenario{}};
        w.resize(1280, 800);
        // When the tab on show first paints, it shows its inputs; no other tab is made yet.
        QStringList madeAtFirstPaint;
        bool currentDrawn = false;
        bool painted = false;
        test::EventSpy spy(w.currentTab()->figuresLabel(), QEvent::Paint, [&] {
            if (painted)
                return;
            painted = true;
            currentDrawn = !w.currentTab()->undrawn();
            for (int i = 0; i < count; ++i)
                if (w.madeTab(i))
                    madeAtFirstPaint << w.madeTab(i)->name();
        });
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTRY_VERIFY(painted);
        QVERIFY(currentDrawn);
        QCOMPARE(madeAtFirstPaint, QStringList({"memory"}));
        // Then the others are made and draw, one a turn, without being shown.
        const auto allDrawn = [&] {
            for (int i = 0; i < count; ++i)
                if (!w.madeTab(i) || w.madeTab(i)->undrawn())
                    return false;
            return true;
        };
        QTRY_VERIFY(allDrawn());
        QCOMPARE(w.currentTab()->name(), QString("memory"));
        for (ui::Tab* tab : w.tabs()) {
            test::settle(*tab); // a worker's result (FP8) comes a little later
            QVERIFY2(!tab->figuresLabel()->text().isEmpty(), qPrintable(tab->name()));
        }
        // A tab made after a change of setting follows it: the explanations hidden before the
        // plan tab is made stay hidden there.
        app::MainWindow later{core::Scenario{}};
        later.setExplanationsVisible(false);
        later.showTab("plan");
        QVERIFY(later.madeTab(6));
        QVERIFY(!later.madeTab(6)->explanation()
                || !later.madeTab(6)->explanation()->isVisibleTo(later.madeTab(6)));
    }

    void everyExplanationIsFilledIn()
    {
        app::MainWindow w{core::Scenario{}};
        for (ui::Tab* tab : w.tabs()) {
            tab->waitForIdle();
            QVERIFY2(tab->explanation(), qPrintable(tab->name() + " has no explanation"));
            tab->explanation()->setAnswerRevealed(true);
            const QString html = tab->explanation()->html();
            QVERIFY2(!html.contains("{{"), qPrintable(tab->name() + ": " + html));
            QVERIFY2(html.contains("<b>Answer.</b>"), qPrintable(tab->name()));
        }
    }

    void aModelPresetOpensThePlanTab()
    {
        app::MainWindow w{core::Scenario{}};
        QCOMPARE(w.loadPreset("llama3-70b"), QString());
        QCOMPARE(w.currentTab()->name(), QString("plan"));
        // Llama 3 70B's published shape, in the window's scenario and on the tab's controls.
        QCOMPARE(w.scenario().plan.model.layers, std::int64_t(80));
        QCOMPARE(w.scenario().plan.model.kvHeads, std::optional<std::int64_t>(8));
        QCOMPARE(w.currentTab()->control("plan.model.hidden")->value(), 8192.0);
        QVERIFY(w.loadPreset("no-such-model").contains("no-such-model"));
        QCOMPARE(w.scenario().plan.model.layers, std::int64_t(80)); // the last good state is kept
    }

    void thePresetsMenuListsEveryExerciseAndModelWhenItOpens()
    {
        // Filled as it first opens (not before the first paint), and once: opening it again
        // adds nothing. Every model preset file and every exercise has its entry.
        app::MainWindow w{core::Scenario{}};
        QMenu* presets = nullptr;
        for (QAction* menu : w.menuBar()->actions())
            if (menu->text().remove('&') == u"Presets")
                presets = menu->menu();
        QVERIFY(presets);
        const QList<QAction*> submenus = presets->actions();
        QCOMPARE(submenus.size(), 2);
        for (int open = 0; open < 2; ++open) {
            presets->popup(QPoint(0, 0));
            QTRY_VERIFY(presets->isVisible());
            presets->close();
            QCOMPARE(submenus[0]->menu()->actions().size(), app::loadExercises().size());
            QStringList models;
            for (QAction* a : submenus[1]->menu()->actions())
                models << a->text();
            QCOMPARE(models.size(), document::presetIds().size());
            QVERIFY2(models.contains("Llama 3 70B"), qPrintable(models.join(", ")));
        }
        QVERIFY(submenus[1]->isEnabled());
        // An entry does what the menu says: the model opens on the plan tab.
        for (QAction* a : submenus[1]->menu()->actions())
            if (a->text() == u"Llama 3 70B")
                a->trigger();
        QCOMPARE(w.currentTab()->name(), QString("plan"));
        QCOMPARE(w.scenario().plan.model.layers, std::int64_t(80));
    }

    void sliderEditsReachTheWindowsScenario()
    {
        app::MainWindow w{core::Scenario{}};
        auto* memory = qobject_cast<ui::MemoryTab*>(w.tabs().first());
        memory->control("memory.layers")->setValue(40);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(40));
    }

    void everyControlComesBackExactlyFromASavedFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("every-control.json");
        QMap<QString, double> shown;
        {
            app::MainWindow w{core::Scenario{}};
            const QMap<QString, double> defaults = shownValues(w);
            QVERIFY(defaults.size() > 60);
            QStringList stuck;
            for (ui::Tab* tab : w.tabs())
                for (QWidget* widget : tab->findChildren<QWidget*>())
                    if (document::findField(widget->objectName()) && widget->isEnabled()
                        && !moveOff(widget, defaults, w))
                        stuck << widget->objectName();
            QVERIFY2(stuck.isEmpty(), qPrintable("not moved off the default: " + stuck.join(", ")));
            shown = shownValues(w);
            QCOMPARE(w.saveScenarioFile(path), QString());
        }
        app::MainWindow fresh{core::Scenario{}};
        QCOMPARE(fresh.openScenarioFile(path), QString());
        const QMap<QString, double> back = shownValues(fresh);
        QCOMPARE(back.keys(), shown.keys());
        for (auto it = shown.cbegin(); it != shown.cend(); ++it)
            QVERIFY2(back.value(it.key()) == it.value(),
                     qPrintable(QString("%1: saved %2, opened %3")
                                    .arg(it.key())
                                    .arg(it.value(), 0, 'g', 17)
                                    .arg(back.value(it.key()), 0, 'g', 17)));
    }

    void aScenarioCoreRefusesIsNotSaved()
    {
        app::MainWindow w{core::Scenario{}};
        ui::Tab* plan = w.tabs().last();
        plan->control("plan.model.heads")->setValue(33); // does not divide 4096
        QTemporaryDir dir;
        const QString path = dir.filePath("refused.json");
        const QString error = w.saveScenarioFile(path);
        QVERIFY2(error.startsWith("cannot save " + path + ": plan.model.heads: expected"),
                 qPrintable(error));
        QVERIFY(!QFileInfo::exists(path));
    }

    void unitAndCheckpointingAreSavedAndUndoable()
    {
        app::MainWindow w{core::Scenario{}};
        ui::Tab* memory = w.tabs().first();
        auto* unit = memory->findChild<QComboBox*>("memory.unit");
        auto* checkpointing = memory->findChild<QCheckBox*>("memory.checkpointing");
        QVERIFY(unit && checkpointing);
        unit->setCurrentIndex(1);
        QCOMPARE(w.scenario().memoryDisplay.gib, true);
        w.undoStack()->clear();
        checkpointing->click();
        QCOMPARE(w.scenario().memoryDisplay.checkpointing, false);
        QCOMPARE(w.undoStack()->count(), 1);
        QCOMPARE(document::scenarioToJson(w.scenario())["memory"].toObject()["checkpointing"],
                 QJsonValue(false));
        QCOMPARE(document::scenarioToJson(w.scenario())["memory"].toObject()["unit"],
                 QJsonValue("GiB"));
        w.undoStack()->undo();
        QCOMPARE(checkpointing->isChecked(), true);
        QCOMPARE(w.scenario().memoryDisplay.checkpointing, true);
    }

    void geometryAndTabComeBack()
    {
        {
            app::MainWindow w{core::Scenario{}};
            w.resize(1750, 980);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            w.close();
        }
        app::MainWindow again{core::Scenario{}};
        QCOMPARE(again.size(), QSize(1750, 980));
        QCOMPARE(QSettings().value("window/tab").toString(), QString("memory"));
    }

    void undoAndRedoRestoreExactValues()
    {
        app::MainWindow w{core::Scenario{}};
        auto* memory = qobject_cast<ui::MemoryTab*>(w.tabs().first());
        ui::ParameterControl* layers = memory->control("memory.layers");
        // A drag: many steps in a moment make one undo step.
        for (int v : {33, 34, 35, 36})
            layers->setValue(v);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(36));
        QCOMPARE(w.undoStack()->count(), 1);
        w.undoStack()->undo();
        QCOMPARE(w.scenario().memory.layers, std::int64_t(32));
        QCOMPARE(layers->value(), 32.0);
        w.undoStack()->redo();
        QCOMPARE(w.scenario().memory.layers, std::int64_t(36));
        QCOMPARE(layers->value(), 36.0);
        // A drag that ends where it began leaves no step.
        w.undoStack()->clear();
        layers->setValue(40);
        layers->setValue(36);
        QCOMPARE(w.undoStack()->count(), 0);
    }

    void undoKeysReachTheWindowFromASpinBox()
    {
        app::MainWindow w{core::Scenario{}};
        w.show();
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        auto* memory = qobject_cast<ui::MemoryTab*>(w.tabs().first());
        ui::ParameterSpinBox* box = memory->control("memory.layers")->spinBox();
        box->setFocus();
        QTRY_VERIFY(box->hasFocus());
        const auto type = [box](const QString& text) {
            box->selectAll();
            QTest::keyClicks(box, text);
        };

        // Typed and entered: Ctrl+Z undoes it, Ctrl+Shift+Z and Ctrl+Y bring it back.
        type("40");
        QTest::keyClick(box, Qt::Key_Return);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(40));
        QTest::keyClick(box, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(32));
        QCOMPARE(box->value(), 32.0);
        QTest::keyClick(box, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(40));
        QTest::keyClick(box, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(32));
        QTest::keyClick(box, Qt::Key_Y, Qt::ControlModifier);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(40));

        // Typed but not entered: Ctrl+Z takes the text as a step and undoes it, so the value
        // before the typing comes back and redo can bring the typed one.
        w.undoStack()->clear();
        type("48");
        QCOMPARE(w.scenario().memory.layers, std::int64_t(40));
        QTest::keyClick(box, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(40));
        QCOMPARE(box->value(), 40.0);
        QCOMPARE(box->text(), QStringLiteral("40"));
        QVERIFY(w.undoStack()->canRedo());
        QTest::keyClick(box, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(48));
        QVERIFY(box->hasFocus());
    }

    void tabReachesEveryControlAndLeavesEveryTable_data()
    {
        QTest::addColumn<QString>("name");
        /// The FP8 tab's part (Fp8Tab::Part, its disclosures opened), -1 for a tab as it opens,
        /// kOpenDisclosures for a tab with every disclosure open (kProjectorOpenDisclosures: in
        /// projector mode).
        QTest::addColumn<int>("part");
        for (const char* name :
             {"memory", "zero", "tensor_parallel", "pipeline", "experts", "fp8", "plan"})
            QTest::newRow(name) << QString(name) << -1;
        QTest::newRow("fp8 accumulation")
            << QString("fp8") << static_cast<int>(ui::Fp8Tab::Part::Accumulation);
        QTest::newRow("fp8 scaling over time")
            << QString("fp8") << static_cast<int>(ui::Fp8Tab::Part::Policy);
        for (const char* name :
             {"memory", "zero", "tensor_parallel", "pipeline", "experts", "plan"})
            QTest::newRow(qPrintable(QString(name) + ", disclosures open"))
                << QString(name) << kOpenDisclosures;
        for (const char* name :
             {"memory", "zero", "tensor_parallel", "pipeline", "experts", "fp8", "plan"})
            QTest::newRow(qPrintable(QString(name) + ", projector, disclosures open"))
                << QString(name) << kProjectorOpenDisclosures;
    }

    void tabReachesEveryControlAndLeavesEveryTable()
    {
        QFETCH(QString, name);
        QFETCH(int, part);
        app::MainWindow w{core::Scenario{}};
        w.resize(1280, 800);
        w.show();
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        if (part == kProjectorOpenDisclosures)
            w.setProjectorMode(true);
        w.setExplanationsVisible(true);
        w.showTab(name);
        ui::Tab* tab = w.currentTab();
        QCOMPARE(tab->name(), name);
        if (part >= 0) {
            auto* fp8 = qobject_cast<ui::Fp8Tab*>(tab);
            QVERIFY(fp8);
            fp8->choosePart(static_cast<ui::Fp8Tab::Part>(part));
        }
        if (part != -1) {
            // Its disclosures open, so the controls behind them are walked too.
            for (QToolButton* button : tab->findChildren<QToolButton*>())
                if (button->isCheckable() && button->isVisibleTo(&w))
                    button->setChecked(true);
            // Laid out anew before the walk (key clicks alone do not run the event loop).
            QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
            QCoreApplication::processEvents();
        }
        QTRY_VERIFY(tab->explanation() && tab->explanation()->isVisible());
        // The first control on show (the plan's model shape waits behind a disclosure).
        QWidget* first = nullptr;
        for (ui::ParameterControl* control : tab->controls())
            if (!first && control->isVisibleTo(&w))
                first = control->slider();
        QVERIFY(first);
        first->setFocus(Qt::TabFocusReason);
        QTRY_COMPARE(QApplication::focusWidget(), first);

        // Round the window once with Tab, from the first control back to it.
        QList<QWidget*> visited;
        for (int i = 0; i < 400; ++i) {
            QWidget* now = QApplication::focusWidget();
            QVERIFY(now);
            if (i > 0 && now == first)
                break;
            visited << now;
            checkFocusShows(w, now);
            QTest::keyClick(now, Qt::Key_Tab);
            if (auto* table = qobject_cast<QAbstractItemView*>(now))
                QVERIFY2(QApplication::focusWidget() != table,
                         qPrintable("Tab stays in " + table->objectName()));
        }
        QCOMPARE(QApplication::focusWidget(), first);

        // Every control of the tab, and Reveal answer, was a stop.
        const auto reachable = [&w](QWidget* widget) {
            return widget->isVisibleTo(&w) && widget->isEnabled()
                && (widget->focusPolicy() & Qt::TabFocus) && !widget->focusProxy();
        };
        for (QWidget* widget : tab->findChildren<QWidget*>())
            if (reachable(widget))
                QVERIFY2(
                    visited.contains(widget),
                    qPrintable(QString("%1 (%2) is not reached by Tab")
                                   .arg(widget->objectName(), widget->metaObject()->className())));
        auto* reveal = tab->findChild<QPushButton*>(name + ".explanation.reveal");
        QVERIFY(reveal);
        QVERIFY(visited.contains(reveal));
        // (A control that does not apply, as the plan's expert keys for a dense model, is shown
        // disabled and is no stop.)
        for (ui::ParameterControl* control : tab->controls())
            if (control->isVisibleTo(&w) && control->isEnabled())
                QVERIFY2(visited.contains(control->slider())
                             && visited.contains(control->spinBox()),
                         qPrintable(control->objectName() + " is not reached by Tab"));
        checkVisualOrder(tab, visited);

        // Every stop, and every chart on show, has a name a screen reader says ("Parameters"
        // for the slider of the parameter count), whatever the widget.
        QList<QWidget*> named = visited;
        for (ui::ChartPanel* chart : tab->charts())
            if (chart->isVisibleTo(&w))
                named << chart;
        for (QWidget* widget : std::as_const(named)) {
            QAccessibleInterface* face = QAccessible::queryAccessibleInterface(widget);
            QVERIFY2(face && !face->text(QAccessible::Name).trimmed().isEmpty(),
                     qPrintable(QString("%1 (%2) has no accessible name")
                                    .arg(widget->objectName(), widget->metaObject()->className())));
            // A chart, and the view in it that takes the focus, say the chart's title unless
            // named otherwise.
            const auto* chart = qobject_cast<ui::ChartPanel*>(widget);
            if (!chart && qobject_cast<QChartView*>(widget))
                chart = qobject_cast<ui::ChartPanel*>(widget->parentWidget());
            if (chart && !chart->title().isEmpty() && widget->accessibleName().isEmpty())
                QCOMPARE(face->text(QAccessible::Name), chart->title());
        }
    }

    void rowControlsLineUpWhenTheTabFirstShows()
    {
        // Built hidden, aligned once when first shown: at the first paint every row's slider
        // and value box start where the others' do.
        app::MainWindow w{core::Scenario{}};
        w.resize(1800, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        ui::Tab* tab = w.currentTab();
        QCOMPARE(tab->name(), QString("memory"));
        QList<int> sliders, boxes;
        for (ui::ParameterControl* control : tab->controls())
            if (control->isVisibleTo(tab) && !control->isCompact()) {
                sliders << control->slider()->mapTo(tab, QPoint()).x();
                boxes << control->spinBox()->mapTo(tab, QPoint()).x();
            }
        QVERIFY(sliders.size() >= 4);
        for (int i = 1; i < sliders.size(); ++i) {
            QCOMPARE(sliders[i], sliders[0]);
            QCOMPARE(boxes[i], boxes[0]);
        }
    }

    void controlsGoCompactWhereTheColumnWouldCrowdTheCharts()
    {
        // A classroom projector: 1280 x 800 in projector type. Each control in one row would
        // take half the width; compact, the name stands over the slider and its value.
        app::MainWindow w{core::Scenario{}};
        w.setProjectorMode(true);
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.showTab("zero");
        ui::Tab* tab = w.currentTab();
        tab->waitForIdle();
        auto* ranks = tab->findChild<ui::ParameterControl*>("zero.ranks");
        QVERIFY(ranks);
        QTRY_VERIFY(ranks->isCompact());
        QApplication::processEvents();
        QVERIFY(ranks->label()->geometry().bottom() <= ranks->slider()->geometry().top());
        QVERIFY(ranks->slider()->geometry().right() <= ranks->spinBox()->geometry().left());
        auto* column = tab->findChild<QScrollArea*>();
        QVERIFY(column);
        QVERIFY2(column->width() <= 0.4 * tab->width(),
                 qPrintable(QString("%1 of %2").arg(column->width()).arg(tab->width())));
        // The table under the charts shows every header and cell whole, scrolling sideways if
        // it must.
        auto* table = tab->findChild<QTableWidget*>("zero.table");
        QVERIFY(table);
        QTRY_VERIFY(table->horizontalHeader()->length() > 0);
        const QFontMetrics fm(table->font());
        for (int c = 0; c < table->columnCount(); ++c)
            for (int r = 0; r < table->rowCount(); ++r)
                QVERIFY2(table->columnWidth(c) >= fm.horizontalAdvance(table->item(r, c)->text()),
                         qPrintable(table->item(r, c)->text()));
        // A large desk screen: one row per control again, the name beside its slider.
        w.setProjectorMode(false);
        w.resize(1920, 1080);
        QTRY_VERIFY(!ranks->isCompact());
        QApplication::processEvents();
        QVERIFY(ranks->label()->geometry().right() <= ranks->slider()->geometry().left());
        QCOMPARE(ranks->label()->geometry().center().y() / 4,
                 ranks->slider()->geometry().center().y() / 4);
    }

    void ctrlTabSwitchesTabsFromAnywhere_data()
    {
        QTest::addColumn<QString>("focus");
        QTest::newRow("fp8 table") << "fp8.granularity";
        QTest::newRow("plan table") << "plan.published";
        QTest::newRow("spin box") << "fp8.spin";
        QTest::newRow("slider") << "fp8.slider";
    }

    void ctrlTabSwitchesTabsFromAnywhere()
    {
        QFETCH(QString, focus);
        app::MainWindow w{core::Scenario{}};
        w.resize(1280, 800);
        w.show();
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        const QString section = focus.section('.', 0, 0);
        w.showTab(section);
        // A table by name; a spin box or slider: the tab's first control's.
        ui::ParameterControl* control = w.currentTab()->controls().first();
        QWidget* target = focus.endsWith(".spin") ? control->spinBox()
            : focus.endsWith(".slider")           ? static_cast<QWidget*>(control->slider())
                                                  : w.currentTab()->findChild<QWidget*>(focus);
        QVERIFY2(target, qPrintable(focus));
        const int index = w.tabs().indexOf(w.currentTab());
        const int n = int(w.tabs().size());
        const auto press = [&](Qt::Key key, Qt::KeyboardModifiers modifiers, int expected) {
            w.showTab(section);
            target->setFocus(Qt::TabFocusReason);
            QTRY_VERIFY(target->hasFocus());
            QTest::keyClick(target, key, modifiers);
            QCOMPARE(w.tabs().indexOf(w.currentTab()), (expected + n) % n);
        };
        press(Qt::Key_Tab, Qt::ControlModifier, index + 1);
        press(Qt::Key_PageDown, Qt::ControlModifier, index + 1);
        press(Qt::Key_Backtab, Qt::ControlModifier | Qt::ShiftModifier, index - 1);
        press(Qt::Key_PageUp, Qt::ControlModifier, index - 1);
    }

    void undoBringsBackWhatTheScenarioCannotTell()
    {
        // The scenario keeps batch x sequence as one number of tokens; undo must still bring
        // back the split that was on screen, not just the product.
        app::MainWindow w{core::Scenario{}};
        ui::Tab* memory = w.tabs().first();
        memory->control("memory.batch")->setValue(16);
        memory->control("memory.sequence")->setValue(256);
        QCOMPARE(w.scenario().memory.tokens, std::int64_t(4096));
        w.undoStack()->clear();
        // A step that changes the split only (the same 4096 tokens) is a step too.
        memory->control("memory.batch")->setValue(8);
        memory->control("memory.sequence")->setValue(512);
        QCOMPARE(w.scenario().memory.tokens, std::int64_t(4096));
        QCOMPARE(w.undoStack()->count(), 1);
        w.undoStack()->undo();
        QCOMPARE(memory->control("memory.batch")->value(), 16.0);
        QCOMPARE(memory->control("memory.sequence")->value(), 256.0);
        // A whole new scenario (an exercise, a file) and back.
        w.exercises()->setUp(0); // 41.1: 8 tokens
        QCOMPARE(w.scenario().memory.tokens, std::int64_t(8));
        w.undoStack()->undo();
        QCOMPARE(w.scenario().memory.tokens, std::int64_t(4096));
        QCOMPARE(memory->control("memory.batch")->value(), 16.0);
        QCOMPARE(memory->control("memory.sequence")->value(), 256.0);
        w.undoStack()->redo();
        QCOMPARE(w.scenario().memory.tokens, std::int64_t(8));
    }

    void openSaveAndABadFile()
    {
        app::MainWindow w{core::Scenario{}};
        QTemporaryDir dir;
        const QString good = dir.filePath("good.json");
        QFile f(good);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            R"({"title": "Exercise", "memory": {"parameters": 1000000, "layers": 12, "segments": 3}})");
        f.close();
        QCOMPARE(w.openScenarioFile(good), QString());
        QCOMPARE(w.scenario().memory.parameters, std::int64_t(1'000'000));
        auto* memory = qobject_cast<ui::MemoryTab*>(w.tabs().first());
        QCOMPARE(memory->inputs().layers, std::int64_t(12));

        // A bad file names the key and changes nothing.
        const QString bad = dir.filePath("bad.json");
        QFile b(bad);
        QVERIFY(b.open(QIODevice::WriteOnly));
        b.write(R"({"memory": {"parameters": 5, "segments": 99}})");
        b.close();
        const QString error = w.openScenarioFile(bad);
        QVERIFY2(error.contains("memory.segments"), qPrintable(error));
        QCOMPARE(w.scenario().memory.parameters, std::int64_t(1'000'000));
        QCOMPARE(memory->inputs().parameters, std::int64_t(1'000'000));

        // Saved and opened again, the same report.
        const QString saved = dir.filePath("saved.json");
        QCOMPARE(w.saveScenarioFile(saved), QString());
        app::MainWindow other{core::Scenario{}};
        QCOMPARE(other.openScenarioFile(saved), QString());
        QCOMPARE(app::buildReport(other.scenario()), app::buildReport(w.scenario()));
        QVERIFY(QSettings()
                    .value("recent/files")
                    .toStringList()
                    .contains(QFileInfo(saved).absoluteFilePath()));

        // Undo goes back to before the file was opened.
        w.undoStack()->undo();
        QCOMPARE(w.scenario().memory.parameters, core::MemoryInputs{}.parameters);
    }

    void lastStateComesBackAndACorruptOneDoesNotCrash()
    {
        {
            app::MainWindow w{core::Scenario{}};
            qobject_cast<ui::MemoryTab*>(w.tabs().first())->control("memory.layers")->setValue(48);
            w.close();
        }
        {
            app::MainWindow w{core::Scenario{}};
            QCOMPARE(w.restoreLastScenario(), QString());
            QCOMPARE(w.scenario().memory.layers, std::int64_t(48));
        }
        QSettings().setValue("state/scenario", QByteArray("{\"memory\": {\"layers\": -3}}"));
        {
            app::MainWindow w{core::Scenario{}};
            const QString message = w.restoreLastScenario();
            QVERIFY2(message.contains("memory.layers"), qPrintable(message));
            QCOMPARE(w.scenario().memory.layers, core::MemoryInputs{}.layers);
        }
        QSettings().setValue("state/scenario", QByteArray("not json at all"));
        {
            app::MainWindow w{core::Scenario{}};
            QVERIFY(!w.restoreLastScenario().isEmpty());
        }
        // A settings file that is not a settings file at all.
        const QString path = QSettings().fileName();
        QSettings().sync();
        QFile garbage(path);
        QVERIFY(garbage.open(QIODevice::WriteOnly));
        static constexpr char kGarbage[] = "\x00\xff[[[ not = an ini\n\x01";
        garbage.write(QByteArray(kGarbage, sizeof kGarbage - 1)); // the whole literal, no more
        garbage.close();
        {
            app::MainWindow w{core::Scenario{}};
            w.restoreLastScenario(); // may or may not say something; must not crash
            QCOMPARE(w.scenario().memory.layers, core::MemoryInputs{}.layers);
        }
        QSettings().clear();
    }

    void settingsOfTheWrongKindAreIgnored()
    {
        // Hand-edited settings: values this program never writes take their defaults.
        QSettings().setValue("view/projector", "banana");
        QSettings().setValue("view/explanations", "maybe");
        QSettings().setValue("view/textStep", "x");
        QSettings().setValue("view/background", 7);
        {
            app::MainWindow w{core::Scenario{}};
            QVERIFY(!w.projectorMode());
        }
        QSettings().setValue("view/projector", "true");
        {
            app::MainWindow w{core::Scenario{}};
            QVERIFY(w.projectorMode());
            w.setProjectorMode(false); // the type size is the application's: leave it as found
        }
        QSettings().clear();
    }

    void resetTabKeepsTheOtherSections()
    {
        core::Scenario s;
        s.memory.layers = 12;
        s.memory.segments = 3;
        s.pipeline.stages = 8;
        app::MainWindow w{s};
        QCOMPARE(w.scenario().memory.layers, std::int64_t(12));
        w.resetCurrentTab(); // the memory tab is current
        QCOMPARE(w.scenario().memory.layers, core::MemoryInputs{}.layers);
        QCOMPARE(w.scenario().pipeline.stages, std::int64_t(8));
    }

    void projectorModeEnlargesTextAndLines()
    {
        app::MainWindow w{core::Scenario{}};
        const qreal before = QApplication::font().pointSizeF();
        w.setProjectorMode(true);
        // 1.6 times the desktop's type, and at least 20 pixels at the screen's resolution.
        const qreal dpi = w.screen()->logicalDotsPerInchY();
        const qreal projector = std::max(before * 1.6, 20.0 * 72.0 / dpi);
        QCOMPARE(QApplication::font().pointSizeF(), projector);
        QVERIFY(QFontInfo(QApplication::font()).pixelSize() >= 20);
        QCOMPARE(ui::lineScale(), 1.7);
        auto* memory = qobject_cast<ui::MemoryTab*>(w.tabs().first());
        auto* chart = static_cast<ui::ChartViewPanel*>(memory->charts().first())->chart();
        // Large type needs less emphasis: the title stands out by the 5 points it gets over
        // 10-point type (1.5 times), not by half of the larger size.
        const qreal pt = QApplication::font().pointSizeF();
        QVERIFY(pt > 10);
        // (A tolerance only for the rounding of pt x (1 + 0.5 x 10 / pt) in floating point.)
        QTRY_VERIFY(std::abs(chart->titleFont().pointSizeF() - (pt + 0.5 * 10)) < 1e-9);
        w.setTextSizeStep(1);
        QCOMPARE(QApplication::font().pointSizeF(), projector * 1.12);
        w.setProjectorMode(false);
        w.setTextSizeStep(0);
        QCOMPARE(QApplication::font().pointSizeF(), before);
    }

    void aWindowGoneGivesTheTypeBack()
    {
        const QFont before = QApplication::font();
        for (int i = 0; i < 3; ++i) {
            app::MainWindow w{core::Scenario{}};
            w.setProjectorMode(true);
            QVERIFY(QApplication::font().pointSizeF() > before.pointSizeF());
        }
        // Three projector windows one after another: the type did not grow three times.
        QCOMPARE(QApplication::font(), before);
        QCOMPARE(ui::lineScale(), 1.0);
    }

    void projectorModeGivesTheChartsTheRoom()
    {
        app::MainWindow w{core::Scenario{}};
        // At 1600 x 900 the memory charts no longer fit side by side (the checkpointing
        // legend under its plot needs more) and stand one above the other.
        w.resize(1920, 1080);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* memory = w.tabs().first();
        QVERIFY(memory->explanation()->isVisible());
        QCOMPARE(memory->chartColumns(), 2);

        // Projector: the explanations step aside, so the two charts keep their two columns.
        w.setProjectorMode(true);
        QTRY_VERIFY(!memory->explanation()->isVisible());
        QTRY_COMPARE(memory->chartColumns(), 2);
        // Shown again on a projector, there is room for one readable chart a row.
        w.setExplanationsVisible(true);
        QTRY_COMPARE(memory->chartColumns(), 1);
        for (ui::ChartPanel* chart : memory->charts())
            QVERIFY2(chart->width() >= memory->width() / 3, qPrintable(chart->name()));

        // Each mode remembers its own choice.
        w.setProjectorMode(false);
        QVERIFY(memory->explanation()->isVisible());
        QTRY_COMPARE(memory->chartColumns(), 2);
        w.setExplanationsVisible(false);
        w.setProjectorMode(true);
        QVERIFY(!memory->explanation()->isHidden()); // shown on the projector, as chosen there
        w.setProjectorMode(false);
        QVERIFY(memory->explanation()->isHidden());
        w.setExplanationsVisible(true);
    }

    void exportsFromTheWindow()
    {
        app::MainWindow w{core::Scenario{}};
        QTemporaryDir dir;
        QCOMPARE(w.exportCurrentChart(dir.filePath("one.png")), QString());
        QCOMPARE(QImage(dir.filePath("one.png")).size(), QSize(1600, 1000));
        QVERIFY(!w.exportCurrentChart(dir.filePath("one.gif")).isEmpty());
        QStringList written;
        QCOMPARE(w.exportAllCharts(dir.path(), &written), QString());
        qsizetype charts = 0;
        for (ui::Tab* tab : w.tabs())
            charts += tab->charts().size();
        QCOMPARE(written.size(), 3 * charts); // every chart in three formats
        for (const QString& path : written)
            QVERIFY(QFileInfo(path).size() > 1000);
    }
};

QTEST_MAIN(TstMainWindow)
#include "tst_mainwindow.moc"
