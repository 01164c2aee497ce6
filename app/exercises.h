#pragma once

#include "scalelab/core/scenario.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <optional>

namespace scalelab::app {

/// One question of an exercise. `report` is the path of the figure in the report that answers
/// it ("memory.model_state_bytes", "tensor_parallel.shard_widths[0]"); empty for a question
/// answered in words, which has a worked solution but no check.
struct ExerciseQuestion {
    QString prompt;
    QString report;
    /// How answers are read: "bytes" (units such as 16 MB or 3 KiB), "number", "fraction"
    /// (0.2, 20%, 1/5) or "matrix" ([[2,1],[0,3]]).
    QString kind = "number";
    double tolerance = 1e-3; ///< relative; answers within it count as right
    QString hint;
    QString solution;
};

/// One of the chapter's exercises as a guided task: set up, answer, check, hint, solution.
struct Exercise {
    QString id; ///< "41.1"
    QString title;
    QString tab; ///< the tab that shows it
    QString text; ///< rich text
    QJsonObject setup; ///< scenario keys that put the sliders at the exercise's values
    QList<ExerciseQuestion> questions;
};

/// The exercises kept in resources/exercises/exercises.json.
QList<Exercise> loadExercises();

/// The defaults with the exercise's setup applied (checked like any scenario file).
core::Scenario exerciseScenario(const Exercise& exercise);

/// What came of checking one answer.
struct AnswerCheck {
    bool understood = false; ///< the text could be read as an answer of the question's kind
    bool correct = false;
    QString message; ///< one sentence for the student
};

/// Reads an amount as the question's kind wants it: "16 MB" or "1.6e7" bytes, "20%" or "1/5"
/// as a fraction, a plain number otherwise. Units are decimal (kB = 1e3) or binary (KiB = 2^10);
/// "B" or "bytes" alone means bytes.
std::optional<double> parseAmount(const QString& text, const QString& kind);

/// Checks a student's answer against the core's figure in `report` (a buildReport object).
AnswerCheck checkAnswer(const ExerciseQuestion& question, const QString& answer,
                        const QJsonObject& report);

/// The report value at a path such as "experts.counts" or "tensor_parallel.shard_widths[0]".
QJsonValue reportValue(const QJsonObject& report, const QString& path);

} // namespace scalelab::app
