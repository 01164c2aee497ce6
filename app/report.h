#pragma once

#include "scalelab/core/scenario.h"

#include <QByteArray>
#include <QJsonObject>
#include <cstdint>
#include <cstdio>

namespace scalelab::app {

/// The report's own bounds on its two optional parts, so that it stays fast for any valid
/// scenario; past them the part is null (docs/CLI.md). The defaults are the documented bounds,
/// the only ones `scalelab report` uses; the fuzz harness passes smaller ones, so that a fuzzed
/// input reaches the null path without paying for the full computation first.
struct ReportBounds {
    /// pipeline.schedules: stages x microbatches past which the seven simulations are left out.
    std::int64_t comparedPasses = 1'000'000;
    /// plan.search: candidates, and pipeline stages in all, past which the search is refused.
    std::int64_t searchCandidates = 50'000;
    std::int64_t searchStageWork = 2'000'000;
};

/// Every section's figures as the report object of docs/CLI.md. Throws core::InputError.
QJsonObject buildReport(const core::Scenario& scenario, const ReportBounds& bounds = {});

/// buildReport as indented JSON text, as `scalelab report` prints it; the same numbers, but a
/// large fp8.scales matrix is formatted without going through QJsonArray. Throws
/// core::InputError.
QByteArray reportJson(const core::Scenario& scenario);

/// Writes reportJson's text to `out` piece by piece, so that a large fp8.scales matrix is not
/// copied into one text first. Returns false when a write fails. Throws core::InputError.
bool writeReportJson(const core::Scenario& scenario, std::FILE* out);

} // namespace scalelab::app
