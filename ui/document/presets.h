#pragma once

#include "scalelab/core/scenario.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace scalelab::document {

/// A scenario file shipped in resources/presets/: a real model's shape and layout, with where
/// its numbers come from.
struct Preset {
    QString id; ///< the file name without .json
    QString title; ///< "Llama 3 70B"
    QString source; ///< the citation
    QJsonObject object;
};

/// The ids of every preset compiled in (":/presets/<id>.json"), in file-name order.
QStringList presetIds();

/// The JSON object of preset `id`. Throws core::InputError naming the preset when it is missing
/// or not a JSON object. The one reader of preset files: the Presets menu, the plan tab's list
/// and the published figures all go through it.
QJsonObject presetObject(const QString& id);

/// Every preset compiled into the program, sorted by title.
QList<Preset> loadPresets();

/// The scenario a preset stands for. What follows from the model's shape is computed, never
/// typed into the file: unless the file sets them, the memory tab takes the model's parameter
/// count, layers, hidden size and tokens per microbatch, and the ZeRO tab its parameter count
/// and data-parallel ranks. Throws core::InputError like any scenario file.
core::Scenario presetScenario(const QJsonObject& object);

} // namespace scalelab::document
