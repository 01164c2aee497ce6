#include "cli.h"
#include "exportcommand.h"

#include <QApplication>
#include <QIcon>
#include <cstdio>
#include <cstdlib>

namespace {

/// Command-line runs keep stderr for their one error line: Qt's own chatter is dropped.
void quietMessages(QtMsgType type, const QMessageLogContext&, const QString& message)
{
    if (type == QtFatalMsg) {
        std::fprintf(stderr, "scalelab: %s\n", qPrintable(message));
        std::abort();
    }
}

} // namespace

int main(int argc, char** argv)
{
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
    case CommandLine::Command::Export: {
        // Exports need no display: without one, draw on the offscreen platform.
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY")
            && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        qInstallMessageHandler(quietMessages);
        QApplication app(argc, argv);
        QApplication::setApplicationName("ScaleLab");
        QApplication::setApplicationVersion(SCALELAB_VERSION);
        return runExport(*commandLine);
    }
    case CommandLine::Command::Window: {
        QApplication app(argc, argv);
        QApplication::setOrganizationName("ScaleLab");
        QApplication::setApplicationName("ScaleLab");
        QApplication::setApplicationVersion(SCALELAB_VERSION);
        QApplication::setDesktopFileName(SCALELAB_APP_ID); // its .desktop file's name
        QApplication::setWindowIcon(QIcon(":/icons/scalelab.svg"));
        return runWindow(*commandLine);
    }
    }
    return ExitFailure;
}
