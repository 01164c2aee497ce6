#include "exercisesdialog.h"

#include "mainwindow.h"
#include "report.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace scalelab::app {

using namespace scalelab::document;

ExercisesDialog::ExercisesDialog(MainWindow* window)
    : QDialog(window)
    , m_window(window)
    , m_exercises(loadExercises())
    , m_list(new QListWidget(this))
    , m_pages(new QStackedWidget(this))
{
    setWindowTitle(tr("Exercises"));
    setObjectName("exercises");
    setModal(false);
    m_list->setObjectName("exercises.list");
    m_list->setAccessibleName(tr("Exercises"));
    for (int i = 0; i < m_exercises.size(); ++i) {
        m_list->addItem(tr("%1 %2").arg(m_exercises[i].id, m_exercises[i].title));
        m_pages->addWidget(buildPage(i));
    }
    m_list->setMaximumWidth(fontMetrics().averageCharWidth() * 32);
    connect(m_list, &QListWidget::currentRowChanged, m_pages, &QStackedWidget::setCurrentIndex);
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(m_list);
    layout->addWidget(m_pages, 1);
    m_list->setCurrentRow(0);
    resize(fontMetrics().averageCharWidth() * 130, fontMetrics().height() * 34);
}

void ExercisesDialog::showExercise(int index)
{
    m_list->setCurrentRow(index);
}

void ExercisesDialog::setUp(int index)
{
    const Exercise& e = m_exercises.at(index);
    m_window->setScenario(exerciseScenario(e), tr("Set up exercise %1").arg(e.id));
    m_window->showTab(e.tab);
}

QWidget* ExercisesDialog::buildPage(int index)
{
    const Exercise& e = m_exercises.at(index);
    auto* page = new QWidget;
    auto* column = new QVBoxLayout(page);
    auto* text = new QLabel(tr("<h3>Exercise %1: %2</h3>%3").arg(e.id, e.title, e.text));
    text->setWordWrap(true);
    text->setTextFormat(Qt::RichText);
    column->addWidget(text);
    auto* setUpButton = new QPushButton(tr("&Set up: move the sliders to this exercise"));
    setUpButton->setObjectName(QString("exercise.%1.setup").arg(e.id));
    setUpButton->setAccessibleDescription(
        tr("Puts every control at the exercise's values and opens its tab."));
    connect(setUpButton, &QPushButton::clicked, this, [this, index] { setUp(index); });
    column->addWidget(setUpButton, 0, Qt::AlignLeft);

    for (int q = 0; q < e.questions.size(); ++q) {
        const ExerciseQuestion& question = e.questions[q];
        const QString id = QString("exercise.%1.%2").arg(e.id).arg(q + 1);
        auto* prompt = new QLabel(QString("<b>%1.</b> %2").arg(q + 1).arg(question.prompt));
        prompt->setWordWrap(true);
        column->addWidget(prompt);
        auto* row = new QHBoxLayout;
        auto* result = new QLabel;
        result->setObjectName(id + ".result");
        result->setWordWrap(true);
        // Hints are written in HTML like the rest of exercises.json (&times;); plain feedback
        // such as "Not yet. <hint>" would otherwise show the entities as typed.
        result->setTextFormat(Qt::RichText);
        auto* solution = new QLabel(QString("<i>%1</i>").arg(question.solution));
        solution->setObjectName(id + ".solution");
        solution->setWordWrap(true);
        solution->setTextFormat(Qt::RichText);
        solution->hide();
        if (!question.report.isEmpty()) {
            auto* answer = new QLineEdit;
            answer->setObjectName(id + ".answer");
            answer->setAccessibleName(tr("Answer to question %1").arg(q + 1));
            answer->setPlaceholderText(question.kind == "bytes"        ? tr("e.g. 16 MB or 1.6e7")
                                           : question.kind == "matrix" ? tr("e.g. [[1, 2], [3, 4]]")
                                           : question.kind == "fraction" ? tr("e.g. 0.25 or 25%")
                                                                         : tr("a number"));
            auto* check = new QPushButton(tr("Check"));
            check->setObjectName(id + ".check");
            // The check runs on the exercise's own values, so a slider moved since does not
            // change what is right.
            const auto run = [this, index, q, answer, result] {
                const Exercise& ex = m_exercises.at(index);
                const AnswerCheck c = checkAnswer(ex.questions.at(q), answer->text(),
                                                  buildReport(exerciseScenario(ex)));
                result->setText(c.correct ? QString("<b>%1</b>").arg(c.message) : c.message);
            };
            connect(check, &QPushButton::clicked, this, run);
            connect(answer, &QLineEdit::returnPressed, this, run);
            row->addWidget(answer, 1);
            row->addWidget(check);
        }
        auto* show = new QPushButton(tr("Solution"));
        show->setObjectName(id + ".show");
        show->setCheckable(true);
        connect(show, &QPushButton::toggled, solution, &QLabel::setVisible);
        row->addWidget(show);
        column->addLayout(row);
        column->addWidget(result);
        column->addWidget(solution);
    }
    column->addStretch(1);
    auto* scroll = new QScrollArea;
    scroll->setWidget(page);
    scroll->setWidgetResizable(true);
    return scroll;
}

} // namespace scalelab::app
