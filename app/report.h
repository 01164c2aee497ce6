#pragma once

#include "scalelab/core/scenario.h"

#include <QByteArray>
#include <QJsonObject>
#include <cstdio>

namespace scalelab::app {

/// Every section's figures as the report object of docs/CLI.md. Throws core::InputError.
QJsonObject buildReport(const core::Scenario& scenario);

/// buildReport as indented JSON text, as `scalelab report` prints it; the same numbers, but a
/// large fp8.scales matrix is formatted without going through QJsonArray. Throws
/// core::InputError.
QByteArray reportJson(const core::Scenario& scenario);

/// Writes reportJson's text to `out` piece by piece, so that a large fp8.scales matrix is not
/// copied into one text first. Returns false when a write fails. Throws core::InputError.
bool writeReportJson(const core::Scenario& scenario, std::FILE* out);

} // namespace scalelab::app
