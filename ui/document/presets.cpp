#include "presets.h"

#include "scenariojson.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonParseError>
#include <algorithm>

namespace scalelab::document {

QStringList presetIds()
{
    // Filtered by hand: a name filter is a regular expression, compiled at each call.
    QStringList ids;
    for (const QString& name : QDir(":/presets").entryList(QDir::Files, QDir::Name))
        if (name.endsWith(QLatin1StringView(".json")))
            ids << name.chopped(5);
    return ids;
}

QJsonObject presetObject(const QString& id)
{
    const QString resource = ":/presets/" + id + ".json";
    QFile file(resource);
    if (!file.open(QIODevice::ReadOnly))
        throw core::InputError("preset " + id.toStdString(),
                               "a resource at " + resource.toStdString() + " (not found)");
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        throw core::InputError("preset " + id.toStdString(),
                               "a JSON object in " + resource.toStdString() + " ("
                                   + error.errorString().toStdString() + ")");
    return document.object();
}

QList<Preset> loadPresets()
{
    QList<Preset> out;
    for (const QString& id : presetIds()) {
        Preset p;
        p.id = id;
        try {
            p.object = presetObject(id);
        } catch (const core::InputError&) {
            continue; // a compiled-in file that does not read is left out of the menu
        }
        p.title = p.object.value("title").toString(p.id);
        p.source = p.object.value("source").toString();
        out << p;
    }
    std::sort(out.begin(), out.end(),
              [](const Preset& a, const Preset& b) { return a.title < b.title; });
    return out;
}

core::Scenario presetScenario(const QJsonObject& object)
{
    core::Scenario s = scenarioFromJson(object);
    if (!object.value("plan").toObject().contains("model"))
        return s;
    const core::PlanInputs& plan = s.plan;
    const std::int64_t parameters = core::countParameters(plan.model).total;
    const QJsonObject memory = object.value("memory").toObject();
    const QJsonObject zero = object.value("zero").toObject();
    if (!memory.contains("parameters"))
        s.memory.parameters = parameters;
    if (!memory.contains("layers"))
        s.memory.layers = plan.model.layers;
    if (!memory.contains("hidden"))
        s.memory.hidden = plan.model.hidden;
    if (!memory.contains("tokens"))
        s.memory.tokens = plan.sequence * plan.microBatch;
    if (!memory.contains("segments"))
        s.memory.segments = std::min(s.memory.segments, s.memory.layers);
    if (!zero.contains("parameters"))
        s.zero.parameters = parameters;
    if (!zero.contains("ranks"))
        s.zero.ranks = plan.gpus / (plan.tensorParallel * plan.pipelineParallel);
    core::validate(s);
    return s;
}

} // namespace scalelab::document
