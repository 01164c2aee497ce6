#include "lesson.h"

#include "fields.h"
#include "scenariojson.h"

#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QRegularExpression>
#include <cmath>

using scalelab::core::InputError;

namespace scalelab::document {

namespace {

const QStringList kLessonKeys = {"scalelab_lesson", "title", "source", "steps"};
const QStringList kStepKeys = {"title", "tab", "scenario", "narration", "highlight", "prediction"};
const QStringList kPredictionKeys = {"question",  "choices", "answer",
                                     "tolerance", "unit",    "explanation"};

std::string str(const QString& s)
{
    return s.toStdString();
}

void refuseUnknownKeys(const QJsonObject& object, const QStringList& known, const QString& path)
{
    for (const QString& key : object.keys())
        if (!known.contains(key))
            throw InputError(str(path.isEmpty() ? key : path + '.' + key),
                             "one of the keys " + str(path.isEmpty() ? "a lesson" : path)
                                 + " knows (" + str(known.join(", ")) + ")");
}

/// The string at `key`: required ones must be there and not blank; every one within the limit.
QString text(const QJsonObject& object, const QString& key, const QString& path, bool required,
             int maxChars = kMaxLessonTextChars)
{
    const QString field = path.isEmpty() ? key : path + '.' + key;
    const QJsonValue v = object.value(key);
    if (v.isUndefined() && !required)
        return {};
    const std::string expected = required ? "a non-empty string" : "a string";
    if (!v.isString() || (required && v.toString().trimmed().isEmpty()))
        throw InputError(str(field), expected);
    if (v.toString().size() > maxChars)
        throw InputError::problem(str(field),
                                  "too long: at most " + std::to_string(maxChars) + " characters");
    return v.toString();
}

/// Checks that every {{ opens a placeholder of letters, digits and _ closed by }}.
void checkPlaceholders(const QString& text, const QString& field)
{
    static const QRegularExpression name("^\\{\\{[A-Za-z0-9_]+\\}\\}");
    for (qsizetype i = text.indexOf("{{"); i >= 0; i = text.indexOf("{{", i + 2))
        if (!name.match(QStringView(text).mid(i)).hasMatch())
            throw InputError(str(field),
                             "placeholders written {{name}} (letters, digits and _), found "
                                 + str(text.mid(i, 24)));
}

LessonPrediction readChoices(const QJsonObject& p, const QString& path, LessonPrediction out)
{
    out.kind = LessonPrediction::Kind::Choice;
    const QJsonValue choices = p.value("choices");
    const std::string expected =
        "a list of 2 to " + std::to_string(kMaxPredictionChoices) + " non-empty strings";
    if (!choices.isArray() || choices.toArray().size() < 2
        || choices.toArray().size() > kMaxPredictionChoices)
        throw InputError(str(path + ".choices"), expected);
    const QJsonArray list = choices.toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
        const QString item = path + ".choices[" + QString::number(i) + ']';
        if (!list.at(i).isString() || list.at(i).toString().trimmed().isEmpty())
            throw InputError(str(item), "a non-empty string");
        if (list.at(i).toString().size() > kMaxLessonTextChars)
            throw InputError::problem(str(item),
                                      "too long: at most " + std::to_string(kMaxLessonTextChars)
                                          + " characters");
        out.choices << list.at(i).toString();
    }
    const QJsonValue answer = p.value("answer");
    const double a = answer.toDouble(-1);
    if (!answer.isDouble() || a != std::floor(a) || a < 0 || a >= list.size())
        throw InputError(str(path + ".answer"),
                         "the index of the right choice, 0.." + std::to_string(list.size() - 1));
    out.answerIndex = static_cast<int>(a);
    for (const char* key : {"tolerance", "unit"})
        if (p.contains(key))
            throw InputError(str(path + '.' + key),
                             "no " + std::string(key)
                                 + " with choices (a number question has one)");
    return out;
}

LessonPrediction readNumber(const QJsonObject& p, const QString& path, LessonPrediction out)
{
    out.kind = LessonPrediction::Kind::Number;
    const QJsonValue answer = p.value("answer");
    if (!answer.isDouble() || !std::isfinite(answer.toDouble()))
        throw InputError(str(path + ".answer"),
                         "a finite number (or, with choices, the index of the right one)");
    out.answer = answer.toDouble();
    if (p.contains("tolerance")) {
        const QJsonValue t = p.value("tolerance");
        if (!t.isDouble() || !(t.toDouble() >= 0.0 && t.toDouble() <= 1.0))
            throw InputError(str(path + ".tolerance"), "a relative tolerance in 0..1");
        out.tolerance = t.toDouble();
    }
    out.unit = text(p, "unit", path, false, 40);
    return out;
}

LessonPrediction readPrediction(const QJsonValue& value, const QString& path)
{
    if (!value.isObject())
        throw InputError(str(path), "an object with a question and an answer");
    const QJsonObject p = value.toObject();
    refuseUnknownKeys(p, kPredictionKeys, path);
    LessonPrediction out;
    out.question = text(p, "question", path, true);
    checkPlaceholders(out.question, path + ".question");
    out.explanation = text(p, "explanation", path, false);
    checkPlaceholders(out.explanation, path + ".explanation");
    return p.contains("choices") ? readChoices(p, path, out) : readNumber(p, path, out);
}

/// The step's scenario over the defaults, read by the scenario reader; its errors name the
/// path inside the lesson.
core::Scenario readStepScenario(const QJsonValue& value, const QString& path)
{
    if (value.isUndefined())
        return {};
    if (!value.isObject())
        throw InputError(str(path), "a scenario object (docs/CLI.md), for example {}");
    try {
        return scenarioFromJson(value.toObject());
    } catch (const InputError& e) {
        const std::string field = str(path) + (e.field().empty() ? std::string() : '.' + e.field());
        throw e.isExpectation() ? InputError(field, e.expected())
                                : InputError::problem(field, e.expected());
    }
}

void checkHighlight(const LessonStep& step, const QString& path)
{
    if (step.highlight.isEmpty())
        return;
    // A control of the step's own tab, one of its charts ("<tab>-<chart>"), or a series of one
    // of its charts ("<tab>-<chart>/<series>").
    const Field* field = findField(step.highlight);
    const bool isControl = field && field->jsonObject().section('.', 0, 0) == step.tab;
    static const QRegularExpression chart("^[a-z0-9_]+(-[a-z0-9_]+)+$");
    const QString chartName = step.highlight.section('/', 0, 0);
    const bool isChart = chartName.startsWith(step.tab + '-') && chart.match(chartName).hasMatch();
    if (isChart && step.highlight.contains('/')) {
        const QStringList series = highlightableSeries(chartName);
        if (series.isEmpty())
            throw InputError(str(path + ".highlight"),
                             "the chart alone (" + str(chartName)
                                 + " has no series a lesson can highlight)");
        if (!series.contains(step.highlight.section('/', 1)))
            throw InputError(str(path + ".highlight"),
                             "a series of chart " + str(chartName) + " (" + str(series.join(", "))
                                 + ")");
        return;
    }
    if (!isControl && !isChart)
        throw InputError(str(path + ".highlight"),
                         "a control key of tab " + str(step.tab) + " (\"" + str(step.tab)
                             + ".<key>\"), one of its charts (\"" + str(step.tab)
                             + "-<chart>\") or a series of one (\"" + str(step.tab)
                             + "-<chart>/<series>\")");
}

LessonStep readStep(const QJsonValue& value, const QString& path)
{
    if (!value.isObject())
        throw InputError(str(path), "a step object with a tab and a narration");
    const QJsonObject s = value.toObject();
    refuseUnknownKeys(s, kStepKeys, path);
    LessonStep step;
    step.title = text(s, "title", path, false, 200);
    step.tab = text(s, "tab", path, true, 40);
    core::Section section;
    if (!sectionFromName(step.tab, &section)) {
        QStringList names;
        for (std::string_view n : core::kSectionNames)
            names << QString::fromLatin1(n.data(), static_cast<qsizetype>(n.size()));
        throw InputError(str(path + ".tab"), "one of the tabs (" + str(names.join(", ")) + ")");
    }
    step.scenarioObject = s.value("scenario").toObject();
    step.scenario = readStepScenario(s.value("scenario"), path + ".scenario");
    step.narration = text(s, "narration", path, true);
    checkPlaceholders(step.narration, path + ".narration");
    step.highlight = text(s, "highlight", path, false, 80);
    checkHighlight(step, path);
    if (s.contains("prediction"))
        step.prediction = readPrediction(s.value("prediction"), path + ".prediction");
    return step;
}

qsizetype lineOf(const QByteArray& text, int offset, qsizetype* column)
{
    const QByteArray before = text.left(offset);
    *column = offset - before.lastIndexOf('\n');
    return before.count('\n') + 1;
}

} // namespace

