// The exercises dialog driven the way a student uses it: open it from the Help menu, pick an
// exercise in the list, press "Set up", type answers, press "Check", ask for the solution, and
// take the set-up back with Edit > Undo.

#include "exercises.h"
#include "exercisesdialog.h"
#include "fields.h"
#include "mainwindow.h"
#include "parametercontrol.h"
#include "pipelinetab.h"
#include "scenariojson.h"
#include "tab.h"
#include "testhelpers.h"

#include <QAbstractButton>
#include <QAction>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>
#include <QTextDocument>
#include <QUndoStack>

using namespace scalelab;

namespace {

/// A label's text as the user reads it: rich text rendered to plain text, plain text as is.
QString shownText(const QLabel* label)
{
    const bool rich = label->textFormat() == Qt::RichText
        || (label->textFormat() == Qt::AutoText && Qt::mightBeRichText(label->text()));
    if (!rich)
        return label->text();
    QTextDocument document;
    document.setHtml(label->text());
    return document.toPlainText();
}

/// Text written as HTML (hints and solutions in exercises.json) as it reads on screen.
QString readAs(const QString& html)
{
    QTextDocument document;
    document.setHtml(html);
    return document.toPlainText();
}

/// The menu bar action whose text without mnemonics starts with `text`, or null.
QAction* menuAction(QMainWindow& window, const QString& menu, const QString& text)
{
    for (QAction* m : window.menuBar()->actions())
        if (m->menu() && m->text().remove('&') == menu)
            for (QAction* a : m->menu()->actions())
                if (a->text().remove('&').startsWith(text))
                    return a;
    return nullptr;
}

/// Help > Exercises..., then the dialog it shows (null if none is shown).
app::ExercisesDialog* openExercises(app::MainWindow& window)
{
    QAction* action = menuAction(window, "Help", "Exercises...");
    if (!action)
        return nullptr;
    action->trigger();
    auto* dialog = window.findChild<app::ExercisesDialog*>("exercises");
    if (!dialog || !QTest::qWaitForWindowExposed(dialog))
        return nullptr;
    return dialog;
}

/// Clicks row `row` of the dialog's list of exercises.
void chooseExercise(app::ExercisesDialog* dialog, int row)
{
    auto* list = dialog->findChild<QListWidget*>("exercises.list");
    QVERIFY(list);
    QVERIFY(row < list->count());
    const QRect rect = list->visualItemRect(list->item(row));
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, rect.center());
    QCOMPARE(list->currentRow(), row);
}

/// Scrolls `button` into view in its page, then clicks it.
void click(QAbstractButton* button)
{
    for (QWidget* w = button->parentWidget(); w; w = w->parentWidget())
        if (auto* scroll = qobject_cast<QScrollArea*>(w)) {
            scroll->ensureWidgetVisible(button);
            break;
        }
    QVERIFY(button->isVisible());
    QTest::mouseClick(button, Qt::LeftButton);
}

/// Replaces what the answer field holds by typing `text`.
void type(QLineEdit* field, const QString& text)
{
    field->setFocus();
    field->selectAll();
    QTest::keyClicks(field, text);
    QCOMPARE(field->text(), text);
}

template <typename T> T* widget(QWidget* parent, const QString& name)
{
    return parent->findChild<T*>(name);
}

ui::Tab* tabNamed(app::MainWindow& window, const QString& name)
{
    for (ui::Tab* tab : window.tabs())
        if (tab->name() == name)
            return tab;
    return nullptr;
}

/// What a tab shows, as JSON: the tab's section of its document over `scenario`.
QJsonObject writtenBy(const ui::Tab* tab, const core::Scenario& scenario)
{
    core::Scenario copy = scenario;
    core::copySection(tab->scenario(), copy, tab->section());
    return document::scenarioToJson(copy);
}

/// Every value a user can see and set on the tabs: parameter controls by key, combo boxes by
/// index and check boxes by state (those with an object name).
QMap<QString, QVariant> shownValues(const app::MainWindow& window)
{
    QMap<QString, QVariant> out;
    for (ui::Tab* tab : window.tabs()) {
        for (ui::ParameterControl* c : tab->controls())
            out.insert(c->spec().key, c->value());
        for (QComboBox* box : tab->findChildren<QComboBox*>())
            if (!box->objectName().isEmpty())
                out.insert(box->objectName(), box->currentIndex());
        // Check boxes of the scenario's flags; not the explanation's show-the-answer button,
        // which exists once the explanation is first laid out (whenever that is).
        for (QAbstractButton* b : tab->findChildren<QAbstractButton*>())
            if (b->isCheckable() && document::findField(b->objectName()))
                out.insert(b->objectName(), b->isChecked());
    }
    return out;
}

/// Whether snapshot `a` of shownValues() equals the expected `b`; names the first difference.
bool sameValues(const QMap<QString, QVariant>& a, const QMap<QString, QVariant>& b)
{
    if (a.keys() != b.keys()) {
        qWarning("different controls");
        return false;
    }
    for (auto it = a.begin(); it != a.end(); ++it)
        if (it.value() != b.value(it.key())) {
            qWarning("%s: %s, expected %s", qPrintable(it.key()), qPrintable(it.value().toString()),
                     qPrintable(b.value(it.key()).toString()));
            return false;
        }
    return true;
}

