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

#include <QCoreApplication>

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

Tab* createTab(int index, document::ScenarioDocument* document, QWidget* parent, FirstDrawing first)
{
    const Tab::FirstDrawingScope scope(first == FirstDrawing::WhenShown);
    switch (index) {
    case 0:
        return new MemoryTab(document, parent);
    case 1:
        return new ZeroTab(document, parent);
    case 2:
        return new TensorParallelTab(document, parent);
    case 3:
        return new PipelineTab(document, parent);
    case 4:
        return new ExpertsTab(document, parent);
    case 5:
        return new Fp8Tab(document, parent);
    case 6:
        return makePlanTab(document, parent);
    default:
        return nullptr;
    }
}

QList<Tab*> createTabs(document::ScenarioDocument* document, QWidget* parent, FirstDrawing first)
{
    QList<Tab*> tabs;
    for (int i = 0; i < tabNames().size(); ++i)
        tabs << createTab(i, document, parent, first);
    return tabs;
}

QStringList tabTitles()
{
    return {MemoryTab::titleText(),   ZeroTab::titleText(),    TensorParallelTab::titleText(),
            PipelineTab::titleText(), ExpertsTab::titleText(), Fp8Tab::titleText(),
            PlanTab::titleText()};
}

QStringList tabShortTitles()
{
    return {QCoreApplication::translate("Tabs", "Memory"),
            QCoreApplication::translate("Tabs", "ZeRO"),
            QCoreApplication::translate("Tabs", "TP MLP"),
            QCoreApplication::translate("Tabs", "Pipeline"),
            QCoreApplication::translate("Tabs", "Experts"),
            QCoreApplication::translate("Tabs", "FP8"),
            QCoreApplication::translate("Tabs", "Plan")};
}

QStringList tabNames()
{
    QStringList names;
    for (const std::string_view name : core::kSectionNames)
        names << QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size()));
    return names;
}

} // namespace scalelab::ui
