#pragma once

// What the scenario fuzzer computes, kept small. At the shipped scenarios' sizes one report
// takes seconds under the sanitizers (the FP8 accumulation sweep and the layout search most of
// it), so a fuzzing run of a minute would barely get through its seeds. The fuzzer's business is
// every path through the reader, the validators and each section's code, not the heavy defaults:
// the validators see the input as written, and only then are the heavy sizes shrunk, each to a
// value that is still valid and still takes the same paths, before the report is built.

#include "report.h"
#include "scalelab/core/scenario.h"

#include <string>

namespace scalelab::fuzz {

/// The report's bounds in the fuzzer: the search and the schedule comparison are computed for
/// small inputs and left out (the null path) for the rest.
inline constexpr app::ReportBounds kFuzzReportBounds{
    .comparedPasses = 2'048, .searchCandidates = 500, .searchStageWork = 20'000};

/// Which of the size limits of docs/CLI.md ("Limits") an accepted scenario passes, as one line;
/// empty when it passes none. The fuzzer computes shrunk sizes only, so this is what stands for
/// the limits' promise (what an accepted scenario may cost).
std::string passedLimit(const core::Scenario& scenario);

/// The scenario with every heavy size shrunk to the fuzzer's budget (at most, and still valid).
core::Scenario shrunkForFuzzing(core::Scenario scenario);

} // namespace scalelab::fuzz
