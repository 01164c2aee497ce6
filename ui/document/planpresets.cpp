#include "planpresets.h"

#include "presets.h"
#include "scalelab/core/collectives.h"
#include "scalelab/core/steptime.h"
#include "scenariojson.h"

#include <QDir>
#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QVariant>
#include <algorithm>
#include <cmath>

namespace scalelab::document {

namespace {

using core::ActivationVariant;
using core::InputError;

std::string fieldOf(const QString& path, const QString& key)
{
    return (path + '.' + key).toStdString();
}

/// Hands out the published-figures file's keys by kind and refuses keys it was not told about.
class Keys {
public:
    Keys(const QJsonObject& object, QString path, const QStringList& known)
        : m_object(object)
        , m_path(std::move(path))
    {
        for (const QString& key : object.keys())
            if (!known.contains(key))
                throw InputError(fieldOf(m_path, key),
                                 "one of the keys " + m_path.toStdString() + " knows ("
                                     + known.join(", ").toStdString() + ")");
    }

    void number(const char* key, double& out) const
    {
        if (!m_object.contains(key))
            return;
        const QJsonValue v = m_object.value(key);
        if (!v.isDouble() || !std::isfinite(v.toDouble()))
            throw InputError(fieldOf(m_path, key), "a finite number");
        out = v.toDouble();
    }
    QString string(const char* key) const
    {
        const QJsonValue v = m_object.value(key);
        if (!v.isString())
            throw InputError(fieldOf(m_path, key), "a string");
        return v.toString();
    }
    double requiredNumber(const char* key) const
    {
        if (!m_object.contains(key))
            throw InputError(fieldOf(m_path, key), "a number (it is required)");
        double out = 0;
        number(key, out);
        return out;
    }

private:
    QJsonObject m_object;
    QString m_path;
};

QJsonObject readJsonObject(const QString& resource, const std::string& field)
{
    QFile file(resource);
    if (!file.open(QIODevice::ReadOnly))
        throw InputError(field, "a resource at " + resource.toStdString() + " (not found)");
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        throw InputError(field,
                         "a JSON object in " + resource.toStdString() + " ("
                             + error.errorString().toStdString() + ")");
    return document.object();
}

std::optional<ActivationVariant> variantNamed(const QString& name)
{
    for (const ActivationVariant v : core::allActivationVariants())
        if (variantKey(v) == name)
            return v;
    return std::nullopt;
}

/// The busiest GPU's activations under a variant, from core.
double variantPeak(const std::vector<core::VariantActivations>& all, ActivationVariant variant)
{
    for (const core::VariantActivations& va : all)
        if (va.variant == variant)
            return va.peakBytes.value();
    return 0;
}

double bytesPerUnit(const QString& unit)
{
    return unit == "GiB" ? 1073741824.0 : 1e9;
}

/// ScaleLab's value for a figure whose plan is set, from core.
double computeFigure(const PublishedFigure& f)
{
    switch (f.quantity) {
    case FigureQuantity::Parameters:
        return static_cast<double>(core::countParameters(f.plan.model).total) / 1e9;
    case FigureQuantity::ActiveParameters:
        return static_cast<double>(core::countParameters(f.plan.model).active) / 1e9;
    case FigureQuantity::ModelState: {
        core::validate(f.plan);
        const core::PlanInputs& p = f.plan;
        core::ZeroInputs z;
        z.parameters = core::countParameters(p.model).total;
        z.ranks = p.gpus / (p.tensorParallel * p.pipelineParallel);
        z.weightBytes = p.weightBytes;
        z.gradBytes = p.gradBytes;
        z.optimizerBytes = p.optimizerBytes;
        const core::ZeroResult r = core::computeZero(z);
        const core::Ratio bytes = p.zeroStage == 0 ? r.dp
            : p.zeroStage == 1                     ? r.zero1
            : p.zeroStage == 2                     ? r.zero2
                                                   : r.zero3;
        return bytes.value() / bytesPerUnit(f.unit);
    }
    case FigureQuantity::ActivationPercent:
    case FigureQuantity::ActivationSaving: {
        const std::vector<core::VariantActivations> all = core::activationVariants(f.plan);
        const double share = 100.0 * variantPeak(all, f.variant) / variantPeak(all, f.relativeTo);
        return f.quantity == FigureQuantity::ActivationPercent ? share : 100.0 - share;
    }
    case FigureQuantity::StepTime:
        return core::computeStepTime(f.plan).total;
    case FigureQuantity::Mfu:
        return 100.0 * core::computeStepTime(f.plan).mfu;
    case FigureQuantity::Hfu:
        return 100.0 * core::computeStepTime(f.plan).hfu;
    }
    return 0;
}

/// A quantity's name in the file, and the units its rows may state it in.
struct QuantityKind {
    const char* name;
    FigureQuantity quantity;
    QStringList units;
};

const QList<QuantityKind>& quantityKinds()
{
    static const QList<QuantityKind> kinds = {
        {"parameters", FigureQuantity::Parameters, {"B"}},
        {"active_parameters", FigureQuantity::ActiveParameters, {"B"}},
        {"model_state", FigureQuantity::ModelState, {"GB", "GiB"}},
        {"activation_percent", FigureQuantity::ActivationPercent, {"%"}},
        {"activation_saving", FigureQuantity::ActivationSaving, {"%"}},
        {"step_time", FigureQuantity::StepTime, {"s"}},
        {"mfu", FigureQuantity::Mfu, {"%"}},
        {"hfu", FigureQuantity::Hfu, {"%"}},
    };
    return kinds;
}

/// The error `e` (of a plan key, or of core) as the row's own: `<row>.plan.hardware.gpu`.
[[noreturn]] void rethrowInRow(const InputError& e, const QString& path)
{
    const std::string field = fieldOf(path, QString::fromStdString(e.field()));
    if (e.isExpectation())
        throw InputError(field, e.expected());
    throw InputError::problem(field, e.expected());
}

/// A row's "comparison" (equal when it has none).
Comparison readComparison(const QJsonObject& row, const Keys& k, const QString& path)
{
    const QString comparison =
        row.contains("comparison") ? k.string("comparison") : QString("equal");
    if (comparison == "below")
        return Comparison::Below;
    if (comparison == "about")
        return Comparison::About;
    if (comparison == "equal")
        return Comparison::Equal;
    throw InputError(fieldOf(path, "comparison"), "equal, about or below");
}

/// The plans of the presets read so far, by id: the rows of a figures file share a few presets,
/// and reading one takes a JSON round trip through every plan key.
using PresetPlans = QHash<QString, core::PlanInputs>;

/// One row of the published-figures file, its plan validated and ScaleLab's value computed.
PublishedFigure readFigure(const QJsonObject& row, const QString& path, const QString& groupTitle,
                           const QString& groupSource, PresetPlans& presets)
{
    const Keys k(row, path,
                 {"what", "source", "preset", "plan", "quantity", "variant", "relative_to",
                  "published", "unit", "comparison", "tolerance_percent", "why"});
    PublishedFigure f;
    f.group = groupTitle;
    f.what = k.string("what");
    f.source = row.contains("source") ? k.string("source") : groupSource;
    f.presetId = k.string("preset");
    if (row.contains("plan") && !row.value("plan").isObject())
        throw InputError(fieldOf(path, "plan"), "an object of plan keys");
    f.planOverrides = row.value("plan").toObject();
    auto known = presets.constFind(f.presetId);
    if (known == presets.cend())
        known = presets.insert(f.presetId, loadPlanPreset(f.presetId).plan);
    const core::PlanInputs& preset = *known;
    const QString quantity = k.string("quantity");
    const auto& kinds = quantityKinds();
    const auto kind = std::find_if(kinds.begin(), kinds.end(), [&](const QuantityKind& q) {
        return quantity == QLatin1String(q.name);
    });
    if (kind == kinds.end()) {
        QStringList names;
        for (const QuantityKind& q : kinds)
            names << q.name;
        throw InputError(fieldOf(path, "quantity"), "one of " + names.join(", ").toStdString());
    }
    f.quantity = kind->quantity;
    const bool activation = f.quantity == FigureQuantity::ActivationPercent
        || f.quantity == FigureQuantity::ActivationSaving;
    if (activation) {
        const auto v = variantNamed(k.string("variant"));
        const auto rel = variantNamed(k.string("relative_to"));
        if (!v)
            throw InputError(fieldOf(path, "variant"), "a Table 2 variant name");
        if (!rel)
            throw InputError(fieldOf(path, "relative_to"), "a Table 2 variant name");
        f.variant = *v;
        f.relativeTo = *rel;
    } else {
        // A variant on another quantity would be read by no one: a mistake in the row.
        for (const char* key : {"variant", "relative_to"})
            if (row.contains(key))
                throw InputError(fieldOf(path, key),
                                 "no such key on a " + quantity.toStdString()
                                     + " row (only activation rows compare two recipes)");
    }
    f.published = k.requiredNumber("published");
    f.unit = k.string("unit");
    if (!kind->units.contains(f.unit))
        throw InputError(fieldOf(path, "unit"),
                         "the unit of " + quantity.toStdString() + ": "
                             + kind->units.join(" or ").toStdString());
    if (f.quantity == FigureQuantity::StepTime && !(f.published > 0))
        throw InputError(fieldOf(path, "published"), "a time > 0 (seconds per step)");
    if ((f.quantity == FigureQuantity::Mfu || f.quantity == FigureQuantity::Hfu)
        && !(f.published > 0 && f.published <= 100))
        throw InputError(fieldOf(path, "published"), "a percentage in (0, 100]");
    f.comparison = readComparison(row, k, path);
    if (row.contains("tolerance_percent")) {
        f.tolerancePercent = k.requiredNumber("tolerance_percent");
        if (!(*f.tolerancePercent > 0))
            throw InputError(fieldOf(path, "tolerance_percent"), "a percentage > 0");
    }
    f.why = row.value("why").toString();
    // The row's plan is what Load loads: core must accept it whatever the quantity.
    try {
        // No overrides: the preset's plan as it is (reading it again would change nothing).
        f.plan = f.planOverrides.isEmpty() ? preset : readPlanObject(f.planOverrides, preset);
        core::validate(f.plan);
        f.scalelab = computeFigure(f);
    } catch (const InputError& e) {
        rethrowInRow(e, path);
    }
    return f;
}

} // namespace

QString recomputeName(core::Recompute recompute)
{
    switch (recompute) {
    case core::Recompute::None:
        return "none";
    case core::Recompute::Selective:
        return "selective";
    case core::Recompute::Full:
        break;
    }
    return "full";
}

QString variantKey(ActivationVariant variant)
{
    switch (variant) {
    case ActivationVariant::NoParallelism:
        return "no_parallelism";
    case ActivationVariant::TensorParallel:
        return "tensor_parallel";
    case ActivationVariant::TensorSequenceParallel:
        return "tensor_sequence_parallel";
    case ActivationVariant::TensorSelective:
        return "tensor_selective";
    case ActivationVariant::TensorSequenceSelective:
        return "tensor_sequence_selective";
    case ActivationVariant::FullRecompute:
        break;
    }
    return "full_recompute";
}

core::PlanInputs readPlanObject(const QJsonObject& plan, core::PlanInputs base)
{
    // The scenario reader reads it, as it reads a file's plan section: the base written out as
    // a plan object, the given keys laid over it (a model's or a hardware's keys over the
    // base's, so a row that changes one link keeps the preset's GPU).
    core::Scenario scenario;
    scenario.plan = base;
    QJsonObject merged = scenarioToJson(scenario).value("plan").toObject();
    for (auto it = plan.begin(); it != plan.end(); ++it) {
        if ((it.key() == "model" || it.key() == "hardware") && it.value().isObject()) {
            QJsonObject section = merged.value(it.key()).toObject();
            const QJsonObject given = it.value().toObject();
            for (auto m = given.begin(); m != given.end(); ++m)
                section.insert(m.key(), m.value());
            merged.insert(it.key(), section);
        } else {
            merged.insert(it.key(), it.value());
        }
    }
    return scenarioFromJson(QJsonObject{{"plan", merged}}).plan;
}

PlanPreset loadPlanPreset(const QString& id)
{
    const QJsonObject object = presetObject(id);
    for (const QString& key : object.keys())
        if (!QStringList{"scalelab_scenario", "title", "source", "plan"}.contains(key))
            throw InputError(key.toStdString(),
                             "only a title, a source and a plan section in a plan preset");
    PlanPreset preset;
    preset.id = id;
    preset.title = object.value("title").toString(id);
    preset.source = object.value("source").toString();
    if (!object.value("plan").isObject())
        throw InputError("plan", "a plan section in preset " + id.toStdString());
    preset.plan = readPlanObject(object.value("plan").toObject());
    core::validate(preset.plan);
    return preset;
}

QList<PlanPreset> planPresets()
{
    QList<PlanPreset> out;
    // Schedule presets (a pipeline section only) are not training plans.
    for (const QString& id : presetIds())
        if (presetObject(id).contains("plan"))
            out << loadPlanPreset(id);
    // Smallest first: the menu reads as a climb from a laptop-sized model to a trillion.
    std::stable_sort(out.begin(), out.end(), [](const PlanPreset& a, const PlanPreset& b) {
        const std::int64_t pa = core::countParameters(a.plan.model).total;
        const std::int64_t pb = core::countParameters(b.plan.model).total;
        return pa != pb ? pa < pb : a.title < b.title;
    });
    return out;
}

bool samePlan(const core::PlanInputs& a, const core::PlanInputs& b)
{
    const core::ModelShape& x = a.model;
    const core::ModelShape& y = b.model;
    return x.layers == y.layers && x.hidden == y.hidden && x.heads == y.heads
        && core::kvHeadsOf(x) == core::kvHeadsOf(y) && x.ffnHidden == y.ffnHidden
        && x.vocab == y.vocab && x.gatedMlp == y.gatedMlp && x.tiedEmbeddings == y.tiedEmbeddings
        && x.experts == y.experts && x.topK == y.topK
        && core::expertFfnHiddenOf(x) == core::expertFfnHiddenOf(y)
        && x.sharedExperts == y.sharedExperts && x.denseLayers == y.denseLayers
        && a.sequence == b.sequence && a.microBatch == b.microBatch
        && a.globalBatch == b.globalBatch && a.gpus == b.gpus
        && a.tensorParallel == b.tensorParallel && a.pipelineParallel == b.pipelineParallel
        && a.virtualStages == b.virtualStages && a.expertParallel == b.expertParallel
        && a.sequenceParallel == b.sequenceParallel && a.recompute == b.recompute
        && a.zeroStage == b.zeroStage && a.weightBytes == b.weightBytes
        && a.gradBytes == b.gradBytes && a.optimizerBytes == b.optimizerBytes
        && a.gpuMemoryGib == b.gpuMemoryGib;
}

double PublishedFigure::differencePercent() const
{
    return published != 0 ? 100.0 * (scalelab - published) / published : 0.0;
}

QList<PublishedFigure> publishedFigures()
{
    return publishedFigures(readJsonObject(":/published/figures.json", "published"));
}

QList<PublishedFigure> publishedFigures(const QJsonObject& root)
{
    const Keys top(root, "published", {"scalelab_published", "note", "groups"});
    const QJsonArray groups = root.value("groups").toArray();
    QList<PublishedFigure> out;
    PresetPlans presets;
    for (qsizetype g = 0; g < groups.size(); ++g) {
        const QString groupPath = QString("published.groups[%1]").arg(g);
        const QJsonObject group = groups[g].toObject();
        const Keys gk(group, groupPath, {"title", "source", "rows"});
        const QJsonArray rows = group.value("rows").toArray();
        for (qsizetype r = 0; r < rows.size(); ++r) {
            const QString path = QString("%1.rows[%2]").arg(groupPath).arg(r);
            out << readFigure(rows[r].toObject(), path, gk.string("title"), gk.string("source"),
                              presets);
        }
    }
    return out;
}

} // namespace scalelab::document
