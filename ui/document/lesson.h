#pragma once

#include "scalelab/core/scenario.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

namespace scalelab::document {

/// A question the class answers before the answer is shown (docs/LESSONS.md): either choices
/// with the index of the right one, or a number with a unit and a relative tolerance.
struct LessonPrediction {
    enum class Kind { Choice, Number };
    Kind kind = Kind::Choice;
    QString question; ///< rich text
    QStringList choices; ///< Choice: two to six, in the order shown
    int answerIndex = -1; ///< Choice: the right one, 0-based
    double answer = 0; ///< Number: the right value
    double tolerance = 0.05; ///< Number: accepted relative difference, 0..1
    QString unit; ///< Number: what the value is counted in ("GB", "%", "slot(s)")
    QString explanation; ///< rich text shown with the answer; may be empty

    /// Whether `value` counts as the answer of a number question.
    bool accepts(double value) const;
    /// The unit as it reads after `value`: a plural ending written in parentheses is dropped
    /// after exactly 1 and kept otherwise ("slot(s)": "1 slot", "0 slots", "2.5 slots"); a unit
    /// without one stands as written. unitFor(0) is the plural, for a label beside a number box.
    QString unitFor(double value) const;
    friend bool operator==(const LessonPrediction&, const LessonPrediction&) = default;
};

/// One state of a lesson: a tab, a scenario over the defaults, what to say and show.
struct LessonStep {
    QString title; ///< a short heading; may be empty
    QString tab; ///< the tab (section) name shown: "memory", "zero", ...
    QJsonObject scenarioObject; ///< the step's scenario keys as written in the file
    core::Scenario scenario; ///< the defaults with scenarioObject applied, validated
    QString narration; ///< rich text with {{name}} placeholders for the tab's live figures
    /// A field key ("memory.layers"), a chart name ("memory-budget") or a series of a chart
    /// ("zero-memory/zero3", see highlightableSeries()); may be empty.
    QString highlight;
    std::optional<LessonPrediction> prediction;
};

/// A lesson file (docs/LESSONS.md): a title, where its content comes from, and its steps.
struct Lesson {
    QString title;
    QString source;
    std::vector<LessonStep> steps;
};

/// The limits of docs/LESSONS.md: a lesson is meant to be read aloud, not to carry data.
inline constexpr qint64 kMaxLessonFileBytes = 4 * 1024 * 1024;
inline constexpr int kMaxLessonSteps = 200;
inline constexpr int kMaxLessonTextChars = 4000;
inline constexpr int kMaxPredictionChoices = 6;

/// Reads a lesson object. Throws core::InputError whose field is the JSON path of the offending
/// value: `steps[3].scenario.memory.layers`, `steps[0].prediction.answer`.
Lesson lessonFromJson(const QJsonObject& object);

/// Reads a lesson file's JSON object; a problem with the file itself (missing, a folder,
/// larger than kMaxLessonFileBytes, not JSON, not an object) throws core::InputError with an
/// empty field.
QJsonObject readLessonObject(const QString& path);

/// readLessonObject, then lessonFromJson.
Lesson loadLessonFile(const QString& path);

/// The lesson as the file format writes it; lessonFromJson reads it back to the same lesson.
QJsonObject lessonToJson(const Lesson& lesson);

/// The keys of `scenario` that differ from the defaults, as a scenario object: what a lesson
/// step needs to bring `scenario` back over the defaults (scenarioFromJson of it == scenario).
QJsonObject scenarioDifference(const core::Scenario& scenario);

/// The series of `chart` a lesson step can highlight as "<chart>/<series>", by the key the tab
/// gives the series as its object name ("zero3" for ZeRO-3's line of "zero-memory"); empty for a
/// chart without such keys.
QStringList highlightableSeries(const QString& chart);

/// The names between {{ and }} in `text`, in order of appearance, each once.
QStringList lessonPlaceholders(const QString& text);

/// The built-in lesson "Training at Scale", compiled in at this resource path.
inline constexpr const char* kBuiltInLesson = ":/lessons/training-at-scale.json";

} // namespace scalelab::document
