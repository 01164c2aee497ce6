// The lesson player (docs/LESSONS.md): the built-in lesson played through, presenter keys,
// leaving, predictions, projector mode. Offscreen.

#include "chartpanel.h"
#include "chartstyle.h"
#include "lesson.h"
#include "lessonbar.h"
#include "lessoneditor.h"
#include "mainwindow.h"
#include "parametercontrol.h"
#include "scenariodocument.h"
#include "scenariojson.h"
#include "testhelpers.h"

#include <QAbstractBarSeries>
#include <QBarSet>
#include <QChart>
#include <QDir>
#include <QFileInfo>
#include <QFontInfo>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSlider>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <QXYSeries>

using namespace scalelab;
using app::LessonBar;

namespace {

/// Three steps: a memory state, a pipeline state with a number question, a zero state with a
/// choice question.
const QByteArray kSmall = R"({
  "title": "Small",
  "steps": [
    { "tab": "memory", "scenario": { "memory": { "layers": 12, "segments": 3 } },
      "narration": "Layers: {{layers}}", "highlight": "memory.layers" },
    { "tab": "pipeline", "scenario": { "pipeline": { "stages": 4, "microbatches": 12 } },
      "narration": "Bubble {{bubble}}", "highlight": "pipeline-gantt",
      "prediction": { "question": "Bubble?", "answer": 20, "unit": "%" } },
    { "tab": "zero", "scenario": { "zero": { "ranks": 8 } }, "narration": "Ranks {{ranks}}",
      "prediction": { "question": "Which?", "choices": ["x", "y"], "answer": 1,
                      "explanation": "because {{ranks}}" } }
  ]
})";

/// A series highlighted, its chart alone, a bar set of another tab's chart.
const QByteArray kSeries = R"({
  "title": "Series",
  "steps": [
    { "tab": "zero", "narration": "ZeRO-3", "highlight": "zero-memory/zero3" },
    { "tab": "zero", "narration": "The chart", "highlight": "zero-memory" },
    { "tab": "memory", "narration": "Moments", "highlight": "memory-budget/adam_moments" }
  ]
})";

document::Lesson smallLesson()
{
    return document::lessonFromJson(QJsonDocument::fromJson(kSmall).object());
}

QByteArray json(const core::Scenario& s)
{
    return QJsonDocument(document::scenarioToJson(s)).toJson(QJsonDocument::Compact);
}

/// A scenario the lesson does not use, to see it come back.
core::Scenario teachersOwn()
{
    core::Scenario s;
    s.memory.layers = 40;
    s.memory.segments = 5;
    s.pipeline.stages = 6;
    return s;
}

/// How each series (and bar set) of `chart` is drawn, by its object name: pen and fill.
QHash<QString, std::pair<QPen, QBrush>> looks(const ui::ChartViewPanel* chart)
{
    QHash<QString, std::pair<QPen, QBrush>> out;
    for (QAbstractSeries* series : chart->chart()->series()) {
        if (auto* bars = qobject_cast<QAbstractBarSeries*>(series))
            for (const QBarSet* set : bars->barSets())
                out.insert(set->objectName(), {set->pen(), set->brush()});
        else if (auto* xy = qobject_cast<QXYSeries*>(series))
            out.insert(xy->objectName(), {xy->pen(), xy->brush()});
    }
    return out;
}

void waitForTabs(app::MainWindow& w)
{
    for (ui::Tab* tab : w.tabs())
        test::settle(*tab);
}

} // namespace

