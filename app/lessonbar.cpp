#include "lessonbar.h"

#include "chartpanel.h"
#include "chartstyle.h"
#include "explanationpanel.h"
#include "fields.h"
#include "mainwindow.h"
#include "scenariodocument.h"
#include "tab.h"

#include <QAbstractItemView>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QButtonGroup>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QStatusBar>
#include <QTextEdit>
#include <QTimer>
#include <QVBoxLayout>
#include <QVariantAnimation>
#include <cmath>

namespace scalelab::app {

/// A thick outline around one widget of the window, drawn over everything and transparent to
/// the mouse. It follows the widget (scrolling, resizing) on a short timer, and draws only the
/// part of it that is on screen. A new target is announced by three rings that grow out of the
/// outline and fade (under two seconds), so the eye of someone at the back finds it; then the
/// outline stays still.
class HighlightOverlay : public QWidget {
public:
    explicit HighlightOverlay(QWidget* window)
        : QWidget(window)
        , m_timer(new QTimer(this))
        , m_pulse(new QVariantAnimation(this))
    {
        setObjectName("lesson.highlight");
        setAttribute(Qt::WA_TransparentForMouseEvents);
        setAttribute(Qt::WA_NoSystemBackground);
        m_timer->setInterval(150);
        connect(m_timer, &QTimer::timeout, this, &HighlightOverlay::follow);
        m_pulse->setStartValue(0.0);
        m_pulse->setEndValue(1.0);
        m_pulse->setDuration(kPulseMs);
        m_pulse->setLoopCount(kPulses);
        connect(m_pulse, &QVariantAnimation::valueChanged, this, [this] { update(); });
        connect(m_pulse, &QVariantAnimation::finished, this, [this] { update(); });
        hide();
    }

    /// Outlines `target` (none: nothing), with the pulse when it is a new step's.
    void setTarget(QWidget* target)
    {
        m_target = target;
        m_pulse->stop();
        if (target) {
            m_timer->start();
            m_pulse->start();
        } else {
            m_timer->stop();
        }
        follow();
    }
    QWidget* target() const { return m_target; }
    QRect outline() const { return m_outline; }
    bool isPulsing() const { return m_pulse->state() == QAbstractAnimation::Running; }

