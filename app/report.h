#pragma once

#include "scalelab/core/scenario.h"

#include <QByteArray>
#include <QJsonObject>

namespace scalelab::app {

/// Every section's figures as the report object of docs/CLI.md. Throws core::InputError.
QJsonObject buildReport(const core::Scenario& scenario);

/// buildReport as indented JSON text, as `scalelab report` prints it; the same numbers, but a
/// large fp8.scales matrix is formatted without going through QJsonArray. Throws
/// core::InputError.
QByteArray reportJson(const core::Scenario& scenario);

} // namespace scalelab::app
