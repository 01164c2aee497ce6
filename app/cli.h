#pragma once

#include <QSize>
#include <QString>
#include <QStringList>
#include <optional>

namespace scalelab::app {

/// What the command line asks for (docs/CLI.md).
struct CommandLine {
    enum class Command { Window, Report, Export, Lesson, Help, Version };
    Command command = Command::Window;
    QString scenarioFile; ///< --scenario FILE; empty = defaults (or restored settings)
    QString lessonFile; ///< --lesson FILE (window): play it on opening; `lesson FILE`: its handout
    QString outDir; ///< export --out DIR
    QString format; ///< export --format png|svg|pdf; empty = all three
    QSize size{1600, 1000}; ///< export --size WIDTHxHEIGHT
    QString tab; ///< export --tab NAME; empty = every tab
    bool caption = false; ///< export --caption: a line naming the inputs under each chart
    QString background = "white"; ///< export --background white|transparent|system
};

/// Exit statuses of docs/CLI.md.
enum ExitCode { ExitOk = 0, ExitFailure = 1, ExitBadInput = 2 };

/// Parses arguments (without the program name). On bad usage returns nullopt and sets `error`
/// to one line saying what is wrong.
std::optional<CommandLine> parseCommandLine(const QStringList& arguments, QString* error);

/// The text of --help.
QString usageText();

/// `scalelab report`: prints the report JSON on stdout; on error one line on stderr.
int runReport(const CommandLine& commandLine);

/// Prints one error line on stderr, prefixed with the program name.
void printError(const QString& line);

} // namespace scalelab::app
