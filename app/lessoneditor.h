#pragma once

#include "lesson.h"

#include <QDialog>

QT_BEGIN_NAMESPACE
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
QT_END_NAMESPACE

namespace scalelab::app {

class MainWindow;

/// Making a lesson by using the app (docs/LESSONS.md, "Authoring"): "Add current state" appends
/// the window's tab and scenario (the keys that differ from the defaults), with the chart under
/// the mouse as the highlight; the steps can be reordered, deleted and edited (title, narration,
/// prediction), played, and saved through QSaveFile. Not modal: the teacher keeps working in
/// the window between additions.
class LessonEditor : public QDialog {
    Q_OBJECT

public:
    explicit LessonEditor(MainWindow* window);

    /// The lesson as edited so far (the selected step's fields included).
    const document::Lesson& lesson();
    void setLesson(const document::Lesson& lesson);
    /// Appends the window's current tab and scenario as a step and selects it.
    void addCurrentState();
    /// Moves step `from` to position `to`.
    void moveStep(int from, int to);
    void removeStep(int index);
    void selectStep(int index);
    int selectedStep() const { return m_current; }
    /// Writes the lesson to `path` through QSaveFile after reading it back as a lesson file
    /// would be read; returns an error line (naming the JSON path), empty on success.
    QString saveTo(const QString& path);

    QListWidget* stepList() const { return m_list; }
    QPlainTextEdit* narrationEdit() const { return m_narration; }
    QLineEdit* questionEdit() const { return m_question; }
    QPlainTextEdit* choicesEdit() const { return m_choices; }
    QLineEdit* answerEdit() const { return m_answer; }

private:
    QWidget* buildStepFields();
    QWidget* buildButtons();
    void refreshList();
    void loadFields();
    void storeFields();
    void askSave();

    MainWindow* m_window;
    document::Lesson m_lesson;
    int m_current = -1;
    QLineEdit* m_lessonTitle;
    QListWidget* m_list;
    QLineEdit* m_stepTitle;
    QPlainTextEdit* m_narration;
    QLineEdit* m_highlight;
    QLineEdit* m_question;
    QPlainTextEdit* m_choices;
    QLineEdit* m_answer;
    QLineEdit* m_unit;
};

} // namespace scalelab::app