bool LessonPrediction::accepts(double value) const
{
    if (kind != Kind::Number || !std::isfinite(value))
        return false;
    return std::abs(value - answer) <= tolerance * std::abs(answer) + 1e-12;
}

QString LessonPrediction::unitFor(double value) const
{
    static const QRegularExpression ending(R"(\(([^()\s]+)\))");
    QString text = unit;
    return text.replace(ending, value == 1.0 ? QString() : QStringLiteral("\\1"));
}

Lesson lessonFromJson(const QJsonObject& object)
{
    refuseUnknownKeys(object, kLessonKeys, {});
    if (object.contains("scalelab_lesson") && object.value("scalelab_lesson").toDouble() != 1.0)
        throw InputError("scalelab_lesson", "1 (the only lesson format so far)");
    Lesson lesson;
    lesson.title = text(object, "title", {}, true, 200);
    lesson.source = text(object, "source", {}, false, 1000);
    const QJsonValue steps = object.value("steps");
    if (!steps.isArray() || steps.toArray().isEmpty())
        throw InputError("steps", "a non-empty list of steps");
    const QJsonArray list = steps.toArray();
    if (list.size() > kMaxLessonSteps)
        throw InputError::problem("steps",
                                  "too many steps: at most " + std::to_string(kMaxLessonSteps));
    for (qsizetype i = 0; i < list.size(); ++i)
        lesson.steps.push_back(readStep(list.at(i), "steps[" + QString::number(i) + ']'));
    return lesson;
}

