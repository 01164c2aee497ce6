#pragma once

#include "cli.h"

namespace scalelab::app {

/// `scalelab export`: builds the tabs off screen from the scenario and writes every chart (or
/// those of --tab) into --out, printing the paths it wrote. Needs a QApplication.
int runExport(const CommandLine& commandLine);

/// Opens the window on the scenario of --scenario (or the defaults). Needs a QApplication.
int runWindow(const CommandLine& commandLine);

} // namespace scalelab::app
