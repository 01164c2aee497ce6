#include "tabs.h"

#include "expertstab.h"
#include "fp8tab.h"
#include "memorytab.h"
#include "pipelinetab.h"
#include "plantab.h"
#include "tensorparalleltab.h"
#include "zerotab.h"

namespace scalelab::ui {

QList<Tab*> createTabs(QWidget* parent)
{
    return {new MemoryTab(parent),   new ZeroTab(parent),    new TensorParallelTab(parent),
            new PipelineTab(parent), new ExpertsTab(parent), new Fp8Tab(parent),
            new PlanTab(parent)};
}

QStringList tabNames()
{
    return {"memory", "zero", "tensor_parallel", "pipeline", "experts", "fp8", "plan"};
}

} // namespace scalelab::ui
