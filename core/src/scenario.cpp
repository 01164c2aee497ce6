#include "scalelab/core/scenario.h"

#include <cmath>

namespace scalelab::core {

bool operator==(const Fp8Inputs& a, const Fp8Inputs& b)
{
    const bool sameValues = a.values.has_value() == b.values.has_value()
        && (!a.values
            || (a.values->rows() == b.values->rows() && a.values->cols() == b.values->cols()
                && *a.values == *b.values));
    return sameValues && a.format == b.format && a.blockSize == b.blockSize && a.rows == b.rows
        && a.cols == b.cols && a.outlierScale == b.outlierScale && a.seed == b.seed
        && a.overflow == b.overflow;
}

void validate(const Scenario& scenario)
{
    validate(scenario.memory);
    validate(scenario.zero);
    validate(scenario.tensorParallel);
    validate(scenario.pipeline);
    validate(scenario.experts);
    validate(scenario.fp8);
    validate(scenario.plan);
    validateDisplay(scenario);
}

void validateDisplay(const Scenario& s)
{
    const MemoryDisplay& m = s.memoryDisplay;
    require(m.batch >= 1 && s.memory.tokens % m.batch == 0, "memory.batch",
            "a whole number of sequences >= 1 that divides memory.tokens");
    const auto capacity = [](double gb, const std::string& field) {
        require(std::isfinite(gb) && gb > 0 && gb <= 1e6, field, "a memory size in GB, 0 < x <= 1e6");
    };
    capacity(m.acceleratorGb, "memory.accelerator_gb");
    const ZeroDisplay& z = s.zeroDisplay;
    capacity(z.acceleratorGb, "zero.accelerator_gb");
    validate(LinkModel{z.linkBandwidthGBps * 1e9, z.linkLatencyUs * 1e-6});
    const ExpertsDisplay& e = s.expertsDisplay;
    require(e.hidden >= 1 && e.hidden <= (std::int64_t(1) << 20), "experts.hidden",
            "a width in 1..1048576 values");
    require(e.bytesPerValue >= 1 && e.bytesPerValue <= 8, "experts.bytes_per_value",
            "1..8 bytes");
    require(std::isfinite(s.fp8Display.shownBlock) && s.fp8Display.shownBlock >= 0
                && s.fp8Display.shownBlock <= 100,
            "fp8.shown_block", "a percentage in 0..100");
}

bool sameSection(const Scenario& a, const Scenario& b, Section section)
{
    switch (section) {
    case Section::Memory:
        return a.memory == b.memory && a.memoryDisplay == b.memoryDisplay;
    case Section::Zero:
        return a.zero == b.zero && a.zeroDisplay == b.zeroDisplay;
    case Section::TensorParallel:
        return a.tensorParallel == b.tensorParallel
            && a.tensorParallelDisplay == b.tensorParallelDisplay;
    case Section::Pipeline:
        return a.pipeline == b.pipeline && a.pipelineDisplay == b.pipelineDisplay;
    case Section::Experts:
        return a.experts == b.experts && a.expertsDisplay == b.expertsDisplay;
    case Section::Fp8:
        return a.fp8 == b.fp8 && a.fp8Display == b.fp8Display;
    case Section::Plan:
        return a.plan == b.plan;
    }
    return true;
}

void copySection(const Scenario& from, Scenario& into, Section section)
{
    switch (section) {
    case Section::Memory:
        into.memory = from.memory;
        into.memoryDisplay = from.memoryDisplay;
        break;
    case Section::Zero:
        into.zero = from.zero;
        into.zeroDisplay = from.zeroDisplay;
        break;
    case Section::TensorParallel:
        into.tensorParallel = from.tensorParallel;
        into.tensorParallelDisplay = from.tensorParallelDisplay;
        break;
    case Section::Pipeline:
        into.pipeline = from.pipeline;
        into.pipelineDisplay = from.pipelineDisplay;
        break;
    case Section::Experts:
        into.experts = from.experts;
        into.expertsDisplay = from.expertsDisplay;
        break;
    case Section::Fp8:
        into.fp8 = from.fp8;
        into.fp8Display = from.fp8Display;
        break;
    case Section::Plan:
        into.plan = from.plan;
        break;
    }
}

} // namespace scalelab::core
