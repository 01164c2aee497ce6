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

QList<Tab*> createTabs(document::ScenarioDocument* document, QWidget* parent)
{
    return {new MemoryTab(document, parent),   new ZeroTab(document, parent),
            new TensorParallelTab(document, parent), new PipelineTab(document, parent),
            new ExpertsTab(document, parent),  new Fp8Tab(document, parent),
            new PlanTab(document, document::planPresets(), parent)};
}

QStringList tabNames()
{
    QStringList names;
    for (const std::string_view name : core::kSectionNames)
        names << QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size()));
    return names;
}

} // namespace scalelab::ui