/// Checks that the controls of each tab the exercise sets hold its values exactly.
void checkControls(app::MainWindow& window, const app::Exercise& exercise)
{
    const core::Scenario expected = app::exerciseScenario(exercise);
    for (const QString& section : exercise.setup.keys()) {
        ui::Tab* tab = tabNamed(window, section);
        QVERIFY2(tab, qPrintable(section));
        const QJsonObject values = exercise.setup.value(section).toObject();
        for (const QString& key : values.keys()) {
            const QString path = section + '.' + key;
            const QJsonValue value = values.value(key);
            if (path == "memory.tokens") {
                // Shown as batch x sequence.
                QCOMPARE(tab->control("memory.batch")->wholeValue()
                             * tab->control("memory.sequence")->wholeValue(),
                         static_cast<std::int64_t>(value.toInteger()));
            } else if (path == "pipeline.schedule") {
                auto* box = widget<QComboBox>(tab, "pipeline.schedule");
                QVERIFY(box);
                QCOMPARE(box->currentIndex(),
                         ui::PipelineTab::schedules().indexOf(expected.pipeline.schedule));
            } else if (value.isDouble()) {
                ui::ParameterControl* control = tab->control(path);
                QVERIFY2(control, qPrintable(path + " has no control"));
                QCOMPARE(control->value(), value.toDouble());
            } else {
                // Lists (the routing of 41.4) have no control: what the tab holds.
                QVERIFY2(value.isArray(), qPrintable(path));
                QCOMPARE(writtenBy(tab, window.scenario()).value(section).toObject().value(key),
                         value);
            }
        }
    }
}

} // namespace

