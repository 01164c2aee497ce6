#pragma once

#include "scalelab/core/scenario.h"

#include <QJsonObject>
#include <QString>

namespace scalelab::document {

/// Reads a scenario object (docs/CLI.md). Types, unknown keys and number formats are checked
/// here; every range check is core's (core::validate runs last). Throws core::InputError whose
/// field is the JSON path of the offending key.
core::Scenario scenarioFromJson(const QJsonObject& object);

/// Reads a scenario file's JSON object without interpreting it. A problem with the file itself
/// (missing, a folder, unreadable, not JSON, not an object) throws core::InputError with an
/// empty field.
QJsonObject readScenarioObject(const QString& path);

/// Reads a scenario file: readScenarioObject, then scenarioFromJson. A problem with the file itself
/// (missing, a folder, unreadable, not JSON, not an object) throws core::InputError with an empty
/// field.
core::Scenario loadScenarioFile(const QString& path);

/// The scenario as a complete JSON object (every key written), which scenarioFromJson reads
/// back to the same scenario.
QJsonObject scenarioToJson(const core::Scenario& scenario);

/// One line for an error in `file` (may be empty for built-in defaults): the file, the JSON path,
/// what was expected and, when the object holds a value there, what was found.
QString describeInputError(const QString& file, const core::InputError& error,
                           const QJsonObject& object = {});

} // namespace scalelab::document
