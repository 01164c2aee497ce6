#include "lessoneditor.h"

#include "chartpanel.h"
#include "mainwindow.h"
#include "scenariojson.h"
#include "tab.h"

#include <QApplication>
#include <QCursor>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QVBoxLayout>

namespace scalelab::app {

using document::LessonPrediction;
using document::LessonStep;

LessonEditor::LessonEditor(MainWindow* window)
    : QDialog(window)
    , m_window(window)
{
    setObjectName("lesson.editor");
    setWindowTitle(tr("Lesson editor"));
    auto* layout = new QVBoxLayout(this);
    auto* top = new QFormLayout;
    m_lessonTitle = new QLineEdit(tr("My lesson"), this);
    top->addRow(tr("Lesson &title"), m_lessonTitle);
    layout->addLayout(top);
    auto* middle = new QHBoxLayout;
    m_list = new QListWidget(this);
    m_list->setObjectName("lesson.editor.steps");
    m_list->setAccessibleName(tr("Steps"));
    middle->addWidget(m_list, 1);
    middle->addWidget(buildStepFields(), 2);
    layout->addLayout(middle, 1);
    layout->addWidget(buildButtons());
    connect(m_list, &QListWidget::currentRowChanged, this, [this](int row) {
        storeFields();
        m_current = row;
        loadFields();
    });
    m_lesson.title = m_lessonTitle->text();
    loadFields();
    resize(900, 600);
}

QWidget* LessonEditor::buildStepFields()
{
    auto* box = new QWidget(this);
    auto* form = new QFormLayout(box);
    m_stepTitle = new QLineEdit(box);
    form->addRow(tr("Step t&itle"), m_stepTitle);
    m_narration = new QPlainTextEdit(box);
    m_narration->setToolTip(tr("Rich text; {{name}} shows a live figure of the step's tab"));
    form->addRow(tr("&Narration"), m_narration);
    m_highlight = new QLineEdit(box);
    m_highlight->setPlaceholderText(tr("a control key, a chart name or chart/series, or empty"));
    form->addRow(tr("&Highlight"), m_highlight);
    m_question = new QLineEdit(box);
    m_question->setPlaceholderText(tr("empty: no prediction"));
    form->addRow(tr("&Question"), m_question);
    m_choices = new QPlainTextEdit(box);
    m_choices->setPlaceholderText(tr("one choice a line; empty for a number question"));
    m_choices->setMaximumHeight(6 * fontMetrics().lineSpacing());
    form->addRow(tr("&Choices"), m_choices);
    m_answer = new QLineEdit(box);
    m_answer->setPlaceholderText(tr("the right choice's letter, or the number"));
    form->addRow(tr("&Answer"), m_answer);
    m_unit = new QLineEdit(box);
    form->addRow(tr("&Unit"), m_unit);
    return box;
}

QWidget* LessonEditor::buildButtons()
{
    auto* box = new QWidget(this);
    auto* row = new QHBoxLayout(box);
    row->setContentsMargins(0, 0, 0, 0);
    const auto add = [&](const QString& text, auto slot) {
        auto* b = new QPushButton(text, box);
        row->addWidget(b);
        connect(b, &QPushButton::clicked, this, slot);
        return b;
    };
    add(tr("Add &current state"), [this] {
        addCurrentState();
    })->setToolTip(tr("The current tab and scenario, and the chart under the mouse"));
    add(tr("Move &up"), [this] { moveStep(m_current, m_current - 1); });
    add(tr("Move &down"), [this] { moveStep(m_current, m_current + 1); });
    add(tr("De&lete"), [this] { removeStep(m_current); });
    row->addStretch(1);
    add(tr("&Play"), [this] {
        if (!lesson().steps.empty())
            m_window->startLesson(lesson());
    });
    add(tr("&Save as..."), [this] { askSave(); });
    return box;
}

const document::Lesson& LessonEditor::lesson()
{
    storeFields();
    return m_lesson;
}

void LessonEditor::setLesson(const document::Lesson& lesson)
{
    m_lesson = lesson;
    m_lessonTitle->setText(lesson.title);
    m_current = -1;
    refreshList();
    selectStep(lesson.steps.empty() ? -1 : 0);
}

void LessonEditor::addCurrentState()
{
    storeFields();
    ui::Tab* tab = m_window->currentTab();
    if (!tab)
        return;
    LessonStep step;
    step.tab = tab->name();
    step.scenario = m_window->scenario();
    step.scenarioObject = document::scenarioDifference(step.scenario);
    step.narration = tr("Say what this step shows.");
    // The chart under the mouse, if it is one of this tab's.
    for (QWidget* w = QApplication::widgetAt(QCursor::pos()); w; w = w->parentWidget())
        if (auto* chart = qobject_cast<ui::ChartPanel*>(w); chart && tab->charts().contains(chart))
            step.highlight = chart->name();
    m_lesson.steps.push_back(step);
    m_current = -1; // the fields shown belong to no step until the new one is selected
    refreshList();
    selectStep(static_cast<int>(m_lesson.steps.size()) - 1);
}

void LessonEditor::moveStep(int from, int to)
{
    const int n = static_cast<int>(m_lesson.steps.size());
    if (from < 0 || from >= n || to < 0 || to >= n || from == to)
        return;
    storeFields();
    const LessonStep step = m_lesson.steps[std::size_t(from)];
    m_lesson.steps.erase(m_lesson.steps.begin() + from);
    m_lesson.steps.insert(m_lesson.steps.begin() + to, step);
    m_current = -1;
    refreshList();
    selectStep(to);
}

void LessonEditor::removeStep(int index)
{
    if (index < 0 || index >= static_cast<int>(m_lesson.steps.size()))
        return;
    m_lesson.steps.erase(m_lesson.steps.begin() + index);
    m_current = -1;
    refreshList();
    selectStep(std::min(index, static_cast<int>(m_lesson.steps.size()) - 1));
}

void LessonEditor::selectStep(int index)
{
    const QSignalBlocker block(m_list);
    storeFields();
    m_current = index;
    m_list->setCurrentRow(index);
    loadFields();
}

void LessonEditor::refreshList()
{
    const QSignalBlocker block(m_list);
    m_list->clear();
    for (std::size_t i = 0; i < m_lesson.steps.size(); ++i) {
        const LessonStep& s = m_lesson.steps[i];
        //: A step in the lesson editor's list: "3. pipeline: The bubble"
        m_list->addItem(tr("%1. %2: %3").arg(i + 1).arg(s.tab, s.title));
    }
}

void LessonEditor::loadFields()
{
    const bool any = m_current >= 0 && m_current < static_cast<int>(m_lesson.steps.size());
    for (QWidget* w : std::initializer_list<QWidget*>{m_stepTitle, m_narration, m_highlight,
                                                      m_question, m_choices, m_answer, m_unit})
        w->setEnabled(any);
    const LessonStep step = any ? m_lesson.steps[std::size_t(m_current)] : LessonStep{};
    m_stepTitle->setText(step.title);
    m_narration->setPlainText(step.narration);
    m_highlight->setText(step.highlight);
    const LessonPrediction p = step.prediction.value_or(LessonPrediction{});
    m_question->setText(step.prediction ? p.question : QString());
    m_choices->setPlainText(p.choices.join('\n'));
    m_answer->setText(!step.prediction ? QString()
                          : p.kind == LessonPrediction::Kind::Choice
                          ? QString(QChar('A' + p.answerIndex))
                          : QString::number(p.answer, 'g', 12));
    m_unit->setText(p.unit);
}

void LessonEditor::storeFields()
{
    m_lesson.title = m_lessonTitle->text();
    if (m_current < 0 || m_current >= static_cast<int>(m_lesson.steps.size()))
        return;
    LessonStep& step = m_lesson.steps[std::size_t(m_current)];
    step.title = m_stepTitle->text();
    step.narration = m_narration->toPlainText();
    step.highlight = m_highlight->text().trimmed();
    step.prediction.reset();
    if (m_question->text().trimmed().isEmpty())
        return;
    LessonPrediction p;
    p.question = m_question->text();
    p.choices = m_choices->toPlainText().split('\n', Qt::SkipEmptyParts);
    const QString answer = m_answer->text().trimmed();
    if (!p.choices.isEmpty()) {
        // A letter (B) or an index (1); anything else stays out of range for the check to name.
        bool isIndex = false;
        const int index = answer.toInt(&isIndex);
        p.answerIndex = isIndex  ? index
            : answer.size() == 1 ? answer.at(0).toUpper().unicode() - 'A'
                                 : -1;
    } else {
        p.kind = LessonPrediction::Kind::Number;
        p.answer = QLocale::c().toDouble(answer);
        p.unit = m_unit->text().trimmed();
    }
    step.prediction = p;
    if (QListWidgetItem* item = m_list->item(m_current))
        item->setText(tr("%1. %2: %3").arg(m_current + 1).arg(step.tab, step.title));
}

QString LessonEditor::saveTo(const QString& path)
{
    const QJsonObject object = document::lessonToJson(lesson());
    try {
        document::lessonFromJson(object); // what File > Open lesson would say of the file
    } catch (const core::InputError& e) {
        return tr("cannot save %1: %2").arg(path, document::describeInputError({}, e, object));
    }
    QSaveFile file(path);
    const QByteArray json = QJsonDocument(object).toJson(QJsonDocument::Indented);
    if (!file.open(QIODevice::WriteOnly) || file.write(json) != json.size() || !file.commit())
        return tr("cannot write %1: %2").arg(path, file.errorString());
    return {};
}

void LessonEditor::askSave()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Save lesson"),
                                                      QDir::home().filePath("lesson.lesson.json"),
                                                      tr("ScaleLab lesson (*.lesson.json *.json)"));
    if (path.isEmpty())
        return;
    const QString error = saveTo(path);
    if (!error.isEmpty())
        QMessageBox::warning(this, tr("Cannot save lesson"), error);
}

} // namespace scalelab::app
