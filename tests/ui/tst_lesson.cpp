// The lesson file reader (docs/LESSONS.md), without widgets.

#include "lesson.h"
#include "scalelab/core/collectives.h"
#include "scenariojson.h"
#include "testhelpers.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

using namespace scalelab;
using document::Lesson;
using document::LessonPrediction;

namespace {

QJsonObject parse(const QByteArray& text)
{
    QJsonParseError error;
    const QJsonDocument d = QJsonDocument::fromJson(text, &error);
    if (error.error != QJsonParseError::NoError)
        qFatal("test JSON does not parse: %s", qPrintable(error.errorString()));
    return d.object();
}

/// A small lesson that uses every feature once.
const QByteArray kGood = R"({
  "scalelab_lesson": 1,
  "title": "Two steps",
  "source": "A test",
  "steps": [
    { "title": "Memory", "tab": "memory",
      "scenario": { "memory": { "layers": 12, "segments": 3 } },
      "narration": "<p>{{model_state}} of state</p>", "highlight": "memory.layers",
      "prediction": { "question": "Bytes?", "answer": 16, "tolerance": 0, "unit": "bytes",
                      "explanation": "<b>16</b>" } },
    { "tab": "pipeline", "narration": "Bubble", "highlight": "pipeline-gantt",
      "prediction": { "question": "Which?", "choices": ["a", "b", "c"], "answer": 2 } }
  ]
})";

/// kGood with the value at `path` (a '/'-separated walk: "steps/0/tab") replaced by `value`,
/// or removed when `value` is undefined.
QJsonValue replaced(const QJsonValue& at, QStringList path, const QJsonValue& value)
{
    if (path.isEmpty())
        return value;
    const QString first = path.takeFirst();
    bool isIndex = false;
    const int index = first.toInt(&isIndex);
    if (isIndex) {
        QJsonArray array = at.toArray();
        if (path.isEmpty() && value.isUndefined())
            array.removeAt(index);
        else
            array[index] = replaced(array.at(index), path, value);
        return array;
    }
    QJsonObject object = at.toObject();
    if (path.isEmpty() && value.isUndefined())
        object.remove(first);
    else
        object[first] = replaced(object.value(first), path, value);
    return object;
}

} // namespace

class TstLesson : public QObject {
    Q_OBJECT

private slots:
    void readsAGoodLesson()
    {
        const Lesson lesson = document::lessonFromJson(parse(kGood));
        QCOMPARE(lesson.title, QString("Two steps"));
        QCOMPARE(lesson.source, QString("A test"));
        QCOMPARE(lesson.steps.size(), std::size_t(2));
        const auto& first = lesson.steps[0];
        QCOMPARE(first.tab, QString("memory"));
        QCOMPARE(first.scenario.memory.layers, 12);
        QCOMPARE(first.scenario.memory.segments, 3);
        // Keys the step leaves out keep their defaults.
        QCOMPARE(first.scenario.memory.parameters, core::Scenario{}.memory.parameters);
        QCOMPARE(first.scenario.pipeline.microbatches, core::Scenario{}.pipeline.microbatches);
        QCOMPARE(first.highlight, QString("memory.layers"));
        QVERIFY(first.prediction);
        QCOMPARE(first.prediction->kind, LessonPrediction::Kind::Number);
        QCOMPARE(first.prediction->answer, 16.0);
        QCOMPARE(first.prediction->unit, QString("bytes"));
        QVERIFY(first.prediction->accepts(16));
        QVERIFY(!first.prediction->accepts(16.5));
        const auto& second = lesson.steps[1];
        QCOMPARE(second.scenarioObject, QJsonObject());
        QCOMPARE(second.prediction->kind, LessonPrediction::Kind::Choice);
        QCOMPARE(second.prediction->choices, QStringList({"a", "b", "c"}));
        QCOMPARE(second.prediction->answerIndex, 2);
        QCOMPARE(document::lessonPlaceholders(first.narration), QStringList{"model_state"});
    }

    void readsASeriesHighlight()
    {
        // "<chart>/<series>": a series of one of the step's tab's charts.
        const QJsonObject object =
            replaced(parse(kGood), {"steps", "1", "highlight"}, QJsonValue("pipeline-bubble/1f1b"))
                .toObject();
        const Lesson lesson = document::lessonFromJson(object);
        QCOMPARE(lesson.steps[1].highlight, QString("pipeline-bubble/1f1b"));
        QCOMPARE(document::lessonFromJson(document::lessonToJson(lesson)).steps[1].highlight,
                 QString("pipeline-bubble/1f1b"));
        QVERIFY(document::highlightableSeries("pipeline-bubble").contains("1f1b"));
        QVERIFY(document::highlightableSeries("pipeline-gantt").isEmpty());
    }

