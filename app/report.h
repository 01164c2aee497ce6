#pragma once

#include "scalelab/core/scenario.h"

#include <QJsonObject>

namespace scalelab::app {

/// Every section's figures as the report object of docs/CLI.md. Throws core::InputError.
QJsonObject buildReport(const core::Scenario& scenario);

} // namespace scalelab::app
