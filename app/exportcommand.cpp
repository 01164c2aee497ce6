#include "exportcommand.h"

#include "chartexport.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "firstpaint.h"
#include "lesson.h"
#include "mainwindow.h"
#include "planexport.h"
#include "scenariodocument.h"
#include "scenariojson.h"
#include "tab.h"
#include "tabs.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QStatusBar>
#include <QUndoStack>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>

namespace scalelab::app {

using namespace scalelab::document;

namespace {

/// Reads --scenario, or the defaults; on bad input prints the error line and returns false.
bool loadScenario(const CommandLine& cl, core::Scenario* scenario)
{
    if (cl.scenarioFile.isEmpty())
        return true;
    QJsonObject object;
    try {
        object = readScenarioObject(cl.scenarioFile);
        *scenario = scenarioFromJson(object);
        return true;
    } catch (const core::InputError& e) {
        printError(describeInputError(cl.scenarioFile, e, object));
        return false;
    }
}

/// Reads --lesson; on bad input prints the error line and returns false.
bool loadLesson(const CommandLine& cl, std::optional<Lesson>* lesson)
{
    if (cl.lessonFile.isEmpty())
        return true;
    QJsonObject object;
    try {
        object = readLessonObject(cl.lessonFile);
        *lesson = lessonFromJson(object);
        return true;
    } catch (const core::InputError& e) {
        printError(describeInputError(cl.lessonFile, e, object));
        return false;
    }
}

} // namespace

int runExport(const CommandLine& cl)
{
    core::Scenario scenario;
    if (!loadScenario(cl, &scenario))
        return ExitBadInput;

    QList<ui::ImageFormat> formats;
    if (cl.format.isEmpty())
        formats = {ui::ImageFormat::Png, ui::ImageFormat::Svg, ui::ImageFormat::Pdf};
    else
        formats = {*ui::imageFormatFromName(cl.format)};

    ui::setChartBackground(cl.background == "transparent"  ? ui::ChartBackground::Transparent
                               : cl.background == "system" ? ui::ChartBackground::System
                                                           : ui::ChartBackground::White);
    // The same views as the window's, off screen, over one document holding the scenario.
    document::ScenarioDocument scenarioDocument(scenario);
    std::vector<std::unique_ptr<ui::Tab>> tabs;
    QList<ui::ExportJob> jobs;
    const QDir out(cl.outDir);
    for (ui::Tab* raw : ui::createTabs(&scenarioDocument, nullptr, ui::FirstDrawing::WhenShown)) {
        std::unique_ptr<ui::Tab> tab(raw);
        if (!cl.tab.isEmpty() && tab->name() != cl.tab)
            continue;
        tab->waitForIdle(); // draws it (made undrawn: only the tabs asked for are computed)
        // A refresh that failed leaves the charts on the last good inputs (the defaults here):
        // they are not this scenario's, so nothing is written.
        if (tab->failure() != ui::Tab::Failure::None) {
            const QString file = cl.scenarioFile.isEmpty() ? QString() : cl.scenarioFile + ": ";
            printError(file + tab->failureMessage());
            return tab->failure() == ui::Tab::Failure::BadInput ? ExitBadInput : ExitFailure;
        }
        for (ui::ChartPanel* chart : tab->charts())
            for (ui::ImageFormat format : formats)
                jobs.append({chart, out.filePath(chart->name() + '.' + ui::imageFormatName(format)),
                             format, cl.size, cl.caption ? tab->caption() : QString()});
        tabs.push_back(std::move(tab));
    }
    if (jobs.isEmpty()) {
        printError("--tab " + cl.tab + ": that tab has no charts yet");
        return ExitBadInput;
    }
    // The plan also goes out as a DeepSpeed configuration and Megatron-LM arguments, so a plan
    // made in class can start a real run.
    QList<ui::ExportFile> files;
    if (cl.tab.isEmpty() || cl.tab == "plan") {
        try {
            files.append({out.filePath("plan-deepspeed.json"), deepSpeedConfig(scenario.plan)});
            files.append(
                {out.filePath("plan-megatron.txt"), megatronArguments(scenario.plan).toUtf8()});
        } catch (const core::InputError& e) {
            printError(describeInputError(cl.scenarioFile, e));
            return ExitBadInput;
        }
    }
    std::error_code madeFolder;
    std::filesystem::create_directories(std::filesystem::path(cl.outDir.toStdString()), madeFolder);
    if (madeFolder || !QFileInfo(cl.outDir).isDir()) {
        printError("cannot create the folder " + cl.outDir + ": "
                   + (madeFolder ? QString::fromStdString(madeFolder.message())
                                 : QStringLiteral("a file of that name is in the way")));
        return ExitFailure;
    }
    const QString error = ui::exportCharts(jobs, files);
    if (!error.isEmpty()) {
        printError(error);
        return ExitFailure;
    }
    for (const ui::ExportJob& job : jobs)
        std::printf("%s\n", qPrintable(QDir::toNativeSeparators(job.path)));
    for (const ui::ExportFile& file : files)
        std::printf("%s\n", qPrintable(QDir::toNativeSeparators(file.path)));
    return std::fflush(stdout) == 0 ? ExitOk : ExitFailure;
}

int runWindow(const CommandLine& cl)
{
    core::Scenario scenario;
    std::optional<Lesson> lesson;
    if (!loadScenario(cl, &scenario) || !loadLesson(cl, &lesson))
        return ExitBadInput;
    ui::FirstPaintAnnouncer firstPaint; // bench/bench_startup's finishing line
    if (qEnvironmentVariableIsSet("SCALELAB_REPORT_FIRST_PAINT"))
        qApp->installEventFilter(&firstPaint);
    MainWindow window(scenario);
    if (cl.scenarioFile.isEmpty()) {
        // No file asked for: the last session's state, or the defaults with a word why.
        const QString problem = window.restoreLastScenario();
        if (!problem.isEmpty())
            window.statusBar()->showMessage(problem, 15000);
    } else {
        window.undoStack()->clear();
    }
    window.show();
    if (lesson) // after the restored state, which it keeps to bring back on Esc
        window.startLesson(*lesson);
    return QApplication::exec();
}

} // namespace scalelab::app