    void unitReadsInTheRightNumber_data()
    {
        QTest::addColumn<QString>("unit");
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("reads");
        QTest::newRow("one") << "slot(s)" << 1.0 << "slot";
        QTest::newRow("none") << "slot(s)" << 0.0 << "slots";
        QTest::newRow("fraction") << "slot(s)" << 1.5 << "slots";
        QTest::newRow("inside") << "token(s) per rank" << 1.0 << "token per rank";
        QTest::newRow("plain") << "bytes per parameter" << 1.0 << "bytes per parameter";
        QTest::newRow("percent") << "%" << 20.0 << "%";
    }

    void unitReadsInTheRightNumber()
    {
        QFETCH(QString, unit);
        QFETCH(double, value);
        QFETCH(QString, reads);
        LessonPrediction p;
        p.kind = LessonPrediction::Kind::Number;
        p.unit = unit;
        QCOMPARE(p.unitFor(value), reads);
    }

    void roundTrips()
    {
        const Lesson lesson = document::lessonFromJson(parse(kGood));
        const QJsonObject written = document::lessonToJson(lesson);
        const Lesson again = document::lessonFromJson(written);
        QCOMPARE(document::lessonToJson(again), written);
        QCOMPARE(again.steps.size(), lesson.steps.size());
        for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
            QCOMPARE(again.steps[i].narration, lesson.steps[i].narration);
            QCOMPARE(again.steps[i].prediction, lesson.steps[i].prediction);
            QCOMPARE(document::scenarioToJson(again.steps[i].scenario),
                     document::scenarioToJson(lesson.steps[i].scenario));
        }
    }

    void scenarioDifferenceBringsTheScenarioBack()
    {
        QCOMPARE(document::scenarioDifference(core::Scenario{}), QJsonObject());
        core::Scenario s;
        s.memory.layers = 12;
        s.memory.segments = 3;
        s.experts.ranks = 2;
        s.experts.experts = 4;
        s.experts.assignments = std::vector<std::vector<std::int64_t>>{{0, 1, 3}, {2, 3, 2}};
        const QJsonObject d = document::scenarioDifference(s);
        QCOMPARE(d.keys(), QStringList({"experts", "memory"}));
        QCOMPARE(d.value("memory").toObject().keys(), QStringList({"layers", "segments"}));
        QVERIFY(document::scenarioFromJson(d) == s);
    }

    void numberToleranceIsRelative()
    {
        LessonPrediction p;
        p.kind = LessonPrediction::Kind::Number;
        p.answer = 20;
        p.tolerance = 0.05;
        QVERIFY(p.accepts(19));
        QVERIFY(p.accepts(21));
        QVERIFY(!p.accepts(21.5));
        QVERIFY(!p.accepts(qQNaN()));
    }

    void badFieldNamesItsPath_data()
    {
        QTest::addColumn<QString>("where");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("field");
        const QJsonValue gone(QJsonValue::Undefined);
        QTest::newRow("unknown top key") << "colour" << QJsonValue("red") << "colour";
        QTest::newRow("version") << "scalelab_lesson" << QJsonValue(2) << "scalelab_lesson";
        QTest::newRow("no title") << "title" << gone << "title";
        QTest::newRow("title type") << "title" << QJsonValue(3) << "title";
        QTest::newRow("source type") << "source" << QJsonValue(true) << "source";
        QTest::newRow("no steps") << "steps" << gone << "steps";
        QTest::newRow("empty steps") << "steps" << QJsonValue(QJsonArray()) << "steps";
        QTest::newRow("step not object") << "steps/1" << QJsonValue(1) << "steps[1]";
        QTest::newRow("unknown step key") << "steps/1/zoom" << QJsonValue(2) << "steps[1].zoom";
        QTest::newRow("no tab") << "steps/1/tab" << gone << "steps[1].tab";
        QTest::newRow("unknown tab") << "steps/1/tab" << QJsonValue("bogus") << "steps[1].tab";
        QTest::newRow("no narration") << "steps/0/narration" << gone << "steps[0].narration";
        QTest::newRow("blank narration")
            << "steps/0/narration" << QJsonValue("  ") << "steps[0].narration";
        QTest::newRow("long narration")
            << "steps/0/narration" << QJsonValue(QString(5000, 'x')) << "steps[0].narration";
        QTest::newRow("broken placeholder")
            << "steps/0/narration" << QJsonValue("{{model state}}") << "steps[0].narration";
        QTest::newRow("scenario not object")
            << "steps/0/scenario" << QJsonValue(3) << "steps[0].scenario";
        QTest::newRow("scenario value") << "steps/0/scenario/memory/layers" << QJsonValue("many")
                                        << "steps[0].scenario.memory.layers";
        QTest::newRow("scenario range") << "steps/0/scenario/memory/segments" << QJsonValue(40)
                                        << "steps[0].scenario.memory.segments";
        QTest::newRow("scenario unknown key") << "steps/0/scenario/memory/layerz" << QJsonValue(4)
                                              << "steps[0].scenario.memory.layerz";
        QTest::newRow("scenario section") << "steps/0/scenario/kitchen" << QJsonValue(QJsonObject())
                                          << "steps[0].scenario.kitchen";
        QTest::newRow("highlight unknown")
            << "steps/0/highlight" << QJsonValue("memory.nothing") << "steps[0].highlight";
        QTest::newRow("highlight other tab")
            << "steps/0/highlight" << QJsonValue("zero.ranks") << "steps[0].highlight";
        QTest::newRow("highlight chart of other tab")
            << "steps/1/highlight" << QJsonValue("memory-budget") << "steps[1].highlight";
        QTest::newRow("highlight series unknown")
            << "steps/1/highlight" << QJsonValue("pipeline-bubble/gpipe2") << "steps[1].highlight";
        QTest::newRow("highlight series of a chart without")
            << "steps/1/highlight" << QJsonValue("pipeline-gantt/gpipe") << "steps[1].highlight";
        QTest::newRow("highlight series of other tab")
            << "steps/1/highlight" << QJsonValue("zero-memory/zero3") << "steps[1].highlight";
        QTest::newRow("highlight series empty")
            << "steps/1/highlight" << QJsonValue("pipeline-bubble/") << "steps[1].highlight";
        QTest::newRow("prediction type")
            << "steps/0/prediction" << QJsonValue("yes") << "steps[0].prediction";
        QTest::newRow("prediction key")
            << "steps/0/prediction/hint" << QJsonValue("x") << "steps[0].prediction.hint";
        QTest::newRow("no question")
            << "steps/0/prediction/question" << gone << "steps[0].prediction.question";
        QTest::newRow("number answer")
            << "steps/0/prediction/answer" << QJsonValue("16") << "steps[0].prediction.answer";
        QTest::newRow("tolerance")
            << "steps/0/prediction/tolerance" << QJsonValue(2) << "steps[0].prediction.tolerance";
        QTest::newRow("unit type")
            << "steps/0/prediction/unit" << QJsonValue(1) << "steps[0].prediction.unit";
        QTest::newRow("one choice") << "steps/1/prediction/choices" << QJsonValue(QJsonArray{"a"})
                                    << "steps[1].prediction.choices";
        QTest::newRow("choice type")
            << "steps/1/prediction/choices/1" << QJsonValue(7) << "steps[1].prediction.choices[1]";
        QTest::newRow("choice answer range")
            << "steps/1/prediction/answer" << QJsonValue(3) << "steps[1].prediction.answer";
        QTest::newRow("choice answer fraction")
            << "steps/1/prediction/answer" << QJsonValue(1.5) << "steps[1].prediction.answer";
        QTest::newRow("unit with choices")
            << "steps/1/prediction/unit" << QJsonValue("GB") << "steps[1].prediction.unit";
    }

    void badFieldNamesItsPath()
    {
        QFETCH(QString, where);
        QFETCH(QJsonValue, value);
        QFETCH(QString, field);
        const QJsonObject object = replaced(parse(kGood), where.split('/'), value).toObject();
        std::string message;
        QVERIFY(test::throwsInputError([&] { document::lessonFromJson(object); },
                                       field.toStdString(), &message));
        // The error line quotes what it found where there is something to quote.
        try {
            document::lessonFromJson(object);
        } catch (const core::InputError& e) {
            const QString line = document::describeInputError("l.json", e, object);
            QVERIFY2(line.startsWith("l.json: " + field + ": "), qPrintable(line));
            QVERIFY2(!line.contains('\n'), qPrintable(line));
        }
    }

    void tooManySteps()
    {
        QJsonObject object = parse(kGood);
        QJsonArray steps;
        for (int i = 0; i <= document::kMaxLessonSteps; ++i)
            steps.append(QJsonObject{{"tab", "memory"}, {"narration", "x"}});
        object["steps"] = steps;
        QVERIFY(test::throwsInputError([&] { document::lessonFromJson(object); }, "steps"));
        steps.removeLast();
        object["steps"] = steps;
        QCOMPARE(document::lessonFromJson(object).steps.size(),
                 std::size_t(document::kMaxLessonSteps));
    }

    void fileProblems()
    {
        QTemporaryDir dir;
        QVERIFY(
            test::throwsInputError([&] { document::readLessonObject(dir.filePath("none")); }, ""));
        QVERIFY(test::throwsInputError([&] { document::readLessonObject(dir.path()); }, ""));
        QFile broken(dir.filePath("broken.json"));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("{\"title\": ");
        broken.close();
        std::string message;
        QVERIFY(test::throwsInputError([&] { document::readLessonObject(broken.fileName()); }, "",
                                       &message));
        QVERIFY2(QString::fromStdString(message).contains("line 1"), message.c_str());
        QFile big(dir.filePath("big.json"));
        QVERIFY(big.open(QIODevice::WriteOnly));
        big.write(QByteArray(document::kMaxLessonFileBytes + 1, ' '));
        big.close();
        QVERIFY(test::throwsInputError([&] { document::readLessonObject(big.fileName()); }, "",
                                       &message));
        QVERIFY2(QString::fromStdString(message).contains("too large"), message.c_str());
    }

    void builtInLessonFollowsTheChapter()
    {
        // Every step is accepted by the scenario reader (lessonFromJson reads each with it).
        const Lesson lesson = document::loadLessonFile(document::kBuiltInLesson);
        QCOMPARE(lesson.title, QString("Training at Scale"));
        QVERIFY(lesson.steps.size() >= 14);
        QSet<QString> tabs;
        int predictions = 0;
        for (const auto& step : lesson.steps) {
            tabs.insert(step.tab);
            predictions += step.prediction ? 1 : 0;
        }
        QCOMPARE(tabs.size(), qsizetype(core::kSectionNames.size())); // every tab visited
        QVERIFY(predictions >= 3);
        // It round-trips through the writer.
        const QJsonObject written = document::lessonToJson(lesson);
        QCOMPARE(document::lessonToJson(document::lessonFromJson(written)), written);
        const Lesson again = document::lessonFromJson(written);
        for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
            QCOMPARE(again.steps[i].tab, lesson.steps[i].tab);
            QCOMPARE(again.steps[i].narration, lesson.steps[i].narration);
            QCOMPARE(again.steps[i].prediction, lesson.steps[i].prediction);
            QVERIFY(again.steps[i].scenario == lesson.steps[i].scenario);
        }
    }

    void builtInLessonAsksEveryExercise()
    {
        // Each of the chapter's four exercises is a step that asks before it tells.
        const Lesson lesson = document::loadLessonFile(document::kBuiltInLesson);
        for (const QString& exercise : QStringList{"41.1", "41.2", "41.3", "41.4"}) {
            const bool asked = std::any_of(lesson.steps.begin(), lesson.steps.end(), [&](auto& s) {
                return s.narration.contains("Exercise " + exercise) && s.prediction;
            });
            QVERIFY2(asked, qPrintable(exercise));
        }
    }

    void exercise41_2AnswerIsTheCoresFigure()
    {
        // The number the class predicts for exercise 41.2 is ZeRO-2's per-rank state as the core
        // computes it for the step's own scenario: P w + P (g + o) / n, exactly.
        const Lesson lesson = document::loadLessonFile(document::kBuiltInLesson);
        int asked = 0;
        for (const auto& step : lesson.steps) {
            if (!step.narration.contains("Exercise 41.2") || !step.prediction
                || step.prediction->kind != LessonPrediction::Kind::Number)
                continue;
            ++asked;
            QCOMPARE(step.tab, QString("zero"));
            QCOMPARE(step.scenario.zero.parameters, std::int64_t(1000)); // the exercise's P
            QCOMPARE(step.scenario.zero.ranks, std::int64_t(4)); // and n
            const core::ZeroResult r = core::computeZero(step.scenario.zero);
            QVERIFY(r.zero2.isWhole());
            QCOMPARE(step.prediction->answer, r.zero2.value());
            QCOMPARE(step.prediction->tolerance, 0.0); // whole bytes: only the exact count
            QVERIFY(step.prediction->accepts(r.zero2.value()));
            QVERIFY(!step.prediction->accepts(r.zero2.value() + 1));
        }
        QCOMPARE(asked, 1);
    }
};

QTEST_GUILESS_MAIN(TstLesson)
#include "tst_lesson.moc"
