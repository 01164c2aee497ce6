#include "tabs.h"

#include "expertstab.h"
#include "fp8tab.h"
#include "memorytab.h"
#include "pipelinetab.h"
#include "planpresets.h"
#include "plantab.h"
#include "scalelab/core/scenario.h"
#include "tensorparalleltab.h"
#include "zerotab.h"

namespace scalelab::ui {

namespace {

/// The plan tab's presets and published figures, read from the compiled-in files. Those files
/// are checked by the tests; should one still not read, the tab offers none rather than the
/// window not opening.
PlanTab* makePlanTab(document::ScenarioDocument* document, QWidget* parent)
{
    QList<document::PlanPreset> presets;
    QList<document::PublishedFigure> figures;
    try {
        presets = document::planPresets();
        figures = document::publishedFigures();
    } catch (const core::InputError&) {
    }
    return new PlanTab(document, presets, figures, parent);
}

} // namespace

QList<Tab*> createTabs(document::ScenarioDocument* document, QWidget* parent, FirstDrawing first)
{
    const Tab::FirstDrawingScope scope(first == FirstDrawing::WhenShown);
    return {new MemoryTab(document, parent),
            new ZeroTab(document, parent),
            new TensorParallelTab(document, parent),
            new PipelineTab(document, parent),
            new ExpertsTab(document, parent),
            new Fp8Tab(document, parent),
            makePlanTab(document, parent)};
}

QStringList tabNames()
{
    QStringList names;
    for (const std::string_view name : core::kSectionNames)
        names << QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size()));
    return names;
}

} // namespace scalelab::ui
