#pragma once

#include "exercises.h"

#include <QDialog>

QT_BEGIN_NAMESPACE
class QLabel;
class QListWidget;
class QStackedWidget;
QT_END_NAMESPACE

namespace scalelab::app {

class MainWindow;

/// The chapter's exercises as guided tasks: read, "Set up" (the sliders move to the exercise's
/// values and its tab opens), type an answer, "Check" (against core), a hint when it is wrong,
/// the worked solution on request. Not modal: the window stays usable beside it.
class ExercisesDialog : public QDialog {
    Q_OBJECT

public:
    explicit ExercisesDialog(MainWindow* window);

    /// Shows exercise `index` (0-based).
    void showExercise(int index);
    /// Puts the window at exercise `index`'s values.
    void setUp(int index);

private:
    QWidget* buildPage(int index);

    MainWindow* m_window;
    QList<Exercise> m_exercises;
    QListWidget* m_list;
    QStackedWidget* m_pages;
};

} // namespace scalelab::app
