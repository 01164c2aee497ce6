#pragma once

#include "scalelab/core/plan.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <optional>

namespace scalelab::document {

/// A scenario file of resources/presets/: a real model's shape and layout, and where they come
/// from. Read through the one preset loader (presets.h).
struct PlanPreset {
    QString id; ///< the file name without .json: "llama3-8b"
    QString title; ///< "Llama 3 8B"
    QString source; ///< the citation: paper or config, and which numbers are ScaleLab's choice
    core::PlanInputs plan; ///< the file's plan section over the defaults of docs/CLI.md
};

/// `base` with the keys of a scenario's "plan" object laid over it, read by the scenario reader
/// (app/scenariojson), so a preset is read exactly as a scenario file is. The "model" and
/// "hardware" objects are laid over the base's key by key. Throws
/// core::InputError naming `plan.<key>` for an unknown key, a value of the wrong kind or one
/// core refuses.
core::PlanInputs readPlanObject(const QJsonObject& plan, core::PlanInputs base = {});

/// The preset ":/presets/<id>.json". Throws core::InputError when it is missing or bad.
PlanPreset loadPlanPreset(const QString& id);

/// Every preset compiled in, smallest model first (by parameter count, then title).
QList<PlanPreset> planPresets();

/// Whether two plans describe the same inputs (key/value heads and expert width compared with
/// their defaults applied, so an absent kv_heads equals one set to heads).
bool samePlan(const core::PlanInputs& a, const core::PlanInputs& b);

/// The name of a recompute choice as the scenario file spells it: "none", "selective", "full".
QString recomputeName(core::Recompute recompute);

/// What ScaleLab computes for a published figure.
enum class FigureQuantity {
    Parameters, ///< every weight, in billions
    ActiveParameters, ///< the weights one token uses, in billions
    ModelState, ///< bytes per GPU under the row's ZeRO stage (core::computeZero over d ranks)
    ActivationPercent, ///< activations under `variant` as a percentage of `relativeTo`
    ActivationSaving, ///< 100 minus ActivationPercent
    StepTime, ///< seconds per optimizer step (core::computeStepTime's total)
    Mfu, ///< model FLOPs utilization in percent (core::computeStepTime's mfu x 100)
    Hfu, ///< hardware FLOPs utilization in percent, recomputation counted (hfu x 100)
};

/// How a published value is stated.
enum class Comparison {
    Equal, ///< a number, perhaps rounded
    About, ///< a round figure ("at 10%")
    Below, ///< an upper bound ("under 20%")
};

/// One reference value of resources/published/figures.json beside ScaleLab's value for the same
/// configuration.
struct PublishedFigure {
    QString group; ///< "ZeRO paper, Figure 1: ..."
    QString what; ///< what the row compares
    QString source; ///< the citation (the row's own, else its group's)
    QString presetId; ///< the configuration: a preset ...
    QJsonObject planOverrides; ///< ... with these plan keys changed
    core::PlanInputs plan; ///< the preset with the overrides applied: what "Load" loads
    FigureQuantity quantity = FigureQuantity::Parameters;
    core::ActivationVariant variant = core::ActivationVariant::TensorSequenceSelective;
    core::ActivationVariant relativeTo = core::ActivationVariant::TensorParallel;
    double published = 0;
    QString unit; ///< "B" (billions of parameters), "GB", "GiB", "s" (seconds) or "%"
    Comparison comparison = Comparison::Equal;
    /// How far ScaleLab may be from the published value, in percent; nullopt where the value
    /// is a bound or a round figure rather than a measurement of the same thing.
    std::optional<double> tolerancePercent;
    QString why; ///< why the two differ (shown when they do)
    double scalelab = 0; ///< ScaleLab's value in `unit`, from core

    /// (scalelab - published) / published, in percent.
    double differencePercent() const;
};

/// Every row of ":/published/figures.json" with ScaleLab's values computed through core.
/// Throws core::InputError naming the row for a malformed file or a preset core refuses.
QList<PublishedFigure> publishedFigures();

/// The rows of a published-figures object (the file's format), as publishedFigures() reads
/// the compiled-in file. Throws core::InputError naming the row
/// (`published.groups[g].rows[r].<key>`, a plan key under `...rows[r].plan.`).
QList<PublishedFigure> publishedFigures(const QJsonObject& root);

/// The JSON name of a Table 2 variant ("tensor_sequence_selective", ...).
QString variantKey(core::ActivationVariant variant);

} // namespace scalelab::document