QJsonObject readLessonObject(const QString& path)
{
    const QFileInfo info(path);
    if (!info.exists())
        throw InputError::problem("", "no such file");
    if (info.isDir())
        throw InputError("", "a lesson file, not a folder");
    if (info.size() > kMaxLessonFileBytes)
        throw InputError::problem("", "too large: a lesson file is at most 4 MiB");
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw InputError("", "a readable file (" + file.errorString().toStdString() + ")");
    const QByteArray bytes = file.read(kMaxLessonFileBytes + 1);
    if (bytes.size() > kMaxLessonFileBytes)
        throw InputError::problem("", "too large: a lesson file is at most 4 MiB");
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &error);
    if (error.error != QJsonParseError::NoError) {
        qsizetype column = 0;
        const qsizetype line = lineOf(bytes, error.offset, &column);
        throw InputError("",
                         "valid JSON (line " + std::to_string(line) + ", column "
                             + std::to_string(column) + ": " + error.errorString().toStdString()
                             + ")");
    }
    if (!document.isObject())
        throw InputError("", "a JSON object with a title and steps");
    return document.object();
}

Lesson loadLessonFile(const QString& path)
{
    return lessonFromJson(readLessonObject(path));
}

namespace {

QJsonObject predictionToJson(const LessonPrediction& p)
{
    QJsonObject out{{"question", p.question}};
    if (p.kind == LessonPrediction::Kind::Choice) {
        out.insert("choices", QJsonArray::fromStringList(p.choices));
        out.insert("answer", p.answerIndex);
    } else {
        out.insert("answer", p.answer);
        out.insert("tolerance", p.tolerance);
        if (!p.unit.isEmpty())
            out.insert("unit", p.unit);
    }
    if (!p.explanation.isEmpty())
        out.insert("explanation", p.explanation);
    return out;
}

} // namespace

QJsonObject lessonToJson(const Lesson& lesson)
{
    QJsonArray steps;
    for (const LessonStep& s : lesson.steps) {
        QJsonObject step{{"tab", s.tab}, {"narration", s.narration}};
        if (!s.title.isEmpty())
            step.insert("title", s.title);
        if (!s.scenarioObject.isEmpty())
            step.insert("scenario", s.scenarioObject);
        if (!s.highlight.isEmpty())
            step.insert("highlight", s.highlight);
        if (s.prediction)
            step.insert("prediction", predictionToJson(*s.prediction));
        steps.append(step);
    }
    QJsonObject out{{"scalelab_lesson", 1}, {"title", lesson.title}, {"steps", steps}};
    if (!lesson.source.isEmpty())
        out.insert("source", lesson.source);
    return out;
}

namespace {

/// The members of `value` that differ from `base`, objects compared member by member.
QJsonObject difference(const QJsonObject& value, const QJsonObject& base)
{
    QJsonObject out;
    for (auto it = value.begin(); it != value.end(); ++it) {
        const QJsonValue other = base.value(it.key());
        if (it->isObject() && other.isObject()) {
            const QJsonObject inner = difference(it->toObject(), other.toObject());
            if (!inner.isEmpty())
                out.insert(it.key(), inner);
        } else if (*it != other) {
            out.insert(it.key(), *it);
        }
    }
    return out;
}

} // namespace

QJsonObject scenarioDifference(const core::Scenario& scenario)
{
    return difference(scenarioToJson(scenario), scenarioToJson(core::Scenario{}));
}

QStringList highlightableSeries(const QString& chart)
{
    // The tabs name these series with the same keys (tst_lessonplayer checks that they do).
    static const QHash<QString, QStringList> kSeries = {
        {"memory-budget",
         {"weights", "gradients", "master_weights", "adam_moments", "activations",
          "checkpointed_activations", "accelerator"}},
        {"memory-checkpointing", {"all_saved", "checkpointed", "extra_compute"}},
        {"zero-memory", {"dp", "zero1", "zero2", "zero3", "accelerator"}},
        {"pipeline-bubble", {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2"}},
    };
    return kSeries.value(chart);
}

QStringList lessonPlaceholders(const QString& text)
{
    static const QRegularExpression name("\\{\\{([A-Za-z0-9_]+)\\}\\}");
    QStringList out;
    for (const auto& m : name.globalMatch(text))
        if (!out.contains(m.captured(1)))
            out << m.captured(1);
    return out;
}

} // namespace scalelab::document
