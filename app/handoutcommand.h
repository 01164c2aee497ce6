#pragma once

#include "cli.h"

namespace scalelab::app {

/// `scalelab lesson FILE --out DIR`: the lesson's handout (docs/LESSONS.md). Every step's charts
/// as step-NN-<chart>.<format>, drawn from the step's scenario by the same views and export path
/// as `scalelab export`, and lesson.pdf: one page per step (title, narration with its live
/// figures, the prediction as a question, the charts) and a last page of answers. Prints the
/// paths it wrote. Needs a QApplication.
int runLessonHandout(const CommandLine& commandLine);

} // namespace scalelab::app
