#pragma once

#include "lesson.h"
#include "scalelab/core/scenario.h"

#include <QFrame>
#include <QPointer>

QT_BEGIN_NAMESPACE
class QButtonGroup;
class QGridLayout;
class QScrollArea;
class QKeyEvent;
class QLabel;
class QLineEdit;
class QPushButton;
QT_END_NAMESPACE

namespace scalelab::ui {
class ChartViewPanel;
class Tab;
} // namespace scalelab::ui

namespace scalelab::app {

class MainWindow;
class HighlightOverlay;

/// The lesson player (docs/LESSONS.md): a bar above the tabs with the step counter, the
/// narration (its figures filled from the tab's live values), the prediction of the step, and
/// Back, Next and Leave. While a lesson plays it takes the presenter keys of the window (Page
/// Down / Right / Space next, Page Up / Left back, B blank, Esc leave), outlines the step's
/// highlighted control or chart, and can black out the window. Starting keeps a copy of the
/// scenario shown; leaving puts it back as one undo step.
class LessonBar : public QFrame {
    Q_OBJECT

public:
    explicit LessonBar(MainWindow* window);
    ~LessonBar() override;

    /// Plays `lesson` from its first step. A lesson started while another plays replaces it;
    /// the scenario kept is still the one from before the first.
    void start(const document::Lesson& lesson);
    bool isActive() const { return m_active; }
    const document::Lesson& lesson() const { return m_lesson; }
    /// The step shown, 0-based.
    int stepIndex() const { return m_index; }

    /// Shows step `index`: its scenario (one undo step), its tab, its narration and prediction.
    void goToStep(int index);
    /// Reveals a prediction not yet revealed; otherwise the next step.
    void next();
    /// The previous step (on the first, its state again).
    void back();
    /// Ends the lesson and brings back the scenario and tab from before it.
    void leave();
    /// Covers the window in black (B), or shows it again.
    void setBlank(bool on);
    bool isBlank() const;
    /// Shows the answer of the step's prediction (and how the class's answer compares).
    void reveal();
    bool isRevealed() const { return m_revealed; }

    /// Sets the narration's type from the application's (larger in projector mode). The window
    /// calls it when it changes the type size; a font change event calls it too.
    void followTypeSize();
    /// Keeps the narration of a step on `tab` in step with the tab's figures: the window calls
    /// it for each tab it makes.
    void follow(ui::Tab* tab);

    // For tests and the window's layout.
    QLabel* counterLabel() const { return m_counter; }
    QLabel* narrationLabel() const { return m_narration; }
    QLabel* answerLabel() const { return m_answer; }
    QList<QPushButton*> choiceButtons() const { return m_choices; }
    QLineEdit* numberEdit() const { return m_number; }
    /// The widget the step outlines now (a control or chart of the current tab), or null.
    QWidget* highlightTarget() const;
    /// The outline's rectangle in window coordinates; empty when nothing is outlined.
    QRect highlightRect() const;
    /// Whether the outline still pulses, as it does for a moment when a step shows it.
    bool isHighlightPulsing() const;

signals:
    /// The lesson ended (Esc, Leave); the scenario from before it is back.
    void left();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    bool event(QEvent* event) override;

private:
    QWidget* buildNavigation();
    QWidget* buildPrediction();
    void showPrediction();
    void clearChoices();
    void fitBody();
    void updateNarration();
    void updateCounter();
    void placeHighlight();
    /// Draws `series` of `chart` stronger than the rest (ChartViewPanel::emphasiseSeries), and
    /// the chart emphasised before as its tab made it. A null chart: none emphasised.
    void emphasiseSeries(ui::ChartViewPanel* chart, const QString& series);
    bool handleKey(QObject* receiver, QKeyEvent* key);
    QString filled(const QString& text) const;
    QString classAnswerLine() const;

    MainWindow* m_window;
    document::Lesson m_lesson;
    int m_index = 0;
    bool m_active = false;
    bool m_revealed = false;
    core::Scenario m_before;
    QString m_beforeTab;
    QLabel* m_counter;
    QLabel* m_title;
    QLabel* m_narration;
    QWidget* m_prediction;
    QLabel* m_question;
    QGridLayout* m_choiceGrid;
    QScrollArea* m_body;
    QButtonGroup* m_choiceGroup;
    QList<QPushButton*> m_choices;
    QLineEdit* m_number;
    QLabel* m_unit;
    QPushButton* m_reveal;
    QLabel* m_answer;
    QPushButton* m_back;
    QPushButton* m_next;
    HighlightOverlay* m_overlay;
    QPointer<ui::ChartViewPanel> m_emphasised;
    QWidget* m_blank;
};

} // namespace scalelab::app
