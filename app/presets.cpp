#include "presets.h"

#include "scenariojson.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <algorithm>

namespace scalelab::app {

QList<Preset> loadPresets()
{
    QList<Preset> out;
    const QDir dir(":/presets");
    for (const QString& name : dir.entryList({"*.json"}, QDir::Files)) {
        QFile file(dir.filePath(name));
        if (!file.open(QIODevice::ReadOnly))
            continue;
        const QJsonObject object = QJsonDocument::fromJson(file.readAll()).object();
        Preset p;
        p.id = name.chopped(5);
        p.title = object.value("title").toString(p.id);
        p.source = object.value("source").toString();
        p.object = object;
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

} // namespace scalelab::app
