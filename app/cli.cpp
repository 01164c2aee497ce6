#include "cli.h"

#include "report.h"
#include "scenariojson.h"

#include <QJsonDocument>
#include <QRegularExpression>
#include <cstdio>

namespace scalelab::app {

using namespace scalelab::document;

namespace {

const QStringList kTabs = {"memory", "zero", "tensor_parallel", "pipeline", "experts",
                           "fp8",    "plan"};

/// Takes the value of an option given as `--name VALUE` or `--name=VALUE`.
bool takeValue(const QStringList& args, qsizetype& i, const QString& name, QString* value,
               QString* error)
{
    const QString& arg = args.at(i);
    if (arg.startsWith(name + '=')) {
        *value = arg.mid(name.size() + 1);
    } else if (i + 1 < args.size()) {
        *value = args.at(++i);
    } else {
        *error = name + " needs a value";
        return false;
    }
    if (value->isEmpty()) {
        *error = name + " needs a non-empty value";
        return false;
    }
    return true;
}

bool isOption(const QString& arg, const QString& name)
{
    return arg == name || arg.startsWith(name + '=');
}

/// Reads the sub-command (or the file of `scalelab FILE`) from the first argument, if it is
/// one; sets `next` to the index of the first option.
bool parseSubCommand(const QStringList& args, CommandLine& cl, qsizetype* next, QString* error)
{
    *next = 0;
    if (args.isEmpty() || args.first().startsWith('-'))
        return true;
    const QString& sub = args.first();
    if (sub == "report")
        cl.command = CommandLine::Command::Report;
    else if (sub == "export")
        cl.command = CommandLine::Command::Export;
    else if (sub == "lesson") {
        cl.command = CommandLine::Command::Lesson;
        if (args.size() < 2 || args.at(1).startsWith('-')) {
            *error = "lesson needs a lesson FILE (scalelab lesson FILE --out DIR)";
            return false;
        }
        cl.lessonFile = args.at(1);
        *next = 2;
        return true;
    } else if (sub.contains('/') || sub.endsWith(".json"))
        cl.scenarioFile = sub; // `scalelab FILE`, as a file manager or the menu opens one
    else {
        *error = "unknown command '" + sub + "' (expected report, export or lesson; see --help)";
        return false;
    }
    *next = 1;
    return true;
}

} // namespace

std::optional<CommandLine> parseCommandLine(const QStringList& args, QString* error)
{
    CommandLine cl;
    qsizetype i = 0;
    if (!parseSubCommand(args, cl, &i, error))
        return std::nullopt;
    const bool exporting = cl.command == CommandLine::Command::Export;
    const bool drawing = exporting || cl.command == CommandLine::Command::Lesson; // handouts
    for (; i < args.size(); ++i) {
        const QString& arg = args.at(i);
        QString value;
        if (arg == "--help" || arg == "-h") {
            cl.command = CommandLine::Command::Help;
            return cl;
        } else if (arg == "--version") {
            cl.command = CommandLine::Command::Version;
            return cl;
        } else if (cl.command != CommandLine::Command::Lesson && isOption(arg, "--scenario")) {
            if (!takeValue(args, i, "--scenario", &cl.scenarioFile, error))
                return std::nullopt;
        } else if (cl.command == CommandLine::Command::Window && isOption(arg, "--lesson")) {
            if (!takeValue(args, i, "--lesson", &cl.lessonFile, error))
                return std::nullopt;
        } else if (drawing && isOption(arg, "--out")) {
            if (!takeValue(args, i, "--out", &cl.outDir, error))
                return std::nullopt;
        } else if (drawing && isOption(arg, "--format")) {
            if (!takeValue(args, i, "--format", &value, error))
                return std::nullopt;
            if (value != "png" && value != "svg" && value != "pdf") {
                *error = "--format: expected png, svg or pdf, found '" + value + "'";
                return std::nullopt;
            }
            cl.format = value;
        } else if (drawing && isOption(arg, "--size")) {
            if (!takeValue(args, i, "--size", &value, error))
                return std::nullopt;
            const auto m = QRegularExpression("^(\\d{1,5})x(\\d{1,5})$").match(value);
            const int w = m.hasMatch() ? m.captured(1).toInt() : 0;
            const int h = m.hasMatch() ? m.captured(2).toInt() : 0;
            if (w < 200 || h < 150 || w > 10000 || h > 10000) {
                *error = "--size: expected WIDTHxHEIGHT between 200x150 and 10000x10000, found '"
                    + value + "'";
                return std::nullopt;
            }
            cl.size = QSize(w, h);
        } else if (exporting && arg == "--caption") {
            cl.caption = true;
        } else if (exporting && isOption(arg, "--background")) {
            if (!takeValue(args, i, "--background", &value, error))
                return std::nullopt;
            if (value != "white" && value != "transparent" && value != "system") {
                *error =
                    "--background: expected white, transparent or system, found '" + value + "'";
                return std::nullopt;
            }
            cl.background = value;
        } else if (exporting && isOption(arg, "--tab")) {
            if (!takeValue(args, i, "--tab", &cl.tab, error))
                return std::nullopt;
            if (!kTabs.contains(cl.tab)) {
                *error = "--tab: expected one of " + kTabs.join(", ") + ", found '" + cl.tab + "'";
                return std::nullopt;
            }
        } else {
            *error = "unknown option '" + arg + "' (see --help)";
            return std::nullopt;
        }
    }
    if (drawing && cl.outDir.isEmpty()) {
        *error = args.first() + " needs --out DIR";
        return std::nullopt;
    }
    return cl;
}

QString usageText()
{
    return QStringLiteral(
               "Usage:\n"
               "  scalelab [--scenario FILE | FILE] [--lesson FILE]\n"
               "                                                  open the window (and play a "
               "lesson)\n"
               "  scalelab report [--scenario FILE]               print every tab's figures as "
               "JSON\n"
               "  scalelab export [--scenario FILE] --out DIR     write every chart as an image\n"
               "                  [--format png|svg|pdf] [--size WIDTHxHEIGHT] [--tab NAME]\n"
               "                  [--caption] [--background white|transparent|system]\n"
               "  scalelab lesson FILE --out DIR                  write a lesson's handout: "
               "each step's charts\n"
               "                  [--format png|svg|pdf] [--size WIDTHxHEIGHT]    and lesson.pdf\n"
               "  scalelab --help | --version\n"
               "\n"
               "Tabs: %1.\n"
               "Exit status: 0 success, 2 bad input, 1 any other failure.\n")
        .arg(kTabs.join(", "));
}

void printError(const QString& line)
{
    std::fprintf(stderr, "scalelab: %s\n", line.toLocal8Bit().constData());
}

int runReport(const CommandLine& cl)
{
    QJsonObject object;
    try {
        core::Scenario scenario;
        if (!cl.scenarioFile.isEmpty()) {
            object = readScenarioObject(cl.scenarioFile);
            scenario = scenarioFromJson(object);
        }
        const bool written = writeReportJson(scenario, stdout);
        return std::fflush(stdout) == 0 && written ? ExitOk : ExitFailure;
    } catch (const core::InputError& e) {
        printError(describeInputError(cl.scenarioFile, e, object));
        return ExitBadInput;
    } catch (const std::bad_alloc&) {
        printError("out of memory while computing the report");
        return ExitFailure;
    }
}

} // namespace scalelab::app