class TstLessonPlayer : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { test::useOwnSettings("tst_lessonplayer"); }

    void playsEveryStepOfTheBuiltInLesson()
    {
        const document::Lesson lesson = document::loadLessonFile(document::kBuiltInLesson);
        app::MainWindow w{teachersOwn()};
        w.resize(1600, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.playBuiltInLesson();
        LessonBar* bar = w.lessonBar();
        QVERIFY(bar->isActive());
        QVERIFY(bar->isVisible());
        const int n = static_cast<int>(lesson.steps.size());
        for (int i = 0; i < n; ++i) {
            const document::LessonStep& step = lesson.steps[std::size_t(i)];
            QCOMPARE(bar->stepIndex(), i);
            QCOMPARE(bar->counterLabel()->text(), QString("%1 / %2").arg(i + 1).arg(n));
            // Exactly the step's scenario (the defaults under its keys) and its tab.
            QCOMPARE(json(w.scenario()), json(step.scenario));
            QCOMPARE(w.currentTab()->name(), step.tab);
            waitForTabs(w);
            QTRY_VERIFY(!w.currentTab()->explanationValues().isEmpty());
            // Every placeholder is a figure the tab knows: none is left as {{name}}.
            QTRY_VERIFY2(!bar->narrationLabel()->text().contains("{{"),
                         qPrintable(bar->narrationLabel()->text()));
            if (step.scenarioObject["tensor_parallel"]["split"].toString().startsWith("w")) {
                // The narration's figure is the wrong split's error, far above rounding.
                const auto shown = [&] {
                    bool ok = false;
                    const double v =
                        w.currentTab()->explanationValues().value("shown_difference").toDouble(&ok);
                    return ok ? v : 0.0;
                };
                QTRY_VERIFY2(shown() > 1e-3, qPrintable(bar->narrationLabel()->text()));
            }
            if (!step.highlight.isEmpty()) {
                QVERIFY2(bar->highlightTarget(), qPrintable(step.highlight));
                QTRY_VERIFY2(!bar->highlightRect().isEmpty(), qPrintable(step.highlight));
            }
            const int undoBefore = w.undoStack()->count();
            if (step.prediction) {
                QVERIFY(!bar->isRevealed());
                QTest::keyClick(&w, Qt::Key_PageDown); // the first Next reveals
                QCOMPARE(bar->stepIndex(), i);
                QVERIFY(bar->isRevealed());
                QVERIFY(bar->answerLabel()->isVisible());
                QVERIFY(!bar->answerLabel()->text().contains("{{"));
            }
            QTest::keyClick(&w, Qt::Key_PageDown);
            QVERIFY(w.undoStack()->count() <= undoBefore + 1); // one undo step a step at most
        }
        QCOMPARE(bar->stepIndex(), n - 1); // Next on the last step stays there
        QTest::keyClick(&w, Qt::Key_Escape);
        QVERIFY(!bar->isActive());
        QCOMPARE(json(w.scenario()), json(teachersOwn()));
    }

    void screenshotsOnRequest()
    {
        // Not a check: pictures for a person to look at (docs/LESSONS.md).
        const QString folder = qEnvironmentVariable("SCALELAB_LESSON_SHOTS");
        if (folder.isEmpty())
            QSKIP("SCALELAB_LESSON_SHOTS=DIR writes every step of the built-in lesson in "
                  "projector mode at 1280 x 800 (SCALELAB_LESSON_SHOTS_SIZE=1920x1080: that size)");
        QSize size(1280, 800);
        if (const QStringList wh = qEnvironmentVariable("SCALELAB_LESSON_SHOTS_SIZE").split('x');
            wh.size() == 2 && wh[0].toInt() > 0 && wh[1].toInt() > 0)
            size = QSize(wh[0].toInt(), wh[1].toInt());
        app::MainWindow w{core::Scenario{}};
        w.setProjectorMode(true);
        w.resize(size);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.playBuiltInLesson();
        LessonBar* bar = w.lessonBar();
        for (int i = 0; i < static_cast<int>(bar->lesson().steps.size()); ++i) {
            bar->goToStep(i);
            waitForTabs(w);
            QTest::qWait(300); // the outline follows on its timer
            if (bar->lesson().steps[std::size_t(i)].prediction)
                bar->reveal();
            QTest::qWait(100);
            QVERIFY(w.grab().save(
                QDir(folder).filePath(QString("step-%1.png").arg(i + 1, 2, 10, QChar('0')))));
        }
        bar->leave();
        w.setProjectorMode(false);
    }

    void presenterKeys()
    {
        app::MainWindow w{teachersOwn()};
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.showTab("fp8");
        w.startLesson(smallLesson());
        LessonBar* bar = w.lessonBar();
        QCOMPARE(w.currentTab()->name(), QString("memory"));
        QTest::keyClick(&w, Qt::Key_PageDown);
        QCOMPARE(bar->stepIndex(), 1);
        QCOMPARE(w.currentTab()->name(), QString("pipeline"));
        QTest::keyClick(&w, Qt::Key_Space); // a prediction: reveal first
        QCOMPARE(bar->stepIndex(), 1);
        QVERIFY(bar->isRevealed());
        QTest::keyClick(&w, Qt::Key_Right);
        QCOMPARE(bar->stepIndex(), 2);
        QCOMPARE(w.scenario().zero.ranks, std::int64_t(8));
        QTest::keyClick(&w, Qt::Key_PageUp);
        QCOMPARE(bar->stepIndex(), 1);
        QVERIFY(!bar->isRevealed()); // the question asks again
        QTest::keyClick(&w, Qt::Key_Left);
        QCOMPARE(bar->stepIndex(), 0);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(12));
        // B blanks the window and shows it again.
        QTest::keyClick(&w, Qt::Key_B);
        QVERIFY(bar->isBlank());
        const QImage blank = w.grab().toImage();
        QCOMPARE(blank.pixelColor(blank.width() / 2, blank.height() / 2), QColor(Qt::black));
        QTest::keyClick(&w, Qt::Key_B);
        QVERIFY(!bar->isBlank());
        // Esc: the scenario and tab from before the lesson come back, as one undo step.
        QTest::keyClick(&w, Qt::Key_Escape);
        QVERIFY(!bar->isActive());
        QVERIFY(!bar->isVisible());
        QCOMPARE(json(w.scenario()), json(teachersOwn()));
        QCOMPARE(w.currentTab()->name(), QString("fp8"));
        w.undoStack()->undo();
        QCOMPARE(w.scenario().memory.layers, std::int64_t(12)); // the last step shown
        // Without a lesson the keys are the window's again.
        QTest::keyClick(&w, Qt::Key_PageDown);
        QCOMPARE(bar->stepIndex(), 0);
    }

    void slidersStayLiveAndNextReturnsToTheScript()
    {
        app::MainWindow w{core::Scenario{}};
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.startLesson(smallLesson());
        LessonBar* bar = w.lessonBar();
        ui::ParameterControl* layers = w.currentTab()->control("memory.layers");
        QVERIFY(layers);
        layers->setValue(20);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(20));
        waitForTabs(w);
        QTRY_COMPARE(bar->narrationLabel()->text(), QString("Layers: 20")); // live figures
        // A focused slider keeps its arrows; Page Down still belongs to the lesson.
        auto* slider = layers->findChild<QSlider*>();
        QVERIFY(slider);
        slider->setFocus();
        QTest::keyClick(slider, Qt::Key_Right);
        QCOMPARE(bar->stepIndex(), 0);
        QTest::keyClick(slider, Qt::Key_PageDown);
        QCOMPARE(bar->stepIndex(), 1);
        QTest::keyClick(&w, Qt::Key_PageUp);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(12)); // back on the script
        bar->leave();
    }

    void predictionRevealsItsAnswer()
    {
        app::MainWindow w{core::Scenario{}};
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.startLesson(smallLesson());
        LessonBar* bar = w.lessonBar();
        bar->goToStep(1);
        QVERIFY(bar->numberEdit()->isVisible());
        QVERIFY(bar->choiceButtons().isEmpty());
        QVERIFY(!bar->answerLabel()->isVisible());
        bar->numberEdit()->setText("19.5");
        QTest::keyClick(bar->numberEdit(), Qt::Key_Return);
        QVERIFY(bar->isRevealed());
        QVERIFY2(bar->answerLabel()->text().contains("Answer: 20 %"),
                 qPrintable(bar->answerLabel()->text()));
        QVERIFY(bar->answerLabel()->text().contains("right."));
        bar->goToStep(2);
        QCOMPARE(bar->choiceButtons().size(), 2);
        QVERIFY(!bar->numberEdit()->isVisible());
        bar->choiceButtons().at(0)->click();
        bar->findChild<QPushButton*>("lesson.reveal")->click();
        const QString answer = bar->answerLabel()->text();
        QVERIFY2(answer.contains("Answer: B. y"), qPrintable(answer));
        QVERIFY(answer.contains("not this time"));
        QVERIFY2(answer.contains("because 8"), qPrintable(answer)); // filled from the tab
        bar->leave();
    }

    void anAnswerOfOneReadsInTheSingular()
    {
        // The built-in lesson's all-to-all count: one slot leaves its rank.
        app::MainWindow w{core::Scenario{}};
        w.playBuiltInLesson();
        LessonBar* bar = w.lessonBar();
        int checked = 0;
        for (int i = 0; i < static_cast<int>(bar->lesson().steps.size()); ++i) {
            const auto& p = bar->lesson().steps[std::size_t(i)].prediction;
            if (!p || p->unit != "slot(s)")
                continue;
            ++checked;
            bar->goToStep(i);
            bar->numberEdit()->setText("1 slot");
            bar->reveal();
            const QString answer = bar->answerLabel()->text();
            QVERIFY2(answer.contains("Answer: 1 slot</b>"), qPrintable(answer));
            QVERIFY2(answer.contains("The class said 1: right."), qPrintable(answer));
        }
        QCOMPARE(checked, 1);
        bar->leave();
    }

    void highlightIsDrawn()
    {
        app::MainWindow w{core::Scenario{}};
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.startLesson(smallLesson());
        LessonBar* bar = w.lessonBar();
        QCOMPARE(bar->highlightTarget(), w.currentTab()->control("memory.layers"));
        QTRY_VERIFY(!bar->highlightRect().isEmpty());
        const QRect r = bar->highlightRect();
        const QImage image = w.grab().toImage();
        // The outline's left edge, half-way down: Okabe-Ito orange.
        const QColor c = image.pixelColor(r.left() + 2, r.center().y());
        QVERIFY2(std::abs(c.red() - 0xE6) < 24 && std::abs(c.green() - 0x9F) < 24 && c.blue() < 40,
                 qPrintable(c.name()));
        bar->goToStep(2); // no highlight
        QVERIFY(!bar->highlightTarget());
        QVERIFY(bar->highlightRect().isEmpty());
        bar->leave();
    }

    void seriesHighlightIsDrawnAndLeavingRestoresIt()
    {
        app::MainWindow w{core::Scenario{}};
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.tabs(); // every tab made (the window makes the others after its first paint)
        auto* zero = w.findChild<ui::ChartViewPanel*>("zero-memory");
        auto* budget = w.findChild<ui::ChartViewPanel*>("memory-budget");
        QVERIFY(zero && budget);
        const auto zeroPlain = looks(zero);
        const auto budgetPlain = looks(budget);
        QVERIFY(zeroPlain.contains("zero3") && budgetPlain.contains("adam_moments"));
        w.startLesson(document::lessonFromJson(QJsonDocument::fromJson(kSeries).object()));
        LessonBar* bar = w.lessonBar();
        waitForTabs(w);
        // The chart is outlined (and pulses for a moment); its ZeRO-3 line is twice as thick,
        // every other line of it faded.
        QCOMPARE(bar->highlightTarget(), zero);
        QVERIFY(bar->isHighlightPulsing());
        QTRY_VERIFY(!bar->highlightRect().isEmpty());
        auto shown = looks(zero);
        const qreal plainWidth = zeroPlain["zero3"].first.widthF();
        QCOMPARE(shown["zero3"].first.widthF(), 2 * plainWidth);
        QCOMPARE(shown["zero3"].first.color(), zeroPlain["zero3"].first.color());
        for (const QString& other : QStringList{"dp", "zero1", "zero2", "accelerator"})
            QVERIFY2(shown[other].first.color().alpha() < zeroPlain[other].first.color().alpha(),
                     qPrintable(other));
        // Projector mode thickens every line; the emphasis stays on top of it.
        w.setProjectorMode(true);
        QTRY_COMPARE(looks(zero)["zero3"].first.widthF(), 2 * plainWidth * ui::lineScale());
        w.setProjectorMode(false);
        QTRY_COMPARE(looks(zero)["zero3"].first.widthF(), 2 * plainWidth);
        // The chart alone: every line as the tab drew it.
        bar->next();
        QCOMPARE(bar->highlightTarget(), zero);
        QCOMPARE(zero->emphasisedSeries(), QString());
        QCOMPARE(looks(zero), zeroPlain);
        bar->back();
        QCOMPARE(looks(zero)["zero3"].first.widthF(), 2 * plainWidth);
        // A bar set of another tab: a thick dark outline, the other parts faded; the ZeRO chart
        // is back to the tab's own looks.
        bar->goToStep(2);
        QCOMPARE(looks(zero), zeroPlain);
        shown = looks(budget);
        QCOMPARE(shown["adam_moments"].first.widthF(), qreal(ui::kLineWidth));
        QCOMPARE(shown["adam_moments"].second, budgetPlain["adam_moments"].second);
        QVERIFY(shown["weights"].second.color().alpha()
                < budgetPlain["weights"].second.color().alpha());
        bar->leave();
        QCOMPARE(looks(budget), budgetPlain);
        QCOMPARE(looks(zero), zeroPlain);
    }

    void everyHighlightableSeriesIsOnItsChart()
    {
        // The keys a lesson file may name (document::highlightableSeries) are the object names
        // the tabs give their series.
        app::MainWindow w{core::Scenario{}};
        int charts = 0;
        for (ui::Tab* tab : w.tabs())
            for (ui::ChartPanel* panel : tab->charts()) {
                const QStringList keys = document::highlightableSeries(panel->name());
                if (keys.isEmpty())
                    continue;
                ++charts;
                auto* chart = qobject_cast<ui::ChartViewPanel*>(panel);
                QVERIFY2(chart, qPrintable(panel->name()));
                for (const QString& key : keys)
                    QVERIFY2(chart->emphasiseSeries(key), qPrintable(panel->name() + '/' + key));
                QVERIFY(!chart->emphasiseSeries({}));
                QVERIFY(!chart->emphasiseSeries("nothing"));
            }
        QCOMPARE(charts, 4);
    }

    void projectorModeEnlargesTheNarration()
    {
        app::MainWindow w{core::Scenario{}};
        w.startLesson(smallLesson());
        QLabel* narration = w.lessonBar()->narrationLabel();
        const int before = QFontInfo(narration->font()).pixelSize();
        w.setProjectorMode(true);
        const int projector = QFontInfo(narration->font()).pixelSize();
        QVERIFY2(projector > before, qPrintable(QString("%1 -> %2").arg(before).arg(projector)));
        QVERIFY(projector >= 20);
        w.setProjectorMode(false);
        QCOMPARE(QFontInfo(narration->font()).pixelSize(), before);
        w.lessonBar()->leave();
    }

    void authoringByUsingTheApp()
    {
        QTemporaryDir dir;
        app::MainWindow w{core::Scenario{}};
        app::LessonEditor* editor = w.lessonEditor();
        // Two states of the window become two steps, with only the keys that differ.
        w.showTab("pipeline");
        w.currentTab()->control("pipeline.microbatches")->setValue(24);
        editor->addCurrentState();
        w.showTab("zero");
        w.currentTab()->control("zero.ranks")->setValue(16);
        editor->addCurrentState();
        QCOMPARE(editor->stepList()->count(), 2);
        QCOMPARE(editor->selectedStep(), 1);
        editor->narrationEdit()->setPlainText("Sixteen ranks: {{zero3}}");
        editor->questionEdit()->setText("ZeRO-3 at 32 ranks?");
        editor->choicesEdit()->setPlainText("same\nhalf\ndouble");
        editor->answerEdit()->setText("B");
        editor->moveStep(1, 0); // the ZeRO step first
        QCOMPARE(editor->lesson().steps[0].tab, QString("zero"));
        editor->addCurrentState();
        editor->removeStep(2);
        const QString path = dir.filePath("mine.lesson.json");
        QCOMPARE(editor->saveTo(path), QString());
        const document::Lesson saved = document::loadLessonFile(path);
        QCOMPARE(saved.steps.size(), std::size_t(2));
        QCOMPARE(saved.steps[0].tab, QString("zero"));
        QCOMPARE(saved.steps[0].narration, QString("Sixteen ranks: {{zero3}}"));
        QCOMPARE(saved.steps[0].prediction->answerIndex, 1);
        QCOMPARE(saved.steps[0].scenarioObject,
                 QJsonDocument::fromJson(R"({"pipeline": {"microbatches": 24},
                                             "zero": {"ranks": 16}})")
                     .object());
        QCOMPARE(saved.steps[1].scenario.pipeline.microbatches, std::int64_t(24));
        QCOMPARE(saved.steps[1].scenario.zero.ranks, core::Scenario{}.zero.ranks);
        // A step the reader would refuse is not written; the line names its path.
        editor->selectStep(1);
        editor->narrationEdit()->setPlainText(" ");
        const QString error = editor->saveTo(dir.filePath("bad.lesson.json"));
        QVERIFY2(error.contains("steps[1].narration"), qPrintable(error));
        QVERIFY(!QFileInfo::exists(dir.filePath("bad.lesson.json")));
    }

    void aBadLessonFileChangesNothing()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("bad.lesson.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"title": "t", "steps": [{"tab": "memory", "narration": "n",
                      "scenario": {"memory": {"layers": "many"}}}]})");
        file.close();
        app::MainWindow w{teachersOwn()};
        const int undo = w.undoStack()->count();
        const QString error = w.openLessonFile(path);
        QVERIFY2(error.startsWith(path + ": steps[0].scenario.memory.layers: expected"),
                 qPrintable(error));
        QVERIFY(error.endsWith("found \"many\""));
        QVERIFY(!w.lessonBar()->isActive());
        QCOMPARE(w.undoStack()->count(), undo);
        QCOMPARE(json(w.scenario()), json(teachersOwn()));
    }
};

QTEST_MAIN(TstLessonPlayer)
#include "tst_lessonplayer.moc"
