#include "scalelab/core/scenario.h"

namespace scalelab::core {

void validate(const Scenario& scenario)
{
    validate(scenario.memory);
    validate(scenario.zero);
    validate(scenario.tensorParallel);
    validate(scenario.pipeline);
    validate(scenario.experts);
    validate(scenario.fp8);
    validate(scenario.plan);
}

} // namespace scalelab::core
