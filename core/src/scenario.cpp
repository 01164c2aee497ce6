#include "scalelab/core/scenario.h"

#include <cmath>

namespace scalelab::core {

bool operator==(const Fp8Inputs& a, const Fp8Inputs& b)
{
    return sameBlockInputs(a, b) && a.accumulation == b.accumulation && a.policy == b.policy;
}

bool sameBlockInputs(const Fp8Inputs& a, const Fp8Inputs& b)
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
    validate(scenario.fp8.accumulation);
    validate(scenario.fp8.policy);
    validate(scenario.plan);
    validateDisplay(scenario);
}

void validateDisplay(const Scenario& s)
{
    const MemoryDisplay& m = s.memoryDisplay;
    require(m.batch >= 1 && s.memory.tokens % m.batch == 0, "memory.batch",
            "a whole number of sequences >= 1 that divides memory.tokens");
    const auto capacity = [](double gb, const std::string& field) {
        require(std::isfinite(gb) && gb > 0 && gb <= 1e6, field,
                "a memory size in GB, 0 < x <= 1e6");
    };
    capacity(m.acceleratorGb, "memory.accelerator_gb");
    const ZeroDisplay& z = s.zeroDisplay;
    capacity(z.acceleratorGb, "zero.accelerator_gb");
    validate(LinkModel{z.linkBandwidthGBps * 1e9, z.linkLatencyUs * 1e-6});
    const ExpertsDisplay& e = s.expertsDisplay;
    require(e.hidden >= 1 && e.hidden <= (std::int64_t(1) << 20), "experts.hidden",
            "a width in 1..1048576 values");
    require(e.bytesPerValue >= 1 && e.bytesPerValue <= 8, "experts.bytes_per_value", "1..8 bytes");
    require(std::isfinite(s.fp8Display.shownBlock) && s.fp8Display.shownBlock >= 0
                && s.fp8Display.shownBlock <= 100,
            "fp8.shown_block", "a percentage in 0..100");
}

namespace {

/// Calls `f` with the members of `section`: its inputs and its display settings.
template <typename F> decltype(auto) withMembers(Section section, F&& f)
{
    switch (section) {
    case Section::Memory:
        return f(&Scenario::memory, &Scenario::memoryDisplay);
    case Section::Zero:
        return f(&Scenario::zero, &Scenario::zeroDisplay);
    case Section::TensorParallel:
        return f(&Scenario::tensorParallel, &Scenario::tensorParallelDisplay);
    case Section::Pipeline:
        return f(&Scenario::pipeline, &Scenario::pipelineDisplay);
    case Section::Experts:
        return f(&Scenario::experts, &Scenario::expertsDisplay);
    case Section::Fp8:
        return f(&Scenario::fp8, &Scenario::fp8Display);
    case Section::Plan:
        break;
    }
    return f(&Scenario::plan, &Scenario::planDisplay);
}

} // namespace

bool sameSection(const Scenario& a, const Scenario& b, Section section)
{
    return withMembers(section, [&](auto inputs, auto display) {
        return a.*inputs == b.*inputs && a.*display == b.*display;
    });
}

void copySection(const Scenario& from, Scenario& into, Section section)
{
    withMembers(section, [&](auto inputs, auto display) {
        into.*inputs = from.*inputs;
        into.*display = from.*display;
    });
}

} // namespace scalelab::core