class TstExercisesDialog : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        test::useOwnSettings("tst_exercisesdialog");
        QCOMPARE(app::loadExercises().size(), 4);
    }

    void setUpMovesTheControlsAndUndoTakesItBack_data()
    {
        QTest::addColumn<int>("index");
        const QList<app::Exercise> exercises = app::loadExercises();
        for (int i = 0; i < exercises.size(); ++i)
            QTest::newRow(qPrintable(exercises[i].id)) << i;
    }

    void setUpMovesTheControlsAndUndoTakesItBack()
    {
        QFETCH(int, index);
        const app::Exercise exercise = app::loadExercises().at(index);
        app::MainWindow w{core::Scenario{}};
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));

        // Some work of the user's before the set-up: a slider moved, another tab open.
        tabNamed(w, "memory")->control("memory.layers")->setValue(40);
        tabNamed(w, "zero")->control("zero.ranks")->setValue(16);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(40));
        auto* tabs = w.findChild<QTabWidget*>("tabs");
        QVERIFY(tabs);
        tabs->setCurrentIndex(tabs->count() - 1);
        QVERIFY(w.currentTab()->name() != exercise.tab);
        const QJsonObject before = document::scenarioToJson(w.scenario());
        const QMap<QString, QVariant> shownBefore = shownValues(w);
        const int steps = w.undoStack()->count();

        app::ExercisesDialog* dialog = openExercises(w);
        QVERIFY(dialog);
        chooseExercise(dialog, index);
        auto* setUp = widget<QPushButton>(dialog, "exercise." + exercise.id + ".setup");
        QVERIFY(setUp);
        QVERIFY(setUp->text().remove('&').startsWith("Set up"));
        click(setUp);

        // The window holds the exercise's scenario, every key, and shows the exercise's tab.
        QCOMPARE(w.currentTab()->name(), exercise.tab);
        const QJsonObject expected = document::scenarioToJson(app::exerciseScenario(exercise));
        QCOMPARE(document::scenarioToJson(w.scenario()), expected);
        checkControls(w, exercise);
        if (QTest::currentTestFailed())
            return;
        // Each tab holds exactly what the window says: nothing was rounded on the way in.
        for (ui::Tab* tab : w.tabs())
            QVERIFY2(writtenBy(tab, w.scenario()) == expected, qPrintable(tab->name()));
        QCOMPARE(w.undoStack()->count(), steps + 1);

        // Edit > Undo: the values from before, exactly, in the window and on every control.
        QAction* undo = menuAction(w, "Edit", "Undo");
        QVERIFY(undo);
        QCOMPARE(undo->text().remove('&'), "Undo Set up exercise " + exercise.id);
        QVERIFY(undo->isEnabled());
        undo->trigger();
        QCOMPARE(document::scenarioToJson(w.scenario()), before);
        QVERIFY(sameValues(shownValues(w), shownBefore));
        for (ui::Tab* tab : w.tabs())
            QVERIFY2(writtenBy(tab, w.scenario()) == before, qPrintable(tab->name()));

        // Edit > Redo: the exercise again.
        QAction* redo = menuAction(w, "Edit", "Redo");
        QVERIFY(redo);
        redo->trigger();
        QCOMPARE(document::scenarioToJson(w.scenario()), expected);
        checkControls(w, exercise);
    }

    void answersAreChecked_data()
    {
        QTest::addColumn<int>("index");
        QTest::addColumn<int>("question");
        QTest::addColumn<QString>("right");
        QTest::addColumn<QString>("wrong");
        // The figures of tests/app/tst_exercises.cpp; wrong answers are the usual slips.
        QTest::newRow("41.1 model state") << 0 << 0 << "16 MB"
                                          << "12000000";
        QTest::newRow("41.1 activations") << 0 << 1 << "3072"
                                          << "3 kB";
        QTest::newRow("41.2 ring") << 1 << 0 << "3000"
                                   << "1500";
        QTest::newRow("41.2 DP") << 1 << 1 << "16000"
                                 << "4000";
        QTest::newRow("41.2 ZeRO-1") << 1 << 2 << "7000"
                                     << "5500";
        QTest::newRow("41.2 ZeRO-2") << 1 << 3 << "5.5 kB"
                                     << "7000";
        QTest::newRow("41.2 ZeRO-3") << 1 << 4 << "4000"
                                     << "16000";
        QTest::newRow("41.3 shard") << 2 << 0 << "16"
                                    << "64";
        QTest::newRow("41.3 all-reduce") << 2 << 1 << "384"
                                         << "256";
        QTest::newRow("41.4 bubble") << 3 << 0 << "20%"
                                     << "0.25";
        QTest::newRow("41.4 counts") << 3 << 1 << "[[2,1],[0,3]]"
                                     << "[[2,0],[1,3]]";
    }

    void answersAreChecked()
    {
        QFETCH(int, index);
        QFETCH(int, question);
        QFETCH(QString, right);
        QFETCH(QString, wrong);
        const app::Exercise exercise = app::loadExercises().at(index);
        const app::ExerciseQuestion& q = exercise.questions.at(question);
        // No set-up: the window stays at its defaults, and answers are still checked against
        // the exercise's own values.
        app::MainWindow w{core::Scenario{}};
        app::ExercisesDialog* dialog = openExercises(w);
        QVERIFY(dialog);
        chooseExercise(dialog, index);
        const QString id = QString("exercise.%1.%2").arg(exercise.id).arg(question + 1);
        auto* answer = widget<QLineEdit>(dialog, id + ".answer");
        auto* check = widget<QPushButton>(dialog, id + ".check");
        auto* result = widget<QLabel>(dialog, id + ".result");
        QVERIFY(answer && check && result);
        QCOMPARE(check->text(), QString("Check"));
        QCOMPARE(shownText(result), QString());

        type(answer, right);
        click(check);
        QCOMPARE(shownText(result), QString("Right."));

        type(answer, wrong);
        click(check);
        QCOMPARE(shownText(result), "Not yet. " + readAs(q.hint));

        // Unreadable: a request for a number (or a matrix), no verdict and no hint. Enter in
        // the field checks as the button does.
        type(answer, "sixteen");
        QTest::keyClick(answer, Qt::Key_Return);
        const QString asked = shownText(result);
        QVERIFY2(asked.startsWith(q.kind == "matrix" ? "Write the matrix" : "Write a number"),
                 qPrintable(asked));
        QVERIFY2(!asked.contains("Right") && !asked.contains("Not yet")
                     && !asked.contains(readAs(q.hint)),
                 qPrintable(asked));
    }

    void solutionsOnRequest_data()
    {
        QTest::addColumn<int>("index");
        QTest::addColumn<int>("question");
        const QList<app::Exercise> exercises = app::loadExercises();
        for (int i = 0; i < exercises.size(); ++i)
            for (int q = 0; q < exercises[i].questions.size(); ++q)
                QTest::addRow("%s.%d", qPrintable(exercises[i].id), q + 1) << i << q;
    }

    void solutionsOnRequest()
    {
        QFETCH(int, index);
        QFETCH(int, question);
        const app::Exercise exercise = app::loadExercises().at(index);
        const app::ExerciseQuestion& q = exercise.questions.at(question);
        app::MainWindow w{core::Scenario{}};
        app::ExercisesDialog* dialog = openExercises(w);
        QVERIFY(dialog);
        chooseExercise(dialog, index);
        const QString id = QString("exercise.%1.%2").arg(exercise.id).arg(question + 1);
        // A question answered in words has no field to check, only its solution.
        QCOMPARE(widget<QLineEdit>(dialog, id + ".answer") != nullptr, !q.report.isEmpty());
        QCOMPARE(widget<QPushButton>(dialog, id + ".check") != nullptr, !q.report.isEmpty());
        auto* show = widget<QPushButton>(dialog, id + ".show");
        auto* solution = widget<QLabel>(dialog, id + ".solution");
        QVERIFY(show && solution);
        QCOMPARE(show->text(), QString("Solution"));
        QVERIFY(!solution->isVisible());
        click(show);
        QVERIFY(solution->isVisible());
        QCOMPARE(shownText(solution), readAs(q.solution));
        QVERIFY(!readAs(q.solution).isEmpty());
        click(show); // and hidden again
        QVERIFY(!solution->isVisible());
    }
};

QTEST_MAIN(TstExercisesDialog)
#include "tst_exercisesdialog.moc"
