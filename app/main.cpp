#include "appstyle.h"
#include "backgroundrunner.h"
#include "cli.h"
#include "exportcommand.h"
#include "handoutcommand.h"

#include <QApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace {

/// Command-line runs keep stderr for their one error line: Qt's own chatter is dropped.
void quietMessages(QtMsgType type, const QMessageLogContext&, const QString& message)
{
    if (type == QtFatalMsg) {
        std::fprintf(stderr, "scalelab: %s\n", qPrintable(message));
        std::abort();
    }
}

/// The user's language, when ScaleLab has it (translations/scalelab_<lang>.ts, compiled in at
/// :/i18n/), and Qt's own strings (standard buttons) from the system's Qt translations.
void installTranslations(QApplication& app)
{
    for (const auto& [name, folder] :
         {std::pair{QStringLiteral("scalelab"), QStringLiteral(":/i18n")},
          std::pair{QStringLiteral("qtbase"),
                    QLibraryInfo::path(QLibraryInfo::TranslationsPath)}}) {
        auto* translator = new QTranslator(&app);
        if (translator->load(QLocale(), name, "_", folder))
            QCoreApplication::installTranslator(translator);
        else
            delete translator;
    }
}

} // namespace

int main(int argc, char** argv)
{
    scalelab::ui::setUpProcessMemory();
    using namespace scalelab::app;
    QStringList args;
    for (int i = 1; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    QString error;
    const auto commandLine = parseCommandLine(args, &error);
    if (!commandLine) {
        printError(error);
        return ExitBadInput;
    }
    switch (commandLine->command) {
    case CommandLine::Command::Help:
        std::fputs(qPrintable(usageText()), stdout);
        return ExitOk;
    case CommandLine::Command::Version:
        std::printf("scalelab %s\n", SCALELAB_VERSION);
        return ExitOk;
    case CommandLine::Command::Report:
        return runReport(*commandLine); // no display and no QApplication needed
    case CommandLine::Command::Export:
    case CommandLine::Command::Lesson: {
        // Exports need no display: without one, draw on the offscreen platform.
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY")
            && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        qInstallMessageHandler(quietMessages);
        QApplication app(argc, argv);
        QApplication::setApplicationName("ScaleLab");
        QApplication::setApplicationVersion(SCALELAB_VERSION);
        scalelab::ui::installAppStyle();
        installTranslations(app);
        return commandLine->command == CommandLine::Command::Export
            ? runExport(*commandLine)
            : runLessonHandout(*commandLine);
    }
    case CommandLine::Command::Window: {
        // A bad --scenario or --lesson must print its one line alone: Qt's start-up chatter
        // (no XDG_RUNTIME_DIR, ...) is dropped; later messages go out as usual.
        qInstallMessageHandler(quietMessages);
        QApplication app(argc, argv);
        qInstallMessageHandler(nullptr);
        QApplication::setOrganizationName("ScaleLab");
        QApplication::setApplicationName("ScaleLab");
        QApplication::setApplicationVersion(SCALELAB_VERSION);
        QApplication::setDesktopFileName(SCALELAB_APP_ID); // its .desktop file's name
        scalelab::ui::installAppStyle();
        QApplication::setWindowIcon(scalelab::ui::svgIcon(":/icons/scalelab.svg"));
        installTranslations(app);
        return runWindow(*commandLine);
    }
    }
    return ExitFailure;
}