    /// Where the target is now, in window coordinates; redraws when that changed.
    void follow()
    {
        QRect rect;
        if (m_target && m_target->isVisible()) {
            // The part of the target its scroll areas and parents leave in view.
            QWidget* window = parentWidget();
            QRect shown(m_target->mapTo(window, QPoint()), m_target->size());
            for (QWidget* w = m_target->parentWidget(); w && w != window; w = w->parentWidget())
                shown &= QRect(w->mapTo(window, QPoint()), w->size());
            if (!shown.isEmpty())
                rect = shown.adjusted(-kMargin, -kMargin, kMargin, kMargin)
                           .intersected(window->rect());
        }
        setGeometry(parentWidget()->rect());
        setVisible(!rect.isEmpty());
        if (rect != m_outline) {
            m_outline = rect;
            update();
        }
        if (isVisible())
            raise();
    }

protected:
    void paintEvent(QPaintEvent*) override
    {
        if (m_outline.isEmpty())
            return;
        QPainter painter(this);
        painter.setRenderHint(QPainter::Antialiasing);
        // Okabe-Ito orange: seen by every kind of colour vision, on light and dark charts.
        const QColor orange(0xE6, 0x9F, 0x00);
        const qreal width = 4.0 * ui::lineScale();
        painter.setBrush(Qt::NoBrush);
        const qreal half = width / 2;
        const QRectF outline = QRectF(m_outline).adjusted(half, half, -half, -half);
        if (isPulsing()) {
            // A ring leaves the outline, grows by a few line widths and fades out.
            const double t = m_pulse->currentValue().toDouble();
            QColor ring = orange;
            ring.setAlphaF(static_cast<float>(0.8 * (1.0 - t)));
            painter.setPen(QPen(ring, width * (1.0 + 1.5 * (1.0 - t))));
            const qreal grow = 4 * width * t;
            painter.drawRoundedRect(outline.adjusted(-grow, -grow, grow, grow), 6 + grow, 6 + grow);
        }
        painter.setPen(QPen(orange, width));
        painter.drawRoundedRect(outline, 6, 6);
    }

private:
    static constexpr int kMargin = 4;
    static constexpr int kPulseMs = 600;
    static constexpr int kPulses = 3;
    QPointer<QWidget> m_target;
    QRect m_outline;
    QTimer* m_timer;
    QVariantAnimation* m_pulse;
};

LessonBar::LessonBar(MainWindow* window)
    : m_window(window)
    , m_overlay(new HighlightOverlay(window))
    , m_blank(new QWidget(window))
{
    setObjectName("lesson.bar");
    setFrameShape(QFrame::StyledPanel);
    setFocusPolicy(Qt::StrongFocus);
    setAccessibleName(tr("Lesson"));
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    m_counter = new QLabel(this);
    m_counter->setObjectName("lesson.counter");
    m_title = new QLabel(this);
    m_title->setObjectName("lesson.title");
    m_title->setTextFormat(Qt::PlainText);
    top->addWidget(m_counter);
    top->addWidget(m_title, 1);
    top->addWidget(buildNavigation());
    layout->addLayout(top);
    m_narration = new QLabel(this);
    m_narration->setObjectName("lesson.narration");
    m_narration->setTextFormat(Qt::RichText);
    m_narration->setWordWrap(true);
    m_narration->setTextInteractionFlags(Qt::TextBrowserInteraction);
    m_narration->setOpenExternalLinks(true);
    // Narration and prediction scroll when they would take more than their share of the window
    // (followTypeSize sets it): the charts below must stay in view.
    auto* body = new QWidget(this);
    auto* bodyColumn = new QVBoxLayout(body);
    bodyColumn->setContentsMargins(0, 0, 0, 0);
    bodyColumn->addWidget(m_narration);
    bodyColumn->addWidget(buildPrediction());
    m_body = new QScrollArea(this);
    m_body->setObjectName("lesson.body");
    m_body->setWidget(body);
    m_body->setWidgetResizable(true);
    m_body->setFrameShape(QFrame::NoFrame);
    m_body->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    layout->addWidget(m_body);
    m_blank->setObjectName("lesson.blank");
    m_blank->setAutoFillBackground(true);
    QPalette black = m_blank->palette();
    black.setColor(QPalette::Window, Qt::black);
    m_blank->setPalette(black);
    m_blank->hide();
    followTypeSize();
    hide();
}

void LessonBar::follow(ui::Tab* tab)
{
    connect(tab, &ui::Tab::refreshed, this, [this, tab] {
        if (m_active && tab->name() == m_lesson.steps[std::size_t(m_index)].tab) {
            updateNarration();
            // A refresh may restyle a series (the tab's own emphasis): emphasise it again.
            if (m_emphasised)
                m_emphasised->emphasiseSeries(m_emphasised->emphasisedSeries());
        }
    });
}

LessonBar::~LessonBar()
{
    qApp->removeEventFilter(this);
}

QWidget* LessonBar::buildNavigation()
{
    auto* box = new QWidget(this);
    auto* row = new QHBoxLayout(box);
    row->setContentsMargins(0, 0, 0, 0);
    m_back = new QPushButton(tr("Back"), box);
    m_back->setObjectName("lesson.back");
    m_back->setToolTip(tr("Previous step (Page Up, Left)"));
    m_next = new QPushButton(tr("Next"), box);
    m_next->setObjectName("lesson.next");
    m_next->setToolTip(tr("Next step, or the answer first (Page Down, Right, Space)"));
    auto* leaveButton = new QPushButton(tr("Leave lesson"), box);
    leaveButton->setObjectName("lesson.leave");
    leaveButton->setToolTip(tr("End the lesson and bring back the scenario from before it (Esc)"));
    for (QPushButton* b : {m_back, m_next, leaveButton}) {
        b->setFocusPolicy(Qt::NoFocus); // the keys stay with the bar
        row->addWidget(b);
    }
    connect(m_back, &QPushButton::clicked, this, &LessonBar::back);
    connect(m_next, &QPushButton::clicked, this, &LessonBar::next);
    connect(leaveButton, &QPushButton::clicked, this, &LessonBar::leave);
    return box;
}

QWidget* LessonBar::buildPrediction()
{
    m_prediction = new QWidget(this);
    m_prediction->setObjectName("lesson.prediction");
    auto* column = new QVBoxLayout(m_prediction);
    column->setContentsMargins(0, 0, 0, 0);
    m_question = new QLabel(m_prediction);
    m_question->setTextFormat(Qt::RichText);
    m_question->setWordWrap(true);
    column->addWidget(m_question);
    // Choices two to a row, so long ones keep their whole text.
    m_choiceGrid = new QGridLayout;
    column->addLayout(m_choiceGrid);
    auto* row = new QHBoxLayout;
    m_choiceGroup = new QButtonGroup(this);
    m_number = new QLineEdit(m_prediction);
    m_number->setObjectName("lesson.number");
    m_number->setPlaceholderText(tr("the class's answer"));
    m_number->setAccessibleName(tr("The class's answer"));
    m_unit = new QLabel(m_prediction);
    m_unit->setTextFormat(Qt::PlainText);
    row->addWidget(m_number);
    row->addWidget(m_unit);
    m_reveal = new QPushButton(tr("Reveal"), m_prediction);
    m_reveal->setObjectName("lesson.reveal");
    m_reveal->setFocusPolicy(Qt::NoFocus);
    row->addWidget(m_reveal);
    row->addStretch(1);
    column->addLayout(row);
    m_answer = new QLabel(m_prediction);
    m_answer->setObjectName("lesson.answer");
    m_answer->setTextFormat(Qt::RichText);
    m_answer->setWordWrap(true);
    column->addWidget(m_answer);
    connect(m_reveal, &QPushButton::clicked, this, &LessonBar::reveal);
    connect(m_number, &QLineEdit::returnPressed, this, &LessonBar::reveal);
    return m_prediction;
}

void LessonBar::start(const document::Lesson& lesson)
{
    if (lesson.steps.empty())
        return;
    if (!m_active) {
        m_before = m_window->scenario();
        m_beforeTab = m_window->currentTab() ? m_window->currentTab()->name() : QString();
        qApp->installEventFilter(this);
    }
    m_lesson = lesson;
    m_active = true;
    show();
    goToStep(0);
    m_window->statusBar()->showMessage(
        tr("Lesson \"%1\": Page Down or Space for the next step, Page Up back, B blanks the "
           "screen, Esc leaves.")
            .arg(m_lesson.title),
        15000);
}

void LessonBar::goToStep(int index)
{
    if (!m_active)
        return;
    m_index = std::clamp(index, 0, static_cast<int>(m_lesson.steps.size()) - 1);
    m_revealed = false;
    const document::LessonStep& step = m_lesson.steps[std::size_t(m_index)];
    m_window->setScenario(step.scenario, tr("Lesson step %1").arg(m_index + 1));
    m_window->showTab(step.tab);
    m_title->setText(step.title);
    updateCounter();
    showPrediction();
    updateNarration();
    placeHighlight();
    setFocus(Qt::OtherFocusReason);
}

void LessonBar::next()
{
    if (!m_active)
        return;
    if (isBlank()) {
        setBlank(false);
        return;
    }
    const document::LessonStep& step = m_lesson.steps[std::size_t(m_index)];
    if (step.prediction && !m_revealed)
        reveal();
    else if (m_index + 1 < static_cast<int>(m_lesson.steps.size()))
        goToStep(m_index + 1);
    else
        m_window->statusBar()->showMessage(tr("The end of the lesson: Esc leaves it."), 8000);
}

void LessonBar::back()
{
    if (!m_active)
        return;
    if (isBlank()) {
        setBlank(false);
        return;
    }
    goToStep(m_index - 1);
}

void LessonBar::leave()
{
    if (!m_active)
        return;
    m_active = false;
    qApp->removeEventFilter(this);
    setBlank(false);
    m_overlay->setTarget(nullptr);
    emphasiseSeries(nullptr, {});
    hide();
    m_window->scenarioDocument()->replace(m_before, tr("Leave lesson"));
    if (!m_beforeTab.isEmpty())
        m_window->showTab(m_beforeTab);
    m_window->statusBar()->showMessage(tr("Left the lesson; the scenario from before it is back."),
                                       8000);
    emit left();
}

void LessonBar::setBlank(bool on)
{
    if (on) {
        m_blank->setGeometry(m_window->rect());
        m_blank->show();
        m_blank->raise();
    } else {
        m_blank->hide();
    }
}

bool LessonBar::isBlank() const
{
    return !m_blank->isHidden();
}

void LessonBar::updateCounter()
{
    //: The lesson's step counter: "3 / 14"
    m_counter->setText(tr("%1 / %2").arg(m_index + 1).arg(m_lesson.steps.size()));
    m_back->setEnabled(m_index > 0);
}

QString LessonBar::filled(const QString& text) const
{
    // The step's tab's live figures, as its explanation shows them.
    QHash<QString, QString> values;
    for (ui::Tab* tab : m_window->tabs())
        if (tab->name() == m_lesson.steps[std::size_t(m_index)].tab)
            values = tab->explanationValues();
    return ui::fillExplanation(text, values, true);
}

void LessonBar::updateNarration()
{
    const document::LessonStep& step = m_lesson.steps[std::size_t(m_index)];
    m_narration->setText(filled(step.narration));
    if (step.prediction) {
        m_question->setText(filled(step.prediction->question));
        if (m_revealed)
            reveal(); // the explanation's figures follow the sliders too
    }
    fitBody();
}

void LessonBar::fitBody()
{
    // As tall as the narration and prediction need, and never more than two fifths of the window.
    // A hidden bar (no lesson playing) is fitted when start() shows it.
    if (isHidden())
        return;
    QWidget* content = m_body->widget();
    const int width = std::max(m_body->viewport()->width(), m_window->width() / 2);
    const int needed = content->hasHeightForWidth() ? content->heightForWidth(width)
                                                    : content->sizeHint().height();
    const int most = std::min(needed, m_window->height() * 2 / 5);
    m_body->setMaximumHeight(most);
    // A small window may squeeze it further (it scrolls), down to three lines of narration.
    m_body->setMinimumHeight(std::min(most, 3 * m_narration->fontMetrics().lineSpacing()));
    m_body->updateGeometry();
}

void LessonBar::clearChoices()
{
    for (QPushButton* b : std::as_const(m_choices)) {
        m_choiceGroup->removeButton(b);
        delete b;
    }
    m_choices.clear();
}

void LessonBar::showPrediction()
{
    clearChoices();
    const document::LessonStep& step = m_lesson.steps[std::size_t(m_index)];
    m_prediction->setVisible(step.prediction.has_value());
    m_answer->clear();
    m_answer->hide();
    m_number->clear();
    if (!step.prediction)
        return;
    const document::LessonPrediction& p = *step.prediction;
    const bool choices = p.kind == document::LessonPrediction::Kind::Choice;
    for (int i = 0; choices && i < p.choices.size(); ++i) {
        //: A choice of a lesson's question: "B. About twice as much"
        auto* b = new QPushButton(tr("%1. %2").arg(QChar('A' + i), p.choices[i]), m_prediction);
        b->setObjectName(QString("lesson.choice.%1").arg(i));
        b->setCheckable(true);
        b->setFocusPolicy(Qt::NoFocus);
        m_choiceGroup->addButton(b, i);
        m_choiceGrid->addWidget(b, i / 2, i % 2);
        m_choices << b;
    }
    m_number->setVisible(!choices);
    m_unit->setVisible(!choices);
    m_unit->setText(p.unitFor(0)); // the plural: "[    ] slots"
}

QString LessonBar::classAnswerLine() const
{
    const document::LessonPrediction& p = *m_lesson.steps[std::size_t(m_index)].prediction;
    if (p.kind == document::LessonPrediction::Kind::Choice) {
        const int picked = m_choiceGroup->checkedId();
        if (picked < 0)
            return {};
        return picked == p.answerIndex
            ? tr("The class said %1: right.").arg(QChar('A' + picked))
            : tr("The class said %1: not this time.").arg(QChar('A' + picked));
    }
    const QString typed =
        m_number->text().remove(p.unitFor(0)).remove(p.unitFor(1)).remove('%').trimmed();
    if (typed.isEmpty())
        return {};
    bool ok = false;
    double value = QLocale().toDouble(typed, &ok);
    if (!ok)
        value = QLocale::c().toDouble(typed, &ok);
    if (!ok)
        return tr("The class's answer \"%1\" is not a number.").arg(typed.toHtmlEscaped());
    return p.accepts(value) ? tr("The class said %1: right.").arg(typed.toHtmlEscaped())
                            : tr("The class said %1: not this time.").arg(typed.toHtmlEscaped());
}

void LessonBar::reveal()
{
    const document::LessonStep& step = m_lesson.steps[std::size_t(m_index)];
    if (!m_active || !step.prediction)
        return;
    const document::LessonPrediction& p = *step.prediction;
    m_revealed = true;
    QString answer = p.kind == document::LessonPrediction::Kind::Choice
        ? tr("%1. %2").arg(QChar('A' + p.answerIndex), p.choices[p.answerIndex].toHtmlEscaped())
        : tr("%1 %2").arg(QLocale().toString(p.answer, 'g', 12),
                          p.unitFor(p.answer).toHtmlEscaped());
    QString html = tr("<p><b>Answer: %1</b> %2</p>").arg(answer, classAnswerLine());
    html += filled(p.explanation);
    m_answer->setText(html);
    m_answer->show();
    fitBody();
    // On a small screen the body scrolls: bring the answer into view.
    QTimer::singleShot(0, this, [this] { m_body->ensureWidgetVisible(m_answer, 0, 0); });
    // The right choice in Okabe-Ito sky blue (its text size unchanged, so nothing moves).
    for (int i = 0; i < m_choices.size(); ++i) {
        QPalette palette = m_choices[i]->palette();
        if (i == p.answerIndex)
            palette.setColor(QPalette::Button, QColor(0x56, 0xB4, 0xE9));
        m_choices[i]->setPalette(palette);
    }
}

void LessonBar::followTypeSize()
{
    // The narration follows the window's type (larger in projector mode), a little larger still.
    // (The application's font: a hidden bar hears of its change before its own font follows.)
    const QFont base = QApplication::font();
    QFont large = base;
    if (base.pointSizeF() > 0)
        large.setPointSizeF(base.pointSizeF() * 1.15);
    else
        large.setPixelSize(qRound(base.pixelSize() * 1.15));
    m_narration->setFont(large);
    QFont bold = base;
    bold.setBold(true);
    m_counter->setFont(bold);
    m_title->setFont(bold);
    fitBody();
}

bool LessonBar::event(QEvent* event)
{
    const bool done = QFrame::event(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::ApplicationFontChange)
        followTypeSize();
    return done;
}

QWidget* LessonBar::highlightTarget() const
{
    return m_overlay->target();
}

bool LessonBar::isHighlightPulsing() const
{
    return m_overlay->isPulsing();
}

void LessonBar::emphasiseSeries(ui::ChartViewPanel* chart, const QString& series)
{
    if (m_emphasised && m_emphasised != chart)
        m_emphasised->emphasiseSeries({});
    m_emphasised = chart;
    if (chart)
        chart->emphasiseSeries(series);
}

QRect LessonBar::highlightRect() const
{
    m_overlay->follow();
    return m_overlay->outline();
}

void LessonBar::placeHighlight()
{
    const document::LessonStep& step = m_lesson.steps[std::size_t(m_index)];
    // "<chart>/<series>": the chart is outlined, the series drawn stronger than the rest.
    const QString chartName = step.highlight.section('/', 0, 0);
    const QString series = step.highlight.section('/', 1);
    QWidget* target = nullptr;
    ui::ChartViewPanel* seriesChart = nullptr;
    for (ui::Tab* tab : m_window->tabs()) {
        if (tab->name() != step.tab || step.highlight.isEmpty())
            continue;
        if (document::findField(step.highlight))
            target = tab->findChild<QWidget*>(step.highlight);
        for (ui::ChartPanel* chart : tab->charts())
            if (chart->name() == chartName) {
                target = chart;
                if (!series.isEmpty())
                    seriesChart = qobject_cast<ui::ChartViewPanel*>(chart);
            }
    }
    for (ui::Tab* tab : m_window->tabs())
        if (target && tab->name() == step.tab)
            tab->reveal(target);
    emphasiseSeries(seriesChart, series);
    m_overlay->setTarget(target);
    if (!target)
        return;
    // A control or chart scrolled out of sight is scrolled into it once the tab is laid out.
    QTimer::singleShot(0, this, [this, target = QPointer<QWidget>(target)] {
        for (QWidget* w = target; w; w = w->parentWidget())
            if (auto* area = qobject_cast<QScrollArea*>(w); area && target) {
                area->ensureWidgetVisible(target, 0, 0);
                break;
            }
        m_overlay->follow();
    });
}

namespace {

/// Whether a focused `widget` keeps arrows and Space (a slider, a list), and B (a text field).
bool keepsKey(const QObject* widget, int key)
{
    const bool text = qobject_cast<const QLineEdit*>(widget)
        || qobject_cast<const QAbstractSpinBox*>(widget) || qobject_cast<const QTextEdit*>(widget)
        || qobject_cast<const QPlainTextEdit*>(widget);
    const bool arrows = text || qobject_cast<const QAbstractSlider*>(widget)
        || qobject_cast<const QComboBox*>(widget) || qobject_cast<const QAbstractItemView*>(widget);
    if (key == Qt::Key_B)
        return text;
    return arrows && (key == Qt::Key_Left || key == Qt::Key_Right || key == Qt::Key_Space);
}

} // namespace

bool LessonBar::handleKey(QObject* receiver, QKeyEvent* key)
{
    if (key->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier))
        return false;
    // The focused control is asked too: a key it keeps may reach the filter again on its way
    // up to the control's parents.
    if (keepsKey(receiver, key->key()) || keepsKey(QApplication::focusWidget(), key->key()))
        return false;
    switch (key->key()) {
    case Qt::Key_PageDown:
    case Qt::Key_Right:
    case Qt::Key_Space:
        next();
        return true;
    case Qt::Key_PageUp:
    case Qt::Key_Left:
        back();
        return true;
    case Qt::Key_B:
        setBlank(!isBlank());
        return true;
    case Qt::Key_Escape:
        leave();
        return true;
    default:
        return false;
    }
}

bool LessonBar::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::Resize && watched == m_window) {
        fitBody();
        if (isBlank())
            m_blank->setGeometry(m_window->rect());
    }
    if (m_active && event->type() == QEvent::KeyPress) {
        auto* widget = qobject_cast<QWidget*>(watched);
        if (widget && widget->window() == m_window)
            return handleKey(watched, static_cast<QKeyEvent*>(event));
    }
    return QFrame::eventFilter(watched, event);
}

} // namespace scalelab::app
